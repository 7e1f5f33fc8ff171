"""RabbitMQ extension: consumer cancel notification (basic.cancel sent by the server).

Tested when the broker lists ``consumer_cancel_notify`` in its capabilities. RabbitMQ's
extended XML, basic.cancel: the method "may also be sent from the server to the client in
the event of the consumer being unexpectedly cancelled (i.e. cancelled for any reason other
than the server receiving the corresponding basic.cancel from the client). This allows
clients to be notified of the loss of consumers due to events such as queue deletion." And,
since clients need not accept it, "it is advisable for the broker to be able to identify
those clients that are capable of accepting the method, through some means of capability
negotiation": a client announces it in client-properties ``capabilities``
(``consumer_cancel_notify: true``), the table the broker uses for its own capabilities.

There is no rule element for this, so the checks are guidelines (SHOULD).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Observation, Peer, client_properties
from amqpspec.verify import StaysOpen, Verifier
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._common import QUICK_WINDOW
from ._model import WAIT, declare_queue
from ._replies import after_async, answer, on_channel

NOTIFY = ("consumer_cancel_notify",)
SENT_BY_SERVER = ("It may also be sent from the server to the client in the event of the consumer being unexpectedly "
                  "cancelled (i.e. cancelled for any reason other than the server receiving the corresponding "
                  "basic.cancel from the client). This allows clients to be notified of the loss of consumers due "
                  "to events such as queue deletion.")
NEGOTIATION = ("Note that as it is not a MUST for clients to accept this method from the server, it is advisable for "
               "the broker to be able to identify those clients that are capable of accepting the method, through "
               "some means of capability negotiation.")
QUIET_WINDOW = 1.0  # how long a client that did not ask for notifications watches for one


def notified_client(ctx: Context) -> Peer:
    """A connection whose client-properties announce ``capabilities: {consumer_cancel_notify: true}``."""
    props = client_properties()
    props["capabilities"] = {"consumer_cancel_notify": True}
    return ctx.connect(properties=props)


def consumer(ctx: Context, peer: Peer) -> tuple[int, str, str]:
    """A consumer on a fresh queue: (channel, queue, consumer tag)."""
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch)
    tag = peer.call(ch, spec.BasicConsume(queue=queue, no_ack=True)).method.consumer_tag  # type: ignore[attr-defined]
    return ch, queue, tag


def delete_elsewhere(ctx: Context, queue: str) -> None:
    """Deletes ``queue`` from a second connection; skips when the broker does not delete it."""
    other = ctx.connect()
    och = other.open_channel()
    obs = answer(other, och, spec.QueueDelete(queue=queue), window=QUICK_WINDOW)
    if not obs.methods("queue.delete-ok", och):
        ctx.skip(f"the queue could not be deleted from another connection: {obs.describe()}")


class CancelFor(Verifier):
    """basic.cancel from the broker for ``tag`` on ``channel``, no close."""

    expects_close = False

    def __init__(self, channel: int, tag: str) -> None:
        self.channel = channel
        self.tag = tag

    def accepts(self, obs: Observation) -> bool:
        return any(f.method.consumer_tag == self.tag for f in obs.methods("basic.cancel", self.channel)) \
            and obs.channel_close(self.channel) is None and obs.connection_close is None

    def describe(self) -> str:
        return f"basic.cancel(consumer-tag={self.tag!r}) on channel {self.channel}"


@case("amqp091/rabbitmq.basic.cancel/queue-deleted-notifies",
      title="deleting a consumer's queue from another connection sends basic.cancel to the consumer",
      requires=NOTIFY, guideline=SENT_BY_SERVER)
def queue_deleted(ctx: Context) -> None:
    """A client announcing consumer_cancel_notify consumes from a queue; another connection
    deletes the queue. The consumer was cancelled without a basic.cancel from its client, so
    the broker notifies it: basic.cancel with its consumer tag on its channel. The notification is
    not an exception: the channel goes on (a probe on it is answered)."""
    peer = notified_client(ctx)
    ch, queue, tag = consumer(ctx, peer)
    delete_elsewhere(ctx, queue)
    obs = peer.observe(WAIT, stop=on_channel(ch, "basic.cancel"))
    if not ctx.check(obs, CancelFor(ch, tag), what="the consumer is notified with basic.cancel"):
        return
    ctx.check(after_async(peer, ch), StaysOpen(), what="the channel goes on after the notification")


@case("amqp091/rabbitmq.basic.cancel/own-channel-deletes-queue",
      title="deleting the queue on the consumer's own channel also sends basic.cancel",
      requires=NOTIFY, guideline=SENT_BY_SERVER)
def own_channel_deletes(ctx: Context) -> None:
    """A client announcing consumer_cancel_notify consumes from a queue and deletes the queue on
    the same channel: the consumer ends for a reason other than a basic.cancel from the client,
    so basic.cancel with its tag comes on the channel (before or after queue.delete-ok)."""
    peer = notified_client(ctx)
    ch, queue, tag = consumer(ctx, peer)
    peer.send(MethodFrame(ch, spec.QueueDelete(queue=queue)))
    seen: list = []

    def done(item: object) -> bool:
        if isinstance(item, MethodFrame) and item.channel == ch and item.method.NAME in ("basic.cancel",
                                                                                         "queue.delete-ok"):
            seen.append(item.method.NAME)
        return {"basic.cancel", "queue.delete-ok"} <= set(seen) or on_channel(ch)(item)

    obs = peer.observe(WAIT, stop=done)
    ctx.check(obs, CancelFor(ch, tag))


@case("amqp091/rabbitmq.basic.cancel/not-sent-without-capability",
      title="a client that did not announce consumer_cancel_notify gets no basic.cancel from the broker",
      requires=NOTIFY, level=Level.SHOULD, guideline=NEGOTIATION)
def not_without_capability(ctx: Context) -> None:
    """A client whose client-properties carry no capabilities consumes from a queue; another
    connection deletes the queue. The broker, which identifies the clients able to accept the
    method through capability negotiation, sends it no basic.cancel (watched for a second), and
    the channel goes on."""
    peer = ctx.connect()
    ch, queue, tag = consumer(ctx, peer)
    delete_elsewhere(ctx, queue)
    obs = peer.observe(QUIET_WINDOW, stop=on_channel(ch, "basic.cancel"))
    cancels = obs.methods("basic.cancel", ch)
    ctx.record(not cancels and obs.channel_close(ch) is None and obs.connection_close is None,
               expected=f"no basic.cancel for consumer {tag!r} within {QUIET_WINDOW:g}s",
               observed=obs.describe(), what="no notification to a client that did not ask for it")
