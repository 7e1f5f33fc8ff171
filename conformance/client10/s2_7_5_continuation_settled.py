"""2.7.5 Transfer, settled: the flag left unset on the continuation frames of a delivery.

"For subsequent transfers in a multi-transfer delivery if the settled flag is left unset then it
MUST be interpreted as true if and only if the value of the settled flag on any of the preceding
transfers was true" (2.7.5/8). We send one delivery of three frames, settled=true on the first
and unset on the others: the delivery is settled (by us, the sender), so the client, accepting
what it receives, has nothing to settle and sends no disposition for it. A client that reads the
flag of the last frame alone takes the delivery for unsettled and settles it in a disposition.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.session10 import covers

from ._client import await_sender, client_closed, describe_frames, named, needs_driver, open_conversation, unmet


@case("amqp10/2.7.5/client-settled-on-first-frame-only", role="client",
      title="a three-frame delivery settled on its first transfer only (unset after) is settled: the client sends no disposition for it",
      clauses=("amqp10:2.7.5/8",))
def settled_on_first_frame(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=2, ack=True)
    _, snd = await_sender(p)
    frames = snd.transfer_frames("settled-" + "s" * 2000, settled=True, max_frame_size=1024)
    if len(frames) < 3:
        unmet("a delivery split in three frames")
    did = int(frames[0].performative.delivery_id)
    p.peer.send(*frames)
    obs = p.serve()
    got = [str(e.get("body", "")) for e in needs_driver(p).named("delivered")]
    if not got:
        unmet("the delivery given to the application", obs)
    settling = [f for f in named(obs.received, "disposition") if covers(f.performative, did)]
    ctx.record(not settling, expected=f"no disposition for delivery {did} (settled by its first transfer)",
               observed=describe_frames(settling) if settling else f"none; {client_closed(obs)}")
