"""Spec 4.2.6 Content Framing: content header and body frames, and what may interrupt them.

A content is exactly one content header frame and optionally body frames adding up to the
header's body-size, on the channel of the method that carries it (basic.publish). A peer
that receives an incomplete or badly formatted content MUST raise connection exception 505
(4.2.6/1); the prose also lets any non-content frame end a content early, so a sender can
abort a content without closing the channel. The server passes bodies on unmodified
(3.1.1/1) and may add to content headers but not remove or change what is there (3.1.1/2).

The helpers that publish contents and read them back byte-exact are in ``_raw_content``, shared
with ``s4_2_5_data_fields`` (message headers round-trips).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ConnectionException, StaysOpen
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec
from amqpspec.wire.amqp091.frames import FRAME_OVERHEAD

from ._common import REACTION_WINDOW, publish_frames, with_channel
from ._raw_content import (
    INVALID_DATA, VALID_TYPES, Message, all_properties, compare_properties, fetch, not_delivered, publish,
    queue_for, refused,
)

INCOMPLETE = ("amqp091:4.2.6/1",)
CLASS_ID = ("amqp091:4.2.6/1", "amqp091:4.2.6.1/1", "amqp091:4.2.6.1/2")
ZERO_CHANNEL = ("amqp091:4.2.6.1/3", "amqp091:4.2.6.1/4", "amqp091:4.2.6/1")
BODY_INTACT = ("amqp091:4.2.6.2/1", "amqp091:3.1.1/1")
HEADER_INTACT = ("amqp091:3.1.1/2",)


# ----------------------------------------------------------------------------- helpers

def react(peer: Peer, channel: int, window: float = REACTION_WINDOW) -> Observation:
    """What the broker does after a stimulus on ``channel``.

    Probes *the same channel* with basic.qos (a synchronous no-op): its qos-ok proves the
    broker processed everything sent before on that channel without closing it (probe_ok).
    A probe on a fresh channel (``observe(probe=True)``) is not enough here: a broker that
    runs channels concurrently (RabbitMQ) may answer the new channel's open before the old
    channel's close, so a channel exception could be missed.
    """
    peer.send(MethodFrame(channel, spec.BasicQos(0, 0, False)))
    obs = peer.observe(window, stop=lambda item: isinstance(item, MethodFrame) and item.channel == channel
                       and item.method.NAME in ("basic.qos-ok", "channel.close"))
    obs.probe_ok = bool(obs.methods("basic.qos-ok", channel)) and obs.channel_close(channel) is None
    return obs


def _publish_method(channel: int, routing_key: str) -> MethodFrame:
    return MethodFrame(channel, spec.BasicPublish(exchange="", routing_key=routing_key))


# ----------------------------------------------------------------------------- incomplete contents

@case("amqp091/4.2.6/header-without-method", title="a content header with no content method before it is refused with 505",
      clauses=INCOMPLETE)
def header_without_method(ctx: Context) -> None:
    """Sends a content header (class 60, body-size 0) on an open channel with no basic.publish before it.
    Passes on connection.close 505: a content missing its method is an incomplete content."""
    peer, ch = with_channel(ctx)
    peer.send(HeaderFrame(ch, 60, 0, spec.BasicProperties()))
    ctx.check(react(peer, ch), ConnectionException(505))


@case("amqp091/4.2.6/body-without-content", title="a body frame with no content in progress is refused with 505",
      clauses=INCOMPLETE)
def body_without_content(ctx: Context) -> None:
    """Sends a 6-octet body frame on an open channel where no content is in progress.
    Passes on connection.close 505."""
    peer, ch = with_channel(ctx)
    peer.send(BodyFrame(ch, b"orphan"))
    ctx.check(react(peer, ch), ConnectionException(505))


@case("amqp091/4.2.6/missing-header", title="basic.publish followed directly by a body frame is refused with 505",
      clauses=INCOMPLETE)
def missing_header(ctx: Context) -> None:
    """Sends basic.publish then a body frame, without the content header ("missing content
    headers" is named in 4.2.6/1). Passes on connection.close 505."""
    peer, ch = with_channel(ctx)
    peer.send(_publish_method(ch, ctx.name("unroutable")), BodyFrame(ch, b"no header"))
    ctx.check(react(peer, ch), ConnectionException(505))


@case("amqp091/4.2.6/body-longer-than-size", title="a body frame longer than the header's body-size is refused with 505",
      clauses=INCOMPLETE)
def body_longer_than_size(ctx: Context) -> None:
    """Sends basic.publish, a content header announcing 5 octets and one body frame of 10.
    Passes on connection.close 505 (a badly formatted content)."""
    peer, ch = with_channel(ctx)
    peer.send(_publish_method(ch, ctx.name("unroutable")), HeaderFrame(ch, 60, 5, spec.BasicProperties()),
              BodyFrame(ch, b"0123456789"))
    ctx.check(react(peer, ch), ConnectionException(505))


@case("amqp091/4.2.6/bodies-exceed-size", title="body frames adding up to more than body-size are refused with 505",
      clauses=INCOMPLETE)
def bodies_exceed_size(ctx: Context) -> None:
    """Sends basic.publish, a content header announcing 8 octets, then two body frames of 5
    (10 in all). Passes on connection.close 505."""
    peer, ch = with_channel(ctx)
    peer.send(_publish_method(ch, ctx.name("unroutable")), HeaderFrame(ch, 60, 8, spec.BasicProperties()),
              BodyFrame(ch, b"01234"), BodyFrame(ch, b"56789"))
    ctx.check(react(peer, ch), ConnectionException(505))


@case("amqp091/4.2.6/header-during-body", title="a second content header before the body is complete is refused with 505",
      clauses=INCOMPLETE)
def header_during_body(ctx: Context) -> None:
    """Sends basic.publish, a content header announcing 10 octets, 5 of them, then another
    content header. A content frame (unlike a method) does not end the content: content frames
    of one channel may not be mixed or overlapped, so this is a badly formatted content.
    Passes on connection.close 505."""
    peer, ch = with_channel(ctx)
    peer.send(_publish_method(ch, ctx.name("unroutable")), HeaderFrame(ch, 60, 10, spec.BasicProperties()),
              BodyFrame(ch, b"01234"), HeaderFrame(ch, 60, 5, spec.BasicProperties()), BodyFrame(ch, b"56789"))
    ctx.check(react(peer, ch), ConnectionException(505))


@case("amqp091/4.2.6/method-before-body-complete",
      title="a method before the body is complete: 505, or the content is aborted and not delivered",
      clauses=INCOMPLETE)
def method_before_body_complete(ctx: Context) -> None:
    """Sends basic.publish + content header (body-size 10) + 5 body octets to a private queue,
    then a complete second publish. 4.2.6/1 asks for 505 ("missing content body frames"); the
    4.2.6 prose says any non-content frame ends the content, letting a sender abort it without
    closing the channel. Passes on connection.close 505, or when the connection stays open, the
    truncated message is not delivered and the second one is, intact (checked with basic.get)."""
    peer, ch = with_channel(ctx)
    queue = queue_for(ctx, peer, ch)
    truncated, second = b"trunc", ctx.rng.randbytes(16)
    peer.send(_publish_method(ch, queue), HeaderFrame(ch, 60, 10, spec.BasicProperties(message_id="truncated")),
              BodyFrame(ch, truncated))
    publish(peer, ch, queue, second, spec.BasicProperties(message_id="complete"))
    obs = react(peer, ch)
    if not ctx.check(obs, ConnectionException(505) | StaysOpen(),
                     what="connection exception 505, or the content is treated as aborted"):
        return
    if obs.connection_close is not None:
        ctx.note("the broker raised 505 (it does not treat a method as aborting the content)")
        return
    ctx.note("the broker kept the connection open: the method was taken as aborting the content")
    first = fetch(peer, ch, queue)
    rest = fetch(peer, ch, queue, wait=0.0) if isinstance(first, Message) else None
    if isinstance(first, Observation) or isinstance(rest, Observation):
        ctx.check(first if isinstance(first, Observation) else rest, StaysOpen(), what="basic.get is answered")
        return
    ok = isinstance(first, Message) and first.body == second and rest is None
    observed = ("queue empty" if first is None else
                f"first message: message-id {first.properties.message_id if first.properties else None!r}, "
                f"body {first.body!r}; then {'queue empty' if rest is None else f'another message, body {rest.body!r}'}")
    ctx.record(ok, expected=f"only the complete message, body {second!r} (the truncated one discarded)",
               observed=observed, what="the aborted content is not delivered, the next one is, intact")


# ----------------------------------------------------------------------------- the content header

@case("amqp091/4.2.6.1/wrong-class-id", title="a content header with class-id 50 after basic.publish is refused (501 or 505)",
      clauses=CLASS_ID)
def wrong_class_id(ctx: Context) -> None:
    """Sends basic.publish, then a content header with class-id 50 (queue, which has no
    content) and a complete 5-octet body. 4.2.6.1/2 asks for 501 (frame error), 4.2.6/1 for 505
    ("wrong class IDs in content headers"): connection.close with either passes."""
    peer, ch = with_channel(ctx)
    peer.send(_publish_method(ch, ctx.name("unroutable")), HeaderFrame(ch, 50, 5, None), BodyFrame(ch, b"hello"))
    ctx.check(react(peer, ch), ConnectionException(501, 505))


@case("amqp091/4.2.6.1/header-on-channel-zero",
      title="a content header on channel 0 is a connection exception 504 (4.2.6.1) or 505 (4.2.6)",
      clauses=ZERO_CHANNEL)
def header_on_channel_zero(ctx: Context) -> None:
    """Sends a content header (class 60, body-size 0) on channel 0. Two MUSTs disagree on the
    code: 4.2.6.1/4 names 504 (channel-error) for a content frame on channel 0; the frame is also
    a content without its method (none can precede it on channel 0), which 4.2.6/1 answers with
    505 (unexpected-frame). Either code passes, and a note says which was given; any other code
    (e.g. 501), a channel exception, silence or accepting the frame fails both."""
    peer = ctx.connect()
    peer.send(HeaderFrame(0, 60, 0, spec.BasicProperties()))
    _zero_channel_reaction(ctx, peer.observe(REACTION_WINDOW, probe=True))


def _zero_channel_reaction(ctx: Context, obs: Observation) -> None:
    ctx.check(obs, ConnectionException(504, 505))
    close = obs.connection_close
    if close is not None and close.reply_code in (504, 505):
        ctx.note(f"closed with {close.reply_code}: the code of "
                 f"{'4.2.6.1/4' if close.reply_code == 504 else '4.2.6/1 (not the 504 of 4.2.6.1/4)'}")


@case("amqp091/4.2.6.1/body-on-channel-zero",
      title="a body frame on channel 0 is a connection exception 504 (4.2.6.1) or 505 (4.2.6)",
      clauses=ZERO_CHANNEL)
def body_on_channel_zero(ctx: Context) -> None:
    """Sends a 4-octet body frame on channel 0. As for a header there, 4.2.6.1/4 names 504 and
    4.2.6/1 names 505 (no content can be in progress on channel 0): the two MUSTs disagree, either
    code passes with a note of which; another code, a channel exception or silence fails."""
    peer = ctx.connect()
    peer.send(BodyFrame(0, b"zero"))
    _zero_channel_reaction(ctx, peer.observe(REACTION_WINDOW, probe=True))


@case("amqp091/4.2.6.1/undefined-property-flag",
      title="a content header with an undefined property-flag bit is refused (channel or connection)",
      guideline="The property flags are an array of bits that indicate the presence or absence of each property "
                "value in sequence. The bits are ordered from most high to low - bit 15 indicates the first "
                "property. [4.2.6.1] ... " + INVALID_DATA + " [4.10.1]")
def undefined_property_flag(ctx: Context) -> None:
    """Sends basic.publish, a content header whose property flags are 0x0002 (bit 1: a 15th
    property, which class basic does not define; no property data follows) and a complete
    5-octet body. Passes on a channel or connection exception (any code) or a closed connection;
    accepting the header is informational: 4.10.1 says invalid data "can" be handled by closing the
    channel or connection, and no MUST or SHOULD sentence decides."""
    peer, ch = with_channel(ctx)
    queue = queue_for(ctx, peer, ch)
    peer.send(_publish_method(ch, queue),
              HeaderFrame(ch, 60, 5, spec.BasicProperties(), property_flags=[0x0002]), BodyFrame(ch, b"hello"))
    obs = react(peer, ch)
    refused(ctx, obs)
    if obs.probe_ok:
        got = fetch(peer, ch, queue, wait=0.5)
        if isinstance(got, Message):
            ctx.note(f"accepted; delivered with property flags 0x{got.header_payload[12:14].hex()}, body {got.body!r}")
        elif got is None:
            ctx.note("accepted, but the message was not delivered (queue empty)")
        else:
            ctx.note(f"accepted, then basic.get failed: {got.describe()}")


@case("amqp091/4.2.6.1/weight-not-zero", title="a content header with weight 1 is refused (channel or connection)",
      guideline="The weight field is unused and must be zero. [4.2.6.1] ... " + INVALID_DATA + " [4.10.1]")
def weight_not_zero(ctx: Context) -> None:
    """Sends basic.publish, a content header with weight 1 and a complete 5-octet body.
    Passes on a channel or connection exception (any code) or a closed connection; accepting it
    silently is informational (the text is a lower-case "must" on the sender, and 4.10.1's "can"
    on the receiver)."""
    peer, ch = with_channel(ctx)
    peer.send(_publish_method(ch, ctx.name("unroutable")), HeaderFrame(ch, 60, 5, spec.BasicProperties(), weight=1),
              BodyFrame(ch, b"hello"))
    obs = react(peer, ch)
    refused(ctx, obs)


@case("amqp091/4.2.6.1/all-properties-unmodified", title="all 14 basic properties come back present and unmodified",
      clauses=HEADER_INTACT, level=Level.MAY, guideline=VALID_TYPES)
def all_properties_unmodified(ctx: Context) -> None:
    """Publishes a message with every basic property set (reserved present but empty, as its
    label asks; user-id the authenticated user) and a headers table of 14 field types on which
    the spec and the RabbitMQ/Qpid readings agree, then reads it back with basic.get. Passes when
    every property and header entry sent is present with the same type code and value: the
    broker MAY add others (3.1.1/2). Refusing the valid table is informational (no keyword covers it)."""
    peer, ch = with_channel(ctx)
    queue = queue_for(ctx, peer, ch)
    props, headers = all_properties(ctx)
    publish(peer, ch, queue, b"properties", props)
    got = fetch(peer, ch, queue)
    if not isinstance(got, Message):
        not_delivered(ctx, got, clauses=())
        return
    diffs = compare_properties(props, got, headers)
    ctx.record(not diffs, expected="every property and header entry sent, unchanged",
               observed="; ".join(diffs) if diffs else "all present and unchanged",
               what="content header information is not removed or modified")


# ----------------------------------------------------------------------------- the content body

def _body_diff(sent: bytes, got: Message) -> str:
    size = got.header.body_size if got.header is not None else "?"
    if got.body == sent:
        return f"body-size {size}, {len(got.body)} octets in {got.body_frames} frame(s), identical"
    at = next((i for i, (a, b) in enumerate(zip(sent, got.body)) if a != b), min(len(sent), len(got.body)))
    return f"body-size {size}, {len(got.body)} octets in {got.body_frames} frame(s), first difference at octet {at}"


def _round_trip(ctx: Context, peer: Peer, ch: int, body: bytes, frame_body_max: int | None, what: str,
                delivered: tuple[str, ...] | None = None) -> None:
    queue = queue_for(ctx, peer, ch)
    publish(peer, ch, queue, body, frame_body_max=frame_body_max)
    got = fetch(peer, ch, queue)
    if not isinstance(got, Message):
        not_delivered(ctx, got, clauses=delivered)
        return
    ok = got.body == body and got.header is not None and got.header.body_size == len(body)
    ctx.record(ok, expected=f"body-size {len(body)}, {len(body)} octets, byte-identical",
               observed=_body_diff(body, got), what=what, clauses=BODY_INTACT if delivered is None else ("amqp091:3.1.1/1",))


@case("amqp091/4.2.6.2/split-into-100-frames", title="a body split into 100 frames of 10 octets arrives as one, byte-identical",
      clauses=BODY_INTACT + ("amqp091:2.3.5.2/1",))
def split_into_100_frames(ctx: Context) -> None:
    """Publishes 1000 seeded random octets as 100 body frames of 10 to a queue of its own and
    reads the message back with basic.get. Passes when the body is byte-identical."""
    peer, ch = with_channel(ctx)
    _round_trip(ctx, peer, ch, ctx.rng.randbytes(1000), 10, "the split body is stored as one and delivered unmodified")


@case("amqp091/4.2.6.2/empty-body", title="a content with body-size 0 and no body frame is delivered with an empty body",
      clauses=("amqp091:3.1.1/1",), level=Level.MAY,
      guideline="The body size is a 64-bit value that defines the total size of the content body, that is, the sum "
                "of the body sizes for the following content body frames. Zero indicates that there are no content "
                "body frames. [4.2.6.1]")
def empty_body(ctx: Context) -> None:
    """Publishes basic.publish + a content header with body-size 0 and no body frame, then reads
    it back with basic.get. Passes when it arrives with body-size 0 and an empty body (3.1.1/1);
    a broker that waits for a body frame and loses the message is informational (the body-size
    text is a definition without keyword)."""
    peer, ch = with_channel(ctx)
    _round_trip(ctx, peer, ch, b"", None, "the empty body is delivered empty", delivered=())


@case("amqp091/4.2.6.2/full-size-body-frames", title="body frames of exactly frame-max - 8 octets arrive byte-identical",
      clauses=BODY_INTACT)
def full_size_body_frames(ctx: Context) -> None:
    """Accepts the broker's frame-max, then publishes a body of two frames of exactly
    frame-max - 8 octets (the largest payload a frame may carry) plus one of 100 octets, and
    reads it back with basic.get. Passes when the body is byte-identical."""
    peer, ch = with_channel(ctx)
    limit = peer.negotiated.frame_max - FRAME_OVERHEAD
    ctx.note(f"frame-max {peer.negotiated.frame_max}: body frames of {limit} octets")
    _round_trip(ctx, peer, ch, ctx.rng.randbytes(2 * limit + 100), limit,
                "full-size body frames are stored as one and delivered unmodified")


@case("amqp091/4.2.6.2/interleaved-channels", title="contents of two channels interleaved frame by frame both arrive intact",
      clauses=BODY_INTACT)
def interleaved_channels(ctx: Context) -> None:
    """Publishes two 50-octet bodies on two channels (each to its own queue), split into 10-octet
    body frames and sent alternately frame by frame: content frames "may be mixed with frames for
    other channels" (4.2.6). Passes when both arrive byte-identical."""
    peer, a = with_channel(ctx)
    b = peer.open_channel()
    qa, qb = queue_for(ctx, peer, a, "a"), queue_for(ctx, peer, b, "b")
    body_a, body_b = ctx.rng.randbytes(50), ctx.rng.randbytes(50)
    fa = publish_frames(a, qa, body_a, frame_body_max=10)
    fb = publish_frames(b, qb, body_b, frame_body_max=10)
    peer.send(*[f for pair in zip(fa, fb) for f in pair])
    for ch, queue, body in ((a, qa, body_a), (b, qb, body_b)):
        got = fetch(peer, ch, queue)
        if not isinstance(got, Message):
            not_delivered(ctx, got, what=f"the content of channel {ch} is delivered")
            return
        ctx.record(got.body == body, expected=f"body of {len(body)} octets, byte-identical",
                   observed=_body_diff(body, got), what=f"the content of channel {ch} arrives intact")
