"""2.3.3 Negotiating connection limits, as the client receives frames.

"Every incoming frame either obeys the agreed limits, and so is "safe", or exceeds them, in
which case the other party IS faulty and MUST be disconnected" (2.3.3/3). The limits are
the "Maximum frame size, number of channels" of tune / tune-ok; the rule binds whoever receives: here
amqpspec, playing the broker, sends the client a frame past each of them and expects the
connection to end (connection.close or the socket closed). An oversized frame is also "a
connection exception with reply code 501 (frame error)" (4.2.3/7), checked on its own.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify import AnyClose, ConnectionException
from amqpspec.wire.amqp091 import HeaderFrame, MethodFrame, spec

from ._client import QUICK, check, open_conversation, unmet

LIMITS = ("amqp091:2.3.3/3",)


def _consuming(ctx: Context, **tuning: int):  # type: ignore[no-untyped-def]
    """A consume conversation with ``tuning`` proposed, stopped at the client's basic.consume."""
    p = open_conversation(ctx, "consume", count=1, handshake=tuning)
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    return p, consumer


@case("amqp091/2.3.3/client-disconnects-on-channel-above-channel-max", role="client",
      title="a method on a channel above the agreed channel-max (4) ends the client's connection",
      clauses=LIMITS)
def channel_above_max(ctx: Context) -> None:
    p, consumer = _consuming(ctx, channel_max=4)
    agreed = p.peer.negotiated.channel_max
    if not agreed or consumer.channel > agreed:
        unmet(f"a channel-max agreed at or below 4 (the client settled {agreed})", p.serve(0.1))
    p.peer.send(MethodFrame(agreed + 1, spec.ChannelFlow(True)))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, AnyClose())
    p.finish()


@case("amqp091/2.3.3/client-disconnects-on-oversized-header-frame", role="client",
      title="a content header of 8000 octets after frame-max 4096 ends the client's connection, with 501",
      clauses=LIMITS + ("amqp091:4.2.3/7",))
def oversized_header(ctx: Context) -> None:
    p, consumer = _consuming(ctx, frame_max=4096)
    if p.peer.negotiated.frame_max != 4096:
        unmet(f"frame-max 4096 negotiated (the client chose {p.peer.negotiated.frame_max})", p.serve(0.1))
    ch = consumer.channel
    props = spec.BasicProperties(headers={"amqpspec-padding": "p" * 8000})
    p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue)),
                HeaderFrame(ch, 60, 5, props))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, AnyClose(), clauses=LIMITS)
    check(ctx, obs, ConnectionException(501), clauses=("amqp091:4.2.3/7",), sets_close=False)
    p.finish()
