"""What survives a server restart: persistent messages (1.4.3, basic), durable queues and their
bindings to durable exchanges (queue.declare.durable, queue.bind).

The three clauses are about a restart, which AMQP cannot ask for: these cases run only when the
run has a ``--restart-command`` (they are skipped otherwise, saying so), and they are
``exclusive`` -- the runner runs them alone, after the others, since a restart ends every
connection. Each case declares what the clause names, closes its connections, restarts the
broker through :meth:`Context.restart_broker` and looks, on a new connection, for what must have
survived. A broker that keeps its queues, bindings or persistent messages only in memory fails.

A case whose durable queue did not come back skips the checks that need it ("precondition"):
the queue's loss is judged once, by queue.declare.durable/recreated-after-restart.
"""
from __future__ import annotations

from amqpspec.case import NO_RESTART_COMMAND, Context, case
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import Replies
from amqpspec.wire.amqp091 import spec

from ._model import declare_exchange, declare_queue, fence, get, publish, wait_count
from ._replies import answer

RESTART_TIMEOUT = 150.0  # the case's deadline: two connections and a broker restart (RabbitMQ takes tens of seconds)
QUEUE_CASE = "amqp091/queue.declare.durable/recreated-after-restart"


def needs_restart(ctx: Context) -> None:
    """Skips the case before it declares anything when the run cannot restart the broker."""
    if not ctx.restart_command:
        ctx.skip(NO_RESTART_COMMAND)


def exists(peer: Peer, kind: str, name: str) -> bool:
    """Whether a passive declare of the queue or exchange is answered with declare-ok, on a
    channel of its own (a 404 closes that channel)."""
    ch = peer.open_channel()
    method = (spec.QueueDeclare(queue=name, passive=True) if kind == "queue"
              else spec.ExchangeDeclare(exchange=name, type="direct", passive=True))
    return Replies(f"{kind}.declare-ok", channel=ch).accepts(answer(peer, ch, method))


def require_queue(ctx: Context, peer: Peer, queue: str) -> None:
    if not exists(peer, "queue", queue):
        ctx.skip(f"precondition: the durable queue {queue!r} did not survive the restart; judged by {QUEUE_CASE}")


@case(QUEUE_CASE, title="a durable queue exists again after a broker restart",
      clauses=("amqp091:queue.declare.durable/persistence",), timeout=RESTART_TIMEOUT, exclusive=True)
def queue_recreated(ctx: Context) -> None:
    """Declares a durable queue, restarts the broker, and declares it passively on a new
    connection: "the server MUST recreate the durable queue after a restart", so the answer is
    queue.declare-ok. A broker that forgets its queues on restart gets a 404 and fails."""
    needs_restart(ctx)
    peer = ctx.connect()
    queue = declare_queue(ctx, peer, peer.open_channel(), durable=True)
    ctx.restart_broker()
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(answer(peer, ch, spec.QueueDeclare(queue=queue, passive=True)), Replies("queue.declare-ok", channel=ch),
              what=f"the durable queue {queue!r} is there after the restart")


@case("amqp091/queue.bind/durable-binding-restored",
      title="a durable queue's binding to a durable exchange routes again after a broker restart",
      clauses=("amqp091:queue.bind/durable-exchange",), timeout=RESTART_TIMEOUT, exclusive=True)
def binding_restored(ctx: Context) -> None:
    """Binds a durable queue to a durable direct exchange, restarts the broker, then publishes
    (mandatory) through the exchange with the binding key: the restored binding routes the
    message to the queue. Fails when the exchange is gone (its bindings cannot be restored) or
    the message is returned or not queued (the binding was lost)."""
    needs_restart(ctx)
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch, durable=True)
    exchange = declare_exchange(ctx, peer, ch, "direct", durable=True)
    peer.call(ch, spec.QueueBind(queue=queue, exchange=exchange, routing_key="restored"))
    ctx.restart_broker()
    peer = ctx.connect()
    require_queue(ctx, peer, queue)
    if not ctx.record(exists(peer, "exchange", exchange), expected=f"the durable exchange {exchange!r} is there",
                      observed="exchange.declare(passive) refused", what="the binding's durable exchange is restored"):
        return
    ch = peer.open_channel()
    body = ctx.rng.randbytes(8).hex().encode()
    publish(peer, ch, exchange, "restored", body, mandatory=True)
    fence(peer, ch)
    count = wait_count(peer, ch, queue, 1)
    ctx.record(count == 1, expected=f"the message published to {exchange!r} with the binding key is queued in {queue!r}",
               observed=f"message-count {count}", what="the binding routes after the restart")


@case("amqp091/1.4.3/persistent-message-survives-restart",
      title="a persistent message in a durable queue is still there after a broker restart",
      clauses=("amqp091:1.4.3/1", "amqp091:basic/01"), timeout=RESTART_TIMEOUT, exclusive=True)
def persistent_survives(ctx: Context) -> None:
    """Publishes a persistent message (delivery-mode 2) to a durable queue, waits until the queue
    counts it, restarts the broker, and gets it on a new connection: a persistent message is one
    the server "MUST NOT lose after a server restart" (1.4.3), and basic/01 asks the server to
    respect the persistent property. Fails when the queue is there but the message is gone or
    changed (a broker keeping messages in memory only)."""
    needs_restart(ctx)
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch, durable=True)
    body = ctx.rng.randbytes(16).hex().encode()
    publish(peer, ch, "", queue, body, properties=spec.BasicProperties(delivery_mode=2))
    fence(peer, ch)
    if wait_count(peer, ch, queue, 1) != 1:
        ctx.skip("precondition: the persistent message was not queued before the restart")
    ctx.restart_broker()
    peer = ctx.connect()
    require_queue(ctx, peer, queue)
    got = get(peer, peer.open_channel(), queue)
    ctx.record(got is not None and got.body == body, expected=f"basic.get-ok with the persistent message {body!r}",
               observed=got.summary() if got else "basic.get-empty")
