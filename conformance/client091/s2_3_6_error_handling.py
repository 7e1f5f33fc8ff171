"""2.3.6 Error handling: the reply code of a channel or connection exception reaches the application.

"An exception closes the channel or connection, and returns a reply code and reply text to
the client application." A library that answers a close correctly on the wire but tells its
application nothing of why has dropped what the exception is for: here a channel.close 404
in place of basic.get's answer, and a connection.close 541 (internal-error) while the
client consumes (not 320 connection-forced: amqplib, for one, takes that for an ordinary
shutdown and reports it only with its 'close' event, not as an error). The check reads
what the library reported through its driver (a ``closed`` event with the code, or an error
whose message carries it): it needs a driver, and is skipped in the serve mode.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.client.session import Play
from amqpspec.wire.amqp091 import MethodFrame

from ._client import QUICK, needs_driver, open_conversation, unmet

RETURNS_CODE = ("An exception closes the channel or connection, and returns a reply code and reply text to the "
                "client application.")
CHANNEL_CODE, CHANNEL_TEXT = 404, "NOT_FOUND - amqpspec has no queue 'amqpspec-q'"
CONNECTION_CODE, CONNECTION_TEXT = 541, "INTERNAL_ERROR - amqpspec closes the connection"


def _judge_told(ctx: Context, p: Play, code: int) -> None:
    """Passes when a closed or error event of the driver carries ``code``."""
    out = needs_driver(p)
    told = [e for e in out.events if e.get("event") in ("closed", "error")
            and (e.get("code") == code or str(code) in str(e.get("message", "")) + str(e.get("text", "")))]
    ctx.record(bool(told), guideline=RETURNS_CODE, expected=f"the application told reply code {code}",
               observed=("; ".join(", ".join(f"{k}={v}" for k, v in e.items()) for e in told[:2]) if told
                         else "no event with the code: " + out.summary()))


@case("amqp091/2.3.6/client-reports-channel-exception-code", role="client",
      title="a channel.close 404 in place of basic.get's answer reaches the application with its reply code",
      guideline=RETURNS_CODE)
def reports_channel_exception(ctx: Context) -> None:
    p = open_conversation(ctx, "get")
    closed: list[int] = []

    def refuse(frame: MethodFrame) -> bool:
        closed.append(frame.channel)
        p.responder.close_channel(frame.channel, CHANNEL_CODE, CHANNEL_TEXT, 60, 70)
        return False

    p.responder.on("basic.get", refuse)
    obs = p.serve()
    if not closed:
        unmet("basic.get", obs)
    _judge_told(ctx, p, CHANNEL_CODE)


@case("amqp091/2.3.6/client-reports-connection-exception-code", role="client",
      title="a connection.close 541 from the server while the client consumes reaches the application with its "
            "reply code",
      guideline=RETURNS_CODE)
def reports_connection_exception(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1)
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    if not p.responder.consumers:
        unmet("basic.consume", first)
    p.peer.close_connection(CONNECTION_CODE, CONNECTION_TEXT)
    p.serve(QUICK * 2)
    _judge_told(ctx, p, CONNECTION_CODE)
