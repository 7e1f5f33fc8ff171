"""2.6.2 Link endpoints: the two ends of a link name it by handles of their own.

"The two endpoints are not REQUIRED to use the same handle. This means a peer is free to
independently chose its handle when a link endpoint is associated with the session. The locally
chosen handle is referred to as the output handle. The remotely chosen handle is referred to as
the input handle." (2.6.2/1). Our attach answering the client's receiving link takes handle 7:
the client takes the delivery we send on 7, and its own frames about the link (flow,
disposition is by delivery-id, detach) name its output handle, never ours.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.server10 import is_performative
from amqpspec.peer.session10 import Sender

from ._client import QUICK, describe_frames, needs_driver, open_conversation, unmet

OURS = 7   # our handle for the link (the client's first link is usually 0)


@case("amqp10/2.6.2/client-maps-partner-handle", role="client",
      title="with our attach on handle 7, the client takes the delivery sent on 7 and names its own handle in its flows and detach",
      clauses=("amqp10:2.6.2/1",))
def maps_partner_handle(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=2)
    begun = p.serve(QUICK * 2, stop=is_performative("begin"))
    cs = p.responder.session()
    if cs is None:
        unmet("a begin from the client", begun)
    while p.peer.free_handle(cs.ours.channel) < OURS - 1:
        pass   # the handles below OURS are taken: our next attach uses OURS
    p.responder.preload("amqpspec-q", ["on handle 7"])
    obs = p.serve()
    snd = next(iter(p.responder.ever(Sender)), None)
    if snd is None or snd.handle != OURS or snd.remote_handle is None:
        unmet(f"a receiving link of the client answered on our handle {OURS}", obs)
    theirs = int(snd.remote_handle)
    if theirs == OURS:
        p.finish(0.2)
        raise Skip(f"the client chose handle {OURS} too: the two handles cannot be told apart")
    link_frames = [f for f in begun.received + obs.received if f.channel == cs.channel
                   and getattr(f.performative, "handle", None) is not None and performative_name(f) in ("flow", "detach")]
    wrong = [f for f in link_frames if int(f.performative.handle) != theirs]
    got = [str(e.get("body", "")) for e in needs_driver(p).named("delivered")]
    ok = not wrong and got[:1] == ["on handle 7"]
    ctx.record(ok, expected=f"the message delivered; flows and detach on the client's handle {theirs}, never {OURS}",
               observed=f"delivered {got[:2]}; " + (f"on another handle: {describe_frames(wrong)}" if wrong
                                                    else f"{len(link_frames)} flow/detach frame(s) on {theirs}"))
