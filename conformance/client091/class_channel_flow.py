"""channel.flow, the restart: a client stopped by the server sends content again after flow(active=true).

channel.flow active: "If 1, the peer starts sending content frames. If 0, the peer stops
sending content frames." The stop is checked by amqp091/channel.flow/client-holds-content-while-stopped;
this case checks the other half: the channel is stopped right after its open-ok, the client
answers, and after flow(active=true) the workload's publishes arrive. A client that ignored
the stop and published everything before the restart shows nothing about the restart: the
case cannot decide (an error, not a verdict).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import QUICK, open_conversation, stopped_on_open, unmet

FLOW_ACTIVE = "If 1, the peer starts sending content frames. If 0, the peer stops sending content frames."
COUNT = 10


@case("amqp091/channel.flow/client-resumes-after-flow-restart", role="client",
      title="a channel stopped by channel.flow(active=false) carries the workload's content again within 2 s of "
            "flow(active=true)",
      guideline=FLOW_ACTIVE)
def resumes_after_restart(ctx: Context) -> None:
    p = open_conversation(ctx, "publish", count=COUNT, body="r" * 64)
    answer, ch = stopped_on_open(p)
    pause = p.serve(QUICK / 4)
    before = len(answer.methods("basic.publish", ch)) + len(pause.methods("basic.publish", ch))
    if before >= COUNT or answer.closed or pause.closed:
        unmet(f"the client still holding content when flow restarts ({before} of {COUNT} published before)",
              pause if not answer.closed else answer)
    p.peer.send(MethodFrame(ch, spec.ChannelFlow(True)))
    after = p.serve(QUICK, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.publish")
    resumed = after.methods("basic.publish", ch)
    if resumed:
        p.serve()
    ctx.record(bool(resumed), guideline=FLOW_ACTIVE,
               expected=f"basic.publish on channel {ch} within {QUICK:g} s of channel.flow(active=true)",
               observed=(f"publishing resumed ({before} before the restart)" if resumed
                         else after.describe().replace("by broker", "by the client")))
    p.finish()
