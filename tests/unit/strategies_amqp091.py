"""Hypothesis strategies for AMQP 0-9-1 values, derived from the codec's own metadata.

Nothing here restates the protocol grammar: method arguments come from each generated
method's ``FIELDS`` (native ``Field.type``), content properties from
``spec.PROPERTIES[...].FIELDS``, and field-table values from a :class:`Dialect`'s
``codes`` (type code -> value kind). When the XML or a dialect changes, the strategies
follow. The fuzzer reuses this module, so it depends only on hypothesis and the codec.

Generated values are in the *decoded* form of the codec, so that ``decode(encode(x)) == x``
holds with plain ``==``:

* short strings are ``str``; arbitrary octets (invalid UTF-8 included) are carried by
  ``surrogateescape``, exactly as the decoder produces them;
* long strings are ``bytes`` (what the decoder returns for method arguments);
* tables are :class:`FieldTable` / arrays :class:`FieldArray` that already carry the type
  code of every value, so re-encoding reproduces the bytes (and every code of the dialect
  is exercised, not only the ones the encoder would infer);
* floats exclude NaN (NaN != NaN); everything else of the value space is allowed.

Per-type, per-domain and per-field strategies can be swapped (``types=``, ``domains=``,
``fields=``) to describe a peer that accepts less (see the pamqp cross-check).
"""
from __future__ import annotations

import decimal
import string
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp091 import spec
from amqpspec.wire.amqp091.base import Field, Method, Properties
from amqpspec.wire.amqp091.frames import (
    PROTOCOL_HEADER, BodyFrame, Frame, HeaderFrame, HeartbeatFrame, MethodFrame, ProtocolHeader,
)
from amqpspec.wire.amqp091.primitives import INT_BITS, SURROGATE
from amqpspec.wire.amqp091.table import SPEC, Dialect, FieldArray, FieldTable

SHORTSTR_MAX = 255
Strategies = Mapping[str, SearchStrategy[Any]]

__all__ = [
    "shortstr", "utf8_shortstr", "longstr", "unsigned", "channels", "native", "field_name", "field_value",
    "field_table", "field_array", "kind_values", "arguments", "method", "methods", "properties",
    "method_frame", "header_frame", "body_frame", "heartbeat_frame", "frames", "frame_stream",
    "canonical_longstr", "plain_table", "decimal_from",
]


# ----------------------------------------------------------------------------- strings

def _fits(limit: int) -> Callable[[str], bool]:
    return lambda s: len(s.encode("utf-8", SURROGATE)) <= limit


def utf8_shortstr(max_octets: int = SHORTSTR_MAX, alphabet: SearchStrategy[str] | None = None) -> SearchStrategy[str]:
    """Valid UTF-8 text of at most ``max_octets`` octets (ASCII-heavy, non-ASCII included)."""
    if alphabet is not None:
        return st.text(alphabet=alphabet, max_size=max_octets).filter(_fits(max_octets))
    return st.one_of(
        st.text(alphabet=string.printable, max_size=max_octets),
        # up to 4 octets per code point: max_octets // 4 characters always fit
        st.text(st.characters(exclude_categories=("Cs",)), max_size=max_octets // 4),
    )


def shortstr(max_octets: int = SHORTSTR_MAX) -> SearchStrategy[str]:
    """A short string as the decoder returns it: any octets, invalid UTF-8 surrogate-escaped."""
    return st.one_of(
        utf8_shortstr(max_octets),
        st.binary(max_size=max_octets).map(lambda b: b.decode("utf-8", SURROGATE)),
    )


def longstr(max_octets: int = 512) -> SearchStrategy[bytes]:
    """A long string argument as the decoder returns it (bytes); UTF-8 text included."""
    return st.one_of(
        st.binary(max_size=max_octets),
        st.text(max_size=max_octets // 4).map(lambda s: s.encode("utf-8")),
    )


def canonical_longstr(raw: bytes) -> str | bytes:
    """How a field-table long string decodes: ``str`` when valid UTF-8, else the bytes."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def unsigned(bits: int) -> SearchStrategy[int]:
    """Any unsigned integer of the width, with the edges drawn often."""
    top = (1 << bits) - 1
    return st.one_of(st.sampled_from((0, 1, top - 1, top)), st.integers(0, top))


def native(type_: str, dialect: Dialect = SPEC, *, types: Strategies | None = None) -> SearchStrategy[Any]:
    """A valid value of a native field type (``Field.type``: bit, octet, ..., table)."""
    if types and type_ in types:
        return types[type_]
    if type_ == "bit":
        return st.booleans()
    if type_ in INT_BITS:
        return unsigned(INT_BITS[type_])
    if type_ == "shortstr":
        return shortstr()
    if type_ == "longstr":
        return longstr()
    if type_ == "table":
        return field_table(dialect)
    raise ValueError(f"no strategy for native type {type_!r}")


# ----------------------------------------------------------------------------- field tables

_SIGNED = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}
_UNSIGNED = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64}


def decimal_from(scale: int, number: int) -> decimal.Decimal:
    """The value of a decimal field as the decoder builds it (scale octet, signed 32-bit number)."""
    return decimal.Decimal(number).scaleb(-scale)


def kind_values(kind: str) -> SearchStrategy[Any] | None:
    """Decoded values of one scalar value kind of a dialect; None for table/array."""
    if kind == "bool":
        return st.booleans()
    if kind in _SIGNED:
        n = _SIGNED[kind]
        return st.one_of(st.sampled_from((-(1 << (n - 1)), -1, 0, (1 << (n - 1)) - 1)),
                         st.integers(-(1 << (n - 1)), (1 << (n - 1)) - 1))
    if kind in _UNSIGNED:
        return unsigned(_UNSIGNED[kind])
    if kind == "timestamp":
        return unsigned(64)
    if kind == "float32":
        return st.floats(width=32, allow_nan=False)
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "decimal":
        return st.builds(decimal_from, st.integers(0, 255), st.integers(-(1 << 31), (1 << 31) - 1))
    if kind == "shortstr":
        return shortstr()
    if kind == "longstr":
        return longstr(256).map(canonical_longstr)
    if kind == "bytes":
        return st.binary(max_size=256)
    if kind == "void":
        return st.none()
    if kind in ("table", "array"):
        return None
    raise ValueError(f"no strategy for value kind {kind!r}")


def field_name() -> SearchStrategy[str]:
    """A table field name: mostly identifier-like, sometimes any short string."""
    return st.one_of(st.text(string.ascii_letters + string.digits + "$#_-", min_size=1, max_size=12), shortstr())


def _build_table(items: list[tuple[str, tuple[str, Any]]]) -> FieldTable:
    table = FieldTable()
    for name, (code, value) in items:
        if name not in table:
            table[name] = value
            table.codes[name] = code
    return table


def _build_array(items: list[tuple[str, Any]]) -> FieldArray:
    arr = FieldArray(v for _, v in items)
    arr.codes = [c for c, _ in items]
    return arr


def field_value(dialect: Dialect = SPEC, *, max_leaves: int = 12, names: SearchStrategy[str] | None = None,
                kinds: Strategies | None = None) -> SearchStrategy[tuple[str, Any]]:
    """(type code, decoded value) for every code the dialect defines, nested to any depth.

    ``kinds`` replaces the strategy of a value kind (e.g. ``{"timestamp": ...}``); a kind
    mapped to ``st.nothing()`` is never drawn.
    """
    names = field_name() if names is None else names
    scalars = []
    table_codes, array_codes = [], []
    for code, kind in sorted(dialect.codes.items()):
        if kind == "table":
            table_codes.append(code)
        elif kind == "array":
            array_codes.append(code)
        else:
            values = kinds[kind] if kinds and kind in kinds else kind_values(kind)
            assert values is not None
            if not values.is_empty:
                scalars.append(st.tuples(st.just(code), values))

    def extend(children: SearchStrategy[tuple[str, Any]]) -> SearchStrategy[tuple[str, Any]]:
        table = st.lists(st.tuples(names, children), max_size=5).map(_build_table)
        array = st.lists(children, max_size=5).map(_build_array)
        out = []
        if table_codes:
            out.append(st.tuples(st.sampled_from(table_codes), table))
        if array_codes:
            out.append(st.tuples(st.sampled_from(array_codes), array))
        return st.one_of(out)

    return st.recursive(st.one_of(scalars), extend, max_leaves=max_leaves)


def field_table(dialect: Dialect = SPEC, *, max_leaves: int = 12, names: SearchStrategy[str] | None = None,
                kinds: Strategies | None = None, max_size: int = 6) -> SearchStrategy[FieldTable]:
    """A top-level field table (possibly empty) with a code remembered for each value."""
    names = field_name() if names is None else names
    value = field_value(dialect, max_leaves=max_leaves, names=names, kinds=kinds)
    return st.lists(st.tuples(names, value), max_size=max_size).map(_build_table)


def field_array(dialect: Dialect = SPEC, *, max_leaves: int = 12, kinds: Strategies | None = None) -> SearchStrategy[FieldArray]:
    value = field_value(dialect, max_leaves=max_leaves, kinds=kinds)
    return st.lists(value, max_size=6).map(_build_array)


def plain_table(value: Any) -> Any:
    """A decoded table/array as plain dict/list (drops the remembered codes)."""
    if isinstance(value, dict):
        return {k: plain_table(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_table(v) for v in value]
    return value


# ----------------------------------------------------------------------------- methods, properties

def _field_strategy(f: Field, dialect: Dialect, types: Strategies | None, domains: Strategies | None,
                    fields: Strategies | None) -> SearchStrategy[Any]:
    if fields and f.attr in fields:
        return fields[f.attr]
    if domains and f.domain in domains:
        return domains[f.domain]
    return native(f.type, dialect, types=types)


def arguments(cls: type[Method] | type[Properties], dialect: Dialect = SPEC, *, types: Strategies | None = None,
              domains: Strategies | None = None, fields: Strategies | None = None) -> SearchStrategy[dict[str, Any]]:
    """Keyword arguments for every field of a method (or properties) class."""
    return st.fixed_dictionaries({f.attr: _field_strategy(f, dialect, types, domains, fields) for f in cls.FIELDS})


def method(cls: type[Method], dialect: Dialect = SPEC, **overrides: Any) -> SearchStrategy[Method]:
    """An instance of one method class with valid arguments; see :func:`arguments`."""
    return arguments(cls, dialect, **overrides).map(lambda kw: cls(**kw))


def methods(dialect: Dialect = SPEC, classes: list[type[Method]] | None = None, **overrides: Any) -> SearchStrategy[Method]:
    """Any method of the codec (``spec.METHODS``), each class equally likely."""
    classes = list(spec.METHODS.values()) if classes is None else classes
    return st.one_of([method(c, dialect, **overrides) for c in classes])


def properties(cls: type[Properties] = spec.BasicProperties, dialect: Dialect = SPEC, *, types: Strategies | None = None,
               domains: Strategies | None = None, fields: Strategies | None = None) -> SearchStrategy[Properties]:
    """Any subset of the class's properties present (absent = None); bit properties are True."""
    def one(f: Field) -> SearchStrategy[Any]:
        if f.type == "bit":
            return st.one_of(st.none(), st.just(True))
        return st.one_of(st.none(), _field_strategy(f, dialect, types, domains, fields))
    return st.fixed_dictionaries({f.attr: one(f) for f in cls.FIELDS}).map(lambda kw: cls(**kw))


# ----------------------------------------------------------------------------- frames

def channels() -> SearchStrategy[int]:
    return unsigned(16)


def method_frame(dialect: Dialect = SPEC, **overrides: Any) -> SearchStrategy[MethodFrame]:
    return st.builds(MethodFrame, channels(), methods(dialect, **overrides))


def header_frame(dialect: Dialect = SPEC, **overrides: Any) -> SearchStrategy[HeaderFrame]:
    def build(channel: int, class_id: int, body_size: int, weight: int, data: st.DataObject) -> HeaderFrame:
        props = data.draw(properties(spec.PROPERTIES[class_id], dialect, **overrides))
        return HeaderFrame(channel, class_id, body_size, props, weight=weight)
    return st.builds(build, channels(), st.sampled_from(sorted(spec.PROPERTIES)), unsigned(64), unsigned(16), st.data())


def body_frame(max_octets: int = 2048) -> SearchStrategy[BodyFrame]:
    return st.builds(BodyFrame, channels(), st.binary(max_size=max_octets))


def heartbeat_frame() -> SearchStrategy[HeartbeatFrame]:
    # a heartbeat is sent on channel 0 with no payload (4.2.7); anything else is a malformation
    return st.just(HeartbeatFrame(0))


def frames(dialect: Dialect = SPEC, *, max_body: int = 2048, **overrides: Any) -> SearchStrategy[Frame]:
    """Any valid frame: method, content header, content body or heartbeat."""
    return st.one_of(method_frame(dialect, **overrides), header_frame(dialect, **overrides),
                     body_frame(max_body), heartbeat_frame())


def frame_stream(dialect: Dialect = SPEC, *, max_frames: int = 8, max_body: int = 2048,
                 **overrides: Any) -> SearchStrategy[tuple[list[Any], bytes]]:
    """(items, bytes): an optional protocol header followed by valid frames, and their encoding."""
    def build(header: bool, items: list[Frame]) -> tuple[list[Any], bytes]:
        seq: list[Any] = ([ProtocolHeader(PROTOCOL_HEADER)] if header else []) + list(items)
        return seq, b"".join(x.encode(dialect) for x in seq)
    return st.builds(build, st.booleans(), st.lists(frames(dialect, max_body=max_body, **overrides), max_size=max_frames))
