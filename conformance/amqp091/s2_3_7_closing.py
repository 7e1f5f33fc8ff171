"""Spec 2.3.7 Closing Channels and Connections.

"The receiving peer MUST respond to a Close with a Close-Ok, and then both parties can close
their channel or connection." (2.3.7/2). The cases close from the client side, on an idle
connection or channel and on a channel whose content is still in flight.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify import ConnectionException, Replies
from amqpspec.wire.amqp091 import HeaderFrame, MethodFrame, spec

from ._common import QUICK_WINDOW, REACTION_WINDOW, with_channel
from ._replies import is_method

CLOSE_OK = "amqp091:2.3.7/2"


@case("amqp091/2.3.7/connection-close", title="connection.close from the client is answered with connection.close-ok",
      clauses=(CLOSE_OK,))
def connection_close(ctx: Context) -> None:
    """Sends connection.close (200) on an open connection with an open channel: the broker must
    answer connection.close-ok (what happens to the socket then is up to both: "can close")."""
    peer, _ = with_channel(ctx)
    peer.send(MethodFrame(0, spec.ConnectionClose(200, "amqpspec done", 0, 0)))
    obs = peer.observe(QUICK_WINDOW, reply_close_ok=False, stop=is_method("connection.close-ok", "connection.close"))
    ctx.check(obs, Replies("connection.close-ok", channel=0))
    peer.abort()


@case("amqp091/2.3.7/channel-close", title="channel.close from the client is answered with channel.close-ok",
      clauses=(CLOSE_OK,))
def channel_close(ctx: Context) -> None:
    """Sends channel.close (200) on an open channel: the broker must answer channel.close-ok."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, spec.ChannelClose(200, "amqpspec done", 0, 0)))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("channel.close-ok", "channel.close", "connection.close"))
    ctx.check(obs, Replies("channel.close-ok", channel=ch))


@case("amqp091/2.3.7/channel-close-content-in-flight",
      title="channel.close in the middle of a content gets close-ok, or connection exception 505",
      clauses=(CLOSE_OK, "amqp091:4.2.6/1"))
def channel_close_mid_content(ctx: Context) -> None:
    """Sends basic.publish (default exchange, a routing key no queue has) and a content header
    announcing 10 octets, then channel.close instead of the body. 4.2.6 says any non-content frame
    ends (aborts) the content, so channel.close-ok (2.3.7/2) passes; 4.2.6/1 says an incomplete
    content MUST raise connection exception 505, which passes too."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=ctx.name("nowhere"))),
              HeaderFrame(ch, 60, 10, spec.BasicProperties()),
              MethodFrame(ch, spec.ChannelClose(200, "amqpspec aborts the content", 0, 0)))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("channel.close-ok", "channel.close"))
    ctx.check(obs, Replies("channel.close-ok", channel=ch) | ConnectionException(505))


@case("amqp091/2.3.7/broker-closes-with-handshake",
      title="a broker closing the connection after open uses connection.close and waits for close-ok",
      clauses=("amqp091:2.3.7/1",))
def broker_closes_with_handshake(ctx: Context) -> None:
    """Provokes a connection exception after open (channel.open on an already open channel) and
    does not answer at first. 2.3.7/1: a peer that wishes to close the connection MUST do so with
    the close handshake -- so the broker must send connection.close (not just drop the socket)
    and must not close the socket during the half second before our close-ok; after close-ok it
    may close."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, spec.ChannelOpen()))
    first = peer.observe(REACTION_WINDOW, reply_close_ok=False, stop=is_method("connection.close"))
    if not ctx.check(first, ConnectionException(), what="the broker closes with connection.close"):
        return
    waiting = peer.observe(0.5, reply_close_ok=False)
    ctx.record(not waiting.closed, expected="the socket stays open until the client's connection.close-ok",
               observed=waiting.describe(), what="the broker waits for close-ok")
    peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
    peer.close_ok_sent = True
