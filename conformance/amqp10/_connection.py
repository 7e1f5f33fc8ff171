"""Connections for the case modules (2.4, 2.7.1, 2.7.9): reaching the first frame, opening by hand,
watching past the broker's close, and the close discipline of 2.4.3 every closing case checks.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, Peer, UnexpectedReply, performative_name
from amqpspec.peer.session10 import begin_frame
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Frame, ProtocolHeader, describe, spec

from ._common import REACTION_WINDOW, WAIT

AFTER_CLOSE = 0.5        # how long we keep watching after the broker's close for anything it must not write
LONGEST_IDLE = 5000      # ms: a broker idle-time-out above this makes the idle cases too slow (skipped)

CLOSE_FIRST = ("amqp10:2.4.3/1", "amqp10:2.7.9/1")
CLOSE_LAST = "amqp10:2.4.3/2"
OPEN_FIRST = ("amqp10:2.4.1/1", "amqp10:2.7.1/1")
FRAMING_ERROR = str(spec.AmqpConnectionError.FRAMING_ERROR)

CHANNEL_0_TEXT = "implementations SHOULD send it on channel 0"
STATE_TABLE_TEXT = ("State Legal Sends Legal Receives Legal Connection Actions ... HDR_EXCH OPEN OPEN "
                    "[Connection State Table, 2.4.7]")
CLOSE_RESPONSE_TEXT = ("Normally one peer will initiate the connection close, and the partner will send its close "
                       "in response.")
EMPTY_ON_0_TEXT = "implementations SHOULD use channel 0 when sending empty frames"


def is_close(item: Any) -> bool:
    return performative_name(item) == "close"


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


def provoke_framing_error(ctx: Context, peer: Peer) -> int:
    """Sends a begin on the channel one above the broker's channel-max, which the broker MUST
    answer by closing with framing-error (2.7.1/8); returns that channel. Skips the case when the
    broker's channel-max is 65535 (no channel lies above it)."""
    top = peer.opened.channel_max
    if top >= 0xFFFF:
        ctx.skip("the broker's channel-max is 65535: no channel lies outside its range to provoke an error close")
    peer.send(begin_frame(top + 1))
    return top + 1


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


