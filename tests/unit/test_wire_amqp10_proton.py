"""Cross-check of the AMQP 1.0 codec against python-qpid-proton, an independent implementation.

Both directions, on valid values:

* ours encodes, ``proton.Data.decode`` reads it, the values agree (type by type);
* proton encodes (``Data.put_object``), ours decodes, the values agree, and re-encoding what we
  decoded gives proton's octets exactly (proton picks other widths than ours: 32-bit lists and
  maps, arrays of ``uint``/``int`` elements instead of ``smalluint``/``smallint``; the widths are
  remembered);
* for every primitive type, lists, maps, arrays (of scalars, described elements, lists, maps,
  arrays), described values, every generated described type (performatives, SASL frames,
  sections, delivery states...), and messages through ``proton.Message.encode/decode``.

Where proton's Python API and the spec's types differ (documented here, asserted below so that
a change in proton is noticed):

* ``proton.Message`` encodes a ``bytes`` body as an ``amqp-value`` section unless
  ``inferred=True`` (then as ``data``), and always writes the header and properties sections,
  empty (``list0``) when nothing is set.
* ``Message.ttl``, ``expiry_time`` and ``creation_time`` are seconds as floats; on the wire they
  are milliseconds (``milliseconds``/``timestamp``).
* ``proton.Message`` reads its string properties (address, subject, group-id...) as C strings:
  they end at the first NUL character, so the message tests keep NUL out of them. A ulong
  ``message-id`` comes back as a plain ``int``.
* ``Message.content_type`` / ``content_encoding`` of a message without them read as
  ``symbol('None')`` (the getter wraps a null in ``symbol(str(...))``), not ``None``.
* ``decimal128`` is a ``bytes`` (the 16 octets as on the wire), ``decimal32``/``decimal64`` are
  ints of the raw bits, as ours.
* ``Data.get_object`` (proton 0.40) misreads a described value whose value is itself described:
  the element after it in a list or map disappears (its C decoder reads the octets right:
  ``Data.format()`` shows them). ``Data.decode`` refuses a descriptor that is itself described
  (valid, types 1.2). Both shapes are left out of the ours -> proton direction only.
* ``Data.get_object`` (proton 0.40) returns a binary as a ``memoryview`` into the ``Data``'s own
  buffer: it must be copied before the ``Data`` is freed, and a map with a binary key cannot be
  read at all (``cannot hash writable memoryview``). Binary map keys are left out of the
  ours -> proton direction; proton -> ours covers them.
"""
from __future__ import annotations

import functools
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from amqpspec.wire.amqp10 import (
    UNDESCRIBED, Array, Described, List, Map, Message, spec,
)
from amqpspec.wire.amqp10 import types as T
from amqpspec.wire.amqp10.composite import Composite, Restricted

from . import strategies_amqp10 as S

proton = pytest.importorskip("proton")
Data = proton.Data

SOME = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MANY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# proton's Data type codes, named as the spec names the primitive types
TYPE_OF_CODE: dict[int, str] = {
    getattr(Data, n): ("boolean" if n == "BOOL" else n.lower())
    for n in dir(Data) if n.isupper() and isinstance(getattr(Data, n), int) and n != "DESCRIBED"
}
CODE_OF_TYPE = {v: k for k, v in TYPE_OF_CODE.items()}
# our value class -> proton's (plain int is a long in both; float a double; str a string)
TO_PROTON: dict[type, Any] = {
    T.UByte: proton.ubyte, T.UShort: proton.ushort, T.UInt: proton.uint, T.ULong: proton.ulong,
    T.Byte: proton.byte, T.Short: proton.short, T.Int: proton.int32, T.Long: int, T.Float: proton.float32,
    T.Decimal32: proton.decimal32, T.Decimal64: proton.decimal64, T.Char: proton.char,
    T.Timestamp: proton.timestamp, T.Symbol: proton.symbol,
}
FROM_PROTON: dict[type, Any] = {
    proton.ubyte: T.UByte, proton.ushort: T.UShort, proton.uint: T.UInt, proton.ulong: T.ULong,
    proton.byte: T.Byte, proton.short: T.Short, proton.int32: T.Int, int: T.Long, proton.float32: T.Float,
    proton.decimal32: T.Decimal32, proton.decimal64: T.Decimal64, proton.char: T.Char,
    proton.timestamp: T.Timestamp, proton.symbol: T.Symbol,
}


def test_proton_knows_every_primitive_type() -> None:
    assert set(T.BY_TYPE) <= set(TYPE_OF_CODE.values()), set(T.BY_TYPE) - set(TYPE_OF_CODE.values())


def to_proton(v: Any) -> Any:
    cls = TO_PROTON.get(type(v))
    if cls is not None:
        return cls(v)
    if isinstance(v, T.Decimal128):
        return proton.decimal128(int(v).to_bytes(16, "big"))
    if isinstance(v, Array):
        desc = UNDESCRIBED_P if v.descriptor is UNDESCRIBED else to_proton(v.descriptor)
        return proton.Array(desc, CODE_OF_TYPE[v.type], *[to_proton(T._INT_CLASS[v.type](x)) if v.type in T._INT_CLASS
                                                         else to_proton(x) for x in v])
    if isinstance(v, Described):
        return proton.Described(to_proton(v.descriptor), to_proton(v.value))
    if isinstance(v, dict):
        return {to_proton(k): to_proton(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [to_proton(x) for x in v]
    return v  # None, bool, float, str, bytes, UUID


UNDESCRIBED_P = proton.UNDESCRIBED


def from_proton(v: Any) -> Any:
    cls = FROM_PROTON.get(type(v))
    if cls is not None:
        return cls(v)
    if isinstance(v, proton.decimal128):
        return T.Decimal128(int.from_bytes(bytes(v), "big"))
    if isinstance(v, proton.Array):
        t = TYPE_OF_CODE[v.type]
        desc = UNDESCRIBED if v.descriptor is proton.UNDESCRIBED else from_proton(v.descriptor)
        return Array([from_proton(x) for x in v.elements], type=t, descriptor=desc)
    if isinstance(v, proton.Described):
        return Described(from_proton(v.descriptor), from_proton(v.value))
    if isinstance(v, dict):
        return Map((from_proton(k), from_proton(x)) for k, x in v.items())
    if isinstance(v, list):
        return List(from_proton(x) for x in v)
    if isinstance(v, memoryview):
        return bytes(v)
    return v


def proton_decode(data: bytes) -> Any:
    """Proton's reading of ``data``, converted to our classes while proton's buffer is alive
    (proton 0.40 returns binaries as memoryviews into it)."""
    d = Data()
    assert d.decode(data) == len(data), "proton did not read the whole value"
    d.rewind()
    d.next()
    return from_proton(d.get_object())


def proton_encode(obj: Any) -> bytes:
    d = Data()
    d.put_object(obj)
    return d.encode()


def proton_can_read(value: Any) -> bool:
    """False for the shapes proton's Python API misreads or refuses (see the module docstring)."""
    if isinstance(value, Described):
        if isinstance(value.descriptor, Described) or isinstance(value.value, Described):
            return False
        return proton_can_read(value.descriptor) and proton_can_read(value.value)
    if isinstance(value, dict):
        return all(not isinstance(k, (bytes, T.Key)) and proton_can_read(k) and proton_can_read(v) for k, v in value.items())
    if isinstance(value, Array):
        return value.type != "null" and all(proton_can_read(v) for v in value)
    if isinstance(value, (list, tuple)):
        return all(proton_can_read(v) for v in value)
    return True


# Values for both directions: valid text only (proton reads strict UTF-8), no arrays of null
# (proton's Array keeps no null elements to count). ``readable()``: what proton's Python API
# can also read back.
@functools.cache
def values() -> st.SearchStrategy[Any]:
    return S.values(max_leaves=10, valid_text=True, array_types=tuple(t for t in S.SCALAR_TYPES if t != "null"))


@functools.cache
def readable() -> st.SearchStrategy[Any]:
    return S.values(max_leaves=10, valid_text=True, array_types=tuple(t for t in S.SCALAR_TYPES if t != "null"),
                    key_types=tuple(t for t in S.SCALAR_TYPES if t != "binary")).filter(proton_can_read)


# ============================================================================ primitive and compound values

@pytest.mark.parametrize("type_", S.SCALAR_TYPES)
@SOME
@given(data=st.data())
def test_every_primitive_type_both_ways(type_: str, data: st.DataObject) -> None:
    value = data.draw(S.primitive(type_), label="value")
    assert S.typed((proton_decode(T.encode(value)))) == S.typed(value)
    theirs = proton_encode(to_proton(value))
    code, back, end = T.decode_item(theirs)
    assert end == len(theirs) and S.typed(back) == S.typed(value)
    assert T.encode(back, prefer=code) == theirs


@pytest.mark.parametrize("enc", [e for e in T.BY_CODE.values() if e.category in ("fixed", "variable") and e.type != "list"],
                         ids=lambda e: e.name)
@SOME
@given(data=st.data())
def test_proton_reads_every_encoding_we_write(enc: T.Encoding, data: st.DataObject) -> None:
    value = data.draw(S.fitting(enc), label="value")
    wire = T.encode(T.Encoded(value, enc.name))
    assert S.typed((proton_decode(wire))) == S.typed(T.Encoded(value, enc.name))


@MANY
@given(value=readable())
def test_ours_to_proton(value: Any) -> None:
    assert S.typed((proton_decode(T.encode(value)))) == S.typed(value)


@MANY
@given(value=values())
def test_proton_to_ours_byte_exact(value: Any) -> None:
    theirs = proton_encode(to_proton(value))
    code, back, end = T.decode_item(theirs)
    assert end == len(theirs)
    assert S.typed(back) == S.typed(value)
    assert T.encode(back, prefer=code) == theirs, "re-encoding proton's octets changed them"


def test_compound_shapes_both_ways() -> None:
    shapes = [
        [], List([None]), Map(), Map({T.Symbol("k"): [T.UInt(1), "x"]}),
        Array([], "symbol"), Array([T.UInt(0), T.UInt(7), T.UInt(300)], "uint"),
        Array([[T.UInt(1)], []], "list"), Array([Map({T.Long(1): T.Long(2)})], "map"),
        Array([Array([T.Int(1)], "int")], "array"), Array([[T.Long(1)]], "list", descriptor=T.Symbol("d")),
        Array([T.Decimal128(1 << 100)], "decimal128"), Array([uuid.UUID(int=3)], "uuid"),
        Described(T.ULong(0x1234_0000_0001), Map({"a": T.Long(1)})), Described(T.Symbol("x:y"), None),
        Described(Described(T.ULong(1), T.ULong(2)), [T.Long(3)]),
    ]
    for value in shapes:
        if proton_can_read(value):
            assert S.typed((proton_decode(T.encode(value)))) == S.typed(value), value
        theirs = proton_encode(to_proton(value))
        code, back, _ = T.decode_item(theirs)
        assert S.typed(back) == S.typed(value) and T.encode(back, prefer=code) == theirs, value


def test_proton_and_ours_choose_different_widths() -> None:
    # documented above: the values agree, the octets need not
    assert proton_encode([proton.uint(1)]) == b"\xd0\x00\x00\x00\x06\x00\x00\x00\x01\x52\x01"
    assert T.encode([T.UInt(1)]) == b"\xc0\x03\x01\x52\x01"
    assert proton_encode(proton.Array(proton.UNDESCRIBED, Data.UINT, proton.uint(1)))[-5:] == b"\x70\x00\x00\x00\x01"
    assert T.encode(Array([T.UInt(1)], "uint"))[-2:] == b"\x52\x01"


# ============================================================================ described types

@pytest.mark.parametrize("cls", S.described_types, ids=lambda c: c.NAME)
@SOME
@given(data=st.data())
def test_every_described_type_both_ways(cls: type, data: st.DataObject) -> None:
    value = data.draw(S.composite(cls), label="value")
    d = value.to_described()
    assume(proton_can_read(_plain(d.value)))
    # ours -> proton: a described list (or value) with our descriptor and fields
    theirs = proton_decode(value.encode())
    assert isinstance(theirs, Described) and S.typed(theirs.descriptor) == ("ulong", int(cls.CODE))
    assert S.typed(theirs.value) == S.typed(_plain(d.value))
    # proton -> ours: proton writes the same described list, ours decodes it to the class
    wire = proton_encode(proton.Described(proton.ulong(int(cls.CODE)), to_proton(_plain(d.value))))
    back = T.decode(wire, spec.REGISTRY)
    assert type(back) is cls and back == value and back.problems == []
    assert back.encode() == wire


def _plain(value: Any) -> Any:
    """A described type's body with nested described types reduced to Described (proton has no classes)."""
    if isinstance(value, (Composite, Restricted)):
        d = value.to_described()
        return Described(d.descriptor, _plain(d.value))
    if isinstance(value, Array):
        return Array([_plain(v) for v in value], value.type, value.descriptor)
    if isinstance(value, Described):
        return Described(value.descriptor, _plain(value.value))
    if isinstance(value, dict):
        return Map((_plain(k), _plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return List(_plain(v) for v in value)
    if type(value) is int:  # a plain int in a field: the field's type decides (coercion happened in to_described)
        return value
    return value


# ============================================================================ messages

def _seconds(ms: Any) -> Any:
    return None if ms is None else ms / 1000


def _text(min_size: int = 0) -> st.SearchStrategy[str]:
    return st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=min_size, max_size=10)


_ascii = st.text(st.characters(min_codepoint=1, max_codepoint=127), min_size=1, max_size=10).map(T.Symbol)


@st.composite
def message_fields(draw: Any) -> dict[str, Any]:
    opt = lambda s: draw(st.one_of(st.none(), s))  # noqa: E731
    ms = st.integers(0, 1 << 40)
    return {
        "durable": draw(st.booleans()), "priority": draw(st.integers(0, 255)), "ttl": opt(st.integers(0, (1 << 32) - 1)),
        "first_acquirer": draw(st.booleans()), "delivery_count": draw(st.integers(0, (1 << 32) - 1)),
        "id": opt(st.one_of(st.integers(0, (1 << 64) - 1).map(T.ULong), _text(), st.binary(max_size=8),
                            st.uuids())),
        "user_id": opt(st.binary(min_size=1, max_size=10)), "address": opt(_text(1)),
        "subject": opt(_text(1)), "reply_to": opt(_text(1)),
        "correlation_id": opt(st.one_of(_text(), st.uuids())),
        "content_type": opt(_ascii), "content_encoding": opt(_ascii),
        "expiry_time": opt(ms), "creation_time": opt(ms), "group_id": opt(_text(1)),
        "group_sequence": opt(st.integers(0, (1 << 32) - 1)), "reply_to_group_id": opt(_text(1)),
        "properties": opt(st.dictionaries(_text(), S.primitive("long"), max_size=3)),
        "annotations": opt(st.dictionaries(S._symbol(8, valid=True), S.primitive("string"), max_size=3)),
        "instructions": opt(st.dictionaries(S._symbol(8, valid=True), S.primitive("uint"), max_size=3)),
        "body": draw(st.one_of(_text(), st.binary(max_size=20), st.lists(S.primitive("long"), max_size=3))),
    }


def _ours(f: dict[str, Any], data_body: bool) -> Message:
    body = spec.Data(f["body"]) if data_body else spec.AmqpValue(f["body"])
    return Message(
        header=spec.Header(durable=f["durable"], priority=f["priority"], ttl=f["ttl"], first_acquirer=f["first_acquirer"],
                           delivery_count=f["delivery_count"]),
        delivery_annotations=f["instructions"], message_annotations=f["annotations"],
        properties=spec.Properties(message_id=f["id"], user_id=f["user_id"], to=f["address"], subject=f["subject"],
                                   reply_to=f["reply_to"], correlation_id=f["correlation_id"], content_type=f["content_type"],
                                   content_encoding=f["content_encoding"], absolute_expiry_time=f["expiry_time"],
                                   creation_time=f["creation_time"], group_id=f["group_id"],
                                   group_sequence=f["group_sequence"], reply_to_group_id=f["reply_to_group_id"]),
        application_properties=f["properties"], body=body)


def _theirs(f: dict[str, Any], data_body: bool) -> Any:
    m = proton.Message(inferred=data_body)
    m.durable, m.priority, m.first_acquirer, m.delivery_count = f["durable"], f["priority"], f["first_acquirer"], f["delivery_count"]
    for ours, theirs in (("ttl", "ttl"), ("expiry_time", "expiry_time"), ("creation_time", "creation_time")):
        if f[ours] is not None:
            setattr(m, theirs, f[ours] / 1000)
    for name in ("id", "user_id", "address", "subject", "reply_to", "correlation_id", "group_id", "group_sequence",
                 "reply_to_group_id"):
        if f[name] is not None:
            setattr(m, name, to_proton(f[name]) if name == "id" else f[name])
    for name in ("content_type", "content_encoding"):
        if f[name] is not None:
            setattr(m, name, str(f[name]))
    if f["properties"] is not None:
        m.properties = {k: to_proton(v) for k, v in f["properties"].items()}
    if f["annotations"] is not None:
        m.annotations = {proton.symbol(k): to_proton(v) for k, v in f["annotations"].items()}
    if f["instructions"] is not None:
        m.instructions = {proton.symbol(k): proton.uint(v) for k, v in f["instructions"].items()}
    m.body = to_proton(f["body"])
    return m


NO_SYMBOL = proton.symbol("None")  # proton's reading of an absent content-type/-encoding


def _value(section: Any) -> Any:
    return section.value if isinstance(section, Restricted) else section


def _check_same(ours: Message, m: Any, f: dict[str, Any]) -> None:
    h, p = ours.header, ours.properties
    assert (bool(m.durable), m.priority, bool(m.first_acquirer), m.delivery_count) == \
        (bool(h.value_of("durable")), h.value_of("priority"), bool(h.value_of("first-acquirer")), h.value_of("delivery-count"))
    for ms_name, value in (("ttl", h.ttl), ("expiry_time", p.absolute_expiry_time), ("creation_time", p.creation_time)):
        theirs = getattr(m, ms_name)
        assert (round(theirs * 1000) if theirs else None) == (value or None), ms_name
    if isinstance(p.message_id, int):  # proton gives a ulong message-id back as a plain int
        assert m.id == int(p.message_id) and type(m.id) is int
    else:
        assert S.typed(from_proton(m.id)) == S.typed(p.message_id) if p.message_id is not None else m.id is None
    for theirs, ours_value in ((m.user_id, p.user_id), (m.address, p.to), (m.subject, p.subject), (m.reply_to, p.reply_to),
                               (m.correlation_id, p.correlation_id), (m.group_id, p.group_id),
                               (m.reply_to_group_id, p.reply_to_group_id)):
        assert (theirs or None) == (ours_value or None)
    for theirs, ours_value in ((m.content_type, p.content_type), (m.content_encoding, p.content_encoding)):
        assert theirs == (NO_SYMBOL if ours_value is None else ours_value)
    assert m.group_sequence == (p.group_sequence or 0)
    assert S.typed(from_proton(m.properties or {})) == S.typed(Map(_value(ours.application_properties) or {}))
    assert S.typed(from_proton(dict(m.annotations or {}))) == S.typed(Map(_value(ours.message_annotations) or {}))
    assert S.typed(from_proton(dict(m.instructions or {}))) == S.typed(Map(_value(ours.delivery_annotations) or {}))
    body = ours.body.value
    assert S.typed(from_proton(m.body)) == S.typed(body if not isinstance(body, list) else List(body))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=message_fields(), data_body=st.booleans())
def test_messages_ours_to_proton(f: dict[str, Any], data_body: bool) -> None:
    if data_body and not isinstance(f["body"], bytes):
        f["body"] = str(f["body"]).encode()
    ours = _ours(f, data_body)
    m = proton.Message()
    m.decode(ours.encode())
    _check_same(ours, m, f)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=message_fields(), data_body=st.booleans())
def test_messages_proton_to_ours(f: dict[str, Any], data_body: bool) -> None:
    if data_body and not isinstance(f["body"], bytes):
        f["body"] = str(f["body"]).encode()
    m = _theirs(f, data_body)
    wire = m.encode()
    ours = Message.decode(wire)
    assert ours.problems == [], ours.problems
    assert isinstance(ours.body, spec.Data if data_body else spec.AmqpValue)
    _check_same(ours, m, f)
    assert ours.encode() == wire, "re-encoding proton's message changed its octets"


def test_proton_message_quirks() -> None:
    wire = proton.Message(body=b"x").encode()
    assert Message.decode(wire).body == spec.AmqpValue(b"x")      # bytes -> amqp-value unless inferred
    assert Message.decode(proton.Message(body=b"x", inferred=True).encode()).body == spec.Data(b"x")
    assert wire.startswith(b"\x00\x53\x70\x45\x00\x53\x73\x45")  # empty header and properties always written
    assert proton.Message().content_type == proton.symbol("None")   # an absent content-type
    d = Data()
    d.decode(T.encode({b"k": None}))
    d.rewind()
    d.next()
    with pytest.raises(ValueError, match="memoryview"):
        d.get_object()
    d = Data()
    d.decode(T.encode([Described(T.ULong(0), Described(T.ULong(0), None)), None]))
    assert d.format().startswith(b"[@0 @0 null, nu")                  # read right by the C decoder
    d.rewind()
    d.next()
    assert len(d.get_object()) == 1                                     # one element lost by get_object
    with pytest.raises(proton.DataException):
        Data().decode(T.encode(Described(Described(T.ULong(1), T.ULong(2)), None)))
