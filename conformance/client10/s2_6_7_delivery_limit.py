"""2.6.7 Flow control: the client as sender keeps the receiver's delivery-limit.

"The sender's value MUST always be maintained in such a way as to match the delivery-limit
identified by the receiver" (2.6.7/2) and "whenever the sender increases delivery-count, it
MUST decrease link-credit by the same amount in order to maintain the delivery-limit
identified by the receiver" (2.6.7/5). The delivery-limit is delivery-count + link-credit as
the receiver last stated it; a flow the client sends about its sending link states its own
delivery-count and link-credit, so their sum (RFC-1982 serial arithmetic) must be that limit,
however many transfers it has sent meanwhile. We grant 5 and, after the first delivery, ask the
client to echo its state (a flow restating the same limit).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import seq_add

from ._client import QUICK, await_receiver, describe_frames, named, open_conversation, unmet

CREDIT = 5


@case("amqp10/2.6.7/client-sender-keeps-delivery-limit", role="client", timeout=10.0,
      title="granted link-credit 5, the client's sending link states delivery-count + link-credit = the limit we set",
      clauses=("amqp10:2.6.7/2", "amqp10:2.6.7/5"))
def keeps_delivery_limit(ctx: Context) -> None:
    # a session incoming-window of 1 holds the client after its first transfer with credit left
    # (4), so that its answer to the echo comes while the link is still open
    p = open_conversation(ctx, "send", count=3, timeout=8,
                          responder={"credit": CREDIT, "replenish": False,
                                     "begin_fields": {"incoming_window": 1}, "open_window": False})
    _, rcv = await_receiver(p)
    got = p.serve(QUICK * 1.5, stop=lambda _: len(rcv.received) >= 1)
    if not rcv.received:
        unmet("a first delivery from the client", got)
    cs = p.responder.session()
    assert cs is not None
    cs.ours.incoming_window = 100
    p.responder.open_window = True
    limit = rcv.credit_limit
    handle = int(rcv.remote_handle or 0)
    # the echo restates the limit we set (delivery-count as we counted it, the credit left)
    p.peer.send(cs.ours.flow_frame(rcv.handle, delivery_count=rcv.delivery_count, link_credit=rcv.link_credit,
                                   echo=True))
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "flow" and f.performative.handle is not None
                  and int(f.performative.handle) == handle)
    flows = [f for f in named(obs.received, "flow", cs.channel) if f.performative.handle is not None
             and int(f.performative.handle) == handle and f.performative.delivery_count is not None
             and f.performative.link_credit is not None]
    if not flows:
        p.serve()
        p.finish()
        raise Skip("the client's sender stated no delivery-count and link-credit (see amqp10/2.7.4/client-answers-echo)")
    wrong = [f for f in flows if seq_add(int(f.performative.delivery_count), int(f.performative.link_credit)) != limit]
    ctx.record(not wrong, expected=f"delivery-count + link-credit = {limit} (initial {rcv.init} + {CREDIT} granted)",
               observed=describe_frames(wrong) if wrong else describe_frames(flows))
    p.serve()
    p.finish()
