"""2.6.7 Flow control, from the client's side as sender: credit set (not added), drain after sending.

"link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)" (2.6.7/3):
each flow from the receiver sets the sender's credit; it does not add to what is left. Two flows
granting link-credit 1 with the same delivery-count, sent together before the client has sent
anything, leave it credit 1, not 2: "If the link-credit is less than or equal to zero ... a
sender MUST NOT send more messages" (2.6.7/9) -- one transfer of its three messages.

"The drain flag indicates how the sender SHOULD behave when insufficient messages are available
to consume the current link-credit. If set, the sender will (after sending all available
messages) advance the delivery-count as much as possible, consuming all link-credit, and send the
flow state to the receiver" (2.6.7/8). Granted 5 with drain while it has 3 messages to send, the
client sends the 3, then (not before) reports delivery-count advanced by 5 and link-credit 0.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import seq_add

from ._client import QUICK, at_most_one_delivery, drained_to, uncredited_sender


@case("amqp10/2.6.7/client-sender-credit-set-not-added", role="client", timeout=12.0,
      title="two flows granting link-credit 1 at the same delivery-count leave the client credit 1: one transfer of its 3 messages",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_set_not_added(ctx: Context) -> None:
    p, rcv = uncredited_sender(ctx, 3)
    p.peer.send(rcv.grant_frame(1), rcv.grant_frame(1))   # together: the client reads both before it can send
    at_most_one_delivery(ctx, p, rcv, "at most 1 delivery (credit 1, twice)")


@case("amqp10/2.6.7/client-sender-drains-after-sending", role="client", timeout=12.0,
      title="granted 5 with drain while it has 3 messages, the client sends the 3, then advances delivery-count by 5 with link-credit 0",
      clauses=("amqp10:2.6.7/8",))
def drains_after_sending(ctx: Context) -> None:
    p, rcv = uncredited_sender(ctx, 3)
    assert p.responder.session() is not None
    limit = seq_add(rcv.delivery_count, 5)
    rcv.grant(5, drain=True)
    drained = drained_to(limit, int(rcv.remote_handle or 0))
    obs = p.serve(QUICK * 2, stop=drained)
    order = [f for f in obs.received if performative_name(f) == "transfer" or drained(f)]
    transfers_before = 0
    for f in order:
        if drained(f):
            break
        if f.performative.delivery_id is not None:
            transfers_before += 1
    flows = [f for f in order if drained(f)]
    ok = transfers_before == 3 and bool(flows) and not (flows[0].performative.link_credit or 0)
    ctx.record(ok, expected=f"3 transfers, then a flow with delivery-count {limit} and link-credit 0",
               observed=f"{transfers_before} transfer(s) before " + (flows[0].summary()[:160] if flows else
                                                                     "no such flow") + f"; {obs.end}")
    p.serve()
    p.finish()
