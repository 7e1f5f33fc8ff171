"""The server role of the AMQP 0-9-1 raw peer: amqpspec plays the broker to judge a client.

A :class:`Listener` binds a socket (loopback unless told otherwise) and hands out one
:class:`ServerPeer` per accepted connection. The server peer is the client peer's mirror:
the same :class:`~amqpspec.peer.base.Link` (deadline-bounded I/O, two-way transcript), the
same bounded frame reader, the same :class:`~amqpspec.peer.amqp091.Observation` of what the
other side sent. It answers the handshake as a broker would (connection.start, tune,
open-ok), every frame overridable, and then serves a conversation through a
:class:`~amqpspec.peer.server091_responder.Responder` whose answers a case can replace.

Bounds (a client under test may be hostile): every read waits at most until the case
deadline; a frame may announce at most ``READ_CAP`` octets before the stream is declared
undecodable (the reader never buffers more than one frame); the transcript has its own caps;
connections that arrive while no case waits for one stay in the kernel's small backlog and
are closed unread by :meth:`Listener.drain` before the next case accepts.
"""
from __future__ import annotations

import socket
import time
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from amqpspec.peer.amqp091 import Observation, UnexpectedReply, _masked, expect_method
from amqpspec.peer.base import DeadlineExceeded, Link, PeerError, StreamPeer
from amqpspec.peer.server_role import ServerRole
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import (
    FRAME_OVERHEAD, PROTOCOL_HEADER, SPEC, BodyFrame, FrameReader, HeaderFrame, HeartbeatFrame,
    MethodFrame, ProtocolHeader, describe, encode, spec,
)
from amqpspec.wire.amqp091.base import Method
from amqpspec.wire.amqp091.frames import Decoded, Sendable

if TYPE_CHECKING:
    from amqpspec.peer.server091_responder import Responder

#: the largest frame payload a client may announce before its stream counts as undecodable:
#: large enough to see (and judge) a frame far past a small negotiated frame-max, small
#: enough that one connection cannot make the suite buffer more
READ_CAP = 4 << 20
ACCEPT_BACKLOG = 8
FRAME_MIN_SIZE = spec.FRAME_MIN_SIZE  # 4096: what both peers accept before tuning


def server_properties() -> dict[str, Any]:
    """What the playing broker says about itself (connection.start server-properties required-fields)."""
    from amqpspec import __version__

    return {
        "host": "127.0.0.1",
        "product": "amqpspec",
        "version": __version__,
        "platform": "amqpspec client conformance (plays the broker)",
        "copyright": "amqpspec contributors",
        "information": "a test peer judging the AMQP client connected to it",
        "capabilities": {"publisher_confirms": True, "consumer_cancel_notify": True,
                         "connection.blocked": True, "basic.nack": True,
                         "exchange_exchange_bindings": True, "authentication_failure_close": True,
                         "per_consumer_qos": True},
    }


class _MaskingReader(FrameReader):
    """A frame reader that records a received connection.start-ok with its SASL response
    masked (the item handed to the case keeps the real one): a client's password never
    reaches a transcript."""

    def next(self) -> Decoded | None:
        item = super().next()
        if isinstance(item, MethodFrame):
            masked = _masked(item)
            if masked is not None:
                self.last_raw = masked.encode(self.dialect)
        return item


class Listener:
    """A listening socket for one run: each case accepts the connection of its client."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise PeerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        family, _, _, _, addr = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(addr)
            sock.listen(ACCEPT_BACKLOG)
        except OSError as exc:
            sock.close()
            raise PeerError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
        self.sock = sock
        self.host, self.port = sock.getsockname()[:2]
        self.accepted = 0

    def url(self, username: str = "guest", password: str = "guest", vhost: str = "/") -> str:
        """The amqp:// URL a client under test is given (the vhost quoted as a path segment)."""
        from urllib.parse import quote

        host = f"[{self.host}]" if ":" in str(self.host) else str(self.host)
        return f"amqp://{quote(username, safe='')}:{quote(password, safe='')}@{host}:{self.port}/{quote(vhost, safe='')}"

    def accept(self, transcript: Transcript, deadline: float) -> "ServerPeer":
        """The next connection, within the deadline (:class:`DeadlineExceeded` when none comes)."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise DeadlineExceeded("no time left to wait for the client's connection")
        conn, addr = self.accept_socket(left)
        return ServerPeer.on_socket(conn, addr, transcript, deadline)

    def accept_socket(self, timeout: float | None) -> tuple[socket.socket, Any]:
        """The next raw connection (None: wait as long as it takes -- the serve mode)."""
        self.sock.settimeout(timeout)
        try:
            conn, addr = self.sock.accept()
        except (socket.timeout, TimeoutError):
            raise DeadlineExceeded("the client did not connect before the deadline") from None
        except OSError as exc:
            raise PeerError(f"accepting the client's connection failed: {exc.strerror or exc}") from None
        self.accepted += 1
        try:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        return conn, addr

    def drain(self) -> int:
        """Closes, unread, every connection waiting in the backlog (left by an earlier case's
        client, or a client that connects again and again); returns how many."""
        closed = 0
        self.sock.setblocking(False)
        try:
            while closed < 10_000:
                try:
                    conn, _ = self.sock.accept()
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    break
                try:
                    conn.close()
                finally:
                    closed += 1
        finally:
            self.sock.setblocking(True)
        return closed

    def close(self, timeout: float = 0.0) -> None:
        """Stops listening (``timeout`` unused: the runner's interface for what a case adopted)."""
        try:
            self.sock.close()
        except OSError:
            pass

    abort = close


@dataclass
class ClientNegotiated:
    """What the client said during the handshake, and what it settled."""

    header: ProtocolHeader | None = None
    start_ok: spec.ConnectionStartOk | None = None
    tune: spec.ConnectionTune | None = None       # what we proposed
    tune_ok: spec.ConnectionTuneOk | None = None
    open: spec.ConnectionOpen | None = None
    channel_max: int = 0
    frame_max: int = 0
    heartbeat: int = 0
    opened: bool = False


@dataclass
class SentContent:
    """One content the client sent: its method, header and body frames (as received)."""

    channel: int
    method: Method
    header: HeaderFrame | None = None
    bodies: list[BodyFrame] = field(default_factory=list)

    @property
    def body(self) -> bytes:
        return b"".join(bytes(b.data) for b in self.bodies)

    @property
    def complete(self) -> bool:
        return self.header is not None and len(self.body) >= self.header.body_size


class ServerPeer(ServerRole, StreamPeer):
    """One accepted AMQP 0-9-1 connection, played from the broker's side."""

    STAGES = ("new", "header", "start-ok", "tune-ok", "open-ok")

    def __init__(self, link: Link) -> None:
        self.link = link
        self.dialect = SPEC
        self.reader = _MaskingReader(READ_CAP, SPEC)
        self.negotiated = ClientNegotiated()
        self.stage = "new"
        self.framing_error: str | None = None
        self.discarded = 0
        self._queue: deque[Decoded] = deque()
        self.sizes: list[tuple[str, int]] = []   # (summary, octets) of every frame received
        self.last_sent = time.monotonic()
        self.close_sent: spec.ConnectionClose | None = None   # we started the closing handshake
        self.close_ok_sent = False

    @classmethod
    def on_socket(cls, conn: socket.socket, addr: Any, transcript: Transcript, deadline: float) -> "ServerPeer":
        link = Link(conn, transcript, deadline)
        transcript.event(f"accepted a connection from {addr[0]}:{addr[1]}", link.conn)
        return cls(link)

    # ------------------------------------------------------------------ sending
    def send(self, *items: Sendable) -> bool:
        ok = True
        for item in items:
            data = encode(item, self.dialect)
            ok = self.link.send_bytes(data, describe(item)) and ok
            self.last_sent = time.monotonic()
        return ok

    def send_method(self, channel: int, method: Method) -> bool:
        return self.send(MethodFrame(channel, method))

    def content_frames(self, channel: int, body: bytes, properties: spec.BasicProperties | None = None,
                       frame_max: int | None = None) -> list[Sendable]:
        """A header and the body frames of ``body``, each body frame within ``frame_max`` (the
        negotiated one by default) -- what a correct broker sends after a deliver or get-ok."""
        limit = frame_max if frame_max is not None else (self.negotiated.frame_max or 131072)
        chunk = max(1, limit - FRAME_OVERHEAD)
        frames: list[Sendable] = [HeaderFrame(channel, 60, len(body), properties or spec.BasicProperties())]
        frames += [BodyFrame(channel, body[i:i + chunk]) for i in range(0, len(body), chunk)]
        return frames

    # ------------------------------------------------------------------ receiving
    def _describe(self, item: Any) -> str:
        # every frame's size on the wire, for the frame-max cases (4.2.3/6)
        self.sizes.append((describe(item), len(self.reader.last_raw)))
        if len(self.sizes) > 10_000:
            del self.sizes[:5_000]
        return describe(item)

    def _reader_after_end(self) -> FrameReader:
        return _MaskingReader(self.reader.max_payload, self.dialect, False)

    def expect(self, *names: str, channel: int | None = None, timeout: float = 5.0) -> MethodFrame:
        """Waits for one of the named methods from the client; heartbeats are skipped."""
        return expect_method(self, names, channel, timeout)

    # ------------------------------------------------------------------ handshake
    def handshake(
        self,
        *,
        upto: str = "open-ok",
        start: MethodFrame | Sendable | None = None,
        properties: dict[str, Any] | None = None,
        mechanisms: bytes = b"PLAIN AMQPLAIN",
        locales: bytes = b"en_US",
        version: tuple[int, int] = (0, 9),
        tune: Sendable | None = None,
        channel_max: int = 2047,
        frame_max: int = 131072,
        heartbeat: int = 0,
        open_ok: Sendable | None = None,
        timeout: float = 5.0,
    ) -> ClientNegotiated:
        """Plays the broker's half of connection negotiation (2.2.4) up to ``upto``.

        ``upto``: "header" (the client's protocol header read, nothing sent), "start-ok"
        (start sent, start-ok read), "tune-ok" (tune sent, tune-ok read) or "open-ok" (open
        read and open-ok sent). ``start``, ``tune`` and ``open_ok`` replace the frame sent at
        that step (any bytes); otherwise the other arguments build it. A case may stop at a
        step, send something of its own, and call again to resume. The client's methods are
        taken on whatever channel they come (a case judges a wrong channel from the
        transcript); anything else in their place raises :class:`UnexpectedReply`.
        """
        if upto not in self.STAGES[1:]:
            raise ValueError(f"upto must be one of {self.STAGES[1:]}")
        n = self.negotiated
        goal = self.STAGES.index(upto)
        if self.stage == "new":
            first = self.recv(timeout)
            if not isinstance(first, ProtocolHeader):
                raise UnexpectedReply("a protocol header", first)
            n.header = first
            self.stage = "header"
        if self.stage == "header" and goal > 1:
            self.send(start if start is not None else MethodFrame(0, spec.ConnectionStart(
                version[0], version[1], server_properties() if properties is None else properties, mechanisms, locales)))
            n.start_ok = self.expect("connection.start-ok", timeout=timeout).method  # type: ignore[assignment]
            self.stage = "start-ok"
        if self.stage == "start-ok" and goal > 2:
            n.tune = spec.ConnectionTune(channel_max, frame_max, heartbeat)
            self.send(tune if tune is not None else MethodFrame(0, n.tune))
            ok: spec.ConnectionTuneOk = self.expect("connection.tune-ok", timeout=timeout).method  # type: ignore[assignment]
            n.tune_ok = ok
            n.channel_max, n.frame_max, n.heartbeat = ok.channel_max, ok.frame_max, ok.heartbeat
            self.stage = "tune-ok"
        if self.stage == "tune-ok" and goal > 3:
            n.open = self.expect("connection.open", timeout=timeout).method  # type: ignore[assignment]
            self.send(open_ok if open_ok is not None else MethodFrame(0, spec.ConnectionOpenOk()))
            n.opened = True
            self.stage = "open-ok"
        return n

    def oversized(self) -> list[tuple[str, int]]:
        """Frames received larger than the negotiated frame-max (4.2.3/6); before tune-ok,
        larger than frame-min-size."""
        limit = self.negotiated.frame_max or (0 if self.negotiated.tune_ok else FRAME_MIN_SIZE)
        return [(s, size) for s, size in self.sizes if limit and size > limit]

    # ------------------------------------------------------------------ serving
    def serve(
        self,
        window: float,
        responder: "Responder | None" = None,
        *,
        stop: Callable[[Decoded], bool] | None = None,
        heartbeats: bool = True,
    ) -> Observation:
        """Collects what the client sends for up to ``window`` seconds, answering through
        ``responder`` (a correct broker's answers unless the case replaced some).

        Sends heartbeats when the client negotiated them (unless ``heartbeats`` is false: the
        silent-server cases). Ends early when the socket closes, when ``stop`` is true for a
        received item, or after the closing handshake: a connection.close-ok from the client
        (to our close) or our close-ok (to its close), after which we wait briefly for the
        socket to close and keep anything that still arrives as evidence.
        """
        from amqpspec.peer.server091_responder import Responder

        responder = responder if responder is not None else Responder(self)
        obs = Observation()
        started = time.monotonic()
        until = started + max(0.0, self.link.remaining(window) - 0.05)
        beat = self.negotiated.heartbeat if heartbeats else 0
        return self._serve_loop(obs, started, until, beat=beat / 2, keepalive=lambda: self.send(HeartbeatFrame(0)),
                                handle=responder.handle, stop=stop, on_closed=self._record_close_ok)

    def _record_close_ok(self, obs: Observation) -> None:
        obs.replied_close_ok = self.close_ok_sent

    def close_connection(self, code: int = 320, text: str = "CONNECTION_FORCED - amqpspec", class_id: int = 0,
                         method_id: int = 0) -> None:
        """Starts the closing handshake from the broker's side (the client must answer close-ok)."""
        self.close_sent = spec.ConnectionClose(code, text, class_id, method_id)
        self.send(MethodFrame(0, self.close_sent))

    # ------------------------------------------------------------------ closing
    def close(self, timeout: float = 1.0) -> None:
        """Ends the connection: the socket is shut; never raises. (A broker's orderly close is
        a case's own step, :meth:`close_connection`; the runner only has to end the socket.)"""
        self.link.shutdown()

    def abort(self) -> None:
        self.link.shutdown()


def protocol_header_ok(header: ProtocolHeader | None) -> bool:
    """The client sent exactly the AMQP 0-9-1 protocol header (4.2.2)."""
    return header is not None and bytes(header.data) == PROTOCOL_HEADER
