"""Hypothesis strategies for AMQP 1.0 values, derived from the codec's own metadata.

Nothing here restates the spec: primitive values come from ``types.BY_TYPE`` (the encodings
of the XML: widths, signedness through the value classes), composite values from each
generated class's ``FIELDS`` (``accepts``, ``composites``, ``choices``, ``multiple``,
``mandatory``), frames from ``spec.PERFORMATIVES`` / ``spec.SASL_FRAMES``. When the XML
changes, the strategies follow. The fuzzer can reuse this module: it needs only hypothesis
and the codec.

Values are generated in the *decoded* form (typed: ``UInt(5)``, ``Symbol("x")``, ``List``,
``Array`` of typed elements), so that ``typed(decode(encode(x))) == typed(x)``; floats exclude
NaN. :func:`typed` is the strict comparison: it keeps the AMQP type of every value (``UInt(1)``
and ``Long(1)`` are equal as Python ints, not as AMQP values).
"""
from __future__ import annotations

import struct
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp10 import spec
from amqpspec.wire.amqp10 import types as T
from amqpspec.wire.amqp10.composite import Composite, Field, Restricted
from amqpspec.wire.amqp10.frames import (
    AMQP_HEADER, SASL_HEADER, AMQPFrame, EmptyFrame, Frame, ProtocolHeader, SASLFrame,
)
from amqpspec.wire.amqp10.types import (
    UNDESCRIBED, Array, Char, Described, Encoded, Encoding, Float, List, Map, Symbol, ULong,
)

SCALAR_TYPES = tuple(t for t, encs in T.BY_TYPE.items() if encs[-1].category in ("fixed", "variable") and t != "list")
COMPOUND_TYPES = ("list", "map", "array")
TEXT_MAX = 40          # octets of most strings: keeps list8/map8 reachable
LONG_TEXT = 300        # sometimes longer than 255, to reach the 32-bit size encodings

__all__ = [
    "primitive", "fitting", "values", "encoded_values", "hashable", "typed", "composite", "described_types",
    "field_value", "frames", "frame_stream", "message", "SCALAR_TYPES",
]


# ----------------------------------------------------------------------------- scalars

def _int_range(t: str) -> tuple[int, int]:
    widest = T.BY_TYPE[t][-1]
    if t in T._INTEGER_TYPES:
        return T._int_range(widest)
    return 0, 1 << (8 * widest.width)  # decimal32/64/128: the raw bits


def _ints(t: str, lo: int, hi: int) -> SearchStrategy[Any]:
    cls = T._INT_CLASS[t]
    edges = sorted({lo, lo + 1, hi - 2, hi - 1, 0, 1, 255, 256} & set(range(lo, hi)) if hi - lo < 1 << 20 else
                   {v for v in (lo, lo + 1, hi - 2, hi - 1, 0, 1, 255, 256, -1, -128, 127, 128) if lo <= v < hi})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi - 1)).map(cls)


def _text(max_octets: int, *, valid: bool) -> SearchStrategy[str]:
    s = st.text(st.characters(exclude_categories=("Cs",)), max_size=max_octets // 4)
    if valid:
        return s
    # what a peer's invalid UTF-8 decodes to: surrogate-escaped, re-encodes to the same octets
    return st.one_of(s, st.binary(max_size=max_octets).map(lambda b: b.decode("utf-8", T.SURROGATE)))


def _symbol(max_octets: int, *, valid: bool) -> SearchStrategy[Symbol]:
    s = st.text(st.characters(max_codepoint=127, exclude_categories=("Cs",)), max_size=max_octets)
    if not valid:
        s = st.one_of(s, st.binary(max_size=max_octets).map(lambda b: b.decode("ascii", T.SURROGATE)))
    return s.map(Symbol)


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


def hashable(*, valid_text: bool = True, types: tuple[str, ...] = SCALAR_TYPES) -> SearchStrategy[Any]:
    """Scalar values usable as map keys (NaN excluded, so keys compare equal to themselves)."""
    return st.one_of([primitive(t, valid_text=valid_text) for t in types])


# ----------------------------------------------------------------------------- compound values

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


def _descriptor() -> SearchStrategy[Any]:
    """A descriptor the spec does not define (those decode to the generated classes)."""
    return st.one_of(st.integers(0, (1 << 64) - 1).map(ULong), _symbol(20, valid=True)).filter(
        lambda d: d not in spec.REGISTRY)


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


def _simple_values() -> SearchStrategy[Any]:
    return st.one_of([primitive(t) for t in SCALAR_TYPES if t != "null"])


def _map_for(field: Field) -> SearchStrategy[Any]:
    keys = _symbol(20, valid=True) if field.symbol_keys else st.one_of(_text(20, valid=True), hashable())
    return st.dictionaries(keys, _simple_values(), max_size=3).map(Map)


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
