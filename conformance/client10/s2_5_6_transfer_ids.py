"""2.5.6 Session flow control: the client's next-incoming-id, counted from the server's ids.

Transfer ids are the sender's: its begin's next-outgoing-id, which "MAY be initialized to an
arbitrary value and is incremented after each successive transfer according to RFC-1982
serial number arithmetic" (2.5.6/1) -- a receiver counts from there, not from 0. And "When
the endpoint receives a flow frame from its peer, it MUST update the next-incoming-id
directly from the next-outgoing-id of the frame" (2.5.6/7). The playing broker begins at
4294967295, the last serial before the wrap, and sends two transfers (ids 4294967295 and 0),
then a flow (echo set, so a flow comes back) whose next-outgoing-id is 1. The client asked
for three messages with a credit of two, so it also has to grant more credit to get the
third: flows come either way. Every flow it sends in the second after our flow may name
4294967295, 0 or 1 (what it had counted when it wrote the flow), and the last one must name
1; only then does the third message go.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case

from ._client import await_sender, client_closed, open_conversation

START = (1 << 32) - 1   # our first transfer-id: the second one wraps to 0
AFTER_TWO = 1


@case("amqp10/2.5.6/client-next-incoming-id-follows-server", role="client",
      title="beginning at transfer-id 4294967295, after two transfers and our flow the client's flows name next-incoming-id 1",
      clauses=("amqp10:2.5.6/7", "amqp10:2.5.6/1"))
def next_incoming_id(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=3, credit=2, timeout=6,
                          responder={"begin_fields": {"next_outgoing_id": START}})
    _, snd = await_sender(p, credit=2)
    cs = p.responder.session()
    assert cs is not None
    mark = len(p.responder.client_flows)
    snd.send("first")
    snd.send("second")
    p.peer.send(cs.ours.flow_frame(snd.handle, delivery_count=snd.delivery_count, link_credit=snd.link_credit,
                                   echo=True))
    obs = p.serve(1.0)
    flows = [f for ch, f in p.responder.client_flows[mark:] if ch == cs.channel]
    p.responder.preload("amqpspec-q", ["third"])   # what the client still waits for
    p.responder.pump(snd)
    if not flows:
        p.serve()
        p.finish(0.2)
        raise Skip("the client sent no flow after our transfers, not even for our echo")
    ids = [None if f.next_incoming_id is None else int(f.next_incoming_id) for f in flows]
    ok = all(i in (START, 0, AFTER_TWO) for i in ids) and ids[-1] == AFTER_TWO
    ctx.record(ok, expected=f"next-incoming-id among {START}, 0, {AFTER_TWO}, the last {AFTER_TWO}",
               observed=f"next-incoming-id in the client's flows after our transfers: {ids}; {client_closed(obs)}")
    p.serve()
    p.finish()
