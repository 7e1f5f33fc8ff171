"""RabbitMQ's connection.blocked and connection.unblocked, as a publishing client takes them.

"This method indicates that a connection has been blocked and does not accept new publishes"
(connection.blocked); "This method indicates that a connection has been unblocked and now
accepts publishes" (connection.unblocked). The server sends them only to a client that
announced ``capabilities.connection.blocked`` (otherwise the case is skipped). Blocked right
behind open-ok, a client publishes nothing until it is unblocked -- here on a confirm channel,
whose publishes many libraries write through another path than plain ones -- and once
unblocked, it publishes what its application asked for: a client that stays blocked never
delivers its messages (a client that published everything while blocked has nothing to resume:
skipped).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import QUICK, describe_errors, error_closes
from ._rabbitmq import blocked_at_open, holds_while_blocked

BLOCKED = "This method indicates that a connection has been blocked and does not accept new publishes."
UNBLOCKED = "This method indicates that a connection has been unblocked and now accepts publishes."
HOLD_S = 1.5
SHORT_HOLD_S = 0.5


@case("amqp091/rabbitmq.connection.blocked/client-holds-confirmed-publishes", role="client",
      title="after connection.blocked nothing is published on a confirm channel until unblocked",
      guideline=BLOCKED)
def holds_confirmed_publishes(ctx: Context) -> None:
    holds_while_blocked(ctx, "confirm", 2, HOLD_S, BLOCKED)


@case("amqp091/rabbitmq.connection.unblocked/client-publishes-after-unblocked", role="client",
      title="blocked at open and unblocked 0.5 s later, the client publishes its three messages",
      guideline=UNBLOCKED)
def publishes_after_unblocked(ctx: Context) -> None:
    p = blocked_at_open(ctx, "publish", 3)
    first = p.serve(SHORT_HOLD_S)
    if len(p.responder.contents) >= 3:
        p.finish()
        raise Skip("the client published all its messages while blocked: there is no publishing to resume "
                   "(the connection.blocked cases judge that)")
    if first.closed:  # it gave up while blocked: it never reads the unblocked
        ctx.record(False, guideline=UNBLOCKED, expected="the client waits for connection.unblocked, then publishes",
                   observed="the client ended the connection while blocked: "
                   + first.describe().replace("by broker", "by the client"))
        p.finish()
        return
    p.peer.send(MethodFrame(0, spec.ConnectionUnblocked()))
    obs = p.serve(QUICK * 2, stop=lambda f: len(p.responder.contents) >= 3)
    errors = error_closes(first) + error_closes(obs)
    sent = len(p.responder.contents)
    ctx.record(sent >= 3 and not errors, guideline=UNBLOCKED,
               expected=f"the three messages published within {QUICK * 2:g} s of connection.unblocked, no exception",
               observed=f"{sent} published; {describe_errors(errors)}")
    p.serve(QUICK)
    p.finish()
