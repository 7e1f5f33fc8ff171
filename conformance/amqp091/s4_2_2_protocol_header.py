"""Spec 4.2.2 Protocol Header, and the connection.start rules on protocol negotiation.

The client opens with an 8-octet header. A server that does not recognise the first 5
octets, or does not support the version asked for, MUST answer with a valid protocol
header and close the socket (4.2.2/3, connection.start protocol-name); the version it
offers MUST NOT be higher than the one requested (connection.start server-support).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify import AnyOf, HeaderThenClose, Replies, Verifier
from amqpspec.peer.amqp091 import Observation
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader

from ._common import REACTION_WINDOW, header_bytes

REJECT = ("amqp091:4.2.2/3", "amqp091:connection.start/protocol-name")
VERSION = ("amqp091:4.2.2/3", "amqp091:connection.start/server-support")


class StartsOtherVersion(Verifier):
    """The broker accepts the header as a version it implements: connection.start (any version)."""

    expects_close = False

    def __init__(self, version: str) -> None:
        self.version = version

    def accepts(self, obs: Observation) -> bool:
        return bool(obs.methods("connection.start", 0))

    def describe(self) -> str:
        return f"connection.start (the broker implements {self.version})"


class HttpAnswer(Verifier):
    """An HTTP response: spec 4.2.2/2 lets a server accept non-AMQP protocols such as HTTP."""

    expects_close = False

    def __init__(self) -> None:
        self.head = b""

    def accepts(self, obs: Observation) -> bool:
        return self.head.startswith(b"HTTP/")

    def describe(self) -> str:
        return "an HTTP response (4.2.2/2: the server MAY accept HTTP)"


def _send_header(ctx: Context, data: bytes) -> Observation:
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader(data) if len(data) == 8 else data)
    return peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame))


@case("amqp091/4.2.2/valid-header", title="AMQP 0-9-1 header is answered with connection.start for 0-9",
      clauses=VERSION)
def valid_header(ctx: Context) -> None:
    """Sends AMQP 0-0-9-1; the broker must start the negotiation offering version 0-9 (or lower)."""
    obs = _send_header(ctx, bytes(header_bytes().data))
    if not ctx.check(obs, Replies("connection.start", channel=0), what="connection.start on channel 0"):
        return
    start = obs.methods("connection.start")[0].method
    offered = (start.version_major, start.version_minor)  # type: ignore[attr-defined]
    ctx.record(offered <= (0, 9), expected="version-major/minor <= 0-9",
               observed=f"version {offered[0]}-{offered[1]}", what="offered version not higher than requested")


def _reject_case(name: str, title: str, data_of: "callable", doc: str, clauses: tuple[str, ...] = REJECT,
                 also: Verifier | None = None, at_most: tuple[int, int, int, int] | None = None) -> None:
    def run(ctx: Context) -> None:
        data = data_of(ctx)
        obs = _send_header(ctx, data)
        verifier: Verifier = HeaderThenClose(at_most=at_most)
        if also is not None:
            verifier = AnyOf(verifier, also)
        if isinstance(also, HttpAnswer):
            also.head = ctx.peers[-1].link.head
        ctx.check(obs, verifier)

    run.__doc__ = doc
    run.__name__ = name.replace("-", "_")
    case(f"amqp091/4.2.2/{name}", title=title, clauses=clauses)(run)


_reject_case("bad-protocol-name", "unknown protocol name 'AMQX' is answered with a valid header, then close",
             lambda ctx: b"AMQX\x00\x00\x09\x01",
             "Sends AMQX 0-0-9-1: the first 5 octets are not recognised.")
_reject_case("lowercase-literal", "lower-case 'amqp' literal is answered with a valid header, then close",
             lambda ctx: b"amqp\x00\x00\x09\x01",
             "Sends amqp 0-0-9-1: the literal is case-sensitive upper-case AMQP.")
_reject_case("protocol-id-nonzero", "protocol-id 5 is answered with a valid header, then close",
             lambda ctx: b"AMQP\x05\x00\x09\x01",
             "Sends AMQP 5-0-9-1: the fifth octet must be 0 in 0-9-1, so the first 5 octets are not recognised.")
_reject_case("garbage", "8 random octets are answered with a valid header, then close",
             lambda ctx: b"\x00" + bytes(ctx.rng.randrange(256) for _ in range(7)),
             "Sends eight seeded random octets (first octet 0x00, so never 'A').")
_reject_case("http-request", "an HTTP request is answered with a valid AMQP header then close (or HTTP)",
             lambda ctx: b"GET / HTTP/1.1\r\nHost: amqpspec\r\n\r\n",
             "Sends an HTTP/1.1 GET. The broker must answer with a valid AMQP header and close, "
             "unless it serves HTTP on the port, which 4.2.2/2 allows.",
             clauses=REJECT + ("amqp091:4.2.2/2",), also=HttpAnswer())
_reject_case("higher-version", "a request for version 2-0 gets a header for a version not above 2-0, then close",
             lambda ctx: b"AMQP\x00\x02\x00\x00",
             "Sends AMQP 0-2-0-0, higher than any implementation (the server-support scenario).",
             clauses=VERSION + ("amqp091:connection.start/protocol-name",), at_most=(0, 2, 0, 0))
_reject_case("unsupported-revision", "a request for 0-9-9 gets a valid header, then close",
             lambda ctx: b"AMQP\x00\x00\x09\x09",
             "Sends AMQP 0-0-9-9, a revision that does not exist.",
             clauses=VERSION, at_most=(0, 0, 9, 9))
_reject_case("amqp-0-10-header", "an AMQP 0-10 header gets a valid header and close, or a 0-10 start",
             lambda ctx: b"AMQP\x01\x01\x00\x0a",
             "Sends the 0-10 header (AMQP 1-1-0-10). A broker implementing 0-10 may start a 0-10 negotiation.",
             also=StartsOtherVersion("AMQP 0-10"))
_reject_case("amqp-0-8-header", "an AMQP 0-8 header gets a valid header and close, or a 0-8 start",
             lambda ctx: b"AMQP\x01\x01\x08\x00",
             "Sends the 0-8 header (AMQP 1-1-8-0). A broker implementing 0-8 may start a 0-8 negotiation.",
             also=StartsOtherVersion("AMQP 0-8"))
_reject_case("amqp-0-9-header", "an AMQP 0-9 header gets a valid header and close, or a 0-9 start",
             lambda ctx: b"AMQP\x01\x01\x00\x09",
             "Sends the 0-9 header (AMQP 1-1-0-9). A broker implementing 0-9 may start a 0-9 negotiation.",
             also=StartsOtherVersion("AMQP 0-9"))


class OtherProtocolHeader(Verifier):
    """A well-formed header for AMQP 1.0 (any protocol-id), connection left open: 2.3.3/1 allows
    a server to host several protocols on one port."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:
        frames = obs.frames()
        return bool(frames) and isinstance(frames[0], ProtocolHeader) and frames[0].well_formed \
            and frames[0].data[5:8] == b"\x01\x00\x00"

    def describe(self) -> str:
        return "an AMQP 1.0 header (the broker also implements AMQP 1.0 on this port)"


@case("amqp091/4.2.2/amqp-1-0-header", title="an AMQP 1.0 header gets a valid header and close, or 1.0",
      clauses=REJECT + ("amqp091:2.3.3/1",))
def amqp_1_0_header(ctx: Context) -> None:
    """Sends the AMQP 1.0 header (AMQP 0-1-0-0). A 0-9-1-only broker must answer with its own
    header and close; a broker hosting 1.0 on the same port may go on in 1.0 (2.3.3/1)."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader(b"AMQP\x00\x01\x00\x00"))
    # a 1.0 broker answers with its header and then waits for us: no need to wait the window out
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, ProtocolHeader) and item.data[5:8] == b"\x01\x00\x00")
    ctx.check(obs, AnyOf(HeaderThenClose(), OtherProtocolHeader()))


@case("amqp091/4.2.2/fragmented-header", title="a valid header sent one octet at a time is recognised",
      clauses=VERSION)
def fragmented_header(ctx: Context) -> None:
    """Sends AMQP 0-0-9-1 in eight TCP segments. TCP is a byte stream: the broker must
    recognise its own version however the header is split, and answer with connection.start."""
    peer = ctx.connect(handshake=False)
    peer.send_slowly(bytes(header_bytes().data), chunk=1, pause=0.02)
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame))
    ctx.check(obs, Replies("connection.start", channel=0))
