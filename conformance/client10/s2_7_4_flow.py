"""2.7.4 Flow: the fields of the client's flows.

"next-incoming-id ... This value MUST be set if the peer has received the begin frame for the
session, and MUST NOT be set if it has not" (2.7.4/1); it is the transfer-id the client expects
next: our begin starts our transfer ids at 4000, so after n transfers it is 4000 + n. A flow
the client sends after settling one of our deliveries, or whose delivery-count counts one, has
certainly come after our begin.
A flow about the session alone (no handle) carries none of the link's fields: "When the
handle field is not set, this field MUST NOT be set" (delivery-count 2.7.4/3, link-credit
2.7.4/7, available 2.7.4/8, drain 2.7.4/9 -- drain=false, its default, is taken as unset --
properties 2.7.4/14).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import Sender, seq_diff

from ._client import describe_frames, named, open_conversation, unmet

FIRST_ID = 4000


@case("amqp10/2.7.4/client-flow-next-incoming-id", role="client",
      title="the client's flows after it received one of our deliveries carry next-incoming-id, between 4001 and 4000 + the transfers sent",
      clauses=("amqp10:2.7.4/1",))
def next_incoming_id(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=2, credit=1,
                          responder={"begin_fields": {"next_outgoing_id": FIRST_ID}})
    p.responder.preload("amqpspec-q", ["one", "two"])
    obs = p.serve()
    snd = next(iter(p.responder.ever(Sender)), None)
    if snd is None or not snd.ids:
        unmet("deliveries to the client", obs)
    assert snd is not None
    sent = len(snd.ids)
    later = []
    seen_disposition = False
    for f in obs.received:
        name = performative_name(f)
        if name == "disposition":
            seen_disposition = True
        elif name == "flow" and (seen_disposition or (f.performative.delivery_count is not None
                                                      and seq_diff(int(f.performative.delivery_count), snd.init) >= 1)):
            later.append(f)   # it settled or counted one of our transfers: it had read our begin
    if not later:
        p.finish(0.2)
        raise Skip("the client sent no flow after receiving a delivery (nothing to judge)")
    wrong = [f for f in later if f.performative.next_incoming_id is None
             or not 1 <= seq_diff(int(f.performative.next_incoming_id), FIRST_ID) <= sent]
    ctx.record(not wrong, expected=f"next-incoming-id set, between {FIRST_ID + 1} and {FIRST_ID + sent}",
               observed=describe_frames(wrong) if wrong else f"{len(later)} flow(s) after a settlement, all right")
    p.finish()


@case("amqp10/2.7.4/client-session-flow-without-link-fields", role="client",
      title="a flow of the client without a handle carries no delivery-count, link-credit, available, drain or properties",
      clauses=("amqp10:2.7.4/3", "amqp10:2.7.4/7", "amqp10:2.7.4/8", "amqp10:2.7.4/9", "amqp10:2.7.4/14"))
def session_flow(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=3, credit=5)
    p.responder.preload("amqpspec-q", ["one", "two", "three"])
    obs = p.serve()
    bare = [f for f in named(obs.received, "flow") if f.performative.handle is None]
    if not bare:
        p.finish(0.2)
        raise Skip("the client sent no flow without a handle")
    wrong = [f for f in bare if f.performative.delivery_count is not None or f.performative.link_credit is not None
             or f.performative.available is not None or bool(f.performative.drain)
             or f.performative.properties is not None]
    ctx.record(not wrong, expected="no link field in a flow without a handle",
               observed=describe_frames(wrong) if wrong else f"{len(bare)} session flow(s) without link fields")
    p.finish()
