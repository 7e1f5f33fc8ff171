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

from ._client import open_conversation
from ._detach import await_receiving_attach, record_left


@case("amqp10/2.6.3/client-receiver-checks-terminus", role="client",
      title="its receiving link answered with a null source (no terminus created) and left attached, the client detaches it",
      clauses=("amqp10:2.6.3/6",))
def receiver_checks_terminus(ctx: Context) -> None:
    # the driver's own timeout (8 s) is past the window: a detach at the workload's end is not the answer
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=8, responder={"attach_fields": {"source": None}})
    obs, attach = await_receiving_attach(p)
    record_left(ctx, p, obs, attach)
