"""Hypothesis strategies for the hostile AMQP 0-9-1 broker (``amqpspec fuzz --as-server``).

An :class:`~fuzz.server_example.Example` says what the playing broker does wrong and where:
the frames it sends at one point of the conversation (in place of an answer the client is
waiting for, so that the client is listening when they arrive), the tuning it proposes, and
the reaction the specification requires of the client, if any, with the clauses that
require it. Frames are built on channel 1 with an empty consumer tag; the executor puts in
the channel and tag the client chose (:func:`fuzz.server_example.placed`).

Every frame is either well formed (``malformed`` None: it decodes with our own codec) or
labelled with what is wrong with it; the unit tests hold the generator to that.

Required reactions (the client is "a peer" in each of these sentences):
* a frame-end other than %xCE: "treat this as a fatal protocol error and close the
  connection without sending any further data on it" (4.2.3/3, 4.2.3/4); so for a frame of
  undefined type (4.2.3/2);
* a frame over the negotiated frame-max: "connection exception with reply code 501"
  (4.2.3/7);
* a content that is incomplete or badly formatted: 505 (4.2.6/1); a header of another class
  is also one: 501 or 505 (4.2.6.1/2); a content frame on channel 0: 504 or 505 (4.2.6.1/4);
* a heartbeat on a non-zero channel: 501 (4.2.7/2), or 503 (4.2.3/9: the same frame is a
  connection-class frame off channel 0) -- the two sentences disagree; either passes;
* a channel.close or connection.close, whatever its code: close-ok (2.3.7/2).
Everything else (odd but valid server-properties, tune values at and past the limits,
out-of-order methods, a server-initiated basic.cancel, undefined property flags, sizes that
lie upward) is judged by the robustness oracles only: no crash, no hang, bounded memory.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, RawFrame, spec
from amqpspec.wire.amqp091.frames import FRAME_OVERHEAD, Frame

from . import strategies091 as s091
from .server_example import Example, Expect, Item

PROTOCOL = "0-9-1"
QUEUE = "amqpspec-q"
FRAME_MAX = 131072

# where the hostile frames go, and the workloads that wait there (see server_exec091)
POINTS = {
    "connection.start": ("connect", "consume", "get", "publish"),
    "connection.tune": ("connect", "consume", "get", "publish"),
    "connection.open-ok": ("connect", "consume", "get"),
    "channel.open-ok": ("connect", "consume", "get"),
    "basic.consume-ok": ("consume",),      # sent after the consume-ok: the client waits for deliveries
    "basic.get-ok": ("get",),              # sent in place of get-ok / get-empty
    "basic.ack": ("confirm",),             # sent in place of the first publisher confirm
}
KINDS = ("server-properties", "tune-limits", "content-lies", "oversized-content", "bad-frame-end", "bad-frame-type",
         "frame-size-lies", "out-of-order", "close-codes", "server-cancel", "heartbeat-silence", "bad-heartbeat")

FRAME_ERROR = ("amqp091:4.2.3/3", "amqp091:4.2.3/4")
UNKNOWN_TYPE = ("amqp091:4.2.3/2",)
OVERSIZED = ("amqp091:4.2.3/7",)
CONTENT = ("amqp091:4.2.6/1",)
CLASS_ID = ("amqp091:4.2.6.1/2", "amqp091:4.2.6/1")
CHANNEL_ZERO = ("amqp091:4.2.6.1/4", "amqp091:4.2.6/1")
HEARTBEAT = ("amqp091:4.2.7/2", "amqp091:4.2.3/9")
CLOSE_OK = ("amqp091:2.3.7/2",)


def _item(frame: Frame, malformed: str | None = None) -> Item:
    return Item(frame, malformed)


def delivery_method(point: str, tag: int = 1) -> MethodFrame:
    """The method that opens a content at a delivery point (the executor sets tag and channel)."""
    if point == "basic.get-ok":
        return MethodFrame(1, spec.BasicGetOk(tag, False, "", QUEUE, 0))
    return MethodFrame(1, spec.BasicDeliver("", tag, False, "", QUEUE))


def content(point: str, body: bytes, props: spec.BasicProperties | None = None, tag: int = 1,
            chunk: int = 4096 - FRAME_OVERHEAD) -> list[Item]:
    """A correct delivery: method, header, body frames of at most ``chunk`` octets."""
    items = [_item(delivery_method(point, tag)), _item(HeaderFrame(1, 60, len(body), props or spec.BasicProperties()))]
    items += [_item(BodyFrame(1, body[i:i + chunk])) for i in range(0, len(body), chunk)]
    return items


bodies = st.binary(max_size=300)
delivery_points = st.sampled_from(("basic.consume-ok", "basic.get-ok"))


def _workload(point: str) -> SearchStrategy[str]:
    return st.sampled_from(POINTS[point])


@st.composite
def server_properties(draw: Any) -> Example:
    table = draw(s091.field_table(max_leaves=8))
    props = dict(s091.plain_table(table)) if draw(st.booleans()) else table
    start = MethodFrame(0, spec.ConnectionStart(0, 9, props, b"PLAIN AMQPLAIN", b"en_US"))
    # short strings carry UTF-8 (4.2.5.3): names or values that are not are a malformed table
    label = "a field name or short string that is not UTF-8" if _not_utf8(s091.plain_table(table)) else None
    return Example(PROTOCOL, "server-properties", draw(_workload("connection.start")), "connection.start",
                   (_item(start, label),))


def _not_utf8(value: Any) -> bool:
    """Whether a decoded value holds a string that is not valid UTF-8 (carried as surrogates)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
    return False


TUNE_EDGES = {
    "channel_max": st.sampled_from((0, 1, 2, 2047, 0xFFFF)),
    "frame_max": st.one_of(st.sampled_from((0, 1, 8, 4095, 4096, 4097, 0xFFFFFFFF)), st.integers(0, 1 << 20)),
    "heartbeat": st.sampled_from((0, 1, 2, 0xFFFF)),
}


@st.composite
def tune_limits(draw: Any) -> Example:
    channel_max, frame_max, heartbeat = (draw(TUNE_EDGES[k]) for k in ("channel_max", "frame_max", "heartbeat"))
    tune = MethodFrame(0, spec.ConnectionTune(channel_max, frame_max, heartbeat))
    # frame-max below frame-min-size (4096) breaks the broker's own MUST (4.2.3); the client's
    # answer to it is named by no MUST: robustness only
    label = f"frame-max {frame_max} below frame-min-size 4096" if 0 < frame_max < 4096 else None
    return Example(PROTOCOL, "tune-limits", draw(_workload("connection.tune")), "connection.tune",
                   (_item(tune, label),), tune=(channel_max, frame_max, heartbeat))


CONTENT_LIES = ("body-longer", "body-shorter-then-method", "body-shorter", "no-header", "no-method", "class-id",
                "header-channel-0", "body-channel-0", "property-flags", "raw-properties", "huge-body-size",
                "second-header")


@st.composite
def content_lies(draw: Any) -> Example:
    point = draw(delivery_points)
    body = draw(bodies)
    # drawn properties are costly to generate (every field's strategy): one content in four has them
    props = draw(s091.properties(spec.BasicProperties)) if draw(st.integers(0, 3)) == 0 else spec.BasicProperties()
    lie = draw(st.sampled_from(CONTENT_LIES))
    method = _item(delivery_method(point))
    header = HeaderFrame(1, 60, len(body), props)
    body_frame = BodyFrame(1, body)
    expect: Expect | None = Expect("connection-exception", (505,), CONTENT, f"a content that is {lie}")
    if lie == "body-longer":
        extra = draw(st.binary(min_size=1, max_size=64))
        items = [method, _item(header), _item(BodyFrame(1, body + extra), f"body of {len(body) + len(extra)} octets "
                                                                           f"after body-size {len(body)}")]
    elif lie == "body-shorter-then-method":
        more = draw(st.integers(1, 1000))
        items = [method, _item(replace(header, body_size=len(body) + more),
                               f"body-size {len(body) + more}, {len(body)} octets sent"),
                 *([_item(body_frame)] if body else []),
                 _item(delivery_method(point, 2), "a content method before the body was complete")]
    elif lie == "body-shorter":
        more = draw(st.integers(1, 1 << 20))
        items = [method, _item(replace(header, body_size=len(body) + more), f"body-size {len(body) + more}, "
                                                                             f"{len(body)} octets sent")]
        if body:
            items.append(_item(body_frame))
        expect = None  # the client may wait for the rest: nothing to react to yet
    elif lie == "no-header":
        items = [method, _item(BodyFrame(1, body or b"x"), "a body frame with no content header")]
    elif lie == "no-method":
        items = [_item(header, "a content header with no content method"), *([_item(body_frame)] if body else [])]
    elif lie == "class-id":
        other = draw(st.sampled_from(sorted(c for c in spec.CLASS_NAMES if c != 60)))
        items = [method, _item(replace(header, class_id=other, properties=None, raw_properties=b"\x00\x00"),
                               f"content header of class {other} after a basic method"),
                 *([_item(body_frame)] if body else [])]
        expect = Expect("connection-exception", (501, 505), CLASS_ID, "a content header of another class")
    elif lie == "header-channel-0":
        items = [method, _item(replace(header, channel=0), "content header on channel 0"),
                 *([_item(body_frame)] if body else [])]
        expect = Expect("connection-exception", (504, 505), CHANNEL_ZERO, "a content header on channel 0")
    elif lie == "body-channel-0":
        items = [method, _item(replace(header, body_size=len(body) or 1)),
                 _item(BodyFrame(0, body or b"x"), "body frame on channel 0")]
        expect = Expect("connection-exception", (504, 505), CHANNEL_ZERO, "a body frame on channel 0")
    elif lie == "property-flags":
        items = [method, _item(replace(header, properties=None, property_flags=draw(s091._undefined_flags())),
                               "property flags for no defined property"), *([_item(body_frame)] if body else [])]
        expect = None  # named by no MUST (4.10.1 lets a peer refuse or not)
    elif lie == "raw-properties":
        items = [method, _item(replace(header, raw_properties=draw(st.binary(max_size=24))),
                               "property octets that do not match the flags"), *([_item(body_frame)] if body else [])]
        expect = None  # may or may not decode, depending on the octets drawn
    elif lie == "huge-body-size":
        size = draw(st.sampled_from(((1 << 63) - 1, (1 << 64) - 1, 1 << 40, 0xFFFFFFFF)))
        items = [method, _item(replace(header, body_size=size), f"body-size {size}"),
                 *([_item(body_frame)] if body else [])]
        expect = None  # an honest client waits for the rest (or refuses): robustness only
    else:  # second-header
        items = [method, _item(header), _item(header, "a second content header"),
                 *([_item(body_frame)] if body else [])]
        if not body:
            expect = None  # an empty body completes at the first header: the second opens nothing
    return Example(PROTOCOL, "content-lies", "consume" if point == "basic.consume-ok" else "get", point,
                   tuple(items), expect=expect, note=lie)


@st.composite
def oversized_content(draw: Any) -> Example:
    point = draw(delivery_points)
    frame_max = 4096
    size = draw(st.integers(frame_max + 1, 4 * frame_max))
    body = bytes(size - FRAME_OVERHEAD)
    items = [_item(delivery_method(point)), _item(HeaderFrame(1, 60, len(body), spec.BasicProperties())),
             _item(BodyFrame(1, body), f"body frame of {size} octets past frame-max {frame_max}")]
    return Example(PROTOCOL, "oversized-content", "consume" if point == "basic.consume-ok" else "get", point,
                   tuple(items), tune=(2047, frame_max, 0),
                   expect=Expect("connection-exception", (501,), OVERSIZED, "a frame over the negotiated frame-max",
                                 frame_max_under=size))


def _any_point() -> SearchStrategy[str]:
    return st.sampled_from(("connection.start", "connection.tune", "connection.open-ok", "channel.open-ok",
                            "basic.consume-ok", "basic.get-ok", "basic.ack"))


def _typical(point: str) -> Frame:
    """The frame a broker would send at ``point`` (what a mutation starts from)."""
    return {
        "connection.start": MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "amqpspec"}, b"PLAIN", b"en_US")),
        "connection.tune": MethodFrame(0, spec.ConnectionTune(2047, FRAME_MAX, 0)),
        "connection.open-ok": MethodFrame(0, spec.ConnectionOpenOk()),
        "channel.open-ok": MethodFrame(1, spec.ChannelOpenOk()),
        "basic.consume-ok": delivery_method("basic.consume-ok"),
        "basic.get-ok": delivery_method("basic.get-ok"),
        "basic.ack": MethodFrame(1, spec.BasicAck(1, False)),
    }[point]


@st.composite
def bad_frame_end(draw: Any) -> Example:
    point = draw(_any_point())
    end = draw(st.integers(0, 255).filter(lambda b: b != 0xCE))
    frame = replace(_typical(point), end=end)
    return Example(PROTOCOL, "bad-frame-end", draw(_workload(point)), point,
                   (_item(frame, f"frame-end 0x{end:02X}"),),
                   expect=Expect("silent-close", (), FRAME_ERROR, "a frame with an invalid frame-end"))


@st.composite
def bad_frame_type(draw: Any) -> Example:
    point = draw(_any_point())
    ftype = draw(st.integers(0, 255).filter(lambda t: t not in (1, 2, 3, 8)))
    frame = RawFrame(draw(st.sampled_from((0, 1))), type=ftype, data=draw(st.binary(max_size=32)))
    return Example(PROTOCOL, "bad-frame-type", draw(_workload(point)), point,
                   (_item(frame, f"frame of undefined type {ftype}"),),
                   expect=Expect("silent-close", (), UNKNOWN_TYPE, "a frame of an undefined type"))


@st.composite
def frame_size_lies(draw: Any) -> Example:
    """A frame whose size field announces more (or less) than follows: the client must bound
    what it buffers (memory, hang oracles); no MUST names the reaction to a size that lies
    upward before its frame-end could be read."""
    point = draw(_any_point())
    typical = _typical(point)
    actual = len(typical.encode()) - FRAME_OVERHEAD
    size = draw(st.one_of(st.sampled_from((0, 0xFFFFFFFF, 0x7FFFFFFF, 1 << 24)), s091.lying_length(actual, 32)))
    return Example(PROTOCOL, "frame-size-lies", draw(_workload(point)), point,
                   (_item(replace(typical, size=size), f"frame size {size} for a payload of {actual} octets"),))


OUT_OF_ORDER = (
    lambda: MethodFrame(0, spec.ConnectionStart(0, 9, {}, b"PLAIN", b"en_US")),
    lambda: MethodFrame(0, spec.ConnectionTune(2047, FRAME_MAX, 0)),
    lambda: MethodFrame(0, spec.ConnectionOpenOk()),
    lambda: MethodFrame(0, spec.ConnectionSecure(b"x")),
    lambda: MethodFrame(1, spec.ChannelOpenOk()),
    lambda: MethodFrame(1, spec.ChannelFlow(False)),
    lambda: MethodFrame(1, spec.BasicConsumeOk("amq.ctag-other")),
    lambda: MethodFrame(1, spec.BasicGetEmpty()),
    lambda: MethodFrame(1, spec.TxCommitOk()),
    lambda: MethodFrame(1, spec.QueueDeclareOk(QUEUE, 0, 0)),
    lambda: MethodFrame(1, spec.BasicAck(99, True)),
    lambda: MethodFrame(1, spec.BasicReturn(312, "NO_ROUTE", "", QUEUE)),
)


@st.composite
def out_of_order(draw: Any) -> Example:
    point = draw(_any_point())
    picks = draw(st.lists(st.sampled_from(range(len(OUT_OF_ORDER))), min_size=1, max_size=3))
    frames = [OUT_OF_ORDER[i]() for i in picks]
    if draw(st.booleans()):
        frames = [replace(f, channel=draw(st.integers(0, 0xFFFF))) for f in frames]
    if draw(st.integers(0, 3)) == 0:   # any method of the spec, with drawn arguments (costly to draw)
        frames.append(draw(s091.method_frame()))
    return Example(PROTOCOL, "out-of-order", draw(_workload(point)), point, tuple(_item(f) for f in frames))


@st.composite
def close_codes(draw: Any) -> Example:
    point = draw(st.sampled_from(("connection.open-ok", "channel.open-ok", "basic.consume-ok", "basic.get-ok",
                                  "basic.ack")))
    code = draw(st.one_of(st.sampled_from((0, 1, 200, 320, 404, 406, 501, 541, 999, 0xFFFF)), s091.unsigned(16)))
    text = draw(s091.utf8_shortstr())
    class_id, method_id = draw(s091.unsigned(16)), draw(s091.unsigned(16))
    on_channel = point not in ("connection.open-ok",) and draw(st.booleans())
    if on_channel:
        frame = MethodFrame(1, spec.ChannelClose(code, text, class_id, method_id))
        expect = Expect("close-ok", (), CLOSE_OK, "a channel.close", channel=1)
    else:
        frame = MethodFrame(0, spec.ConnectionClose(code, text, class_id, method_id))
        expect = Expect("close-ok", (), CLOSE_OK, "a connection.close", channel=0)
    return Example(PROTOCOL, "close-codes", draw(_workload(point)), point, (_item(frame),), expect=expect)


@st.composite
def server_cancel(draw: Any) -> Example:
    frame = MethodFrame(1, spec.BasicCancel("", draw(st.booleans())))
    extra = [] if draw(st.booleans()) else content("basic.consume-ok", draw(bodies))
    return Example(PROTOCOL, "server-cancel", "consume", "basic.consume-ok", (_item(frame), *extra))


@st.composite
def heartbeat_silence(draw: Any) -> Example:
    beat = draw(st.sampled_from((1, 2)))
    tune = MethodFrame(0, spec.ConnectionTune(2047, FRAME_MAX, beat))
    return Example(PROTOCOL, "heartbeat-silence", draw(st.sampled_from(("consume", "get", "connect"))),
                   "connection.tune", (_item(tune),), tune=(2047, FRAME_MAX, beat), heartbeats=False)


@st.composite
def bad_heartbeat(draw: Any) -> Example:
    point = draw(st.sampled_from(("channel.open-ok", "basic.consume-ok", "basic.get-ok")))
    channel = draw(st.integers(1, 0xFFFF))
    payload = draw(st.binary(max_size=8))
    frame = HeartbeatFrame(channel, data=payload)
    return Example(PROTOCOL, "bad-heartbeat", draw(_workload(point)), point,
                   (_item(frame, f"heartbeat on channel {channel}"),),
                   expect=Expect("connection-exception", (501, 503), HEARTBEAT, "a heartbeat on a non-zero channel"))


BY_KIND = {
    "server-properties": server_properties, "tune-limits": tune_limits, "content-lies": content_lies,
    "oversized-content": oversized_content, "bad-frame-end": bad_frame_end, "bad-frame-type": bad_frame_type,
    "frame-size-lies": frame_size_lies, "out-of-order": out_of_order, "close-codes": close_codes,
    "server-cancel": server_cancel, "heartbeat-silence": heartbeat_silence, "bad-heartbeat": bad_heartbeat,
}
assert set(BY_KIND) == set(KINDS)


def examples(kinds: tuple[str, ...] = KINDS) -> SearchStrategy[Example]:
    """One hostile-broker example of any of ``kinds``."""
    return st.one_of([BY_KIND[k]() for k in kinds])


__all__ = ["examples", "KINDS", "POINTS", "BY_KIND", "PROTOCOL"]
