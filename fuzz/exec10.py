"""Running one AMQP 1.0 example: reach the state, send, watch, judge the reaction.

Each example gets a fresh connection, brought exactly as far as its target starts
(``START_STATES``), so a finding replays from its target name and input octets alone. After
the stimulus come probes the spec gives a definite answer to: a begin on an unused channel
(answered by a begin naming it) and, where the stimulus went to a session, an attach on that
same session (answered by an attach) -- sessions may run apart from each other in a broker
(RabbitMQ's plugin gives each its own process), so only an answer on the stimulus's own
session shows that the stimulus was processed. The answers end the observation as soon as the
broker has shown what it did; an end on a session cancels the probe that went to it, since a
session that ended with an error discards what follows (2.5.4/2).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from amqpspec.peer.amqp10 import Observation, Peer, error_condition, performative_name
from amqpspec.peer.base import Closed, PeerError
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, ProtocolHeader, spec
from amqpspec.wire.amqp10.frames import FRAME_HEADER_SIZE

from . import expect10
from .exec091 import SetupFailed, drain_close, write
from .expectation import Expectation
from .stimulus import Stimulus, describe as describe_item, resolve

#: where each 1.0 target starts
START_STATES = ("fresh", "sasl", "header", "open", "session", "link")
OUR_MAX_FRAME = 65536      # proposed in our open; the broker must send nothing larger (2.7.1/4)
SESSION_CHANNEL = 0
SENDER_HANDLE = 0
RECEIVER_HANDLE = 1
MARKER_HANDLE = 4242       # the probe attach's handle: one no target draws on purpose
SETUP_TIMEOUT = 3.0
CLOSE_DRAIN_S = 0.2
POLITE_CLOSE_S = 0.3
PENDING_WINDOW = 0.5       # how long a broker that waits for the rest of a frame is watched


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
        ch = SESSION_CHANNEL
        peer.send(AMQPFrame(ch, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048)))
        got = peer.await_frame("begin", match=lambda f: getattr(f.performative, "remote_channel", None) == ch,
                               timeout=SETUP_TIMEOUT)
        session = expect10.Session(remote=got.channel, handle_max=int(got.performative.value_of("handle-max")))
        conn.sessions[ch] = session
        if start == "link":
            for handle, role, name in ((SENDER_HANDLE, spec.Role.SENDER, f"{address}-snd"),
                                       (RECEIVER_HANDLE, spec.Role.RECEIVER, f"{address}-rcv")):
                source = spec.Source() if role is spec.Role.SENDER else spec.Source(address=address)
                target = spec.Target(address=address) if role is spec.Role.SENDER else spec.Target()
                _, answer = peer.attach(ch, name=name, role=role, handle=handle, source=source, target=target,
                                        timeout=SETUP_TIMEOUT)
                refused = peer.recv(0.02)  # a refusal follows the attach at once (2.6.3/2)
                if refused is not None and performative_name(refused) == "detach":
                    raise SetupFailed(f"the broker refused the {'sender' if not role else 'receiver'} link: "
                                      f"{error_condition(refused.performative)}")  # type: ignore[union-attr]
                if refused is not None and not isinstance(refused, Closed):
                    peer.unread(refused)
                session.links[handle] = expect10.Link(name, bool(role))
            _await_credit(peer, SENDER_HANDLE)
        return conn
    except (PeerError, OSError) as exc:
        raise SetupFailed(f"could not reach {start}: {exc}") from None


def _await_credit(peer: Peer, handle: int, timeout: float = 0.5) -> None:
    """Reads the broker's first flow for our sending link (its credit grant), so that it does
    not arrive during the observation as if it answered the stimulus; other frames are kept."""
    stop = time.monotonic() + timeout
    kept: list[Any] = []
    while (left := stop - time.monotonic()) > 0:
        item = peer.recv(left)
        if item is None or isinstance(item, Closed):
            break
        if performative_name(item) == "flow" and getattr(item.performative, "handle", None) == handle:  # type: ignore[union-attr]
            break
        kept.append(item)
    for item in reversed(kept):
        peer.unread(item)


# ---------------------------------------------------------------------------- probes

@dataclass
class Probes:
    """Frames sent after the stimulus, and the answers each must get (keyed by our channel)."""

    frames: list[AMQPFrame] = field(default_factory=list)
    awaits: dict[tuple[str, Any], int] = field(default_factory=dict)   # (performative, key) -> our channel

    def __bool__(self) -> bool:
        return bool(self.frames)


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
    """A begin on a channel nothing uses, and an attach on each session the stimulus went to."""
    p = Probes()
    if conn.phase != "open":
        return p
    named = frame_channels(stimulus.octets() if octets is None else octets)
    if named is None:  # not whole frames (probes are then not sent): what the items say
        named = {getattr(item, "channel", None) for item in stimulus.items}
    used = named | set(sessions) | set(conn.sessions)
    top = conn.channel_max
    free = next((ch for ch in range(1, min(top, 64) + 1) if ch not in used), None)
    if free is not None:
        p.frames.append(AMQPFrame(free, spec.Begin(next_outgoing_id=0, incoming_window=2048, outgoing_window=2048)))
        p.awaits[("begin", free)] = free
    # the sessions the start state had (answer or end shows the stimulus was processed), and
    # those the stimulus began, when it was read to the end
    for ch, s in {**sessions, **conn.sessions}.items():
        if ch not in named:
            continue
        handle = MARKER_HANDLE if s.handle_max is None or MARKER_HANDLE <= s.handle_max else \
            next(h for h in range(0, len(s.links) + 1) if h not in s.links)
        name = f"{marker}-{ch}"
        p.frames.append(AMQPFrame(ch, spec.Attach(name=name, handle=handle, role=spec.Role.SENDER, source=spec.Source(),
                                                  target=spec.Target(address=address), initial_delivery_count=0)))
        p.awaits[("attach", name)] = ch
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

def send(peer: Peer, stimulus: Stimulus, real: bytes | None, after: list[Any] | tuple[Any, ...] = ()) -> bool:
    """Sends the stimulus items, then the probe frames ``after`` them, in one write, as the 0-9-1
    runner does: what the broker reads then depends on the octets alone, not on where a
    thread switch happened to split them (RabbitMQ's 1.0 plugin resets a connection on an
    attach to an unbegun channel when it arrives alone, and ignores it when more follows in
    the same read -- a finding must replay the same). The octets on the wire carry ``real``
    credentials; the transcript, entry per item, does not."""
    parts = []
    for item in stimulus.items:
        data_rec = _encode(item)
        real_item = resolve(item, real)
        data = data_rec if real_item is item else _encode(real_item)
        parts.append((data, describe_item("1.0", item), data_rec, data != data_rec))
    for f in after:
        data = f.encode()
        parts.append((data, describe_item("1.0", f), data, False))
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
        transcript: Transcript | None = None) -> Run:
    """One example on a fresh connection; raises SetupFailed when the start state is not reached."""
    transcript = transcript or Transcript()
    try:
        peer = Peer.connect(target, transcript, time.monotonic() + window + 10.0)
    except (PeerError, OSError) as exc:
        raise SetupFailed(str(exc)) from None
    try:
        conn = reach(peer, start, address)
        octets = stimulus.octets()
        exp, sessions = expect10.expect_and_state(conn, octets)
        complete = conn.phase == "fresh" or whole_frames(octets)
        sent = probes(conn, stimulus, sessions, marker, address, octets) if complete else Probes()
        send(peer, stimulus, credentials(target) if target.credentials_given else None, sent.frames)
        obs = watch(peer, exp, conn, sent, min(window, PENDING_WINDOW) if exp.may_wait and not complete else window)
        return Run(exp, obs, transcript, conn, octets)
    finally:
        if peer.link.closed is None and peer.opened.opened and peer.framing_error is None and not peer.close_sent:
            peer.close(timeout=POLITE_CLOSE_S)
        else:
            peer.abort()


__all__ = ["START_STATES", "SetupFailed", "reach", "probes", "watch", "run", "Run", "credentials", "whole_frames",
           "OUR_MAX_FRAME", "SESSION_CHANNEL", "SENDER_HANDLE", "RECEIVER_HANDLE"]
