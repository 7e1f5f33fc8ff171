"""2.6.5 Link errors: input on a link the client has detached with an error.

"When an error occurs at a link endpoint, the endpoint MUST be detached with appropriate error
information ... The link endpoint MUST then be destroyed. If any input (other than a detach)
related to the endpoint either via the input handle or delivery-ids be received, the session
MUST be terminated with an errant-link session-error" (2.6.5/2, 2.6.5/3). The error is the one
the message-size case provokes: a message over the max-message-size the client's receiving link
announced. We do not answer its detach; we send another transfer on the link: the client ends
the session (or closes the connection) with amqp:session:errant-link. A client that announces
no limit, or never detaches with an error, gives the case no starting point (skipped).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import error_condition, performative_name

from ._client import QUICK, await_sender, describe_frames, open_conversation
from ._detach import serve_until_detach

LARGEST = 1 << 20   # past this, too much to send in a quick case


@case("amqp10/2.6.5/client-ends-session-on-input-after-link-error", role="client",
      title="a transfer on a link the client detached with an error makes it end the session with amqp:session:errant-link",
      clauses=("amqp10:2.6.5/2", "amqp10:2.6.5/3"))
def errant_link(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=2, timeout=6)
    _, snd = await_sender(p)
    limit = int(getattr(snd.remote, "max_message_size", None) or 0) if snd.remote is not None else 0
    if not limit or limit > LARGEST:
        p.finish(0.2)
        raise Skip(f"the client's receiving link announces max-message-size {limit or 'none'}: no link error to provoke")
    cs = p.responder.session()
    assert cs is not None
    handle = int(snd.remote_handle or 0)
    p.responder.on("detach", lambda f: False)   # its detach stays unanswered: the link is not ours to close
    snd.send("z" * (limit + 100))
    obs, detaches = serve_until_detach(p, cs.channel, handle)
    if not detaches or error_condition(detaches[0].performative) is None:
        p.responder.overrides.pop("detach", None)
        p.serve()
        p.finish()
        raise Skip(f"the client did not detach the link with an error ({describe_frames(obs.received)})")
    p.responder.overrides.pop("detach", None)
    snd.send("after the link error")
    after = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("end", "close"))
    ends = [f for f in after.received if performative_name(f) in ("end", "close")]
    ok = bool(ends) and str(error_condition(ends[0].performative)) == "amqp:session:errant-link"
    ctx.record(ok, expected="end (or close) with amqp:session:errant-link",
               observed=describe_frames(after.received) + f"; {after.end}")
    p.serve()
    p.finish()
