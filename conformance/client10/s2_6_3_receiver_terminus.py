"""2.6.3 Establishing a link: the client as receiver checks the source the node created.

"if the application chooses not to create a terminus, the session endpoint will still create
a link endpoint and issue an attach indicating that the link endpoint has no associated local
terminus" (2.6.3, an attach with a null source for a receiving client), and "a peer MUST take
responsibility for verifying that the remote terminus meets its requirements" (2.6.3/6). Our
answer to the client's receiving attach has a null source and we do not detach: the client,
which asked for the node's address, does not keep waiting on a link with no source -- it
detaches the link (or ends the session or closes) within 4 s. The sending side of the same rule
is amqp10/2.6.3/client-checks-terminus.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name

from ._client import QUICK, client_closed, describe_frames, named, open_conversation, unmet


@case("amqp10/2.6.3/client-receiver-checks-terminus", role="client",
      title="its receiving link answered with a null source (no terminus created) and left attached, the client detaches it",
      clauses=("amqp10:2.6.3/6",))
def receiver_checks_terminus(ctx: Context) -> None:
    # the driver's own timeout (8 s) is past the window: a detach at the workload's end is not the answer
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=8, responder={"attach_fields": {"source": None}})
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "end", "close"))
    attaches = [f for f in named(obs.received, "attach") if bool(f.performative.role)]
    if not attaches:
        unmet("a receiving link's attach from the client", obs)
    handle = int(attaches[0].performative.handle)
    gone = [f for f in obs.received if performative_name(f) in ("end", "close") or
            (performative_name(f) == "detach" and int(f.performative.handle) == handle)]
    ctx.record(bool(gone), expected=f"a detach of handle {handle} (or end or close) within {QUICK * 2:.0f} s",
               observed=describe_frames(gone) if gone else client_closed(obs))
    p.serve()
    p.finish(0.5)
