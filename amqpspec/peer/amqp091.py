"""The AMQP 0-9-1 raw peer: frames in and out, the handshake step by step, observations.

A case drives the broker through this peer. It can stop the handshake at any step to
inject something wrong, send any frame or raw octets, and then *observe*: collect what
the broker sends until it closes the socket or a window passes, answering a
connection.close with close-ok the way a correct client would.
"""
from __future__ import annotations

import platform
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from amqpspec import __version__
from amqpspec.peer.base import Closed, DeadlineExceeded, Link, PeerError, StreamPeer
from amqpspec.target import BrokerInfo, Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import (
    PROTOCOL_HEADER, SPEC, Dialect, FrameReader, HeartbeatFrame, MethodFrame,
    ProtocolHeader, describe, encode, spec, to_plain,
)
from amqpspec.wire.amqp091.base import Method
from amqpspec.wire.amqp091.frames import FRAME_OVERHEAD, Decoded, Sendable
from amqpspec.wire.raw import Raw

DEFAULT_FRAME_MAX = 131072      # what we ask for when the broker proposes no limit
UNLIMITED_READ_CAP = 16 << 20  # reading cap when frame-max is 0 ("no limit")
PRE_TUNE_READ_CAP = 1 << 20    # before tuning (spec: frames up to frame-min-size must be accepted)
CLOSE_DRAIN_S = 1.0            # how long to wait for the socket close that follows close-ok

Item = Decoded | Closed


def client_properties() -> dict[str, Any]:
    """What we tell the broker about ourselves (start-ok.client-properties required-fields)."""
    return {
        "product": "amqpspec",
        "version": __version__,
        "platform": f"Python {platform.python_version()}",
        "copyright": "amqpspec contributors",
        "information": "AMQP conformance test suite",
    }


def sasl_plain(username: str, password: str) -> bytes:
    return b"\x00" + username.encode() + b"\x00" + password.encode()


@dataclass
class Negotiated:
    """What the handshake settled."""

    start: spec.ConnectionStart | None = None
    tune: spec.ConnectionTune | None = None
    channel_max: int = 0
    frame_max: int = 0
    heartbeat: int = 0
    opened: bool = False


@dataclass
class Observation:
    """What the broker did after a stimulus, up to a socket close or the end of a window."""

    received: list[Decoded] = field(default_factory=list)
    end: str = "open"               # "fin", "rst", "tls-error", "open", "stopped", "framing-error"
    framing_error: str | None = None
    elapsed: float = 0.0
    probe_ok: bool | None = None    # when a liveness probe was sent: did it come back?
    replied_close_ok: bool = False

    @property
    def closed(self) -> bool:
        return self.end in ("fin", "rst", "tls-error")

    def methods(self, name: str | None = None, channel: int | None = None) -> list[MethodFrame]:
        return [f for f in self.received if isinstance(f, MethodFrame)
                and (name is None or f.method.NAME == name) and (channel is None or f.channel == channel)]

    @property
    def connection_close(self) -> spec.ConnectionClose | None:
        found = self.methods("connection.close")
        return found[0].method if found else None  # type: ignore[return-value]

    def channel_close(self, channel: int | None = None) -> spec.ChannelClose | None:
        found = self.methods("channel.close", channel)
        return found[0].method if found else None  # type: ignore[return-value]

    def frames(self) -> list[Decoded]:
        """Everything received except heartbeats (which may arrive at any time)."""
        return [f for f in self.received if not isinstance(f, HeartbeatFrame)]

    def describe(self) -> str:
        parts = [describe(f) for f in self.frames()]
        beats = len(self.received) - len(self.frames())
        if beats:
            parts.append(f"{beats} heartbeat(s)")
        if self.framing_error:
            parts.append(f"undecodable stream: {self.framing_error}")
        if self.probe_ok is True:
            parts.append("liveness probe answered")
        elif self.probe_ok is False and not self.closed:
            parts.append("liveness probe not answered")
        if self.end == "stopped" and self.replied_close_ok:
            return "; ".join(parts + [f"close-ok sent, socket still open after {self.elapsed:.3f}s"])
        ending = {"fin": "socket closed by broker (FIN)", "rst": "connection reset by broker (RST)",
                  "tls-error": "TLS failure", "open": "connection still open",
                  "stopped": "observation ended by the case, connection still open",
                  "framing-error": "stream undecodable"}.get(self.end, self.end)
        parts.append(f"{ending} after {self.elapsed:.3f}s")
        return "; ".join(parts) if parts else "nothing"


class UnexpectedReply(PeerError):
    """The broker answered something else than the step required (or closed)."""

    def __init__(self, wanted: str, got: Item | None, observation: Observation | None = None) -> None:
        self.wanted = wanted
        self.got = got
        self.observation = observation
        what = "nothing before the deadline" if got is None else (got.summary() if hasattr(got, "summary") else repr(got))
        super().__init__(f"expected {wanted}, got {what}")


class Peer(StreamPeer):
    """One raw AMQP 0-9-1 connection."""

    def __init__(self, link: Link, target: Target, dialect: Dialect = SPEC) -> None:
        self.link = link
        self.target = target
        self.dialect = dialect
        self.reader = FrameReader(PRE_TUNE_READ_CAP, dialect)
        self.negotiated = Negotiated()
        self.stage = "new"            # how far the connection negotiation got (see STAGES)
        self.close_ok_sent = False    # we answered a broker's connection.close: nothing more may be sent
        self.framing_error: str | None = None
        self.discarded = 0  # octets received after the stream became undecodable
        self._queue: deque[Decoded] = deque()
        self._next_channel = 1

    @classmethod
    def connect(cls, target: Target, transcript: Transcript, deadline: float, dialect: Dialect = SPEC) -> "Peer":
        return cls(Link.open(target, transcript, deadline), target, dialect)

    def set_dialect(self, dialect: Dialect) -> None:
        """Field-table reading used from now on, for sending and receiving (the 's' conflict)."""
        self.dialect = dialect
        self.reader.dialect = dialect

    # ------------------------------------------------------------------ sending
    def send(self, *items: Sendable) -> bool:
        """Sends frames, protocol headers or raw octets, each recorded in the transcript."""
        ok = True
        for item in items:
            data = encode(item, self.dialect)
            record, redacted = data, False
            if isinstance(item, MethodFrame):
                masked = _masked(item)
                if masked is not None:
                    record, redacted = masked.encode(self.dialect), True
            ok = self.link.send_bytes(data, describe(item), record=record, redacted=redacted) and ok
        return ok

    def send_method(self, channel: int, method: Method) -> bool:
        return self.send(MethodFrame(channel, method))

    # ------------------------------------------------------------------ receiving
    def _describe(self, item: Any) -> str:
        return describe(item)

    def _reader_after_end(self) -> FrameReader:
        return FrameReader(self.reader.max_payload, self.dialect, False)

    def expect(self, *names: str, channel: int | None = None, timeout: float = 5.0) -> MethodFrame:
        """Waits for one of the named methods; heartbeats are skipped, anything else raises."""
        return expect_method(self, names, channel, timeout)

    def expect_header(self, timeout: float = 5.0) -> Item | None:
        """The first thing the broker sends after our protocol header: a header, a frame or a close."""
        return self.recv(timeout)

    # ------------------------------------------------------------------ handshake
    STAGES = ("new", "start", "tune", "tune-ok", "open-ok")

    def handshake(
        self,
        *,
        upto: str = "open-ok",
        header: bytes = PROTOCOL_HEADER,
        properties: dict[str, Any] | None = None,
        mechanism: str | None = None,
        response: bytes | Raw | None = None,
        locale: str = "en_US",
        channel_max: int | None = None,
        frame_max: int | None = None,
        heartbeat: int = 0,
        vhost: str | None = None,
        timeout: float = 5.0,
    ) -> Negotiated:
        """Runs the connection negotiation (spec 2.2.4) from where it stands up to ``upto``.

        ``upto``: "start" (connection.start received), "tune" (connection.tune received,
        tune-ok not sent), "tune-ok" (tune-ok sent, open not sent) or "open-ok" (done).
        A case can stop at a step, inject something, and call again to resume. Unset
        tuning values accept the broker's proposal; heartbeat defaults to 0 (off).
        """
        if upto not in self.STAGES[1:]:
            raise ValueError(f"upto must be one of {self.STAGES[1:]}")
        n = self.negotiated
        target_index = self.STAGES.index(upto)
        if self.stage == "new":
            self.send(ProtocolHeader(header))
            first = self.recv(timeout)
            if not (isinstance(first, MethodFrame) and first.method.NAME == "connection.start" and first.channel == 0):
                raise UnexpectedReply("connection.start on channel 0", first)
            n.start = first.method  # type: ignore[assignment]
            self.stage = "start"
        if self.stage == "start" and target_index > 1:
            self.send(self.start_ok(properties=properties, mechanism=mechanism, response=response, locale=locale))
            n.tune = self.expect("connection.tune", channel=0, timeout=timeout).method  # type: ignore[assignment]
            self.stage = "tune"
        if self.stage == "tune" and target_index > 2:
            self.send(self.tune_ok(channel_max=channel_max, frame_max=frame_max, heartbeat=heartbeat))
        if self.stage == "tune-ok" and target_index > 3:
            self.send(MethodFrame(0, spec.ConnectionOpen(self.target.vhost if vhost is None else vhost)))
            self.expect("connection.open-ok", channel=0, timeout=timeout)
            n.opened = True
            self.stage = "open-ok"
        return n

    def start_ok(self, *, properties: dict[str, Any] | None = None, mechanism: str | None = None,
                 response: bytes | Raw | None = None, locale: str = "en_US", channel: int = 0) -> MethodFrame:
        """A correct connection.start-ok for this target (PLAIN with its credentials), any part overridable."""
        offered = _words(self.negotiated.start.mechanisms) if self.negotiated.start is not None else []
        mech = mechanism or ("PLAIN" if "PLAIN" in offered or not offered else offered[0])
        if response is None:
            response = sasl_plain(self.target.username, self.target.password.reveal())
        return MethodFrame(channel, spec.ConnectionStartOk(properties if properties is not None else client_properties(),
                                                           mech, response, locale))

    def tune_ok(self, *, channel_max: int | None = None, frame_max: int | None = None, heartbeat: int = 0,
                channel: int = 0) -> MethodFrame:
        """connection.tune-ok accepting the broker's proposal unless overridden; records what was negotiated.

        Building it marks the negotiation as past tune-ok, since the case is about to send it.
        """
        n = self.negotiated
        proposed = n.tune if n.tune is not None else spec.ConnectionTune()
        n.channel_max = proposed.channel_max if channel_max is None else channel_max
        n.frame_max = (proposed.frame_max or DEFAULT_FRAME_MAX) if frame_max is None else frame_max
        n.heartbeat = heartbeat
        self.reader.max_payload = max(n.frame_max - FRAME_OVERHEAD, 4096) if n.frame_max else UNLIMITED_READ_CAP
        self.stage = "tune-ok"
        return MethodFrame(channel, spec.ConnectionTuneOk(n.channel_max, n.frame_max, n.heartbeat))

    def broker_info(self) -> BrokerInfo:
        """Identity and capabilities from what the handshake received."""
        info = BrokerInfo(protocol="0-9-1")
        start = self.negotiated.start
        if start is not None:
            props = to_plain(start.server_properties or {})
            info.take_properties({k: _text(v) for k, v in props.items()})  # strings capped there
            caps = props.get("capabilities")
            info.capabilities = dict(caps) if isinstance(caps, dict) else {}
            info.mechanisms = _words(start.mechanisms)
            info.locales = _words(start.locales)
        tune = self.negotiated.tune
        if tune is not None:
            info.channel_max, info.frame_max, info.heartbeat = tune.channel_max, tune.frame_max, tune.heartbeat
        return info

    # ------------------------------------------------------------------ channels
    def free_channel(self) -> int:
        ch = self._next_channel
        self._next_channel += 1
        return ch

    def open_channel(self, channel: int | None = None, timeout: float = 5.0) -> int:
        ch = self.free_channel() if channel is None else channel
        self.send(MethodFrame(ch, spec.ChannelOpen()))
        self.expect("channel.open-ok", channel=ch, timeout=timeout)
        return ch

    def call(self, channel: int, method: Method, reply: str | Iterable[str] | None = None, timeout: float = 5.0) -> MethodFrame:
        """Sends a synchronous method and waits for its reply (the first response by default)."""
        names = [reply] if isinstance(reply, str) else list(reply or method.RESPONSES[:1])
        self.send(MethodFrame(channel, method))
        return self.expect(*names, channel=channel, timeout=timeout)

    # ------------------------------------------------------------------ observing
    def observe(
        self,
        window: float = 2.0,
        *,
        probe: bool = False,
        probe_channel: int | None = None,
        reply_close_ok: bool = True,
        stop: Callable[[Decoded], bool] | None = None,
    ) -> Observation:
        """Collects what the broker sends for up to ``window`` seconds.

        Ends early when the socket closes, when ``stop`` returns true for a received
        item, or -- with ``probe`` -- when the liveness probe comes back. With
        ``probe_channel`` the probe is a side-effect-free synchronous method on that
        (open) channel: a passive declare of amq.direct, which every broker has (3.1.3.1);
        its reply proves the broker processed everything sent on that channel before it
        without an exception. Brokers may run channels concurrently, so a probe on
        another channel would not prove that. Without ``probe_channel`` the probe opens a
        fresh channel, which proves the connection as a whole still serves requests.
        A connection.close from the broker is answered with close-ok (a correct client's
        duty) unless told not to.
        """
        obs = Observation()
        started = time.monotonic()
        until = started + max(0.0, self.link.remaining(window) - 0.05)
        probe_reply: str | None = None
        if probe_channel is not None:
            probe = True
            self.send(MethodFrame(probe_channel, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True)))
            probe_reply = "exchange.declare-ok"
            obs.probe_ok = False
        elif probe:
            probe_channel = self.free_channel()
            self.send(MethodFrame(probe_channel, spec.ChannelOpen()))
            probe_reply = "channel.open-ok"
            obs.probe_ok = False

        def on_item(item: Any) -> bool:
            if probe_reply is not None and isinstance(item, MethodFrame) and item.channel == probe_channel \
                    and item.method.NAME == probe_reply:
                obs.probe_ok = True
                if probe_reply == "channel.open-ok":
                    self.send(MethodFrame(probe_channel, spec.ChannelClose(200, "probe done", 0, 0)))
                    self._drain_close_ok(probe_channel, until)
                return True
            obs.received.append(item)
            if probe_reply is not None and isinstance(item, MethodFrame) and item.method.NAME == "channel.close" \
                    and item.channel == probe_channel:
                return True  # the probed channel is closed: its probe can never be answered
            if isinstance(item, MethodFrame) and item.method.NAME == "connection.close" and item.channel == 0 and reply_close_ok:
                self.send(MethodFrame(0, spec.ConnectionCloseOk()))
                self.close_ok_sent = True
                obs.replied_close_ok = True
            if stop is not None and stop(item):
                obs.end = "stopped"
                if obs.replied_close_ok:  # the connection is ending: record how (FIN, RST, or not at all)
                    obs.end = self._await_socket_close(min(until, time.monotonic() + CLOSE_DRAIN_S), obs)
                return True
            return False

        self._watch(obs, started, until, on_item)
        if self.discarded:
            self.link.transcript.event(f"{self.discarded} octets received after the undecodable data in all", self.link.conn)
        return obs

    def _await_socket_close(self, until: float, obs: Observation) -> str:
        """After close-ok, reads until the broker closes the socket; anything received is kept."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return "stopped"
            item = self.recv(left)
            if item is None:
                return "stopped"
            if isinstance(item, Closed):
                return item.how if item.how != "local" else "fin"
            obs.received.append(item)

    def _drain_close_ok(self, channel: int, until: float) -> None:
        try:
            self.expect("channel.close-ok", channel=channel, timeout=max(0.0, until - time.monotonic()) or 0.5)
        except PeerError:
            pass

    def probe(self, timeout: float = 2.0) -> bool:
        """True when the connection still serves requests (see :meth:`observe`)."""
        return bool(self.observe(timeout, probe=True).probe_ok)

    # ------------------------------------------------------------------ closing
    def close(self, timeout: float = 1.0) -> None:
        """Orderly close when the connection is open, then the socket; never raises."""
        try:
            if self.link.closed is None and self.negotiated.opened and self.framing_error is None and not self.close_ok_sent:
                self.send(MethodFrame(0, spec.ConnectionClose(200, "amqpspec done", 0, 0)))
                deadline = time.monotonic() + max(0.0, self.link.remaining(timeout))
                while time.monotonic() < deadline:
                    item = self.recv(deadline - time.monotonic())
                    if item is None or isinstance(item, Closed):
                        break
                    if isinstance(item, MethodFrame) and item.method.NAME == "connection.close-ok":
                        break
                    if isinstance(item, MethodFrame) and item.method.NAME == "connection.close":
                        self.send(MethodFrame(0, spec.ConnectionCloseOk()))
                        self.close_ok_sent = True
                        break
        except (PeerError, DeadlineExceeded, OSError):
            pass
        finally:
            self.link.shutdown()

    def abort(self) -> None:
        self.link.shutdown()


def expect_method(peer: StreamPeer, names: tuple[str, ...], channel: int | None, timeout: float) -> MethodFrame:
    """The next non-heartbeat frame ``peer`` receives, if it is one of the named methods (on
    ``channel`` when given); anything else raises. Both 0-9-1 roles (client and server) wait this way."""
    wanted = " or ".join(names) + (f" on channel {channel}" if channel is not None else "")
    while True:
        item = peer.recv(timeout)
        if isinstance(item, HeartbeatFrame):
            continue
        if isinstance(item, MethodFrame) and item.method.NAME in names and (channel is None or item.channel == channel):
            return item
        raise UnexpectedReply(wanted, item)


def _words(value: Any) -> list[str]:
    if isinstance(value, (bytes, bytearray)):
        value = bytes(value).decode("utf-8", "replace")
    return str(value or "").split()


def _text(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return value


def _masked(frame: MethodFrame) -> MethodFrame | None:
    """A copy of the frame with SASL data replaced by asterisks of the same length."""
    method = frame.method
    secret = [f for f in method.FIELDS if f.secret]
    if not secret:
        return None
    changes = {}
    for f in secret:
        v = getattr(method, f.attr)
        if isinstance(v, (bytes, bytearray, str)):
            changes[f.attr] = b"*" * len(v)
    if not changes:
        return None
    return MethodFrame(frame.channel, method.replace(**changes), frame_type=frame.frame_type,
                       size=frame.size, end=frame.end, trailing=frame.trailing)
