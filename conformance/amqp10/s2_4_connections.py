"""Spec 2.4 Connections (transport): opening, pipelining, closing, idle time-out, states.

Each peer sends its protocol header and then an open before any other frame (2.4.1); frames
may be pipelined behind the open (2.4.2). A close is "the last thing ever written onto a
connection" and is written before the socket is closed (2.4.3). Idle time-out (2.4.5): each
peer's open carries the longest silence it accepts *from its partner*, so the idle-time-out of
our open binds the broker's sending, and the broker's one binds ours; empty frames keep a
connection alive. A peer that closed because of an error discards what it receives until
the partner's close (2.4.6, DISCARDING).

Rules of the state table (2.4.7) and of the error definitions have no RFC 2119 keyword: the
checks that rest on them are guideline-level. Every case in which the broker closes also
checks the close discipline of 2.4.3 (close before the socket, nothing after the close).

The helpers here are shared with the 2.7.1 (open) and 2.7.9 (close) modules.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, Peer, UnexpectedReply, error_condition, performative_name
from amqpspec.verify10 import ConnectionError, StaysOpen
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Frame, ProtocolHeader, describe, spec

from ._common import REACTION_WINDOW, WAIT

AFTER_CLOSE = 0.5        # how long we keep watching after the broker's close for anything it must not write
LONGEST_IDLE = 5000      # ms: a broker idle-time-out above this makes the idle cases too slow (skipped)

CLOSE_FIRST = ("amqp10:2.4.3/1", "amqp10:2.7.9/1")
CLOSE_LAST = "amqp10:2.4.3/2"
OPEN_FIRST = ("amqp10:2.4.1/1", "amqp10:2.7.1/1")
FRAMING_ERROR = str(spec.AmqpConnectionError.FRAMING_ERROR)
STATE_ERRORS = (str(spec.AmqpError.ILLEGAL_STATE), str(spec.AmqpError.NOT_ALLOWED))

CHANNEL_0_TEXT = "implementations SHOULD send it on channel 0"
STATE_TABLE_TEXT = ("Connection State Table (2.4.7): State HDR_EXCH -- Legal Sends: OPEN, Legal Receives: OPEN")
STATE_ERROR_TEXT = ("amqp:illegal-state: The peer sent a frame that is not permitted in the current state. / "
                    "amqp:not-allowed: The peer tried to use a frame in a manner that is inconsistent with the "
                    "semantics defined in the specification.")
CLOSE_RESPONSE_TEXT = ("Normally one peer will initiate the connection close, and the partner will send its close "
                       "in response.")
EMPTY_ON_0_TEXT = "implementations SHOULD use channel 0 when sending empty frames"


# ---------------------------------------------------------------------------------------- helpers
def is_close(item: Any) -> bool:
    return performative_name(item) == "close"


def reserve_channel(peer: Peer, ch: int) -> None:
    """Keeps the liveness probe (Peer.free_channel) off a channel the case used itself."""
    peer._next_channel = max(peer._next_channel, ch + 1)  # noqa: SLF001 - no public way to reserve


def to_header(ctx: Context) -> Peer:
    """A connection through SASL (when the URL names credentials) and the AMQP header exchange:
    the next frame the case sends is the first frame of the connection."""
    peer = ctx.connect(handshake=False)
    if ctx.target.credentials_given:
        outcome = peer.sasl()
        if int(getattr(outcome, "code", 1) or 0) != 0:
            ctx.skip(f"SASL authentication failed (code {outcome.code})")
    peer.send(ProtocolHeader.amqp())
    got = peer.expect_header()
    if got.protocol_id != 0:
        raise UnexpectedReply("the AMQP protocol header (AMQP 0 1.0.0)", got)
    peer.stage = "header"
    return peer


def mark_opened(peer: Peer, remote: spec.Open, ours: int = 65536) -> None:
    """Bookkeeping of Peer.open for an open the case sent itself (so the runner closes politely)."""
    peer.opened.remote_open = remote
    peer.opened.max_frame_size = min(ours, int(remote.value_of("max-frame-size")))
    peer.opened.channel_max = int(remote.value_of("channel-max"))
    peer.opened.opened = True
    peer.stage = "open"


def merge(first: Observation, second: Observation) -> Observation:
    return Observation(received=first.received + second.received, end=second.end,
                       framing_error=second.framing_error or first.framing_error,
                       elapsed=first.elapsed + second.elapsed,
                       probe_ok=second.probe_ok if second.probe_ok is not None else first.probe_ok,
                       replied_close=first.replied_close or second.replied_close)


def watch(peer: Peer, window: float = REACTION_WINDOW, *, probe: bool = False, reply_close: bool = True,
          grace: float = AFTER_CLOSE, stop: Callable[[Any], bool] | None = None) -> Observation:
    """Observes until the broker's close (or ``stop``), then ``grace`` seconds more, to see
    anything the broker writes after its close (which 2.4.3 forbids)."""
    halt = (lambda item: is_close(item) or stop(item)) if stop is not None else is_close
    obs = peer.observe(window, probe=probe, reply_close=reply_close, stop=halt)
    if obs.end == "stopped" and obs.close is not None:
        obs = merge(obs, peer.observe(grace, reply_close=reply_close))
    return obs


def open_then(peer: Peer, performative: spec.Open, channel: int = 0, ours: int = 65536) -> Observation:
    """Sends an open the case built itself; once the broker's open has come, watches what follows
    with a liveness probe (a new session) -- ending at a close (plus a grace period) or as soon
    as the probe is answered, which shows the broker went on without an error."""
    peer.send(AMQPFrame(channel, performative))
    first = peer.observe(WAIT, stop=lambda item: performative_name(item) in ("open", "close"))
    if first.close is not None:
        return merge(first, peer.observe(AFTER_CLOSE))
    remote = first.first("open")
    if remote is None or first.closed:
        return first
    mark_opened(peer, remote, ours)
    return merge(first, watch(peer, REACTION_WINDOW, probe=True))


def frames_of(obs: Observation) -> list[Frame]:
    """Every frame received (empty frames included), protocol headers left out."""
    return [f for f in obs.received if isinstance(f, Frame)]


def first_frame_open(ctx: Context, obs: Observation) -> bool:
    """The broker's first frame, if it sent any, is an open (2.4.1, 2.7.1)."""
    frames = frames_of(obs)
    ok = not frames or performative_name(frames[0]) == "open"
    first = describe(frames[0]) if frames else "no frame"
    return ctx.record(ok, what="the broker's first frame is an open", clauses=OPEN_FIRST,
                      expected="open as the broker's first frame (or no frame at all)",
                      observed=f"first frame: {first}; {obs.describe()}")


def close_discipline(ctx: Context, obs: Observation) -> None:
    """The close rules of 2.4.3 / 2.7.9 for whatever the broker did: a socket it closes was
    preceded by its close, nothing follows its close, the close is on channel 0, and an error
    in it explains the cause. Checks only what the observation shows (nothing when the broker
    neither closed nor wrote a close)."""
    frames = frames_of(obs)
    at = next((i for i, f in enumerate(frames) if is_close(f)), None)
    if obs.closed:
        ctx.record(at is not None, what="the broker writes a close before closing the socket", clauses=CLOSE_FIRST,
                   expected="a close frame, then the socket closed", observed=obs.describe())
    if at is None:
        return
    after = frames[at + 1:]
    cited = (CLOSE_LAST,) + (("amqp10:2.4.5/8",) if any(isinstance(f, EmptyFrame) for f in after) else ())
    ctx.record(not after, what="nothing follows the broker's close", clauses=cited,
               expected="no frame (not even an empty frame) after the broker's close",
               observed="; ".join(describe(f) for f in after) if after else obs.describe())
    close = frames[at]
    ctx.record(close.channel == 0, what="the broker's close is on channel 0", clauses=("amqp10:2.4.3/5",),
               level=Level.SHOULD, guideline=CHANNEL_0_TEXT, expected="close on channel 0",
               observed=describe(close))
    err = getattr(close.performative, "error", None)  # type: ignore[union-attr]
    if err is not None:
        ctx.record(bool(getattr(err, "description", None)), what="the close's error describes the cause",
                   clauses=("amqp10:2.7.9/2",), expected="an error with a description of the cause",
                   observed=describe(close))


def record_condition(ctx: Context, obs: Observation, conditions: tuple[str, ...], text: str) -> None:
    """A guideline check of the error condition, made only when a close with an error came."""
    got = [error_condition(f.performative) for f in obs.performatives("close")]  # type: ignore[union-attr]
    got = [c for c in got if c]
    if got:
        ctx.record(any(c in conditions for c in got), what=f"the close carries {' or '.join(conditions)}",
                   level=Level.SHOULD, guideline=text, expected=" or ".join(conditions),
                   observed=", ".join(got))


def provoke_framing_error(ctx: Context, peer: Peer) -> int:
    """Sends a begin on the channel one above the broker's channel-max, which the broker MUST
    answer by closing with framing-error (2.7.1/8); returns that channel. Skips the case when the
    broker's channel-max is 65535 (no channel lies above it)."""
    top = peer.opened.channel_max
    if top >= 0xFFFF:
        ctx.skip("the broker's channel-max is 65535: no channel lies outside its range to provoke an error close")
    peer.send(begin_frame(top + 1))
    return top + 1


def begin_frame(ch: int) -> AMQPFrame:
    return AMQPFrame(ch, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))


def recv_times(ctx: Context, peer: Peer, since: float) -> list[float]:
    """Times (transcript clock) at which this connection received something, from ``since``."""
    return [e.t for e in ctx.transcript.entries if e.conn == peer.link.conn and e.dir == "recv" and e.t >= since]


def now(ctx: Context) -> float:
    return time.monotonic() - ctx.transcript.start


def observe_alive(peer: Peer, window: float, every: float | None) -> Observation:
    """Observes for ``window`` seconds, sending an empty frame on channel 0 every ``every``
    seconds (the broker's own idle time-out must not close the connection meanwhile)."""
    if not every:
        return peer.observe(window)
    until = time.monotonic() + window
    obs = Observation()
    while True:
        left = until - time.monotonic()
        if left <= 0.05:
            return obs
        part = peer.observe(min(every, left))
        obs = merge(obs, part)
        if part.end != "open":
            return obs
        peer.send(EmptyFrame(0))


def remote_idle(peer: Peer) -> int:
    remote = peer.opened.remote_open
    value = getattr(remote, "idle_time_out", None) if remote is not None else None
    return int(value or 0)


def keepalive_period(peer: Peer) -> float | None:
    """Half the broker's idle-time-out, in seconds (None when it has none)."""
    t = remote_idle(peer)
    return t / 2000.0 if t else None


# ---------------------------------------------------------------------------------------- 2.4.1 opening
@case("amqp10/2.4.1/begin-before-open", title="a begin before open is refused: the broker's first frame is still "
      "an open, and it closes with an error", clauses=OPEN_FIRST, timeout=15.0)
def begin_before_open(ctx: Context) -> None:
    """After the header exchange, sends a begin as the first frame (no open). Whatever the broker
    does, its first frame must be an open (2.4.1/1, 2.7.1/1) and a close must precede a socket
    close, with nothing after it (2.4.3). The state table allows only OPEN to be received in
    HDR_EXCH, so the broker should close with an error (guideline), preferably illegal-state or
    not-allowed (guideline)."""
    peer = to_header(ctx)
    peer.send(begin_frame(0))
    obs = watch(peer, REACTION_WINDOW)
    first_frame_open(ctx, obs)
    close_discipline(ctx, obs)
    ctx.check(obs, ConnectionError(), what="the broker closes the connection with an error", clauses=(),
              level=Level.SHOULD, guideline=STATE_TABLE_TEXT)
    record_condition(ctx, obs, STATE_ERRORS, STATE_ERROR_TEXT)


@case("amqp10/2.4.1/close-before-open", title="a close before open: the broker's first frame is still an open, "
      "and its close comes last", clauses=OPEN_FIRST + CLOSE_FIRST + (CLOSE_LAST,))
def close_before_open(ctx: Context) -> None:
    """After the header exchange, sends a close as the first frame (no open). The broker may answer
    with its open and a close (or do nothing), but its first frame must be an open (2.4.1/1,
    2.7.1/1): a close without an open before it fails. A socket close must follow a close, and
    nothing may follow the close (2.4.3)."""
    peer = to_header(ctx)
    peer.send(AMQPFrame(0, spec.Close()))
    obs = watch(peer, WAIT)
    first_frame_open(ctx, obs)
    close_discipline(ctx, obs)


# ---------------------------------------------------------------------------------------- 2.4.2 pipelined open
@case("amqp10/2.4.2/pipelined-open-begin", title="header, open and begin pipelined in one write are answered "
      "with header, open and begin", clauses=("amqp10:2.4.2/1", "amqp10:2.4.2/2"))
def pipelined_open_begin(ctx: Context) -> None:
    """Sends (after SASL, when used) the AMQP header, an open and a begin on channel 0 in a single
    write, before anything came back. A peer MAY pipeline this way: the broker must answer with
    its header, its open and a begin naming our channel 0 (informational when it does not)."""
    peer = ctx.connect(handshake=False)
    if ctx.target.credentials_given:
        peer.sasl()
    open_ = AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host, max_frame_size=65536))
    peer.send(ProtocolHeader.amqp().encode() + open_.encode() + begin_frame(0).encode())
    reserve_channel(peer, 0)
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: is_close(item) or (
        performative_name(item) == "begin" and getattr(item.performative, "remote_channel", None) == 0))
    remote = obs.first("open")
    if remote is not None:
        mark_opened(peer, remote)
    kinds = [performative_name(f) or ("header" if isinstance(f, ProtocolHeader) else "empty") for f in obs.received
             if not isinstance(f, EmptyFrame)]
    ok = kinds[:3] == ["header", "open", "begin"] and obs.close is None
    ctx.record(ok, expected="protocol header, open, begin(remote-channel=0)", observed=obs.describe())


@case("amqp10/2.4.2/pipelined-open-close", title="header, open and close pipelined in one write are answered "
      "with open, then close, and nothing after", clauses=("amqp10:2.4.2/2",) + OPEN_FIRST + (CLOSE_LAST,))
def pipelined_open_close(ctx: Context) -> None:
    """Sends (after SASL, when used) the AMQP header, an open and a close on channel 0 in one
    write (state OC_PIPE of 2.4.6). The broker's first frame must be its open (2.4.1/1), then it
    answers with its close; nothing may follow that close (2.4.3/2)."""
    peer = ctx.connect(handshake=False)
    if ctx.target.credentials_given:
        peer.sasl()
    open_ = AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host, max_frame_size=65536))
    peer.send(ProtocolHeader.amqp().encode() + open_.encode() + AMQPFrame(0, spec.Close()).encode())
    peer.close_sent = True
    obs = watch(peer, WAIT)
    first_frame_open(ctx, obs)
    close_discipline(ctx, obs)
    ctx.record(obs.first("open") is not None and obs.close is not None,
               what="the pipelined open and close are answered by open and close", clauses=("amqp10:2.4.2/2",),
               expected="open, then close", observed=obs.describe())


# ---------------------------------------------------------------------------------------- 2.4.3 closing
@case("amqp10/2.4.3/close-on-channel-1", title="a close received on channel 1 closes the connection: answered "
      "with close", clauses=("amqp10:2.4.3/4",))
def close_on_channel_1(ctx: Context) -> None:
    """After open, sends a close on channel 1 (no session there; within the broker's channel-max).
    "A close frame MAY be received on any channel up to the maximum channel number negotiated in
    open": the broker must take it as the connection's close and answer with its close
    (informational when it does not); the close rules of 2.4.3 apply to its answer."""
    peer = ctx.connect()
    if peer.opened.channel_max < 1:
        ctx.skip("the broker's channel-max is 0: channel 1 is outside its range")
    peer.send(AMQPFrame(1, spec.Close()))
    obs = watch(peer, WAIT)
    close_discipline(ctx, obs)
    ctx.record(obs.close is not None, expected="the broker's close", observed=obs.describe())


# ---------------------------------------------------------------------------------------- 2.4.4 simultaneous close
@case("amqp10/2.4.4/simultaneous-close", title="when both sides close at once, the broker writes one close and "
      "nothing after it", clauses=("amqp10:2.4.4/1", CLOSE_LAST))
def simultaneous_close(ctx: Context) -> None:
    """Opens proposing channel-max 7, then in one write sends a begin on the channel above the
    broker's channel-max (which the broker must close with framing-error, 2.7.1/8) and our own
    close with an error, so that both closes cross. The broker must write exactly one close
    (its error close, or the answer to ours) and nothing after it (2.4.3/2). Skipped when the
    broker's channel-max is 65535."""
    peer = ctx.connect(channel_max=7)
    top = peer.opened.channel_max
    if top >= 0xFFFF:
        ctx.skip("the broker's channel-max is 65535: no channel lies outside its range to provoke an error close")
    ours = spec.Close(error=spec.Error(condition=spec.AmqpError.INTERNAL_ERROR,
                                       description="amqpspec: closing at the same time as the broker"))
    peer.send(begin_frame(top + 1).encode() + AMQPFrame(0, ours).encode())
    peer.close_sent = True
    obs = watch(peer, REACTION_WINDOW, grace=1.0)
    closes = obs.performatives("close")
    ctx.record(len(closes) == 1, what="the broker writes one close", clauses=("amqp10:2.4.4/1", CLOSE_LAST),
               expected="exactly one close from the broker", observed=obs.describe())
    close_discipline(ctx, obs)


# ---------------------------------------------------------------------------------------- 2.4.5 idle time-out
@case("amqp10/2.4.5/empty-frame-unused-channel", title="empty frames on valid channels without a session are "
      "accepted", clauses=("amqp10:2.4.5/7",))
def empty_frame_unused_channel(ctx: Context) -> None:
    """After open, sends empty frames on channel 1 and on the broker's highest channel (both within
    its channel-max, neither carrying a session). Implementations MUST be prepared to handle
    empty frames arriving on any valid channel: the connection stays open and serves (probe)."""
    peer = ctx.connect()
    top = min(peer.opened.channel_max, 0xFFFF)
    channels = sorted({min(1, top), top})
    peer.send(*(EmptyFrame(ch) for ch in channels))
    reserve_channel(peer, max(channels) if max(channels) < 100 else 0)
    obs = peer.observe(REACTION_WINDOW, probe=True)
    ctx.check(obs, StaysOpen(), what=f"empty frames on channels {channels} are accepted")


@case("amqp10/2.4.5/empty-frame-before-remote-open", title="an empty frame right behind our open, before the "
      "broker's open, is accepted", clauses=("amqp10:2.4.5/7",))
def empty_frame_before_remote_open(ctx: Context) -> None:
    """Sends the open and, in the same write, an empty frame on channel 0 -- allowed once our open is
    sent, on channel 0 as no channel-max is negotiated yet. The broker MUST handle it: it answers
    with its open and the connection serves (probe)."""
    peer = to_header(ctx)
    open_ = AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host, max_frame_size=65536))
    peer.send(open_.encode() + EmptyFrame(0).encode())
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: performative_name(item) in ("open", "close"))
    remote = obs.first("open")
    if remote is None or obs.close is not None:
        ctx.record(False, expected="the broker's open", observed=obs.describe())
        return
    mark_opened(peer, remote)
    ctx.check(merge(obs, peer.observe(REACTION_WINDOW, probe=True)), StaysOpen())


def _idle_check(ctx: Context, idle_ms: int, window: float, clauses: tuple[str, ...]) -> None:
    """Opens with idle-time-out ``idle_ms``, keeps our side alive for the broker, and measures the
    silences in what the broker sends over ``window`` seconds. The broker meets the time-out
    (every silence at most idle-time-out plus a tolerance of a quarter of it, at least 50 ms, for
    scheduling) or refuses it with a close carrying an error."""
    peer = ctx.connect(idle_time_out=idle_ms)
    start = now(ctx)
    obs = observe_alive(peer, window, keepalive_period(peer))
    end = now(ctx)
    limit = idle_ms / 1000.0 + max(idle_ms / 4000.0, 0.05)
    refused = ConnectionError().accepts(obs)
    times = [start] + recv_times(ctx, peer, start) + ([] if obs.closed or obs.close else [end])
    gaps = [b - a for a, b in zip(times, times[1:])]
    longest = max(gaps, default=0.0)
    beats = [f for f in obs.received if isinstance(f, EmptyFrame)]
    ctx.record(refused or longest <= limit, clauses=clauses,
               expected=f"a frame at least every {idle_ms} ms (silences up to {limit * 1000:.0f} ms tolerated), "
                        "or a close with an error refusing the time-out",
               observed=f"longest silence {longest * 1000:.0f} ms over {end - start:.1f}s; {obs.describe()}")
    if beats:
        ctx.record(all(f.channel == 0 for f in beats), what="the broker's empty frames are on channel 0",
                   clauses=("amqp10:2.4.5/7",), level=Level.SHOULD, guideline=EMPTY_ON_0_TEXT,
                   expected="empty frames on channel 0",
                   observed=f"channels {sorted({f.channel for f in beats})}")
    close_discipline(ctx, obs)


@case("amqp10/2.4.5/idle-time-out-honoured", title="with idle-time-out 1000 ms in our open the broker sends a "
      "frame at least every second", clauses=("amqp10:2.7.1/9", "amqp10:2.4.5/4", "amqp10:2.7.1/10", "amqp10:2.4.5/6"))
def idle_time_out_honoured(ctx: Context) -> None:
    """Opens with idle-time-out 1000 and sends nothing but the empty frames the broker's own
    idle-time-out needs. Our idle-time-out is "the idle timeout REQUIRED by the sender": for 3.5 s
    every silence of the broker must stay within 1000 ms (+250 ms tolerance) -- with empty frames
    if it has nothing to say -- unless it refuses the time-out with a close carrying an error
    (2.4.5/4, 2.7.1/10). Its empty frames should be on channel 0."""
    _idle_check(ctx, 1000, 3.5, ("amqp10:2.7.1/9", "amqp10:2.4.5/4", "amqp10:2.7.1/10", "amqp10:2.4.5/6"))


@case("amqp10/2.4.5/short-idle-time-out", title="an idle-time-out of 100 ms is met or refused with a close",
      clauses=("amqp10:2.4.5/4", "amqp10:2.7.1/10"))
def short_idle_time_out(ctx: Context) -> None:
    """Opens with idle-time-out 100 ms. "There is no requirement for peers to support arbitrarily
    short ... idle timeouts", but a peer that cannot support one SHOULD close the connection with
    an error: over 1.5 s the broker either keeps every silence within 100 ms (+50 ms tolerance)
    or closes with an error (warning when it does neither)."""
    _idle_check(ctx, 100, 1.5, ("amqp10:2.4.5/4", "amqp10:2.7.1/10"))


def _broker_idle(ctx: Context, peer: Peer) -> int:
    t = remote_idle(peer)
    if not t:
        ctx.skip("the broker's open sets no idle-time-out")
    if t > LONGEST_IDLE:
        ctx.skip(f"the broker's idle-time-out is {t} ms: waiting it out twice is too slow for this suite "
                 f"(cases run it up to {LONGEST_IDLE} ms)")
    return t


@case("amqp10/2.4.5/broker-closes-idle-peer", title="a peer silent for twice the broker's idle-time-out is closed "
      "with an error", clauses=("amqp10:2.4.5/1", "amqp10:2.4.5/2", "amqp10:2.4.5/3"), timeout=20.0)
def broker_closes_idle_peer(ctx: Context) -> None:
    """Opens (no idle-time-out of ours) and sends nothing. The broker's idle-time-out T is half its
    real threshold (2.4.5/3); once 2T has passed without a frame it SHOULD close gracefully with a
    close carrying an error (2.4.5/1) -- after which it MAY close the socket (2.4.5/2). Waits 2T plus
    max(1 s, T/2). Skipped when the broker sets no idle-time-out or one above 5 s."""
    peer = ctx.connect()
    t = _broker_idle(ctx, peer) / 1000.0
    obs = watch(peer, 2 * t + max(1.0, t / 2))
    ctx.check(obs, ConnectionError())
    close_discipline(ctx, obs)


@case("amqp10/2.4.5/broker-keeps-active-peer", title="a peer sending empty frames within the broker's "
      "idle-time-out is not closed", clauses=("amqp10:2.4.5/3", "amqp10:2.4.5/6"), timeout=20.0)
def broker_keeps_active_peer(ctx: Context) -> None:
    """Opens and, for three times the broker's idle-time-out T, sends only an empty frame every T/2
    ("it MAY send an empty frame" to prevent an idle time-out). The broker must not time the
    connection out: it stays open and serves (probe). Skipped when the broker sets no
    idle-time-out or one above 5 s."""
    peer = ctx.connect()
    t = _broker_idle(ctx, peer) / 1000.0
    obs = observe_alive(peer, 3 * t, t / 2)
    if not obs.closed and obs.close is None:
        obs = merge(obs, peer.observe(REACTION_WINDOW, probe=True))
    ctx.check(obs, StaysOpen())


@case("amqp10/2.4.5/no-empty-frames-after-close", title="after its close the broker sends no empty frames, even "
      "with an idle-time-out of 1000 ms", clauses=("amqp10:2.4.5/8", CLOSE_LAST))
def no_empty_frames_after_close(ctx: Context) -> None:
    """Opens with idle-time-out 1000 (so the broker sends empty frames), waits 0.7 s, sends close and
    watches for 1.5 s after the broker's close: empty frames "MUST NOT be sent after the close frame
    has been sent", and the close is the last thing written (2.4.3/2)."""
    peer = ctx.connect(idle_time_out=1000)
    peer.observe(0.7)
    peer.send(AMQPFrame(0, spec.Close()))
    obs = watch(peer, WAIT, grace=1.5)
    frames = frames_of(obs)
    at = next((i for i, f in enumerate(frames) if is_close(f)), None)
    after = frames[at + 1:] if at is not None else []
    ctx.record(not after, expected="nothing (no empty frame) after the broker's close",
               observed="; ".join(describe(f) for f in after) if after else obs.describe())
    if obs.closed:
        ctx.record(at is not None, what="the broker writes a close before closing the socket", clauses=CLOSE_FIRST,
                   expected="a close frame, then the socket closed", observed=obs.describe())
    ctx.record(obs.close is not None, what="our close is answered with close", level=Level.SHOULD,
               guideline=CLOSE_RESPONSE_TEXT, clauses=(), expected="the broker's close", observed=obs.describe())


# ---------------------------------------------------------------------------------------- 2.4.6 connection states
@case("amqp10/2.4.6/discarding-after-error-close", title="after closing with an error the broker discards "
      "incoming frames until our close, and writes nothing more",
      clauses=("amqp10:2.4.6/3", CLOSE_LAST))
def discarding_after_error_close(ctx: Context) -> None:
    """Opens proposing channel-max 7 and sends a begin above the broker's channel-max, which it must
    close with framing-error (2.7.1/8). Without answering that close, sends a begin on channel 0
    and an empty frame: in DISCARDING "any incoming frames on the connection MUST be silently
    discarded until the peer's close frame is received" -- no begin may come back, nor anything
    else (2.4.3/2). One second later, unless the socket is closed by then (a FIN may be the
    half-close of the broker's write side that 2.4.6 permits), sends our close: still nothing may
    come. Skipped when
    the broker's channel-max is 65535 or when it does not close at all (failed by
    amqp10/2.7.1/channel-above-low-channel-max)."""
    peer = ctx.connect(channel_max=7)
    bad = provoke_framing_error(ctx, peer)
    first = peer.observe(REACTION_WINDOW, probe=True, reply_close=False, stop=is_close)
    if first.close is None:
        ctx.skip(f"the broker did not close after a begin on channel {bad}, above its channel-max "
                 f"({first.describe()}): it never entered DISCARDING")
    peer.send(begin_frame(0), EmptyFrame(0))
    during = peer.observe(1.0, reply_close=False)
    ctx.record(not frames_of(during), expected="nothing in answer to the begin and empty frame sent after the "
               "broker's error close", observed=during.describe())
    if not during.closed:
        peer.send(AMQPFrame(0, spec.Close()))
        last = peer.observe(AFTER_CLOSE, reply_close=False)
        ctx.record(not frames_of(last), what="nothing follows our close either", clauses=(CLOSE_LAST,),
                   expected="no frame after the broker's close", observed=last.describe())
