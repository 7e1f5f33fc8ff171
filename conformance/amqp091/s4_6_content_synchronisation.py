"""Spec 4.6 Content Synchronisation.

basic.consume / cancel start and stop deliveries, basic.recover asks for redeliveries, and
queue.bind / unbind / purge change what enters a queue. "The effects of the request-response
MUST NOT be visible on the channel before the response method, and MUST be visible thereafter"
(4.6/1). The cases watch the order of frames on the channel, and act on the same channel right
after the response so that the broker's in-order handling of a channel proves the rest
without waiting.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import UnexpectedReply
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._content import (
    Gathered, gather, gather_until, get_all, get_message, publish_n, shown, start_consumer, wait_queued,
)
from ._model import WAIT, bind, declare_exchange, declare_queue, publish
from ._replies import method_on

SYNC = ("amqp091:4.6/1",)


@case("amqp091/4.6/no-delivery-before-consume-ok",
      title="a consumer's deliveries come after its consume-ok, not before", clauses=SYNC)
def no_delivery_before_consume_ok(ctx: Context) -> None:
    """Queues 5 messages, sends basic.consume with a chosen tag and records every frame on the
    channel in order: no basic.deliver for that tag may precede consume-ok, and the 5 deliveries
    must follow it."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    sent = publish_n(peer, ch, q, 5)
    wait_queued(peer, ch, q, 5)
    tag = "amqpspec-sync-" + ctx.rng.randbytes(4).hex()
    peer.send(MethodFrame(ch, spec.BasicConsume(queue=q, consumer_tag=tag, no_ack=True)))
    ok, before = gather(peer, method_on(ch, "basic.consume-ok"), WAIT)
    early = before.deliveries(ch, tag)
    ctx.record(ok is not None and not early, expected="basic.consume-ok before any delivery",
               observed=f"before consume-ok: {before.describe()}" + ("" if ok else "; no consume-ok"),
               what="no delivery is visible before consume-ok")
    if ok is None:
        return
    after = Gathered()
    gather(peer, timeout=WAIT, count=5, into=after)
    got = [m.body for m in early + after.deliveries(ch, tag)]
    ctx.record(sorted(got) == sent, expected=f"{shown(sent)} delivered", observed=shown(got),
               what="the deliveries follow consume-ok")


@case("amqp091/4.6/no-delivery-after-cancel-ok",
      title="after cancel-ok a message published on the channel stays in the queue for basic.get", clauses=SYNC)
def no_delivery_after_cancel_ok(ctx: Context) -> None:
    """Starts a no-ack consumer on an empty queue and cancels it; once cancel-ok arrives, publishes a
    message to the queue on the same channel and sends basic.get there. The cancelled consumer must
    not get it: the frames up to the get answer hold no basic.deliver, and get-ok returns it. (An
    empty queue, e.g. an asynchronous enqueue, gets a second basic.get after half a second.)"""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    tag, got = start_consumer(peer, ch, q)
    peer.send(MethodFrame(ch, spec.BasicCancel(consumer_tag=tag)))
    ok, got = gather(peer, method_on(ch, "basic.cancel-ok"), WAIT, got)
    if ok is None:
        ctx.record(False, expected="basic.cancel-ok", observed=got.describe(), what="the consumer is cancelled")
        return
    publish(peer, ch, "", q, b"after cancel-ok")
    after = Gathered()
    msg = get_message(peer, ch, q, into=after)
    if msg is None and not after.deliveries(ch, tag):
        gather(peer, timeout=0.5, into=after)
        msg = get_message(peer, ch, q, into=after)
    late = after.deliveries(ch, tag)
    ctx.record(not late and msg is not None and msg.body == b"after cancel-ok",
               expected="no delivery after cancel-ok; basic.get-ok with the message",
               observed=f"{after.describe()}; get: {msg.summary() if msg else 'basic.get-empty'}")


@case("amqp091/4.6/no-redelivery-before-recover-ok",
      title="messages resent by basic.recover come after recover-ok, not before", clauses=SYNC)
def no_redelivery_before_recover_ok(ctx: Context) -> None:
    """An explicit-ack consumer receives 3 messages without acking; basic.recover(requeue true) is
    sent and the frames on the channel recorded: no redelivered delivery may precede recover-ok.
    Skipped when the broker does not answer basic.recover."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish_n(peer, ch, q, 3)
    wait_queued(peer, ch, q, 3)
    tag, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=WAIT, count=3, into=got)
    peer.send(MethodFrame(ch, spec.BasicRecover(True)))
    ok, before = gather(peer, method_on(ch, "basic.recover-ok"), WAIT)
    if ok is None:
        ctx.skip(f"basic.recover was not answered with recover-ok: {before.describe()}")
    early = [m for m in before.deliveries(ch, tag) if m.redelivered]
    after = Gathered()
    gather_until(peer, after, lambda g: len(g.deliveries(ch, tag)) >= 3, 1.0)
    ctx.note(f"after recover-ok: {after.describe()}")
    ctx.record(not early, expected="no redelivered message before basic.recover-ok",
               observed=f"before recover-ok: {before.describe()}")


def _routed(ctx: Context, bound_first: bool) -> None:
    peer = ctx.connect()
    ch = peer.open_channel()
    x = declare_exchange(ctx, peer, ch, "direct")
    q = declare_queue(ctx, peer, ch)
    key = ctx.name("k")
    if not bound_first:  # bind: M1 before the bind, M2 after bind-ok
        publish(peer, ch, x, key, b"M1")
        bind(peer, ch, q, x, key)
    else:  # unbind: M1 while bound, M2 after unbind-ok
        bind(peer, ch, q, x, key)
        publish(peer, ch, x, key, b"M1")
        peer.call(ch, spec.QueueUnbind(queue=q, exchange=x, routing_key=key))
    publish(peer, ch, x, key, b"M2")
    wait_queued(peer, ch, q, 1, wait=0.5)
    got = [m.body for m in get_all(peer, ch, q)]
    want = [b"M1"] if bound_first else [b"M2"]
    ctx.record(got == want, expected=f"the queue holds {shown(want)}", observed=f"the queue holds {shown(got)}")


@case("amqp091/4.6/routed-after-bind-ok",
      title="a message published before queue.bind is not routed by it, one published after bind-ok is",
      clauses=SYNC)
def routed_after_bind_ok(ctx: Context) -> None:
    """On one channel: publishes M1 to a direct exchange with key k (no binding yet), binds a queue
    with k, and after bind-ok publishes M2. The queue must hold M2 only."""
    _routed(ctx, bound_first=False)


@case("amqp091/4.6/not-routed-after-unbind-ok",
      title="a message published after unbind-ok is no longer routed to the queue", clauses=SYNC)
def not_routed_after_unbind_ok(ctx: Context) -> None:
    """On one channel: binds a queue to a direct exchange with key k, publishes M1, unbinds, and after
    unbind-ok publishes M2. The queue must hold M1 only."""
    _routed(ctx, bound_first=True)


@case("amqp091/4.6/empty-after-purge-ok", title="after purge-ok basic.get on the channel finds the queue empty",
      clauses=SYNC)
def empty_after_purge_ok(ctx: Context) -> None:
    """Queues 3 messages, sends queue.purge, and right after purge-ok sends basic.get on the same
    channel: the answer must be get-empty."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish_n(peer, ch, q, 3)
    wait_queued(peer, ch, q, 3)
    peer.call(ch, spec.QueuePurge(queue=q))
    try:
        msg = get_message(peer, ch, q)
    except UnexpectedReply as exc:
        ctx.record(False, expected="basic.get-empty", observed=str(exc))
        return
    ctx.record(msg is None, expected="basic.get-empty", observed=msg.summary() if msg else "basic.get-empty")

