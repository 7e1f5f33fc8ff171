"""The AMQP 0-9-1 wire codec: round trips, producible malformations, bounded decoding.

No broker involved. Values come from ``strategies_amqp091``, which derives them from the
codec's own metadata (``spec.METHODS``, ``Field.type``, ``Dialect.codes``), so a method or
type code added to the XML or a dialect is covered without touching this file.

Known, accepted lossiness of "decode then re-encode" (not exercised as round trips here):
a boolean field value other than 0x00/0x01 re-encodes as 0x01; a bit octet with unused
high bits set re-encodes with them clear; a float32 signalling NaN comes back quieted
(CPython's float32 packing); a table with a duplicated field name keeps the last value.
The exact received octets are always kept by the reader (``FrameReader.last_raw``).
"""
from __future__ import annotations

import functools
import itertools
import re
import struct
import sys
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpspec.wire.amqp091 import (
    FRAME_END, PROTOCOL_HEADER, BodyFrame, FieldArray, FieldTable, FieldValue, FrameReader,
    HeaderFrame, HeartbeatFrame, MalformedFrame, MethodFrame, ProtocolHeader, RawFrame, Raw,
    Sized, UnknownMethod, decode_array, decode_frame, decode_method, decode_table, encode_array,
    encode_table, gen, spec,
)
from amqpspec.wire.amqp091.base import (
    encode_field, generic_decode_args, generic_decode_properties, generic_encode_args,
    generic_encode_properties,
)
from amqpspec.wire.amqp091.frames import Frame
from amqpspec.wire.amqp091.table import MAX_DEPTH, RABBITMQ, SPEC, Dialect
from amqpspec.wire.errors import DecodeError, EncodeError, FrameError

from tests.support.cost import cost
from . import strategies_amqp091 as S

ALL_METHODS = sorted(spec.METHODS.values(), key=lambda c: (c.CLASS_ID, c.METHOD_ID))
DIALECTS = [SPEC, RABBITMQ]
U32 = struct.Struct(">I")

# The whole tests/unit run should stay well under a minute on 2 cores: example counts are
# moderate, and the fuzzer (not these tests) is where long runs belong.
SOME = settings(max_examples=8, deadline=None)  # per-class runs: 64 classes x 8
FEW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BIG = settings(MANY, max_examples=200)


# Strategies are built once: rebuilding a recursive strategy for every example costs more
# than the example itself.
@functools.cache
def strategy(name: str, *args: Any) -> st.SearchStrategy[Any]:
    dialect = {d.name: d for d in DIALECTS}[args[-1]] if args else SPEC
    return getattr(S, name)(*args[:-1], dialect)


def read_all(data: bytes, **kwargs: Any) -> list[Any]:
    reader = FrameReader(**kwargs)
    reader.feed(data)
    items = list(reader)
    assert reader.pending == 0, "bytes of a complete stream left unread"
    return items


def payload_of(wire: bytes) -> bytes:
    return wire[7:-1]


def field_names(cls: Any) -> str:
    return "|".join(re.escape(f.name) for f in cls.FIELDS)


# ============================================================================ 1. round trips

@pytest.mark.parametrize("cls", ALL_METHODS, ids=lambda c: c.NAME)
@SOME
@given(data=st.data())
def test_method_round_trip(cls: type, data: st.DataObject) -> None:
    dialect = data.draw(st.sampled_from(DIALECTS), label="dialect")
    method = data.draw(strategy("method", cls, dialect.name), label="method")
    channel = data.draw(S.channels(), label="channel")

    args = method.encode_args(dialect)
    assert args == generic_encode_args(method, dialect), "fast and generic encoders disagree"

    frame = MethodFrame(channel, method)
    wire = frame.encode(dialect)
    assert wire[0] == spec.FRAME_METHOD and wire[-1] == FRAME_END
    assert U32.unpack_from(wire, 3)[0] == 4 + len(args)
    assert read_all(wire, dialect=dialect) == [frame]

    payload = payload_of(wire)
    fast, end = cls.decode_args(payload, 4, dialect)
    generic, gend = generic_decode_args(cls, payload, 4, dialect)
    assert fast == generic == method and end == gend == len(payload)
    assert fast.encode(dialect) == payload, "re-encoding the decoded method changed its bytes"


@settings(MANY, max_examples=60)
@given(data=st.data())
def test_content_header_round_trip(data: st.DataObject) -> None:
    dialect = data.draw(st.sampled_from(DIALECTS), label="dialect")
    frame = data.draw(strategy("header_frame", dialect.name), label="frame")
    props = frame.properties
    assert props is not None

    fast = props.encode(dialect)
    assert fast == generic_encode_properties(props, dialect, None), "fast and generic encoders disagree"
    flags = struct.unpack_from(">H", fast)[0]
    for i, f in enumerate(props.FIELDS):
        assert bool(flags & (1 << (15 - i))) == (getattr(props, f.attr) is not None), f.name

    wire = frame.encode(dialect)
    assert read_all(wire, dialect=dialect) == [frame]
    payload = payload_of(wire)
    assert generic_decode_properties(type(props), payload, 12, dialect) == (props, len(payload))
    assert type(props).decode(payload, 12, dialect) == (props, len(payload))


def test_all_properties_absent_is_one_zero_flags_word() -> None:
    assert spec.BasicProperties().encode() == b"\x00\x00"
    frame = HeaderFrame(1, 60, 0, spec.BasicProperties())
    assert frame.encode() == b"\x02\x00\x01\x00\x00\x00\x0e" + b"\x00\x3c\x00\x00" + bytes(8) + b"\x00\x00\xce"


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@MANY
@given(data=st.data())
def test_field_table_round_trip_is_byte_exact(dialect: Dialect, data: st.DataObject) -> None:
    table = data.draw(strategy("field_table", dialect.name), label="table")
    raw = encode_table(table, dialect)
    decoded, end = decode_table(raw, 0, dialect)
    assert end == len(raw)
    assert decoded == table and decoded.codes == table.codes
    assert encode_table(decoded, dialect) == raw, "remembered type codes did not reproduce the bytes"
    # at an offset inside a bigger unit, and as plain dicts (codes inferred: same values back)
    assert decode_table(b"xy" + raw + b"z", 2, dialect) == (table, 2 + len(raw))


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@MANY
@given(data=st.data())
def test_field_array_round_trip_is_byte_exact(dialect: Dialect, data: st.DataObject) -> None:
    arr = data.draw(strategy("field_array", dialect.name), label="array")
    raw = encode_array(arr, dialect)
    decoded, end = decode_array(raw, 0, dialect)
    assert end == len(raw)
    assert decoded == arr and decoded.codes == arr.codes
    assert encode_array(decoded, dialect) == raw


# one representative decoded value per value kind; the codes come from the dialect itself
_KIND_SAMPLE: dict[str, Any] = {
    "bool": True, "int8": -2, "uint8": 200, "int16": -300, "uint16": 60000, "int32": -70000,
    "uint32": 3_000_000_000, "int64": -(1 << 40), "uint64": (1 << 64) - 1, "float32": 1.5,
    "float64": -2.25, "timestamp": 1_700_000_000, "shortstr": "caf\u00e9", "longstr": "long \u00e9",
    "bytes": b"\x00\xff", "void": None,
}


def _every_code_table(dialect: Dialect) -> FieldTable:
    table = FieldTable()
    for code, kind in sorted(dialect.codes.items()):
        if kind == "decimal":
            value: Any = S.decimal_from(2, -12345)
        elif kind == "table":
            value = FieldTable(inner=1)
            value.codes["inner"] = dialect.code_for("int32")
        elif kind == "array":
            value = FieldArray([1, "x"])
            value.codes = [dialect.code_for("int32"), dialect.code_for("longstr")]
        else:
            value = _KIND_SAMPLE[kind]
        table[f"k{code}"] = value
        table.codes[f"k{code}"] = code
    return table


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
def test_every_type_code_round_trips(dialect: Dialect) -> None:
    table = _every_code_table(dialect)
    raw = encode_table(table, dialect)
    for code in dialect.codes:
        assert f"\x02k{code}{code}".encode() in raw, f"type code {code!r} not written as given"
    decoded, _ = decode_table(raw, 0, dialect)
    assert decoded == table and decoded.codes == table.codes
    assert encode_table(decoded, dialect) == raw


def test_dialects_read_the_conflicting_codes_differently() -> None:
    def one(code: bytes, value: bytes) -> bytes:
        body = b"\x01k" + code + value
        return U32.pack(len(body)) + body

    # 's': short string in the spec grammar, signed 16-bit integer for RabbitMQ/Qpid
    raw = one(b"s", b"\x01h")
    assert decode_table(raw, 0, SPEC)[0] == {"k": "h"}
    assert decode_table(raw, 0, RABBITMQ)[0] == {"k": 0x0168}
    assert decode_table(one(b"s", b"\xff\xfe"), 0, RABBITMQ)[0] == {"k": -2}
    # 'l': unsigned 64-bit in the spec, signed in RabbitMQ
    raw = one(b"l", b"\xff" * 8)
    assert decode_table(raw, 0, SPEC)[0] == {"k": (1 << 64) - 1}
    assert decode_table(raw, 0, RABBITMQ)[0] == {"k": -1}
    # 'x' exists only for RabbitMQ, 'U'/'L' only in the spec
    assert decode_table(one(b"x", b"\x00\x00\x00\x01z"), 0, RABBITMQ)[0] == {"k": b"z"}
    with pytest.raises(DecodeError, match=r"type code 'x' \(0x78\) is not defined in the amqp0-9-1 dialect"):
        decode_table(one(b"x", b"\x00\x00\x00\x01z"), 0, SPEC)
    for code in (b"U", b"L"):
        with pytest.raises(DecodeError, match="not defined in the rabbitmq dialect"):
            decode_table(one(code, b"\x00" * 8), 0, RABBITMQ)
    # inferred codes follow the dialect too
    assert encode_table({"n": 1 << 63}, SPEC)[-9:-8] == b"l"
    with pytest.raises(EncodeError, match="int64"):
        encode_table({"n": 1 << 63}, RABBITMQ)


def test_body_heartbeat_and_protocol_header() -> None:
    body = BodyFrame(5, b"\x00hello\xce")
    assert body.encode() == b"\x03\x00\x05\x00\x00\x00\x07\x00hello\xce\xce"
    assert read_all(body.encode()) == [body]
    assert read_all(BodyFrame(1, b"").encode()) == [BodyFrame(1, b"")]

    beat = HeartbeatFrame()
    assert beat.encode() == b"\x08\x00\x00\x00\x00\x00\x00\xce"
    assert read_all(beat.encode()) == [beat]

    assert PROTOCOL_HEADER == b"AMQP\x00\x00\x09\x01"
    header = ProtocolHeader()
    assert header.encode() == PROTOCOL_HEADER and header.version == (0, 0, 9, 1) and header.well_formed
    assert ProtocolHeader.of(1, 0, 0, protocol_id=1).encode() == b"AMQP\x01\x01\x00\x00"
    assert not ProtocolHeader(b"HTTP/1.1").well_formed and ProtocolHeader(b"AMQ").version is None
    assert read_all(PROTOCOL_HEADER + beat.encode()) == [header, beat]
    # a broker answering a wrong version with its own header: recognised, kept verbatim
    assert read_all(b"AMQP\x00\x00\x09\x01") == [ProtocolHeader(b"AMQP\x00\x00\x09\x01")]


@MANY
@given(frame=S.body_frame())
def test_body_frame_round_trip(frame: BodyFrame) -> None:
    wire = frame.encode()
    assert len(wire) == 8 + len(frame.data)
    assert read_all(wire) == [frame]


def test_protocol_header_only_at_stream_start() -> None:
    reader = FrameReader()
    reader.feed(b"AM")
    assert reader.next() is None  # could still become a header
    reader.feed(b"QP\x00\x00\x09")
    assert reader.next() is None
    reader.feed(b"\x01" + HeartbeatFrame().encode() + PROTOCOL_HEADER)
    assert [reader.next(), reader.next()] == [ProtocolHeader(), HeartbeatFrame()]
    # 'AMQP' after the first frame is read as a frame header: type 0x41, absurd size
    with pytest.raises(FrameError, match="frame type 65"):
        reader.next()
    # a reader told not to expect a header treats 'AMQP' as a frame from the start
    with pytest.raises(FrameError):
        read_all(PROTOCOL_HEADER, expect_protocol_header=False)


def test_unknown_method_and_frame_type_round_trip() -> None:
    wire = MethodFrame(3, UnknownMethod(999, 7, b"\x01\x02")).encode()
    (frame,) = read_all(wire)
    assert frame == MethodFrame(3, UnknownMethod(999, 7, b"\x01\x02")) and frame.encode() == wire
    wire = RawFrame(2, type=77, data=b"abc").encode()
    assert wire[0] == 77
    (frame,) = read_all(wire)
    assert frame == RawFrame(2, type=77, data=b"abc") and frame.encode() == wire


# ============================================================================ 2. malformation is producible

_STRING_FIELDS = [(cls, f) for cls in ALL_METHODS for f in cls.FIELDS if f.type in ("shortstr", "longstr", "table")]


@pytest.mark.parametrize("cls,field", _STRING_FIELDS, ids=lambda x: getattr(x, "NAME", None) or getattr(x, "name", ""))
def test_raw_replaces_the_whole_field(cls: Any, field: Any) -> None:
    default = cls()
    plain = default.encode_args()
    plain_field = encode_field(field, field.default(), SPEC, "x")
    marker = b"\xde\xad\xbe\xef\x00"
    raw_method = default.replace(**{field.attr: Raw(marker)})
    out = raw_method.encode_args()
    assert out == generic_encode_args(raw_method, SPEC)
    assert marker in out and len(out) == len(plain) - len(plain_field) + len(marker)
    # Raw(the correct encoding) is indistinguishable from the value itself
    value = {"shortstr": "abc", "longstr": b"abc", "table": {"k": 1}}[field.type]
    assert default.replace(**{field.attr: Raw(encode_field(field, value, SPEC, "x"))}).encode_args() == \
        default.replace(**{field.attr: value}).encode_args()


def test_sized_writes_a_lying_length() -> None:
    m = spec.QueueDeclare(queue=Sized("abc", length=10))
    assert m.encode_args() == b"\x00\x00" + b"\x0aabc" + b"\x00" + b"\x00\x00\x00\x00"
    m = spec.ConnectionStartOk(response=Sized(b"xy", length=1000))
    assert U32.pack(1000) + b"xy" in m.encode_args()
    m = spec.QueueDeclare(arguments=Sized({"a": True}, length=99))
    assert m.encode_args().endswith(U32.pack(99) + b"\x01at\x01")
    # inside a table: a lying long string and a lying nested array
    raw = encode_table({"s": FieldValue("S", Sized(b"ab", length=7)), "a": FieldValue("A", Sized([1], length=50))})
    assert b"\x01sS" + U32.pack(7) + b"ab" in raw and b"\x01aA" + U32.pack(50) + b"I" + U32.pack(1) in raw
    with pytest.raises(EncodeError, match="one octet, 256 does not fit"):
        spec.QueueDeclare(queue=Sized("q", length=256)).encode_args()


def test_300_octet_short_string() -> None:
    name = "q" * 300
    with pytest.raises(EncodeError, match=r"queue\.declare\.queue: 300 octets exceed the 255 .*Sized"):
        MethodFrame(1, spec.QueueDeclare(queue=name)).encode()
    wire = MethodFrame(1, spec.QueueDeclare(queue=Sized(name, length=44))).encode()
    args = payload_of(wire)[4:]
    assert args[2] == 44 and args[3:303] == b"q" * 300
    assert U32.unpack_from(wire, 3)[0] == len(wire) - 8  # the frame size itself is right
    (frame,) = read_all(wire)
    assert isinstance(frame, MalformedFrame) and "queue.declare.arguments" in frame.error
    # the 300 octets are also accepted as bytes and inside tables with Sized
    assert spec.BasicPublish(routing_key=Sized(b"r" * 300, length=0)).encode_args()[3] == 0
    with pytest.raises(EncodeError, match=r"headers"):
        spec.BasicProperties(headers={"k" * 300: 1}).encode()
    assert b"\x2c" + b"k" * 300 in encode_table([(Sized("k" * 300, length=44), 1)])


def test_frame_overrides() -> None:
    base = MethodFrame(1, spec.ChannelOpen())
    good = base.encode()
    assert good == b"\x01\x00\x01\x00\x00\x00\x05\x00\x14\x00\x0a\x00\xce"

    wrong_type = MethodFrame(1, spec.ChannelOpen(), frame_type=0x63).encode()
    assert wrong_type == b"\x63" + good[1:]
    assert read_all(wrong_type) == [RawFrame(1, type=0x63, data=good[7:-1])]

    assert MethodFrame(1, spec.ChannelOpen(), size=100).encode() == good[:3] + U32.pack(100) + good[7:]
    reader = FrameReader()
    reader.feed(MethodFrame(1, spec.ChannelOpen(), size=100).encode())
    assert reader.next() is None and reader.pending == len(good)  # waits for the announced octets
    with pytest.raises(FrameError, match="ends with 0x0a"):
        read_all(MethodFrame(1, spec.ChannelOpen(), size=3).encode())

    assert MethodFrame(1, spec.ChannelOpen(), end=0x00).encode() == good[:-1] + b"\x00"
    assert MethodFrame(1, spec.ChannelOpen(), end=b"").encode() == good[:-1]
    assert MethodFrame(1, spec.ChannelOpen(), end=b"\xce\xce").encode() == good + b"\xce"
    with pytest.raises(FrameError, match="ends with 0x00"):
        read_all(MethodFrame(1, spec.ChannelOpen(), end=0).encode())
    with pytest.raises(FrameError, match="ends with 0x08"):  # the next frame's type octet
        read_all(MethodFrame(1, spec.ChannelOpen(), end=b"").encode() + HeartbeatFrame().encode())

    trailing = MethodFrame(1, spec.ChannelOpen(), trailing=b"xyz")
    assert trailing.encode() == good[:6] + b"\x08" + good[7:-1] + b"xyz\xce"
    (frame,) = read_all(trailing.encode())
    assert isinstance(frame, MalformedFrame) and frame.error.startswith("channel.open: 3 octets after the last argument")
    assert frame.encode() == trailing.encode()  # a malformed frame is kept and re-sent verbatim


def test_property_flags_override() -> None:
    props = spec.BasicProperties(content_type="text/plain")
    # flags say nothing is present, the value still follows
    wire = HeaderFrame(1, 60, 5, props, property_flags=[0x0000]).encode()
    assert payload_of(wire)[12:] == b"\x00\x00\x0atext/plain"
    (frame,) = read_all(wire)
    assert isinstance(frame, MalformedFrame) and "11 octets after the properties" in frame.error
    # flags announce a property that is not there
    (frame,) = read_all(HeaderFrame(1, 60, 5, spec.BasicProperties(), property_flags=[0x8000]).encode())
    assert isinstance(frame, MalformedFrame) and "basic.content-type" in frame.error
    # bit 1: the undefined 15th property of basic
    (frame,) = read_all(HeaderFrame(1, 60, 0, property_flags=[0x0002]).encode())
    assert isinstance(frame, MalformedFrame) and "undefined property #15" in frame.error
    # a continuation word of zeros is legal and decodes to the same (absent) properties
    (frame,) = read_all(HeaderFrame(1, 60, 0, property_flags=[0x0001, 0x0000]).encode())
    assert isinstance(frame, HeaderFrame) and frame.properties == spec.BasicProperties()
    # endless continuation words are refused, not followed
    (frame,) = read_all(HeaderFrame(1, 60, 0, property_flags=[0x0001] * 50).encode())
    assert isinstance(frame, MalformedFrame) and "continuation" in frame.error
    # raw_properties: any bytes after body-size
    assert payload_of(HeaderFrame(1, 60, 0, raw_properties=b"\xff").encode())[12:] == b"\xff"


def test_raw_on_a_bit_field_is_refused_by_both_encoders() -> None:
    m = spec.QueueDeclare(queue="q", durable=Raw(b"\x01"))
    with pytest.raises(EncodeError, match="bit field cannot be Raw"):
        m.encode_args()
    with pytest.raises(EncodeError, match="bit field cannot be Raw"):
        generic_encode_args(m, SPEC)
    # truthy non-bool values are accepted the same way by both paths
    m = spec.QueueDeclare(passive=1, durable=2, exclusive="yes", auto_delete=None, no_wait=[])
    assert m.encode_args() == generic_encode_args(m, SPEC) == b"\x00\x00\x00\x07\x00\x00\x00\x00"


def test_unencodable_text_is_an_encode_error_naming_the_field() -> None:
    with pytest.raises(EncodeError, match=r"queue\.declare\.queue: character '\\ud800'"):
        spec.QueueDeclare(queue="\ud800").encode_args()
    with pytest.raises(EncodeError, match=r"connection\.start\.locales"):
        spec.ConnectionStart(locales="\udfff").encode_args()
    with pytest.raises(EncodeError, match=r"basic\.content-type"):
        spec.BasicProperties(content_type="\ud800").encode()
    with pytest.raises(EncodeError, match="field name"):
        encode_table({"\ud800": 1})


def test_table_encoder_fast_paths_keep_the_generic_errors() -> None:
    with pytest.raises(EncodeError, match=r"table\['k'\]: character '\\ud800'"):
        encode_table({"k": "\ud800"})
    with pytest.raises(EncodeError, match=r"arguments\['t'\]\['n'\]: 300 is not a valid int8 \(code 'b'\)"):
        inner = FieldTable(n=300)
        inner.codes["n"] = "b"
        encode_table({"t": inner}, SPEC, 0, "arguments")
    with pytest.raises(EncodeError, match=r"table\['k'\]: 'x' is not a valid int32"):
        encode_table({"k": FieldValue("I", "x")})
    with pytest.raises(EncodeError, match=r"array\[1\]: 70000 is not a valid int16"):
        encode_array([1, FieldValue("s", 70000)], RABBITMQ)
    # remembered codes apply to whatever value is there now; a FieldValue overrides them
    table = FieldTable(a=1, b=200, c="x")
    table.codes.update(a="t", b="B", c="S")
    table["c"] = FieldValue("x", b"yz")
    assert encode_table(table, RABBITMQ) == U32.pack(17) + b"\x01at\x01" + b"\x01bB\xc8" + b"\x01cx" + U32.pack(2) + b"yz"


def test_wrong_values_give_encode_errors_naming_the_field() -> None:
    with pytest.raises(EncodeError, match=r"basic\.qos\.prefetch-count: 65536 does not fit"):
        spec.BasicQos(prefetch_count=65536).encode_args()
    with pytest.raises(EncodeError, match=r"basic\.ack\.delivery-tag: -1 does not fit"):
        spec.BasicAck(delivery_tag=-1).encode_args()
    with pytest.raises(EncodeError, match=r"expected an integer"):
        spec.BasicQos(prefetch_size="1").encode_args()
    with pytest.raises(EncodeError, match=r"no field type for object"):
        encode_table({"o": object()})
    # Raw on an integer field is written as given (here: a 3-octet 'short')
    assert spec.BasicQos(prefetch_count=Raw(b"abc")).encode_args() == bytes(4) + b"abc\x00"


def test_encoding_does_not_change_the_frame() -> None:
    for frame in (RawFrame(1, type=9, data=b"ab"), MalformedFrame(1, type=1, data=b"\x00", error="x")):
        before = repr(frame)
        frame.encode()
        assert repr(frame) == before and frame.frame_type is None


# ============================================================================ 3. bounded, clear decoding

def test_huge_frame_is_refused_after_seven_octets_without_buffering() -> None:
    reader = FrameReader()
    reader.feed(b"\x01\x00\x01\xff\xff\xff")
    assert reader.next() is None and reader.pending == 6
    reader.feed(b"\xff")
    tracemalloc.start()
    try:
        with pytest.raises(FrameError, match=r"announces 4294967295 payload octets, more than the 1048576 accepted"):
            reader.next()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, f"refusing the frame allocated {peak} octets"
    assert reader.pending == 7 and len(reader.pending_bytes()) == 7
    with pytest.raises(FrameError):  # and stays refused
        reader.next()


def test_max_payload_is_inclusive_and_configurable() -> None:
    frame = BodyFrame(1, b"x" * 100)
    assert read_all(frame.encode(), max_payload=100) == [frame]
    with pytest.raises(FrameError, match="more than the 99 accepted"):
        read_all(frame.encode(), max_payload=99)


@pytest.mark.parametrize("end", [0x00, 0xCD, 0xCF, 0xFF, ord("A")])
def test_bad_frame_end_names_the_octet(end: int) -> None:
    wire = HeartbeatFrame(end=end).encode()
    with pytest.raises(FrameError, match=rf"ends with 0x{end:02x}, not frame-end 0xCE") as info:
        read_all(wire)
    assert info.value.offset == 7


def test_every_truncation_of_a_method_names_the_field() -> None:
    method = spec.QueueDeclare(queue="orders", durable=True, arguments={"x-max-length": 10, "x-queue-type": "quorum"})
    payload = method.encode()
    for cut in range(4, len(payload)):
        frame = decode_frame(spec.FRAME_METHOD, 1, payload[:cut])
        assert isinstance(frame, MalformedFrame), cut
        assert re.match(rf"queue\.declare\.({field_names(spec.QueueDeclare)})\b", frame.error), frame.error
    assert re.match(r"method payload of 3 octets", decode_frame(1, 1, payload[:3]).error)


@FEW
@given(method=S.methods(), data=st.data())
def test_truncated_methods_are_malformed_frames_naming_a_field(method: Any, data: st.DataObject) -> None:
    payload = method.encode()
    if len(payload) == 4:
        return
    cut = data.draw(st.integers(4, len(payload) - 1), label="cut")
    frame = decode_frame(spec.FRAME_METHOD, 1, payload[:cut])
    assert isinstance(frame, MalformedFrame)
    assert re.match(rf"{re.escape(method.NAME)}\.({field_names(type(method))})\b", frame.error), frame.error


@FEW
@given(frame=S.header_frame(), data=st.data())
def test_truncated_content_headers_are_malformed(frame: HeaderFrame, data: st.DataObject) -> None:
    payload = payload_of(frame.encode())
    cut = data.draw(st.integers(0, len(payload) - 1), label="cut")
    got = decode_frame(spec.FRAME_HEADER, 1, payload[:cut])
    assert isinstance(got, MalformedFrame)
    assert re.match(r"content header of \d+ octets|basic[ .]", got.error), got.error


def test_lying_lengths_inside_methods_name_the_field() -> None:
    cases = {
        "queue.declare.queue": spec.QueueDeclare(queue=Sized("q", length=200)),
        "queue.declare.arguments": spec.QueueDeclare(arguments=Sized({"a": 1}, length=1000)),
        "queue.declare.arguments['a']": spec.QueueDeclare(arguments={"a": FieldValue("S", Sized(b"xy", length=50))}),
        "queue.declare.arguments['t']['n']": spec.QueueDeclare(arguments={"t": {"n": FieldValue("A", Sized([], length=9))}}),
        "connection.start.mechanisms": spec.ConnectionStart(mechanisms=Sized(b"PLAIN", length=1 << 31)),
        "basic.publish.routing-key": spec.BasicPublish(routing_key=Sized("rk", length=255)),
    }
    for name, method in cases.items():
        (frame,) = read_all(MethodFrame(1, method).encode())
        assert isinstance(frame, MalformedFrame), name
        assert frame.error.startswith(name + ":"), frame.error
    (frame,) = read_all(HeaderFrame(1, 60, 0, spec.BasicProperties(message_id=Sized("m", length=9))).encode())
    assert isinstance(frame, MalformedFrame) and frame.error.startswith("basic.message-id:"), frame.error


def _deep(depth: int, code: bytes) -> bytes:
    """A table (code F) or array (code A) nested ``depth`` levels inside the outermost one."""
    size, prefixes = 4, []
    for _ in range(depth):
        body = (3 if code == b"F" else 1) + size
        prefixes.append(U32.pack(body) + (b"\x01aF" if code == b"F" else b"A"))
        size = 4 + body
    return b"".join(reversed(prefixes)) + b"\x00\x00\x00\x00"


@pytest.mark.parametrize("code,decode", [(b"F", decode_table), (b"A", decode_array)], ids=["table", "array"])
def test_nesting_deeper_than_max_depth_fails_fast(code: bytes, decode: Any) -> None:
    ok, end = decode(_deep(MAX_DEPTH, code), 0)
    assert end == len(_deep(MAX_DEPTH, code))
    assert (encode_table if code == b"F" else encode_array)(ok) == _deep(MAX_DEPTH, code)
    with pytest.raises(DecodeError, match=f"nested deeper than {MAX_DEPTH}"):
        decode(_deep(MAX_DEPTH + 1, code), 0)
    data = _deep(10_000, code)
    calls, _, error = cost(lambda: decode(data, 0), DecodeError)
    assert f"nested deeper than {MAX_DEPTH}" in str(error)  # not RecursionError
    assert calls < 20 * MAX_DEPTH, calls                     # stopped at the limit, not 10,000 levels down
    (frame,) = read_all(MethodFrame(1, spec.QueueDeclare(arguments=Raw(_deep(10_000, b"F")))).encode())
    assert isinstance(frame, MalformedFrame) and frame.error.startswith("queue.declare.arguments")
    assert "nested deeper" in frame.error


def test_encoding_refuses_nesting_deeper_than_max_depth() -> None:
    value: Any = {}
    for _ in range(MAX_DEPTH + 1):
        value = {"a": value}
    with pytest.raises(EncodeError, match="nested deeper"):
        encode_table(value)
    value = []
    for _ in range(MAX_DEPTH + 1):
        value = [value]
    with pytest.raises(EncodeError, match="nested deeper"):
        encode_array(value)


@pytest.mark.parametrize("inner", [b"F", b"A", b"S", b"x"])
def test_lengths_claiming_2gib_in_a_small_frame_fail_fast(inner: bytes) -> None:
    claim = U32.pack(1 << 31)
    whole = claim + b"\x01a" + b"t\x01"
    nested = b"\x01k" + inner + claim + b"zz"
    for fn, message in ((lambda: decode_table(whole, 0), "claims 2147483648 octets"),
                        (lambda: decode_array(whole, 0), "claims 2147483648 octets"),
                        (lambda: decode_table(U32.pack(len(nested)) + nested, 0, RABBITMQ),
                         r"2147483648 octets, 2 left|claims 2147483648")):
        calls, peak, error = cost(fn, DecodeError)
        assert re.search(message, str(error)) and calls < 200 and peak < 256 * 1024, (calls, peak, error)


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


@BIG
@given(data=st.binary(max_size=4096), sizes=st.lists(st.integers(1, 300), max_size=8), header=st.booleans())
def test_garbage_streams_raise_only_wire_errors(data: bytes, sizes: list[int], header: bool) -> None:
    data = (PROTOCOL_HEADER if header else b"") + data
    try:
        got, reader = _feed_in_chunks(data, sizes, max_payload=2048)
    except FrameError:
        return
    assert all(isinstance(x, (Frame, ProtocolHeader)) for x in got)
    assert len(got) <= len(data) // 8  # every item consumed at least 8 octets: no spinning
    assert reader.pending < 2048 + 8


_METHOD_IDS = st.sampled_from(sorted(spec.METHODS)).map(U32.pack)


@BIG
@given(ftype=st.sampled_from([1, 2, 3, 8, 0, 4, 255]),
       payload=st.one_of(st.binary(max_size=600), st.tuples(_METHOD_IDS, st.binary(max_size=600)).map(b"".join)))
def test_any_payload_in_a_valid_envelope_decodes_or_is_malformed(ftype: int, payload: bytes) -> None:
    wire = struct.pack(">BHI", ftype, 1, len(payload)) + payload + b"\xce"
    (frame,) = read_all(wire)
    assert isinstance(frame, Frame)
    if ftype == spec.FRAME_METHOD and len(payload) >= 4:
        cls = spec.METHODS.get(U32.unpack_from(payload)[0])
        if cls is not None:  # fast and generic decoders agree on arbitrary input
            try:
                fast: Any = cls.decode_args(payload, 4, SPEC)
            except DecodeError as exc:
                fast = ("error", str(exc))
            try:
                generic: Any = generic_decode_args(cls, payload, 4, SPEC)
            except DecodeError as exc:
                generic = ("error", str(exc))
            assert fast == generic


@FEW
@given(stream=S.frame_stream(max_frames=3, max_body=256), data=st.data())
def test_mutated_valid_streams_raise_only_wire_errors(stream: tuple[list[Any], bytes], data: st.DataObject) -> None:
    _, raw = stream
    if not raw:
        return
    mutated = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        i = data.draw(st.integers(0, len(mutated) - 1), label="at")
        mutated[i] = data.draw(st.integers(0, 255), label="octet")
    cut = data.draw(st.integers(0, len(mutated)), label="cut")
    try:
        got, _ = _feed_in_chunks(bytes(mutated[:cut]), [data.draw(st.integers(1, 64), label="chunk")], max_payload=1 << 16)
    except FrameError:
        return
    assert all(isinstance(x, (Frame, ProtocolHeader)) for x in got)


@settings(max_examples=15, deadline=None)
@given(stream=S.frame_stream(max_frames=4, max_body=64))
def test_splitting_a_stream_anywhere_gives_the_same_frames(stream: tuple[list[Any], bytes]) -> None:
    items, data = stream
    assert read_all(data) == items
    for i in range(len(data) + 1):
        reader = FrameReader()
        reader.feed(data[:i])
        got = list(reader)
        reader.feed(data[i:])
        got += list(reader)
        assert got == items, f"split at {i}"


@FEW
@given(stream=S.frame_stream(max_frames=4, max_body=256), sizes=st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_feeding_in_random_chunks_gives_the_same_frames(stream: tuple[list[Any], bytes], sizes: list[int]) -> None:
    items, data = stream
    got, reader = _feed_in_chunks(data, sizes)
    assert got == items and reader.pending == 0


def test_reader_buffer_is_compacted_on_long_streams() -> None:
    frame = BodyFrame(1, b"b" * 1000)
    wire = frame.encode()
    reader = FrameReader()
    for _ in range(500):
        reader.feed(wire)
        assert reader.next() == frame and reader.last_raw == wire
        assert len(reader._buf) < 3 * 65536
    assert reader.frames_read == 500 and reader.pending == 0


# ============================================================================ 4. pamqp: test_wire_amqp091_pamqp.py


# ============================================================================ 5. the generated codec is current

def test_generated_spec_is_current(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", ["amqpspec.wire.amqp091.gen", "--check"])
    assert gen.main() == 0, capsys.readouterr().err


def test_codec_covers_the_spec_and_its_metadata_is_consistent() -> None:
    assert len(spec.METHODS) == len(spec.METHODS_BY_NAME)
    for index, cls in spec.METHODS.items():
        assert index == cls.CLASS_ID << 16 | cls.METHOD_ID and spec.METHODS_BY_NAME[cls.NAME] is cls
        assert decode_method(cls().encode()).encode() == cls().encode()
        assert {f.type for f in cls.FIELDS} <= {"bit", "octet", "short", "long", "longlong", "shortstr",
                                                 "longstr", "timestamp", "table"}
    assert spec.PROPERTIES[60] is spec.BasicProperties
