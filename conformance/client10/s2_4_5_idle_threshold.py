"""2.4.5 Idle time-out: the threshold behind the value a client announces.

"To avoid spurious timeouts, the value in idle-time-out SHOULD be half the peer's actual
timeout threshold" (2.4.5/3): a client that announced T ms does not give up on a server
that stayed silent for less than 2T. The playing broker keeps quiet for 1.3 T, counted from
the last octet it sent (so the silence is measured, not the beat interval), then speaks
again: a client that closes meanwhile holds the server to T itself, the spurious time-out
the sentence is there to avoid. (A client that closes only past 2T is the case
2.4.5/client-detects-silent-server.)
"""
from __future__ import annotations

import time

from amqpspec.case import Context, Skip, case
from amqpspec.clauses import Level
from amqpspec.wire.amqp10 import EmptyFrame

from ._client import client_closed, idle_conversation, named

SILENCE = 1.3     # times the announced idle-time-out the server stays silent (below the threshold of 2)
LONGEST = 3000    # ms: a longer announced idle-time-out is not waited out here


@case("amqp10/2.4.5/client-waits-twice-its-idle-time-out", role="client", timeout=12.0,
      title="a client that announced an idle-time-out T does not close when the server is silent for 1.3 T (its threshold is 2 T)",
      clauses=("amqp10:2.4.5/3",))
def waits_twice(ctx: Context) -> None:
    # heartbeat 2 s: an announced time-out of 1 or 2 s leaves room either side of 1.3 T on a busy machine
    p, idle = idle_conversation(ctx, timeout=8, heartbeat=2)
    if idle > LONGEST:
        p.finish(0.2)
        raise Skip(f"the client's idle-time-out ({idle} ms) is longer than this case waits")
    p.serve(0.3)
    quiet = max(0.0, p.peer.last_sent + SILENCE * idle / 1000 - time.monotonic())
    silent = p.serve(quiet, heartbeats=False)
    if silent.end == "open":
        p.peer.send(EmptyFrame(0))
    after = p.serve(0.5) if silent.end == "open" else silent
    closed = bool(named(silent.received, "close")) or silent.closed or bool(named(after.received, "close")) \
        or after.closed
    ctx.record(not closed, expected=f"the connection kept through {SILENCE:g} x the {idle} ms announced",
               observed=f"after {SILENCE * idle / 1000:.2f} s of silence: "
                        f"{client_closed(silent if silent.end != 'open' else after)}",
               guideline="the value in idle-time-out SHOULD be half the peer's actual timeout threshold",
               level=Level.SHOULD)
    p.serve()
    p.finish()
