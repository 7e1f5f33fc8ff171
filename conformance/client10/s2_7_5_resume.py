"""2.7.5 Transfer, resume: a resumed delivery the client (as receiver) never had.

"The receiver MUST ignore resumed deliveries that are not in its local unsettled map"
(2.7.5/15), and of deliveries only the sender still holds: "If the sending application marks
the resend attempt as a resumed delivery then it MUST be ignored by the receiver" (2.6.13/2).
On a link the client has just attached (its unsettled map is empty: it has received nothing
yet) we send one delivery with resume=true, then the message 'second': the application's
first message is 'second'.
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._client import await_sender, client_closed, needs_driver, open_conversation


@case("amqp10/2.7.5/client-ignores-unknown-resumed-delivery", role="client",
      title="a delivery with resume=true that the client never had is not given to the application; the next message is",
      clauses=("amqp10:2.7.5/15", "amqp10:2.6.13/2"))
def ignores_unknown_resumed(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=5)
    _, snd = await_sender(p, credit=2)
    snd.send("resumed-never-sent", tag=b"resumed-1", resume=True)
    snd.send("second")
    obs = p.serve()
    got = [str(e.get("body", "")) for e in needs_driver(p).named("delivered")]
    ok = bool(got) and got[0] == "second"
    ctx.record(ok, expected="the application's first message is 'second' (the unknown resumed delivery ignored)",
               observed=f"delivered {got[:2]}; {client_closed(obs)}")
