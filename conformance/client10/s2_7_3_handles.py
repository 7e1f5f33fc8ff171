"""2.7.3 Attach: the handles of the client's links that are open at the same time.

"The handle MUST NOT be used for other open links" (2.7.3/2). The rpc workload keeps two links
attached at once (the request sender and the reply receiver): each attach of the client names a
handle that no other of its links still attached uses (a handle freed by the client's own
detach may be used again, 2.8.4).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name

from ._client import describe_frames, named, open_conversation, unmet


@case("amqp10/2.7.3/client-distinct-handles", role="client",
      title="the client's links attached at the same time (rpc: a sender and a receiver) use distinct handles",
      clauses=("amqp10:2.7.3/2",))
def distinct_handles(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    attaches = named(obs.received, "attach")
    if len(attaches) < 2:
        unmet("two attaches from the client", obs)
    open_: dict[tuple[int, int], str] = {}   # (channel, handle) -> the link's name, while attached
    reused = []
    for f in obs.received:
        name = performative_name(f)
        if name == "attach":
            key = (f.channel, int(f.performative.handle))
            if key in open_:
                reused.append(f"handle {key[1]} of link {open_[key]!r} named again by {str(f.performative.name)!r}")
            open_[key] = str(f.performative.name)
        elif name == "detach":
            open_.pop((f.channel, int(f.performative.handle)), None)
    ctx.record(not reused, expected="a handle of its own for each link attached at the same time",
               observed="; ".join(reused) if reused else describe_frames(attaches))
    p.finish()
