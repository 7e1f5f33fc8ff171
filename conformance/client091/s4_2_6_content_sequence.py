"""4.2.6 Content framing: the order of content frames, both ways, and bodies in many small frames.

"Content frames on a specific channel are strictly sequential. That is, they may be mixed
with frames for other channels, but no two content frames from the same channel may be mixed
or overlapped, nor may content frames for a single content be mixed with method frames on the
same channel." Sent by the client: between a basic.publish and the last body frame of its
content, nothing else on that channel. Received: a heartbeat (channel 0, another channel)
between the body frames of a delivery is allowed, and the delivery still reaches the
application whole.

"The data can be any size, and MAY be broken into several (or many) chunks, each forming a
"content body frame"" (2.3.5.2/1), and "A peer MUST handle a content body that is split into
multiple frames" (4.2.6.2/1): the extreme of "many" is one octet per frame.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.client.session import Play
from amqpspec.peer.server091_responder import Consumer
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, spec

from ._client import QUICK, describe_errors, error_closes, needs_driver, open_conversation, unmet

SEQUENTIAL = ("Content frames on a specific channel are strictly sequential. That is, they may be mixed with frames "
              "for other channels, but no two content frames from the same channel may be mixed or overlapped, nor "
              "may content frames for a single content be mixed with method frames on the same channel.")
CONTENT_METHODS = ("basic.publish",)


def _consumer(ctx: Context, **handshake: int) -> tuple[Play, Consumer]:
    p = open_conversation(ctx, "consume", count=1, handshake=handshake or None)
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    return p, consumer


def _delivered_whole(ctx: Context, p: Play, body: bytes, what: str, guideline: str = "",
                     clauses: tuple[str, ...] | None = None) -> None:
    """Judges that the one delivery reached the application whole, with no exception."""
    obs = p.serve()
    out = needs_driver(p)
    got = out.named("delivered")
    shown = str(got[0].get("body", "")) if got else ""
    length = got[0].get("body_length", len(shown)) if got else 0
    errors = error_closes(obs)
    ok = bool(got) and length == len(body) and body.decode().startswith(shown.split("... (")[0]) and not errors
    ctx.record(ok, expected=f"one delivery whose body is the {len(body)} octets sent ({what}), no exception",
               observed=(f"delivered {length} octets starting {shown[:30]!r}; " if got else out.summary() + "; ")
               + describe_errors(errors), guideline=guideline, clauses=clauses)


@case("amqp091/4.2.6/client-keeps-content-frames-together", role="client",
      title="with frame-max 4096 the client sends each 10 000-octet content's header and body frames with no other "
            "frame of that channel between them",
      guideline=SEQUENTIAL)
def keeps_content_together(ctx: Context) -> None:
    p = open_conversation(ctx, "publish", count=3, body="s" * 10_000, handshake={"frame_max": 4096})
    obs = p.serve()
    open_content: dict[int, list[int]] = {}   # channel -> [body-size announced (-1 before the header), received]
    mixed: list[str] = []
    contents = 0
    for f in obs.received:
        ch = getattr(f, "channel", 0)
        state = open_content.get(ch)
        if isinstance(f, MethodFrame):
            if state is not None:
                mixed.append(f"{f.summary()} inside a content on channel {ch}")
                del open_content[ch]
            if f.method.NAME in CONTENT_METHODS:
                open_content[ch] = [-1, 0]
                contents += 1
        elif isinstance(f, HeaderFrame) and state is not None:
            if state[0] >= 0:
                mixed.append(f"a second content header inside a content on channel {ch}")
            state[0] = f.body_size
        elif isinstance(f, BodyFrame) and state is not None:
            state[1] += len(f.data)
        if state is not None and ch in open_content and state[0] >= 0 and state[1] >= state[0]:
            del open_content[ch]  # the content is complete
    if not contents:
        unmet("a published message", obs)
    ctx.record(not mixed, guideline=SEQUENTIAL,
               expected="each content's header and body frames in a row, no method of its channel among them",
               observed="; ".join(mixed[:3]) or f"{contents} content(s), each in one unbroken sequence")
    p.finish()


@case("amqp091/4.2.6/client-takes-heartbeat-between-body-frames", role="client",
      title="heartbeats on channel 0 between the three body frames of a delivery do not disturb it: the body "
            "reaches the application whole",
      guideline=SEQUENTIAL)
def heartbeat_between_bodies(ctx: Context) -> None:
    p, consumer = _consumer(ctx, heartbeat=30)
    ch = consumer.channel
    body = bytes(ord("a") + i % 26 for i in range(300))
    p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue)),
                HeaderFrame(ch, 60, len(body), spec.BasicProperties()), BodyFrame(ch, body[:100]), HeartbeatFrame(0),
                BodyFrame(ch, body[100:200]), HeartbeatFrame(0), BodyFrame(ch, body[200:]))
    _delivered_whole(ctx, p, body, "heartbeats of channel 0 between its body frames", guideline=SEQUENTIAL)


@case("amqp091/2.3.5.2/client-joins-one-octet-body-frames", role="client",
      title="a 300-octet body in 300 body frames of one octet each reaches the application whole",
      clauses=("amqp091:2.3.5.2/1", "amqp091:4.2.6.2/1"))
def one_octet_frames(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    body = bytes(ord("a") + i % 26 for i in range(300))
    p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue)),
                HeaderFrame(ch, 60, len(body), spec.BasicProperties()),
                *[BodyFrame(ch, body[i:i + 1]) for i in range(len(body))])
    _delivered_whole(ctx, p, body, "in 300 frames")
