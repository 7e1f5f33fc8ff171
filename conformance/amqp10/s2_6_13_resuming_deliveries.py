"""Spec 2.6.13 Resuming Deliveries (transport): an unsettled map marked incomplete.

When an endpoint says its unsettled map is incomplete, the absence of a tag is no sign of
settlement: the two endpoints MUST first reduce their unsettled state (the sender resuming or
settling what the receiver lists), then suspend and re-attempt the resumption; only when both
maps are complete may new unsettled state be created by non-resuming transfers. We play the
receiver with an incomplete map (link recovery as in ``_recovery``: skipped where not offered).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp10.composite import show

from ._common import address, token_octets
from ._recovery import resume, suspend, unsettled_deliveries


@case("amqp10/2.6.13/incomplete-map-reduced-first",
      title="with the receiver's unsettled map incomplete the broker only resumes, then resumes fully after a new attempt",
      clauses=("amqp10:2.6.13/5", "amqp10:2.6.13/6"), timeout=20.0)
def incomplete_map(ctx: Context) -> None:
    """Takes two deliveries unsettled from a durable source (a third message waits in the node),
    suspends, and reattaches listing only the first tag (null state) with incomplete-unsettled=true,
    granting credit 5. The broker must resume the first (resume=true) and send nothing new: no
    non-resuming transfer while our map is incomplete. Then we suspend again and reattach with a
    complete map (the first tag alone): the broker must answer that re-attempt, and now resend the
    second message and deliver the third."""
    addr = address(ctx, "incomplete")
    bodies = [token_octets(ctx, f"m{i}") for i in range(3)]
    s, rcv, got = unsettled_deliveries(ctx, addr, bodies, take=2)
    first = bytes(got[0].transfer.delivery_tag)
    suspend(ctx, rcv)
    mark = len(rcv.received)
    attach = resume(ctx, rcv, {first: None}, incomplete=True)
    if attach is None:
        ctx.record(False, expected="the broker attaches the resumed link", observed="no attach",
                   clauses=("amqp10:2.6.13/5",))
        return
    rcv.grant(5)
    s.quiet()
    during = rcv.received[mark:]
    shown = "; ".join(f"tag {bytes(d.transfer.delivery_tag or b'')!r} resume={bool(d.transfer.resume)}"
                      for d in during) or "nothing"
    ctx.record(any(bytes(d.transfer.delivery_tag or b"") == first and d.transfer.resume for d in during)
               and not any(not d.transfer.resume for d in during),
               expected="the delivery the receiver listed resumed (resume=true), and no non-resuming transfer "
                        "while the receiver's map is incomplete", observed=shown, clauses=("amqp10:2.6.13/5",))
    for d in during:
        if d.transfer.delivery_id is not None and not d.transfer.settled:
            rcv.accept(d)
    suspend(ctx, rcv)
    mark = len(rcv.received)
    again = resume(ctx, rcv, {})
    if again is not None:
        rcv.grant(5)
        s.quiet()
    after = [d.payload for d in rcv.received[mark:]]
    wanted = [got[1].payload]
    ctx.record(again is not None and all(w in after for w in wanted) and len(after) >= 2,
               expected="the re-attempted resumption answered, the second message resent and the third delivered",
               observed=f"attach {show(again)}; {len(after)} deliveries", clauses=("amqp10:2.6.13/6",))
