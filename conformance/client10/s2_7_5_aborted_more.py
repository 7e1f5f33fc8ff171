"""2.7.5 Transfer: an aborted transfer that also says more=true, at the client as receiver.

"a receiver SHOULD ignore the value of the more field if the transfer is marked as aborted"
(2.7.5/11). We split a delivery, then abort it with a frame carrying aborted=true and
more=true (on purpose: "A sender SHOULD NOT set the more flag to true if it also sets the
aborted flag to true", 2.7.5/12, binds us, and is broken here to see the receiver's side),
then send a new message. The aborted delivery is over: the application's first message is
the new one, whole -- not held back waiting for more frames of the aborted delivery, nor
glued to its bytes.
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._aborted import abort_then_second
from ._client import client_closed


@case("amqp10/2.7.5/client-ignores-more-on-aborted", role="client",
      title="a delivery aborted by a transfer that also says more=true is over: the next message reaches the application whole",
      clauses=("amqp10:2.7.5/11",))
def ignores_more_on_aborted(ctx: Context) -> None:
    got, obs = abort_then_second(ctx, more=True)
    ok = bool(got) and got[0] == "second"
    ctx.record(ok, expected="the application's first message is 'second' (the aborted one over, more ignored)",
               observed=f"delivered {[g[:40] for g in got[:2]]}; {client_closed(obs)}")
