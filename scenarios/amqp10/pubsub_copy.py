"""Publish-subscribe with distribution-mode copy, driven by python-qpid-proton.

Subscribers attach receiving links asking for distribution-mode copy: "once successfully
transferred over the link, the message is still available for other links from the same node"
(3.5.7, a definition: checked as a guideline). A copy link must still never send a message twice
on the same link once it was accepted, which needs state at the source (3.5.2, MUST).

Two nodes are used: the broker's pub-sub node (``topic`` in the addressing conventions, e.g.
RabbitMQ's ``/topic/RK``), where every subscriber must get every event published after it
attached; and the queue-like node of the work-queue scenario, asked for copy: where the broker
confirms copy there, an accepted message must still be there for the next link. A broker that
does not confirm copy (other mode, or the field left unset) does not offer the pattern at that
address: the case is skipped with what the broker answered (the receiver verifies the terminus,
2.6.3).
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._common10 import BARE_UNCHANGED, COPY_DOC, COPY_STATE, altered, by_id, check_mode, send_all, tasks, workers
from ._proton import QUIET, WAIT, Scenario, run, shown

SECTION = "amqp10/scenario.pubsub"


@case(f"{SECTION}/every-subscriber", title="every subscriber of a copy node gets every event, once",
      guideline=COPY_DOC, timeout=12.0)
def every_subscriber(ctx: Context) -> None:
    """Two subscribers attach to the broker's pub-sub node with distribution-mode copy (10 credits
    each), then a publisher sends 4 events. Passes when each subscriber gets all 4 events (copy,
    guideline), none twice on its link (3.5.2: no resend after accepted; a copy link keeps the
    state for it, MUST), each with the message-id and body it was sent with (3.2, 3.2.4)."""

    def body(sc: Scenario) -> None:
        address = sc.node("topic", "events")
        sc.step(f"two subscribers attach to {address!r} with distribution-mode copy ({sc.addressing.source})")
        subs = workers(sc, address, [10, 10], mode="copy", labels=["subscriber-1", "subscriber-2"])
        check_mode(sc, subs, "copy", unset_ok=False)
        producer = sc.client("publisher").sender(address)
        items = tasks(sc, 4, "event")
        sent = dict(items)
        send_all(sc, producer, items)
        sc.pump(lambda: all(len(s.inbox) >= len(items) for s in subs), WAIT)
        for s in subs:
            for r in list(s.inbox):
                s.accept(r)
        sc.quiet(QUIET)
        for s in subs:
            got = by_id([r for r in s.inbox if str(r.message.id) in sent])
            missing = sorted(set(sent) - set(got))
            sc.check(not missing, f"{s.client.label} gets every event", expected=f"all {len(items)} events",
                     observed=f"got {shown(sorted(got))}" + (f"; missing {missing}" if missing else ""))
            twice = sorted(k for k, v in got.items() if len(v) > 1)
            sc.check(not twice, f"{s.client.label} gets no event twice on its link",
                     expected="each event once", observed=shown(twice) if twice else "no repeat", clauses=COPY_STATE)
        bad = altered([r for s in subs for r in s.inbox], sent)
        sc.check(not bad, "events arrive with the message-id and body they were sent with",
                 expected="bare message unchanged", observed=shown(bad) if bad else "all as sent", clauses=BARE_UNCHANGED)

    run(ctx, body)


@case(f"{SECTION}/copy-node-keeps-message",
      title="a node that confirmed distribution-mode copy still offers an accepted message to the next link",
      guideline=COPY_DOC, timeout=12.0)
def copy_node_keeps_message(ctx: Context) -> None:
    """A producer sends 2 messages to a queue-like node; reader-1 attaches with distribution-mode
    copy, gets and accepts both; reader-2 then attaches with copy. When the broker confirmed copy on
    both sources, passes when reader-2 also gets both messages (copy: still available for other
    links from the same node, guideline) and reader-1 gets neither twice (3.5.2, MUST). Skipped
    when the broker does not confirm copy for this node."""

    def body(sc: Scenario) -> None:
        address = sc.node("queue", "log")
        producer = sc.client("producer").sender(address)
        items = tasks(sc, 2, "entry")
        sent = dict(items)
        send_all(sc, producer, items)
        sc.step(f"reader-1 attaches to {address!r} with distribution-mode copy and accepts what it gets")
        r1 = workers(sc, address, [10], mode="copy", labels=["reader-1"])[0]
        check_mode(sc, [r1], "copy", unset_ok=False)
        sc.pump(lambda: len(r1.inbox) >= len(items), WAIT)
        for r in list(r1.inbox):
            r1.accept(r)
        sc.step("reader-2 attaches to the same node with distribution-mode copy")
        r2 = workers(sc, address, [10], mode="copy", labels=["reader-2"])[0]
        check_mode(sc, [r2], "copy", unset_ok=False)
        sc.pump(lambda: len(r2.inbox) >= len(items), WAIT)
        sc.quiet(QUIET)
        got1 = by_id([r for r in r1.inbox if str(r.message.id) in sent])
        got2 = by_id([r for r in r2.inbox if str(r.message.id) in sent])
        sc.check(set(got1) == set(sent), "reader-1 gets both messages", expected=f"{sorted(sent)}",
                 observed=shown(sorted(got1)))
        sc.check(set(got2) == set(sent), "reader-2, attached after reader-1 accepted them, gets both messages too",
                 expected=f"{sorted(sent)}", observed=shown(sorted(got2)) if got2 else "nothing")
        twice = sorted(k for k, v in got1.items() if len(v) > 1)
        sc.check(not twice, "reader-1 gets no accepted message again", expected="each message once on its link",
                 observed=shown(twice) if twice else "no repeat", clauses=COPY_STATE)

    run(ctx, body)
