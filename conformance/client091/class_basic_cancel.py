"""basic.cancel, as the client that cancels its consumer meets the messages still in flight.

"This does not affect already delivered messages, but it does mean the server will not send
any more messages for that consumer. The client may receive an arbitrary number of messages in
between sending the cancel method and receiving the cancel-ok reply" (basic.cancel): a
delivery that comes after the client's basic.cancel and before our cancel-ok is a normal
event, not a protocol error -- the client raises no exception, neither on the wire (a channel
or connection close with an error code) nor to its application (the driver's error event).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.server091_responder import Message
from amqpspec.wire.amqp091 import MethodFrame

from ._client import describe_errors, error_closes, open_conversation, unmet

IN_FLIGHT = ("The client may receive an arbitrary number of messages in between sending the cancel method and "
             "receiving the cancel-ok reply.")


@case("amqp091/basic.cancel/client-takes-delivery-before-cancel-ok", role="client",
      title="a delivery between the client's basic.cancel and cancel-ok raises no exception",
      guideline=IN_FLIGHT)
def takes_delivery_before_cancel_ok(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1, ack=True)
    p.responder.preload("amqpspec-q", ["first"])
    late: list[int] = []

    def deliver_then_cancel_ok(frame: MethodFrame) -> None:
        consumer = p.responder.consumers.get((frame.channel, str(frame.method.consumer_tag)))
        if consumer is not None:
            late.append(p.responder.deliver(consumer, Message(b"in flight")))
        return None  # the default answer: cancel-ok

    p.responder.on("basic.cancel", deliver_then_cancel_ok)
    obs = p.serve()
    if not late:
        unmet("basic.cancel of the consumer", obs)
    errors = error_closes(obs)
    out = p.finish()
    # the library may also raise the "error" to its application alone (the driver reports it)
    raised = out.named("error") if p.driver is not None else []
    ctx.record(not errors and not raised, guideline=IN_FLIGHT,
               expected="no exception for the delivery in flight, on the wire or to the application",
               observed=describe_errors(errors) + (f"; driver: {out.summary()}" if raised else ""))
