"""Spec 2.1.5.1 Constructing a Shared Queue, driven by pika.

The spec's first example: a queue with an agreed name ("app.svc01"), several consumers on it,
producers publishing to the default exchange with the queue's name as routing key. Such a
"shared store-and-forward queue ... distributes [messages] between consumers on a round-robin
basis" (2.1.1.1). Delivery through the default exchange rests on MUST rules (the default binding,
3.1.3.1 and queue.declare; direct matching K = R); the round-robin distribution and the
"immediately dequeues" of no-ack consumers are descriptive text, checked as guidelines.

With several readers the queue "MAY NOT exhibit true FIFO characteristics" (3.1.4), so these
scenarios do not check the order of deliveries across or within consumers.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level

from ._pika import WAIT, Client, Delivery, Scenario, bodies, run, shown

SECTION = "amqp091/scenario.shared-queue"
DEFAULT_ROUTE = ("amqp091:3.1.3.1/2", "amqp091:queue.declare/default-binding",
                 "amqp091:basic.publish.exchange/default-exchange",
                 "amqp091:queue.bind.routing-key/direct-exchange-key-matching")
SHARED = ("amqp091:queue.declare.exclusive/types", "amqp091:basic.consume/01")
ROUND_ROBIN = ("A shared store-and-forward queue, which holds messages and distributes these between consumers "
               "on a round-robin basis. [2.1.1.1]")
NO_ACK_DOC = ("If this field is set the server does not expect acknowledgements for messages. That is, when a "
              "message is delivered to the client the server assumes the delivery will succeed and immediately "
              "dequeues it. [domain no-ack]")
CONSUMERS = 3


def _shared_queue(sc: Scenario, n_consumers: int = CONSUMERS) -> tuple[Client, object, str, list[Client], list]:
    """The spec's pseudo-code: Queue.Declare queue=<agreed name>; each consumer Basic.Consume."""
    sc.step("producer declares the shared queue (spec 2.1.5.1: Queue.Declare queue=app.svc01)")
    producer = sc.client("producer")
    pch = producer.channel()
    queue = producer.declare_queue(pch, sc.name("svc")).queue
    consumers, channels = [], []
    sc.step(f"{n_consumers} consumers, each on its own connection, consume from it (Basic.Consume queue=app.svc01)")
    for i in range(n_consumers):
        c = sc.client(f"consumer-{i + 1}")
        ch = c.channel()
        consumers.append(c)
        channels.append(ch)
    tags = sc.require(f"{n_consumers} consumers on one non-exclusive queue are accepted",
                      lambda: [c.consume(ch, queue, auto_ack=True) for c, ch in zip(consumers, channels)],
                      expected=f"consume-ok for each of {n_consumers} consumers", clauses=SHARED)
    for c, tag in zip(consumers, tags):
        c.tag = tag
    return producer, pch, queue, consumers, channels


def _publish(sc: Scenario, producer: Client, pch: object, queue: str, names: list[bytes]) -> None:
    sc.step(f"producer publishes {len(names)} messages to the default exchange (Basic.Publish routing-key=app.svc01)")
    for body in names:
        producer.publish(pch, "", queue, body)  # type: ignore[arg-type]


def _got(consumers: list[Client], wanted: set[bytes]) -> list[Delivery]:
    return [d for c in consumers for d in c.inbox if d.body in wanted]


@case(f"{SECTION}/flow", title="a shared queue fed through the default exchange delivers every message to one of its consumers",
      clauses=DEFAULT_ROUTE + SHARED + ("amqp091:4.6/1",), timeout=15.0)
def shared_queue_flow(ctx: Context) -> None:
    """The 2.1.5.1 example with pika: three consumers on a named queue, twelve messages published to
    the default exchange with the queue's name as routing key. Passes when every message reaches
    the consumers (MUST) and none twice (no-ack dequeues at once, guideline); then one consumer
    cancels, six more messages are published, and they all reach the two others, none the
    cancelled consumer (4.6: the cancel's effect is visible once cancel-ok has come)."""

    def body(sc: Scenario) -> None:
        producer, pch, queue, consumers, channels = _shared_queue(sc)
        first = [f"task-{i:02d}".encode() for i in range(12)]
        _publish(sc, producer, pch, queue, first)
        wanted = set(first)
        sc.pump(lambda: {d.body for d in _got(consumers, wanted)} >= wanted, WAIT)
        got = _got(consumers, wanted)
        per = {c.label: shown(bodies(c.inbox)) for c in consumers}
        missing = [b for b in first if b not in {d.body for d in got}]
        sc.check(not missing, "every message published to the default exchange reaches a consumer of the queue",
                 expected=f"all {len(first)} messages delivered", observed=f"missing {shown(missing)}; per consumer {per}"
                 if missing else f"all delivered; per consumer {per}", clauses=DEFAULT_ROUTE)
        sc.quiet()
        got = _got(consumers, wanted)
        twice = sorted({d.body for d in got if bodies(got).count(d.body) > 1})
        sc.check(not twice, "no message is delivered to two consumers (or twice to one)",
                 expected="each message delivered once", observed=f"delivered more than once: {shown(twice)}"
                 if twice else f"{len(got)} deliveries for {len(first)} messages", guideline=NO_ACK_DOC)

        sc.step("consumer-1 cancels its consumer (Basic.Cancel), then the producer publishes six more messages")
        gone = consumers[0]
        gone.cancel(channels[0], gone.tag)
        before = len(gone.inbox)
        second = [f"late-{i:02d}".encode() for i in range(6)]
        _publish(sc, producer, pch, queue, second)
        late = set(second)
        rest = consumers[1:]
        sc.pump(lambda: {d.body for d in _got(rest, late)} >= late, WAIT)
        sc.quiet()
        got_rest = {d.body for d in _got(rest, late)}
        missing = [b for b in second if b not in got_rest]
        sc.check(not missing, "after one consumer cancels, the remaining consumers get every new message",
                 expected=f"all {len(second)} later messages delivered to consumer-2/consumer-3",
                 observed=f"missing {shown(missing)}" if missing else "all delivered", clauses=DEFAULT_ROUTE)
        after = [d for d in gone.inbox[before:] if d.body in late]
        sc.check(not after, "a consumer gets nothing published after its basic.cancel-ok",
                 expected="no delivery to the cancelled consumer", clauses=("amqp091:4.6/1",),
                 observed=f"cancelled consumer received {shown(bodies(after))}" if after else "nothing")

    run(ctx, body)


@case(f"{SECTION}/round-robin", title="a shared queue distributes messages between its consumers round-robin",
      clauses=SHARED, level=Level.SHOULD, guideline=ROUND_ROBIN, timeout=15.0)
def shared_queue_round_robin(ctx: Context) -> None:
    """Three no-ack consumers on one named queue, twelve numbered messages published after all
    three consume-oks. Round-robin means each message goes to the next consumer in turn: passes
    when each consumer receives four messages whose numbers are congruent modulo three (message
    i and message i+3 go to the same consumer)."""

    def body(sc: Scenario) -> None:
        producer, pch, queue, consumers, _ = _shared_queue(sc)
        n = 4 * len(consumers)
        msgs = [f"{i:02d}".encode() for i in range(n)]
        _publish(sc, producer, pch, queue, msgs)
        wanted = set(msgs)
        sc.pump(lambda: {d.body for d in _got(consumers, wanted)} >= wanted, WAIT)
        numbers = {c.label: [int(d.body) for d in c.inbox if d.body in wanted] for c in consumers}
        total = sum(len(v) for v in numbers.values())
        if total < n:
            ctx.note(f"only {total} of {n} messages arrived; the round-robin check sees what did")
        k = len(consumers)
        cyclic = all(len(v) == n // k and len({i % k for i in v}) == 1 for v in numbers.values()) and \
            len({v[0] % k for v in numbers.values() if v}) == k
        sc.check(cyclic, "messages go to the consumers in turn",
                 expected=f"each consumer gets {n // k} messages, message i and i+{k} to the same consumer",
                 observed="; ".join(f"{label}: {v}" for label, v in numbers.items()), guideline=ROUND_ROBIN)

    run(ctx, body)
