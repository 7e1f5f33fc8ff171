"""basic.get-empty, as the client takes it.

"This method tells the client that the queue has no messages available for the client"
(basic.get-empty): an ordinary answer to basic.get, which the client's chassis implements
("<chassis name="client" implement="MAY"/>" -- a client that sends basic.get takes either
answer of "C:GET ( S:GET-OK content / S:GET-EMPTY )"). It raises no channel or connection
exception, the application hears that the queue was empty (the driver's ``empty`` event), and
the channel stays usable: a later basic.get that finds a message takes it.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import describe_errors, error_closes, open_conversation, unmet

EMPTY = "This method tells the client that the queue has no messages available for the client."


@case("amqp091/basic.get-empty/client-takes-get-empty", role="client",
      title="two basic.get on an empty queue are answered get-empty: no exception, the application hears it",
      guideline=EMPTY)
def takes_get_empty(ctx: Context) -> None:
    p = open_conversation(ctx, "get", count=2, ack=True)
    obs = p.serve()
    if not obs.methods("basic.get"):
        unmet("basic.get", obs)
    errors = error_closes(obs)
    ctx.record(not errors, what="no exception for get-empty", guideline=EMPTY,
               expected="no channel or connection exception", observed=describe_errors(errors))
    out = p.finish()
    if p.driver is not None:
        ctx.record(bool(out.named("empty")), what="the application hears the queue was empty", guideline=EMPTY,
                   expected="an empty event", observed=out.summary())


@case("amqp091/basic.get-empty/client-gets-after-get-empty", role="client",
      title="after a get-empty, the next basic.get's message is taken and acknowledged",
      guideline=EMPTY)
def gets_after_empty(ctx: Context) -> None:
    p = open_conversation(ctx, "get", count=2, ack=True)
    p.responder.preload("amqpspec-q", ["after-empty"])
    gets: list[MethodFrame] = []

    def first_empty(frame: MethodFrame) -> bool | None:
        gets.append(frame)
        if len(gets) > 1:
            return None  # the default answer: get-ok with the message
        p.peer.send(MethodFrame(frame.channel, spec.BasicGetEmpty()))
        return False

    p.responder.on("basic.get", first_empty)
    obs = p.serve()
    if not gets:
        unmet("basic.get", obs)
    errors = error_closes(obs)
    acked = {(ch, int(f.method.delivery_tag)) for ch, f in p.responder.acks if f.method.NAME == "basic.ack"}
    taken = bool(p.responder.delivered) and set(p.responder.delivered) <= acked
    ctx.record(taken and not errors, guideline=EMPTY,
               expected="the message of the second basic.get acknowledged, no exception",
               observed=f"{len(gets)} basic.get; delivered {p.responder.delivered}, acknowledged {sorted(acked)}; "
               f"{describe_errors(errors)}")
    p.finish()
