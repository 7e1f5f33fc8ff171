"""2.4.2 Pipelined open, from the client's side: the server's header and open arrive before the
client has sent its own.

"For applications that use many short-lived connections, it MAY be desirable to pipeline the
connection negotiation process. A peer MAY do this by starting to send subsequent frames
before receiving the partner's connection header or open frame" (2.4.2/1, 2.4.2/2). The MAY
is the server's here; the client has to take what it is allowed to send: the playing broker
writes its AMQP header and its open in the very segment that carries its successful
sasl-outcome (or right after the client's AMQP header, when the client does not use SASL),
before the client's AMQP header and open. A client that parses the stream "in accordance
with the format" (0.2/1) reads them in order once it gets there -- it opens and does its work.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.base import PeerError
from amqpspec.peer.server10 import MAX_FRAME_SIZE
from amqpspec.wire.amqp10 import AMQPFrame, ProtocolHeader, encode, frame, spec

from ._client import client_closed, error_frames, named, play


@case("amqp10/2.4.2/client-accepts-pipelined-open", role="client",
      title="the server's AMQP header and open, pipelined with its sasl-outcome before the client's header, do not stop the client's send workload",
      clauses=("amqp10:2.4.2/2", "amqp10:0.2/1"))
def accepts_pipelined_open(ctx: Context) -> None:
    p = play(ctx, "send", count=1)
    n = p.handshake(upto="header")
    ahead = encode(ProtocolHeader.amqp()) + encode(AMQPFrame(0, spec.Open(container_id="amqpspec-broker",
                                                                          max_frame_size=MAX_FRAME_SIZE)))
    sasl = n.first_header is not None and n.first_header.protocol_id == 3
    ctx.transcript.event("the server pipelines its AMQP header and open" +
                         (" with its sasl-outcome (one segment)" if sasl else " after the client's header"))
    try:
        if sasl:
            p.handshake(upto="sasl", sasl_outcome=encode(frame(spec.SaslOutcome(code=0))) + ahead)
            p.handshake(amqp_header=b"", open=b"")
        else:
            p.handshake(amqp_header=ahead, open=b"")
    except PeerError as exc:
        ctx.record(False, expected="the client's AMQP header and open, then its work", observed=f"{exc}")
        p.finish()
        return
    obs = p.serve()
    errors = error_frames(obs.received)
    sent = named(obs.received, "transfer")
    ctx.record(bool(sent) and not errors, expected="the client opened and sent its message, no error",
               observed=f"{len(sent)} transfer(s); {client_closed(obs)}")
    p.finish()
