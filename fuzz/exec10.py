"""Running one AMQP 1.0 example: reach the state, send, watch, judge the reaction.

Each example starts on a connection brought exactly as far as its target starts
(``START_STATES``): a fresh one, or -- where the calling worker lends a pool (``exec091.POOL``)
and the start state is one a connection can be brought back to (``REUSABLE``) -- one an earlier
example left and :func:`reset` brought back to that state (every session ended, the start
state's session and links begun and attached again), as the 0-9-1 executor does with channels.
A violation seen on a reused connection counts only once the example shows it on a fresh one
(the campaign runs it again), so a finding replays from its target name and input octets alone.
After
the stimulus come probes the spec gives a definite answer to: where the stimulus went to a
session, an attach on that same session (answered by an attach), else a begin on an unused
channel (answered by a begin naming it) -- sessions may run apart from each other in a broker
(RabbitMQ's plugin gives each its own process), so only an answer on the stimulus's own
session shows that the stimulus was processed. The answers end the observation as soon as the
broker has shown what it did; an end on a session cancels the probe that went to it, since a
session that ended with an error discards what follows (2.5.4/2).
"""
from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field
from typing import Any

from amqpspec.peer.amqp10 import Observation, Peer, error_condition, performative_name
from amqpspec.peer.base import Closed, PeerError
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, ProtocolHeader, spec
from amqpspec.wire.amqp10.frames import FRAME_HEADER_SIZE, decode_body

from . import expect10
from .exec091 import POOL, Connections, SetupFailed, drain_close, write
from .expectation import Anything, Expectation
from .stimulus import Stimulus, describe as describe_item, resolve

#: where each 1.0 target starts
START_STATES = ("fresh", "sasl", "header", "open", "session", "link")
OUR_MAX_FRAME = 65536      # proposed in our open; the broker must send nothing larger (2.7.1/4)
SESSION_CHANNEL = 0
SENDER_HANDLE = 0
RECEIVER_HANDLE = 1
MARKER_HANDLE = 4242       # the probe attach's handle: one no target draws on purpose
SETUP_TIMEOUT = 3.0
CLOSE_DRAIN_S = 0.05       # after the close exchange, how long the socket's end is awaited (it decides nothing)
#: how long our close's answer is awaited when an example's connection is not kept: a local broker
#: answers in a millisecond, and the answer decides nothing (the verdict is in)
POLITE_CLOSE_S = 0.05
PENDING_WINDOW = 0.5       # how long a broker that waits for the rest of a frame is watched
#: ... during generation (``hang_window`` given): silence is a correct answer here (the broker may
#: wait for the rest), so the window only gives a wrong reaction time to come, and a broker on
#: a local link reacts to what it read within milliseconds
PENDING_QUICK = 0.1
#: how long a reaction is watched when the expectation takes any reaction, or none, and asks for
#: no answer (before the open exchange no probe can follow): whatever comes later cannot change
#: the verdict, only what the transcript shows
UNDECIDABLE_WINDOW = 0.25
CREDIT_WAIT_S = 0.5        # how long the broker's first flow for our sending link is awaited
REUSABLE = ("open", "session", "link")   # start states a connection can be brought back to
MAX_REUSE = 200            # examples on one connection: bounds what lives as long as it
RESET_S = 1.0              # how long the broker may take to confirm the reset


def credentials(target: Target) -> bytes:
    """The SASL PLAIN initial-response for the target (only ever sent, never recorded)."""
    return b"\x00" + target.username.encode() + b"\x00" + target.password.reveal().encode()


def reach(peer: Peer, start: str, address: str) -> expect10.Conn:
    """Brings the fresh connection to ``start``; returns what the broker then knows."""
    try:
        if start == "fresh":
            return expect10.Conn(phase="fresh")
        if start == "sasl":
            peer.sasl(upto="mechanisms", timeout=SETUP_TIMEOUT)
            return expect10.Conn(phase="sasl", mechanisms=tuple(peer.opened.sasl_mechanisms))
        if start == "header":
            if peer.target.credentials_given:
                outcome = peer.sasl(timeout=SETUP_TIMEOUT)
                if int(getattr(outcome, "code", 1) or 0) != 0:
                    raise SetupFailed(f"SASL authentication failed (code {outcome.code})")
            peer.send(ProtocolHeader.amqp())
            got = peer.expect_header(SETUP_TIMEOUT)
            if got.protocol_id != 0:
                raise SetupFailed(f"the broker answered the AMQP header with {got.summary()}")
            peer.stage = "header"
            return expect10.Conn(phase="header")
        remote = peer.handshake(timeout=SETUP_TIMEOUT, max_frame_size=OUR_MAX_FRAME)
        conn = expect10.Conn(phase="open", max_frame_size=int(remote.value_of("max-frame-size")),
                             channel_max=int(remote.value_of("channel-max")))
        if start == "open":
            return conn
        return establish(peer, start, address, conn, SETUP_TIMEOUT)
    except (PeerError, OSError) as exc:
        raise SetupFailed(f"could not reach {start}: {exc}") from None


def home_frames(start: str, address: str) -> list[AMQPFrame]:
    """The frames that make the start state's session (and links) on an open connection: a begin
    on channel 0 and, for ``link``, a sending link (handle 0) to ``address`` and a receiving link
    (handle 1) from it -- sent in one write, as clients pipeline them (2.5.1 lets frames for a
    session follow its begin before the answer)."""
    ch = SESSION_CHANNEL
    frames = [AMQPFrame(ch, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))]
    if start == "link":
        frames.append(AMQPFrame(ch, spec.Attach(name=f"{address}-snd", handle=SENDER_HANDLE, role=spec.Role.SENDER,
                                                source=spec.Source(), target=spec.Target(address=address),
                                                initial_delivery_count=0)))
        frames.append(AMQPFrame(ch, spec.Attach(name=f"{address}-rcv", handle=RECEIVER_HANDLE, role=spec.Role.RECEIVER,
                                                source=spec.Source(address=address), target=spec.Target())))
    return frames


@functools.lru_cache(maxsize=256)
def _home_parts(start: str, address: str) -> tuple[tuple[bytes, str, bytes, bool], ...]:
    """:func:`home_frames` as ``write`` takes them, encoded and described once per (start,
    address): they are the same for every new connection and every reset of a slot."""
    return tuple((f.encode(), describe_item("1.0", f), f.encode(), False) for f in home_frames(start, address))


@functools.lru_cache(maxsize=256)
def _home_links(start: str, address: str) -> tuple[tuple[str, bool], ...]:
    """The home links of :func:`home_frames`: each one's name, and whether we send on it."""
    return tuple((str(f.performative.name), bool(f.performative.role)) for f in home_frames(start, address)[1:])


def establish(peer: Peer, start: str, address: str, conn: expect10.Conn, timeout: float) -> expect10.Conn:
    """Begins the start state's session (and attaches its links) on an open connection in one
    write, then reads the answers: the broker's begin, an attach per link, and the broker's first
    flow for our sending link (its credit grant, so that it does not arrive during the observation
    as if it answered the stimulus). A link refused (an attach answered by a detach, 2.6.3/2) or
    anything that ends the session is a SetupFailed. Frames of the new session that were not
    awaited are kept for the observation, as on a fresh connection. Returns ``conn`` with that
    session."""
    ch = SESSION_CHANNEL
    if not write(peer, list(_home_parts(start, address))):
        raise SetupFailed(f"could not reach {start}: the broker closed the connection")
    names = dict(_home_links(start, address))
    session: expect10.Session | None = None
    sender_handle: int | None = None   # the broker's handle for our sending link (its flow names it)
    credit = start != "link"
    stash: list[Any] = []
    until = time.monotonic() + timeout
    credit_until: float | None = None
    try:
        while session is None or names or not credit:
            if credit_until is not None and time.monotonic() >= credit_until:
                break   # no credit granted yet: the examples see it come, as they did before
            left = (until if credit_until is None else credit_until) - time.monotonic()
            item = peer.recv(max(left, 0.0)) if left > 0 else None
            if item is None or isinstance(item, Closed):
                if session is not None and not names and credit_until is not None:
                    break
                raise SetupFailed(f"could not reach {start}: no answer to the session's frames"
                                  + (f" ({item.summary()})" if isinstance(item, Closed) else ""))
            name = performative_name(item)
            perf = getattr(item, "performative", None)
            if name == "begin" and getattr(perf, "remote_channel", None) == ch and session is None:
                session = expect10.Session(remote=item.channel, handle_max=int(perf.value_of("handle-max")))  # type: ignore[union-attr]
            elif name == "attach" and str(perf.name) in names:  # type: ignore[union-attr]
                if not names.pop(str(perf.name)):  # type: ignore[union-attr]  # our sending link
                    sender_handle = int(perf.handle)  # type: ignore[union-attr]
            elif name in ("close", "end") or (name == "detach" and session is not None):
                what = "was refused a link" if name == "detach" else f"answered with {name}"
                raise SetupFailed(f"could not reach {start}: the broker {what}: {error_condition(perf)}")
            elif name == "flow" and sender_handle is not None and getattr(perf, "handle", None) == sender_handle:
                credit = True
            elif not isinstance(item, EmptyFrame):
                stash.append(item)
            if session is not None and not names and not credit and credit_until is None:
                credit_until = time.monotonic() + CREDIT_WAIT_S
    finally:
        for kept in reversed(stash):
            peer.unread(kept)
    assert session is not None
    if start == "link":
        session.links[SENDER_HANDLE] = expect10.Link(f"{address}-snd", bool(spec.Role.SENDER))
        session.links[RECEIVER_HANDLE] = expect10.Link(f"{address}-rcv", bool(spec.Role.RECEIVER))
    conn.sessions = {ch: session}
    return conn


# ---------------------------------------------------------------------------- probes

@dataclass
class Probes:
    """Frames sent after the stimulus, and the answers each must get (keyed by our channel)."""

    frames: list[AMQPFrame] = field(default_factory=list)
    awaits: dict[tuple[str, Any], int] = field(default_factory=dict)   # (performative, key) -> our channel
    parts: list[tuple[bytes, str]] = field(default_factory=list)       # each frame's octets and description

    def __bool__(self) -> bool:
        return bool(self.frames)

    def add(self, frame_parts: tuple[AMQPFrame, bytes, str]) -> None:
        self.frames.append(frame_parts[0])
        self.parts.append(frame_parts[1:])  # type: ignore[arg-type]

    def octets(self) -> bytes:
        return b"".join(data for data, _ in self.parts)


@functools.lru_cache(maxsize=1024)
def _probe_attach(ch: int, name: str, handle: int, address: str) -> tuple[AMQPFrame, bytes, str]:
    """The probe attach, its octets and description: built once per slot and session (the
    frame is never changed after; every example of a slot sends the same one)."""
    f = AMQPFrame(ch, spec.Attach(name=name, handle=handle, role=spec.Role.SENDER, source=spec.Source(),
                                  target=spec.Target(address=address), initial_delivery_count=0))
    return f, f.encode(), describe_item("1.0", f)


@functools.lru_cache(maxsize=256)
def _probe_begin(ch: int) -> tuple[AMQPFrame, bytes, str]:
    f = AMQPFrame(ch, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048))
    return f, f.encode(), describe_item("1.0", f)


def frame_channels(data: bytes) -> set[int] | None:
    """The channel field of every frame in ``data``, read by their SIZE fields as the broker
    reads them -- the same whether the stimulus was built from frames (a campaign) or is
    recorded octets (a replay), so both send the same probes; None when not whole frames."""
    out: set[int] = set()
    pos = 0
    while pos < len(data):
        if len(data) - pos < FRAME_HEADER_SIZE:
            return None
        size = int.from_bytes(data[pos:pos + 4], "big")
        if size < FRAME_HEADER_SIZE:
            return None
        out.add(int.from_bytes(data[pos + 6:pos + 8], "big"))
        pos += size
    return out if pos == len(data) else None


def probes(conn: expect10.Conn, stimulus: Stimulus, sessions: dict[int, expect10.Session], marker: str,
           address: str, octets: bytes | None = None) -> Probes:
    """An attach on each session the stimulus went to -- or, where it went to none, a begin on a
    channel nothing uses.

    The attach's answer (or the session's end, which cancels it) shows the broker read the
    stimulus and went on reading the connection, which is all the begin showed too: sent as
    well, it made a session that every example then had to end again (a begin, an end and
    their answers, RabbitMQ spawning and stopping a session process each time)."""
    p = Probes()
    if conn.phase != "open":
        return p
    named = frame_channels(stimulus.octets() if octets is None else octets)
    if named is None:  # not whole frames (probes are then not sent): what the items say
        named = {getattr(item, "channel", None) for item in stimulus.items}
    # the sessions the start state had (answer or end shows the stimulus was processed), and
    # those the stimulus began, when it was read to the end
    for ch, s in {**sessions, **conn.sessions}.items():
        if ch not in named:
            continue
        handle = MARKER_HANDLE if s.handle_max is None or MARKER_HANDLE <= s.handle_max else \
            next(h for h in range(0, len(s.links) + 1) if h not in s.links)
        name = f"{marker}-{ch}"
        p.add(_probe_attach(ch, name, handle, address))
        p.awaits[("attach", name)] = ch
    if p.frames:
        return p
    used = named | set(sessions) | set(conn.sessions)
    top = conn.channel_max
    free = next((ch for ch in range(1, min(top, 64) + 1) if ch not in used), None)
    if free is not None:
        p.add(_probe_begin(free))
        p.awaits[("begin", free)] = free
    return p


# ---------------------------------------------------------------------------- watching

def watch(peer: Peer, exp: Expectation, conn: expect10.Conn, sent: Probes, window: float) -> Observation:
    """Collects the broker's reaction until it is decided, the socket closes, or ``window`` ends.

    Decided means: every answer the stimulus and the probes asked for came (``probe_ok``), or
    the expectation accepts an error that came, or the broker closed. A close is answered with
    a close (2.4.3), then read on until the socket ends."""
    obs = Observation()
    sizes: list[int] = []
    wanted: dict[tuple[str, Any], int | None] = {k: None for k in exp.awaits}
    wanted.update(sent.awaits)
    asked = bool(wanted)      # with nothing asked for, only a close, an error or the window ends it
    channel_of = {s.remote: ch for ch, s in conn.sessions.items() if s.remote is not None}
    started = time.monotonic()
    until = started + window
    while (left := until - time.monotonic()) > 0:
        item = peer.recv(left)
        if item is None:
            if peer.framing_error is not None and obs.framing_error is None:
                obs.framing_error, obs.end = peer.framing_error, "framing-error"
                continue
            break
        if isinstance(item, Closed):
            obs.end = item.how if item.how != "local" else "fin"
            break
        obs.received.append(item)
        if not isinstance(item, ProtocolHeader):
            sizes.append(len(peer.reader.last_raw))
        if isinstance(item, EmptyFrame):
            continue
        name = performative_name(item)
        if isinstance(item, ProtocolHeader):
            for key in [k for k in wanted if k[0] == "header" and item.well_formed and item.data[4] == k[1]]:
                wanted.pop(key)
        elif name == "close":
            if not peer.close_sent:
                peer.send(AMQPFrame(0, spec.Close()))
                obs.replied_close = True
            drain_close(peer, obs, min(until, time.monotonic() + CLOSE_DRAIN_S),
                        lambda _item: sizes.append(len(peer.reader.last_raw)))
            break
        elif name == "begin":
            ours = getattr(item.performative, "remote_channel", None)  # type: ignore[union-attr]
            if ours is not None:
                channel_of[item.channel] = int(ours)
                wanted.pop(("begin", int(ours)), None)
        elif name == "attach":
            wanted.pop(("attach", str(item.performative.name)), None)  # type: ignore[union-attr]
        elif name == "end":
            ours = channel_of.get(item.channel)
            for key in [k for k, ch in wanted.items() if ch is not None and ch == ours]:
                wanted.pop(key)   # that session discards what follows (2.5.4/2)
        elif name in ("open", "sasl-outcome", "sasl-mechanisms"):
            wanted.pop((name, 0), None)
            if name == "sasl-outcome" and ("sasl-outcome", 0) not in exp.awaits:
                pass
        if name == "sasl-challenge":
            wanted.pop(("sasl-outcome", 0), None)
        errored = error_condition(getattr(item, "performative", None)) is not None
        if asked and not wanted:
            obs.probe_ok = True
            break
        if errored and exp.verifier.accepts(obs):
            break
    obs.elapsed = time.monotonic() - started
    obs.head = peer.link.head  # type: ignore[attr-defined]
    obs.sizes = sizes  # type: ignore[attr-defined]
    obs.probes_sent = bool(sent)  # type: ignore[attr-defined]
    return obs


# ---------------------------------------------------------------------------- one example

def send(peer: Peer, stimulus: Stimulus, real: bytes | None, recorded: list[bytes], after: Probes) -> bool:
    """Sends the stimulus items, then the probe frames ``after`` them, in one write, as the 0-9-1
    runner does: what the broker reads then depends on the octets alone, not on where a
    thread switch happened to split them (RabbitMQ's 1.0 plugin resets a connection on an
    attach to an unbegun channel when it arrives alone, and ignores it when more follows in
    the same read -- a finding must replay the same). The octets on the wire carry ``real``
    credentials; the transcript, entry per item, does not. ``recorded``: the items' recorded
    octets (``stimulus.encoded()``, which the caller has already); the probes carry theirs."""
    parts = []
    for item, data_rec in zip(stimulus.items, recorded):
        real_item = resolve(item, real)
        data = data_rec if real_item is item else _encode(real_item)
        parts.append((data, describe_item("1.0", item), data_rec, data != data_rec))
    parts.extend((data, text, data, False) for data, text in after.parts)
    return write(peer, parts)  # type: ignore[arg-type]


def _encode(item: Any) -> bytes:
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    return item.encode()


def whole_frames(data: bytes) -> bool:
    """Whether ``data`` is whole frames by their SIZE fields (a probe would not be read as the rest of one)."""
    return frame_channels(data) is not None


@dataclass
class Run:
    expectation: Expectation
    observation: Observation
    transcript: Transcript
    conn: expect10.Conn
    stimulus_octets: bytes


def run(target: Target, start: str, stimulus: Stimulus, *, window: float, address: str, marker: str,
        transcript: Transcript | None = None, hang_window: float | None = None) -> Run:
    """One example on a connection in the ``start`` state: a fresh one, or -- when the calling
    worker lends a pool (``POOL``) and the start is in ``REUSABLE`` -- one that an earlier example
    left and :func:`reset` brought back to exactly that state. Raises SetupFailed when the start
    state is not reached.

    With ``hang_window`` (shorter than ``window``), silence is watched only that long: an
    observation still undecided then is marked ``quick`` -- its hang is provisional, and the
    campaign confirms it with the whole window on a fresh connection unless its signature is
    already known (a correct broker on a local link answers the probes in milliseconds; a hang
    costs the whole window, and a broker that hangs on one input often does on thousands)."""
    transcript = transcript or Transcript()
    pool = POOL.get()
    pool = pool if pool is not None and start in REUSABLE else None
    peer, conn, uses = Connections.lend(start, REUSABLE, transcript, window,
                                        lambda deadline: Peer.connect(target, transcript, deadline))
    reused = conn is not None
    kept = False
    in_step = True      # the broker answered what it was asked (else a polite close would only wait)
    try:
        if not reused:
            conn = reach(peer, start, address)
        recorded = stimulus.encoded()
        octets = b"".join(recorded)
        exp, sessions = expect10.expect_and_state(conn, octets)
        complete = conn.phase == "fresh" or whole_frames(octets)
        sent = probes(conn, stimulus, sessions, marker, address, octets) if complete else Probes()
        send(peer, stimulus, credentials(target) if target.credentials_given else None, recorded, sent)
        watched = _window(exp, complete, sent, window)
        if hang_window is not None and exp.may_wait and not complete:
            watched = min(watched, PENDING_QUICK)
        short = hang_window is not None and hang_window < watched
        obs = watch(peer, exp, conn, sent, hang_window if short else watched)  # type: ignore[arg-type]
        obs.reused = reused  # type: ignore[attr-defined]
        obs.quick = short and not obs.probe_ok and not obs.closed and obs.close is None  # type: ignore[attr-defined]
        # a broker still reading the rest of a frame would take our close as part of it: abort
        in_step = complete and (bool(obs.probe_ok) or not (sent or exp.awaits))
        if pool is not None and complete and uses + 1 < MAX_REUSE:
            again = reset(peer, start, conn, octets, sent, obs, address, window)
            if again is not None:
                pool.give(start, peer, again, uses + 1)
                kept = True
        return Run(exp, obs, transcript, conn, octets)
    finally:
        if kept:
            pass
        elif in_step and peer.link.closed is None and peer.opened.opened and peer.framing_error is None \
                and not peer.close_sent:
            peer.close(timeout=POLITE_CLOSE_S)
        else:
            peer.abort()


def _window(exp: Expectation, complete: bool, sent: Probes, window: float) -> float:
    """How long the reaction is watched: the whole window where a reaction is due; less where
    the broker may wait for the rest of a frame, or where any reaction or none is allowed and
    no answer is asked for (nothing that comes later could change the verdict)."""
    if exp.may_wait and not complete:
        return min(window, PENDING_WINDOW)
    if isinstance(exp.verifier, Anything) and not exp.awaits and not sent:
        return min(window, UNDECIDABLE_WINDOW)
    return window


# ---------------------------------------------------------------------------- connection reuse

#: where a reset's frames are recorded: nowhere (the suite's housekeeping, not an example's evidence)
SCRATCH = Transcript(max_entries=0)


def reset(peer: Peer, start: str, conn: expect10.Conn, stimulus: bytes, sent: Probes, obs: Observation,
          address: str, window: float) -> expect10.Conn | None:
    """Brings a connection back to ``start`` after an example: every session on it is ended --
    those of the start state, those the stimulus and the probes began, those the broker began
    in answer -- and the start state's session and links made again (:func:`establish`).
    Only a connection the broker still serves in step with us qualifies: every probe answered,
    no close, nothing undecodable either way, the stimulus whole frames that decode. Returns the
    connection state to judge the next example by, or None (the connection is then closed).

    What the broker did is read from its frames, not from what the stimulus meant: a session is
    live on our channel ``c`` when the broker began one naming ``c`` (or the start state had
    it) and has not ended it. Each is ended by us (or our end answers the broker's), and the
    broker's end awaited; ending a session also ends its links (2.5.4, 2.6.2)."""
    if peer.link.closed is not None or peer.close_sent or peer.framing_error is not None or peer.link.send_failed \
            or obs.framing_error is not None or obs.close is not None or not obs.probe_ok:
        return None
    ends_sent = _ends_in(stimulus + sent.octets())
    ours = {ch: s.remote for ch, s in conn.sessions.items()}          # our channel -> broker's channel
    ended_by_broker: set[int] = set()
    for item in obs.received:
        name = performative_name(item)
        if name == "begin":
            remote = getattr(item.performative, "remote_channel", None)  # type: ignore[union-attr]
            if remote is None or int(remote) in ours and ours[int(remote)] != item.channel:
                return None   # a session the broker began on its own, or one channel begun twice
            ours[int(remote)] = item.channel  # type: ignore[union-attr]
        elif name == "end":
            mine = [ch for ch, r in ours.items() if r == item.channel]  # type: ignore[union-attr]
            if not mine:
                return None
            ended_by_broker.add(mine[0])
    peer.link.transcript = SCRATCH
    until = time.monotonic() + min(window, RESET_S)
    if start == "link" and set(ours) == {SESSION_CHANNEL}:
        light = _new_links(stimulus, sent, obs, conn)
        if light is not None:
            return _unlink(peer, conn, light, until)
    frames = [AMQPFrame(ch, spec.End()) for ch in sorted(ours) if ch not in ends_sent]
    awaited = {r for ch, r in ours.items() if ch not in ended_by_broker}
    if frames and not write(peer, [(f.encode(), "", b"", False) for f in frames]):
        return None
    while awaited:
        left = until - time.monotonic()
        item = peer.recv(left) if left > 0 else None
        if item is None or isinstance(item, Closed):
            return None
        name = performative_name(item)
        if name == "end" and item.channel in awaited:  # type: ignore[union-attr]
            awaited.discard(item.channel)  # type: ignore[union-attr]
        elif name in ("close", "begin", "end"):
            return None
        # anything else is a frame of a session being ended: the spec lets it be dropped
    fresh = expect10.Conn(phase=conn.phase, mechanisms=conn.mechanisms, max_frame_size=conn.max_frame_size,
                          channel_max=conn.channel_max, multi_protocol=conn.multi_protocol)
    if start == "open":
        return fresh
    try:
        return establish(peer, start, address, fresh, max(0.0, until - time.monotonic()))
    except (SetupFailed, PeerError, OSError):
        return None


def _new_links(stimulus: bytes, sent: Probes, obs: Observation, conn: expect10.Conn) -> dict[int, int | None] | None:
    """Where an example only attached new links on the home session -- every frame it and the
    probes sent a well-formed attach there, on a handle and name the start state does not use,
    and every one answered by the broker's attach, with no end, close or detach of anything
    else -- the links it made: our handle -> the broker's handle, None where the broker already
    detached it (a refusal). Else None: the session is ended and made again."""
    home = conn.sessions.get(SESSION_CHANNEL)
    if home is None:
        return None
    home_names = {link.name for link in home.links.values()}
    names: dict[str, int] = {}                 # name -> our handle
    data = stimulus + sent.octets()
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos:pos + 4], "big") if len(data) - pos >= FRAME_HEADER_SIZE else 0
        if size < FRAME_HEADER_SIZE or pos + size > len(data) or data[pos + 4] != 2 or data[pos + 5] != 0:
            return None
        channel = int.from_bytes(data[pos + 6:pos + 8], "big")
        frame = decode_body(0, channel, data[pos + 8:pos + size])
        pos += size
        perf = getattr(frame, "performative", None)
        if channel != SESSION_CHANNEL or not isinstance(perf, spec.Attach) or perf.problems or frame.payload \
                or not isinstance(perf.name, str) or not isinstance(perf.handle, int):  # type: ignore[union-attr]
            return None
        handle = int(perf.handle)
        if handle in home.links or handle in names.values() or perf.name in home_names or perf.name in names \
                or home.handle_max is not None and handle > home.handle_max:
            return None
        names[perf.name] = handle
    theirs: dict[int, int] = {}                # the broker's handle -> our handle
    made: dict[int, int | None] = {}
    for item in obs.received:
        name = performative_name(item)
        perf = getattr(item, "performative", None)
        if name == "attach" and item.channel == home.remote and str(perf.name) in names:  # type: ignore[union-attr]
            ours = names[str(perf.name)]  # type: ignore[union-attr]
            if ours in made or not isinstance(perf.handle, int):  # type: ignore[union-attr]
                return None
            theirs[int(perf.handle)] = ours  # type: ignore[union-attr]
            made[ours] = int(perf.handle)  # type: ignore[union-attr]
        elif name == "detach":
            handle = getattr(perf, "handle", None)
            ours_ = theirs.get(int(handle)) if isinstance(handle, int) else None
            if ours_ is None or item.channel != home.remote or made.get(ours_) is None:
                return None
            made[ours_] = None
        elif name in ("end", "close", "begin"):
            return None
    if set(made) != set(names.values()):
        return None
    return made


def _unlink(peer: Peer, conn: expect10.Conn, made: dict[int, int | None], until: float) -> expect10.Conn | None:
    """Detaches (closed) the links an example made and awaits the broker's detaches: the home
    session and its two links stay as the start state left them (a session and two links made
    again per example cost RabbitMQ more than the example itself)."""
    frames = [AMQPFrame(SESSION_CHANNEL, spec.Detach(handle=h, closed=True)) for h in sorted(made)]
    home = conn.sessions[SESSION_CHANNEL]
    if frames and not write(peer, [(f.encode(), "", b"", False) for f in frames]):
        return None
    awaited = {theirs for theirs in made.values() if theirs is not None}
    while awaited:
        left = until - time.monotonic()
        item = peer.recv(left) if left > 0 else None
        if item is None or isinstance(item, Closed):
            return None
        name = performative_name(item)
        handle = getattr(getattr(item, "performative", None), "handle", None)
        if name == "detach" and item.channel == home.remote and isinstance(handle, int):  # type: ignore[union-attr]
            if int(handle) not in awaited:
                return None   # a link of the start state detached: the home session is not as it was
            awaited.discard(int(handle))
        elif name in ("close", "begin", "end", "attach"):
            return None
        # anything else (a flow of a link being detached) the spec lets be dropped
    session = expect10.Session(remote=home.remote, handle_max=home.handle_max, links=dict(home.links))
    return expect10.Conn(phase=conn.phase, mechanisms=conn.mechanisms, max_frame_size=conn.max_frame_size,
                         channel_max=conn.channel_max, sessions={SESSION_CHANNEL: session},
                         multi_protocol=conn.multi_protocol)


def _ends_in(data: bytes) -> set[int]:
    """The channels of the end frames in ``data`` (the stimulus and probes, read by their SIZE
    fields as the broker reads them). A frame that does not decode is not an end here: where the
    broker read one into it anyway, its answer (an end, a begin) shows, or the reset's own frames
    are refused -- and a reused connection's violations are confirmed on a fresh one."""
    out: set[int] = set()
    pos = 0
    while len(data) - pos >= FRAME_HEADER_SIZE:
        size = int.from_bytes(data[pos:pos + 4], "big")
        doff, ftype = data[pos + 4], data[pos + 5]
        if size < FRAME_HEADER_SIZE or pos + size > len(data):
            break
        channel = int.from_bytes(data[pos + 6:pos + 8], "big")
        body = data[pos + doff * 4:pos + size] if doff >= 2 and doff * 4 <= size and ftype == 0 else b""
        pos += size
        if body and performative_name(decode_body(ftype, channel, body)) == "end":
            out.add(channel)
    return out


__all__ = ["START_STATES", "SetupFailed", "reach", "establish", "probes", "watch", "run", "Run", "reset", "credentials",
           "whole_frames", "Connections", "REUSABLE", "OUR_MAX_FRAME", "SESSION_CHANNEL", "SENDER_HANDLE",
           "RECEIVER_HANDLE"]
