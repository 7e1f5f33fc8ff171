"""Spec 4.7 Content Ordering Guarantees.

A content processing path is one incoming channel, one exchange, one queue and one outgoing
channel; along it the server MUST preserve the order of contents, "unless the redelivered
field is set on the Basic.Deliver or Basic.Get-Ok methods" (4.7/1). The cases publish numbered
messages on one channel and read them on one channel: by consumer, by basic.get, through a
named exchange, and with some of them redelivered.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._content import body, gather, get_all, get_message, publish_n, shown, start_consumer, wait_queued
from ._model import WAIT, Message, bind, close_channel, declare_exchange, declare_queue, publish

ORDER = ("amqp091:4.7/1",)


def first_difference(sent: list[bytes], got: list[bytes]) -> str:
    if got == sent:
        return f"{len(got)} messages in publishing order"
    at = next((i for i, (a, b) in enumerate(zip(sent, got)) if a != b), min(len(sent), len(got)))
    around = shown(got[max(0, at - 2):at + 3])
    return f"{len(got)} of {len(sent)} messages; first difference at position {at}: ... {around} ..."


@case("amqp091/4.7/one-path-consume", title="100 messages of mixed sizes published on one channel are consumed in order",
      clauses=ORDER)
def one_path_consume(ctx: Context) -> None:
    """Connection 2 consumes (no-ack) from a queue; connection 1 publishes 100 numbered messages to it
    on one channel through the default exchange, every tenth with a body of two frames.
    The consumer must receive them in publishing order."""
    consumer = ctx.connect()
    cch = consumer.open_channel()
    q = declare_queue(ctx, consumer, cch)
    tag, got = start_consumer(consumer, cch, q)
    producer = ctx.connect()
    pch = producer.open_channel()
    big = (producer.negotiated.frame_max or 4096) + 100  # two body frames
    sent = []
    for i in range(100):
        b = body(i) + (ctx.rng.randbytes(big) if i % 10 == 9 else b"")
        publish(producer, pch, "", q, b)
        sent.append(b)
    gather(consumer, timeout=WAIT, count=100, into=got)
    received = [m.body for m in got.deliveries(cch, tag)]
    ctx.record(received == sent, expected="100 messages in publishing order",
               observed=first_difference([s[:5] for s in sent], [r[:5] for r in received]))


@case("amqp091/4.7/one-path-get", title="50 messages published on one channel come back in order by basic.get",
      clauses=ORDER)
def one_path_get(ctx: Context) -> None:
    """Publishes 50 numbered messages to a queue on one channel and reads them with basic.get on one
    channel: they must come in publishing order."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    sent = publish_n(peer, ch, q, 50)
    wait_queued(peer, ch, q, 50)
    got = [m.body for m in get_all(peer, ch, q)]
    ctx.record(got == sent, expected="50 messages in publishing order", observed=first_difference(sent, got))


@case("amqp091/4.7/one-path-named-exchange",
      title="50 messages through a fanout exchange to an explicit-ack consumer arrive in order", clauses=ORDER)
def one_path_named_exchange(ctx: Context) -> None:
    """A fanout exchange with one bound queue and an explicit-ack consumer on another channel;
    50 numbered messages published to the exchange on one channel must arrive in publishing order."""
    peer = ctx.connect()
    pch, cch = peer.open_channel(), peer.open_channel()
    x = declare_exchange(ctx, peer, pch, "fanout")
    q = declare_queue(ctx, peer, pch)
    bind(peer, pch, q, x)
    tag, got = start_consumer(peer, cch, q, no_ack=False)
    sent = publish_n(peer, pch, "", 50, exchange=x)
    gather(peer, timeout=WAIT, count=50, into=got)
    msgs = got.deliveries(cch, tag)
    if msgs:
        peer.send(MethodFrame(cch, spec.BasicAck(msgs[-1].delivery_tag, True)))
    received = [m.body for m in msgs]
    ctx.record(received == sent, expected="50 messages in publishing order", observed=first_difference(sent, received))


def out_of_order_unflagged(msgs: list[Message]) -> list[str]:
    """Messages delivered after one published later, without the redelivered flag."""
    bad, highest = [], -1
    for m in msgs:
        n = int(m.body[1:])
        if n < highest and not m.redelivered:
            bad.append(f"{m.body.decode()} after m{highest:04d}, redelivered false")
        highest = max(highest, n)
    return bad


@case("amqp091/4.7/redelivered-may-reorder",
      title="messages delivered out of publishing order are exactly the ones flagged redelivered", clauses=ORDER)
def redelivered_may_reorder(ctx: Context) -> None:
    """Publishes m0..m9; channel 1 fetches m0..m4 with basic.get (no-ack false), acks m0, m2, m4 and
    closes, so m1 and m3 are requeued (4.5); a consumer on another connection then takes the rest.
    Every message that arrives after a later-published one must carry the redelivered flag (4.7/1
    allows reordering only for those)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish_n(peer, ch, q, 10)
    wait_queued(peer, ch, q, 10)
    fetched = [get_message(peer, ch, q, no_ack=False) for _ in range(5)]
    for m in fetched:
        if m is not None and m.body in (body(0), body(2), body(4)):
            peer.send(MethodFrame(ch, spec.BasicAck(m.delivery_tag, False)))
    close_channel(peer, ch)
    other = ctx.connect()
    och = other.open_channel()
    tag, got = start_consumer(other, och, q)
    gather(other, timeout=WAIT, count=7, into=got)
    msgs = got.deliveries(och, tag)
    order = ", ".join(f"{m.body.decode()}{'(r)' if m.redelivered else ''}" for m in msgs)
    ctx.note(f"delivery order ((r) = redelivered): {order}")
    bad = out_of_order_unflagged(msgs)
    ctx.record(not bad, expected="any message out of publishing order flagged redelivered",
               observed="; ".join(bad) if bad else f"order {order}")
