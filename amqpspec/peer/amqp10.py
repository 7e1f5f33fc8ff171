"""The AMQP 1.0 raw peer: headers, SASL, performatives and observations.

Like the 0-9-1 peer, it can stop anywhere in the opening sequence (header, SASL, open,
begin, attach) to inject something wrong, send any frame or raw octets, and observe what
the broker does until it closes or a window passes -- answering a close with a close the
way a correct peer does (2.4.3), unless told not to.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec import __version__
from amqpspec.peer.base import Closed, DeadlineExceeded, Link, PeerError, StreamPeer
from amqpspec.target import BrokerInfo, Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import (
    AMQPFrame, EmptyFrame, FrameReader, ProtocolHeader, SASLFrame, Symbol, describe, encode, frame, spec,
)

__all__ = ["Peer", "Observation", "Opened", "UnexpectedReply", "AMQPFrame", "SASLFrame", "ProtocolHeader",
           "performative_name", "error_condition"]
from amqpspec.wire.amqp10.frames import Decoded

DEFAULT_MAX_FRAME = 65536       # what we propose in open
READ_CAP = 16 << 20             # reading cap while the broker's max-frame-size is unknown or huge
WINDOW = 2048                   # default session windows (transfer frames)

Item = Decoded | Closed


def performative_name(item: Any) -> str | None:
    """'open', 'attach', 'sasl-init' ... for AMQP and SASL frames; None otherwise."""
    if isinstance(item, AMQPFrame):
        return getattr(item.performative, "NAME", None)
    if isinstance(item, SASLFrame):
        return getattr(item.body, "NAME", None)
    return None


def error_condition(performative: Any) -> str | None:
    """The error condition symbol carried by a close/end/detach (or rejected outcome), if any."""
    err = getattr(performative, "error", None)
    cond = getattr(err, "condition", None) if err is not None else None
    return None if cond is None else str(cond)


@dataclass
class Observation:
    """What the broker did after a stimulus, up to a socket close or the end of a window."""

    received: list[Decoded] = field(default_factory=list)
    end: str = "open"               # "fin", "rst", "tls-error", "open", "stopped", "framing-error"
    framing_error: str | None = None
    elapsed: float = 0.0
    probe_ok: bool | None = None
    replied_close: bool = False

    @property
    def closed(self) -> bool:
        return self.end in ("fin", "rst", "tls-error")

    def performatives(self, name: str | None = None, channel: int | None = None) -> list[AMQPFrame | SASLFrame]:
        return [f for f in self.received if isinstance(f, (AMQPFrame, SASLFrame))
                and (name is None or performative_name(f) == name) and (channel is None or f.channel == channel)]

    def first(self, name: str, channel: int | None = None) -> Any:
        found = self.performatives(name, channel)
        if not found:
            return None
        f = found[0]
        return f.performative if isinstance(f, AMQPFrame) else f.body

    @property
    def close(self) -> spec.Close | None:
        return self.first("close")

    def frames(self) -> list[Decoded]:
        """Everything received except empty frames (heartbeats may come at any time)."""
        return [f for f in self.received if not isinstance(f, EmptyFrame)]

    def describe(self) -> str:
        parts = [describe(f) for f in self.frames()]
        beats = len(self.received) - len(self.frames())
        if beats:
            parts.append(f"{beats} empty frame(s)")
        if self.framing_error:
            parts.append(f"undecodable stream: {self.framing_error}")
        if self.probe_ok is True:
            parts.append("liveness probe answered")
        elif self.probe_ok is False and not self.closed:
            parts.append("liveness probe not answered")
        ending = {"fin": "socket closed by broker (FIN)", "rst": "connection reset by broker (RST)",
                  "tls-error": "TLS failure", "open": "connection still open",
                  "stopped": "observation ended by the case, connection still open",
                  "framing-error": "stream undecodable"}.get(self.end, self.end)
        parts.append(f"{ending} after {self.elapsed:.3f}s")
        return "; ".join(parts)


class UnexpectedReply(PeerError):
    def __init__(self, wanted: str, got: Item | None) -> None:
        self.wanted = wanted
        self.got = got
        what = "nothing before the deadline" if got is None else describe(got) if not isinstance(got, Closed) \
            else got.summary()
        super().__init__(f"expected {wanted}, got {what}")


@dataclass
class Opened:
    """What the opening sequence settled."""

    sasl_mechanisms: list[str] = field(default_factory=list)
    sasl_outcome: Any = None
    remote_open: spec.Open | None = None
    max_frame_size: int = DEFAULT_MAX_FRAME   # the smaller of ours and the broker's
    channel_max: int = 65535
    opened: bool = False


class Peer(StreamPeer):
    """One raw AMQP 1.0 connection."""

    STAGES = ("new", "sasl", "header", "open")

    def __init__(self, link: Link, target: Target) -> None:
        self.link = link
        self.target = target
        self.reader = FrameReader(READ_CAP)
        self.opened = Opened()
        self.stage = "new"
        self.close_sent = False
        self.framing_error: str | None = None
        self.discarded = 0
        self._queue: deque[Decoded] = deque()
        self._next_channel = 0
        self._next_handle: dict[int, int] = {}
        self.begun: dict[int, spec.Begin] = {}    # our channel -> the broker's begin answering it (Peer.begin)
        # called with each AMQP frame as it comes off the wire (not again when unread and re-read):
        # how the session/link layer (peer/session10.py) keeps its counters whoever reads the frames
        self.watchers: list[Callable[[AMQPFrame], None]] = []

    @classmethod
    def connect(cls, target: Target, transcript: Transcript, deadline: float) -> "Peer":
        return cls(Link.open(target, transcript, deadline), target)

    # ------------------------------------------------------------------ sending
    def send(self, *items: Any) -> bool:
        """Sends frames, protocol headers or raw octets, each recorded (SASL secrets masked)."""
        ok = True
        for item in items:
            data = encode(item)
            masked = item.masked() if hasattr(item, "masked") else None
            record = encode(masked) if masked is not None else data
            ok = self.link.send_bytes(data, describe(item), record=record, redacted=masked is not None) and ok
            if isinstance(item, AMQPFrame) and isinstance(item.performative, spec.Close):
                self.close_sent = True
        return ok

    # ------------------------------------------------------------------ receiving
    def recv(self, timeout: float = 5.0) -> Any:
        fresh = not self._queue
        item = super().recv(timeout)
        if fresh and self.watchers and isinstance(item, AMQPFrame):
            for watch in list(self.watchers):
                watch(item)
        return item

    def _describe(self, item: Any) -> str:
        return describe(item)

    def _reader_after_end(self) -> FrameReader:
        return FrameReader(self.reader.max_frame_size, False)

    def expect(self, *names: str, channel: int | None = None, timeout: float = 5.0) -> Any:
        """Waits for one of the named performatives (or SASL frames); empty frames are skipped.

        Returns the frame (AMQPFrame or SASLFrame); anything else raises UnexpectedReply.
        """
        wanted = " or ".join(names) + (f" on channel {channel}" if channel is not None else "")
        while True:
            item = self.recv(timeout)
            if isinstance(item, EmptyFrame):
                continue
            if performative_name(item) in names and (channel is None or item.channel == channel):  # type: ignore[union-attr]
                return item
            raise UnexpectedReply(wanted, item)

    def await_frame(self, name: str, *, channel: int | None = None, match: Callable[[Any], bool] | None = None,
                    timeout: float = 5.0) -> Any:
        """Waits for a matching performative; other frames (flows, transfers ...) are kept for later.

        A close, or the socket closing, ends the wait with UnexpectedReply: the answer will not come.
        """
        stash: list[Decoded] = []
        wanted = name + (f" on channel {channel}" if channel is not None else "")
        try:
            while True:
                item = self.recv(timeout)
                if item is None or isinstance(item, Closed):
                    raise UnexpectedReply(wanted, item)
                got = performative_name(item)
                if got == name and (channel is None or item.channel == channel) and (match is None or match(item)):  # type: ignore[union-attr]
                    return item
                if got == "close" or (got in ("end", "detach") and getattr(item.performative, "error", None)):  # type: ignore[union-attr]
                    raise UnexpectedReply(wanted, item)
                if not isinstance(item, EmptyFrame):
                    stash.append(item)
        finally:
            for kept in reversed(stash):
                self.unread(kept)

    def expect_header(self, timeout: float = 5.0) -> ProtocolHeader:
        item = self.recv(timeout)
        if not isinstance(item, ProtocolHeader):
            raise UnexpectedReply("a protocol header", item)
        return item

    # ------------------------------------------------------------------ opening
    def sasl(self, *, mechanism: str | None = None, initial_response: bytes | None = None, hostname: str | None = None,
             header: ProtocolHeader | None = None, upto: str = "outcome", timeout: float = 5.0) -> Any:
        """SASL layer (security 5.3): header exchange, mechanisms, init, outcome.

        The mechanism defaults to PLAIN with the target's credentials when the URL named a user
        and the broker offers PLAIN, else ANONYMOUS. ``upto="mechanisms"`` stops before init.
        Returns the sasl-outcome (or the sasl-mechanisms frame body with upto="mechanisms").
        """
        self.send(header or ProtocolHeader.sasl())
        got = self.expect_header(timeout)
        if got.protocol_id != 3:
            raise UnexpectedReply("the SASL protocol header (AMQP 3 1.0.0)", got)
        mechs = self.expect("sasl-mechanisms", timeout=timeout).body
        offered = [str(m) for m in _as_list(mechs.sasl_server_mechanisms)]
        self.opened.sasl_mechanisms = offered
        if upto == "mechanisms":
            return mechs
        if mechanism is None:
            mechanism = "PLAIN" if self.target.credentials_given and "PLAIN" in offered else "ANONYMOUS"
        if initial_response is None and mechanism == "PLAIN":
            initial_response = b"\x00" + self.target.username.encode() + b"\x00" + self.target.password.reveal().encode()
        self.send(frame(spec.SaslInit(mechanism=Symbol(mechanism), initial_response=initial_response,
                                      hostname=hostname)))
        outcome = self.expect("sasl-outcome", timeout=timeout).body
        self.opened.sasl_outcome = outcome
        self.stage = "sasl"
        return outcome

    def open(self, *, container_id: str = "amqpspec", max_frame_size: int = DEFAULT_MAX_FRAME,
             channel_max: int | None = None, idle_time_out: int | None = None, hostname: str | None = None,
             properties: dict[str, Any] | None = None, timeout: float = 5.0, wait: bool = True) -> spec.Open | None:
        """Sends the AMQP header (unless already exchanged) and open; waits for the broker's open."""
        if self.stage in ("new", "sasl"):
            self.send(ProtocolHeader.amqp())
            got = self.expect_header(timeout)
            if got.protocol_id != 0:
                raise UnexpectedReply("the AMQP protocol header (AMQP 0 1.0.0)", got)
            self.stage = "header"
        props = {"product": "amqpspec", "version": __version__} if properties is None else properties
        self.send(AMQPFrame(0, spec.Open(container_id=container_id, hostname=hostname or self.target.host,
                                         max_frame_size=max_frame_size, channel_max=channel_max,
                                         idle_time_out=idle_time_out, properties=props)))
        if not wait:
            return None
        remote = self.expect("open", channel=0, timeout=timeout).performative
        self.opened.remote_open = remote
        theirs = int(remote.value_of("max-frame-size"))
        self.opened.max_frame_size = min(max_frame_size, theirs)
        self.opened.channel_max = int(remote.value_of("channel-max"))
        self.reader.max_frame_size = min(max(max_frame_size, 512), READ_CAP)
        self.opened.opened = True
        self.stage = "open"
        return remote

    def handshake(self, *, sasl: bool | None = None, timeout: float = 5.0, **open_args: Any) -> spec.Open:
        """SASL (by default when the URL named credentials) then open: a connection ready for sessions."""
        use_sasl = self.target.credentials_given if sasl is None else sasl
        if use_sasl:
            outcome = self.sasl(timeout=timeout)
            if int(getattr(outcome, "code", 1) or 0) != 0:
                raise UnexpectedReply("sasl-outcome code 0 (ok)", SASLFrame(outcome))
        remote = self.open(timeout=timeout, **open_args)
        assert remote is not None
        return remote

    def broker_info(self) -> BrokerInfo:
        info = BrokerInfo(protocol="1.0")
        remote = self.opened.remote_open
        if remote is not None:
            props = _plain(remote.properties) or {}
            info.take_properties({str(k): v for k, v in props.items()})  # strings capped there
            info.capabilities = {str(c): True for c in _as_list(remote.offered_capabilities)}
            info.frame_max = int(remote.value_of("max-frame-size"))
            info.channel_max = int(remote.value_of("channel-max"))
        info.mechanisms = list(self.opened.sasl_mechanisms)
        return info

    # ------------------------------------------------------------------ sessions and links
    def free_channel(self) -> int:
        ch = self._next_channel
        self._next_channel += 1
        return ch

    def reserve_channel(self, channel: int) -> None:
        """Keeps :meth:`free_channel` (used by the liveness probe) off a channel a case chose itself."""
        self._next_channel = max(self._next_channel, channel + 1)

    def begin(self, channel: int | None = None, *, incoming_window: int = WINDOW, outgoing_window: int = WINDOW,
              next_outgoing_id: int = 0, handle_max: int | None = None, timeout: float = 5.0) -> tuple[int, spec.Begin]:
        """Begins a session; returns our channel and the broker's begin (the session/link layer,
        peer/session10.py, keeps a session's numbers; this is the bare pair)."""
        ch = self.free_channel() if channel is None else channel
        self.reserve_channel(ch)
        self.send(AMQPFrame(ch, spec.Begin(next_outgoing_id=next_outgoing_id, incoming_window=incoming_window,
                                           outgoing_window=outgoing_window, handle_max=handle_max)))
        remote = self.await_frame("begin", match=lambda f: getattr(f.performative, "remote_channel", None) == ch,
                                  timeout=timeout)
        self.begun[ch] = remote.performative
        return ch, remote.performative

    def free_handle(self, channel: int) -> int:
        h = self._next_handle.get(channel, 0)
        self._next_handle[channel] = h + 1
        return h

    def attach(self, channel: int, *, name: str, role: bool, source: Any = None, target: Any = None,
               handle: int | None = None, snd_settle_mode: int | None = None, rcv_settle_mode: int | None = None,
               initial_delivery_count: int | None = None, properties: Any = None, wait: bool = True,
               timeout: float = 5.0) -> tuple[int, spec.Attach | None]:
        """Attaches a link (role False = we send, True = we receive); returns our handle and the broker's attach."""
        h = self.free_handle(channel) if handle is None else handle
        if role is spec.Role.SENDER and initial_delivery_count is None:
            initial_delivery_count = 0
        self.send(AMQPFrame(channel, spec.Attach(name=name, handle=h, role=role, snd_settle_mode=snd_settle_mode,
                                                 rcv_settle_mode=rcv_settle_mode, source=source, target=target,
                                                 initial_delivery_count=initial_delivery_count,
                                                 properties=properties)))
        if not wait:
            return h, None
        # the broker answers on ITS channel for the session (2.5.1), not ours: match the link name
        remote = self.await_frame("attach", match=lambda f: str(f.performative.name) == name, timeout=timeout)
        return h, remote.performative

    def close(self, timeout: float = 1.0) -> None:
        """Orderly close (close, then wait for the broker's close), then the socket; never raises."""
        try:
            if self.link.closed is None and self.opened.opened and self.framing_error is None and not self.close_sent:
                self.send(AMQPFrame(0, spec.Close()))
                deadline = time.monotonic() + max(0.0, self.link.remaining(timeout))
                while time.monotonic() < deadline:
                    item = self.recv(deadline - time.monotonic())
                    if item is None or isinstance(item, Closed) or performative_name(item) == "close":
                        break
        except (PeerError, DeadlineExceeded, OSError):
            pass
        finally:
            self.link.shutdown()

    def abort(self) -> None:
        self.link.shutdown()

    # ------------------------------------------------------------------ observing
    def observe(self, window: float = 2.0, *, probe: bool = False, reply_close: bool = True,
                stop: Callable[[Decoded], bool] | None = None) -> Observation:
        """Collects what the broker sends for up to ``window`` seconds.

        Ends early when the socket closes, when ``stop`` is true for an item, or -- with
        ``probe`` -- when a liveness probe comes back: a new session (begin) answered by begin,
        which proves the broker processed everything sent before it without closing the
        connection. A close from the broker is answered with close (2.4.3) unless told not to.
        """
        obs = Observation()
        started = time.monotonic()
        until = started + max(0.0, self.link.remaining(window) - 0.05)
        probe_channel = None
        if probe:
            probe_channel = self.free_channel()
            self.send(AMQPFrame(probe_channel, spec.Begin(next_outgoing_id=0, incoming_window=WINDOW,
                                                          outgoing_window=WINDOW)))
            obs.probe_ok = False

        def on_item(item: Any) -> bool:
            name = performative_name(item)
            if probe_channel is not None and name == "begin" and \
                    getattr(item.performative, "remote_channel", None) == probe_channel:
                obs.probe_ok = True
                self.send(AMQPFrame(probe_channel, spec.End()))
                return True
            obs.received.append(item)
            if name == "close" and reply_close and not self.close_sent:
                self.send(AMQPFrame(0, spec.Close()))
                obs.replied_close = True
            if stop is not None and stop(item):
                obs.end = "stopped"
                return True
            return False

        return self._watch(obs, started, until, on_item)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    items = getattr(value, "items", None)
    if isinstance(items, (list, tuple)):
        return list(items)
    try:
        return list(value)
    except TypeError:
        return [value]


def _plain(value: Any) -> Any:
    """Strips codec wrappers from a decoded map so it can be shown and compared."""
    if value is None:
        return None
    if hasattr(value, "items") and callable(value.items):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    for attr in ("value",):
        if hasattr(value, attr) and not isinstance(value, (str, bytes, int, float)):
            return _plain(getattr(value, attr))
    return value
