"""Hypothesis strategies for AMQP 0-9-1, derived from the codec's own metadata.

Nothing here restates the protocol grammar: method arguments come from each generated
method's ``FIELDS`` (native ``Field.type``), content properties from
``spec.PROPERTIES[...].FIELDS``, field-table values from a :class:`Dialect`'s ``codes``
(type code -> value kind), frame types from the spec's frame constants. When the XML or a
dialect changes, the strategies follow. The codec's round-trip tests and the fuzzer
(``amqpspec.fuzz``) share this one module, so there is no second grammar to keep in step.

Two families:

*Valid values* are generated in the *decoded* form of the codec, so that
``decode(encode(x)) == x`` holds with plain ``==``:

* short strings are ``str``; arbitrary octets (invalid UTF-8 included) are carried by
  ``surrogateescape``, exactly as the decoder produces them;
* long strings are ``bytes`` (what the decoder returns for method arguments);
* tables are :class:`FieldTable` / arrays :class:`FieldArray` that already carry the type
  code of every value, so re-encoding reproduces the bytes (and every code of the dialect
  is exercised, not only the ones the encoder would infer);
* floats exclude NaN (NaN != NaN); everything else of the value space is allowed.

Per-type, per-domain and per-field strategies can be swapped (``types=``, ``domains=``,
``fields=``) to describe a peer that accepts less (see the pamqp cross-check).

*Malformations* (the second half of the module) say what to write wrong through the codec's
override wrappers -- ``Sized`` (a length that lies), ``Raw`` (exact octets), ``FieldValue``
with an undefined code, frame ``size``/``end``/``frame_type``/``channel`` overrides -- so
every malformed input is still built from the same field definitions: lying lengths and
counts, undefined type codes, truncation, oversize, invalid UTF-8, nesting past the limit,
the type codes the two dialects read differently (the ``s`` conflict), broken contents.
"""
from __future__ import annotations

import decimal
from dataclasses import replace
import string
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp091 import spec
from amqpspec.wire.amqp091.base import Field, Method, Properties
from amqpspec.wire.amqp091.base import UnknownMethod
from amqpspec.wire.amqp091.frames import (
    FRAME_END, FRAME_OVERHEAD, FRAME_TYPE_NAMES, PROTOCOL_HEADER, BodyFrame, Frame, HeaderFrame, HeartbeatFrame,
    MethodFrame, ProtocolHeader, RawFrame,
)
from amqpspec.wire.amqp091.primitives import INT_BITS, INT_STRUCTS, SURROGATE, U32
from amqpspec.wire.amqp091.table import (
    DIALECTS, MAX_DEPTH, SPEC, Dialect, FieldArray, FieldTable, FieldValue, encode_array, encode_table,
)
from amqpspec.wire.raw import Raw, Sized

SHORTSTR_MAX = 255
Strategies = Mapping[str, SearchStrategy[Any]]

__all__ = [
    "shortstr", "utf8_shortstr", "longstr", "unsigned", "channels", "native", "field_name", "field_value",
    "field_table", "field_array", "kind_values", "arguments", "method", "methods", "properties",
    "method_frame", "header_frame", "body_frame", "heartbeat_frame", "frames", "frame_stream",
    "canonical_longstr", "plain_table", "decimal_from",
    # malformations
    "UNDEFINED_FRAME_TYPES", "DIALECT_CONFLICTS", "lying_length", "invalid_utf8", "bad_shortstr", "bad_longstr",
    "bad_field_name", "bad_table", "bad_array", "nested_bytes", "malformed_value", "malformable",
    "malformed_method", "unknown_method", "truncated", "frame_overrides", "sized_body_frame", "content_sequence",
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


# ============================================================================= malformations
#
# Everything below builds inputs a correct peer never sends, through the codec's override
# wrappers, so that each one is still derived from the field definitions and encodes
# without error. A strategy's docstring says what is wrong with what it draws.

#: frame types the spec does not define (4.2.3): every octet but method, header, body, heartbeat
UNDEFINED_FRAME_TYPES: tuple[int, ...] = tuple(t for t in range(256) if t not in FRAME_TYPE_NAMES)
_LEN_BITS = {"shortstr": 8, "longstr": 32, "table": 32, "array": 32}


def _dialect_conflicts() -> tuple[tuple[str, Dialect, Dialect], ...]:
    """(code, writer, reader): type codes that two dialects read differently, or one lacks."""
    unique = list({id(d): d for d in DIALECTS.values()}.values())
    out = []
    for a in unique:
        for b in unique:
            if a is b:
                continue
            for code, kind in sorted(a.codes.items()):
                if b.codes.get(code) != kind:
                    out.append((code, a, b))
    return tuple(out)


#: the 's' conflict and its relatives, computed from the dialects (RabbitMQ errata, section 3)
DIALECT_CONFLICTS = _dialect_conflicts()


def lying_length(actual: int, bits: int) -> SearchStrategy[int]:
    """A length prefix of ``bits`` bits that is NOT ``actual``: off by one either way, zero,
    half or all of the range (a length no frame can hold), or anything else."""
    top = (1 << bits) - 1
    edges = sorted({v for v in (actual + 1, actual - 1, 0, 1, top, top // 2 + 1, 2 * actual + 1)
                    if 0 <= v <= top and v != actual})
    return st.one_of(st.sampled_from(edges), st.integers(0, top).filter(lambda n: n != actual))


def invalid_utf8(max_octets: int = 32) -> SearchStrategy[bytes]:
    """Octets that are not UTF-8: a stray continuation octet, an overlong form, a surrogate, a
    truncated sequence or 0xFF, put somewhere inside otherwise valid text."""
    bad = st.sampled_from([b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xff", b"\xf8\x88\x80\x80\x80"])
    text = st.text(string.ascii_letters, max_size=max_octets // 2).map(str.encode)
    return st.builds(lambda a, b, c: a + b + c, text, bad, text)


def bad_shortstr() -> SearchStrategy[Any]:
    """A short string written wrong: a length octet that lies, more than 255 octets behind a
    length that wrapped, invalid UTF-8, or a binary zero (4.2.5.3: "may not contain")."""
    lying = shortstr(64).flatmap(
        lambda s: lying_length(len(s.encode("utf-8", SURROGATE)), 8).map(lambda n, s=s: Sized(s, n)))
    oversize = st.binary(min_size=256, max_size=700).map(lambda b: Sized(b, len(b) & 0xFF))
    return st.one_of(lying, oversize, invalid_utf8().map(lambda b: b.decode("utf-8", SURROGATE)),
                     st.text(string.ascii_letters, max_size=8).map(lambda s: s + "\x00" + s))


def bad_longstr() -> SearchStrategy[Any]:
    """A long string whose 32-bit length lies (up to 4 GiB announced for a few octets)."""
    return longstr(64).flatmap(lambda b: lying_length(len(b), 32).map(lambda n, b=b: Sized(b, n)))


def bad_field_name() -> SearchStrategy[str]:
    """A field name 4.2.5.5 forbids: empty, starting with a digit or '-', longer than 128."""
    return st.one_of(st.just(""), st.text("0123456789-_.", min_size=1, max_size=8),
                     st.text(string.ascii_letters, min_size=129, max_size=255))


def nested_bytes(depth: int, dialect: Dialect = SPEC, *, arrays: bool = False, outer: str = "table") -> bytes:
    """A table nested ``depth`` levels deep (the innermost, empty table at depth ``depth``), as
    octets: the encoder refuses to go past ``MAX_DEPTH`` itself, so nesting beyond the limit is
    written directly. With ``arrays``, every other level is an array holding the level below,
    the outermost one being ``outer`` ("table" or "array"). Every type code names what really
    follows it, so the only thing wrong with the octets is the depth."""
    first_array = 0 if outer == "array" else 1  # parity, counted from the outermost level
    codes = {"table": dialect.code_for("table").encode("latin-1"), "array": dialect.code_for("array").encode("latin-1")}
    inner, kind = b"\x00\x00\x00\x00", "table"
    for level in range(depth):
        if arrays and (depth - 1 - level) % 2 == first_array:
            body, outer = codes[kind] + inner, "array"           # an array of one value: the level below
        else:
            body, outer = b"\x01n" + codes[kind] + inner, "table"  # a table of one field 'n': the level below
        inner, kind = U32.pack(len(body)) + body, outer
    return inner


def _undefined_codes(dialect: Dialect) -> list[str]:
    return [chr(c) for c in range(256) if chr(c) not in dialect.codes]


def _truncated_value(dialect: Dialect) -> SearchStrategy[FieldValue]:
    """A defined type code followed by fewer octets than its value needs."""
    usable = sorted((code, _KIND_WIDTH[kind]) for code, kind in dialect.codes.items() if kind in _KIND_WIDTH)
    return st.sampled_from(usable).flatmap(
        lambda cn: st.integers(0, cn[1] - 1).map(lambda k, c=cn[0]: FieldValue(c, Raw(bytes(k)))))


_KIND_WIDTH = {"bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
               "uint64": 8, "float32": 4, "float64": 8, "timestamp": 8, "decimal": 5}


def bad_table(dialect: Dialect = SPEC) -> SearchStrategy[Any]:
    """A field table written wrong: its length lies, a value carries an undefined type code or
    fewer octets than its code needs, a name is illegal or repeated, nesting goes past the
    limit, or a value is written in another dialect's reading of its code (the 's' conflict)."""
    def lying(t: FieldTable) -> SearchStrategy[Any]:
        return lying_length(len(encode_table(t, dialect)) - 4, 32).map(lambda n: Sized(t, n))

    undefined = st.tuples(field_name(), st.sampled_from(_undefined_codes(dialect)), st.binary(max_size=16)).map(
        lambda t: {t[0]: FieldValue(t[1], t[2])})
    truncated = st.tuples(field_name(), _truncated_value(dialect)).map(lambda t: {t[0]: t[1]})
    names = st.tuples(bad_field_name(), field_value(dialect, max_leaves=2)).map(
        lambda t: {t[0]: FieldValue(*t[1])})
    duplicate = st.tuples(field_name(), field_value(dialect, max_leaves=2), field_value(dialect, max_leaves=2)).map(
        lambda t: [(t[0], FieldValue(*t[1])), (t[0], FieldValue(*t[2]))])
    deep = st.tuples(st.integers(MAX_DEPTH + 1, 4 * MAX_DEPTH), st.booleans()).map(
        lambda t: Raw(nested_bytes(t[0], dialect, arrays=t[1])))
    options = [field_table(dialect, max_leaves=4).flatmap(lying), undefined, truncated, names, duplicate, deep]
    conflicts = [(code, writer) for code, writer, reader in DIALECT_CONFLICTS if reader is dialect]
    if conflicts:
        options.append(st.sampled_from(conflicts).flatmap(lambda cw: _written_in(cw[0], cw[1])))
    return st.one_of(options)


def _written_in(code: str, writer: Dialect) -> SearchStrategy[Raw]:
    """A one-entry table whose value is encoded as ``writer`` reads ``code``, as exact octets."""
    values = kind_values(writer.codes[code])
    if values is None:  # a table or array kind: an empty one
        values = st.just(FieldTable() if writer.codes[code] == "table" else FieldArray())
    return st.tuples(field_name(), values).map(
        lambda t: Raw(encode_table([(t[0], FieldValue(code, t[1]))], writer)))


def bad_array(dialect: Dialect = SPEC) -> SearchStrategy[Any]:
    """A field array written wrong: its length lies, an element has an undefined or truncated
    code, or it nests past the limit."""
    def lying(a: FieldArray) -> SearchStrategy[Any]:
        return lying_length(len(encode_array(a, dialect)) - 4, 32).map(lambda n: Sized(a, n))

    undefined = st.tuples(st.sampled_from(_undefined_codes(dialect)), st.binary(max_size=16)).map(
        lambda t: [FieldValue(t[0], t[1])])
    deep = st.integers(MAX_DEPTH + 1, 4 * MAX_DEPTH).map(
        lambda d: Raw(nested_bytes(d, dialect, arrays=True, outer="array")))
    return st.one_of(field_array(dialect, max_leaves=4).flatmap(lying), undefined,
                     _truncated_value(dialect).map(lambda v: [v]), deep)


def malformable(f: Field) -> bool:
    """Whether a field can be written wrong on its own (a bit shares its octet with others)."""
    return f.type != "bit"


def malformed_value(f: Field, dialect: Dialect = SPEC) -> SearchStrategy[Any]:
    """A wrong encoding for one method argument or property, chosen by its native type: lying
    or oversized strings, broken tables, and integers cut short (fewer octets than the type
    has, which shifts every field after them)."""
    if f.type == "shortstr":
        return bad_shortstr()
    if f.type == "longstr":
        return bad_longstr()
    if f.type == "table":
        return st.one_of(bad_table(dialect), bad_array(dialect).map(lambda a: Raw(encode_array(a, dialect))
                                                                     if not isinstance(a, Raw) else a))
    if f.type in INT_STRUCTS:
        width = INT_STRUCTS[f.type].size
        return st.binary(max_size=width - 1).map(Raw)
    raise ValueError(f"field {f.name} ({f.type}) cannot be malformed on its own")


def malformed_method(cls: type[Method], dialect: Dialect = SPEC, **overrides: Any) -> SearchStrategy[Method]:
    """A method of ``cls`` with valid arguments except one or two written wrong."""
    fields = [f for f in cls.FIELDS if malformable(f)]
    if not fields:
        return st.nothing()

    @st.composite
    def build(draw: Any) -> Method:
        kw = draw(arguments(cls, dialect, **overrides))
        for f in draw(st.lists(st.sampled_from(fields), min_size=1, max_size=2, unique_by=lambda f: f.attr)):
            kw[f.attr] = draw(malformed_value(f, dialect))
        return cls(**kw)
    return build()


def unknown_method() -> SearchStrategy[UnknownMethod]:
    """A class-id / method-id pair the spec does not define (an unknown class, or an unknown
    method of a known class), with arbitrary argument octets."""
    known = set(spec.METHODS)
    classes = sorted(spec.CLASS_NAMES)
    unknown_class = st.integers(0, 0xFFFF).filter(lambda c: c not in spec.CLASS_NAMES)
    ids = st.one_of(st.tuples(unknown_class, unsigned(16)), st.tuples(st.sampled_from(classes), unsigned(16)))
    return st.tuples(ids.filter(lambda t: (t[0] << 16 | t[1]) not in known), st.binary(max_size=32)).map(
        lambda t: UnknownMethod(t[0][0], t[0][1], t[1]))


def truncated(frame: Frame, dialect: Dialect = SPEC) -> SearchStrategy[RawFrame]:
    """The frame with its payload cut short, size field and frame-end correct for what is left."""
    payload = frame.payload(dialect)
    if not payload:
        return st.nothing()
    return st.integers(0, len(payload) - 1).map(
        lambda k: RawFrame(frame.channel, type=frame.TYPE, data=payload[:k]))


def frame_overrides(frame: Frame, dialect: Dialect = SPEC, *, channels_: SearchStrategy[int] | None = None) -> SearchStrategy[Frame]:
    """The frame with its envelope written wrong, one or more of: an undefined type, a size
    field that lies, a bad or missing frame-end, another channel."""
    n = len(frame.payload(dialect))
    kinds = st.lists(st.sampled_from(("type", "size", "end", "channel")), min_size=1, max_size=2, unique=True)
    ends = st.one_of(st.sampled_from((0x00, 0xCD, 0xCF, b"", b"\xce\xce")),
                     st.integers(0, 255).filter(lambda e: e != FRAME_END))

    @st.composite
    def build(draw: Any) -> Frame:
        changes: dict[str, Any] = {}
        for kind in draw(kinds):
            if kind == "type":
                changes["frame_type"] = draw(st.sampled_from(UNDEFINED_FRAME_TYPES))
            elif kind == "size":
                changes["size"] = draw(lying_length(n, 32))
            elif kind == "end":
                changes["end"] = draw(ends)
            else:
                changes["channel"] = draw(channels_ if channels_ is not None else channels())
        return replace(frame, **changes)
    return build()


def sized_body_frame(channel: int, total: int) -> BodyFrame:
    """A body frame of exactly ``total`` octets, header and frame-end included."""
    return BodyFrame(channel, bytes(max(0, total - FRAME_OVERHEAD)))


# ----------------------------------------------------------------------------- contents

CONTENT_FAULTS = ("body-size", "no-header", "no-method", "cut-body", "class-id", "property-flags", "weight",
                  "header-channel-0", "body-channel-0", "body-other-channel", "second-header", "oversized-body",
                  "heartbeat-inside", "raw-properties")


@st.composite
def content_sequence(draw: Any, channel: int = 1, frame_max: int = 4096, *, faults: bool = True,
                     routing_keys: SearchStrategy[str] | None = None, dialect: Dialect = SPEC,
                     props: SearchStrategy[Properties] | None = None) -> list[Frame]:
    """basic.publish, a content header and body frames (4.2.6) -- and with ``faults`` one or two
    of: a body-size that does not match the bodies, a missing header or method, a body cut off
    (the content aborted mid-body), a header of another class, undefined property-flag bits,
    a non-zero weight, content frames on channel 0 or another channel, a second header, a body
    frame over frame-max, a heartbeat between the frames (valid), property octets that lie."""
    chunk = max(1, frame_max - FRAME_OVERHEAD)
    body = draw(st.one_of(st.binary(max_size=64), st.binary(max_size=3 * chunk)))
    props_ = draw(props if props is not None else properties(spec.BasicProperties, dialect))
    key = draw(routing_keys if routing_keys is not None else st.text(string.ascii_lowercase, max_size=12))
    publish = MethodFrame(channel, spec.BasicPublish(exchange="", routing_key=key, mandatory=draw(st.booleans())))
    header = HeaderFrame(channel, 60, len(body), props_)
    bodies: list[Frame] = [BodyFrame(channel, body[i:i + chunk]) for i in range(0, len(body), chunk)]
    frames: list[Frame] = [publish, header, *bodies]
    if not faults:
        return frames
    for fault in draw(st.lists(st.sampled_from(CONTENT_FAULTS), min_size=1, max_size=2, unique=True)):
        header_at = next((i for i, f in enumerate(frames) if isinstance(f, HeaderFrame)), None)
        body_at = [i for i, f in enumerate(frames) if isinstance(f, BodyFrame)]
        if fault == "body-size" and header_at is not None:
            h = frames[header_at]
            frames[header_at] = replace(h, body_size=draw(lying_length(h.body_size, 64)))
        elif fault == "no-header" and header_at is not None:
            del frames[header_at]
        elif fault == "no-method":
            frames = [f for f in frames if f is not publish]
        elif fault == "cut-body" and body_at:
            keep = draw(st.integers(0, len(body_at) - 1))
            frames = frames[:body_at[keep]] + [BodyFrame(channel, frames[body_at[keep]].data[:draw(
                st.integers(0, max(0, len(frames[body_at[keep]].data) - 1)))])]
        elif fault == "class-id" and header_at is not None:
            other = draw(st.one_of(st.sampled_from(sorted(c for c in spec.CLASS_NAMES if c not in spec.PROPERTIES)),
                                   unsigned(16).filter(lambda c: c not in spec.PROPERTIES)))
            frames[header_at] = replace(frames[header_at], class_id=other, properties=None)
        elif fault == "property-flags" and header_at is not None:
            frames[header_at] = replace(frames[header_at], property_flags=draw(_undefined_flags()))
        elif fault == "weight" and header_at is not None:
            frames[header_at] = replace(frames[header_at], weight=draw(st.integers(1, 0xFFFF)))
        elif fault == "header-channel-0" and header_at is not None:
            frames[header_at] = replace(frames[header_at], channel=0)
        elif fault == "body-channel-0" and body_at:
            frames[body_at[0]] = replace(frames[body_at[0]], channel=0)
        elif fault == "body-other-channel" and body_at:
            frames[body_at[-1]] = replace(frames[body_at[-1]], channel=draw(st.integers(2, 0xFFFF)))
        elif fault == "second-header" and header_at is not None:
            frames.insert(draw(st.integers(header_at + 1, len(frames))), replace(frames[header_at]))
        elif fault == "oversized-body":
            extra = draw(st.integers(1, frame_max))
            frames.append(sized_body_frame(channel, frame_max + extra))
        elif fault == "heartbeat-inside":
            frames.insert(draw(st.integers(1, len(frames))), HeartbeatFrame(0))
        elif fault == "raw-properties" and header_at is not None:
            frames[header_at] = replace(frames[header_at], raw_properties=draw(st.binary(max_size=24)))
    # "no-method" and "no-header" of an empty body leave nothing to send: a stimulus of no octets
    # tests nothing, so the publish stays (a content begun and never sent)
    return frames or [publish]


def _undefined_flags() -> SearchStrategy[list[int]]:
    """Property-flags words with a bit set past the defined basic properties, or a continuation
    into a second word of nothing but undefined bits."""
    defined = len(spec.BasicProperties.FIELDS)
    spare = [1 << (15 - i) for i in range(defined, 15)]  # bits of the first word no property uses
    words = [st.builds(lambda extra: [extra], st.sampled_from(spare))] if spare else []
    words.append(st.builds(lambda w: [0x0001, w & 0xFFFE or 0x8000], unsigned(16)))
    return st.one_of(words)
