"""Work queue with competing receivers (distribution-mode move), driven by python-qpid-proton.

Several workers attach receiving links to one node asking for distribution-mode move (3.5.2,
3.5.7); a producer sends tasks to the node. What the text fixes for the broker:

- move: "once successfully transferred over the link, the message will no longer be available
  to other links from the same node" (3.5.7, a definition: checked as a guideline) -- every task
  reaches one worker, none reaches two;
- a sender never exceeds the link-credit its receiver granted (2.6.7, MUST NOT);
- an accepted message is never sent again from the source (3.5.2, MUST NOT);
- a released task is available again, "to the same or other targets" (3.4.4, definition), with
  its delivery-count unchanged (MUST NOT increment); a task given back as modified with
  delivery-failed has its delivery-count incremented (3.4.5, MUST) -- a worker can tell a retry;
- the bare message (properties, body) arrives as sent (3.2, 3.2.4).

Where the broker leaves distribution-mode unset on the sources it attaches, the node has one mode
only (3.5.3); the scenario then takes the move it asked for as the node's behaviour (and says so
in the notes). A broker that answers with copy does not offer the pattern: the case is skipped.
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._common10 import (BARE_UNCHANGED, CREDIT, MODIFIED_COUNT, MODIFIED_DOC, MOVE_DOC, NO_RESEND, RELEASED_COUNT,
                        RELEASED_DOC, altered, by_id, check_mode, send_all, tasks, workers)
from ._proton import QUIET, WAIT, Receiver, Scenario, run, shown, terminus_list

SECTION = "amqp10/scenario.work-queue"


def _setup(sc: Scenario, credits: list[int]) -> tuple[object, list[Receiver], str]:
    address = sc.node("queue", "work")
    sc.step(f"{len(credits)} workers attach to {address!r} with distribution-mode move, credits {credits}")
    ws = workers(sc, address, credits)
    check_mode(sc, ws, "move", unset_ok=True)
    producer = sc.client("producer").sender(address)
    return producer, ws, address


def _distinct(ws: list[Receiver], ids: set[str]) -> tuple[list[str], list[str]]:
    """Task ids delivered more than once (over all workers) and those never delivered."""
    seen = by_id([r for w in ws for r in w.inbox if str(r.message.id) in ids])
    return sorted(k for k, v in seen.items() if len(v) > 1), sorted(ids - set(seen))


@case(f"{SECTION}/competing-receivers",
      title="each task reaches exactly one of the competing workers, within their credit",
      guideline=MOVE_DOC, timeout=12.0)
def competing_receivers(ctx: Context) -> None:
    """Two workers attach to one node with distribution-mode move, worker-1 granting 2 credits and
    worker-2 10; the producer sends 8 tasks. Passes when every task reaches one worker and none
    reaches two (move, guideline), worker-1 gets at most 2 (2.6.7: never beyond link-credit, MUST
    NOT), and the tasks arrive with the message-id and body they were sent with (3.2, 3.2.4)."""

    def body(sc: Scenario) -> None:
        producer, ws, _ = _setup(sc, [2, 10])
        items = tasks(sc, 8)
        sent = dict(items)
        sc.step("the producer sends 8 tasks (unsettled, each accepted by the broker)")
        send_all(sc, producer, items)  # type: ignore[arg-type]
        sc.pump(lambda: sum(len(w.inbox) for w in ws) >= len(items), WAIT)
        sc.quiet(QUIET)  # a second copy of a task would come now
        dup, missing = _distinct(ws, set(sent))
        per = "; ".join(f"{w.client.label}: {shown(r.message.id for r in w.inbox)}" for w in ws)
        sc.check(not dup and not missing, "every task reaches exactly one worker",
                 expected=f"{len(items)} tasks, each delivered once over both workers",
                 observed=per + (f"; twice: {dup}" if dup else "") + (f"; never: {missing}" if missing else ""))
        sc.check(len(ws[0].inbox) <= 2, "worker-1 gets no more tasks than its link-credit (2)",
                 expected="at most 2 transfers on worker-1's link", observed=f"{len(ws[0].inbox)} transfers",
                 clauses=CREDIT)
        bad = altered([r for w in ws for r in w.inbox], sent)
        sc.check(not bad, "tasks arrive with the message-id and body they were sent with",
                 expected="bare message unchanged", observed=shown(bad) if bad else "all as sent", clauses=BARE_UNCHANGED)
        for w in ws:
            for r in list(w.inbox):
                w.accept(r)

    run(ctx, body)


@case(f"{SECTION}/accepted-not-redelivered",
      title="accepted tasks are not sent again, neither on their links nor to a worker that comes later",
      clauses=NO_RESEND, timeout=12.0)
def accepted_not_redelivered(ctx: Context) -> None:
    """Two workers (10 credits each) get and accept 6 tasks between them, then keep their links
    open with credit left. Passes when no task comes a second time on either link (3.5.2: a source
    MUST NOT resend a message that reached ACCEPTED), and a third worker attaching afterwards with
    credit gets none of them either (move: no longer available to other links, guideline)."""

    def body(sc: Scenario) -> None:
        producer, ws, address = _setup(sc, [10, 10])
        items = tasks(sc, 6)
        send_all(sc, producer, items)  # type: ignore[arg-type]
        sc.pump(lambda: sum(len(w.inbox) for w in ws) >= len(items), WAIT)
        sc.step("both workers accept what they got")
        for w in ws:
            for r in list(w.inbox):
                w.accept(r)
        first = {w.label: len(w.inbox) for w in ws}
        sc.quiet(QUIET)
        again = [r.summary() for w in ws for r in w.inbox[first[w.label]:]]
        resent = [k for w in ws for k, v in by_id(w.inbox).items() if len(v) > 1]
        sc.check(not resent, "no accepted task comes again on the link it was accepted on",
                 expected="each task at most once per link", observed=shown(resent) if resent else
                 f"no repeat ({sum(first.values())} tasks, then {len(again)} more transfers)")
        sc.step("a late worker attaches to the same node with credit")
        late = sc.client("late-worker").receiver(address, mode="move", credit=10)
        sc.quiet(QUIET)
        got = [str(r.message.id) for r in late.inbox if str(r.message.id) in dict(items)]
        sc.check(not got, "a worker attaching later gets none of the accepted tasks",
                 expected="no transfer of an accepted task", observed=shown(got) if got else "nothing",
                 guideline=MOVE_DOC)

    run(ctx, body)


def _outcome_offered(sc: Scenario, w: Receiver, outcome: str) -> None:
    offered = terminus_list(w.link.remote_source.outcomes)
    if offered and f"amqp:{outcome}:list" not in offered:
        sc.ctx.skip(f"the source lists the outcomes {offered}, without {outcome}: a receiver cannot use it here")


@case(f"{SECTION}/released-to-other-worker",
      title="a task released by one worker is delivered to another with its delivery-count unchanged",
      guideline=RELEASED_DOC, timeout=12.0)
def released_to_other_worker(ctx: Context) -> None:
    """Worker-1 (1 credit) gets a task and settles it with the released outcome; worker-2, attached
    with no credit until then, grants 1. Passes when worker-2 gets the task (released: "made
    available for (re-)delivery to the same or other targets", guideline) and its header's
    delivery-count is the one of the first delivery (3.4.4: MUST NOT be incremented). Skipped
    when the source does not list released among its outcomes."""

    def body(sc: Scenario) -> None:
        producer, ws, _ = _setup(sc, [1, 0])
        w1, w2 = ws
        _outcome_offered(sc, w1, "released")
        items = tasks(sc, 1)
        send_all(sc, producer, items)  # type: ignore[arg-type]
        if not sc.pump(lambda: bool(w1.inbox), WAIT):
            sc.check(False, "worker-1 gets the task", expected="one transfer within its credit",
                     observed=f"nothing within {WAIT:g}s", guideline=MOVE_DOC)
            return
        first = w1.inbox[0]
        sc.step("worker-1 releases the task; worker-2 grants one credit")
        w1.release(first)
        w2.flow(1)
        sc.pump(lambda: bool(w2.inbox), WAIT)
        again = next((r for r in w2.inbox if r.message.id == first.message.id), None)
        sc.check(again is not None, "the released task is delivered to worker-2",
                 expected=f"{first.message.id} on worker-2's link",
                 observed=again.summary() if again else f"nothing within {WAIT:g}s")
        if again is not None:
            before, after = first.message.delivery_count, again.message.delivery_count
            sc.check(after == before, "the released task's delivery-count is not incremented",
                     expected=f"delivery-count {before}", observed=f"delivery-count {after}", clauses=RELEASED_COUNT)
            w2.accept(again)

    run(ctx, body)


@case(f"{SECTION}/failed-task-retried",
      title="a task given back as modified(delivery-failed) reaches another worker with delivery-count incremented",
      clauses=MODIFIED_COUNT, timeout=12.0)
def failed_task_retried(ctx: Context) -> None:
    """Worker-1 (1 credit) gets a task and settles it with modified(delivery-failed=true,
    undeliverable-here=false), as a worker that failed to process it; worker-2 then grants 1
    credit. Passes when worker-2 gets the task (modified: made available for (re-)delivery,
    guideline) with a delivery-count one higher than before (3.4.5: MUST be incremented), which
    tells the worker the task may have been processed before. Skipped when the source does not
    list modified among its outcomes."""

    def body(sc: Scenario) -> None:
        producer, ws, _ = _setup(sc, [1, 0])
        w1, w2 = ws
        _outcome_offered(sc, w1, "modified")
        items = tasks(sc, 1)
        send_all(sc, producer, items)  # type: ignore[arg-type]
        if not sc.pump(lambda: bool(w1.inbox), WAIT):
            sc.check(False, "worker-1 gets the task", expected="one transfer within its credit",
                     observed=f"nothing within {WAIT:g}s", guideline=MOVE_DOC)
            return
        first = w1.inbox[0]
        sc.step("worker-1 fails the task: modified(delivery-failed); worker-2 grants one credit")
        w1.modify(first, failed=True, here=False)
        w2.flow(1)
        sc.pump(lambda: bool(w2.inbox), WAIT)
        again = next((r for r in w2.inbox if r.message.id == first.message.id), None)
        sc.check(again is not None, "the failed task is delivered to worker-2",
                 expected=f"{first.message.id} on worker-2's link",
                 observed=again.summary() if again else f"nothing within {WAIT:g}s",
                 guideline=MODIFIED_DOC)
        if again is not None:
            before, after = first.message.delivery_count, again.message.delivery_count
            sc.check(after == before + 1, "the failed task's delivery-count is incremented",
                     expected=f"delivery-count {before + 1}", observed=f"delivery-count {after}")
            w2.accept(again)

    run(ctx, body)
