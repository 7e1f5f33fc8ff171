"""3.4.1 Received: the delivery state the client sends as the sender of messages.

"The sender MUST NOT send the received state on transfer or disposition performatives except
on the first transfer performative on a resumed delivery" (3.4.1/1). In the send workload the
client starts new deliveries (none is resumed): none of its transfers, and none of its
dispositions as sender, carries the received state.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp10 import spec

from ._client import describe_frames, named, open_conversation, unmet


@case("amqp10/3.4.1/client-sender-no-received-state", role="client",
      title="the client's transfers (new deliveries) and its dispositions as sender never carry the received state",
      clauses=("amqp10:3.4.1/1",))
def no_received_state(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=2)
    obs = p.serve()
    transfers = named(obs.received, "transfer")
    if not transfers:
        unmet("a transfer from the client", obs)
    wrong = [f for f in transfers if isinstance(f.performative.state, spec.Received) and not f.performative.resume]
    wrong += [f for f in named(obs.received, "disposition")
              if not bool(f.performative.role) and isinstance(f.performative.state, spec.Received)]
    ctx.record(not wrong, expected="no received state on a transfer of a new delivery or a sender's disposition",
               observed=describe_frames(wrong) if wrong else f"{len(transfers)} transfer(s) without it")
    p.finish()
