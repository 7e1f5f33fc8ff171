"""Spec 4.3 Channel Multiplexing: several channels share one connection.

"An AMQP peer MAY support multiple channels. The maximum number of channels is defined at
connection negotiation, and a peer MAY negotiate this down to 1." Both are MAY clauses:
a broker that does not offer them is reported as informational, not failed.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import UnexpectedReply
from amqpspec.wire.amqp091 import MethodFrame, spec

CHANNELS = 64


@case("amqp091/4.3/many-channels", title=f"{CHANNELS} channels on one connection each answer a request",
      clauses=("amqp091:4.3/1",))
def many_channels(ctx: Context) -> None:
    """Negotiates the broker's channel-max (at least 64 unless it proposes fewer), opens 64
    channels in one burst, then sends a passive declare of amq.direct on each: every channel
    must answer on its own number."""
    peer = ctx.connect(upto="tune")
    proposed = peer.negotiated.tune.channel_max if peer.negotiated.tune else 0
    count = CHANNELS if proposed == 0 else min(CHANNELS, proposed)
    peer.handshake()
    channels = list(range(1, count + 1))
    peer.send(*[MethodFrame(ch, spec.ChannelOpen()) for ch in channels])
    opened = _replies(peer, "channel.open-ok", len(channels))
    peer.send(*[MethodFrame(ch, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True)) for ch in channels])
    answered = _replies(peer, "exchange.declare-ok", len(channels))
    ctx.record(opened == set(channels) and answered == set(channels),
               expected=f"channel.open-ok and exchange.declare-ok on each of channels 1..{count}",
               observed=f"{len(opened)} opened, {len(answered)} answered")


def _replies(peer, name: str, n: int) -> set[int]:
    got: set[int] = set()
    while len(got) < n:
        try:
            got.add(peer.expect(name, timeout=3.0).channel)
        except UnexpectedReply:
            break
    return got


@case("amqp091/4.3/channel-max-one", title="a connection negotiated down to channel-max 1 works on channel 1",
      clauses=("amqp091:4.3/2",))
def channel_max_one(ctx: Context) -> None:
    """Answers connection.tune with channel-max 1 (4.3/2: a peer MAY negotiate down to 1); the
    connection must open and channel 1 must be usable."""
    peer = ctx.connect(channel_max=1)
    ch = peer.open_channel(1)
    reply = peer.call(ch, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True))
    ctx.record(reply.method.NAME == "exchange.declare-ok", expected="channel 1 opens and answers",
               observed=reply.summary())
