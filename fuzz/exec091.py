"""Running one AMQP 0-9-1 example: reach the state, send, watch, judge the reaction.

Each example gets a fresh connection, negotiated exactly as far as its target starts
(``START_STATES``) -- so that a finding replays from nothing but its target name and input
octets. After the stimulus come probes the spec gives a definite answer to (basic.qos on the
stimulus channel, channel.open on a fresh one): their answers end the observation as soon as
the broker has shown what it did, instead of waiting out a window, and the expectation is
computed over stimulus *and* probes, so a probe that lands inside an unfinished content is
judged as what it is.
"""
from __future__ import annotations

import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.peer.amqp091 import DEFAULT_FRAME_MAX, Observation, Peer, sasl_plain
from amqpspec.peer.base import Closed, PeerError
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import Dialect, HeartbeatFrame, MethodFrame, ProtocolHeader, describe, spec
from amqpspec.wire.amqp091.frames import FRAME_OVERHEAD, Frame, FrameError, FrameReader, MalformedFrame
from amqpspec.wire.raw import Raw

from . import expect091
from .expectation import Expectation
from .stimulus import Stimulus, describe as describe_item, resolve

FUZZ_FRAME_MAX = spec.FRAME_MIN_SIZE   # negotiated after tune: oversized frames stay cheap to send
STIMULUS_CHANNEL = 1
#: the channel-open start state also has this channel open, for the probe: a basic.qos on it
#: is answered by any broker that still serves the connection, and it stays open from one
#: example to the next on a reused connection, where opening and closing a fresh probe
#: channel per example doubled the broker's work on cheap targets (channel-error)
PROBE_CHANNEL = 2
HOME_CHANNELS = (STIMULUS_CHANNEL, PROBE_CHANNEL)   # open in the channel-open start state
#: where each 0-9-1 target starts: handshake step reached before the stimulus
START_STATES = ("fresh", "after-start", "after-tune", "after-tune-ok", "after-open", "channel-open")
CLOSE_DRAIN_S = 0.05
POLITE_CLOSE_S = 0.3
PENDING_WINDOW = 0.5      # how long a broker that waits for the rest of a frame is watched
LATE_CLOSE_S = 0.25       # after the probes are answered, how long a required close is still awaited
HEADER_CLOSE_S = 0.5      # after the broker's protocol header (refusing ours), how long its close is awaited


class SetupFailed(Exception):
    """The connection could not be brought to the target's start state (not a finding by itself)."""


def credentials(target: Target) -> bytes:
    """The SASL PLAIN response for the target (only ever sent, never recorded)."""
    return sasl_plain(target.username, target.password.reveal())


def reach(peer: Peer, start: str) -> expect091.Conn:
    """Negotiates the fresh connection up to ``start``; returns what the broker then knows."""
    try:
        if start == "fresh":
            return expect091.Conn(phase="fresh", vhost=peer.target.vhost)
        upto = {"after-start": "start", "after-tune": "tune", "after-tune-ok": "tune-ok"}.get(start, "open-ok")
        n = peer.handshake(upto=upto, frame_max=FUZZ_FRAME_MAX, timeout=3.0)
        if start == "channel-open":
            peer.open_channel(STIMULUS_CHANNEL, timeout=3.0)
            peer.open_channel(PROBE_CHANNEL, timeout=3.0)
    except PeerError as exc:
        raise SetupFailed(f"could not reach {start}: {exc}") from None
    mechanisms = tuple(peer.broker_info().mechanisms)
    proposed = (n.tune.channel_max, n.tune.frame_max, n.tune.heartbeat) if n.tune is not None else (0, 0, 0)
    phase = {"after-start": "after-start", "after-tune": "after-tune", "after-tune-ok": "after-tune-ok"}.get(start, "open")
    channels = frozenset(HOME_CHANNELS) if start == "channel-open" else frozenset()
    return expect091.Conn(phase=phase, frame_max=n.frame_max if phase in ("after-tune-ok", "open") else 0,
                          channel_max=n.channel_max, channels=channels, mechanisms=mechanisms, proposed=proposed,
                          vhost=peer.target.vhost)


def frame_channels(data: bytes) -> set[int] | None:
    """The channel of every frame in ``data``, read by their size fields as the broker reads
    them -- the same whether the stimulus was built from frames (a campaign) or is recorded
    octets (a replay), so both choose the same probes; None when they are not whole frames."""
    out: set[int] = set()
    pos = 0
    while pos < len(data):
        if len(data) - pos < 7:
            return None
        out.add(int.from_bytes(data[pos + 1:pos + 3], "big"))
        pos += int.from_bytes(data[pos + 3:pos + 7], "big") + FRAME_OVERHEAD
    return out if pos == len(data) else None


def probe_channel(conn: expect091.Conn, stimulus: Stimulus, octets: bytes | None = None) -> int:
    """A channel the stimulus does not touch, for the fresh-channel probe."""
    used: set[Any] = {getattr(item, "channel", None) for item in stimulus.items}
    used |= frame_channels(stimulus.octets() if octets is None else octets) or set()
    top = conn.channel_max or 0xFFFF
    for ch in range(2, top + 1):
        if ch not in used and ch not in conn.channels:
            return ch
    return top


def probes(conn: expect091.Conn, stimulus: Stimulus,
           octets: bytes | None = None) -> tuple[list[Frame], tuple[tuple[str, int], ...]]:
    """(frames sent after the stimulus, replies that must all come back): a basic.qos on the
    stimulus channel where one was open (it shows the stimulus was processed without a channel
    exception), and on the standing probe channel -- or, where the stimulus went there too or
    there is none, a channel.open on a fresh channel (it shows the connection still serves)."""
    if conn.phase == "after-tune":  # tune-ok targets: the open that follows is the probe
        return [MethodFrame(0, spec.ConnectionOpen(conn.vhost))], ()
    if conn.phase != "open":
        return [], ()
    frames: list[Frame] = []
    awaits: list[tuple[str, int]] = []
    if STIMULUS_CHANNEL in conn.channels:
        frames.append(MethodFrame(STIMULUS_CHANNEL, spec.BasicQos(0, 0, False)))
        awaits.append(("basic.qos-ok", STIMULUS_CHANNEL))
    octets = stimulus.octets() if octets is None else octets
    names = frame_channels(octets)
    if PROBE_CHANNEL in conn.channels and names is not None and PROBE_CHANNEL not in names:
        frames.append(MethodFrame(PROBE_CHANNEL, spec.BasicQos(0, 0, False)))
        awaits.append(("basic.qos-ok", PROBE_CHANNEL))
        return frames, tuple(awaits)
    p = probe_channel(conn, stimulus, octets)
    frames.append(MethodFrame(p, spec.ChannelOpen()))
    awaits.append(("channel.open-ok", p))
    return frames, tuple(awaits)


def watch(peer: Peer, exp: Expectation, probe_awaits: tuple[tuple[str, int], ...], window: float) -> Observation:
    """Collects the broker's reaction until it is decided, the socket closes, or ``window`` ends.

    Decided means: one of the expectation's replies came (a negotiation step answered), or every
    probe was answered or refused by a channel.close, or -- where a silent close is required --
    anything at all arrived. ``probe_ok`` records whether it was decided that way.
    """
    any_of = set(exp.awaits)
    all_of = set(probe_awaits)
    any_done = False
    lingering = False
    obs = Observation()
    started = time.monotonic()
    until = started + window
    while (left := until - time.monotonic()) > 0:
        item = peer.recv(left)
        if item is None:
            if peer.framing_error is not None and obs.framing_error is None:
                obs.framing_error, obs.end = peer.framing_error, "framing-error"
                continue  # read on until the socket closes or the window ends
            break
        if isinstance(item, Closed):
            obs.end = item.how if item.how != "local" else "fin"
            break
        obs.received.append(item)
        if isinstance(item, HeartbeatFrame):
            continue
        if isinstance(item, ProtocolHeader):
            # the broker refused our header: the close the spec requires follows its own header
            # (4.2.2), and a window about to end as the header arrives must not judge a slow
            # broker as one that never closes (garagemq restarting answered after 0.55 s)
            until = max(until, time.monotonic() + HEADER_CLOSE_S)
        if isinstance(item, MethodFrame) and (item.method.NAME, item.channel) == ("connection.close", 0):
            peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
            peer.close_ok_sent = obs.replied_close_ok = True
            drain_close(peer, obs, min(until, time.monotonic() + CLOSE_DRAIN_S))
            break
        if exp.silent_required or (exp.foreign and exp.verifier.accepts(obs)):
            break
        if isinstance(item, MethodFrame):
            key = (item.method.NAME, item.channel)
            if key[0] == "channel.close":
                peer.send(MethodFrame(item.channel, spec.ChannelCloseOk()))
                all_of = {k for k in all_of if k[1] != item.channel}
                any_done = any_done or any(k[1] == item.channel for k in any_of)
            any_done = any_done or key in any_of
            all_of.discard(key)
            if any_done or (probe_awaits and not all_of):
                obs.probe_ok = True
                if lingering or not (exp.strict and exp.verifier.expects_close and not exp.verifier.accepts(obs)):
                    break
                # a close the spec requires may come after the answers to later frames (RabbitMQ
                # handles a frame for an unopened channel in a new channel process): watch a little
                # longer, or a correct but late exception would be judged as none at all
                lingering = True
                until = min(until, time.monotonic() + LATE_CLOSE_S)
    obs.elapsed = time.monotonic() - started
    obs.head = peer.link.head  # type: ignore[attr-defined]
    obs.probes_sent = bool(probe_awaits)  # type: ignore[attr-defined]
    return obs


def drain_close(peer: Any, obs: Any, until: float, on_item: Callable[[Any], None] | None = None) -> None:
    """After the close exchange, reads until the broker closes the socket (recording FIN or RST);
    ``on_item`` sees each item received meanwhile (shared by the 0-9-1 and 1.0 executors)."""
    while (left := until - time.monotonic()) > 0:
        item = peer.recv(left)
        if item is None:
            return
        if isinstance(item, Closed):
            obs.end = item.how if item.how != "local" else "fin"
            return
        obs.received.append(item)
        if on_item is not None:
            on_item(item)


def send(peer: Peer, stimulus: Stimulus, real: bytes | None, after: list[Frame] | tuple[Frame, ...] = ()) -> bool:
    """Sends the stimulus items, then the frames ``after`` it, in one write (a system call per
    frame costs more than the broker's answer on a local link); the octets on the wire carry
    ``real`` credentials, the transcript, entry per item, does not."""
    parts = []
    for item in stimulus.items:
        data_rec = _encode(item, peer.dialect)
        real_item = resolve(item, real)
        data = data_rec if real_item is item else _encode(real_item, peer.dialect)  # encoded once unless redacted
        parts.append((data, describe_item("0-9-1", item), data_rec, data != data_rec))
    for f in after:
        data = f.encode(peer.dialect)
        parts.append((data, describe(f), data, False))
    return write(peer, parts)


def write(peer: Peer, parts: list[tuple[bytes, str, bytes, bool]]) -> bool:
    """(octets, summary, octets recorded, redacted) sent as one write, each recorded; like
    ``Link.send_bytes``, a broker that already closed is recorded, not raised."""
    link = peer.link
    for data, summary, record, redacted in parts:
        link.transcript.add("send", record, summary, link.conn, redacted)
    if link.closed is not None and link.closed.how == "local":
        raise PeerError("send on a connection the suite already closed")
    try:
        link.sock.settimeout(max(link.remaining(5.0), 0.001))
        link.sock.sendall(b"".join(p[0] for p in parts))
        return True
    except OSError as exc:  # reset, broken pipe, TLS failure: the broker's doing, recorded
        link.send_failed = f"{type(exc).__name__}: {exc}"
        link.transcript.event(f"send failed: {link.send_failed}", link.conn)
        return False


def _encode(item: Any, dialect: Dialect) -> bytes:
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    return item.encode(dialect)


@dataclass
class Run:
    """One example's evidence."""

    expectation: Expectation
    observation: Observation
    transcript: Transcript
    conn: Any
    stimulus_octets: bytes


def run(target: Target, start: str, stimulus: Stimulus, *, window: float, dialect: Dialect,
        transcript: Transcript | None = None) -> Run:
    """One example on a connection in the ``start`` state: a fresh one, or -- when the calling
    worker lends a :class:`Connections` pool (see ``POOL``) and the start is in ``REUSABLE`` -- one
    that an earlier example left and :func:`reset` brought back to exactly that state. Raises
    SetupFailed when the start state is not reached."""
    transcript = transcript or Transcript()
    pool = POOL.get()
    pool = pool if pool is not None and start in REUSABLE else None
    peer, conn, uses = Connections.lend(start, REUSABLE, transcript, window,
                                        lambda deadline: Peer.connect(target, transcript, deadline, dialect))
    reused = conn is not None
    unfinished = False
    kept = False
    try:
        if not reused:
            conn = reach(peer, start)
        octets = stimulus.octets(dialect)
        after, probe_awaits = probes(conn, stimulus, octets)
        unfinished = not (len(octets) >= 8 if conn.phase == "fresh" else expect091.whole_frames(octets))
        if unfinished:  # probes would only be read as the rest of that frame
            after, probe_awaits = [], ()
        after_octets = b"".join(f.encode(dialect) for f in after)
        exp = expect091.expect(conn, octets + after_octets)
        send(peer, stimulus, credentials(target), after)
        # a broker waiting for the rest of a frame is allowed to: no need to wait the window out
        obs = watch(peer, exp, probe_awaits, min(window, PENDING_WINDOW) if unfinished and exp.may_wait else window)
        obs.reused = reused  # type: ignore[attr-defined]
        if pool is not None and not unfinished and uses + 1 < MAX_REUSE:
            kept = reset(peer, start, octets, after_octets, obs, dialect, window)
            if kept:
                pool.give(start, peer, conn, uses + 1)
        return Run(exp, obs, transcript, conn, octets)
    finally:
        if kept:
            pass
        elif not unfinished and peer.link.closed is None and not peer.close_ok_sent and peer.negotiated.opened:
            peer.close(timeout=POLITE_CLOSE_S)
        else:
            peer.abort()


# ---------------------------------------------------------------------------- connection reuse

REUSABLE = ("after-open", "channel-open")   # starts a connection can be brought back to
MAX_REUSE = 200       # examples on one connection: bounds what lives as long as it (exclusive queues)
RESET_S = 1.0         # how long the broker may take to confirm the reset


class Connections:
    """A worker's idle connections, one per start state, each exactly in that state.

    An example on a reused connection is judged like one on a fresh connection (same start
    state, same expectation, same probes); the campaign runs every example that shows a
    violation again on a fresh connection before it counts, so a finding never depends on what
    earlier examples did to the connection, and it replays from its input alone."""

    def __init__(self) -> None:
        self._idle: dict[str, tuple[Peer, expect091.Conn, int]] = {}

    def take(self, start: str) -> tuple[Peer, expect091.Conn, int] | None:
        return self._idle.pop(start, None)

    def give(self, start: str, peer: Peer, conn: expect091.Conn, uses: int) -> None:
        old = self._idle.pop(start, None)
        if old is not None:
            old[0].close(timeout=POLITE_CLOSE_S)
        self._idle[start] = (peer, conn, uses)

    @staticmethod
    def lend(start: str, reusable: tuple[str, ...], transcript: Transcript, window: float,
             connect: Callable[[float], Any]) -> tuple[Any, Any, int]:
        """The connection an example starts on: the running worker's idle one in ``start`` (see
        ``POOL``) when the start is ``reusable``, else ``connect(deadline)`` -- (peer, what the
        pool kept with it or None, earlier uses). Raises SetupFailed when no connection is made."""
        pool = POOL.get()
        held = pool.take(start) if pool is not None and start in reusable else None
        deadline = time.monotonic() + window + 10.0
        if held is None:
            try:
                return connect(deadline), None, 0
            except (PeerError, OSError) as exc:
                raise SetupFailed(str(exc)) from None
        peer, kept, uses = held
        peer.link.transcript = transcript
        peer.link.conn = transcript.new_connection()
        peer.link.deadline = deadline
        transcript.event(f"connection reused (example {uses + 1} on it), brought back to {start} by the suite")
        return peer, kept, uses

    def close(self) -> None:
        for peer, _conn, _uses in self._idle.values():
            peer.link.transcript = Transcript()
            peer.close(timeout=POLITE_CLOSE_S)
        self._idle.clear()


#: the pool the running worker lends to :func:`run` (a context variable, so the target
#: definitions, which call ``run`` without knowing about pools, need no change)
POOL: ContextVar[Connections | None] = ContextVar("amqpspec_fuzz_connections", default=None)


def reset(peer: Peer, start: str, stimulus: bytes, after: bytes, obs: Observation, dialect: Dialect,
          window: float) -> bool:
    """Brings a connection back to ``start`` after an example: every channel the octets sent
    (stimulus and probes, decoded the way the broker reads them) left open is closed, and the
    start state's channels opened again -- except the probe channel when nothing but the probe
    went to it (its state is as it was). Only a connection the broker still serves in step with
    us qualifies: the probes answered, no close, nothing undecodable either way. Returns whether
    the connection is now in ``start`` (else it is to be closed)."""
    sent = stimulus + after
    if peer.link.closed is not None or peer.close_ok_sent or peer.framing_error is not None \
            or obs.framing_error is not None or obs.connection_close is not None or not obs.probe_ok:
        return False
    reader = FrameReader(len(sent) + 16, dialect, expect_protocol_header=False)
    reader.feed(sent)
    opening: set[int] = set()
    closing: set[int] = set()
    stimulus_end = len(stimulus)
    used = 0
    named: set[int] = set()   # channels the stimulus's frames went to
    try:
        for frame in reader:
            if used < stimulus_end:
                named.add(frame.channel)
            used += len(reader.last_raw)
            if isinstance(frame, MalformedFrame):
                return False
            if isinstance(frame, MethodFrame):
                name = frame.method.NAME
                if name == "channel.open":
                    opening.add(frame.channel)
                elif name == "channel.close":
                    closing.add(frame.channel)
    except FrameError:
        return False
    if reader.pending_bytes() or opening & closing:
        return False
    home = set(HOME_CHANNELS) if start == "channel-open" else set()
    open_ = set(home)
    for item in obs.received:
        if not isinstance(item, MethodFrame):
            continue
        name, ch = item.method.NAME, item.channel
        if name == "channel.open-ok" and ch in opening:
            opening.discard(ch)
            open_.add(ch)
        elif name == "channel.close-ok" and ch in closing:
            closing.discard(ch)
            open_.discard(ch)
        elif name == "channel.close":  # answered with close-ok by watch
            if ch in closing:
                return False  # closes crossed: a close-ok may still be on its way
            opening.discard(ch)
            open_.discard(ch)
    peer.link.transcript = _SCRATCH  # the reset is the suite's housekeeping, not the example's evidence
    awaited: list[tuple[str, int]] = [("channel.open-ok", ch) for ch in opening]
    awaited += [("channel.close-ok", ch) for ch in closing]
    open_ |= opening
    keep = {PROBE_CHANNEL} & open_ & (home - named - opening)   # only our probe went there
    closed_now = sorted(open_ - keep)
    frames: list[Frame] = [MethodFrame(ch, spec.ChannelClose(200, "amqpspec reset", 0, 0)) for ch in closed_now]
    awaited += [("channel.close-ok", ch) for ch in closed_now]
    reopen = home - keep
    for ch in sorted(reopen - open_):  # closed already: may be opened again at once
        frames.append(MethodFrame(ch, spec.ChannelOpen()))
        awaited.append(("channel.open-ok", ch))
    reopen &= open_                    # these once their close-ok is in
    until = time.monotonic() + min(window, RESET_S)
    if frames and not write(peer, [(f.encode(dialect), "", b"", False) for f in frames]):
        return False
    while awaited:
        if not _await(peer, awaited, until):
            return False
        for ch in sorted(c for c in reopen if ("channel.close-ok", c) not in awaited):
            reopen.discard(ch)
            if not write(peer, [(MethodFrame(ch, spec.ChannelOpen()).encode(dialect), "", b"", False)]):
                return False
            awaited.append(("channel.open-ok", ch))
    return True


def _await(peer: Peer, awaited: list[tuple[str, int]], until: float) -> bool:
    """Reads until one of ``awaited`` comes (removed from it); False on anything that ends the
    connection or on time-out. Frames of channels being closed are dropped, as the spec says."""
    while (left := until - time.monotonic()) > 0:
        item = peer.recv(left)
        if item is None or isinstance(item, Closed):
            return False
        if isinstance(item, MethodFrame):
            key = (item.method.NAME, item.channel)
            if key in awaited:
                awaited.remove(key)
                return True
            if key[0] in ("connection.close", "channel.close", "channel.open-ok", "channel.close-ok"):
                return False
    return False


class _Discard(Transcript):
    """A transcript that keeps nothing (the reset's frames)."""

    def add(self, direction: str, data: bytes, summary: str, conn: int = 0, redacted: bool = False) -> None:
        return None


_SCRATCH = _Discard()


def declared_names(stimulus: Stimulus, obs: Observation) -> list[tuple[str, str]]:
    """(kind, name) of queues and exchanges the stimulus may have created, for cleanup."""
    out: list[tuple[str, str]] = []
    for item in stimulus.items:
        m = getattr(item, "method", None)
        if isinstance(m, spec.QueueDeclare) and isinstance(m.queue, str) and m.queue and not m.passive:
            out.append(("queue", m.queue))
        elif isinstance(m, spec.ExchangeDeclare) and isinstance(m.exchange, str) and m.exchange and not m.passive:
            out.append(("exchange", m.exchange))
    for f in obs.methods("queue.declare-ok"):
        name = getattr(f.method, "queue", "")
        if isinstance(name, str) and name:
            out.append(("queue", name))
    return out


__all__ = ["START_STATES", "SetupFailed", "Connections", "POOL", "REUSABLE", "reset", "reach", "probes", "watch", "run", "Run", "credentials",
           "declared_names", "FUZZ_FRAME_MAX", "DEFAULT_FRAME_MAX", "Raw"]
