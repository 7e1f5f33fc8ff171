"""2.7.5 Transfer, aborted: the payload of the transfer that carries aborted=true.

"Aborted messages SHOULD be discarded by the recipient (any payload within the frame carrying
the performative MUST be ignored)" (2.7.5/20). The abort case of 2.6.14 aborts after a first
frame; here the one transfer of a delivery says aborted=true and carries a whole, decodable
message: a client that looks at the flag only on continuation frames hands it on. The message
'second' follows: it is the application's first message.
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._client import await_sender, client_closed, needs_driver, open_conversation


@case("amqp10/2.7.5/client-ignores-payload-of-aborted-transfer", role="client",
      title="a delivery of one transfer with aborted=true, carrying a whole message, is not given to the application; the next message is",
      clauses=("amqp10:2.7.5/20",))
def ignores_aborted_payload(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=5)
    _, snd = await_sender(p, credit=2)
    snd.send("aborted-whole", aborted=True)
    snd.send("second")
    obs = p.serve()
    got = [str(e.get("body", "")) for e in needs_driver(p).named("delivered")]
    ctx.record(bool(got) and got[0] == "second",
               expected="the application's first message is 'second' (the aborted transfer's payload ignored)",
               observed=f"delivered {got[:2]}; {client_closed(obs)}")
