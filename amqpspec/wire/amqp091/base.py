"""Base classes of the generated 0-9-1 methods and content properties.

The generated subclasses (``spec.py``) carry a fast straight-line codec for well-formed
values. Whenever a value is unusual (an override wrapper, a wrong type, an out-of-range
number) or input bytes are malformed, they fall back to the generic field-by-field codec
here, which handles the wrappers and produces error messages naming the field.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from amqpspec.wire.errors import DecodeError, EncodeError
from amqpspec.wire.raw import Raw
from amqpspec.wire.amqp091 import primitives as p
from amqpspec.wire.amqp091.table import SPEC, Dialect, decode_table, encode_table

SUMMARY_VALUE_MAX = 60  # characters of one argument shown in a one-line summary


@dataclass(frozen=True)
class Field:
    """One argument of a method or one content property, as the spec XML defines it."""

    attr: str       # Python attribute: "routing_key"
    name: str       # spec name: "routing-key"
    domain: str     # spec domain: "shortstr", "exchange-name", ...
    type: str       # native type: bit, octet, short, long, longlong, shortstr, longstr, timestamp, table
    reserved: bool = False
    secret: bool = False  # SASL data: never shown in summaries, transcripts or reports

    def default(self) -> Any:
        return _DEFAULTS[self.type]


_DEFAULTS: dict[str, Any] = {
    "bit": False, "octet": 0, "short": 0, "long": 0, "longlong": 0, "timestamp": 0,
    "shortstr": "", "longstr": b"", "table": None,
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SUMMARY_VALUE_MAX else text[: SUMMARY_VALUE_MAX - 3] + "..."


def _shown(field: Field, value: Any) -> str:
    if field.secret and not isinstance(value, Raw):
        n = len(value) if isinstance(value, (bytes, str)) else "?"
        return f"<redacted {n} octets>"
    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_short(v)}" for k, v in list(value.items())[:8])
        more = ", ..." if len(value) > 8 else ""
        return "{" + inner + more + "}"
    return _short(value)


def encode_field(field: Field, value: Any, dialect: Dialect, what: str) -> bytes:
    t = field.type
    if t in p.INT_STRUCTS:
        return p.enc_int(t, value, what)
    if t == "shortstr":
        return p.enc_shortstr(value, what)
    if t == "longstr":
        return p.enc_longstr(value, what)
    if t == "table":
        return encode_table(value, dialect, 0, what)
    raise EncodeError(f"{what}: unknown field type {t}")  # pragma: no cover


def decode_field(field: Field, buf: bytes, o: int, dialect: Dialect, what: str) -> tuple[Any, int]:
    t = field.type
    if t in p.INT_STRUCTS:
        return p.dec_int(t, buf, o, what)
    if t == "shortstr":
        return p.dec_shortstr(buf, o, what)
    if t == "longstr":
        return p.dec_longstr(buf, o, what)
    if t == "table":
        return decode_table(buf, o, dialect, 0, what)
    raise DecodeError(f"{what}: unknown field type {t}", o)  # pragma: no cover


class Method:
    """An AMQP 0-9-1 method with its arguments; subclasses are generated from the spec."""

    __slots__: tuple[str, ...] = ()
    NAME: ClassVar[str] = ""
    LABEL: ClassVar[str] = ""
    CLASS_ID: ClassVar[int] = 0
    METHOD_ID: ClassVar[int] = 0
    SYNCHRONOUS: ClassVar[bool] = False
    CONTENT: ClassVar[bool] = False
    RESPONSES: ClassVar[tuple[str, ...]] = ()
    EXTENSION: ClassVar[bool] = False  # only in RabbitMQ's extended XML
    FIELDS: ClassVar[tuple[Field, ...]] = ()

    # -- generic codec (the generated subclasses override with fast paths) --------------
    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple["Method", int]:
        return generic_decode_args(cls, buf, offset, dialect)

    def encode(self, dialect: Dialect = SPEC) -> bytes:
        """The method payload: class-id, method-id, arguments."""
        return p.U16.pack(self.CLASS_ID) + p.U16.pack(self.METHOD_ID) + self.encode_args(dialect)

    # -- conveniences ----------------------------------------------------------------------
    def values(self) -> dict[str, Any]:
        return {f.attr: getattr(self, f.attr) for f in self.FIELDS}

    def replace(self, **changes: Any) -> "Method":
        vals = self.values()
        unknown = set(changes) - set(vals)
        if unknown:
            raise TypeError(f"{self.NAME} has no argument(s) {sorted(unknown)}")
        vals.update(changes)
        return type(self)(**vals)

    def summary(self) -> str:
        """One line for transcripts and reports; SASL data is redacted."""
        args = ", ".join(f"{f.name}={_shown(f, getattr(self, f.attr))}" for f in self.FIELDS if not f.reserved)
        return f"{self.NAME}({args})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.values() == other.values()  # type: ignore[union-attr]

    def __hash__(self) -> int:  # methods are mutable records; hash by identity like objects
        return id(self)

    def __repr__(self) -> str:
        args = ", ".join(f"{f.attr}={_shown(f, getattr(self, f.attr))}" for f in self.FIELDS)
        return f"{type(self).__name__}({args})"


def generic_encode_args(method: Method, dialect: Dialect) -> bytes:
    out = bytearray()
    bits: list[Any] = []
    for f in method.FIELDS:
        v = getattr(method, f.attr)
        if f.type == "bit":
            bits.append(v)
            continue
        if bits:
            out += p.enc_bits(bits)
            bits = []
        out += encode_field(f, v, dialect, f"{method.NAME}.{f.name}")
    if bits:
        out += p.enc_bits(bits)
    return bytes(out)


def generic_decode_args(cls: type[Method], buf: bytes, offset: int, dialect: Dialect) -> tuple[Method, int]:
    o = offset
    values: dict[str, Any] = {}
    bit_octet = 0
    bit_index = 8
    for f in cls.FIELDS:
        what = f"{cls.NAME}.{f.name}"
        if f.type == "bit":
            if bit_index == 8:
                p.need(buf, o, 1, what)
                bit_octet = buf[o]
                o += 1
                bit_index = 0
            values[f.attr] = bool(bit_octet >> bit_index & 1)
            bit_index += 1
            continue
        bit_index = 8
        values[f.attr], o = decode_field(f, buf, o, dialect, what)
    return cls(**values), o


class UnknownMethod(Method):
    """A method whose class-id/method-id the spec does not define; arguments kept raw."""

    __slots__ = ("class_id", "method_id", "raw")

    def __init__(self, class_id: int, method_id: int, raw: bytes = b"") -> None:
        self.class_id = class_id
        self.method_id = method_id
        self.raw = raw

    @property
    def NAME(self) -> str:  # type: ignore[override]
        return f"unknown({self.class_id}.{self.method_id})"

    def encode(self, dialect: Dialect = SPEC) -> bytes:
        return p.U16.pack(self.class_id) + p.U16.pack(self.method_id) + bytes(self.raw)

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return bytes(self.raw)

    def values(self) -> dict[str, Any]:
        return {"class_id": self.class_id, "method_id": self.method_id, "raw": self.raw}

    def summary(self) -> str:
        return f"{self.NAME}({len(self.raw)} octets: {bytes(self.raw[:16]).hex()})"

    def __repr__(self) -> str:
        return f"UnknownMethod({self.class_id}, {self.method_id}, {bytes(self.raw)!r})"


class Properties:
    """Content header properties of one class (basic); generated subclasses list them.

    A property set to ``None`` is absent (its flag bit is clear).
    """

    __slots__: tuple[str, ...] = ()
    CLASS_ID: ClassVar[int] = 0
    CLASS_NAME: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[Field, ...]] = ()

    def flags(self) -> list[int]:
        """The property-flags words for the properties present (bit 15 = first property)."""
        words: list[int] = []
        word = 0
        for i, f in enumerate(self.FIELDS):
            pos = 15 - (i % 15)
            if i and i % 15 == 0:
                words.append(word | 1)  # continuation bit: another flags word follows
                word = 0
            if getattr(self, f.attr) is not None:
                word |= 1 << pos
        words.append(word)
        return words

    def encode(self, dialect: Dialect = SPEC, flags: list[int] | None = None) -> bytes:
        """Flags words then the present values; ``flags`` overrides the words written."""
        return generic_encode_properties(self, dialect, flags)

    @classmethod
    def decode(cls, buf: bytes, offset: int, dialect: Dialect = SPEC) -> tuple["Properties", int]:
        return generic_decode_properties(cls, buf, offset, dialect)

    def values(self) -> dict[str, Any]:
        return {f.attr: getattr(self, f.attr) for f in self.FIELDS}

    def present(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.attr) for f in self.FIELDS if getattr(self, f.attr) is not None}

    def summary(self) -> str:
        return ", ".join(f"{k}={_short(v)}" for k, v in self.present().items())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.values() == other.values()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        args = ", ".join(f"{f.attr}={getattr(self, f.attr)!r}" for f in self.FIELDS if getattr(self, f.attr) is not None)
        return f"{type(self).__name__}({args})"


def generic_encode_properties(props: Properties, dialect: Dialect, flags: list[int] | None) -> bytes:
    words = props.flags() if flags is None else flags
    out = bytearray()
    for w in words:
        out += p.enc_int("short", w, f"{props.CLASS_NAME} property flags")
    for f in props.FIELDS:
        v = getattr(props, f.attr)
        if v is None or f.type == "bit":  # bit properties live only in the flags (4.2.6.1)
            continue
        out += encode_field(f, v, dialect, f"{props.CLASS_NAME}.{f.name}")
    return bytes(out)


def generic_decode_properties(cls: type[Properties], buf: bytes, offset: int, dialect: Dialect) -> tuple[Properties, int]:
    o = offset
    present: list[bool] = []
    while True:
        word, o = p.dec_int("short", buf, o, f"{cls.CLASS_NAME} property flags")
        present.extend(bool(word >> (15 - i) & 1) for i in range(15))
        if not word & 1:
            break
        if len(present) > len(cls.FIELDS) + 15:
            raise DecodeError(f"{cls.CLASS_NAME} property flags: continuation past the {len(cls.FIELDS)} defined properties", o)
    for i in range(len(cls.FIELDS), len(present)):
        if present[i]:
            raise DecodeError(f"{cls.CLASS_NAME} property flags: bit for undefined property #{i + 1} is set", offset)
    values: dict[str, Any] = {}
    for i, f in enumerate(cls.FIELDS):
        if not present[i]:
            values[f.attr] = None
        elif f.type == "bit":
            values[f.attr] = True
        else:
            values[f.attr], o = decode_field(f, buf, o, dialect, f"{cls.CLASS_NAME}.{f.name}")
    return cls(**values), o
