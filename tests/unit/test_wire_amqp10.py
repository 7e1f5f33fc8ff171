"""The AMQP 1.0 wire codec: round trips, producible malformations, bounded decoding.

No broker involved. Values come from ``strategies_amqp10``, which derives them from the
codec's metadata (the encodings of the types XML, the generated classes' ``FIELDS``), so an
encoding or a described type added to the XML is covered without touching this file.

"Decode then re-encode" gives the input octets back: containers remember the constructor of
each element, composites their descriptor form and trailing nulls, NaNs their bits, maps with a
duplicated key all their pairs (as long as they are not changed). A top-level scalar's width is
returned by ``decode_item`` (its constructor) rather than remembered by the value; a frame body
that is not a described value is kept as ``Encoded(value, encoding)``. The reader also keeps the
exact received octets (``FrameReader.last_raw``).
"""
from __future__ import annotations

import functools
import itertools
import struct
import sys
import tracemalloc
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpspec.wire.amqp10 import (
    AMQP_HEADER, SASL_HEADER, TLS_HEADER, AMQPFrame, Array, Counted, Described, EmptyFrame, Encoded, Frame,
    FrameReader, List, MalformedFrame, Map, Message, Pairs, ProtocolHeader, Raw, RawFrame, Retyped, SASLFrame,
    Sized, Symbol, UByte, UInt, ULong, decode, decode_item, describe, encode_sections, frame, gen, spec,
    transfer_frames,
)
from amqpspec.wire.amqp10 import types as T
from amqpspec.wire.amqp10.composite import Composite, Restricted
from amqpspec.wire.amqp10.frames import decode_body, decode_frame
from amqpspec.wire.amqp10.xmlspec import load
from amqpspec.wire.errors import DecodeError, EncodeError, FrameError

from tests.support.cost import cost
from . import strategies_amqp10 as S

ALL_ENCODINGS = sorted(T.BY_CODE.values(), key=lambda e: e.code)
SCALAR_ENCODINGS = [e for e in ALL_ENCODINGS if e.category in ("fixed", "variable") and e.type != "list"]
U32 = struct.Struct(">I")

# Keep this file's run short (the fuzzer is where long runs belong).
SOME = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read_all(data: bytes, **kwargs: Any) -> list[Any]:
    reader = FrameReader(**kwargs)
    reader.feed(data)
    items = list(reader)
    assert reader.pending == 0, "octets of a complete stream left unread"
    return items


def dec(data: bytes) -> Any:
    return decode(data, spec.REGISTRY)


@functools.cache
def fitting(code: int) -> st.SearchStrategy[Any]:
    return S.fitting(T.BY_CODE[code], valid_text=False)


# ============================================================================ 1. round trips

@pytest.mark.parametrize("enc", SCALAR_ENCODINGS + [T.ENCODINGS["list0"]], ids=lambda e: e.name)
@SOME
@given(data=st.data())
def test_every_encoding_round_trips_and_is_remembered(enc: T.Encoding, data: st.DataObject) -> None:
    value = data.draw(fitting(enc.code), label="value")
    wire = T.encode(Encoded(value, enc.name))
    assert wire[0] == enc.code
    code, back, end = decode_item(wire)
    assert (code, end) == (enc.code, len(wire))
    assert S.typed(back) == S.typed(Encoded(value, enc.name))
    assert T.encode(back, prefer=code) == wire
    # inside a list the width is remembered by the container
    outer = T.encode([Encoded(value, enc.name), Encoded(value, enc.name)])
    assert T.encode(decode(outer)) == outer


@pytest.mark.parametrize("type_", S.SCALAR_TYPES)
@SOME
@given(data=st.data())
def test_default_encoding_is_the_narrowest_that_fits(type_: str, data: st.DataObject) -> None:
    value = data.draw(S.primitive(type_, valid_text=False), label="value")
    chosen = T.encode(value)[0]
    for enc in T.encodings_of(type_):  # narrowest first
        try:
            T.encode(Encoded(value, enc.name))
        except EncodeError:
            continue
        assert chosen == enc.code, f"{value!r}: {T.BY_CODE[chosen].name} chosen, {enc.name} fits"
        break


@MANY
@given(value=S.values(valid_text=False))
def test_any_value_round_trips(value: Any) -> None:
    wire = T.encode(value)
    back = decode(wire)
    assert S.typed(back) == S.typed(value)
    assert T.encode(back) == wire


@MANY
@given(value=S.encoded_values())
def test_decoded_values_re_encode_byte_exact(value: Any) -> None:
    """Widths chosen at every level (not the narrowest) come back: List/Map/Array/Described remember."""
    wire = T.encode(value)
    code, back, end = decode_item(wire)
    assert end == len(wire)
    assert S.typed(back) == S.typed(value)
    assert T.encode(back, prefer=code) == wire


def test_compact_forms_and_both_widths() -> None:
    assert T.encode(UInt(0)) == b"\x43" and T.encode(UInt(7)) == b"\x52\x07" and T.encode(UInt(256)) == b"\x70\x00\x00\x01\x00"
    assert T.encode(ULong(0)) == b"\x44" and T.encode(ULong(255)) == b"\x53\xff"
    assert T.encode(T.Int(-128)) == b"\x54\x80" and T.encode(T.Int(128)) == b"\x71\x00\x00\x00\x80"
    assert T.encode(5) == b"\x55\x05" and T.encode(1 << 63) == b"\x80" + (1 << 63).to_bytes(8, "big")
    assert T.encode(True) == b"\x41" and T.encode(False) == b"\x42" and T.encode(Encoded(True, "boolean")) == b"\x56\x01"
    assert T.encode("a" * 255)[:2] == b"\xa1\xff" and T.encode("a" * 256)[:5] == b"\xb1\x00\x00\x01\x00"
    assert T.encode(Symbol("s"))[:2] == b"\xa3\x01" and T.encode(b"")[:2] == b"\xa0\x00"
    assert T.encode([]) == b"\x45" and T.encode([None]) == b"\xc0\x02\x01\x40"
    assert T.encode([None] * 254)[:3] == b"\xc0\xff\xfe" and T.encode([None] * 255)[:1] == b"\xd0"
    assert T.encode({}) == b"\xc1\x01\x00" and T.encode(Encoded({}, "map32")) == b"\xd1" + U32.pack(4) + U32.pack(0)
    assert T.encode(Array([], "symbol")) == b"\xe0\x02\x00\xa3"
    assert T.encode(Array([UInt(1), UInt(300)], "uint")) == b"\xe0\x0a\x02\x70" + U32.pack(1) + U32.pack(300)
    assert T.encode(Array([UInt(1)], "smalluint")) == b"\xe0\x03\x01\x52\x01"
    assert T.encode(Array([True, False], "boolean")) == b"\xe0\x04\x02\x56\x01\x00"  # not the zero-width true/false
    assert T.encode(Array(["x" * 300], "string"))[:1] == b"\xf0"
    assert T.encode(Described(ULong(0x10), None)) == b"\x00\x53\x10\x40"
    assert T.encode(Array([[UInt(1)], []], "list")) == b"\xe0\x08\x02\xc0\x03\x01\x52\x01\x01\x00"


def test_type_system_covers_the_xml() -> None:
    xml = load()
    encodings = [e for t in xml.types.values() for e in t.encodings]
    assert sorted(e.code for e in encodings) == sorted(T.BY_CODE)
    assert len(T.ENCODINGS) == len(encodings), "encoding names are not unique"
    for e in encodings:
        enc = T.BY_CODE[e.code]
        assert (enc.type, enc.category, enc.width) == (e.type, e.category, e.width)
        # the high nibble of a code names its category and width (types 1.2)
        sub = e.code >> 4
        assert {4: ("fixed", 0), 5: ("fixed", 1), 6: ("fixed", 2), 7: ("fixed", 4), 8: ("fixed", 8), 9: ("fixed", 16),
                0xA: ("variable", 1), 0xB: ("variable", 4), 0xC: ("compound", 1), 0xD: ("compound", 4),
                0xE: ("array", 1), 0xF: ("array", 4)}[sub] == (e.category, e.width), e
    assert set(T.BY_TYPE) == {t.name for t in xml.types.values() if t.cls == "primitive"}
    for enc in SCALAR_ENCODINGS:  # every scalar encoding decodes to a Python class that encodes as its type
        zeros = bytes((enc.code,)) + bytes(enc.width)
        assert T.type_of(decode(zeros)) == enc.type, enc
    assert T.encoding("str8") is T.ENCODINGS["str8-utf8"] and T.encoding(0x52).name == "smalluint"
    assert T.encoding("char").code == 0x73 and T.encoding("float").code == 0x72 and T.encoding("double").code == 0x82
    with pytest.raises(EncodeError, match="no AMQP 1.0 encoding 'uint7'"):
        T.encoding("uint7")


@pytest.mark.parametrize("cls", S.described_types, ids=lambda c: c.NAME)
@SOME
@given(data=st.data())
def test_every_described_type_round_trips(cls: type, data: st.DataObject) -> None:
    value = data.draw(S.composite(cls), label="value")
    wire = value.encode()
    assert wire[:3] == b"\x00\x53" + bytes((int(cls.CODE),))
    back = dec(wire)
    assert type(back) is cls and back == value and S.typed(back) == S.typed(value)
    assert back.problems == []
    assert back.encode() == wire
    assert "\n" not in back.summary() and back.summary().startswith(cls.NAME + "(")


def test_generated_classes_follow_the_xml() -> None:
    xml = load()
    described = [t for t in xml.types.values() if t.descriptor_code is not None]
    assert [c.NAME for c in spec.DESCRIBED] == [t.name for t in described]
    for t, cls in zip(described, spec.DESCRIBED):
        assert int(cls.CODE) == t.descriptor_code and cls.DESCRIPTOR == t.descriptor_name
        assert spec.REGISTRY[cls.CODE] is cls and spec.REGISTRY[Symbol(t.descriptor_name)] is cls
        assert issubclass(cls, Composite if t.cls == "composite" else Restricted)
        if t.cls == "composite":
            assert [(f.name, f.type, f.mandatory, f.multiple, f.requires) for f in cls.FIELDS] == \
                [(f.name, f.type, f.mandatory, f.multiple, f.requires) for f in t.fields]
            assert cls().encode() == b"\x00\x53" + bytes((t.descriptor_code,)) + b"\x45"  # all trailing nulls omitted
    assert {c.NAME for c in spec.PERFORMATIVES} == {"open", "begin", "attach", "flow", "transfer", "disposition",
                                                    "detach", "end", "close"}
    assert [c.NAME for c in spec.SASL_FRAMES] == ["sasl-mechanisms", "sasl-init", "sasl-challenge", "sasl-response",
                                                  "sasl-outcome"]
    # defaults from the XML, typed, choice names resolved
    assert spec.Open.field("max-frame-size").default == UInt(4294967295)
    assert spec.Attach.field("snd-settle-mode").default == UByte(2) == spec.SenderSettleMode.MIXED
    assert spec.Source.field("expiry-policy").default == Symbol("session-end")
    assert spec.Header.field("priority").default == UByte(4)
    assert spec.Attach(name="l").value_of("rcv-settle-mode") == spec.ReceiverSettleMode.FIRST
    assert spec.AmqpError.NOT_FOUND == Symbol("amqp:not-found") and spec.Role.RECEIVER is True
    assert spec.SaslInit.field("initial-response").secret and not spec.SaslInit.field("hostname").secret
    assert spec.MIN_MAX_FRAME_SIZE == 512 and spec.PORT == 5672


def test_generated_modules_are_current(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["amqpspec.wire.amqp10.gen", "--check"])
    assert gen.main() == 0, capsys.readouterr().err


def test_plain_values_are_converted_to_the_field_types() -> None:
    o = spec.Open(container_id="c", max_frame_size=512, channel_max=7, idle_time_out=0,
                  offered_capabilities=["ANONYMOUS-RELAY"], properties={"product": "amqpspec"})
    back = dec(o.encode())
    assert S.typed(back.max_frame_size) == ("uint", 512) and S.typed(back.channel_max) == ("ushort", 7)
    assert back.idle_time_out == 0 and T.encode(UInt(0)) in o.encode()
    assert back.offered_capabilities == Array([Symbol("ANONYMOUS-RELAY")], "symbol")
    assert list(back.properties) == [Symbol("product")] and type(list(back.properties)[0]) is Symbol
    p = spec.Properties(message_id=7, to="q", content_type="text/plain")
    back = dec(p.encode())
    assert S.typed(back.message_id) == ("ulong", 7) and type(back.content_type) is Symbol and type(back.to) is str
    e = dec(spec.Error(condition="amqp:not-found").encode())
    assert type(e.condition) is Symbol
    with pytest.raises(EncodeError, match=r"open\.channel-max: 70000 does not fit a ushort"):
        spec.Open(container_id="c", channel_max=70000).encode()
    # typed values are sent as they are, even when the field wants another type
    back = dec(spec.Open(container_id="c", max_frame_size=T.Long(-1)).encode())
    assert back.problems == ["open.max-frame-size: expected uint, got long -1"]


def test_message_round_trip_and_section_order() -> None:
    msg = Message(header=spec.Header(durable=True), message_annotations={"x-opt-a": 1},
                  properties=spec.Properties(message_id="m1", subject="s"), application_properties={"k": "v"},
                  body=[spec.Data(b"one"), spec.Data(b"two")], footer={"x-f": b"sig"})
    wire = msg.encode()
    back = Message.decode(wire)
    assert back == msg and back.problems == [] and back.encode() == wire
    assert [s.NAME for s in back.received] == ["header", "message-annotations", "properties",
                                               "application-properties", "data", "data", "footer"]
    assert Message.decode(msg.bare()).received[0].NAME == "properties"
    assert "message(header(durable=true)" in back.summary()
    assert Message(body="text").sections() == [spec.AmqpValue("text")]
    assert Message(body=b"raw").sections() == [spec.Data(b"raw")]


@FEW
@given(msg=S.message())
def test_messages_round_trip(msg: Message) -> None:
    wire = msg.encode()
    back = Message.decode(wire)
    assert back == msg and back.problems == [] and back.encode() == wire


def test_wrong_section_orders_and_duplicates_are_producible_and_reported() -> None:
    msg = Message(header=spec.Header(), properties=spec.Properties(subject="s"), body=spec.AmqpValue(1))
    back = Message.decode(msg.encode(order=["properties", "header", "amqp-value"]))
    assert back.problems == ["section #2: header after properties (order: " + ", ".join(
        c.NAME for c in spec.SECTIONS) + ")"]
    back = Message.decode(msg.encode(order=["header", "header", "amqp-value", "amqp-value"]))
    assert "section #2: a second header section" in back.problems
    assert any("amqp-value after amqp-value" in p for p in back.problems)
    back = Message.decode(encode_sections([spec.Data(b"x"), spec.AmqpValue(1), UInt(3)]))
    assert any("amqp-value after data" in p for p in back.problems)
    assert "section #3 is a uint, not a message section" in back.problems
    assert Message.decode(encode_sections([spec.Header()])).problems == ["no body section (data, amqp-sequence or amqp-value)"]
    with pytest.raises(EncodeError, match="no footer section"):
        msg.encode(order=["footer"])
    with pytest.raises(DecodeError, match=r"message section #2: .*str8-utf8"):
        Message.decode(spec.AmqpValue(1).encode() + b"\xa1\x09ab")


# ============================================================================ 2. frames and the reader

@FEW
@given(f=S.frames())
def test_frames_round_trip(f: Frame) -> None:
    wire = f.encode()
    assert U32.unpack_from(wire)[0] == len(wire) and wire[4] == 2
    (back,) = read_all(wire, expect_header=False)
    assert back == f and back.encode() == wire and back.problems() == []
    assert "\n" not in back.summary()


def test_frame_layout_and_summaries() -> None:
    f = AMQPFrame(0, spec.Open(container_id="x", max_frame_size=4096))
    wire = f.encode()
    assert wire[:8] == U32.pack(len(wire)) + b"\x02\x00\x00\x00" and wire[8:11] == b"\x00\x53\x10"
    assert f.summary() == "ch=0 open(container-id='x', max-frame-size=4096)"
    init = frame(spec.SaslInit(mechanism="PLAIN", initial_response=b"\x00user\x00s3cret!", hostname="h"))
    assert isinstance(init, SASLFrame) and init.encode()[5] == 1
    assert init.summary() == "sasl sasl-init(mechanism=PLAIN, initial-response=<redacted 13 octets>, hostname='h')"
    masked = init.masked()
    assert masked is not None and b"s3cret" not in masked.encode() and len(masked.encode()) == len(init.encode())
    assert b"s3cret" not in repr(init).encode() and frame(spec.SaslOutcome(code=0)).masked() is None
    (back,) = read_all(init.encode(), expect_header=False)
    assert "s3cret" not in back.summary() and "s3cret" not in repr(back)
    assert EmptyFrame(3).encode() == b"\x00\x00\x00\x08\x02\x00\x00\x03"
    assert read_all(EmptyFrame(3).encode(), expect_header=False) == [EmptyFrame(3)]
    t = AMQPFrame(1, spec.Transfer(handle=0, delivery_id=0, delivery_tag=b"t"), Message(body="hi").encode())
    assert t.summary().startswith("ch=1 transfer(handle=0, delivery-id=0, delivery-tag=b't') +payload 7 octets: 005377a1026869")
    assert Message.decode(read_all(t.encode(), expect_header=False)[0].payload) == Message(body="hi")
    assert describe(b"\x01\x02") == "raw 2 octets: b'\\x01\\x02'"
    assert ProtocolHeader.sasl().summary() == "protocol-header AMQP 3 1.0.0 (sasl)"


def test_protocol_headers() -> None:
    assert AMQP_HEADER == b"AMQP\x00\x01\x00\x00" and SASL_HEADER == b"AMQP\x03\x01\x00\x00"
    assert TLS_HEADER == b"AMQP\x02\x01\x00\x00"
    assert ProtocolHeader.of(0, 0, 9, 1).encode() == b"AMQP\x00\x00\x09\x01"
    assert ProtocolHeader.sasl().protocol_id == 3 and ProtocolHeader.amqp().version == (1, 0, 0)
    assert not ProtocolHeader(b"HTTP/1.1").well_formed and ProtocolHeader(b"AMQ").protocol_id is None


def test_headers_are_recognised_at_the_start_and_after_sasl_outcome() -> None:
    outcome = frame(spec.SaslOutcome(code=spec.SaslCode.OK))
    mechs = frame(spec.SaslMechanisms(sasl_server_mechanisms=["PLAIN"]))
    opened = AMQPFrame(0, spec.Open(container_id="broker"))
    stream = SASL_HEADER + mechs.encode() + outcome.encode() + AMQP_HEADER + opened.encode()
    assert read_all(stream) == [ProtocolHeader(SASL_HEADER), mechs, outcome, ProtocolHeader(AMQP_HEADER), opened]
    reader = FrameReader()
    reader.feed(b"AM")
    assert reader.next() is None
    reader.feed(b"QP\x03\x01\x00")
    assert reader.next() is None
    reader.feed(b"\x00" + outcome.encode() + b"AMQ")
    assert [reader.next(), reader.next(), reader.next()] == [ProtocolHeader(SASL_HEADER), outcome, None]
    reader.feed(b"P\x00\x01\x00\x00")
    assert reader.next() == ProtocolHeader(AMQP_HEADER)
    # a header anywhere else is a frame header with an absurd size, and says so
    with pytest.raises(FrameError, match="a protocol header where a frame was expected"):
        read_all(opened.encode() + AMQP_HEADER)
    with pytest.raises(FrameError):
        read_all(AMQP_HEADER, expect_header=False)
    reader = FrameReader(expect_header=False)
    reader.expect_header()  # e.g. after TLS is established
    reader.feed(AMQP_HEADER)
    assert reader.next() == ProtocolHeader(AMQP_HEADER)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(stream=S.frame_stream(max_frames=3))
def test_splitting_a_stream_anywhere_gives_the_same_items(stream: tuple[list[Any], bytes]) -> None:
    items, data = stream
    assert read_all(data) == items
    for i in range(0, len(data) + 1, max(1, len(data) // 40)):
        reader = FrameReader()
        reader.feed(data[:i])
        got = list(reader)
        reader.feed(data[i:])
        got += list(reader)
        assert got == items, f"split at {i}"


def test_transfer_frames_split_a_large_message() -> None:
    payload = Message(body=b"x" * 3000).encode()
    t = spec.Transfer(handle=0, delivery_id=5, delivery_tag=b"d", message_format=0)
    frames = transfer_frames(1, t, payload, 512)
    assert all(len(f.encode()) <= 512 for f in frames) and len(frames) > 5
    assert b"".join(f.payload for f in frames) == payload
    assert [f.performative.more for f in frames[:-1]] == [True] * (len(frames) - 1) and not frames[-1].performative.more
    got = read_all(b"".join(f.encode() for f in frames), expect_header=False)
    assert Message.decode(b"".join(f.payload for f in got)).body == spec.Data(b"x" * 3000)
    assert transfer_frames(1, t, b"ab", 512) == [AMQPFrame(1, t, b"ab")]


# ============================================================================ 3. malformation is producible

def test_wrappers_write_what_they_say() -> None:
    assert T.encode(Raw(b"\x70\x01")) == b"\x70\x01"
    assert T.encode(Encoded(5, "uint")) == b"\x70" + U32.pack(5)
    assert T.encode(Encoded("s", "str32")) == b"\xb1" + U32.pack(1) + b"s"
    assert T.encode(Encoded(b"\xff\xfe", "str8")) == b"\xa1\x02\xff\xfe"      # invalid UTF-8 on purpose
    assert T.encode(Encoded(b"\xe9", "sym8")) == b"\xa3\x01\xe9"              # a non-ASCII symbol on purpose
    assert T.encode(Sized("abc", length=200)) == b"\xa1\xc8abc"
    assert T.encode(Sized("abc", length=300)) == b"\xb1" + U32.pack(300) + b"abc"  # the lie picks the width
    assert T.encode(Counted([None], count=9)) == b"\xc0\x02\x09\x40"
    assert T.encode(Sized(Counted([None], count=9), length=1)) == b"\xc0\x01\x09\x40"
    assert T.encode(Counted({}, count=3)) == b"\xc1\x01\x03"
    assert T.encode(Counted(Array([UInt(1)], "uint"), count=1 << 31)) == b"\xf0" + U32.pack(6) + U32.pack(1 << 31) + \
        b"\x52\x01"
    assert T.encode(Retyped(UInt(5), 0x70)) == b"\x70\x05"                     # 0x70 with one octet
    assert T.encode(Retyped("x", 0x01)) == b"\x01\x01x"                       # an undefined constructor
    assert T.encode([Raw(b"\xff")]) == b"\xc0\x02\x01\xff"
    assert T.encode(Encoded([], "list8")) == b"\xc0\x01\x00" and T.encode(Encoded([], "list32")) == b"\xd0" + U32.pack(4) + U32.pack(0)
    assert T.encode(Pairs([(Symbol("k"), 1), (Symbol("k"), 2)])) == b"\xc1\x0b\x04\xa3\x01k\x55\x01\xa3\x01k\x55\x02"


def test_wrappers_refuse_what_cannot_be_written() -> None:
    cases = {
        "uint0 .* can only stand for UInt\\(0\\)": Encoded(5, "uint0"),
        "300 does not fit smalluint": Encoded(300, "smalluint"),
        "a str value cannot be written as uint": Encoded("x", "uint"),
        "symbol .* is not 7-bit ASCII": Symbol("\u00e9"),
        "has no UTF-8 encoding": "\ud800",
        "size 300 does not fit the 1-octet size of str8-utf8": Encoded(Sized("x", length=300), "str8"),
        "count 300 do not fit the 1-octet fields of list8": Encoded(Counted([], count=300), "list8"),
        "no AMQP 1.0 type for a object": object(),
        "nested deeper than 64": functools.reduce(lambda v, _: [v], range(70), []),
    }
    for pattern, value in cases.items():
        with pytest.raises(EncodeError, match=pattern):
            T.encode(value)


def test_composite_overrides() -> None:
    o = spec.Open(container_id="x")
    assert o.encode() == b"\x00\x53\x10\xc0\x04\x01\xa1\x01x"
    assert o.override(descriptor=Symbol("amqp:open:list")).encode() == b"\x00\xa3\x0eamqp:open:list\xc0\x04\x01\xa1\x01x"
    assert o.override(descriptor=ULong(0x99)).encode()[:3] == b"\x00\x53\x99"
    assert o.override(encoding="list32").encode() == b"\x00\x53\x10\xd0" + U32.pack(7) + U32.pack(1) + b"\xa1\x01x"
    assert o.override(nulls=True).encode()[3:6] == b"\xc0\x0d\x0a"          # ten fields, nine of them null
    assert o.override(fields=12).encode()[3:6] == b"\xc0\x0f\x0c"
    assert o.override(count=5).encode() == b"\x00\x53\x10\xc0\x04\x05\xa1\x01x"
    assert o.override(size=200).encode() == b"\x00\x53\x10\xc0\xc8\x01\xa1\x01x"
    assert o.override(body={"container-id": "x"}).encode()[3] == 0xc1
    assert o.override(body=Raw(b"\x45")).encode() == b"\x00\x53\x10\x45"
    assert o.replace(extra=[UInt(1)]).encode() == b"\x00\x53\x10\xc0\x0f\x0b\xa1\x01x" + b"\x40" * 9 + b"\x52\x01"
    assert spec.Open(container_id=UInt(3)).encode() == b"\x00\x53\x10\xc0\x03\x01\x52\x03"  # wrong type, on purpose
    # wrappers in fields: lying sizes and counts, chosen widths, raw octets
    assert spec.Open(container_id=Sized("x", length=50)).encode() == b"\x00\x53\x10\xc0\x04\x01\xa1\x32x"
    assert spec.Open(container_id="x", hostname=Raw(b"\x01")).encode()[-2:] == b"x\x01"
    assert spec.Open(container_id="x", max_frame_size=Encoded(512, "uint")).encode()[-5:] == b"\x70\x00\x00\x02\x00"
    caps = spec.Open(container_id="x", offered_capabilities=Counted(["A"], count=5)).encode()
    assert caps.endswith(b"\xe0\x04\x05\xa3\x01A")  # still an array of symbol, with a count that lies
    back = dec(spec.SaslInit(mechanism="PLAIN", initial_response="\x00u\x00pw-s3cret").encode())
    assert back.problems == ["sasl-init.initial-response: expected binary, got string <redacted 12 octets>"]
    assert "[descriptor=amqp:open:list, list32]" in o.override(descriptor=Symbol("amqp:open:list"), encoding="list32").summary()
    with pytest.raises(TypeError, match="unexpected"):
        o.override(bogus=1)


def test_decoded_wrong_values_are_problems_not_errors() -> None:
    cases = {
        spec.Open(container_id="x", max_frame_size="big"): ["open.max-frame-size: expected uint, got string 'big'"],
        spec.Open(): ["open.container-id: mandatory field is null"],
        spec.Attach(name="l", handle=0, role=UByte(1)): ["attach.role: expected boolean, got ubyte 1"],
        spec.Attach(name="l", handle=0, role=True, snd_settle_mode=UByte(7)):
            ["attach.snd-settle-mode: 7 is not one of the sender-settle-mode values (unsettled, settled, mixed)"],
        spec.SaslMechanisms(sasl_server_mechanisms=Array([], "symbol")):
            ["sasl-mechanisms.sasl-server-mechanisms: mandatory multiple field holds an empty array (at least one value is required)"],
        spec.Transfer(handle=0, state=spec.Error(condition="x")):
            ["transfer.state: expected received/accepted/rejected/released/modified/declared/transactional-state, got error error(condition=x)"],
        spec.Open(container_id="x", offered_capabilities=Array([UInt(1)], "uint")):
            ["open.offered-capabilities: expected an array of symbol, got an array of uint"],
        spec.Close(extra=[1, 2]): ["close: 2 list element(s) beyond its 1 fields"],
    }
    for value, problems in cases.items():
        wire = value.encode()
        back = dec(wire)
        assert back.problems == problems, back.problems
        assert back.encode() == wire
    # a described value that is not a list keeps its body and re-encodes exactly
    back = dec(b"\x00\x53\x10\xc1\x01\x00")
    assert isinstance(back, spec.Open) and back.problems[0] == "open: the described value is a map, not a list"
    assert back.encode() == b"\x00\x53\x10\xc1\x01\x00"
    # a descriptor the spec does not define is a plain described value; '*' fields accept it
    back = dec(spec.Transfer(handle=0, state=Described(Symbol("x:ext"), [])).encode())
    assert back.problems == [] and back.state == Described(Symbol("x:ext"), [])
    # symbol descriptors and trailing nulls are remembered
    wire = b"\x00\xa3\x0eamqp:open:list\xc0\x06\x03\xa1\x01x\x40\x40"
    back = dec(wire)
    assert back == spec.Open(container_id="x") and back.encode() == wire
    # a ulong descriptor in a long's clothing is not a descriptor of the spec
    assert isinstance(dec(b"\x00\x55\x10\x45"), Described)


def test_frame_overrides() -> None:
    good = AMQPFrame(0, spec.Open(container_id="x"))
    wire = good.encode()
    assert AMQPFrame(0, spec.Open(container_id="x"), size=5).encode() == U32.pack(5) + wire[4:]
    assert AMQPFrame(0, spec.Open(container_id="x"), doff=1).encode()[4] == 1
    assert AMQPFrame(0, spec.Open(container_id="x"), frame_type=7).encode()[5] == 7
    ext = AMQPFrame(0, spec.Open(container_id="x"), extended=b"abc").encode()
    assert ext[4] == 3 and ext[8:12] == b"abc\x00" and U32.unpack_from(ext)[0] == len(ext)
    (back,) = read_all(ext, expect_header=False)
    assert back == AMQPFrame(0, spec.Open(container_id="x"), extended=b"abc\x00") and back.encode() == ext
    raw = AMQPFrame(0, spec.Open(container_id="x"), doff=4, extended=b"abc").encode()
    assert raw[8:11] == b"abc" and raw[11:14] == b"\x00\x53\x10"  # written as given: body misaligned
    assert AMQPFrame(65535, None).encode() == b"\x00\x00\x00\x08\x02\x00\xff\xff"  # no body at all
    assert AMQPFrame(1, Raw(b"\x40")).encode() == b"\x00\x00\x00\x09\x02\x00\x00\x01\x40"  # a null body
    assert RawFrame(2, type=9, data=b"zz").encode() == b"\x00\x00\x00\x0a\x02\x09\x00\x02zz"
    assert read_all(RawFrame(2, type=9, data=b"zz").encode(), expect_header=False) == [RawFrame(2, type=9, data=b"zz")]
    (back,) = read_all(AMQPFrame(0, spec.Open(container_id="x"), frame_type=1).encode(), expect_header=False)
    assert isinstance(back, SASLFrame) and "not a SASL frame body" in back.problems()[0]
    (back,) = read_all(AMQPFrame(0, spec.Open(container_id="x"), b"zz").encode(), expect_header=False)
    assert back.problems() == ["2 octets after a open: only a transfer carries a payload"]
    (back,) = read_all(SASLFrame(spec.SaslOutcome(code=0), trailing=b"!").encode(), expect_header=False)
    assert back.problems() == ["1 octets after the SASL frame body"]


@pytest.mark.parametrize("header,message", [
    (U32.pack(5) + b"\x02\x00\x00\x00", "frame size 5 is smaller than the 8-octet frame header"),
    (U32.pack(0), "frame size 0 is smaller"),
    (U32.pack(8) + b"\x01\x00\x00\x00", "frame DOFF 1 is less than 2"),
    (U32.pack(8) + b"\x00\x00\x00\x00", "frame DOFF 0 is less than 2"),
    (U32.pack(12) + b"\x04\x00\x00\x00", "frame DOFF 4 puts the body at octet 16, past the end of the 12-octet frame"),
    (U32.pack(1 << 31) + b"\x02", "frame announces 2147483648 octets, more than the 1048576 accepted"),
])
def test_broken_frame_headers_are_clear_frame_errors(header: bytes, message: str) -> None:
    reader = FrameReader(expect_header=False)
    reader.feed(header + b"\x00" * 8)
    with pytest.raises(FrameError, match=message):
        reader.next()
    with pytest.raises(FrameError):  # and stay refused
        reader.next()


def test_malformed_bodies_are_kept_verbatim_with_the_field_named() -> None:
    body = spec.Open(container_id="x", max_frame_size=UInt(70000)).encode()
    (back,) = read_all(AMQPFrame(0, Raw(body[:-2])).encode(), expect_header=False)
    assert isinstance(back, MalformedFrame)
    assert back.error.startswith("open: list8 (0xc0) claims")
    broken = body[:-5] + b"\xa1\x09abc"  # max-frame-size rewritten into a str8 that claims 9 octets
    (back,) = read_all(AMQPFrame(0, Raw(broken)).encode(), expect_header=False)
    assert back.error.startswith("open.max-frame-size: str8-utf8 (0xa1) claims 9 octets")
    assert back.encode() == AMQPFrame(0, Raw(broken)).encode()
    assert "MALFORMED amqp frame" in back.summary()


# ============================================================================ 4. bounded, clear decoding

def _fast_and_small(fn: Any) -> str:
    """The error of ``fn``, which must fail after few Python calls and little memory."""
    calls, peak, error = cost(fn, DecodeError)
    assert calls < 200 and peak < 256 * 1024, (calls, peak)
    return str(error)


@pytest.mark.parametrize("element", [0x40, 0x41, 0x42, 0x43, 0x44, 0x45])
def test_zero_width_array_of_2_31_elements_costs_nothing(element: int) -> None:
    wire = b"\xf0" + U32.pack(5) + U32.pack(1 << 31) + bytes((element,))
    msg = _fast_and_small(lambda: decode(wire))
    assert f"claims 2147483648 elements of zero-width {T.BY_CODE[element].name}" in msg
    described = b"\xf0" + U32.pack(8) + U32.pack(1 << 31) + b"\x00\x53\x10" + bytes((element,))
    assert "2147483648 elements" in _fast_and_small(lambda: decode(described))
    small = b"\xe0\x02\x05" + bytes((element,))
    assert len(decode(small)) == 5 and T.encode(decode(small)) == small  # within the cap: fine
    assert len(T.Decoder(max_zero_width=1 << 20).decode(b"\xf0" + U32.pack(5) + U32.pack(1 << 20) + b"\x40")) == 1 << 20


@pytest.mark.parametrize("wire,message", [
    (b"\xd0" + U32.pack(8) + U32.pack(1 << 31) + b"\x40" * 4, "list32 (0xd0) claims 2147483648 elements in 4 octets"),
    (b"\xd1" + U32.pack(8) + U32.pack(1 << 31) + b"\x40" * 4, "map32 (0xd1) claims 2147483648 elements in 4 octets"),
    (b"\xf0" + U32.pack(5) + U32.pack(1 << 31) + b"\x70", "claims 2147483648 uint elements of at least 4 octets, 0 left"),
    (b"\xf0" + U32.pack(5) + U32.pack(1 << 31) + b"\xb1", "claims 2147483648 str32-utf8 elements of at least 4 octets"),
    (b"\xf0" + U32.pack(5) + U32.pack(1 << 31) + b"\xd0", "claims 2147483648 list32 elements of at least 8 octets"),
    (b"\xd0" + U32.pack(1 << 31) + U32.pack(1), "list32 (0xd0) claims 2147483648 octets, 4 left"),
    (b"\xb0" + U32.pack(0xFFFFFFFF) + b"ab", "vbin32 (0xb0) claims 4294967295 octets, 2 left"),
    (b"\xa1\x10ab", "str8-utf8 (0xa1) claims 16 octets, 2 left"),
    (b"\xc1\x04\x03\x40\x40\x40", "map8 (0xc1) count 3 is odd"),
    (b"\xc0\x05\x01\x40\x40\x40\x40", "list8 (0xc0) ends 3 octets after its 1 elements"),
    (b"\xc0\x00", "list8 (0xc0) size 0 is smaller than its 1-octet count"),
    (b"\xe0\x01\x00", "array8 (0xe0) has no element constructor"),
    (b"\xe0\x03\x01\x00\x40", "array8 (0xe0) has no element constructor after its descriptor"),
    (b"\x70\x00\x01", "uint (0x70) needs 4 octets, 2 left"),
    (b"\x56\x02", "octet 0x02 is neither 0x00 (false) nor 0x01 (true)"),
    (b"\x73\x00\x11\x00\x00", "char (0x73) 0x00110000 is not a Unicode code point"),
    (b"\x5e\x00", "constructor 0x5e is not defined (a fixed-width, 1 octet format code"),
    (b"\xc0\x03\x01\x01\x00", "[0]: constructor 0x01 is not defined"),
    (b"\x00", "descriptor: missing constructor"),
    (b"", "missing constructor"),
    (b"\x40\x40", "1 octets after the value"),
])
def test_lying_sizes_and_counts_fail_fast_and_clearly(wire: bytes, message: str) -> None:
    assert message in _fast_and_small(lambda: decode(wire))


def _nested(depth: int, kind: str) -> bytes:
    """``depth`` levels of list32 / map32 / array32 / described values around a null."""
    data = b"\x40"
    for _ in range(depth):
        if kind == "list":
            data = b"\xd0" + U32.pack(len(data) + 4) + U32.pack(1) + data
        elif kind == "map":
            data = b"\xd1" + U32.pack(len(data) + 5) + U32.pack(2) + b"\x40" + data
        elif kind == "described":
            data = b"\x00\x53\x77" + data  # amqp-value of amqp-value of ...
        elif kind == "descriptor":
            data = b"\x00" + data + b"\x40"
        else:  # array of one array of ... (element constructor: array32)
            inner = data[1:] if data[0] == 0xF0 else None
            data = b"\xf0" + U32.pack(4 + 1 + (len(inner) if inner else 0)) + U32.pack(1 if inner else 0) + (
                b"\xf0" + inner if inner else b"\x40")
    return data


@pytest.mark.parametrize("kind", ["list", "map", "described", "descriptor", "array"])
def test_nesting_10000_deep_fails_fast(kind: str) -> None:
    ok = _nested(T.MAX_DEPTH // 2 - 1, kind)
    assert T.encode(decode(ok, spec.REGISTRY)) == ok
    deep = _nested(10_000, kind)
    calls, _, error = cost(lambda: decode(deep, spec.REGISTRY), DecodeError)
    assert f"nested deeper than {T.MAX_DEPTH}" in str(error)  # not RecursionError
    assert calls < 20 * T.MAX_DEPTH, calls                     # stopped at the limit, not 10,000 levels down
    (back,) = read_all(AMQPFrame(0, Raw(_nested(10_000, kind))).encode(), expect_header=False)
    assert isinstance(back, MalformedFrame) and "nested deeper" in back.error and len(back.error) < 400


def test_huge_frame_is_refused_after_four_octets() -> None:
    reader = FrameReader()
    reader.feed(b"\x7f\xff")
    assert reader.next() is None
    reader.feed(b"\xff\xff")
    tracemalloc.start()
    try:
        with pytest.raises(FrameError, match="announces 2147483647 octets, more than the 1048576 accepted"):
            reader.next()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 and reader.pending == 4
    frame_ = AMQPFrame(0, spec.Open(container_id="x" * 100))
    size = len(frame_.encode())
    assert read_all(frame_.encode(), max_frame_size=size, expect_header=False) == [frame_]
    with pytest.raises(FrameError, match=f"more than the {size - 1} accepted"):
        read_all(frame_.encode(), max_frame_size=size - 1, expect_header=False)


def _feed_in_chunks(data: bytes, sizes: list[int], **kwargs: Any) -> tuple[list[Any], FrameReader]:
    reader = FrameReader(**kwargs)
    got: list[Any] = []
    pos = 0
    for size in itertools.cycle(sizes or [max(len(data), 1)]):
        if pos >= len(data):
            break
        reader.feed(data[pos:pos + size])
        pos += size
        got += list(reader)
    return got, reader


@MANY
@given(data=st.binary(max_size=2048), sizes=st.lists(st.integers(1, 300), max_size=6),
       header=st.sampled_from([b"", AMQP_HEADER, SASL_HEADER]))
def test_garbage_streams_raise_only_frame_errors(data: bytes, sizes: list[int], header: bytes) -> None:
    try:
        got, reader = _feed_in_chunks(header + data, sizes, max_frame_size=1024)
    except FrameError:
        return
    assert all(isinstance(x, (Frame, ProtocolHeader)) for x in got)
    assert len(got) <= len(header + data) // 8 + 1
    for item in got:
        item.summary()
        if isinstance(item, Frame):
            item.problems()


@MANY
@given(body=st.one_of(st.binary(max_size=300), st.tuples(
    st.sampled_from([c.CODE for c in spec.DESCRIBED]).map(lambda c: b"\x00\x53" + bytes((int(c),))),
    st.binary(max_size=200)).map(b"".join)))
def test_any_body_decodes_or_is_malformed(body: bytes) -> None:
    for ftype in (0, 1):
        got = decode_body(ftype, 0, body)
        assert isinstance(got, Frame)
        got.summary()
        got.problems()
        if not isinstance(got, MalformedFrame) and body:
            assert got.encode()[8:] == body, "a decoded body did not re-encode to its octets"


@FEW
@given(stream=S.frame_stream(max_frames=3), data=st.data())
def test_mutated_valid_streams_raise_only_frame_errors(stream: tuple[list[Any], bytes], data: st.DataObject) -> None:
    _, raw = stream
    if not raw:
        return
    mutated = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        i = data.draw(st.integers(0, len(mutated) - 1), label="at")
        mutated[i] = data.draw(st.integers(0, 255), label="octet")
    try:
        got, _ = _feed_in_chunks(bytes(mutated), [data.draw(st.integers(1, 64), label="chunk")], max_frame_size=1 << 16)
    except FrameError:
        return
    for item in got:
        item.summary()


@FEW
@given(value=S.values(), data=st.data())
def test_truncated_values_fail_with_decode_errors(value: Any, data: st.DataObject) -> None:
    wire = T.encode(value)
    cut = data.draw(st.integers(0, len(wire) - 1), label="cut")
    with pytest.raises(DecodeError):
        decode(wire[:cut], spec.REGISTRY)


def test_decode_frame_and_uuid_and_timestamp_helpers() -> None:
    f = AMQPFrame(2, spec.End())
    assert decode_frame(f.encode()) == f
    with pytest.raises(FrameError, match="not exactly one frame"):
        decode_frame(f.encode() + b"\x00")
    u = uuid.UUID(int=7)
    assert decode(T.encode(u)) == u
    ts = T.Timestamp(1_700_000_000_123)
    assert T.Timestamp.from_datetime(ts.datetime()) == ts
    assert decode(T.encode(Map({T.Key([1]): 2}))) == {T.Key([T.Long(1)]): 2}
    pairs = T.encode(Pairs([(Symbol("k"), 1), (Symbol("k"), 2)]))
    dup = decode(pairs)
    assert dup == {Symbol("k"): 2} and dup.duplicates == [Symbol("k")]
    assert T.encode(dup) == pairs  # both pairs again, while unchanged
    dup[Symbol("k")] = 3
    assert T.encode(dup) == b"\xc1\x06\x02\xa3\x01k\x55\x03"
    for nan in (b"\x72\x7f\x80\x00\x01", b"\x82\x7f\xf0" + bytes(5) + b"\x01"):  # signalling NaNs keep their bits
        assert T.encode(decode(nan)) == nan and T.encode([decode(nan)]) == T.encode([Raw(nan)])
        assert decode_body(0, 0, nan).encode()[8:] == nan
    assert isinstance(decode(T.encode([[1]])), List) and isinstance(decode(T.encode({1: 2})), Map)
