"""2.7.4 Flow, echo: a request for the client's session state.

"echo: request state from partner. If set to true then the receiver SHOULD send its state at the
earliest convenient opportunity" (2.7.4/10); "If set to true, and the handle field is not set,
then the sender only requires session endpoint state to be echoed, however, the receiver MAY
fulfil this requirement by sending a flow performative carrying link-specific state" (2.7.4/11).
The link-level echo is amqp10/2.7.4/client-answers-echo; here our flow names no handle. The client
waits for a message we do not send yet (nothing else would make it speak): a flow of its on the
session's channel within 2 s is its answer, about the session alone or about a link.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name

from ._client import QUICK, await_sender, client_closed, describe_frames, named, open_conversation


@case("amqp10/2.7.4/client-answers-session-echo", role="client",
      title="a flow with echo=true and no handle is answered with a flow from the client (its session state)",
      clauses=("amqp10:2.7.4/10",))
def answers_session_echo(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    p.serve(0.3)   # what the client says of itself after attaching is not the answer
    p.peer.send(cs.ours.flow_frame(echo=True))
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "flow" and f.channel == cs.channel)
    got = named(obs.received, "flow", cs.channel)
    ctx.record(bool(got), expected=f"a flow on channel {cs.channel} within {QUICK:.0f} s",
               observed=describe_frames(got) if got else client_closed(obs))
    p.responder.preload("amqpspec-q", ["after the echo"])
    p.responder.pump(snd)
    p.serve()
    p.finish()
