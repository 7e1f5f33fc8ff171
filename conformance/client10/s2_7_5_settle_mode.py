"""2.7.5 Transfer: the client's settled flags agree with the snd-settle-mode it attached with.

"If the negotiated value for snd-settle-mode at attachment is settled, then this field MUST be
true on at least one transfer frame for a delivery" (2.7.5/9); "If the negotiated value for
snd-settle-mode at attachment is unsettled, then this field MUST be false (or unset) on every
transfer frame for a delivery (unless the delivery is aborted)" (2.7.5/10). Our attach answers
with the mode the client asked for, so the negotiated value is the client's own. A client
attaching with mixed (the default) may do either: nothing to judge.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.session10 import Receiver

from ._client import named, open_conversation, unmet

SETTLED, UNSETTLED = 1, 0


@case("amqp10/2.7.5/client-settled-flag-follows-snd-settle-mode", role="client",
      title="attached with snd-settle-mode settled, the client settles each delivery on a transfer; with unsettled, on none",
      clauses=("amqp10:2.7.5/9", "amqp10:2.7.5/10"))
def settled_flag_follows_mode(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=2)
    obs = p.serve()
    p.finish()
    rcv = next(iter(p.responder.ever(Receiver)), None)
    if rcv is None or not rcv.received:
        unmet("deliveries from the client", obs)
    assert rcv is not None
    mode = getattr(rcv.remote, "snd_settle_mode", None) if rcv.remote is not None else None
    if mode is None or int(mode) not in (SETTLED, UNSETTLED):
        raise Skip("the client attached with snd-settle-mode mixed: settled or not, either is allowed")
    # each delivery's frames (continuations carry no delivery-id): settled on any, and on all
    handle = int(rcv.remote_handle or 0)
    per: dict[int, list[bool]] = {}
    current = None
    for f in named(obs.received, "transfer"):
        t = f.performative
        if t.handle is None or int(t.handle) != handle or t.aborted:
            continue
        if t.delivery_id is not None:
            current = int(t.delivery_id)
        if current is not None:
            per.setdefault(current, []).append(bool(t.settled))
    if not per:
        unmet("transfer frames of the client's deliveries", obs)
    want = int(mode) == SETTLED
    wrong = [did for did, flags in per.items() if any(flags) != want]
    name = "settled" if want else "unsettled"
    ctx.record(not wrong, expected="settled=true on a transfer of each delivery" if want else
               "settled false or unset on every transfer", what=f"snd-settle-mode {name}",
               observed=f"{len(per)} deliveries, settled flags per delivery {list(per.values())}")
