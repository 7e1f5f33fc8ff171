"""Hypothesis strategies for AMQP 1.0, derived from the codec's own metadata.

Nothing here restates the spec: primitive values come from ``types.BY_TYPE`` (the encodings
of the XML: widths, signedness through the value classes), composite values from each
generated class's ``FIELDS`` (``accepts``, ``composites``, ``choices``, ``multiple``,
``mandatory``), frames from ``spec.PERFORMATIVES`` / ``spec.SASL_FRAMES``. When the XML
changes, the strategies follow. The codec's tests and the fuzzer (``amqpspec.fuzz``) share
this one module.

Values are generated in the *decoded* form (typed: ``UInt(5)``, ``Symbol("x")``, ``List``,
``Array`` of typed elements), so that ``typed(decode(encode(x))) == typed(x)``; floats exclude
NaN. :func:`typed` is the strict comparison: it keeps the AMQP type of every value (``UInt(1)``
and ``Long(1)`` are equal as Python ints, not as AMQP values).

The second half of the module draws *malformations* through the codec's wrappers
(``Sized``, ``Counted``, ``Encoded``, ``Retyped``, ``Raw``) and the frame and composite
overrides: sizes and counts that lie, constructors the XML does not define, zero-width
arrays that claim billions of elements, nesting past the decoder's limit, invalid UTF-8,
truncation, wrong descriptors, fields of the wrong type, broken frame headers.
"""
from __future__ import annotations

import dataclasses
import functools
import struct
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp10 import spec
from amqpspec.wire.amqp10 import types as T
from amqpspec.wire.amqp10.composite import Composite, Field, Restricted
from amqpspec.wire.amqp10.frames import (
    AMQP_HEADER, SASL_HEADER, AMQPFrame, EmptyFrame, Frame, ProtocolHeader, RawFrame, SASLFrame,
)
from amqpspec.wire.amqp10.types import (
    UNDESCRIBED, Array, Char, Counted, Described, Encoded, Encoding, Float, List, Map, Pairs, Raw, Retyped, Sized,
    Symbol, ULong,
)

SCALAR_TYPES = tuple(t for t, encs in T.BY_TYPE.items() if encs[-1].category in ("fixed", "variable") and t != "list")
COMPOUND_TYPES = ("list", "map", "array")
TEXT_MAX = 40          # octets of most strings: keeps list8/map8 reachable
LONG_TEXT = 300        # sometimes longer than 255, to reach the 32-bit size encodings

__all__ = [
    "primitive", "fitting", "values", "encoded_values", "hashable", "typed", "composite", "described_types",
    "field_value", "frames", "frame_stream", "message", "SCALAR_TYPES",
    # malformations
    "UNDEFINED_CONSTRUCTORS", "ZERO_WIDTH", "UNDEFINED_FRAME_TYPES", "lying", "invalid_utf8", "zero_width_array",
    "deep_nesting", "malformed_value", "malformed_composite", "wrong_field", "truncated_frame", "frame_overrides",
]


#: strategies are immutable, and building one (above all a recursive one) costs far more than
#: drawing from it: the constructors below that targets call while drawing (inside flatmap,
#: ``st.data()``, composites) build each distinct strategy once
_cached = functools.lru_cache(maxsize=4096)


# ----------------------------------------------------------------------------- scalars

def _int_range(t: str) -> tuple[int, int]:
    widest = T.BY_TYPE[t][-1]
    if t in T._INTEGER_TYPES:
        return T._int_range(widest)
    return 0, 1 << (8 * widest.width)  # decimal32/64/128: the raw bits


@_cached
def _ints(t: str, lo: int, hi: int) -> SearchStrategy[Any]:
    cls = T._INT_CLASS[t]
    edges = sorted({lo, lo + 1, hi - 2, hi - 1, 0, 1, 255, 256} & set(range(lo, hi)) if hi - lo < 1 << 20 else
                   {v for v in (lo, lo + 1, hi - 2, hi - 1, 0, 1, 255, 256, -1, -128, 127, 128) if lo <= v < hi})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi - 1)).map(cls)


@_cached
def _text(max_octets: int, *, valid: bool) -> SearchStrategy[str]:
    s = st.text(st.characters(exclude_categories=("Cs",)), max_size=max_octets // 4)
    if valid:
        return s
    # what a peer's invalid UTF-8 decodes to: surrogate-escaped, re-encodes to the same octets
    return st.one_of(s, st.binary(max_size=max_octets).map(lambda b: b.decode("utf-8", T.SURROGATE)))


@_cached
def _symbol(max_octets: int, *, valid: bool) -> SearchStrategy[Symbol]:
    s = st.text(st.characters(max_codepoint=127, exclude_categories=("Cs",)), max_size=max_octets)
    if not valid:
        s = st.one_of(s, st.binary(max_size=max_octets).map(lambda b: b.decode("ascii", T.SURROGATE)))
    return s.map(Symbol)


@_cached
def primitive(t: str, *, valid_text: bool = True, max_octets: int = TEXT_MAX) -> SearchStrategy[Any]:
    """Any value of a scalar primitive type, in decoded form."""
    if t == "null":
        return st.none()
    if t == "boolean":
        return st.booleans()
    if t in T._INT_CLASS:
        return _ints(t, *_int_range(t))
    if t == "float":
        return st.floats(width=32, allow_nan=False).map(Float)
    if t == "double":
        return st.floats(allow_nan=False)
    if t == "char":
        return st.characters(exclude_categories=("Cs",)).map(Char)
    if t == "uuid":
        return st.uuids()
    if t == "binary":
        return st.one_of(st.binary(max_size=max_octets), st.binary(min_size=256, max_size=LONG_TEXT))
    if t == "string":
        return _text(max_octets, valid=valid_text)
    if t == "symbol":
        return _symbol(max_octets, valid=valid_text)
    raise ValueError(f"no scalar strategy for {t!r}")


@_cached
def fitting(enc: Encoding, *, valid_text: bool = True) -> SearchStrategy[Any]:
    """Values that this one encoding can hold (a smalluint: 0..255; vbin8: up to 255 octets)."""
    if enc.zero_width:
        return st.just(T._implied(enc))
    if enc.type in T._INT_CLASS:
        lo, hi = T._int_range(enc) if enc.type in T._INTEGER_TYPES else (0, 1 << (8 * enc.width))
        return _ints(enc.type, lo, hi)
    if enc.category == "variable":
        if enc.type == "binary":
            return st.binary(max_size=255) if enc.width == 1 else st.binary(max_size=LONG_TEXT)
        limit = 255 if enc.width == 1 else LONG_TEXT
        base = primitive(enc.type, valid_text=valid_text, max_octets=limit)
        return base.filter(lambda s: len(T._to_text_bytes(s, enc.type, "x")) <= limit)
    if enc.category == "fixed":
        return primitive(enc.type, valid_text=valid_text)
    raise ValueError(f"fitting() is for scalar encodings, not {enc.name}")


@_cached
def hashable(*, valid_text: bool = True, types: tuple[str, ...] = SCALAR_TYPES) -> SearchStrategy[Any]:
    """Scalar values usable as map keys (NaN excluded, so keys compare equal to themselves)."""
    return st.one_of([primitive(t, valid_text=valid_text) for t in types])


# ----------------------------------------------------------------------------- compound values

@_cached
def _array(element_types: tuple[str, ...], *, valid_text: bool, described: bool) -> SearchStrategy[Array]:
    @st.composite
    def build(draw: Any) -> Array:
        t = draw(st.sampled_from(element_types))
        items = draw(st.lists(primitive(t, valid_text=valid_text), max_size=4))
        descriptor = UNDESCRIBED
        if described and draw(st.booleans()):
            descriptor = draw(_descriptor())
        return Array(items, type=t, descriptor=descriptor)
    return build()


@_cached
def _descriptor() -> SearchStrategy[Any]:
    """A descriptor the spec does not define (those decode to the generated classes)."""
    return st.one_of(st.integers(0, (1 << 64) - 1).map(ULong), _symbol(20, valid=True)).filter(
        lambda d: d not in spec.REGISTRY)


@_cached
def values(*, max_leaves: int = 12, valid_text: bool = True, described: bool = True,
           array_types: tuple[str, ...] = SCALAR_TYPES, key_types: tuple[str, ...] = SCALAR_TYPES) -> SearchStrategy[Any]:
    """Any AMQP value in decoded form: scalars, lists, maps, arrays, described values."""
    leaves = st.one_of([primitive(t, valid_text=valid_text) for t in SCALAR_TYPES])

    def extend(children: SearchStrategy[Any]) -> SearchStrategy[Any]:
        options = [
            st.lists(children, max_size=5).map(List),
            st.lists(st.tuples(hashable(valid_text=valid_text, types=key_types), children), max_size=4).map(Map),
            _array(array_types, valid_text=valid_text, described=described),
        ]
        if described:
            options.append(st.builds(Described, _descriptor(), children))
        return st.one_of(options)

    return st.recursive(leaves, extend, max_leaves=max_leaves)


@_cached
def encoded_values(*, max_leaves: int = 10) -> SearchStrategy[Any]:
    """Values written with a random valid encoding at every level (``Encoded`` wrappers), so that
    decoding and re-encoding must remember each width to give the same octets back."""
    scalar_encs = [e for e in T.BY_CODE.values() if e.category in ("fixed", "variable") and e.type != "list"]
    leaves = st.sampled_from(scalar_encs).flatmap(
        lambda e: fitting(e, valid_text=False).map(lambda v, e=e: Encoded(v, e.name)))

    def wrap(kind: str) -> Any:
        narrow, wide = [e.name for e in T.BY_TYPE[kind] if not e.zero_width]

        def choose(value: Any, want_wide: bool) -> Any:
            if not want_wide:
                try:
                    T.encode(Encoded(value, narrow))
                    return Encoded(value, narrow)
                except T.EncodeError:
                    pass
            return Encoded(value, wide)
        return choose

    def extend(children: SearchStrategy[Any]) -> SearchStrategy[Any]:
        arrays = st.sampled_from([e for e in scalar_encs if not e.zero_width or e.type == "null"]).flatmap(
            lambda e: st.lists(fitting(e, valid_text=False), max_size=3).map(lambda xs, e=e: Array(xs, type=e.name)))
        return st.one_of(
            st.builds(wrap("list"), st.lists(children, max_size=4), st.booleans()),
            st.builds(wrap("map"), st.lists(st.tuples(hashable(valid_text=False), children), max_size=3).map(Map),
                      st.booleans()),
            st.builds(wrap("array"), arrays, st.booleans()),
            st.builds(Described, _descriptor(), children),
            st.just(Encoded([], "list0")),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


# ----------------------------------------------------------------------------- strict comparison

def _scalar_typed(t: str, v: Any) -> Any:
    if t in T._INT_CLASS:
        return (t, int(v))
    if t == "float":
        return (t, struct.pack(">f", v))
    if t == "double":
        return (t, struct.pack(">d", v))
    if t in ("string", "symbol", "binary"):
        return (t, T._to_text_bytes(v, t, "x"))
    if t == "char":
        return (t, str(v))
    return (t, v)


def typed(value: Any) -> Any:
    """A structure that keeps each value's AMQP type, for strict equality of decoded values."""
    if isinstance(value, Encoded):
        enc = T.encoding(value.encoding)
        if enc.type in COMPOUND_TYPES:
            return typed(value.value)
        return _scalar_typed(enc.type, value.value)
    if isinstance(value, Composite):
        return (value.NAME, tuple(typed(getattr(value, f.attr)) for f in value.FIELDS), typed(value.extra))
    if isinstance(value, Restricted):
        return (value.NAME, typed(value.value))
    if isinstance(value, Described):
        return ("described", typed(value.descriptor), typed(value.value))
    if isinstance(value, Array):
        desc = None if value.descriptor is UNDESCRIBED else typed(value.descriptor)
        scalar = value.type in SCALAR_TYPES
        return ("array", value.type, desc, tuple(_scalar_typed(value.type, v) if scalar else typed(v) for v in value))
    if isinstance(value, T.Key):
        return typed(value.value)
    if isinstance(value, dict):
        return ("map", tuple((typed(k), typed(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("list", tuple(typed(v) for v in value))
    return _scalar_typed(T.type_of(value), value)


# ----------------------------------------------------------------------------- described types

described_types: tuple[type, ...] = spec.DESCRIBED


@_cached
def _simple_values() -> SearchStrategy[Any]:
    return st.one_of([primitive(t) for t in SCALAR_TYPES if t != "null"])


@_cached
def _map_for(field: Field) -> SearchStrategy[Any]:
    keys = _symbol(20, valid=True) if field.symbol_keys else st.one_of(_text(20, valid=True), hashable())
    return st.dictionaries(keys, _simple_values(), max_size=3).map(Map)


@_cached
def _of_type(t: str, field: Field, depth: int) -> SearchStrategy[Any]:
    if t == "map":
        return _map_for(field)
    if t == "list":
        return st.lists(_simple_values(), max_size=3).map(List)
    if t == "array":
        return _array(SCALAR_TYPES, valid_text=True, described=False)
    if t == "*":
        return values(max_leaves=4)
    return primitive(t)


@_cached
def field_value(field: Field, depth: int = 0) -> SearchStrategy[Any]:
    """A valid value of one field (or None where the field may be absent)."""
    if field.choices is not None:
        base: SearchStrategy[Any] = st.sampled_from(field.choices.values())
    else:
        options = [_of_type(a, field, depth) for a in field.accepts]
        if depth < 3:
            options += [composite(spec.BY_NAME[n], depth + 1) for n in field.composites]
        base = st.one_of(options) if options else (values(max_leaves=4) if not field.composites else st.none())
    if field.multiple and len(field.accepts) == 1 and field.accepts[0] in T.BY_TYPE:
        t = field.accepts[0]
        arrays = st.lists(primitive(t), min_size=1 if field.mandatory else 0, max_size=3).map(
            lambda xs, t=t: Array(xs, type=t))
        base = st.one_of(base, arrays)
    if field.mandatory:
        return base
    return st.one_of(st.none(), base)


_COMPOSITE_CACHE: dict[tuple[type, int], SearchStrategy[Any]] = {}


def composite(cls: type, depth: int = 0) -> SearchStrategy[Any]:
    """A valid instance of a generated class, every mandatory field set."""
    key = (cls, depth)
    if key not in _COMPOSITE_CACHE:
        if issubclass(cls, Restricted):
            field = cls.VALUE_FIELD
            if cls.PRIMITIVE == "*":
                inner = values(max_leaves=6)
            elif cls is spec.ApplicationProperties:  # string keys, simple values (messaging 3.2.5 prose)
                inner = st.dictionaries(_text(20, valid=True), _simple_values(), max_size=3).map(Map)
            else:
                inner = _of_type(cls.PRIMITIVE, field, depth)
            _COMPOSITE_CACHE[key] = inner.map(cls)
        else:
            strategies = {f.attr: field_value(f, depth) for f in cls.FIELDS}
            _COMPOSITE_CACHE[key] = st.fixed_dictionaries(strategies).map(lambda kw, cls=cls: cls(**kw))
    return _COMPOSITE_CACHE[key]


def message() -> SearchStrategy[Any]:
    from amqpspec.wire.amqp10.message import Message

    body = st.one_of(
        composite(spec.AmqpValue),
        st.lists(composite(spec.Data), min_size=1, max_size=3),
        st.lists(composite(spec.AmqpSequence), min_size=1, max_size=2),
    )
    opt = lambda cls: st.one_of(st.none(), composite(cls))  # noqa: E731
    return st.builds(Message, header=opt(spec.Header), delivery_annotations=opt(spec.DeliveryAnnotations),
                     message_annotations=opt(spec.MessageAnnotations), properties=opt(spec.Properties),
                     application_properties=opt(spec.ApplicationProperties), body=body, footer=opt(spec.Footer))


# ----------------------------------------------------------------------------- frames

channels = st.one_of(st.sampled_from([0, 1, 65535]), st.integers(0, 65535))


def frames() -> SearchStrategy[Frame]:
    amqp = st.builds(AMQPFrame, channels, st.sampled_from(spec.PERFORMATIVES).flatmap(composite))
    transfer = st.builds(AMQPFrame, channels, composite(spec.Transfer), st.binary(min_size=1, max_size=200))
    sasl = st.builds(SASLFrame, st.sampled_from(spec.SASL_FRAMES).flatmap(composite))
    return st.one_of(amqp, transfer, sasl, st.builds(EmptyFrame, channels))


@st.composite
def frame_stream(draw: Any, max_frames: int = 4) -> tuple[list[Any], bytes]:
    """(items, octets): an optional header, frames, and a header again after each sasl-outcome."""
    items: list[Any] = []
    if draw(st.booleans()):
        items.append(ProtocolHeader(draw(st.sampled_from([AMQP_HEADER, SASL_HEADER]))))
    for f in draw(st.lists(frames(), max_size=max_frames)):
        items.append(f)
        if isinstance(f, SASLFrame) and isinstance(f.body, spec.SaslOutcome):
            items.append(ProtocolHeader(AMQP_HEADER))
    return items, b"".join(i.encode() for i in items)


# ============================================================================= malformations
#
# Inputs a correct peer never sends, built from the encodings of the XML and the codec's
# override wrappers; every one encodes without error.

#: constructor octets no encoding of the XML defines (0x00 introduces a described value)
UNDEFINED_CONSTRUCTORS: tuple[int, ...] = tuple(c for c in range(1, 256) if c not in T.BY_CODE)
#: encodings whose values take no octets: an array of them costs nothing per element
ZERO_WIDTH: tuple[Encoding, ...] = tuple(e for e in T.BY_CODE.values() if e.zero_width)
#: frame types the transport does not define (2.3.1: 0x00 AMQP, 0x01 SASL)
UNDEFINED_FRAME_TYPES: tuple[int, ...] = tuple(range(2, 256))
_U32 = struct.Struct(">I")


def _widest(kind: str) -> Encoding:
    return [e for e in T.BY_TYPE[kind] if not e.zero_width][-1]


@_cached
def lying(actual: int, bits: int = 32) -> SearchStrategy[int]:
    """A size or count of ``bits`` bits that is NOT ``actual``: off by one, zero, the maximum."""
    top = (1 << bits) - 1
    edges = sorted({v for v in (actual + 1, actual - 1, 0, 1, top, 1 << (bits - 1), 2 * actual + 1)
                    if 0 <= v <= top and v != actual})
    return st.one_of(st.sampled_from(edges), st.integers(0, top).filter(lambda n: n != actual))


@_cached
def invalid_utf8(max_octets: int = 24) -> SearchStrategy[bytes]:
    """Octets that are not UTF-8 (a stray continuation, an overlong form, a surrogate, 0xFF)."""
    bad = st.sampled_from([b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xff"])
    text = st.text(st.characters(max_codepoint=127, exclude_categories=("Cs",)), max_size=max_octets // 2).map(str.encode)
    return st.builds(lambda a, b, c: a + b + c, text, bad, text)


@_cached
def zero_width_array() -> SearchStrategy[Raw]:
    """An array of a zero-width element type (null, true, uint0, list0...) claiming far more
    elements than any decoder should materialise; its octets are a handful either way."""
    def build(enc: Encoding, wide: bool, count: int) -> Raw:
        arr = _widest("array") if wide else T.BY_TYPE["array"][0]
        if arr.width == 1:
            count &= 0xFF
            return Raw(bytes((arr.code, 2, count, enc.code)))
        return Raw(bytes((arr.code,)) + _U32.pack(5) + _U32.pack(count) + bytes((enc.code,)))
    counts = st.one_of(st.sampled_from((T.MAX_ZERO_WIDTH + 1, 1 << 31, (1 << 32) - 1)), st.integers(0, (1 << 32) - 1))
    return st.builds(build, st.sampled_from(ZERO_WIDTH), st.booleans(), counts)


@_cached
def deep_nesting() -> SearchStrategy[Raw]:
    """Lists, arrays or described values nested past the decoder limit (``MAX_DEPTH``)."""
    lst, arr = _widest("list"), _widest("array")

    def build(kind: str, depth: int) -> Raw:
        if kind == "described":
            return Raw(b"\x00\x53\x01" * depth + b"\x40")  # descriptor smallulong 1, again and again, then null
        inner = b"\x40" if kind == "list" else bytes((T.BY_TYPE["list"][0].code,))
        for _ in range(depth):
            if kind == "list":
                body = _U32.pack(1) + inner
                inner = bytes((lst.code,)) + _U32.pack(len(body)) + body
            else:  # an array whose one element is the array below, constructor shared
                body = _U32.pack(1) + (bytes((arr.code,)) if inner[:1] == bytes((arr.code,)) else inner[:1]) + inner[1:]
                inner = bytes((arr.code,)) + _U32.pack(len(body)) + body
        return Raw(inner)
    return st.builds(build, st.sampled_from(("list", "array", "described")),
                     st.integers(T.MAX_DEPTH + 1, 8 * T.MAX_DEPTH))


@_cached
def _variable_or_compound() -> SearchStrategy[tuple[Any, Encoding]]:
    """(value, its widest encoding) for types with a size field."""
    kinds = [k for k in T.BY_TYPE if T.BY_TYPE[k][-1].category in ("variable", "compound", "array")]

    def value_of(kind: str) -> SearchStrategy[Any]:
        if kind == "list":
            return st.lists(hashable(), max_size=3).map(List)
        if kind == "map":
            return st.lists(st.tuples(hashable(), hashable()), max_size=2).map(Map)
        if kind == "array":
            return _array(SCALAR_TYPES, valid_text=True, described=False)
        return primitive(kind)
    return st.sampled_from(kinds).flatmap(lambda k: value_of(k).map(lambda v, k=k: (v, _widest(k))))


def _size_of(value: Any, enc: Encoding) -> tuple[int, int | None]:
    """(size, count) the encoder writes for ``value`` in ``enc``."""
    data = T.encode(Encoded(value, enc.name))
    size = int.from_bytes(data[1:1 + enc.width], "big")
    count = int.from_bytes(data[1 + enc.width:1 + 2 * enc.width], "big") if enc.category != "variable" else None
    return size, count


@_cached
def malformed_value() -> SearchStrategy[Any]:
    """One AMQP value written wrong: a size or count that lies, a constructor that no type
    defines or that belongs to another type, a zero-width array claiming billions of elements,
    nesting past the limit, invalid UTF-8 in a string, a non-ASCII symbol, a boolean octet other
    than 0 or 1, a char beyond U+10FFFF, a map with an odd count or a repeated key, a value cut
    short."""
    sized = _variable_or_compound().flatmap(lambda ve: lying(_size_of(*ve)[0]).map(
        lambda n, ve=ve: Encoded(Sized(ve[0], n), ve[1].name)))
    counted = _variable_or_compound().filter(lambda ve: ve[1].category != "variable").flatmap(
        lambda ve: lying(_size_of(*ve)[1] or 0).map(lambda n, ve=ve: Encoded(Counted(ve[0], n), ve[1].name)))
    defined_other = [e.code for e in T.BY_CODE.values()]
    retyped = st.tuples(hashable(), st.sampled_from(UNDEFINED_CONSTRUCTORS + tuple(defined_other))).map(
        lambda t: Retyped(t[0], t[1]))
    boolean = [e for e in T.BY_TYPE["boolean"] if e.width == 1][0]
    char = T.BY_TYPE["char"][0]
    odd_map = st.lists(st.tuples(hashable(), hashable()), min_size=1, max_size=3).map(Map).map(
        lambda m: Encoded(Counted(m, 2 * len(m) - 1), _widest("map").name))
    truncated = values(max_leaves=4).map(T.encode).filter(lambda b: len(b) > 1).flatmap(
        lambda b: st.integers(1, len(b) - 1).map(lambda k, b=b: Raw(b[:k])))
    return st.one_of(
        sized, counted, retyped, zero_width_array(), deep_nesting(), odd_map, truncated,
        invalid_utf8().map(lambda b: Encoded(b, _widest("string").name)),
        st.binary(min_size=1, max_size=12).filter(lambda b: max(b) > 0x7F).map(lambda b: Encoded(b, _widest("symbol").name)),
        st.integers(2, 255).map(lambda v: Raw(bytes((boolean.code, v)))),
        st.one_of(st.integers(0x110000, 0xFFFFFFFF), st.integers(0xD800, 0xDFFF)).map(
            lambda cp: Raw(bytes((char.code,)) + _U32.pack(cp))),
        st.tuples(hashable(), hashable(), hashable()).map(lambda t: Pairs([(t[0], t[1]), (t[0], t[2])])),
    )


@_cached
def wrong_field(cls: type) -> SearchStrategy[Any]:
    """A valid instance of the composite ``cls`` with one field replaced: by a value of another
    type, by a malformed value, or -- for a mandatory field -- by null."""
    if not getattr(cls, "FIELDS", ()):
        return composite(cls)

    def change(obj: Any, data: Any) -> Any:
        f = data.draw(st.sampled_from(cls.FIELDS))
        options = [values(max_leaves=3), malformed_value()]
        if f.mandatory:
            options.append(st.none())
        return obj.replace(**{f.attr: data.draw(st.one_of(options))})
    return st.builds(change, composite(cls), st.data())


@_cached
def malformed_composite(cls: type) -> SearchStrategy[Any]:
    """The described type ``cls`` written wrong as a whole: another type's or an undefined
    descriptor, a size or count that lies, list0 holding fields, more elements than fields,
    a body that is not a list at all -- or one field wrong (:func:`wrong_field`)."""
    others = [c.CODE for c in described_types if c is not cls]
    descriptor = st.one_of(st.sampled_from(others), st.integers(0, (1 << 64) - 1).map(ULong),
                           _symbol(20, valid=True))

    def overridden(obj: Any, data: Any) -> Any:
        ways = ("descriptor", "size", "count", "list0", "fields", "body") if isinstance(obj, Composite) \
            else ("descriptor", "body")
        how = data.draw(st.sampled_from(ways))
        if how == "descriptor":
            return obj.override(descriptor=data.draw(descriptor))
        if how == "size":
            return obj.override(size=data.draw(lying(len(T.encode(obj)))), encoding=_widest("list").name)
        if how == "count":
            return obj.override(count=data.draw(lying(len(getattr(obj, "FIELDS", ())))), encoding=_widest("list").name)
        if how == "list0":  # the empty-list constructor in front of elements
            return obj.override(body=Retyped(List([None]), T.BY_TYPE["list"][0].code))
        if how == "fields":
            return obj.override(fields=data.draw(st.integers(len(cls.FIELDS) + 1, len(cls.FIELDS) + 4)), nulls=True)
        return obj.override(body=data.draw(st.one_of(hashable(), malformed_value())))
    return st.one_of(st.builds(overridden, composite(cls), st.data()), wrong_field(cls))


def truncated_frame(f: Frame) -> SearchStrategy[RawFrame]:
    """The frame with its body cut short; SIZE and DOFF correct for what is left."""
    body = f.encode_body()
    if not body:
        return st.nothing()
    ftype = f.TYPE if f.frame_type is None else f.frame_type
    return st.integers(0, len(body) - 1).map(lambda k: RawFrame(f.channel, type=ftype, data=body[:k]))


def frame_overrides(f: Frame, *, channels_: SearchStrategy[int] | None = None) -> SearchStrategy[Frame]:
    """The frame with its header written wrong, one or more of: a SIZE that lies (below the
    8-octet header, above what follows, 4 GiB), a DOFF below 2 or past the end, an undefined
    type, extended-header octets, another channel."""
    return _overridden_frame(f, len(f.encode()), channels_ if channels_ is not None else channels)


_OVERRIDE_KINDS = st.lists(st.sampled_from(("size", "doff", "type", "extended", "channel")), min_size=1, max_size=2,
                           unique=True)


@st.composite
def _overridden_frame(draw: Any, f: Frame, n: int, channels_: SearchStrategy[int]) -> Frame:
    # one composite for every frame (defining one per call cost hypothesis a reflection pass)
    changes: dict[str, Any] = {}
    for kind in draw(_OVERRIDE_KINDS):
        if kind == "size":
            changes["size"] = draw(st.one_of(st.integers(0, 7), lying(n)))
        elif kind == "doff":
            changes["doff"] = draw(st.one_of(st.integers(0, 1), st.integers(n // 4 + 1, 255), st.integers(0, 255)))
        elif kind == "type":
            changes["frame_type"] = draw(st.sampled_from(UNDEFINED_FRAME_TYPES))
        elif kind == "extended":
            changes["extended"] = draw(st.binary(min_size=1, max_size=16))
        else:
            changes["channel"] = draw(channels_)
    return dataclasses.replace(f, **changes)
