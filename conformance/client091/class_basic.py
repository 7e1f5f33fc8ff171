"""The basic class, as the client acknowledges and cancels.

"The delivery tag is valid only within the channel from which the message was received.
I.e. a client MUST NOT receive a message on one channel and then acknowledge it on another"
(domain.delivery-tag/channel-local): every ack names a tag we delivered on its own channel
-- also when our tags are large 64-bit numbers, which a client must echo exactly. "The client
MUST NOT rely on the redelivered field but should take it as a hint" (domain.redelivered/
hinting): a delivery flagged redelivered still reaches the application. "The consumer tag is
valid only within the channel from which the consumer was created" (basic.consume.
consumer-tag/02): the cancel names the consumer on its own channel.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame

from ._client import needs_driver, open_conversation, unmet

CHANNEL_LOCAL = ("amqp091:domain.delivery-tag/channel-local",)


def _acks_match(ctx: Context, p, obs) -> None:  # type: ignore[no-untyped-def]
    delivered = set(p.responder.delivered)
    if not delivered:
        unmet("a delivery to acknowledge", obs)
    acks = [(ch, f) for ch, f in p.responder.acks]
    if not acks:
        unmet("an acknowledgement from the client (ack=true)", obs)
    wrong = []
    for ch, f in acks:
        tag, multiple = int(f.method.delivery_tag), bool(getattr(f.method, "multiple", False))
        if multiple and tag == 0:
            continue  # "all messages so far received" on this channel
        if (ch, tag) not in delivered:
            wrong.append(f.summary())
    ctx.record(not wrong, expected="acknowledgements naming delivery tags we delivered on the same channel: "
               + ", ".join(f"ch={c} tag={t}" for c, t in sorted(delivered)[:6]),
               observed="; ".join(wrong[:4]) or f"{len(acks)} acknowledgement(s), all matching")


@case("amqp091/domain.delivery-tag/client-acks-on-delivery-channel", role="client",
      title="the client acknowledges three deliveries with their tags, on the channel they came on",
      clauses=CHANNEL_LOCAL)
def acks_on_channel(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=3, ack=True)
    p.responder.preload("amqpspec-q", ["one", "two", "three"])
    obs = p.serve()
    _acks_match(ctx, p, obs)
    p.finish()


@case("amqp091/domain.delivery-tag/client-echoes-large-tags", role="client",
      title="delivery tags above 2^40 are acknowledged exactly",
      clauses=CHANNEL_LOCAL)
def large_tags(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=2, ack=True)
    p.responder.preload("amqpspec-q", ["one", "two"])
    for ch in range(1, 4):
        p.responder.next_tag[ch] = (1 << 40) + 7
    obs = p.serve()
    _acks_match(ctx, p, obs)
    p.finish()


@case("amqp091/domain.delivery-tag/client-acks-get-on-its-channel", role="client",
      title="a message fetched with basic.get is acknowledged with its tag on its channel",
      clauses=CHANNEL_LOCAL)
def get_ack(ctx: Context) -> None:
    p = open_conversation(ctx, "get", count=1, ack=True)
    p.responder.preload("amqpspec-q", ["fetched"])
    obs = p.serve()
    _acks_match(ctx, p, obs)
    p.finish()


@case("amqp091/domain.redelivered/client-delivers-redelivered", role="client",
      title="a delivery flagged redelivered still reaches the application",
      clauses=("amqp091:domain.redelivered/hinting",))
def redelivered(ctx: Context) -> None:
    _redelivered_reaches_application(ctx, "consume")


def _redelivered_reaches_application(ctx: Context, workload: str) -> None:
    p = open_conversation(ctx, workload, count=1, ack=True)
    p.responder.preload("amqpspec-q", ["again"])
    p.responder.queues["amqpspec-q"][0].redelivered = True
    p.serve()
    out = needs_driver(p)
    got = out.named("delivered")
    ok = bool(got) and got[0].get("body") == "again"
    ctx.record(ok, expected="the redelivered message handed to the application (a delivered event, body 'again')",
               observed=f"delivered {got[0]}" if got else out.summary())


@case("amqp091/domain.redelivered/client-gets-redelivered", role="client",
      title="a message fetched with basic.get flagged redelivered still reaches the application",
      clauses=("amqp091:domain.redelivered/hinting",))
def get_redelivered(ctx: Context) -> None:
    _redelivered_reaches_application(ctx, "get")


@case("amqp091/basic.consume/client-cancels-on-consumer-channel", role="client",
      title="the client cancels its consumer with the consumer's tag, on the consumer's channel",
      clauses=("amqp091:basic.consume.consumer-tag/02",))
def cancel_on_channel(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1, ack=True)
    p.responder.preload("amqpspec-q", ["one"])
    obs = p.serve()
    cancels = obs.methods("basic.cancel")
    if not p.responder.consumer_log or not cancels:
        unmet("basic.consume and then basic.cancel", obs)
    known = {(c.channel, c.tag) for c in p.responder.consumer_log}
    wrong = [f.summary() for f in cancels if (f.channel, str(f.method.consumer_tag)) not in known]
    ctx.record(not wrong, expected="basic.cancel naming a consumer of the same channel: "
               + ", ".join(f"ch={c} {t}" for c, t in sorted(known)),
               observed="; ".join(wrong) or "; ".join(f.summary() for f in cancels))
    p.finish()



@case("amqp091/basic.consume/client-consumer-tag-not-in-use", role="client",
      title="a consumer tag the client names in basic.consume is not the tag of a consumer it already has",
      clauses=("amqp091:basic.consume.consumer-tag/01",))
def tag_not_in_use(ctx: Context) -> None:
    """"The client MUST NOT specify a tag that refers to an existing consumer": each
    basic.consume is checked against the consumers open on its channel when it arrives (an
    empty tag asks the server to make one, and is always allowed)."""
    p = open_conversation(ctx, "consume", count=2, ack=True)
    p.responder.preload("amqpspec-q", ["one", "two"])
    reused: list[str] = []

    def consuming(frame: MethodFrame) -> None:
        tag = str(frame.method.consumer_tag)
        if tag and (frame.channel, tag) in p.responder.consumers:
            reused.append(frame.summary())
        return None  # the default answer follows

    p.responder.on("basic.consume", consuming)
    obs = p.serve()
    consumes = obs.methods("basic.consume")
    if not consumes:
        unmet("basic.consume", obs)
    ctx.record(not reused, expected="each basic.consume with an empty tag or one no open consumer of its channel has",
               observed="; ".join(reused) or "; ".join(f.summary() for f in consumes))
    p.finish()
