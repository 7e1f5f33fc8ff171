"""Spec 2.2 Version Negotiation (transport).

"Prior to sending any frames on a connection, each peer MUST start by sending a protocol
header ..." and a peer that does not support the requested version MUST send the header
of a version it supports and close the socket.

How a refusal may look: 2.2 says "send a protocol header with a supported protocol version
and then close the socket", while 2.4.3 says "Prior to closing a connection, each peer MUST
write a close frame" (which needs an open first, 2.4.1). The two sentences overlap, so a
refusal passes when the broker's first octets are a valid protocol header other than the one
refused and the socket then closes -- with nothing in between, or with well-formed frames of
the version it announced (2.2/2), an open first. The SASL (5.3) and TLS (5.2) headers follow
"the same rules specified in the version negotiation section": the helpers all three judge
with are in _handshake.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, performative_name
from amqpspec.verify10 import AnyOf
from amqpspec.wire.amqp10 import AMQP_HEADER, AMQPFrame, Composite, ProtocolHeader, describe, spec

from ._common import REACTION_WINDOW, WAIT
from ._handshake import (
    ALTERNATIVE_CLOSE, PROTOCOL_ID, REFUSE, UNPARSEABLE, V1, RefusesWithHeader, StartsAmqp091, check_version_choice,
    header_of, keeps_reading, observe_until, send_header,
)

# ---------------------------------------------------------------------------------------- accepted
@case("amqp10/2.2/amqp-header-answered", title="the AMQP 1.0 header is answered with the AMQP 1.0 header",
      clauses=("amqp10:2.2/1",))
def amqp_header_answered(ctx: Context) -> None:
    """Sends AMQP 0 1.0.0: the broker must answer with its own protocol header before any frame."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader.amqp())
    obs = peer.observe(3.0, stop=lambda item: isinstance(item, ProtocolHeader))
    frames = obs.frames()
    ok = bool(frames) and isinstance(frames[0], ProtocolHeader) and frames[0].well_formed
    ctx.record(ok, expected="a protocol header first", observed=obs.describe())


def _accepts_amqp_header(ctx: Context, obs: Observation) -> bool:
    """2.2/7: the requested AMQP 0 1.0.0 echoed -- or, for a broker that requires a security
    layer, a header with another protocol id and a close (2.2/12). Returns whether it was echoed."""
    hdr = header_of(obs)
    if hdr is not None and hdr.data == AMQP_HEADER:
        ctx.record(True, expected="protocol-header AMQP 0 1.0.0", observed=obs.describe(),
                   clauses=("amqp10:2.2/7",), what="the requested version is answered with the same header")
        return True
    refused = RefusesWithHeader(None, refused_protocol_id=0)
    ok = refused.accepts(obs)
    ctx.record(ok, expected="protocol-header AMQP 0 1.0.0, or (a broker that requires a security layer) a header "
                            "with another protocol id then the socket closed",
               observed=obs.describe(), clauses=("amqp10:2.2/7", "amqp10:2.2/12"),
               what="the requested version is answered with the same header")
    if ok:
        ctx.note("the broker requires a security layer: it refused the plain AMQP header")
    return False


@case("amqp10/2.2/requested-version-proceeds",
      title="AMQP 0 1.0.0 is answered with AMQP 0 1.0.0, then the connection proceeds in 1.0",
      clauses=("amqp10:2.2/7", "amqp10:2.2/2", "amqp10:2.2/12", "amqp10:2.3.1/1", "amqp10:2.3.2/1"))
def requested_version_proceeds(ctx: Context) -> None:
    """Sends AMQP 0 1.0.0, waits for the broker's header, then sends open. Passes when the header
    is exactly AMQP 0 1.0.0 and what follows it is 1.0 framing: an open answering ours (2.2/2,
    2.2/7), in a frame whose SIZE covers exactly its header and performative (2.3.1/1) and whose
    body is a performative (2.3.2/1). A broker that requires TLS or SASL may instead answer with
    that protocol id and close."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader.amqp())
    obs = peer.observe(WAIT, stop=lambda item: isinstance(item, ProtocolHeader))
    if not _accepts_amqp_header(ctx, obs):
        return
    peer.stage = "header"
    peer.open(wait=False)
    after = peer.observe(WAIT, stop=lambda item: performative_name(item) == "open")
    ok = after.first("open") is not None and after.framing_error is None
    ctx.record(ok, expected="an open frame, decodable as AMQP 1.0", observed=after.describe(),
               clauses=("amqp10:2.2/2", "amqp10:2.2/7"), what="the data after the header is AMQP 1.0 (open answered)")
    if not ok:
        return
    frames = [f for f in after.frames() if isinstance(f, AMQPFrame)]
    open_frame = after.performatives("open")[0]
    ctx.record(not open_frame.payload, expected="an open frame whose SIZE ends where the open performative ends",
               observed=describe(open_frame), clauses=("amqp10:2.3.1/1",),
               what="SIZE is the total of frame header, extended header and body")
    ctx.record(all(isinstance(f.performative, Composite) and "frame" in f.performative.PROVIDES for f in frames),
               expected="every AMQP frame body starts with a performative (a described type providing 'frame')",
               observed=after.describe(), clauses=("amqp10:2.3.2/1",), what="AMQP frames carry performatives")


@case("amqp10/2.2/header-byte-by-byte", title="a header sent one octet at a time is answered with the header",
      clauses=("amqp10:2.2/7", "amqp10:2.2/12"))
def header_byte_by_byte(ctx: Context) -> None:
    """Sends AMQP 0 1.0.0 in eight TCP segments, 20 ms apart. TCP is a byte stream: the broker must
    recognise the header however it is split and answer AMQP 0 1.0.0 (or refuse the protocol id
    and close, if it requires a security layer)."""
    peer = ctx.connect(handshake=False)
    peer.send_slowly(AMQP_HEADER, chunk=1, pause=0.02)
    obs = peer.observe(WAIT, stop=lambda item: isinstance(item, ProtocolHeader))
    _accepts_amqp_header(ctx, obs)


@case("amqp10/2.2/header-split-with-pause", title="a header completed after a pause is answered with the header",
      clauses=("amqp10:2.2/7", "amqp10:2.2/12"))
def header_split_with_pause(ctx: Context) -> None:
    """Sends the first five octets of AMQP 0 1.0.0 (a partial header), waits 0.5 s, then the other
    three. The broker must wait for the whole header and answer AMQP 0 1.0.0 (or refuse the
    protocol id and close)."""
    peer = ctx.connect(handshake=False)
    peer.send(AMQP_HEADER[:5])
    early = peer.observe(0.5)
    peer.send(AMQP_HEADER[5:])
    obs = peer.observe(WAIT, stop=lambda item: isinstance(item, ProtocolHeader))
    obs.received = early.received + obs.received
    if early.closed:
        obs.end = early.end
    _accepts_amqp_header(ctx, obs)


@case("amqp10/2.2/late-header", title="a header sent one second after connecting is answered with the header",
      clauses=("amqp10:2.2/5", "amqp10:2.2/7", "amqp10:2.2/12"))
def late_header(ctx: Context) -> None:
    """Connects, sends nothing for one second, then AMQP 0 1.0.0. The broker may send its header
    first or wait for ours (2.2/5); either way the requested version must be answered with
    AMQP 0 1.0.0 (or the protocol id refused with a close)."""
    peer = ctx.connect(handshake=False)
    early = peer.observe(1.0)
    if early.closed:
        ctx.record(False, expected="the connection waits for the client's protocol header",
                   observed=early.describe(), clauses=("amqp10:2.2/5", "amqp10:2.2/7"))
        return
    if header_of(early) is not None:
        ctx.note(f"the broker sent its header before ours: {header_of(early).summary()}")  # type: ignore[union-attr]
    peer.send(ProtocolHeader.amqp())
    obs = peer.observe(WAIT, stop=lambda item: isinstance(item, ProtocolHeader))
    obs.received = early.received + obs.received
    _accepts_amqp_header(ctx, obs)


@case("amqp10/2.2/header-and-open-in-one-segment",
      title="a header and an open sent together are answered with the header and an open",
      clauses=("amqp10:2.2/7", "amqp10:2.2/2"))
def header_and_open_in_one_segment(ctx: Context) -> None:
    """Sends AMQP 0 1.0.0 and an open in one write (the client does not wait for the broker's
    header, which 2.4.2 allows). The broker must answer AMQP 0 1.0.0, then proceed in 1.0: its
    open. A broker that refuses the protocol id (requires a security layer) may close instead."""
    peer = ctx.connect(handshake=False)
    open_frame = AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host, max_frame_size=65536))
    peer.send(AMQP_HEADER + open_frame.encode())
    obs = peer.observe(WAIT, stop=lambda item: performative_name(item) == "open")
    if not _accepts_amqp_header(ctx, obs):
        return
    ok = obs.first("open") is not None and obs.framing_error is None
    ctx.record(ok, expected="an open after the header", observed=obs.describe(),
               clauses=("amqp10:2.2/7", "amqp10:2.2/2"), what="the connection proceeds in AMQP 1.0")


# ---------------------------------------------------------------------------------------- refused versions
def _refusal_case(name: str, title: str, data: bytes, doc: str, clauses: tuple[str, ...],
                  requested: tuple[int, int, int] | None, *, protocol_id_refused: bool = False) -> None:
    version_clause = () if requested is None else (("amqp10:2.2/9",) if requested >= V1 else ("amqp10:2.2/10",))

    def run(ctx: Context) -> None:
        _, obs = send_header(ctx, data)
        verifier = RefusesWithHeader(data, refused_protocol_id=data[4] if protocol_id_refused else None)
        ctx.check(obs, verifier, clauses=clauses, what="a valid protocol header, then the socket closed")
        check_version_choice(ctx, obs, requested)

    run.__doc__ = doc
    run.__name__ = name.replace("-", "_")
    case(f"amqp10/2.2/{name}", title=title, clauses=clauses + version_clause)(run)


_refusal_case("unsupported-minor-version", "a request for AMQP 0 1.1.0 is answered with a supported header, then close",
              b"AMQP\x00\x01\x01\x00",
              "Sends AMQP 0 1.1.0 (the spec's own example of an unsupported version). Passes on a valid header "
              "other than 1.1.0 followed by the socket close; the version offered should be the highest supported "
              "one not above 1.1.0, i.e. 1.0.0 (2.2/9, warning).",
              REFUSE, (1, 1, 0))
_refusal_case("unsupported-major-version", "a request for AMQP 0 2.0.0 is answered with a supported header, then close",
              b"AMQP\x00\x02\x00\x00",
              "Sends AMQP 0 2.0.0. Passes on a valid header other than 2.0.0, then the socket close; the version "
              "offered should be the highest supported one not above 2.0.0 (2.2/9, warning).",
              REFUSE, (2, 0, 0))
_refusal_case("unsupported-revision", "a request for AMQP 0 1.0.1 is answered with a supported header, then close",
              b"AMQP\x00\x01\x00\x01",
              "Sends AMQP 0 1.0.1, a revision that does not exist. Passes on a valid header other than 1.0.1, then "
              "the socket close; the version offered should be 1.0.0, the highest not above the request (2.2/9).",
              REFUSE, (1, 0, 1))
_refusal_case("version-below-supported", "a request for AMQP 0 0.1.0 is answered with a supported header, then close",
              b"AMQP\x00\x00\x01\x00",
              "Sends AMQP 0 0.1.0, below any version of AMQP. Passes on a valid header other than 0.1.0, then the "
              "socket close; with no supported version at or below the request, the broker should offer its "
              "highest, at least 1.0.0 (2.2/10, warning).",
              REFUSE, (0, 1, 0))
_refusal_case("unknown-protocol-id", "protocol id 5 is answered with a header of an acceptable protocol id, then close",
              b"AMQP\x05\x01\x00\x00",
              "Sends AMQP 5 1.0.0; protocol id 5 is not defined. Passes on a valid header with any protocol id but "
              "5 (2.2/13: the broker may choose any), then the socket close.",
              PROTOCOL_ID, None, protocol_id_refused=True)
_refusal_case("lowercase-literal", "a header with the literal 'amqp' is answered with a valid header, then close",
              b"amqp\x00\x01\x00\x00",
              "Sends 'amqp' 0 1.0.0: the literal is upper-case ASCII AMQP, so the header cannot be parsed. Passes on "
              "a valid protocol header, then the socket close.",
              UNPARSEABLE, None)
_refusal_case("http-request", "an HTTP request is answered with a valid AMQP header, then close",
              b"GET / HTTP/1.1\r\nHost: amqpspec\r\n\r\n",
              "Sends an HTTP/1.1 GET, the spec's example (3) of figure 2.12. Passes on a valid protocol header, then "
              "the socket close.",
              UNPARSEABLE, None)
_refusal_case("frame-without-header", "an open frame sent without a header is answered with a valid header, then close",
              AMQPFrame(0, spec.Open(container_id="amqpspec")).encode(),
              "Sends an open frame as the first octets, with no protocol header before it: the header cannot be "
              "parsed. Passes on a valid protocol header, then the socket close.",
              UNPARSEABLE, None)


@case("amqp10/2.2/garbage-header", title="eight random octets are answered with a valid header, then close",
      clauses=UNPARSEABLE)
def garbage_header(ctx: Context) -> None:
    """Sends eight seeded random octets (the first one 0x00, so never 'A'): the header cannot be
    parsed. Passes on a valid protocol header, then the socket close."""
    data = b"\x00" + bytes(ctx.rng.randrange(256) for _ in range(7))
    _, obs = send_header(ctx, data)
    ctx.check(obs, RefusesWithHeader(data), what="a valid protocol header, then the socket closed")


@case("amqp10/2.2/amqp-0-9-1-header",
      title="the AMQP 0-9-1 header is refused with a header and close, or starts AMQP 0-9-1",
      clauses=("amqp10:2.2/8", "amqp10:2.2/5", ALTERNATIVE_CLOSE, "amqp10:2.2/10"))
def amqp_0_9_1_header(ctx: Context) -> None:
    """Sends AMQP 0 0.9.1, the AMQP 0-9-1 protocol header. A broker that does not implement 0-9-1
    must answer with a header of a version it supports and close (2.2/8), preferably its highest
    (2.2/10, warning); a multi-protocol broker may serve 0-9-1 on the same port (2.2/5: "This
    permits a multi protocol server implementation to choose the correct protocol version") and
    then answers the 0-9-1 way, with connection.start."""
    data = b"AMQP\x00\x00\x09\x01"
    peer = ctx.connect(handshake=False)
    starts = StartsAmqp091(peer)
    peer.send(ProtocolHeader(data))
    obs = observe_until(peer, REACTION_WINDOW, lambda o: starts.accepts(o))
    if starts.accepts(obs):
        ctx.note(f"the broker's first octets: {peer.link.head[:24].hex()} (an AMQP 0-9-1 method frame)")
        ctx.check(obs, starts, clauses=("amqp10:2.2/5",), what="the broker proceeds in AMQP 0-9-1")
        return
    ctx.check(obs, AnyOf(RefusesWithHeader(data), starts), clauses=("amqp10:2.2/8", ALTERNATIVE_CLOSE),
              what="a valid protocol header then the socket closed, or 0-9-1")
    check_version_choice(ctx, obs, (0, 9, 1))


@case("amqp10/2.2/mismatch-reads-until-terminated",
      title="after refusing a header the broker shuts its outgoing stream and reads ours until it ends",
      clauses=("amqp10:2.2/3",))
def mismatch_reads_until_terminated(ctx: Context) -> None:
    """Sends AMQP 0 2.0.0; the headers then do not match. Both peers MUST close their outgoing
    stream (the broker's FIN, after its header: MUST) and SHOULD read the incoming stream until it
    is terminated: octets we send after the broker's FIN must not be answered by a reset (warning)."""
    data = b"AMQP\x00\x02\x00\x00"
    peer, obs = send_header(ctx, data)
    if not ctx.check(obs, RefusesWithHeader(data), what="the broker closes its outgoing stream after its header"):
        return
    ok, observed = keeps_reading(ctx, peer, obs)
    ctx.record(ok, expected="the broker keeps reading after its FIN until our stream ends",
               observed=observed, what="the incoming stream is read until it is terminated",
               clauses=("amqp10:2.2/3",), level=Level.SHOULD,
               guideline="both peers MUST close their outgoing stream and SHOULD read the incoming stream until it "
                         "is terminated")
