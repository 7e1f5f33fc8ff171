"""RabbitMQ's basic.nack and publisher confirms, as the client sends and receives them.

basic.nack, sent by a client: "The client MUST NOT use this method as a means of selecting
messages to process" (rabbitmq091:basic.nack/03) -- judged as basic.reject/03 is (see
class_basic_settlement): a workload that processes every message it is given turns none away.

basic.nack and basic.ack, sent by the server on a confirm channel: "A message MUST not be
rejected more than once. The receiving peer MUST validate that a non-zero delivery-tag refers
to an unacknowledged, delivered message, and raise a channel exception if this is not the
case" (rabbitmq091:basic.nack.multiple/exists, on-failure precondition-failed): a second nack
of the same publish, or a nack of one already acked, names a message that is no longer
unacknowledged -- channel exception 406. The confirms a client must take: an ack or a nack with
multiple set and tag zero ("this indicates acknowledgement [rejection] of all outstanding
messages"), a nack with multiple set covering several publishes, and confirms that come in
another order than the publishes ("No guarantees are made as to how soon a message is acknowledged. Applications
SHOULD NOT make assumptions about this", rabbitmq091:confirm/time-guarantees: the third
publish may be confirmed before the first). A nack's requeue flag is the server's business:
"Clients receiving the Nack methods should ignore this flag" -- a nack with requeue set still
tells the application its message was not confirmed. "Published messages are assigned
ascending sequence numbers, starting at 1 with the first Confirm.Select method": the ack of 1
and the nack of 2 confirm the first message and refuse the second. And confirm mode is for channels without
transactions: "The client can only use this method on a non-transactional channel"
(confirm.select).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import spec

from ._client import needs_driver, open_conversation, unmet
from ._confirm import hears, no_exception, refused, sending, serve_confirms, three_answered
from ._settle import no_turning_away, serve_preloaded

NOT_SELECTING = ("rabbitmq091:basic.nack/03",)
VALIDATED = ("rabbitmq091:basic.nack.multiple/exists",)
NO_TIMING = ("rabbitmq091:confirm/time-guarantees",)
ALL_OUTSTANDING = ("If the multiple field is 1, and the delivery tag is zero, this indicates acknowledgement of all "
                   "outstanding messages.")
NACK_ALL_OUTSTANDING = ("If the multiple field is 1, and the delivery tag is zero, this indicates rejection of all "
                        "outstanding messages.")
NACK_MULTIPLE = ('If set to 1, the delivery tag is treated as "up to and including", so that multiple messages can be '
                 'rejected with a single method.')
SEQUENCE = "Published messages are assigned ascending sequence numbers, starting at 1 with the first Confirm.Select method."
IGNORE_REQUEUE = "Clients receiving the Nack methods should ignore this flag."
NOT_TRANSACTED = "The client can only use this method on a non-transactional channel."


@case("amqp091/rabbitmq.basic.nack/client-nacks-no-consumed-message", role="client",
      title="a consumer given exactly the three messages it asks for nacks none of them",
      clauses=NOT_SELECTING)
def nacks_no_consumed(ctx: Context) -> None:
    serve_preloaded(ctx, "consume", 3, True, lambda p, obs: no_turning_away(ctx, p, obs, "basic.nack"))


@case("amqp091/rabbitmq.basic.nack/client-nacks-no-fetched-message", role="client",
      title="two messages fetched with basic.get to be processed are not nacked",
      clauses=NOT_SELECTING)
def nacks_no_fetched(ctx: Context) -> None:
    serve_preloaded(ctx, "get", 2, True, lambda p, obs: no_turning_away(ctx, p, obs, "basic.nack"))


def _refuses_second_confirm(ctx: Context, first: spec.BasicAck | spec.BasicNack) -> None:
    """The publish is confirmed with ``first`` and then nacked: the nack names a message that
    is no longer unacknowledged, which the client must refuse with channel exception 406."""
    refused(ctx, lambda seq: (first, spec.BasicNack(seq, False, False)))


@case("amqp091/rabbitmq.basic.nack/client-refuses-second-nack", role="client",
      title="a second nack of the same publish is refused with a channel exception (406)",
      clauses=VALIDATED)
def refuses_second_nack(ctx: Context) -> None:
    _refuses_second_confirm(ctx, spec.BasicNack(1, False, False))


@case("amqp091/rabbitmq.basic.nack/client-refuses-nack-after-ack", role="client",
      title="a nack of a publish already acked is refused with a channel exception (406)",
      clauses=VALIDATED)
def refuses_nack_after_ack(ctx: Context) -> None:
    _refuses_second_confirm(ctx, spec.BasicAck(1, False))


def _taken(ctx: Context, count: int, confirm: spec.BasicAck | spec.BasicNack, acked: bool, what: str,
           guideline: str) -> None:
    """Each publish is answered with ``confirm`` alone: no exception, and the application hears
    all ``count`` publishes confirmed as ``acked``."""
    p, obs = serve_confirms(ctx, count, lambda p: sending(p, lambda seq: (confirm,)))
    no_exception(ctx, what, obs, guideline=guideline)
    hears(ctx, p, acked, set(range(1, count + 1)), guideline)


@case("amqp091/rabbitmq.confirm/client-takes-ack-of-all-outstanding", role="client",
      title="basic.ack with multiple set and tag zero confirms every outstanding publish",
      guideline=ALL_OUTSTANDING)
def takes_ack_all_outstanding(ctx: Context) -> None:
    _taken(ctx, 3, spec.BasicAck(0, True), True, "no exception for the ack of all outstanding", ALL_OUTSTANDING)


@case("amqp091/rabbitmq.confirm/client-takes-nack-of-all-outstanding", role="client",
      title="basic.nack with multiple set and tag zero rejects every outstanding publish, and the application hears it",
      guideline=NACK_ALL_OUTSTANDING)
def takes_nack_all_outstanding(ctx: Context) -> None:
    _taken(ctx, 2, spec.BasicNack(0, True, False), False, "no exception for the nack of all outstanding",
           NACK_ALL_OUTSTANDING)


@case("amqp091/rabbitmq.confirm/client-numbers-publishes-from-one", role="client",
      title="an ack for sequence number 1 and a nack for 2 reach the application as the first message confirmed, the second not",
      guideline=SEQUENCE)
def numbers_from_one(ctx: Context) -> None:
    p = open_conversation(ctx, "confirm", count=2)
    p.responder.confirm_ack = lambda seq: seq != 2
    obs = p.serve()
    if len(p.responder.contents) < 2:
        unmet("two publishes on a confirm channel", obs)
    no_exception(ctx, "no exception for the confirms", obs, guideline=SEQUENCE)
    if p.driver is not None:
        out = needs_driver(p)
        heard = {e.get("n"): e.get("ack") for e in out.named("confirmed")}
        ctx.record(heard.get(1) is True and heard.get(2) is False, what="each confirm reaches its own message",
                   guideline=SEQUENCE, expected="confirmed n=1 ack=true, n=2 ack=false", observed=out.summary())


LATER_FIRST = "no confirm can come for a later message before an earlier one"


@case("amqp091/rabbitmq.confirm/client-takes-nack-multiple", role="client",
      title="one basic.nack with multiple set rejects all three publishes up to its tag, and the application hears it",
      guideline=NACK_MULTIPLE)
def takes_nack_multiple(ctx: Context) -> None:
    three_answered(ctx, LATER_FIRST, [spec.BasicNack(3, True, False)], False, "no exception for the multiple nack",
                   NACK_MULTIPLE)


@case("amqp091/rabbitmq.confirm/client-takes-confirms-out-of-order", role="client",
      title="acks for three publishes sent third, second, first are each taken, with no exception",
      clauses=NO_TIMING)
def takes_out_of_order(ctx: Context) -> None:
    three_answered(ctx, LATER_FIRST, [spec.BasicAck(n, False) for n in (3, 2, 1)], True,
                   "no exception for the reordered confirms")


@case("amqp091/rabbitmq.basic.nack/client-ignores-requeue-of-nack", role="client",
      title="a nack with requeue set is still a nack: no exception, the application hears the publish was not confirmed",
      guideline=IGNORE_REQUEUE)
def ignores_requeue(ctx: Context) -> None:
    p, obs = serve_confirms(ctx, 1, lambda p: sending(p, lambda seq: (spec.BasicNack(seq, False, True),)))
    no_exception(ctx, "no exception for the nack", obs, guideline=IGNORE_REQUEUE)
    hears(ctx, p, False, {1}, IGNORE_REQUEUE)


@case("amqp091/rabbitmq.confirm.select/client-confirms-non-transactional-channel", role="client",
      title="confirm.select comes on a channel the client did not select for transactions",
      guideline=NOT_TRANSACTED)
def confirms_non_transactional(ctx: Context) -> None:
    p = open_conversation(ctx, "confirm", count=1)
    obs = p.serve()
    selects = obs.methods("confirm.select")
    if not selects:
        unmet("confirm.select", obs)
    transacted = {f.channel for f in obs.methods("tx.select")}
    wrong = [f.summary() for f in selects if f.channel in transacted]
    ctx.record(not wrong, guideline=NOT_TRANSACTED, expected="confirm.select only on channels without tx.select",
               observed=("after tx.select: " + "; ".join(wrong)) if wrong else "; ".join(f.summary() for f in selects))
    p.finish()
