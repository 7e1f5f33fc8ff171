"""RabbitMQ extension: basic.nack from the client (reject one or more messages).

Tested when the broker lists ``basic.nack`` in its capabilities. The rules are those of
basic.nack in RabbitMQ's extended 0-9-1 XML: the server interprets a nack as the client
being unable to process the message at this time (nack/02), accepts it even while it is
still sending the content (nack/01), refuses an unknown or already rejected delivery tag
with a channel exception (multiple/exists, on-failure precondition-failed), and, with
requeue, MUST NOT deliver the message to the same client within the current channel
(requeue/01). The field docs (no keywords, so guidelines) say what requeue and multiple do.

nack/03 (the client must not use nack to select messages) binds the client; nack/04 (a
publisher in confirm mode handling a server's nack) binds the client too, and the server
only nacks a publish it could not handle, which cannot be provoked portably.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import ChannelException, StaysOpen
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._model import WAIT, close_channel, declare_queue, get, publish, receive, wait_count
from ._replies import after_async
from ._while_sending import judge, settle_while_sending

NACK = ("basic.nack",)
EXISTS = "rabbitmq091:basic.nack.multiple/exists"
REQUEUE_RULE = "rabbitmq091:basic.nack.requeue/01"
UNABLE = "rabbitmq091:basic.nack/02"
WHILE_SENDING = "rabbitmq091:basic.nack/01"
REQUEUE_DOC = ("If requeue is true, the server will attempt to requeue the message.  If requeue is false or the "
               "requeue  attempt fails the messages are discarded or dead-lettered.")
MULTIPLE_DOC = ("If set to 1, the delivery tag is treated as \"up to and including\", so that multiple messages can "
                "be rejected with a single method. If set to zero, the delivery tag refers to a single message. If "
                "the multiple field is 1, and the delivery tag is zero, this indicates rejection of all outstanding "
                "messages.")
ABSENT_WINDOW = 0.3  # how long a message that must not come back is watched for
REDELIVERY_WINDOW = 1.0


def queue_with(ctx: Context, peer: Peer, ch: int, count: int, body: bytes = b"m") -> str:
    """A fresh (non-exclusive, registered) queue holding ``count`` messages."""
    queue = declare_queue(ctx, peer, ch)
    for i in range(count):
        publish(peer, ch, "", queue, body + b"%d" % i)
    wait_count(peer, ch, queue, count)
    return queue


def fetch_unacked(ctx: Context, peer: Peer, ch: int, queue: str, count: int) -> list[int]:
    """basic.get in ack mode ``count`` times; the delivery tags (skips when the queue runs dry)."""
    tags = []
    for _ in range(count):
        msg = get(peer, ch, queue, no_ack=False)
        if msg is None:
            ctx.skip("the queue did not deliver its messages to basic.get")
        tags.append(msg.delivery_tag)
    return tags


def nack(ch: int, tag: int, *, multiple: bool = False, requeue: bool = True) -> MethodFrame:
    return MethodFrame(ch, spec.BasicNack(tag, multiple, requeue))


def stays_absent(peer: Peer, ch: int, queue: str, window: float = ABSENT_WINDOW) -> int:
    """The queue's message-count after watching ``window`` seconds for it to become non-zero."""
    return wait_count(peer, ch, queue, 1, timeout=window)


@case("amqp091/rabbitmq.basic.nack/requeue-true-requeued",
      title="basic.nack with requeue puts the message back in the queue for other clients",
      requires=NACK, clauses=(UNABLE,))
def requeue_true(ctx: Context) -> None:
    """A client gets a message in ack mode and nacks it with requeue=1: the server takes it as the
    client being unable to process it now, and requeues it (the requeue field: "the server will
    attempt to requeue the message"). A second connection's basic.get finds it within a few
    seconds; the nacking channel stays open meanwhile (closing it would requeue anyway)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = queue_with(ctx, peer, ch, 1)
    [tag] = fetch_unacked(ctx, peer, ch, queue, 1)
    peer.send(nack(ch, tag, requeue=True))
    other = ctx.connect()
    och = other.open_channel()
    count = wait_count(other, och, queue, 1)
    msg = get(other, och, queue) if count else None
    ctx.record(msg is not None, expected="the nacked message can be fetched again by another client",
               observed=msg.summary() if msg is not None else f"queue message-count {count} after {WAIT:g}s")


@case("amqp091/rabbitmq.basic.nack/requeue-false-discarded",
      title="basic.nack without requeue discards the message (no dead-letter queue configured)",
      requires=NACK, guideline=REQUEUE_DOC)
def requeue_false(ctx: Context) -> None:
    """Gets a message in ack mode, nacks it with requeue=0, then closes the channel (which would
    requeue a message still unacknowledged). The queue has no dead-letter configuration, so the
    message is discarded: the queue stays empty."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = queue_with(ctx, peer, ch, 1)
    consumer = ctx.connect()
    cch = consumer.open_channel()
    [tag] = fetch_unacked(ctx, consumer, cch, queue, 1)
    obs = after_async(consumer, cch, nack(cch, tag, requeue=False))
    if not ctx.check(obs, StaysOpen(), what="the nack is accepted"):
        return
    close_channel(consumer, cch)
    count = stays_absent(peer, ch, queue)
    ctx.record(count == 0, expected="message-count 0: the nacked message was discarded",
               observed=f"message-count {count}")


@case("amqp091/rabbitmq.basic.nack/multiple", title="basic.nack with multiple rejects up to and including the tag",
      requires=NACK, guideline=MULTIPLE_DOC)
def nack_multiple(ctx: Context) -> None:
    """Gets three messages in ack mode (tags t1 < t2 < t3), nacks t2 with multiple=1 and
    requeue=1: t1 and t2 go back to the queue (message-count 2), and t3 is still unacknowledged,
    so a basic.ack of t3 is accepted without an exception."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = queue_with(ctx, peer, ch, 3)
    tags = fetch_unacked(ctx, peer, ch, queue, 3)
    peer.send(nack(ch, tags[1], multiple=True, requeue=True))
    count = wait_count(peer, ch, queue, 2)
    ctx.record(count == 2, expected="message-count 2: the first two messages were requeued",
               observed=f"message-count {count}", what="multiple rejects up to and including the tag")
    obs = after_async(peer, ch, MethodFrame(ch, spec.BasicAck(tags[2], False)))
    ctx.check(obs, StaysOpen(), what="the message after the tag is still unacknowledged: its ack is accepted")


@case("amqp091/rabbitmq.basic.nack/multiple-zero-all",
      title="basic.nack with multiple and delivery tag 0 rejects all outstanding messages",
      requires=NACK, guideline=MULTIPLE_DOC)
def nack_all(ctx: Context) -> None:
    """Gets two messages in ack mode, then sends basic.nack(delivery-tag=0, multiple=1,
    requeue=1): both are rejected and requeued, so the queue's message-count goes back to 2."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = queue_with(ctx, peer, ch, 2)
    fetch_unacked(ctx, peer, ch, queue, 2)
    obs = after_async(peer, ch, nack(ch, 0, multiple=True, requeue=True))
    if not ctx.check(obs, StaysOpen(), what="the nack of all outstanding messages is accepted"):
        return
    count = wait_count(peer, ch, queue, 2)
    ctx.record(count == 2, expected="message-count 2: both messages were requeued", observed=f"message-count {count}")


@case("amqp091/rabbitmq.basic.nack/unknown-tag",
      title="basic.nack of a delivery tag never delivered is channel exception 406",
      requires=NACK, clauses=(EXISTS,))
def unknown_tag(ctx: Context) -> None:
    """Sends basic.nack(delivery-tag=5) on a channel that received nothing, then a synchronous
    probe on it. The tag refers to no delivered message: channel exception, the rule's on-failure
    precondition-failed (406), instead of the probe's reply."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(after_async(peer, ch, nack(ch, 5)), ChannelException(406, channel=ch))


@case("amqp091/rabbitmq.basic.nack/twice",
      title="a second basic.nack of the same delivery tag is channel exception 406", requires=NACK, clauses=(EXISTS,))
def nack_twice(ctx: Context) -> None:
    """Gets a message in ack mode and nacks it (requeue=0), which is accepted; then nacks the same
    tag again. It no longer refers to an unacknowledged message ("A message MUST not be rejected
    more than once"): channel exception 406 (precondition-failed)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = queue_with(ctx, peer, ch, 1)
    [tag] = fetch_unacked(ctx, peer, ch, queue, 1)
    first = after_async(peer, ch, nack(ch, tag, requeue=False))
    if not ctx.check(first, StaysOpen(), what="the first nack is accepted", clauses=(UNABLE,)):
        return
    ctx.check(after_async(peer, ch, nack(ch, tag, requeue=False)), ChannelException(406, channel=ch),
              what="the second nack of the same tag is refused")


@case("amqp091/rabbitmq.basic.nack/requeue-not-same-channel",
      title="a message nacked with requeue is not delivered again to the same channel's consumer",
      requires=NACK, clauses=(REQUEUE_RULE,))
def requeue_not_same_channel(ctx: Context) -> None:
    """One consumer (ack mode) on a channel; one message is delivered to it and nacked with
    requeue=1. The server MUST NOT deliver the message to the same client within the context of
    the current channel: no basic.deliver may come on that channel within a second (the rule lets
    a server hold the message and redeliver it "at a later stage", hence the bounded window)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch)
    peer.call(ch, spec.BasicConsume(queue=queue, no_ack=False))
    publish(peer, ch, "", queue, b"nack me")
    got = receive(peer, 1, WAIT)
    if not got:
        ctx.skip("the consumer did not receive the message")
    peer.send(nack(ch, got[0].delivery_tag, requeue=True))
    again = [m for m in receive(peer, 1, REDELIVERY_WINDOW) if m.channel == ch]
    ctx.record(not again, expected=f"no basic.deliver on channel {ch} within {REDELIVERY_WINDOW:g}s of the nack",
               observed=", ".join(m.summary() for m in again) or "nothing delivered")


@case("amqp091/rabbitmq.basic.nack/while-sending-content",
      title="basic.nack sent while the message's content is still being sent is processed then",
      requires=NACK, clauses=(WHILE_SENDING,), timeout=20.0)
def nack_while_sending(ctx: Context) -> None:
    """nack/01: the server SHOULD accept and process a nack "while sending message content",
    reading incoming methods while sending output frames. Fetches an 8 MiB message with basic.get
    (ack mode) and sends basic.nack(requeue=1) as soon as get-ok arrives, reading none of the
    content (see ``_while_sending``: the server then still has content to send). A server that
    processes the nack then shows the message back in the queue while its content is unread, or
    cuts the content with an empty body frame; one that reads the nack only after the whole
    content fails the SHOULD (a warning)."""
    judge(ctx, settle_while_sending(ctx, lambda ch, tag: nack(ch, tag, requeue=True)), "nack")
