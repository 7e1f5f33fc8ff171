"""3.5.3 Source and 3.5.4 Target: the fields of the termini the client attaches with.

dynamic-node-properties, in both source and target: "If the dynamic field is not set to true
this field MUST be left unset" (3.5.3/6, 3.5.4/6). The rpc workload attaches both kinds of
link (a sender to the service's address, a receiver for replies, often dynamic): every source
and target of the client's attaches that does not ask for a dynamic node carries no
dynamic-node-properties.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case

from ._client import describe_frames, named, open_conversation, unmet


def _termini(attach: Any) -> list[tuple[str, Any]]:
    return [(kind, t) for kind, t in (("source", attach.source), ("target", attach.target)) if t is not None]


@case("amqp10/3.5.3/client-no-dynamic-node-properties-without-dynamic", role="client",
      title="no source or target of the client's attaches carries dynamic-node-properties without dynamic=true",
      clauses=("amqp10:3.5.3/6", "amqp10:3.5.4/6"))
def dynamic_node_properties(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    attaches = named(obs.received, "attach")
    if not attaches:
        unmet("an attach from the client", obs)
    wrong = [f"{kind} of {f.summary()[:100]}" for f in attaches for kind, t in _termini(f.performative)
             if getattr(t, "dynamic_node_properties", None) is not None and getattr(t, "dynamic", None) is not True]
    ctx.record(not wrong, expected="dynamic-node-properties unset wherever dynamic is not true",
               observed="; ".join(wrong) if wrong else f"{len(attaches)} attach(es): {describe_frames(attaches)}")
    p.finish()
