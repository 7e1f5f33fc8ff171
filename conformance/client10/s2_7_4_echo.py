"""2.7.4 Flow: the client's answer to an echo does not ask for an echo in turn.

"Note that if a peer responds to echo requests with flows which themselves have the echo
field set to true, an infinite loop could result if its partner adopts the same policy
(therefore such a policy SHOULD be avoided)" (2.7.4/13). We ask the client's receiving link
for its state twice (echo=true); the flows it sends about that link afterwards carry echo
false (or none). A client that does not answer at all is another case's finding
(amqp10/2.7.4/client-answers-echo): nothing to judge here.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name

from ._client import QUICK, await_sender, describe_frames, named, open_conversation


@case("amqp10/2.7.4/client-echo-not-echoed", role="client",
      title="the flows answering our echo requests on the client's receiving link do not set echo themselves",
      clauses=("amqp10:2.7.4/13",))
def echo_not_echoed(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    handle = int(snd.remote_handle or 0)
    answers = []
    for _ in range(2):
        p.peer.send(cs.ours.flow_frame(snd.handle, delivery_count=snd.delivery_count, link_credit=snd.link_credit,
                                       available=0, echo=True))
        obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "flow" and f.performative.handle is not None
                      and int(f.performative.handle) == handle)
        answers += [f for f in named(obs.received, "flow", cs.channel)
                    if f.performative.handle is not None and int(f.performative.handle) == handle]
    if not answers:
        p.responder.preload("amqpspec-q", ["after echo"])
        p.responder.pump(snd)
        p.serve()
        p.finish()
        raise Skip("the client did not answer our echo requests (see amqp10/2.7.4/client-answers-echo)")
    wrong = [f for f in answers if bool(f.performative.echo)]
    ctx.record(not wrong, expected="echo false in the flows answering ours",
               observed=describe_frames(wrong) if wrong else f"{len(answers)} answering flow(s), echo false")
    p.responder.preload("amqpspec-q", ["after echo"])
    p.responder.pump(snd)
    p.serve()
    p.finish()
