"""The tx class, as the client uses it.

"The client MUST NOT use the Commit method on non-transacted channels" (tx.commit/
transacted): the tx workload's commit must follow a tx.select (answered select-ok) on the
same channel.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame

from ._client import open_conversation, unmet


@case("amqp091/tx.commit/client-commits-only-transacted", role="client",
      title="tx.commit comes on a channel the client selected for transactions",
      clauses=("amqp091:tx.commit/transacted",))
def commits_transacted(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", count=2)
    selected: set[int] = set()
    wrong: list[str] = []

    def on_select(frame: MethodFrame) -> None:
        selected.add(frame.channel)
        return None

    def on_commit(frame: MethodFrame) -> None:
        if frame.channel not in selected:
            wrong.append(frame.summary())
        return None

    p.responder.on("tx.select", on_select).on("tx.commit", on_commit)
    obs = p.serve()
    commits = obs.methods("tx.commit")
    if not commits:
        unmet("tx.commit", obs)
    ctx.record(not wrong, expected="tx.commit only on a channel after its tx.select",
               observed="; ".join(wrong) or f"{len(commits)} commit(s) on channel(s) {sorted(selected)}, all selected")
    p.finish()

