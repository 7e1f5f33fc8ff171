"""2.7.6 Disposition: the outcome of a delivery whose link we detached without closing it.

"The disposition performative MAY refer to deliveries on links that are no longer attached. As
long as the links have not been closed or detached with an error then the deliveries are still
"live" and the updated state MUST be applied" (2.7.6/2, 2.7.6/3). The client sends one message
unsettled; we hold its outcome, detach the link without closing it and without an error (the
client answers with its own detach), then settle the delivery as accepted: the client applies
it -- its application is told the message was accepted. A client that answers by closing the
link (closed=true) has ended the deliveries' life itself: the case cannot judge (skipped).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name

from ._client import QUICK, await_receiver, describe_frames, named, needs_driver, open_conversation, unmet


@case("amqp10/2.7.6/client-applies-outcome-after-detach", role="client", timeout=12.0,
      title="a delivery settled as accepted after we detached its link (not closed, no error) is reported accepted by the client",
      clauses=("amqp10:2.7.6/3",))
def applies_outcome_after_detach(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, timeout=8, responder={"settle_deliveries": False})
    _, rcv = await_receiver(p)
    first = p.serve(QUICK * 1.5, stop=lambda _: len(rcv.received) >= 1)
    if not rcv.received:
        unmet("a delivery from the client", first)
    d = rcv.received[0]
    if d.transfer.settled or d.transfer.delivery_id is None:
        p.serve()
        p.finish()
        unmet("an unsettled delivery from the client (it sent it settled: there is no outcome to apply)")
    p.responder.detach_link(rcv, closed=False)
    answered = p.serve(QUICK, stop=lambda f: performative_name(f) in ("detach", "end", "close"))
    closing = [f for f in named(answered.received, "detach") if f.performative.closed]
    if closing:
        # a link the client closed has no live deliveries left (2.7.6/3 says so): nothing to judge
        p.serve()
        p.finish()
        raise Skip(f"the client answered our non-closing detach by closing the link ({closing[0].summary()[:80]}): "
                   "its deliveries are no longer live")
    p.peer.send(rcv.disposition_frame(int(d.transfer.delivery_id), settled=True))
    obs = p.serve(QUICK)   # the outcome is told at once; what the client does with the link afterwards is not judged
    out = needs_driver(p)
    confirmed = [e for e in out.named("confirmed") if e.get("ack") is not False]
    ctx.record(bool(confirmed), expected="the application told the delivery was accepted (a confirmed event)",
               observed=f"driver events {[e.get('event') for e in out.events][:8]}; client sent "
                        f"{describe_frames(answered.received + obs.received)}")
