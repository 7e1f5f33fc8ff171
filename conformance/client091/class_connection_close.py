"""connection.close from the client: naming the method that provoked it.

connection.close class-id: "When the close is provoked by a method exception, this is the
class of the method."; method-id: "When the close is provoked by a method exception, this is
the ID of the method." A connection.tune on channel 1 after the connection is open is such a
method (a connection-class method on a channel other than 0, 4.2.3/9): the client's
connection.close names class 10, method 30 (connection.tune). A client that does not refuse
the frame at all is judged by amqp091/4.2.3/client-rejects-connection-method-on-channel-1;
here the case cannot decide (an error).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import QUICK, open_conversation, unmet

FAILING_CLASS = "When the close is provoked by a method exception, this is the class of the method."
TUNE = spec.ConnectionTune(2047, 131072, 0)


@case("amqp091/connection.close/client-names-failing-method", role="client",
      title="the client's connection.close refusing a connection.tune on channel 1 names class 10 and method 30",
      guideline=FAILING_CLASS)
def names_failing_method(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=4)
    p.peer.send(MethodFrame(1, TUNE))
    obs = p.serve(QUICK * 1.5)
    close = obs.connection_close
    if close is None:
        unmet("a connection.close from the client", obs)
    ctx.record((close.class_id, close.method_id) == (TUNE.CLASS_ID, TUNE.METHOD_ID), guideline=FAILING_CLASS,
               expected=f"connection.close with class-id {TUNE.CLASS_ID}, method-id {TUNE.METHOD_ID} (connection.tune)",
               observed=f"class-id {close.class_id}, method-id {close.method_id} (reply-code {close.reply_code})")
    p.finish()
