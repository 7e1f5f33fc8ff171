"""2.7.6 Disposition, from the client's side as receiver.

"The disposition frame MAY reference deliveries from many different links associated with a
session, although all links MUST have the directionality indicated by the specified role"
(2.7.6/1): the client settles what it receives on its receiving link, so every disposition
it sends about our deliveries says role=receiver.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.session10 import Sender, covers

from ._client import describe_frames, named, open_conversation, unmet


@case("amqp10/2.7.6/client-disposition-role", role="client",
      title="every disposition the client sends about deliveries it received says role=receiver",
      clauses=("amqp10:2.7.6/1",))
def disposition_role(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=2, credit=5, ack=True)
    p.responder.preload("amqpspec-q", ["one", "two"])
    obs = p.serve()
    snd = next(iter(p.responder.ever(Sender)), None)
    dispositions = [f for f in named(obs.received, "disposition")
                    if snd is not None and any(covers(f.performative, did) for did in snd.ids)]
    if not dispositions:
        unmet("a disposition from the client about our deliveries", obs)
    wrong = [f for f in dispositions if not bool(f.performative.role)]
    ctx.record(not wrong, expected="role=receiver in each", observed=describe_frames(wrong) if wrong else
               f"{len(dispositions)} disposition(s), role=receiver")
    p.finish()
