"""2.6.5 Detaching a link on error, from the client's side as receiver: a message larger than
its max-message-size.

The client's attach may announce max-message-size: "Any attempt to deliver a message larger
than this results in a message-size-exceeded link-error" (2.7.3, attach), and "When an error
occurs at a link endpoint, the endpoint MUST be detached with appropriate error information
supplied in the error field of the detach frame" (2.6.5/1). We send one message 100 octets
over the size the client announced: it detaches the link with amqp:link:message-size-exceeded.
A client that announces no limit (unset or 0, "no maximum size") has nothing to exceed.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import error_condition

from ._detach import limited_receiver, serve_until_detach
from ._client import describe_frames



@case("amqp10/2.6.5/client-detaches-on-message-size-exceeded", role="client",
      title="a message larger than the max-message-size of the client's receiving link makes it detach the link with amqp:link:message-size-exceeded",
      clauses=("amqp10:2.6.5/1",))
def message_size_exceeded(ctx: Context) -> None:
    p, snd, limit = limited_receiver(ctx, 1, "nothing to exceed here")
    cs = p.responder.session()
    assert cs is not None
    handle = int(snd.remote_handle or 0)
    snd.send("z" * (limit + 100))
    obs, detaches = serve_until_detach(p, cs.channel, handle)
    ok = bool(detaches) and str(error_condition(detaches[0].performative)) == "amqp:link:message-size-exceeded"
    ctx.record(ok, expected=f"detach of handle {handle} with amqp:link:message-size-exceeded (limit {limit} octets)",
               observed=describe_frames(obs.received))
    p.serve()
    p.finish()
