"""4.2.3 Frame format, from the client's side.

"A peer MUST NOT send frames larger than the agreed-upon size" (4.2.3/6): with frame-max
tuned to 4096, a 20 000-octet body must reach us in several frames, none above 4096
octets. The receiving rules bind the client too: an undefined frame type is "a fatal
protocol error" closed "without sending any further data on it" (4.2.3/2); so is an invalid
frame-end (4.2.3/3, 4.2.3/4); "A peer that receives an oversized frame MUST signal a
connection exception with reply code 501" (4.2.3/7).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify import ConnectionException, SilentClose
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, RawFrame, spec

from ._client import QUICK, check, open_conversation, unmet

BIG = 20_000


@case("amqp091/4.2.3/client-respects-frame-max", role="client",
      title="with frame-max 4096 a 20 000-octet body is sent in frames of at most 4096 octets",
      clauses=("amqp091:4.2.3/6",))
def respects_frame_max(ctx: Context) -> None:
    p = open_conversation(ctx, "publish", count=1, body="b" * BIG, handshake={"frame_max": 4096})
    obs = p.serve()
    over = p.peer.oversized()
    if not over and obs.framing_error is None and not p.responder.contents:
        unmet("a published message", obs)
    if obs.framing_error:
        over.append((obs.framing_error, 0))
    ctx.record(not over, expected=f"every frame at most {p.peer.negotiated.frame_max} octets",
               observed="; ".join(f"{s} ({n} octets)" for s, n in over[:3]) or
               f"{sum(1 for c in p.responder.contents for _ in c.bodies)} body frame(s), none oversized")
    p.finish()


@case("amqp091/4.2.3/client-respects-frame-max-boundary", role="client",
      title="with frame-max 4096 a body of 4089 octets (one past a full frame) is split, every frame at most 4096 octets",
      clauses=("amqp091:4.2.3/6",))
def respects_frame_max_boundary(ctx: Context) -> None:
    p = open_conversation(ctx, "publish", count=1, body="e" * 4089, handshake={"frame_max": 4096})
    obs = p.serve()
    if not p.responder.contents and obs.framing_error is None:
        unmet("a published message", obs)
    over = p.peer.oversized() + ([(obs.framing_error, 0)] if obs.framing_error else [])
    frames = [len(b.data) + 8 for c in p.responder.contents for b in c.bodies]
    ctx.record(not over, expected="body frames of at most 4096 octets (a 4089-octet body needs two)",
               observed="; ".join(f"{s} ({n} octets)" for s, n in over[:3]) or f"body frames of {frames} octets")
    p.finish()


def _after_consume(ctx: Context, **tuning: int):  # type: ignore[no-untyped-def]
    """A consume conversation stopped right after the client's basic.consume (answered)."""
    p = open_conversation(ctx, "consume", count=1, handshake=tuning or None)
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    return p, consumer


@case("amqp091/4.2.3/client-closes-on-unknown-frame-type", role="client",
      title="a frame of undefined type 9 makes the client close the socket without sending anything",
      clauses=("amqp091:4.2.3/2",))
def unknown_frame_type(ctx: Context) -> None:
    p, consumer = _after_consume(ctx)
    p.peer.send(RawFrame(consumer.channel, type=9, data=b"amqpspec"))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, SilentClose())
    p.finish()


@case("amqp091/4.2.3/client-closes-on-bad-frame-end", role="client",
      title="a frame ending in 0x00 instead of 0xCE makes the client close the socket without sending anything",
      clauses=("amqp091:4.2.3/3", "amqp091:4.2.3/4"))
def bad_frame_end(ctx: Context) -> None:
    p, consumer = _after_consume(ctx)
    p.peer.send(MethodFrame(consumer.channel, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue), end=0))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, SilentClose())
    p.finish()


@case("amqp091/4.2.3/client-rejects-oversized-frame", role="client",
      title="a body frame of 8000 octets after frame-max 4096 is refused with connection.close 501",
      clauses=("amqp091:4.2.3/7",))
def oversized(ctx: Context) -> None:
    p, consumer = _after_consume(ctx, frame_max=4096)
    if p.peer.negotiated.frame_max != 4096:
        unmet(f"frame-max 4096 negotiated (the client chose {p.peer.negotiated.frame_max})", p.serve(0.1))
    body = b"o" * 8000
    ch = consumer.channel
    p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue)),
                HeaderFrame(ch, 60, len(body), spec.BasicProperties()), BodyFrame(ch, body))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, ConnectionException(501))
    p.finish()
