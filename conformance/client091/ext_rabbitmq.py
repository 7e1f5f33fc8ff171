"""RabbitMQ extensions a client meets from the server's side: confirms and nacks, consumer
cancel notification, connection.blocked.

"A client publishing messages to a channel in confirm mode SHOULD be capable of accepting
and somehow handling the Nack method" (rabbitmq091:basic.nack/04): a nack for the first
message ends neither the channel nor the connection, and the library tells its application
(a ``confirmed`` event with ack false). "No guarantees are made as to how soon a message is
acknowledged. Applications SHOULD NOT make assumptions about this"
(rabbitmq091:confirm/time-guarantees): confirms held back 1.5 s are still awaited.

basic.cancel "may also be sent from the server to the client in the event of the consumer
being unexpectedly cancelled"; clients announce that they take it with
``capabilities.consumer_cancel_notify`` in client-properties, and ``connection.blocked``
likewise -- "This method indicates that a connection has been blocked and does not accept
new publishes": a client that announced it publishes nothing until connection.unblocked.
A client that does not announce a capability is not sent the method (skipped).
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import QUICK, describe_errors, error_closes, needs_driver, open_conversation, unmet
from ._confirm import no_exception, refused, serve_confirms, three_answered
from ._rabbitmq import announced, holds_while_blocked

NACK_HANDLED = ("rabbitmq091:basic.nack/04",)
NO_TIMING = ("rabbitmq091:confirm/time-guarantees",)
SENT_BY_SERVER = ("It may also be sent from the server to the client in the event of the consumer being unexpectedly "
                  "cancelled (i.e. cancelled for any reason other than the server receiving the corresponding "
                  "basic.cancel from the client). This allows clients to be notified of the loss of consumers due "
                  "to events such as queue deletion.")
BLOCKED = "This method indicates that a connection has been blocked and does not accept new publishes."
HOLD_S = 1.5
NACK_VALIDATED = ("rabbitmq091:basic.nack.multiple/exists",)
MULTIPLE = ('If set to 1, the delivery tag is treated as "up to and including", so that multiple messages can be '
            'acknowledged with a single method.')


@case("amqp091/rabbitmq.basic.nack/client-takes-nack", role="client",
      title="a nack for the first of two confirmed publishes raises no exception and reaches the application",
      clauses=NACK_HANDLED)
def takes_nack(ctx: Context) -> None:
    p, obs = serve_confirms(ctx, 2, lambda p: lambda seq: seq != 1)
    no_exception(ctx, "no exception for the nack", obs)
    if p.driver is not None:
        out = needs_driver(p)
        nacked = [e for e in out.named("confirmed") if e.get("ack") is False]
        ctx.record(bool(nacked), what="the application hears of the nack",
                   expected="a confirmed event with ack=false", observed=out.summary())


@case("amqp091/rabbitmq.confirm/client-waits-for-late-confirms", role="client",
      title="confirms held back 1.5 s are awaited, with no exception",
      clauses=NO_TIMING)
def waits_for_late_confirms(ctx: Context) -> None:
    def late(seq: int) -> bool:
        time.sleep(HOLD_S)
        return True

    p, obs = serve_confirms(ctx, 2, lambda p: late)
    errors = error_closes(obs)
    closed_early = obs.end in ("fin", "rst") and not obs.methods("connection.close")
    ctx.record(not errors and not closed_early, expected="the client waits for the confirms and closes normally",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/rabbitmq.basic.cancel/client-takes-server-cancel", role="client",
      title="a basic.cancel from the server (client announced consumer_cancel_notify) raises no exception",
      guideline=SENT_BY_SERVER)
def takes_server_cancel(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=2)
    announced(p, "consumer_cancel_notify")
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    del p.responder.consumers[(consumer.channel, consumer.tag)]
    p.peer.send(MethodFrame(consumer.channel, spec.BasicCancel(consumer.tag, True)))
    obs = p.serve(QUICK * 1.5)
    errors = error_closes(obs)
    ctx.record(not errors, expected="no channel or connection exception for the server's basic.cancel",
               observed=describe_errors(errors), guideline=SENT_BY_SERVER)
    p.finish()


@case("amqp091/rabbitmq.connection.blocked/client-holds-publishes", role="client",
      title="after connection.blocked (client announced connection.blocked) nothing is published until unblocked",
      guideline=BLOCKED)
def holds_publishes(ctx: Context) -> None:
    holds_while_blocked(ctx, "publish", 3, HOLD_S, BLOCKED, timed=True)


@case("amqp091/rabbitmq.basic.nack/client-rejects-nack-of-unknown-tag", role="client",
      title="a nack naming a delivery tag the client never published is refused with a channel exception (406)",
      clauses=NACK_VALIDATED)
def rejects_unknown_nack(ctx: Context) -> None:
    """The extended XML's basic.nack is sent by the server in confirm mode, and its rule binds
    "the receiving peer": a non-zero delivery-tag must refer to an unacknowledged, delivered
    (here: published) message, else a channel exception (on-failure precondition-failed)."""
    # the stray nack goes first, then the responder's ack of the real publish
    refused(ctx, lambda seq: (spec.BasicNack(99, False, False),), then=True)


@case("amqp091/rabbitmq.confirm/client-takes-multiple-ack", role="client",
      title="one basic.ack with multiple set confirms all three publishes up to its tag",
      guideline=MULTIPLE)
def takes_multiple_ack(ctx: Context) -> None:
    three_answered(ctx, "no single ack can cover several of its messages", [spec.BasicAck(3, True)], True,
                   "no exception for the multiple ack", MULTIPLE, heard="the application hears all three confirmed")
