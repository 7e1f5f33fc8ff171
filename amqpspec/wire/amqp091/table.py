"""Field tables and field arrays (spec 4.2.5.5), in both readings of the type codes.

The 0-9-1 grammar and the code deployed by RabbitMQ and Qpid disagree on some type codes
(RabbitMQ errata, section 3): ``s`` is a short string in the spec but a signed 16-bit
integer in RabbitMQ/Qpid; ``l`` is unsigned 64-bit in the spec but signed in RabbitMQ;
``U``/``L`` exist only in the spec and ``x`` (byte array) only in RabbitMQ. Both readings
are selectable as a :class:`Dialect`; decoded tables remember the code of every value so
that re-encoding reproduces the input byte for byte.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import struct
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from amqpspec.wire.errors import DecodeError, EncodeError
from amqpspec.wire.raw import Raw, Sized
from amqpspec.wire.amqp091.primitives import SURROGATE, U32, enc_longstr, enc_shortstr

MAX_DEPTH = 64  # nesting of tables/arrays; deeper input is refused, not recursed into

# value kinds a type code can map to
_FIXED = {
    "bool": struct.Struct(">B"),
    "int8": struct.Struct(">b"),
    "uint8": struct.Struct(">B"),
    "int16": struct.Struct(">h"),
    "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"),
    "uint32": struct.Struct(">I"),
    "int64": struct.Struct(">q"),
    "uint64": struct.Struct(">Q"),
    "float32": struct.Struct(">f"),
    "float64": struct.Struct(">d"),
    "timestamp": struct.Struct(">Q"),
}
_INT_RANGE = {
    "int8": (-(1 << 7), 1 << 7), "uint8": (0, 1 << 8),
    "int16": (-(1 << 15), 1 << 15), "uint16": (0, 1 << 16),
    "int32": (-(1 << 31), 1 << 31), "uint32": (0, 1 << 32),
    "int64": (-(1 << 63), 1 << 63), "uint64": (0, 1 << 64),
    "timestamp": (0, 1 << 64),
}
_DECIMAL = struct.Struct(">Bi")  # scale octet + signed 32-bit value (errata: signed)


@dataclass(frozen=True)
class Dialect:
    """A mapping of field-value type codes to value kinds."""

    name: str
    codes: Mapping[str, str]  # code -> kind

    def kind(self, code: str) -> str | None:
        return self.codes.get(code)

    def code_for(self, kind: str) -> str:
        for code, k in self.codes.items():
            if k == kind:
                return code
        raise EncodeError(f"the {self.name} dialect has no type code for {kind} values")


# The grammar of spec 4.2.1 (field-value production).
SPEC = Dialect("amqp0-9-1", {
    "t": "bool", "b": "int8", "B": "uint8", "U": "int16", "u": "uint16",
    "I": "int32", "i": "uint32", "L": "int64", "l": "uint64",
    "f": "float32", "d": "float64", "D": "decimal", "s": "shortstr", "S": "longstr",
    "A": "array", "T": "timestamp", "F": "table", "V": "void",
})
# The Qpid/RabbitMQ column of the errata table (what RabbitMQ sends and accepts).
RABBITMQ = Dialect("rabbitmq", {
    "t": "bool", "b": "int8", "B": "uint8", "s": "int16", "u": "uint16",
    "I": "int32", "i": "uint32", "l": "int64",
    "f": "float32", "d": "float64", "D": "decimal", "S": "longstr",
    "A": "array", "T": "timestamp", "F": "table", "V": "void", "x": "bytes",
})
DIALECTS = {"spec": SPEC, "amqp0-9-1": SPEC, "rabbitmq": RABBITMQ, "qpid": RABBITMQ}


@dataclass(frozen=True)
class FieldValue:
    """A value with an explicit type code, e.g. ``FieldValue("s", 7)`` or ``FieldValue("Z", b"..")``.

    With a code the dialect does not know, ``value`` must be bytes and is written verbatim
    after the code: that is how a case sends an undefined type code.
    """

    code: str
    value: Any


class FieldTable(dict):
    """A decoded table: a dict of plain values that also remembers each value's type code.

    ``duplicates`` lists names that appeared more than once (spec: illegal, behaviour
    undefined); the dict keeps the last value, the codes keep the last code.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codes: dict[str, str] = {}
        self.duplicates: list[str] = []


class FieldArray(list):
    """A decoded array that remembers each element's type code."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.codes: list[str] = []


TableInput = Mapping[str, Any] | Iterable[tuple[str, Any]] | Raw | Sized | None


# ----------------------------------------------------------------------------- per-dialect lookups

_DECODE_FIXED = dict(_FIXED, bool=struct.Struct(">?"))  # '?' reads any non-zero octet as True
_LOOKUPS: dict[int, tuple[Dialect, dict[str, str], dict[int, tuple[str, str, struct.Struct | None]]]] = {}
_LEN8 = [bytes((n,)) for n in range(256)]
_NO_KEY: Any = object()


def _lookups(dialect: Dialect) -> tuple[Dialect, dict[str, str], dict[int, tuple[str, str, struct.Struct | None]]]:
    """(dialect, kind -> first code, octet -> (code, kind, fixed-width struct)), built once per dialect.

    Dialects are treated as immutable: their ``codes`` are read the first time they are used.
    """
    entry = _LOOKUPS.get(id(dialect))
    if entry is None or entry[0] is not dialect:
        by_kind: dict[str, str] = {}
        for code, kind in dialect.codes.items():
            by_kind.setdefault(kind, code)
        by_octet = {ord(c): (c, k, _DECODE_FIXED.get(k)) for c, k in dialect.codes.items() if len(c) == 1 and ord(c) < 256}
        if len(_LOOKUPS) > 64:  # dialects made on the fly (fuzzing): keep the cache small
            _LOOKUPS.clear()
        entry = _LOOKUPS[id(dialect)] = (dialect, by_kind, by_octet)
    return entry


def _label(what: str, key: Any) -> str:
    """The path of a table entry or array element in messages, built only when one is needed."""
    return what if key is _NO_KEY else f"{what}[{key!r}]"


# ----------------------------------------------------------------------------- encoding

# exact Python type -> value kind; subclasses and other types go through _infer_kind
_INFER_EXACT: dict[type, str] = {
    bool: "bool", float: "float64", str: "longstr", bytes: "longstr", dict: "table", FieldTable: "table",
    list: "array", FieldArray: "array", tuple: "array", type(None): "void", decimal.Decimal: "decimal",
    _dt.datetime: "timestamp",
}


def _infer_kind(value: Any, what: str) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, decimal.Decimal):
        return "decimal"
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return "longstr"
    if isinstance(value, _dt.datetime):
        return "timestamp"
    if isinstance(value, Mapping) or isinstance(value, FieldTable):
        return "table"
    if isinstance(value, (list, tuple)):
        return "array"
    if value is None:
        return "void"
    raise EncodeError(f"{what}: no field type for {type(value).__name__} values; wrap it in FieldValue(code, ...)")


def _infer_code(value: Any, dialect: Dialect, what: str, key: Any = _NO_KEY, by_kind: dict[str, str] | None = None) -> str:
    if by_kind is None:
        by_kind = _lookups(dialect)[1]
    kind = "int" if value.__class__ is int else _INFER_EXACT.get(value.__class__)
    if kind is None:
        kind = _infer_kind(value, _label(what, key))
    if kind == "int":
        if -(1 << 31) <= value < (1 << 31):
            kind = "int32"
        elif -(1 << 63) <= value < (1 << 63):
            kind = "int64"
        else:
            kind = "uint64" if "uint64" in by_kind else "int64"
    code = by_kind.get(kind)
    if code is None:
        raise EncodeError(f"the {dialect.name} dialect has no type code for {kind} values")
    return code


def encode_value(code: str, value: Any, dialect: Dialect, depth: int, what: str, key: Any = _NO_KEY) -> bytes:
    """Encodes the value part (after the type code); ``what[key]`` names it in errors."""
    if isinstance(value, Raw):
        return bytes(value.data)
    kind = dialect.codes.get(code)
    if kind is None:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)  # undefined code on purpose: payload verbatim
        raise EncodeError(f"{_label(what, key)}: type code {code!r} is not defined in the {dialect.name} dialect; give bytes to send it verbatim")
    if kind == "longstr" or kind == "bytes":
        if value.__class__ is str:
            try:
                data = value.encode("utf-8", SURROGATE)
            except UnicodeEncodeError:
                return enc_longstr(value, _label(what, key))  # raises, naming the entry
        elif value.__class__ is bytes:
            data = value
        else:
            return enc_longstr(value, _label(what, key))
        if len(data) < 1 << 32:
            return U32.pack(len(data)) + data
        return enc_longstr(data, _label(what, key))
    if kind in _INT_RANGE:
        if kind == "timestamp" and isinstance(value, _dt.datetime):
            value = int(value.timestamp())
        lo, hi = _INT_RANGE[kind]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value < hi:
            raise EncodeError(f"{_label(what, key)}: {value!r} is not a valid {kind} (code {code!r})")
        return _FIXED[kind].pack(value)
    if kind == "bool":
        return b"\x01" if value else b"\x00"
    if kind == "table":
        return encode_table(value, dialect, depth + 1, _label(what, key))
    if kind == "array":
        return encode_array(value, dialect, depth + 1, _label(what, key))
    if kind in ("float32", "float64"):
        return _FIXED[kind].pack(float(value))
    if kind == "void":
        return b""
    if kind == "shortstr":
        return enc_shortstr(value, _label(what, key))
    if kind == "decimal":
        if isinstance(value, tuple):
            scale, number = value
        else:
            d = decimal.Decimal(value)
            sign, digits, exp = d.as_tuple()
            if not isinstance(exp, int):
                raise EncodeError(f"{_label(what, key)}: {value!r} is not a finite decimal")
            scale = max(-exp, 0)
            number = int(d.scaleb(scale))
        if not 0 <= scale < 256 or not -(1 << 31) <= number < (1 << 31):
            raise EncodeError(f"{_label(what, key)}: decimal {value!r} does not fit scale octet + signed 32-bit value")
        return _DECIMAL.pack(scale, number)
    raise EncodeError(f"{_label(what, key)}: unhandled kind {kind}")  # pragma: no cover


def _entries(table: Any) -> Iterable[tuple[Any, str | None, Any]]:
    """(name, remembered code or None, value) of a table given as FieldTable, mapping or pairs."""
    if isinstance(table, FieldTable):
        codes = table.codes
        return ((k, codes.get(k), v) for k, v in table.items())
    if isinstance(table, Mapping):
        return ((k, None, v) for k, v in table.items())
    return ((k, None, v) for k, v in table)  # iterable of pairs: may hold duplicates, on purpose


def _encode_items(value: Any, dialect: Dialect, depth: int, what: str) -> bytes:
    out = bytearray()
    by_kind = _lookups(dialect)[1]
    kinds = dialect.codes
    for name, code, item in _entries(value):
        data = None
        if name.__class__ is str:
            try:
                data = name.encode("utf-8", SURROGATE)
            except UnicodeEncodeError:
                pass
        if data is not None and len(data) < 256:
            out += _LEN8[len(data)]
            out += data
        else:  # Raw/Sized names, over-long or unencodable ones: the full path explains
            out += enc_shortstr(name, f"{what} field name")
        cls = item.__class__
        if cls is FieldValue or isinstance(item, FieldValue):
            code, item = item.code, item.value
            cls = item.__class__
        elif code is None:
            code = _infer_code(item, dialect, what, name, by_kind)
        out += code.encode("latin-1")
        if cls is str and len(item) < 1 << 30 and kinds.get(code) == "longstr":  # the common cases, inline
            try:
                data = item.encode("utf-8", SURROGATE)
            except UnicodeEncodeError:
                pass  # encode_value raises, naming the entry
            else:
                out += U32.pack(len(data))
                out += data
                continue
        elif cls is bool and kinds.get(code) == "bool":
            out += b"\x01" if item else b"\x00"
            continue
        elif cls is int:
            kind = kinds.get(code)
            limits = _INT_RANGE.get(kind)  # type: ignore[arg-type]
            if limits is not None and limits[0] <= item < limits[1]:
                out += _FIXED[kind].pack(item)  # type: ignore[index]
                continue
        out += encode_value(code, item, dialect, depth, what, name)
    return bytes(out)


def encode_table(value: TableInput, dialect: Dialect = SPEC, depth: int = 0, what: str = "table") -> bytes:
    if depth > MAX_DEPTH:
        raise EncodeError(f"{what}: nested deeper than {MAX_DEPTH}")
    if isinstance(value, Raw):
        return bytes(value.data)
    if isinstance(value, Sized):
        body = _encode_items(value.value, dialect, depth, what)
        return U32.pack(value.length) + body
    if value is None:
        return b"\x00\x00\x00\x00"
    body = _encode_items(value, dialect, depth, what)
    return U32.pack(len(body)) + body


def encode_array(value: Any, dialect: Dialect = SPEC, depth: int = 0, what: str = "array") -> bytes:
    if depth > MAX_DEPTH:
        raise EncodeError(f"{what}: nested deeper than {MAX_DEPTH}")
    if isinstance(value, Raw):
        return bytes(value.data)
    lie = None
    if isinstance(value, Sized):
        value, lie = value.value, value.length
    codes = getattr(value, "codes", None)
    by_kind = _lookups(dialect)[1]
    parts: list[bytes] = []
    for i, item in enumerate(value):
        if isinstance(item, FieldValue):
            code, v = item.code, item.value
        elif codes is not None and i < len(codes):
            code, v = codes[i], item
        else:
            code, v = _infer_code(item, dialect, what, i, by_kind), item
        parts.append(code.encode("latin-1"))
        parts.append(encode_value(code, v, dialect, depth, what, i))
    out = b"".join(parts)
    return U32.pack(len(out) if lie is None else lie) + out


# ----------------------------------------------------------------------------- decoding

def _decode_value(buf: bytes, o: int, end: int, lookup: dict[int, tuple[str, str, struct.Struct | None]],
                  dialect: Dialect, depth: int, what: str, key: Any) -> tuple[str, Any, int]:
    if o >= end:
        raise DecodeError(f"{_label(what, key)}: missing type code", o)
    entry = lookup.get(buf[o])
    if entry is None:
        raise DecodeError(f"{_label(what, key)}: type code {chr(buf[o])!r} (0x{buf[o]:02x}) is not defined in the {dialect.name} dialect", o)
    code, kind, st = entry
    o += 1
    if st is not None:
        e = o + st.size
        if e > end:
            raise DecodeError(f"{_label(what, key)}: {kind} needs {st.size} octets, {end - o} left", o)
        return code, st.unpack_from(buf, o)[0], e
    if kind == "longstr" or kind == "bytes":
        if o + 4 > end:
            raise DecodeError(f"{_label(what, key)}: missing long-string length", o)
        n = U32.unpack_from(buf, o)[0]
        s = o + 4
        e = s + n
        if e > end:
            raise DecodeError(f"{_label(what, key)}: long string of {n} octets, {end - s} left", o)
        raw = bytes(buf[s:e])
        if kind == "longstr":
            try:
                return code, raw.decode("utf-8"), e
            except UnicodeDecodeError:
                return code, raw, e
        return code, raw, e
    if kind == "table":
        t, o = decode_table(buf, o, dialect, depth + 1, _label(what, key), end)
        return code, t, o
    if kind == "array":
        a, o = decode_array(buf, o, dialect, depth + 1, _label(what, key), end)
        return code, a, o
    if kind == "void":
        return code, None, o
    if kind == "shortstr":
        if o >= end:
            raise DecodeError(f"{_label(what, key)}: missing short-string length", o)
        n = buf[o]
        if o + 1 + n > end:
            raise DecodeError(f"{_label(what, key)}: short string of {n} octets, {end - o - 1} left", o)
        return code, str(buf[o + 1:o + 1 + n], "utf-8", SURROGATE), o + 1 + n
    if kind == "decimal":
        if o + 5 > end:
            raise DecodeError(f"{_label(what, key)}: decimal needs 5 octets, {end - o} left", o)
        scale, number = _DECIMAL.unpack_from(buf, o)
        return code, decimal.Decimal(number).scaleb(-scale), o + 5
    raise DecodeError(f"{_label(what, key)}: unhandled kind {kind}", o)  # pragma: no cover


def decode_table(buf: bytes, offset: int, dialect: Dialect = SPEC, depth: int = 0,
                 what: str = "table", limit: int | None = None) -> tuple[FieldTable, int]:
    """Decodes a field table at ``offset``; returns it and the offset after it."""
    end_all = len(buf) if limit is None else limit
    if depth > MAX_DEPTH:
        raise DecodeError(f"{what}: nested deeper than {MAX_DEPTH}", offset)
    if offset + 4 > end_all:
        raise DecodeError(f"{what}: missing table length", offset)
    size = U32.unpack_from(buf, offset)[0]
    o = offset + 4
    end = o + size
    if end > end_all:
        raise DecodeError(f"{what}: table claims {size} octets, {end_all - o} left", offset)
    lookup = _lookups(dialect)[2]
    table = FieldTable()
    codes = table.codes
    while o < end:
        n = buf[o]
        s = o + 1
        o = s + n
        if o > end:
            raise DecodeError(f"{what}: field name of {n} octets overruns the table", s - 1)
        name = str(buf[s:o], "utf-8", SURROGATE)
        entry = lookup.get(buf[o]) if o < end else None
        if entry is not None and entry[2] is not None and o + 1 + entry[2].size <= end:  # fixed width, inline
            code = entry[0]
            value = entry[2].unpack_from(buf, o + 1)[0]
            o += 1 + entry[2].size
        elif entry is not None and entry[1] == "longstr" and o + 5 <= end \
                and (e := o + 5 + U32.unpack_from(buf, o + 1)[0]) <= end:  # long string, inline
            code = entry[0]
            try:
                value = str(buf[o + 5:e], "utf-8")
            except UnicodeDecodeError:
                value = bytes(buf[o + 5:e])
            o = e
        else:  # everything else, and every error message, in one place
            code, value, o = _decode_value(buf, o, end, lookup, dialect, depth, what, name)
        if name in table:
            table.duplicates.append(name)
        table[name] = value
        codes[name] = code
    return table, end


def decode_array(buf: bytes, offset: int, dialect: Dialect = SPEC, depth: int = 0,
                 what: str = "array", limit: int | None = None) -> tuple[FieldArray, int]:
    end_all = len(buf) if limit is None else limit
    if depth > MAX_DEPTH:
        raise DecodeError(f"{what}: nested deeper than {MAX_DEPTH}", offset)
    if offset + 4 > end_all:
        raise DecodeError(f"{what}: missing array length", offset)
    size = U32.unpack_from(buf, offset)[0]
    o = offset + 4
    end = o + size
    if end > end_all:
        raise DecodeError(f"{what}: array claims {size} octets, {end_all - o} left", offset)
    lookup = _lookups(dialect)[2]
    arr = FieldArray()
    codes = arr.codes
    i = 0
    while o < end:
        code, value, o = _decode_value(buf, o, end, lookup, dialect, depth, what, i)
        arr.append(value)
        codes.append(code)
        i += 1
    return arr, end


def to_plain(value: Any) -> Any:
    """Strips type-code memory: nested FieldTable/FieldArray become dict/list."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
