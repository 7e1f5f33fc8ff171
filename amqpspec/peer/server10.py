"""The server role of the AMQP 1.0 raw peer: amqpspec plays the broker to judge a client.

The 0-9-1 server role's :class:`~amqpspec.peer.server091.Listener` accepts the connection
(it speaks no protocol); :class:`ServerPeer10` is the client peer
(:class:`~amqpspec.peer.amqp10.Peer`) turned round: the same bounded reader, the same
``watchers`` through which the session/link layer (:mod:`amqpspec.peer.session10`) keeps
its counters, the same two-way transcript. What differs is who speaks first: the client
sends its protocol header, the server answers it (SASL mechanisms and outcome, then the AMQP
header and open), and every frame the server sends in that sequence can be replaced by a
case. Sessions and links are then served by a
:class:`~amqpspec.peer.server10_responder.Responder10` standing on the session/link layer
from the node's side.

Bounds (a client under test may be hostile): every read waits at most until the case
deadline; a frame may announce at most ``READ_CAP`` octets (far past any max-frame-size we
offer, so an oversized frame is seen and judged, never buffered without end); the
transcript has its own caps; a sasl-init is recorded with its initial-response masked.
"""
from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from amqpspec.peer.amqp10 import Observation, Peer, UnexpectedReply, performative_name
from amqpspec.peer.base import Link
from amqpspec.peer.server_role import ServerRole
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, FrameReader, ProtocolHeader, SASLFrame, Symbol, frame, spec
from amqpspec.wire.amqp10.frames import Decoded

if TYPE_CHECKING:
    from amqpspec.peer.server10_responder import Responder10

__all__ = ["ServerPeer10", "ClientOpened", "READ_CAP", "MAX_FRAME_SIZE", "header_ok"]

READ_CAP = 4 << 20          # the largest frame a client may announce before its stream counts as undecodable
MAX_FRAME_SIZE = 65536       # what the playing broker offers in its open unless a case says otherwise
MAX_OBSERVED = 20_000       # items one observation keeps (a flooding client: the rest are answered, not kept)
SASL, AMQP = 3, 0            # protocol ids (2.2, 5.3.1)


class _MaskingReader(FrameReader):
    """A reader that records a received sasl-init with its initial-response masked (the item
    handed to the case keeps the real one): a client's password never reaches a transcript."""

    def next(self) -> Decoded | None:
        item = super().next()
        if isinstance(item, SASLFrame):
            masked = item.masked()
            if masked is not None:
                self.last_raw = masked.encode()
        return item


@dataclass
class ClientOpened:
    """What the client said while opening, and what the two opens settled."""

    first_header: ProtocolHeader | None = None     # the header the client sent on connecting
    amqp_header: ProtocolHeader | None = None      # its AMQP header (after SASL, or the first one)
    mechanism: str | None = None                   # from sasl-init
    sasl_hostname: str | None = None
    sasl_response_given: bool = False              # (the response itself is never kept)
    sasl_init_header: tuple[int, int] | None = None   # its frame's type-specific octets and extended-header size
    offered_mechanisms: list[str] = field(default_factory=list)
    client_open: spec.Open | None = None
    our_open: spec.Open | None = None
    max_frame_size: int = 512                      # the smaller of the two (2.7.1); 512 before the opens
    channel_max: int = 65535
    idle_time_out: int | None = None               # the client's, in milliseconds (we send within it)
    opened: bool = False


class ServerPeer10(ServerRole, Peer):
    """One accepted AMQP 1.0 connection, played from the broker's side."""

    STAGES = ("new", "header", "sasl", "amqp", "open")

    def __init__(self, link: Link) -> None:
        super().__init__(link, None)  # type: ignore[arg-type]  # no target: we are the server
        self.reader = _MaskingReader(READ_CAP)
        self.negotiated = ClientOpened()
        self.sizes: list[tuple[str, int]] = []    # (summary, octets) of every frame received
        self.last_sent = time.monotonic()
        self.close_received: spec.Close | None = None

    @classmethod
    def on_socket(cls, conn: socket.socket, addr: Any, transcript: Transcript, deadline: float) -> "ServerPeer10":
        link = Link(conn, transcript, deadline)
        transcript.event(f"accepted a connection from {addr[0]}:{addr[1]}", link.conn)
        return cls(link)

    # ------------------------------------------------------------------ sending / receiving
    def send(self, *items: Any) -> bool:
        ok = super().send(*items)
        self.last_sent = time.monotonic()
        return ok

    def _describe(self, item: Any) -> str:
        # every frame's size on the wire, for the max-frame-size cases (2.7.1)
        if not isinstance(item, ProtocolHeader):
            self.sizes.append((super()._describe(item), len(self.reader.last_raw)))
            if len(self.sizes) > 10_000:
                del self.sizes[:5_000]
        return super()._describe(item)

    def _reader_after_end(self) -> FrameReader:
        return _MaskingReader(self.reader.max_frame_size, False)

    def oversized(self, limit: int | None = None) -> list[tuple[str, int]]:
        """Frames received larger than ``limit`` (the negotiated max-frame-size by default)."""
        cap = limit if limit is not None else self.negotiated.max_frame_size
        return [(s, n) for s, n in self.sizes if n > cap]

    # ------------------------------------------------------------------ opening, as the server
    def handshake(  # type: ignore[override]
        self,
        *,
        upto: str = "open",
        sasl_header: Any = None,
        mechanisms: tuple[str, ...] = ("PLAIN", "ANONYMOUS"),
        sasl_mechanisms: Any = None,
        outcome_code: int = 0,
        sasl_outcome: Any = None,
        amqp_header: Any = None,
        open: Any = None,  # noqa: A002 - the performative's name
        container_id: str = "amqpspec-broker",
        max_frame_size: int = MAX_FRAME_SIZE,
        channel_max: int | None = None,
        idle_time_out: int | None = None,
        properties: dict[str, Any] | None = None,
        offered_capabilities: Any = None,
        timeout: float = 5.0,
    ) -> ClientOpened:
        """Plays the server's half of opening (2.2, 5.3, 2.4.1) up to ``upto``.

        ``upto``: "header" (the client's first header read, nothing sent), "sasl" (our SASL
        header and mechanisms sent, its sasl-init read, our outcome sent), "amqp" (its AMQP
        header read and ours sent) or "open" (its open read, ours sent). A client that opens
        with the AMQP header skips "sasl". ``sasl_header``, ``sasl_mechanisms``,
        ``sasl_outcome``, ``amqp_header`` and ``open`` replace the item sent at that step (any
        frame or octets); the other arguments build the ordinary ones. A case may stop at a
        step, act, and call again to resume.
        """
        if upto not in self.STAGES[1:]:
            raise ValueError(f"upto must be one of {self.STAGES[1:]}")
        n = self.negotiated
        goal = self.STAGES.index(upto)
        if self.stage == "new":
            first = self.recv(timeout)
            if not isinstance(first, ProtocolHeader):
                raise UnexpectedReply("a protocol header", first)
            n.first_header = first
            self.stage = "header"
            if first.protocol_id != SASL:
                n.amqp_header = first
        if self.stage == "header" and goal >= 2 and n.amqp_header is None:
            self.send(sasl_header if sasl_header is not None else ProtocolHeader.sasl())
            n.offered_mechanisms = list(mechanisms)
            self.send(sasl_mechanisms if sasl_mechanisms is not None else
                      frame(spec.SaslMechanisms(sasl_server_mechanisms=[Symbol(m) for m in mechanisms])))
            init_frame = self._expect_skipping_empty("sasl-init", timeout)
            n.sasl_init_header = (int(init_frame.channel), len(bytes(init_frame.extended or b"")))
            init = init_frame.body
            n.mechanism = None if init.mechanism is None else str(init.mechanism)
            n.sasl_hostname = None if init.hostname is None else str(init.hostname)
            n.sasl_response_given = init.initial_response is not None
            self.send(sasl_outcome if sasl_outcome is not None else frame(spec.SaslOutcome(code=outcome_code)))
            self.reader.expect_header()  # the client's AMQP header follows the outcome (5.3.2)
            self.stage = "sasl"
            if outcome_code != 0:
                return n
        if self.stage in ("header", "sasl") and goal >= 3:
            if n.amqp_header is None:
                got = self.recv(timeout)
                if not isinstance(got, ProtocolHeader):
                    raise UnexpectedReply("the AMQP protocol header", got)
                n.amqp_header = got
            self.send(amqp_header if amqp_header is not None else ProtocolHeader.amqp())
            self.stage = "amqp"
        if self.stage == "amqp" and goal >= 4:
            theirs = self._expect_skipping_empty("open", timeout).performative
            n.client_open = theirs
            ours = spec.Open(container_id=container_id, max_frame_size=max_frame_size, channel_max=channel_max,
                             idle_time_out=idle_time_out, offered_capabilities=offered_capabilities,
                             properties={"product": "amqpspec", "platform": "amqpspec client conformance "
                                         "(plays the broker)"} if properties is None else properties)
            self.send(open if open is not None else AMQPFrame(0, ours))
            n.our_open = ours
            client_max = int(theirs.value_of("max-frame-size"))
            n.max_frame_size = min(max_frame_size, client_max)
            n.channel_max = min(int(theirs.value_of("channel-max")),
                                65535 if channel_max is None else channel_max)
            n.idle_time_out = None if theirs.idle_time_out is None else int(theirs.idle_time_out)
            self.opened.max_frame_size = n.max_frame_size   # what session10's senders split by
            self.opened.channel_max = n.channel_max
            self.opened.remote_open = theirs
            self.opened.opened = n.opened = True
            self.stage = "open"
        return n

    def _expect_skipping_empty(self, name: str, timeout: float) -> Any:
        return self.expect(name, timeout=timeout)

    # ------------------------------------------------------------------ serving
    def serve(
        self,
        window: float,
        responder: "Responder10 | None" = None,
        *,
        stop: Callable[[Decoded], bool] | None = None,
        heartbeats: bool = True,
    ) -> Observation:
        """Collects what the client sends for up to ``window`` seconds, answering through
        ``responder`` (a correct broker's answers unless the case replaced some).

        Sends empty frames within the client's idle-time-out (unless ``heartbeats`` is false:
        the silent-server cases). Ends early when the socket closes, when ``stop`` is true for
        a received item, or when the closing handshake is over (a close answered by ours, or
        the client's close answering ours), after which we wait briefly for the socket to close.
        """
        from amqpspec.peer.server10_responder import Responder10

        responder = responder if responder is not None else Responder10(self)
        obs = Observation()
        started = time.monotonic()
        until = started + max(0.0, self.link.remaining(window) - 0.05)
        idle = self.negotiated.idle_time_out
        beat = (idle / 1000.0) / 2 if heartbeats and idle else 0.0
        return self._serve_loop(obs, started, until, beat=beat, keepalive=lambda: self.send(EmptyFrame(0)),
                                handle=responder.handle, stop=stop,
                                on_closed=lambda o: setattr(o, "replied_close", responder.replied_close))

    def _keep(self, obs: Observation, item: Any) -> None:
        # a flooding client: the rest are answered, not kept (one event says so)
        if len(obs.received) < MAX_OBSERVED:
            obs.received.append(item)
        elif len(obs.received) == MAX_OBSERVED:
            obs.received.append(item)
            self.link.transcript.event(f"more than {MAX_OBSERVED} frames in one observation: the rest are not kept",
                                       self.link.conn)

    def _keep_late(self, obs: Observation, item: Any) -> None:
        if len(obs.received) <= MAX_OBSERVED:
            obs.received.append(item)

    def close_connection(self, condition: str | None = None, description: str | None = None, **fields: Any) -> None:
        """Starts the closing handshake from the server's side (the client must answer close, 2.4.3)."""
        error = None if condition is None else spec.Error(condition=Symbol(condition), description=description,
                                                          **fields)
        self.send(AMQPFrame(0, spec.Close(error=error)))

    def close(self, timeout: float = 1.0) -> None:
        """Ends the connection: the socket is shut; never raises (an orderly close is a case's step)."""
        self.link.shutdown()

    def abort(self) -> None:
        self.link.shutdown()


def header_ok(header: ProtocolHeader | None, protocol_id: int | None = None) -> bool:
    """A well-formed AMQP 1.0.0 protocol header (of ``protocol_id`` when given), 2.2."""
    return isinstance(header, ProtocolHeader) and header.well_formed and header.version == (1, 0, 0) \
        and (protocol_id is None or header.protocol_id == protocol_id)


def is_performative(name: str, channel: int | None = None) -> Callable[[Any], bool]:
    """A ``stop`` predicate: the client sent ``name`` (on ``channel`` when given)."""
    return lambda f: performative_name(f) == name and (channel is None or getattr(f, "channel", None) == channel)
