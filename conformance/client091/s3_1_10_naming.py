"""3.1.10 Naming Conventions, as the client names what it declares.

"The server and client MUST respect these conventions: ... Standard message queues are
prefixed by "amq." All other exchange, system service, and message queue names are in
application space" (3.1.10/1), and "Queue names starting with "amq." are reserved for
pre-declared and standardised queues. The client MAY declare a queue starting with "amq." if
the passive option is set, or the queue already exists" (queue.declare.queue/reserved). The
rpc workload declares its reply queue: a client that names it itself (instead of leaving the
name empty for the server to generate) must not take a name from the reserved "amq." space --
unless passive, or re-declaring a queue that exists (one the server named).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame

from ._client import open_conversation, unmet

RESERVED = ("amqp091:3.1.10/1", "amqp091:queue.declare.queue/reserved")


@case("amqp091/3.1.10/client-declares-no-reserved-queue-name", role="client",
      title="the reply queue the client declares is not given a new name starting with \"amq.\"",
      clauses=RESERVED)
def no_reserved_queue_name(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    declares: list[MethodFrame] = []
    wrong: list[str] = []

    def declaring(frame: MethodFrame) -> None:
        declares.append(frame)
        name = str(frame.method.queue)
        if name.startswith("amq.") and not frame.method.passive and name not in p.responder.queues:
            wrong.append(frame.summary())
        return None  # the default answer follows

    p.responder.on("queue.declare", declaring)
    obs = p.serve()
    if not declares:
        unmet("queue.declare", obs)
    ctx.record(not wrong, expected="queue.declare with an empty name, a name outside \"amq.\", passive, or of an existing queue",
               observed="; ".join(wrong) or "; ".join(f.summary() for f in declares))
    p.finish()
