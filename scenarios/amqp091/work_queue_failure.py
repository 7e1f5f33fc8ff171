"""Work queues with prefetch and acknowledgements, under consumer failure (pika and a raw peer).

A shared queue worked by consumers that acknowledge explicitly (no-ack false) and limit what
they hold with basic.qos. The spec's promises: the server never sends more than the prefetch
window (basic.qos.prefetch-count/01, MUST NOT); explicitly acknowledged delivery is supported
(basic/10, MUST) -- whose scenario is exactly this one: messages not acknowledged when a consumer
goes away are received again later, i.e. none is lost; "When the server closes a channel, any
unacknowledged messages on the channel are marked for redelivery" (4.5, for a channel closed by
Close/Close-Ok, by an exception, or by the socket closing without handshake); such messages
SHOULD be flagged redelivered (domain.redelivered/implementation), and the flag means "previously
delivered to this or another client" (so a first delivery is not flagged: a guideline). Contents
of one path keep their order unless flagged redelivered (4.7).

The failing consumer of the first scenario is a raw peer that closes its socket without
connection.close: explicit on the wire, where a client library would try to close politely.
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.case import Context, case
from amqpspec.conformance.amqp091._model import consume as raw_consume, quiet as raw_quiet, receive as raw_receive
from amqpspec.wire.amqp091 import spec

from ._pika import QUIET, WAIT, Client, Scenario, run, shown

SECTION = "amqp091/scenario.work-queue"
PREFETCH = ("amqp091:basic.qos.prefetch-count/01",)
NOT_LOST = ("amqp091:basic/10",)
FLAGGED = ("amqp091:domain.redelivered/implementation",)
ORDER = ("amqp091:4.7/1",)
CHANNEL_CLOSURE = ("When the server closes a channel, any unacknowledged messages on the channel are marked for "
                   "redelivery. [4.5]")
REDELIVERED_DOC = ("This indicates that the message has been previously delivered to this or another client. "
                   "[domain redelivered]")
IMMEDIATE_DOC = ("When a message arrives in a message queue, the message queue tries immediately to pass it to a "
                 "consumer application via AMQP. [2.1.2.1]")


def _work_queue(sc: Scenario, n: int) -> tuple[Client, Any, str, list[bytes]]:
    """A producer declares a shared work queue and puts ``n`` tasks in it; returns once the queue
    reports them all (message-count of a passive declare), so consumers find them waiting."""
    producer = sc.client("producer")
    ch = producer.channel()
    queue = producer.declare_queue(ch, sc.name("work")).queue
    tasks = [f"task-{i:02d}".encode() for i in range(n)]
    sc.step(f"producer publishes {n} tasks to the work queue")
    for t in tasks:
        producer.publish(ch, "", queue, t)
    stop = time.monotonic() + WAIT
    while producer.declare_queue(ch, queue, passive=True).message_count < n and time.monotonic() < stop:
        time.sleep(0.02)
    return producer, ch, queue, tasks


def _acking_worker(sc: Scenario, label: str, queue: str, prefetch: int) -> Client:
    """A pika worker that acknowledges each task as soon as it arrives."""
    worker = sc.client(label)
    ch = worker.channel()
    worker.qos(ch, prefetch)
    worker.consume(ch, queue, auto_ack=False, on_message=worker.ack)
    return worker


def _check_after_failure(sc: Scenario, tasks: list[bytes], held: list[bytes], survivor: Client, who: str, *,
                         order: bool) -> None:
    """The checks on everything the surviving worker received, after the failing one went away.

    ``held``: what the failed worker had and never acknowledged (it must come again, flagged);
    a task the survivor gets twice must be flagged the second time too."""
    got = survivor.inbox
    missing = [t for t in tasks if t not in {d.body for d in got}]
    sc.check(not missing, f"no task is lost: every task reaches the surviving worker after {who}",
             expected=f"all {len(tasks)} tasks, including the {len(held)} the failed worker held",
             observed=f"missing {shown(missing)}" if missing else f"all {len(tasks)} received", clauses=NOT_LOST)
    earlier = set(held)
    unflagged: list[str] = []
    wrongly_flagged: list[str] = []
    for d in got:
        if d.body in earlier and not d.redelivered:
            unflagged.append(d.body.decode())
        if d.body not in earlier and d.redelivered:
            wrongly_flagged.append(d.body.decode())
        earlier.add(d.body)
    sc.check(not unflagged, "a task delivered before (to the failed worker, or already to this one) comes flagged "
             "redelivered", expected=f"redelivered on {shown(held)} and on any repeat",
             observed=f"not flagged: {unflagged}" if unflagged else "all flagged", clauses=FLAGGED)
    sc.check(not wrongly_flagged, "a task delivered for the first time is not flagged redelivered",
             expected="redelivered false on first deliveries", guideline=REDELIVERED_DOC,
             observed=f"flagged: {wrongly_flagged}" if wrongly_flagged else "none flagged")
    if order:  # only where the survivor is the queue's one reader: with several, 3.1.4 lifts FIFO (MAY)
        fresh = [d.body for d in got if not d.redelivered]
        sc.check(fresh == sorted(fresh), "tasks not flagged redelivered arrive in the order published "
                 "(4.7 exempts only flagged redeliveries)", expected="ascending task numbers", observed=shown(fresh),
                 clauses=ORDER)


@case(f"{SECTION}/consumer-failure",
      title="tasks held unacknowledged by a worker whose socket drops go to another worker, flagged redelivered",
      clauses=PREFETCH + NOT_LOST + FLAGGED + ORDER, timeout=15.0)
def consumer_failure(ctx: Context) -> None:
    """Eight tasks wait in a shared queue. Worker A (a raw peer) sets basic.qos prefetch-count 3,
    consumes with no-ack false and acknowledges nothing; it must not get more than 3 (MUST NOT).
    A then closes its socket without connection.close (4.5 case 3). Worker B (pika, prefetch 10,
    acking each task) must then receive all eight tasks (basic/10: none lost); those A held
    flagged redelivered (SHOULD), the others not (guideline), and the unflagged ones in order (4.7:
    B is then the queue's only reader, and only flagged redeliveries may break the order)."""

    def body(sc: Scenario) -> None:
        _, _, queue, tasks = _work_queue(sc, 8)

        sc.step("worker A (raw peer): basic.qos prefetch-count=3, basic.consume no-ack=false, never acks")
        peer = ctx.connect()
        ach = peer.open_channel()
        peer.call(ach, spec.BasicQos(0, 3, False))
        raw_consume(peer, ach, queue, no_ack=False)
        held = raw_receive(peer, 3, WAIT)
        more = raw_quiet(peer, QUIET)
        got_a = [m.body for m in held + more]
        sc.check(len(got_a) <= 3, "worker A gets no more than its prefetch window of 3 unacknowledged tasks",
                 expected="at most 3 deliveries", observed=f"{len(got_a)}: {shown(got_a)}", clauses=PREFETCH)
        if not got_a:
            sc.check(False, "worker A gets tasks with explicit acknowledgement", expected="deliveries to A",
                     observed="none within the wait", clauses=NOT_LOST)
            return

        sc.step("worker A's socket closes without connection.close (spec 4.5, case 3)")
        peer.abort()
        ctx.transcript.event("[worker-A raw] socket closed without connection.close, 0 tasks acknowledged")

        sc.step("worker B (pika): prefetch 10, acks each task; must get all eight")
        b = _acking_worker(sc, "worker-B", queue, 10)
        sc.pump(lambda: {d.body for d in b.inbox} >= set(tasks), WAIT + 2.0)
        sc.quiet()
        _check_after_failure(sc, tasks, got_a, b, "worker A's socket closed", order=True)

    run(ctx, body)


@case(f"{SECTION}/channel-close",
      title="two workers share a queue within their prefetch windows; a closed channel's tasks go to the other",
      clauses=PREFETCH + NOT_LOST + FLAGGED, timeout=15.0)
def channel_close(ctx: Context) -> None:
    """Ten tasks, two pika workers with prefetch-count 2: A never acknowledges, B acknowledges each
    task. A must hold at most 2 (MUST NOT), and the queue keeps serving B with the rest (the
    queue passes messages on to a consumer that can take them: guideline). Then A closes its
    channel (pika sends basic.cancel, then channel.close; the tasks stay unacknowledged, 4.5
    case 1): B must receive them too (basic/10), flagged redelivered (SHOULD). No order check: with
    two readers the queue "MAY NOT exhibit true FIFO characteristics" (3.1.4)."""

    def body(sc: Scenario) -> None:
        _, _, queue, tasks = _work_queue(sc, 10)

        sc.step("worker A: prefetch-count 2, no-ack false, never acks")
        a = sc.client("worker-A")
        ach = a.channel()
        a.qos(ach, 2)
        a.consume(ach, queue, auto_ack=False)
        sc.pump(lambda: len(a.inbox) >= 2, WAIT)
        sc.step("worker B: prefetch-count 2, acks each task as it arrives")
        b = _acking_worker(sc, "worker-B", queue, 2)
        sc.pump(lambda: len(a.inbox) + len(b.inbox) >= len(tasks), WAIT)
        sc.quiet()
        held = [d.body for d in a.inbox]
        sc.check(len(held) <= 2, "worker A gets no more than its prefetch window of 2 unacknowledged tasks",
                 expected="at most 2 deliveries", observed=f"{len(held)}: {shown(held)}", clauses=PREFETCH)
        rest = [t for t in tasks if t not in held]
        got_b = {d.body for d in b.inbox}
        sc.check(set(rest) <= got_b, "while A's window is full, the queue serves everything else to B",
                 expected=f"the {len(rest)} tasks A does not hold", observed=f"B got {shown(sorted(got_b))}",
                 guideline=IMMEDIATE_DOC)

        sc.step("worker A closes its channel (Close/Close-Ok) holding unacknowledged tasks (spec 4.5, case 1)")
        a.close_channel(ach)
        sc.pump(lambda: {d.body for d in b.inbox} >= set(tasks), WAIT)
        sc.quiet()
        _check_after_failure(sc, tasks, held, b, "worker A's channel closed", order=False)

    run(ctx, body)
