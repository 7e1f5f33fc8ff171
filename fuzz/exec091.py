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
from dataclasses import dataclass
from typing import Any

from amqpspec.peer.amqp091 import DEFAULT_FRAME_MAX, Observation, Peer, sasl_plain
from amqpspec.peer.base import Closed, PeerError
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import Dialect, HeartbeatFrame, MethodFrame, describe, spec
from amqpspec.wire.amqp091.frames import FRAME_OVERHEAD, Frame
from amqpspec.wire.raw import Raw

from . import expect091
from .expectation import Expectation
from .stimulus import Stimulus, describe as describe_item, resolve

FUZZ_FRAME_MAX = spec.FRAME_MIN_SIZE   # negotiated after tune: oversized frames stay cheap to send
STIMULUS_CHANNEL = 1
#: where each 0-9-1 target starts: handshake step reached before the stimulus
START_STATES = ("fresh", "after-start", "after-tune", "after-tune-ok", "after-open", "channel-open")
CLOSE_DRAIN_S = 0.05
POLITE_CLOSE_S = 0.3
PENDING_WINDOW = 0.5      # how long a broker that waits for the rest of a frame is watched
LATE_CLOSE_S = 0.25       # after the probes are answered, how long a required close is still awaited


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
    except PeerError as exc:
        raise SetupFailed(f"could not reach {start}: {exc}") from None
    mechanisms = tuple(peer.broker_info().mechanisms)
    proposed = (n.tune.channel_max, n.tune.frame_max, n.tune.heartbeat) if n.tune is not None else (0, 0, 0)
    phase = {"after-start": "after-start", "after-tune": "after-tune", "after-tune-ok": "after-tune-ok"}.get(start, "open")
    channels = frozenset({STIMULUS_CHANNEL}) if start == "channel-open" else frozenset()
    return expect091.Conn(phase=phase, frame_max=n.frame_max if phase in ("after-tune-ok", "open") else 0,
                          channel_max=n.channel_max, channels=channels, mechanisms=mechanisms, proposed=proposed,
                          vhost=peer.target.vhost)


def probe_channel(conn: expect091.Conn, stimulus: Stimulus) -> int:
    """A channel the stimulus does not touch, for the fresh-channel probe."""
    used = {getattr(item, "channel", None) for item in stimulus.items}
    top = conn.channel_max or 0xFFFF
    for ch in range(2, top + 1):
        if ch not in used and ch not in conn.channels:
            return ch
    return top


def probes(conn: expect091.Conn, stimulus: Stimulus) -> tuple[list[Frame], tuple[tuple[str, int], ...]]:
    """(frames sent after the stimulus, replies that must all come back)."""
    if conn.phase == "after-tune":  # tune-ok targets: the open that follows is the probe
        return [MethodFrame(0, spec.ConnectionOpen(conn.vhost))], ()
    if conn.phase != "open":
        return [], ()
    frames: list[Frame] = []
    awaits: list[tuple[str, int]] = []
    if STIMULUS_CHANNEL in conn.channels:
        frames.append(MethodFrame(STIMULUS_CHANNEL, spec.BasicQos(0, 0, False)))
        awaits.append(("basic.qos-ok", STIMULUS_CHANNEL))
    p = probe_channel(conn, stimulus)
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
        if isinstance(item, MethodFrame) and (item.method.NAME, item.channel) == ("connection.close", 0):
            peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
            peer.close_ok_sent = obs.replied_close_ok = True
            _drain_close(peer, obs, min(until, time.monotonic() + CLOSE_DRAIN_S))
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


def _drain_close(peer: Peer, obs: Observation, until: float) -> None:
    """After close-ok, reads until the broker closes the socket (recording FIN or RST)."""
    while (left := until - time.monotonic()) > 0:
        item = peer.recv(left)
        if item is None:
            return
        if isinstance(item, Closed):
            obs.end = item.how if item.how != "local" else "fin"
            return
        obs.received.append(item)


def send(peer: Peer, stimulus: Stimulus, real: bytes | None) -> None:
    """Sends each item, the octets on the wire carrying ``real`` credentials, the transcript not."""
    for item in stimulus.items:
        data_rec = _encode(item, peer.dialect)
        data = _encode(resolve(item, real), peer.dialect)
        if not peer.link.send_bytes(data, describe_item("0-9-1", item), record=data_rec, redacted=data != data_rec):
            return


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
    """One example on a fresh connection; raises SetupFailed when the start state is not reached."""
    transcript = transcript or Transcript()
    try:
        peer = Peer.connect(target, transcript, time.monotonic() + window + 10.0, dialect)
    except PeerError as exc:
        raise SetupFailed(str(exc)) from None
    unfinished = False
    try:
        conn = reach(peer, start)
        octets = stimulus.octets(dialect)
        after, probe_awaits = probes(conn, stimulus)
        unfinished = not (len(octets) >= 8 if conn.phase == "fresh" else expect091.whole_frames(octets))
        if unfinished:  # probes would only be read as the rest of that frame
            after, probe_awaits = [], ()
        exp = expect091.expect(conn, octets + b"".join(f.encode(dialect) for f in after))
        send(peer, stimulus, credentials(target))
        if after:
            peer.send(*after)
        # a broker waiting for the rest of a frame is allowed to: no need to wait the window out
        obs = watch(peer, exp, probe_awaits, min(window, PENDING_WINDOW) if unfinished and exp.may_wait else window)
        return Run(exp, obs, transcript, conn, octets)
    finally:
        if not unfinished and peer.link.closed is None and not peer.close_ok_sent and peer.negotiated.opened:
            peer.close(timeout=POLITE_CLOSE_S)
        else:
            peer.abort()


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


def delete_entities(target: Target, names: list[tuple[str, str]], budget: float = 5.0) -> str:
    """Deletes queues and exchanges a campaign's examples may have left; returns a problem or ''."""
    if not names:
        return ""
    try:
        peer = Peer.connect(target, Transcript(), time.monotonic() + budget)
        peer.handshake()
        ch = peer.open_channel()
        for kind, name in dict.fromkeys(names):
            method = spec.QueueDelete(queue=name) if kind == "queue" else spec.ExchangeDelete(exchange=name)
            peer.send(MethodFrame(ch, method))
            reply = peer.recv(0.5)
            if isinstance(reply, MethodFrame) and reply.method.NAME == "channel.close":
                peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
                ch = peer.open_channel()
        peer.close()
        return ""
    except (PeerError, OSError) as exc:
        return f"cleanup incomplete: {exc}"


__all__ = ["START_STATES", "SetupFailed", "reach", "probes", "watch", "run", "Run", "credentials",
           "declared_names", "delete_entities", "FUZZ_FRAME_MAX", "DEFAULT_FRAME_MAX", "Raw"]
