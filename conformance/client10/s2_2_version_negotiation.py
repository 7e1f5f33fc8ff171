"""2.2 Version negotiation, from the client's side.

The TCP client "MUST immediately send its outgoing protocol header on establishment of the
TCP connection" (2.2/4), "with the client's preferred protocol version" (2.2/6): the playing
broker waits silently after accepting, and the first octets must be a well-formed AMQP 1.0.0
header (protocol id 0, or 3 for SASL). "If the incoming and outgoing protocol headers do not
match, both peers MUST close their outgoing stream" (2.2/3): answered with a 1.0.1 header,
the client closes; an open it pipelined before reading our header (2.4.1 allows pipelining)
is not held against it, anything more is -- a close frame too: it is written in the very
version the server just declined, on a stream the client had to close. A header that differs
in protocol id (AMQP 0 for the client's SASL 3) does not match either. The negotiation does
not depend on how TCP cuts the stream: our header sent one octet per segment is read whole
("perform protocol negotiation", 0.2/1).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.base import PeerError
from amqpspec.peer.server10 import header_ok
from amqpspec.wire.amqp10 import EmptyFrame, ProtocolHeader

from ._client import QUICK, client_closed, named, play


@case("amqp10/2.2/client-sends-header-at-once", role="client",
      title="the client sends a well-formed AMQP 1.0.0 protocol header as soon as it connects, before the server says anything",
      clauses=("amqp10:2.2/4", "amqp10:2.2/6", "amqp10:2.2/1"))
def header_at_once(ctx: Context) -> None:
    p = play(ctx, "connect")
    first = p.peer.recv(QUICK)
    ok = isinstance(first, ProtocolHeader) and header_ok(first) and first.protocol_id in (0, 3)
    ctx.record(ok, expected=f"a protocol header AMQP 0|3 1.0.0 within {QUICK:g} s of connecting",
               observed=first.summary() if hasattr(first, "summary") else f"{first!r}" if first is not None
               else f"nothing within {QUICK:g} s")
    if ok:
        p.peer.stage, p.peer.negotiated.first_header = "header", first
        if first.protocol_id == 0:
            p.peer.negotiated.amqp_header = first
        p.handshake()
        p.serve()
    p.finish()


@case("amqp10/2.2/client-closes-on-header-mismatch", role="client",
      title="answered with an AMQP 1.0.1 header, the client closes its outgoing stream (a pipelined open aside)",
      clauses=("amqp10:2.2/3",))
def header_mismatch(ctx: Context) -> None:
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    if n.first_header is not None and n.first_header.protocol_id == 3:
        p.handshake(upto="amqp", amqp_header=ProtocolHeader.of(0, 1, 0, 1))
    else:
        p.peer.send(ProtocolHeader.of(0, 1, 0, 1))
    obs = p.peer.observe(QUICK * 2, reply_close=False)
    extra = [f for f in obs.received if not isinstance(f, (EmptyFrame, ProtocolHeader))]
    pipelined_open = bool(extra) and named(extra[:1], "open") and len(extra) == 1
    ok = obs.closed and (not extra or bool(pipelined_open))
    ctx.record(ok, expected="the client closes the socket, sending nothing after its header (but a pipelined open)",
               observed=client_closed(obs))
    p.finish()


@case("amqp10/2.2/client-reads-split-header", role="client",
      title="the server's protocol header arriving one octet per TCP segment is read whole: the client goes on to open",
      clauses=("amqp10:0.2/1",))
def reads_split_header(ctx: Context) -> None:
    # "perform protocol negotiation" (0.2/1) whatever the segmenting: the eight octets of our
    # header are sent one by one, 20 ms apart (far enough apart that a loaded reader still meets them
    # as separate reads), then the opening goes on as usual
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    sasl = n.first_header is not None and n.first_header.protocol_id == 3
    header = ProtocolHeader.sasl() if sasl else ProtocolHeader.amqp()
    p.peer.send_slowly(header.encode(), chunk=1, pause=0.02)
    try:
        n = p.handshake(sasl_header=b"") if sasl else p.handshake(amqp_header=b"")
    except PeerError as exc:
        ctx.record(False, expected="the opening goes on (the client's next SASL frame or open)", observed=str(exc))
        p.finish()
        return
    obs = p.serve()
    ctx.record(n.client_open is not None, expected="the client's open after our split header",
               observed=f"open from the client; {client_closed(obs)}")
    p.finish()


@case("amqp10/2.2/client-closes-on-protocol-id-mismatch", role="client",
      title="answered with a header of another protocol id (AMQP 0 to its SASL 3, or SASL 3 to its AMQP 0), the client closes its outgoing stream",
      clauses=("amqp10:2.2/3",))
def protocol_id_mismatch(ctx: Context) -> None:
    # headers that differ in protocol id do not match any more than headers that differ in
    # version: the client closes, sending nothing after its header (a pipelined open aside)
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    theirs = n.first_header.protocol_id if n.first_header is not None else 0
    p.peer.send(ProtocolHeader.amqp() if theirs == 3 else ProtocolHeader.sasl())
    obs = p.peer.observe(QUICK * 2, reply_close=False)
    extra = [f for f in obs.received if not isinstance(f, (EmptyFrame, ProtocolHeader))]
    pipelined_open = theirs == 0 and len(extra) == 1 and bool(named(extra, "open"))
    ctx.record(obs.closed and (not extra or pipelined_open),
               expected=f"the client (header AMQP {theirs}) closes the socket, sending nothing after its header"
                        + (" (but a pipelined open)" if theirs == 0 else ""),
               observed=client_closed(obs))
    p.finish()
