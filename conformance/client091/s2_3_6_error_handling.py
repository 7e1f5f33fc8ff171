"""2.3.6 Error handling: the reply code reaches the application.

"An exception closes the channel or connection, and returns a reply code and reply text to
the client application." A library that answers a channel.close correctly on the wire but
tells its application nothing of why has dropped what the exception is for. The check reads
what the library reported through its driver (a ``closed`` event with the code, or an error
whose message carries it): it needs a driver, and is skipped in the serve mode.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame

from ._client import needs_driver, open_conversation, unmet

RETURNS_CODE = ("An exception closes the channel or connection, and returns a reply code and reply text to the "
                "client application.")
CODE, TEXT = 404, "NOT_FOUND - amqpspec has no queue 'amqpspec-q'"


@case("amqp091/2.3.6/client-reports-channel-exception-code", role="client",
      title="a channel.close 404 in place of basic.get's answer reaches the application with its reply code",
      guideline=RETURNS_CODE)
def reports_channel_exception(ctx: Context) -> None:
    p = open_conversation(ctx, "get")
    closed: list[int] = []

    def refuse(frame: MethodFrame) -> bool:
        closed.append(frame.channel)
        p.responder.close_channel(frame.channel, CODE, TEXT, 60, 70)
        return False

    p.responder.on("basic.get", refuse)
    obs = p.serve()
    if not closed:
        unmet("basic.get", obs)
    out = needs_driver(p)
    told = [e for e in out.events if e.get("event") in ("closed", "error")
            and (e.get("code") == CODE or str(CODE) in str(e.get("message", "")) + str(e.get("text", "")))]
    ctx.record(bool(told), guideline=RETURNS_CODE, expected=f"the application told reply code {CODE}",
               observed=("; ".join(", ".join(f"{k}={v}" for k, v in e.items()) for e in told[:2]) if told
                         else "no event with the code: " + out.summary()))
