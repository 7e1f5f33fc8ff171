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


# ----------------------------------------------------------------------------- encoding

def _infer_code(value: Any, dialect: Dialect, what: str) -> str:
    if isinstance(value, bool):
        return dialect.code_for("bool")
    if isinstance(value, int):
        if -(1 << 31) <= value < (1 << 31):
            return dialect.code_for("int32")
        if -(1 << 63) <= value < (1 << 63):
            return dialect.code_for("int64")
        return dialect.code_for("uint64") if "uint64" in dialect.codes.values() else dialect.code_for("int64")
    if isinstance(value, float):
        return dialect.code_for("float64")
    if isinstance(value, decimal.Decimal):
        return dialect.code_for("decimal")
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return dialect.code_for("longstr")
    if isinstance(value, _dt.datetime):
        return dialect.code_for("timestamp")
    if isinstance(value, Mapping) or isinstance(value, FieldTable):
        return dialect.code_for("table")
    if isinstance(value, (list, tuple)):
        return dialect.code_for("array")
    if value is None:
        return dialect.code_for("void")
    raise EncodeError(f"{what}: no field type for {type(value).__name__} values; wrap it in FieldValue(code, ...)")


def encode_value(code: str, value: Any, dialect: Dialect, depth: int, what: str) -> bytes:
    """Encodes the value part (after the type code)."""
    if isinstance(value, Raw):
        return bytes(value.data)
    kind = dialect.kind(code)
    if kind is None:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)  # undefined code on purpose: payload verbatim
        raise EncodeError(f"{what}: type code {code!r} is not defined in the {dialect.name} dialect; give bytes to send it verbatim")
    if kind == "bool":
        return b"\x01" if value else b"\x00"
    if kind in _INT_RANGE:
        if kind == "timestamp" and isinstance(value, _dt.datetime):
            value = int(value.timestamp())
        lo, hi = _INT_RANGE[kind]
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value < hi:
            raise EncodeError(f"{what}: {value!r} is not a valid {kind} (code {code!r})")
        return _FIXED[kind].pack(value)
    if kind in ("float32", "float64"):
        return _FIXED[kind].pack(float(value))
    if kind == "decimal":
        if isinstance(value, tuple):
            scale, number = value
        else:
            d = decimal.Decimal(value)
            sign, digits, exp = d.as_tuple()
            if not isinstance(exp, int):
                raise EncodeError(f"{what}: {value!r} is not a finite decimal")
            scale = max(-exp, 0)
            number = int(d.scaleb(scale))
        if not 0 <= scale < 256 or not -(1 << 31) <= number < (1 << 31):
            raise EncodeError(f"{what}: decimal {value!r} does not fit scale octet + signed 32-bit value")
        return _DECIMAL.pack(scale, number)
    if kind == "shortstr":
        return enc_shortstr(value, what)
    if kind in ("longstr", "bytes"):
        return enc_longstr(value, what)
    if kind == "table":
        return encode_table(value, dialect, depth + 1, what)
    if kind == "array":
        return encode_array(value, dialect, depth + 1, what)
    if kind == "void":
        return b""
    raise EncodeError(f"{what}: unhandled kind {kind}")  # pragma: no cover


def _pairs(table: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(table, FieldTable):
        return ((k, FieldValue(table.codes[k], v) if k in table.codes else v) for k, v in table.items())
    if isinstance(table, Mapping):
        return table.items()
    return table  # iterable of pairs: may hold duplicates, on purpose


def _encode_items(value: Any, dialect: Dialect, depth: int, what: str) -> bytes:
    out = bytearray()
    for name, item in _pairs(value):
        out += enc_shortstr(name, f"{what} field name")
        if isinstance(item, FieldValue):
            code, v = item.code, item.value
        else:
            code, v = _infer_code(item, dialect, f"{what}[{name!r}]"), item
        out += code.encode("latin-1") + encode_value(code, v, dialect, depth, f"{what}[{name!r}]")
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
    out = bytearray()
    for i, item in enumerate(value):
        if isinstance(item, FieldValue):
            code, v = item.code, item.value
        elif codes is not None and i < len(codes):
            code, v = codes[i], item
        else:
            code, v = _infer_code(item, dialect, f"{what}[{i}]"), item
        out += code.encode("latin-1") + encode_value(code, v, dialect, depth, f"{what}[{i}]")
    return U32.pack(len(out) if lie is None else lie) + bytes(out)


# ----------------------------------------------------------------------------- decoding

def _decode_value(buf: bytes, o: int, end: int, dialect: Dialect, depth: int, what: str) -> tuple[str, Any, int]:
    if o >= end:
        raise DecodeError(f"{what}: missing type code", o)
    code = chr(buf[o])
    o += 1
    kind = dialect.kind(code)
    if kind is None:
        raise DecodeError(f"{what}: type code {code!r} (0x{ord(code):02x}) is not defined in the {dialect.name} dialect", o - 1)
    st = _FIXED.get(kind)
    if st is not None:
        if o + st.size > end:
            raise DecodeError(f"{what}: {kind} needs {st.size} octets, {end - o} left", o)
        v = st.unpack_from(buf, o)[0]
        return code, (bool(v) if kind == "bool" else v), o + st.size
    if kind == "decimal":
        if o + 5 > end:
            raise DecodeError(f"{what}: decimal needs 5 octets, {end - o} left", o)
        scale, number = _DECIMAL.unpack_from(buf, o)
        return code, decimal.Decimal(number).scaleb(-scale), o + 5
    if kind == "shortstr":
        if o >= end:
            raise DecodeError(f"{what}: missing short-string length", o)
        n = buf[o]
        if o + 1 + n > end:
            raise DecodeError(f"{what}: short string of {n} octets, {end - o - 1} left", o)
        return code, bytes(buf[o + 1:o + 1 + n]).decode("utf-8", SURROGATE), o + 1 + n
    if kind in ("longstr", "bytes"):
        if o + 4 > end:
            raise DecodeError(f"{what}: missing long-string length", o)
        n = U32.unpack_from(buf, o)[0]
        if o + 4 + n > end:
            raise DecodeError(f"{what}: long string of {n} octets, {end - o - 4} left", o)
        raw = bytes(buf[o + 4:o + 4 + n])
        if kind == "longstr":
            try:
                return code, raw.decode("utf-8"), o + 4 + n
            except UnicodeDecodeError:
                return code, raw, o + 4 + n
        return code, raw, o + 4 + n
    if kind == "table":
        t, o = decode_table(buf, o, dialect, depth + 1, what, end)
        return code, t, o
    if kind == "array":
        a, o = decode_array(buf, o, dialect, depth + 1, what, end)
        return code, a, o
    if kind == "void":
        return code, None, o
    raise DecodeError(f"{what}: unhandled kind {kind}", o)  # pragma: no cover


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
    table = FieldTable()
    while o < end:
        if o + 1 > end:
            raise DecodeError(f"{what}: missing field name", o)
        n = buf[o]
        if o + 1 + n > end:
            raise DecodeError(f"{what}: field name of {n} octets overruns the table", o)
        name = bytes(buf[o + 1:o + 1 + n]).decode("utf-8", SURROGATE)
        o += 1 + n
        code, value, o = _decode_value(buf, o, end, dialect, depth, f"{what}[{name!r}]")
        if name in table:
            table.duplicates.append(name)
        table[name] = value
        table.codes[name] = code
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
    arr = FieldArray()
    i = 0
    while o < end:
        code, value, o = _decode_value(buf, o, end, dialect, depth, f"{what}[{i}]")
        arr.append(value)
        arr.codes.append(code)
        i += 1
    return arr, end


def to_plain(value: Any) -> Any:
    """Strips type-code memory: nested FieldTable/FieldArray become dict/list."""
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    return value
