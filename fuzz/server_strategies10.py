"""Hypothesis strategies for the hostile AMQP 1.0 broker (``amqpspec fuzz --as-server --protocol 1.0``).

1.0 frames name things only the conversation settles (our session's channel, the link's
handle, the next delivery-id, the client's max-frame-size), so an example's items are
:class:`Recipe` s -- a performative with drawn fields and a drawn fault -- that
:func:`build` turns into frames once the executor knows those numbers (:class:`Where`).
``build`` is pure: the same recipe and numbers give the same octets; the unit tests build
every generated recipe against sample numbers and decode the result.

Required reactions (the client is "a peer" in each):
* a frame larger than the max-frame-size it announced: "close the connection with the
  framing-error error-code" (2.7.1/5); so for a channel number above its channel-max (2.7.1/8);
* a flow naming a handle no link is attached to: end the session with unattached-handle
  (2.7.4/2) -- a close carrying it passes too (the client ended everything);
* a close from the broker: "Prior to closing a connection, each peer MUST write a close
  frame" (2.4.3/1): the client answers with its close.
Everything else (odd open, begin and attach fields, withdrawn credit, drain, transfers that
never end or abort, odd dispositions, sessions and links that vanish, undecodable
performatives) is judged by the robustness oracles only.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp10 import AMQPFrame, Symbol, spec
from amqpspec.wire.amqp10.frames import transfer_frames

from .server_example import Example, Expect, Item

PROTOCOL = "1.0"
ADDRESS = "amqpspec-q"
POINTS = {
    "open": ("connect", "send", "receive"),
    "begin": ("connect", "send", "receive"),
    "attach": ("send", "receive"),
    "flow": ("send",),               # after our attach to the client's sender, in place of the credit
    "transfer": ("receive",),        # after the client's flow granting credit, in place of a delivery
    "disposition": ("send",),        # after the client's first transfer, in place of the settlement
}
KINDS = ("open-fields", "begin-fields", "attach-fields", "flow-credit", "transfer-faults", "disposition-faults",
         "vanish", "bad-encoding", "oversized-frame", "channel-beyond-max", "idle-silence")
OVERSIZE_CAP = 2 << 20           # the largest oversized frame built (a client announcing more is not tested)

FRAMING = ("amqp10:2.7.1/5",)
CHANNEL = ("amqp10:2.7.1/8",)
UNATTACHED = ("amqp10:2.7.4/2",)
CLOSE = ("amqp10:2.4.3/1",)
CONDITIONS = ("amqp:internal-error", "amqp:not-found", "amqp:resource-limit-exceeded", "amqp:decode-error",
              "amqp:connection:forced", "amqp:session:errant-link", "amqp:link:detach-forced",
              "amqp:link:stolen", "amqpspec:no-such-condition")


@dataclass(frozen=True)
class Recipe:
    """One frame to build: ``perf`` with ``fields`` (pairs; ``"$handle"`` is the link's handle,
    ``"$delivery"`` the next delivery-id), on our session's channel unless ``channel`` says,
    with ``payload`` (transfers) and a fault applied to its octets."""

    perf: str
    fields: tuple[tuple[str, Any], ...] = ()
    channel: int | None = None           # None: our session's (0 before there is one)
    payload: bytes = b""
    oversize: int = 0                    # a transfer this many octets past the client's max-frame-size
    beyond_channel_max: int = 0          # on the client's channel-max + this
    header: tuple[tuple[str, int], ...] = ()   # frame-header rewrites: size, doff, frame_type
    cut: int = 0                         # octets cut off the end of the encoded frame
    flip: tuple[int, int] | None = None  # (position in the body, xor mask)


@dataclass
class Where:
    """The numbers the conversation settled, as the executor sees them at the point."""

    channel: int = 0                      # our session's channel
    remote_channel: int = 0               # the client's
    handle: int = 0                       # our link's handle
    delivery_id: int = 0                  # our next delivery-id
    next_incoming_id: int = 0
    next_outgoing_id: int = 0
    client_max_frame: int = 1 << 32       # the client's max-frame-size (0: not known)
    client_channel_max: int = 65535
    delivery_count: int = 0


PERFORMATIVES = {"open": spec.Open, "begin": spec.Begin, "attach": spec.Attach, "flow": spec.Flow,
                 "transfer": spec.Transfer, "disposition": spec.Disposition, "detach": spec.Detach,
                 "end": spec.End, "close": spec.Close}


def _resolve(value: Any, where: Where) -> Any:
    if value == "$handle":
        return where.handle
    if value == "$delivery":
        return where.delivery_id
    if value == "$remote-channel":
        return where.remote_channel
    if isinstance(value, tuple) and value and value[0] == "$error":
        return spec.Error(condition=Symbol(value[1]), description=value[2])
    return value


def build(recipe: Recipe, where: Where) -> list[tuple[bytes, str]]:
    """The frames of ``recipe`` (octets, summary) for the numbers in ``where``."""
    cls = PERFORMATIVES[recipe.perf]
    fields = {k: _resolve(v, where) for k, v in recipe.fields}
    channel = where.channel if recipe.channel is None else recipe.channel
    if recipe.beyond_channel_max:
        channel = min(0xFFFF, where.client_channel_max + recipe.beyond_channel_max)
    perf = cls(**fields)
    if recipe.perf == "transfer":
        payload = recipe.payload
        if recipe.oversize:
            limit = min(where.client_max_frame or OVERSIZE_CAP, OVERSIZE_CAP)
            payload = bytes(max(0, limit + recipe.oversize - 64))
            frames = [AMQPFrame(channel, perf, payload)]
        else:
            frames = transfer_frames(channel, perf, payload, max(512, min(where.client_max_frame or 65536, 65536)))
    else:
        frames = [AMQPFrame(channel, perf)]
    out = []
    for f in frames:
        data = f.encode()
        summary = f.summary()
        if recipe.header or recipe.cut or recipe.flip:
            data = _fault(data, recipe)
            summary += f" [octets changed: {_fault_text(recipe)}]"
        out.append((data, summary))
    return out


def _fault(data: bytes, recipe: Recipe) -> bytes:
    buf = bytearray(data)
    for name, value in recipe.header:
        if name == "size":
            struct.pack_into(">I", buf, 0, value & 0xFFFFFFFF)
        elif name == "doff":
            buf[4] = value & 0xFF
        elif name == "frame_type":
            buf[5] = value & 0xFF
    if recipe.flip is not None and len(buf) > 8:
        pos = 8 + recipe.flip[0] % (len(buf) - 8)
        buf[pos] ^= recipe.flip[1] or 0xFF
    if recipe.cut:
        del buf[max(8, len(buf) - recipe.cut):]
        if not any(n == "size" for n, _ in recipe.header):
            struct.pack_into(">I", buf, 0, len(buf))  # a whole frame whose body ends early
    return bytes(buf)


def _fault_text(recipe: Recipe) -> str:
    parts = [f"{n}={v}" for n, v in recipe.header]
    if recipe.flip is not None:
        parts.append(f"body octet {recipe.flip[0]} xor 0x{recipe.flip[1] or 0xFF:02X}")
    if recipe.cut:
        parts.append(f"body cut by {recipe.cut} octets")
    return ", ".join(parts)


# ----------------------------------------------------------------------------- values

u32 = st.integers(0, 0xFFFFFFFF)
edge_u32 = st.one_of(st.sampled_from((0, 1, 2, 0x7FFFFFFF, 0xFFFFFFFE, 0xFFFFFFFF)), u32)
text = st.text(max_size=40)
errors = st.one_of(st.none(), st.tuples(st.just("$error"), st.sampled_from(CONDITIONS), st.one_of(st.none(), text)))
ascii_symbol = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=20).map(Symbol)
symbols_map = st.dictionaries(ascii_symbol,
                              st.one_of(st.none(), st.booleans(), st.integers(-(1 << 31), (1 << 31) - 1), text,
                                        st.binary(max_size=16)), max_size=5)


def _item(recipe: Recipe, malformed: str | None = None) -> Item:
    return Item(recipe, malformed)


@st.composite
def open_fields(draw: Any) -> Example:
    mfs = draw(st.one_of(st.sampled_from((512, 513, 4096, 0xFFFFFFFF)), st.integers(0, 1 << 20)))
    fields = {"container_id": draw(text), "max_frame_size": mfs,
              "channel_max": draw(st.sampled_from((0, 1, 2, 0xFFFF))),
              "idle_time_out": draw(st.one_of(st.none(), st.sampled_from((1, 10, 100, 0xFFFFFFFF)))),
              "properties": draw(st.one_of(st.none(), symbols_map)),
              "offered_capabilities": draw(st.one_of(st.none(), st.lists(ascii_symbol, max_size=4)))}
    label = f"max-frame-size {mfs} below MIN-MAX-FRAME-SIZE 512" if mfs < 512 else None
    return Example(PROTOCOL, "open-fields", draw(st.sampled_from(POINTS["open"])), "open",
                   (_item(Recipe("open", tuple(fields.items()), channel=0), label),))


@st.composite
def begin_fields(draw: Any) -> Example:
    fields = {"remote_channel": draw(st.one_of(st.just("$remote-channel"), st.integers(0, 0xFFFF))),
              "next_outgoing_id": draw(edge_u32), "incoming_window": draw(edge_u32),
              "outgoing_window": draw(edge_u32), "handle_max": draw(st.one_of(st.none(), edge_u32))}
    return Example(PROTOCOL, "begin-fields", draw(st.sampled_from(POINTS["begin"])), "begin",
                   (_item(Recipe("begin", tuple(fields.items()))),))


@st.composite
def attach_fields(draw: Any) -> Example:
    workload = draw(st.sampled_from(POINTS["attach"]))
    # the role a correct node answers with is the opposite of the client's: a client sender
    # (send) meets a receiver (role true); a wrong role is drawn on purpose
    right_role = workload == "send"
    role = draw(st.one_of(st.just(right_role), st.just(not right_role)))
    terminus = spec.Source(address=ADDRESS) if draw(st.booleans()) else None
    fields = {"name": draw(st.one_of(st.just("amqpspec-link"), text)), "handle": "$handle", "role": role,
              "source": terminus, "target": spec.Target(address=ADDRESS) if draw(st.booleans()) else None,
              "initial_delivery_count": draw(st.one_of(st.none(), edge_u32)) if role is False else None,
              "max_message_size": draw(st.one_of(st.none(), st.sampled_from((0, 1, 5, 0xFFFFFFFF)))),
              "snd_settle_mode": draw(st.one_of(st.none(), st.integers(0, 2))),
              "rcv_settle_mode": draw(st.one_of(st.none(), st.integers(0, 1)))}
    note = "wrong role" if role != right_role else ""
    return Example(PROTOCOL, "attach-fields", workload, "attach",
                   (_item(Recipe("attach", tuple(fields.items()))),), note=note)


@st.composite
def flow_credit(draw: Any) -> Example:
    handle = draw(st.one_of(st.just("$handle"), st.sampled_from((77, 0xFFFF, 0xFFFFFFFF))))
    fields = {"next_incoming_id": draw(st.one_of(st.just(0), edge_u32)), "incoming_window": draw(edge_u32),
              "next_outgoing_id": 0, "outgoing_window": draw(edge_u32), "handle": handle,
              "delivery_count": draw(st.one_of(st.just(0), edge_u32)),
              "link_credit": draw(st.one_of(st.just(0), edge_u32)), "drain": draw(st.booleans()),
              "echo": draw(st.booleans())}
    expect = None
    items = [_item(Recipe("flow", tuple(fields.items())))]
    note = "drain" if fields["drain"] else ""
    if handle == "$handle" and fields["link_credit"] == 0 and draw(st.booleans()):
        # credit granted, then withdrawn at once (before the client could use it all)
        grant = {**fields, "link_credit": draw(st.integers(1, 100)), "drain": False, "echo": False}
        items.insert(0, _item(Recipe("flow", tuple(grant.items()))))
        note = "withdrawn credit"
    if handle != "$handle":
        expect = Expect("close-condition", (), UNATTACHED, "a flow naming a handle no link is attached to",
                        conditions=("amqp:session:unattached-handle",), scope="end")
        note = "unattached handle"
    return Example(PROTOCOL, "flow-credit", "send", "flow", tuple(items), expect=expect, note=note)


TRANSFER_FAULTS = ("bad-message", "never-ends", "aborted", "duplicate-id", "skipped-id", "unattached-handle",
                   "settled-odd", "huge-tag", "no-delivery-id")


@st.composite
def transfer_faults(draw: Any) -> Example:
    fault = draw(st.sampled_from(TRANSFER_FAULTS))
    base = {"handle": "$handle", "delivery_id": "$delivery", "delivery_tag": b"t1", "message_format": 0,
            "settled": False}
    payload = b"\x00\x53\x75\xa0\x05hello"      # one data section: "hello"
    items: list[Item] = []
    if fault == "bad-message":
        payload = draw(st.binary(min_size=1, max_size=200))
        items.append(_item(Recipe("transfer", tuple(base.items()), payload=payload), "a payload that is not a message"))
    elif fault == "never-ends":
        items.append(_item(Recipe("transfer", tuple({**base, "more": True}.items()), payload=payload),
                           "more=true, and no further frame"))
    elif fault == "aborted":
        items.append(_item(Recipe("transfer", tuple({**base, "more": True}.items()), payload=payload)))
        items.append(_item(Recipe("transfer", (("handle", "$handle"), ("aborted", True)))))
    elif fault in ("duplicate-id", "skipped-id"):
        items.append(_item(Recipe("transfer", tuple(base.items()), payload=payload)))
        other = {**base, "delivery_tag": b"t2",
                 "delivery_id": 0 if fault == "duplicate-id" else draw(st.integers(2, 1000))}
        items.append(_item(Recipe("transfer", tuple(other.items()), payload=payload), f"delivery-id {fault}"))
    elif fault == "unattached-handle":
        stray = {**base, "handle": draw(st.sampled_from((77, 0xFFFFFFFF)))}
        items.append(_item(Recipe("transfer", tuple(stray.items()),
                                  payload=payload), "a transfer on a handle no link is attached to"))
    elif fault == "settled-odd":
        items.append(_item(Recipe("transfer", tuple({**base, "settled": True, "rcv_settle_mode": 1}.items()),
                                  payload=payload)))
    elif fault == "huge-tag":
        long_tag = {**base, "delivery_tag": bytes(draw(st.integers(33, 4000)))}
        items.append(_item(Recipe("transfer", tuple(long_tag.items()),
                                  payload=payload), "a delivery-tag longer than 32 octets"))
    else:  # no-delivery-id on a first frame
        items.append(_item(Recipe("transfer", (("handle", "$handle"), ("delivery_tag", b"t1")), payload=payload),
                           "the first transfer of a delivery without delivery-id"))
    return Example(PROTOCOL, "transfer-faults", "receive", "transfer", tuple(items), note=fault)


@st.composite
def disposition_faults(draw: Any) -> Example:
    state = draw(st.sampled_from((spec.Accepted(), spec.Released(), spec.Modified(delivery_failed=True),
                                  spec.Rejected(error=spec.Error(condition=Symbol("amqp:internal-error"))), None)))
    first = draw(st.one_of(st.just("$delivery"), edge_u32))
    fields = {"role": draw(st.booleans()), "first": first, "last": draw(st.one_of(st.none(), edge_u32)),
              "settled": draw(st.booleans()), "state": state}
    return Example(PROTOCOL, "disposition-faults", "send", "disposition",
                   (_item(Recipe("disposition", tuple(fields.items()))),))


@st.composite
def vanish(draw: Any) -> Example:
    what = draw(st.sampled_from(("detach", "end", "close")))
    error = draw(errors)
    point = draw(st.sampled_from(("flow", "transfer")))
    workload = "send" if point == "flow" else "receive"
    expect = None
    if what == "detach":
        recipe = Recipe("detach", (("handle", "$handle"), ("closed", draw(st.booleans())), ("error", error)))
    elif what == "end":
        recipe = Recipe("end", (("error", error),))
    else:
        recipe = Recipe("close", (("error", error),), channel=0)
        expect = Expect("answers", (), CLOSE, "a close from the broker", scope="close")
    return Example(PROTOCOL, "vanish", workload, point, (_item(recipe),), expect=expect, note=what)


@st.composite
def bad_encoding(draw: Any) -> Example:
    point = draw(st.sampled_from(("open", "begin", "attach", "flow", "transfer", "disposition")))
    workload = draw(st.sampled_from(POINTS[point]))
    perf = {"open": Recipe("open", (("container_id", "amqpspec-broker"), ("max_frame_size", 65536)), channel=0),
            "disposition": Recipe("disposition", (("role", True), ("first", "$delivery"), ("settled", True),
                                                  ("state", spec.Accepted()))),
            "begin": Recipe("begin", (("remote_channel", "$remote-channel"), ("next_outgoing_id", 0),
                                      ("incoming_window", 100), ("outgoing_window", 100))),
            "attach": Recipe("attach", (("name", "amqpspec-link"), ("handle", "$handle"),
                                        ("role", workload == "send"))),
            "flow": Recipe("flow", (("next_incoming_id", 0), ("incoming_window", 100), ("next_outgoing_id", 0),
                                    ("outgoing_window", 100), ("handle", "$handle"), ("delivery_count", 0),
                                    ("link_credit", 10))),
            "transfer": Recipe("transfer", (("handle", "$handle"), ("delivery_id", "$delivery"),
                                            ("delivery_tag", b"t1"), ("message_format", 0)),
                               payload=b"\x00\x53\x75\xa0\x05hello")}[point]
    fault = draw(st.sampled_from(("flip", "cut", "doff", "size", "type")))
    if fault == "flip":
        recipe = Recipe(perf.perf, perf.fields, perf.channel, payload=perf.payload,
                        flip=(draw(st.integers(0, 200)), draw(st.integers(1, 255))))
    elif fault == "cut":
        recipe = Recipe(perf.perf, perf.fields, perf.channel, payload=perf.payload, cut=draw(st.integers(1, 12)))
    elif fault == "doff":
        recipe = Recipe(perf.perf, perf.fields, perf.channel, payload=perf.payload,
                        header=(("doff", draw(st.sampled_from((0, 1, 255)))),))
    elif fault == "size":
        recipe = Recipe(perf.perf, perf.fields, perf.channel, payload=perf.payload,
                        header=(("size", draw(st.sampled_from((0, 7, 9, 0xFFFFFFFF, 1 << 20)))),))
    else:
        recipe = Recipe(perf.perf, perf.fields, perf.channel, payload=perf.payload,
                        header=(("frame_type", draw(st.integers(2, 255))),))
    return Example(PROTOCOL, "bad-encoding", workload, point, (_item(recipe, f"octets changed ({fault})"),), note=fault)


@st.composite
def oversized_frame(draw: Any) -> Example:
    recipe = Recipe("transfer", (("handle", "$handle"), ("delivery_id", "$delivery"), ("delivery_tag", b"t1"),
                                 ("message_format", 0)), oversize=draw(st.integers(1, 1000)))
    return Example(PROTOCOL, "oversized-frame", "receive", "transfer",
                   (_item(recipe, "a frame past the client's max-frame-size"),),
                   expect=Expect("close-condition", (), FRAMING, "a frame larger than the client's max-frame-size",
                                 conditions=("amqp:connection:framing-error",), scope="close",
                                 frame_max_under=OVERSIZE_CAP))


@st.composite
def channel_beyond_max(draw: Any) -> Example:
    point = draw(st.sampled_from(("flow", "transfer")))
    recipe = Recipe("flow", (("next_incoming_id", 0), ("incoming_window", 10), ("next_outgoing_id", 0),
                             ("outgoing_window", 10)), beyond_channel_max=draw(st.integers(1, 100)))
    return Example(PROTOCOL, "channel-beyond-max", "send" if point == "flow" else "receive", point,
                   (_item(recipe, "a frame on a channel above the client's channel-max"),),
                   expect=Expect("close-condition", (), CHANNEL, "a frame on a channel above the client's channel-max",
                                 conditions=("amqp:connection:framing-error",), scope="close",
                                 channel_max_under=65535))


@st.composite
def idle_silence(draw: Any) -> Example:
    beat = draw(st.sampled_from((1, 2)))
    recipe = Recipe("open", (("container_id", "amqpspec-broker"), ("max_frame_size", 65536),
                             ("idle_time_out", draw(st.sampled_from((None, 500, 1000))))), channel=0)
    return Example(PROTOCOL, "idle-silence", draw(st.sampled_from(("receive", "connect"))), "open",
                   (_item(recipe),), heartbeats=False, options=(("heartbeat", beat),))


BY_KIND = {"open-fields": open_fields, "begin-fields": begin_fields, "attach-fields": attach_fields,
           "flow-credit": flow_credit, "transfer-faults": transfer_faults, "disposition-faults": disposition_faults,
           "vanish": vanish, "bad-encoding": bad_encoding, "oversized-frame": oversized_frame,
           "channel-beyond-max": channel_beyond_max, "idle-silence": idle_silence}
assert set(BY_KIND) == set(KINDS)


def examples(kinds: tuple[str, ...] = KINDS) -> SearchStrategy[Example]:
    return st.one_of([BY_KIND[k]() for k in kinds])


__all__ = ["examples", "build", "Recipe", "Where", "KINDS", "POINTS", "PROTOCOL"]
