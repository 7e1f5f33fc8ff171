"""2.3.7 Closing: the client's close handshakes when the server answers late or otherwise.

"The receiving peer MUST respond to a Close with a Close-Ok" (2.3.7/2) holds whatever the
client was waiting for: a connection.close that comes in place of the channel.close-ok the
client awaits is answered with connection.close-ok. "A connection or channel is considered
"open" for the client when it has sent Open": a connection.close in place of
connection.open-ok (what a broker sends when it refuses the virtual host, 530) and a
channel.close in place of channel.open-ok are closes of open things, answered with
close-ok.

connection.close-ok "confirms a Connection.Close method and tells the recipient that it is
safe to release resources for the connection and close the socket": until it comes, the
client that sent connection.close keeps its socket ("The correct design is to hand-shake all
closure so that we close only after we are sure the other party is aware of the situation").
Here close-ok is held back one second; a client may give up on a server that never answers,
but not within a second.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case
from amqpspec.client.session import play
from amqpspec.verify import Replies
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import QUICK, check, open_conversation, unmet

CLOSE_OK = ("This method confirms a Connection.Close method and tells the recipient that it is safe to release "
            "resources for the connection and close the socket.")
HOLD = 1.0


@case("amqp091/2.3.7/client-answers-connection-close-instead-of-channel-close-ok", role="client",
      title="a connection.close in place of the channel.close-ok the client waits for is answered with "
            "connection.close-ok",
      clauses=("amqp091:2.3.7/2",))
def connection_close_for_channel_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    closing: list[int] = []

    def close_connection_instead(frame: MethodFrame) -> bool:
        closing.append(frame.channel)
        p.peer.close_connection(320, "CONNECTION_FORCED - amqpspec closes the connection")
        return False

    p.responder.on("channel.close", close_connection_instead)
    obs = p.serve(QUICK * 2, stop=lambda f: bool(closing) and isinstance(f, MethodFrame)
                  and f.method.NAME == "connection.close-ok")
    if not closing:
        unmet("channel.close from the client", obs)
    check(ctx, obs, Replies("connection.close-ok", 0))
    p.finish()


@case("amqp091/connection.close-ok/client-waits-for-close-ok", role="client",
      title="with connection.close-ok held back 1 s, the client keeps its socket open until close-ok comes",
      guideline=CLOSE_OK)
def waits_for_close_ok(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    held: list[float] = []

    def hold(frame: MethodFrame) -> bool:
        held.append(time.monotonic())
        return False  # no close-ok yet

    p.responder.on("connection.close", hold)
    first = p.serve(QUICK * 2, stop=lambda f: bool(held))
    if not held:
        unmet("connection.close from the client", first)
    obs = p.serve(HOLD - (time.monotonic() - held[0]))
    kept = not obs.closed and not first.closed
    waited = time.monotonic() - held[0]
    if kept:
        p.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
        p.peer.close_ok_sent = True
        p.serve(QUICK / 2)
    ctx.record(kept, guideline=CLOSE_OK, expected=f"the socket still open {HOLD:g} s after the client's connection.close",
               observed=(f"still open after {waited:.2f} s; close-ok sent" if kept
                         else "closed before close-ok: " + (obs if not first.closed else first).describe()
                         .replace("by broker", "by the client")))
    p.finish()


@case("amqp091/2.3.7/client-answers-connection-close-instead-of-connection-open-ok", role="client",
      title="a connection.close 530 in place of connection.open-ok is answered with connection.close-ok",
      clauses=("amqp091:2.3.7/2",))
def connection_close_for_open_ok(ctx: Context) -> None:
    p = play(ctx, "connect")
    p.handshake(upto="tune-ok")
    p.peer.negotiated.open = p.peer.expect("connection.open", timeout=QUICK * 2).method  # type: ignore[assignment]
    p.peer.stage = "open-ok"  # answered by the close below, not by open-ok
    p.peer.close_connection(530, "NOT_ALLOWED - amqpspec refuses the virtual host")
    obs = p.serve(QUICK * 2)
    check(ctx, obs, Replies("connection.close-ok", 0))
    p.finish()


@case("amqp091/2.3.7/client-answers-channel-close-instead-of-open-ok", role="client",
      title="a channel.close in place of channel.open-ok is answered with channel.close-ok",
      clauses=("amqp091:2.3.7/2",))
def channel_close_for_open_ok(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    refused: list[int] = []

    def refuse(frame: MethodFrame) -> bool:
        if refused:
            return None  # type: ignore[return-value]  # a second channel: the default answer
        refused.append(frame.channel)
        p.responder.close_channel(frame.channel, 406, "PRECONDITION_FAILED - amqpspec refuses the channel", 20, 10)
        return False

    p.responder.on("channel.open", refuse)
    obs = p.serve(QUICK * 2, stop=lambda f: bool(refused) and isinstance(f, MethodFrame)
                  and f.method.NAME == "channel.close-ok" and f.channel == refused[0])
    if not refused:
        unmet("channel.open", obs)
    check(ctx, obs, Replies("channel.close-ok", refused[0]))
    p.finish()
