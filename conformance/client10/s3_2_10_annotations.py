"""3.2.10 Annotations, at the client as receiver.

"Keys beginning with "x-opt-" MUST be ignored if not understood" (3.2.10/1); "On receiving an
annotation key which is not understood, and which does not begin with "x-opt", the receiving
AMQP container MUST detach the link with a not-implemented error" (3.2.10/2). We deliver a
message whose message-annotations carry a key of our own: "x-opt-amqpspec-hint" (the client
takes the message as usual and keeps the link), or "x-amqpspec-must-understand" (a key no
library can understand, and not optional: the client detaches with amqp:not-implemented).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import error_condition
from amqpspec.wire.amqp10 import Message, Symbol, spec

from ._detach import serve_until_detach
from ._client import await_sender, client_closed, describe_frames, error_frames, needs_driver, \
    open_conversation


def _annotated(key: str, body: str) -> Message:
    return Message(message_annotations=spec.MessageAnnotations({Symbol(key): "amqpspec"}), body=spec.AmqpValue(body))


@case("amqp10/3.2.10/client-ignores-unknown-x-opt-annotation", role="client",
      title="a message annotated with an x-opt- key the client does not know reaches the application, the link kept",
      clauses=("amqp10:3.2.10/1",))
def ignores_x_opt(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    snd.send(_annotated("x-opt-amqpspec-hint", "annotated"))
    obs = p.serve()
    out = needs_driver(p)
    got = [str(e.get("body", "")) for e in out.named("delivered")]
    errors = error_frames(obs.received)
    ctx.record(got[:1] == ["annotated"] and not errors,
               expected="the message 'annotated' delivered, no detach, end or close with an error",
               observed=f"delivered {got[:2]}; errors: {describe_frames(errors)}; {client_closed(obs)}")


@case("amqp10/3.2.10/client-detaches-on-unknown-annotation", role="client",
      title="a message annotated with a key the client cannot understand, not x-opt-, makes it detach the link with amqp:not-implemented",
      clauses=("amqp10:3.2.10/2",))
def detaches_on_unknown(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    handle = int(snd.remote_handle or 0)
    snd.send(_annotated("x-amqpspec-must-understand", "must understand"))
    obs, detaches = serve_until_detach(p, cs.channel, handle)
    ok = bool(detaches) and str(error_condition(detaches[0].performative)) == "amqp:not-implemented"
    ctx.record(ok, expected=f"detach of handle {handle} with amqp:not-implemented",
               observed=describe_frames(obs.received))
    p.serve()
    p.finish()
