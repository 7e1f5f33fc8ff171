"""3.5 Addressing: a dynamic node asked for by the client.

"The address of the source MUST NOT be set when sent on a attach frame sent by the receiving
link endpoint where the dynamic flag is set to true (that is where the receiver is
requesting the sender to create an addressable node)" (3.5.3/1); the dynamic field says it
again: "When set to true by the receiving link endpoint ... In this case the address field MUST
NOT be set" (3.5.3/4). The rpc workload asks for
a dynamic reply node: its receiving attach has dynamic=true and no address.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case

from ._client import describe_frames, named, open_conversation, unmet


@case("amqp10/3.5.3/client-dynamic-source-without-address", role="client",
      title="the client's receiving attach asking for a dynamic node sets no source address",
      clauses=("amqp10:3.5.3/1", "amqp10:3.5.3/4"))
def dynamic_source(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    attaches = named(obs.received, "attach")
    if not attaches:
        unmet("an attach from the client", obs)
    dynamic = [f for f in attaches if bool(f.performative.role) and f.performative.source is not None
               and getattr(f.performative.source, "dynamic", False)]
    if not dynamic:
        p.finish(0.2)
        raise Skip("the client asked for no dynamic node (its rpc workload uses a named reply address)")
    wrong = [f for f in dynamic if f.performative.source.address is not None]
    ctx.record(not wrong, expected="source address absent where dynamic=true",
               observed=describe_frames(wrong) if wrong else describe_frames(dynamic))
    p.finish()
