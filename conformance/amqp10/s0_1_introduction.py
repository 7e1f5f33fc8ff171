"""Spec 0.1 Introduction (overview): "Every compliant AMQP process MUST be able to send and
receive messages in this standard encoding." Checked end to end: a message in the standard
encoding sent to a node comes back from it and decodes as one."""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.session10 import begin
from amqpspec.wire.amqp10 import Message, spec

from ._common import WAIT, address, link_name


@case("amqp10/0.1/standard-encoding-round-trip", title="a message in the standard encoding is accepted and delivered back",
      clauses=("amqp10:0.1/1",))
def standard_encoding_round_trip(ctx: Context) -> None:
    """Sends one message (properties, application-properties, amqp-value body) to a node of its own
    and receives it on a second link: the broker must take it and deliver a message that decodes
    in the standard encoding with the same body."""
    s = begin(ctx.connect(), timeout=5.0)
    addr = address(ctx)
    snd = s.sender(addr, name=link_name(ctx, "snd"))
    body = f"round-trip-{ctx.rng.getrandbits(32):08x}"
    snd.send(Message(properties=spec.Properties(message_id=body), body=body))
    rcv = s.receiver(addr, name=link_name(ctx, "rcv"), credit=1)
    got = rcv.receive(1, WAIT)
    decoded = got[0].message() if got else None
    ok = decoded is not None and not decoded.problems and str(getattr(decoded.body, "value", decoded.body)) == body
    ctx.record(ok, expected=f"one message back, decoding cleanly, with body {body!r}",
               observed="nothing delivered" if not got else
               f"body {decoded.body!r}; problems: {decoded.problems or 'none'}")
