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
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec

from ._client import QUICK, check, describe_errors, error_closes, needs_driver, open_conversation, unmet

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


@case("amqp091/2.3.3/client-accepts-body-frame-at-frame-max", role="client",
      title="a body frame of exactly frame-max (4096) octets is safe: the client takes the delivery whole",
      clauses=LIMITS)
def frame_at_max(ctx: Context) -> None:
    """The limit is inclusive: a frame of frame-max octets "obeys the agreed limits, and so is
    "safe"". One body frame of 4088 payload octets plus 8 of frame header and end is 4096."""
    p, consumer = _consuming(ctx, frame_max=4096)
    if p.peer.negotiated.frame_max != 4096:
        unmet(f"frame-max 4096 negotiated (the client chose {p.peer.negotiated.frame_max})", p.serve(0.1))
    ch = consumer.channel
    body = b"m" * (4096 - 8)
    p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue)),
                HeaderFrame(ch, 60, len(body), spec.BasicProperties()), BodyFrame(ch, body))
    obs = p.serve()
    out = needs_driver(p)
    got = out.named("delivered")
    length = got[0].get("body_length", len(str(got[0].get("body", "")))) if got else 0
    errors = describe_errors(error_closes(obs))
    ok = bool(got) and length == len(body) and not error_closes(obs)
    ctx.record(ok, expected=f"one delivery of {len(body)} octets, no connection exception",
               observed=(f"delivered {length} octets; {errors}" if got else f"{out.summary()}; {errors}"))
