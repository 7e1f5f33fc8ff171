"""The AMQP 1.0 type system (part 1 of the spec): values, encodings, encoder and bounded decoder.

Every constructor this module knows comes from the spec's ``<encoding>`` elements, through the
generated table in ``codes.py``: a new encoding in the XML is decoded and encodable without a
change here. What is written by hand is only what the XML says in prose: which Python class
stands for which primitive type, and how each *category* (fixed, variable, compound, array)
lays out its octets (types 1.2).

Values. A decoded value is typed, so that re-encoding it picks the same type: ``UInt(5)``,
``Symbol("x")``, ``ULong(0x10)``; ``str`` is a string, ``bytes`` a binary, ``float`` a double,
``None`` null, ``bool`` boolean, :class:`List` / :class:`Map` / :class:`Array` the compound
types and :class:`Described` a described value. Plain Python values are accepted when
encoding: ``int`` becomes a long (as in python-qpid-proton), ``list``/``tuple`` a list,
``dict`` a map.

Widths. The encoder picks the smallest valid encoding (``uint0``, ``smalluint``, ``str8``,
``list0``/``list8``...). Decoded containers remember the constructor of each element
(``List.codes``, ``Map.codes``, ``Array.element``, ``Described.value_code``) and their own
(``.code``), so decoding and re-encoding gives the input back byte for byte.

Malformations. Wrappers say what to write wrong, where the value is built:

* ``Encoded(value, "uint")``: this encoding (name, alias such as ``"str8"``, or code), not the
  smallest one; it must still be able to hold the value.
* ``Sized(value, length=N)``: ``N`` as the size of a string/binary/symbol/list/map/array.
* ``Counted(value, count=N)``: ``N`` as the element count of a list/map/array.
* ``Retyped(value, code)``: the value's octets behind another constructor (0x70 with one octet...).
* ``Raw(b"...")``: these octets, constructor included.

Decoding never trusts a size or a count: each is checked against the octets left before
anything is allocated, nesting is limited to ``MAX_DEPTH``, and an array of zero-width
elements (``null``, ``true``, ``uint0``...) may not claim more than ``max_zero_width``
elements, since those cost no octets on the wire.
"""
from __future__ import annotations

import datetime as _dt
import struct
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from amqpspec.wire.errors import DecodeError, EncodeError
from amqpspec.wire.raw import Raw, Sized
from amqpspec.wire.amqp10.codes import ENCODINGS as _ENCODING_ROWS

MAX_DEPTH = 64             # nesting of lists, maps, arrays and described values
MAX_ZERO_WIDTH = 1 << 16   # elements of a zero-width array (which cost no octets) accepted
SURROGATE = "surrogateescape"  # invalid UTF-8 / non-ASCII symbols from a peer stay re-encodable

__all__ = [
    "UByte", "UShort", "UInt", "ULong", "Byte", "Short", "Int", "Long", "Float", "Decimal32",
    "Decimal64", "Decimal128", "Char", "Timestamp", "Symbol", "UUID", "Binary", "String", "List",
    "Map", "Array", "Described", "Key", "Pairs", "FloatNaN", "DoubleNaN", "Encoded", "Counted", "Retyped", "Raw", "Sized",
    "Encoding", "ENCODINGS", "BY_CODE", "encoding", "encodings_of", "type_of", "encode", "decode",
    "decode_at", "decode_item", "Decoder", "MAX_DEPTH", "MAX_ZERO_WIDTH", "UNDESCRIBED",
]


# ============================================================================ value classes

class _Int(int):
    __slots__ = ()
    TYPE = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({int(self)})"


class UByte(_Int):
    __slots__ = ()
    TYPE = "ubyte"


class UShort(_Int):
    __slots__ = ()
    TYPE = "ushort"


class UInt(_Int):
    __slots__ = ()
    TYPE = "uint"


class ULong(_Int):
    __slots__ = ()
    TYPE = "ulong"


class Byte(_Int):
    __slots__ = ()
    TYPE = "byte"


class Short(_Int):
    __slots__ = ()
    TYPE = "short"


class Int(_Int):
    __slots__ = ()
    TYPE = "int"


class Long(_Int):
    __slots__ = ()
    TYPE = "long"


class Timestamp(_Int):
    """Milliseconds since the Unix epoch (signed 64-bit)."""

    __slots__ = ()
    TYPE = "timestamp"

    @classmethod
    def from_datetime(cls, when: _dt.datetime) -> "Timestamp":
        return cls(round(when.timestamp() * 1000))

    def datetime(self) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(int(self) / 1000, _dt.timezone.utc)


class Decimal32(_Int):
    """The 32 bits of an IEEE 754 decimal32 (BID), as an unsigned integer: kept, not interpreted."""

    __slots__ = ()
    TYPE = "decimal32"


class Decimal64(_Int):
    __slots__ = ()
    TYPE = "decimal64"


class Decimal128(_Int):
    __slots__ = ()
    TYPE = "decimal128"


class Float(float):
    """A 32-bit float (``float`` itself is a double)."""

    __slots__ = ()
    TYPE = "float"

    def __repr__(self) -> str:
        return f"Float({float(self)!r})"


class FloatNaN(Float):
    """A float32 NaN as decoded: keeps its four octets (payload, signalling bit) to re-encode them."""

    def __init__(self, value: float = float("nan"), bits: bytes = b"\x7f\xc0\x00\x00") -> None:
        self.bits = bits

    def __new__(cls, value: float = float("nan"), bits: bytes = b"\x7f\xc0\x00\x00") -> "FloatNaN":
        return super().__new__(cls, value)


class DoubleNaN(float):
    """A double NaN as decoded, with its eight octets."""

    TYPE = "double"

    def __init__(self, value: float = float("nan"), bits: bytes = b"\x7f\xf8" + bytes(6)) -> None:
        self.bits = bits

    def __new__(cls, value: float = float("nan"), bits: bytes = b"\x7f\xf8" + bytes(6)) -> "DoubleNaN":
        return super().__new__(cls, value)


class Symbol(str):
    """A symbolic value: 7-bit ASCII (non-ASCII octets from a peer are surrogate-escaped)."""

    __slots__ = ()
    TYPE = "symbol"

    def __repr__(self) -> str:
        return f"Symbol({str(self)!r})"


class Char(str):
    """One Unicode character (UTF-32BE on the wire)."""

    __slots__ = ()
    TYPE = "char"

    def __repr__(self) -> str:
        return f"Char({str(self)!r})"


UUID = uuid.UUID
Binary = bytes
String = str


class _Undescribed:
    def __repr__(self) -> str:
        return "UNDESCRIBED"

    def __reduce__(self) -> str:
        return "UNDESCRIBED"


UNDESCRIBED: Any = _Undescribed()


class List(list):
    """A list that remembers the constructor of each element (``codes``) and its own (``code``)."""

    TYPE = "list"

    def __init__(self, items: Iterable[Any] = (), codes: list[int | None] | None = None, code: int | None = None) -> None:
        super().__init__(items)
        self.codes: list[int | None] = codes if codes is not None else []
        self.code = code


class Map(dict):
    """A map remembering ``codes[key] = (key constructor, value constructor)`` and its own ``code``.

    ``duplicates`` lists keys that appeared more than once in the decoded octets (the spec
    forbids it); the map keeps the last value. Unhashable keys (lists, maps) are wrapped in
    :class:`Key`.
    """

    TYPE = "map"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codes: dict[Any, tuple[int | None, int | None]] = {}
        self.duplicates: list[Any] = []
        self.code: int | None = None
        self.received: list[tuple[Any, Any]] | None = None  # all pairs, when a key was duplicated


class Pairs(list):
    """A map given as (key, value) pairs, in order, duplicates allowed: to send a map the spec forbids."""

    TYPE = "map"


class Array(list):
    """A monomorphic array: elements of one primitive ``type`` behind one element constructor.

    ``type`` is the primitive type name ("uint", "symbol", ...) or an encoding name/code to
    force the element constructor ("smalluint", 0x70). ``descriptor`` makes it an array of
    described values (the elements are the undescribed values, as in python-qpid-proton).
    Decoded arrays remember the element constructor (``element``) and their own (``code``).
    """

    TYPE = "array"

    def __init__(self, items: Iterable[Any] = (), type: str | int = "null", descriptor: Any = UNDESCRIBED,
                 element: int | None = None, code: int | None = None, descriptor_code: int | None = None) -> None:
        super().__init__(items)
        if isinstance(type, str) and type in BY_TYPE:
            self.type = type
        else:  # an encoding name or code: the element constructor is forced
            enc = _lookup(type)
            if enc is None:
                raise EncodeError(f"array element type {type!r} is neither a primitive type nor an encoding")
            self.type = enc.type
            element = enc.code if element is None else element
        self.descriptor = descriptor
        self.element = element
        self.code = code
        self.descriptor_code = descriptor_code

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Array):
            return self.type == other.type and self.descriptor == other.descriptor and list.__eq__(self, other)
        return list.__eq__(self, other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        desc = "" if self.descriptor is UNDESCRIBED else f", descriptor={self.descriptor!r}"
        return f"Array({list.__repr__(self)}, type={self.type!r}{desc})"


@dataclass(frozen=True)
class Described:
    """A described value: ``descriptor`` (usually a Symbol or ULong) applied to ``value``."""

    descriptor: Any
    value: Any
    descriptor_code: int | None = field(default=None, compare=False, repr=False)
    value_code: int | None = field(default=None, compare=False, repr=False)

    TYPE = "described"


class Key:
    """A map key whose value is unhashable (a list or map key, valid AMQP); compares by value."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Key) and self.value == other.value

    def __hash__(self) -> int:
        return 0x4B

    def __repr__(self) -> str:
        return f"Key({self.value!r})"


# ============================================================================ override wrappers

@dataclass(frozen=True)
class Encoded:
    """Encode ``value`` with this encoding (name, alias or constructor code), not the smallest."""

    value: Any
    encoding: str | int


@dataclass(frozen=True)
class Counted:
    """Write ``count`` as the element count of a list, map or array, whatever it holds."""

    value: Any
    count: int


@dataclass(frozen=True)
class Retyped:
    """Encode ``value`` normally, then write ``code`` as its constructor: a wrong constructor."""

    value: Any
    code: int


_WRAPPERS = (Encoded, Counted, Retyped, Sized)


# ============================================================================ encodings

@dataclass(frozen=True)
class Encoding:
    name: str        # unique: the XML name when unique, else the type name ("float", "uint")
    xml_name: str
    type: str
    code: int
    category: str    # fixed | variable | compound | array
    width: int
    label: str
    aliases: tuple[str, ...] = ()

    @property
    def zero_width(self) -> bool:
        return self.category == "fixed" and self.width == 0

    def __repr__(self) -> str:
        return f"<encoding {self.name} 0x{self.code:02x}>"


def _build_encodings() -> tuple[dict[str, Encoding], dict[int, Encoding], dict[str, list[Encoding]], dict[str, Encoding]]:
    xml_names = [row[1] for row in _ENCODING_ROWS]
    by_name: dict[str, Encoding] = {}
    by_code: dict[int, Encoding] = {}
    by_type: dict[str, list[Encoding]] = {}
    alias: dict[str, Encoding] = {}
    for type_, xml_name, code, category, width, label in _ENCODING_ROWS:
        unique = bool(xml_name) and xml_names.count(xml_name) == 1
        name = xml_name if unique else type_
        aliases = []
        if xml_name.endswith("-utf8"):
            aliases.append(xml_name[: -len("-utf8")])  # "str8" for "str8-utf8"
        if unique and len([r for r in _ENCODING_ROWS if r[0] == type_]) == 1:
            aliases.append(type_)  # "char" for utf32, "timestamp" for ms64
        enc = Encoding(name, xml_name, type_, code, category, width, label, tuple(aliases))
        by_name[name] = enc
        by_code[code] = enc
        by_type.setdefault(type_, []).append(enc)
        for a in aliases:
            alias[a] = enc
    for encs in by_type.values():
        encs.sort(key=lambda e: e.width)
    return by_name, by_code, by_type, alias


ENCODINGS, BY_CODE, BY_TYPE, _ALIASES = _build_encodings()


def _lookup(key: Any) -> Encoding | None:
    if isinstance(key, int) and not isinstance(key, bool):
        return BY_CODE.get(key)
    if isinstance(key, str):
        return ENCODINGS.get(key) or _ALIASES.get(key)
    return None


def encoding(key: str | int) -> Encoding:
    """The encoding of a name ("smalluint"), alias ("str8", "char") or constructor code (0x52)."""
    enc = _lookup(key)
    if enc is None:
        known = ", ".join(sorted(ENCODINGS))
        raise EncodeError(f"no AMQP 1.0 encoding {key!r}; known: {known}")
    return enc


def encodings_of(type_: str) -> list[Encoding]:
    """The encodings of a primitive type, narrowest first."""
    return list(BY_TYPE[type_])


# ============================================================================ Python class <-> type

# The one hand-written mapping: which Python class stands for which primitive type.
_CLASS_TYPE: dict[type, str] = {
    type(None): "null", bool: "boolean", UByte: "ubyte", UShort: "ushort", UInt: "uint", ULong: "ulong",
    Byte: "byte", Short: "short", Int: "int", Long: "long", Float: "float", float: "double",
    Decimal32: "decimal32", Decimal64: "decimal64", Decimal128: "decimal128", Char: "char",
    Timestamp: "timestamp", uuid.UUID: "uuid", FloatNaN: "float", DoubleNaN: "double", bytes: "binary", bytearray: "binary", memoryview: "binary",
    str: "string", Symbol: "symbol", List: "list", list: "list", tuple: "list", Map: "map", dict: "map",
    Pairs: "map", Array: "array", Described: "described", _dt.datetime: "timestamp",
}
_INT_CLASS: dict[str, type[_Int]] = {c.TYPE: c for c in (UByte, UShort, UInt, ULong, Byte, Short, Int, Long,
                                                         Timestamp, Decimal32, Decimal64, Decimal128)}
_SIGNED = {"byte", "short", "int", "long", "timestamp"}
_INTEGER_TYPES = frozenset(_INT_CLASS) - {"decimal32", "decimal64", "decimal128"}
_TEXT_TYPES = frozenset({"binary", "string", "symbol"})


def type_of(value: Any) -> str:
    """The primitive type a value encodes as by default ("described" for described values)."""
    t = _CLASS_TYPE.get(value.__class__)
    if t is not None:
        if t == "long" and value.__class__ is int:
            return _plain_int_type(value)
        return t
    if hasattr(value, "to_described"):
        return "described"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, _Int):
        return value.TYPE
    if isinstance(value, int):
        return _plain_int_type(value)
    if isinstance(value, Symbol):
        return "symbol"
    if isinstance(value, Char):
        return "char"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Float):
        return "float"
    if isinstance(value, float):
        return "double"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "binary"
    if isinstance(value, Array):
        return "array"
    if isinstance(value, (Pairs, Mapping)):
        return "map"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, uuid.UUID):
        return "uuid"
    if isinstance(value, _dt.datetime):
        return "timestamp"
    if isinstance(value, Described):
        return "described"
    raise EncodeError(f"no AMQP 1.0 type for a {type(value).__name__} value; wrap it in Encoded(...) or Raw(...)")


def _plain_int_type(v: int) -> str:
    if -(1 << 63) <= v < (1 << 63):
        return "long"
    if 0 <= v < (1 << 64):
        return "ulong"
    raise EncodeError(f"{v} fits neither a long nor a ulong")


# ============================================================================ encoding

_U8 = struct.Struct(">B")
_U32 = struct.Struct(">I")
_SIZE = {1: _U8, 4: _U32}
_INT_STRUCT = {(1, False): ">B", (2, False): ">H", (4, False): ">I", (8, False): ">Q",
               (1, True): ">b", (2, True): ">h", (4, True): ">i", (8, True): ">q"}
_STRUCTS: dict[int, struct.Struct] = {}  # code -> struct of a fixed-width numeric encoding
for _e in BY_CODE.values():
    if _e.category == "fixed" and _e.width in (1, 2, 4, 8) and (_e.type in _INT_CLASS):
        _STRUCTS[_e.code] = struct.Struct(_INT_STRUCT[(_e.width, _e.type in _SIGNED)])
    elif _e.category == "fixed" and _e.type in ("float", "double"):
        _STRUCTS[_e.code] = struct.Struct(">f" if _e.width == 4 else ">d")


def _implied(enc: Encoding) -> Any:
    """The value of a zero-width encoding: null, true, false, uint0, ulong0, list0."""
    if enc.type == "null":
        return None
    if enc.type == "boolean":
        return enc.xml_name == "true"
    if enc.type == "list":
        return List(code=enc.code)
    if enc.type in _INT_CLASS:
        return _INT_CLASS[enc.type](0)
    raise AssertionError(f"zero-width encoding {enc.name} of {enc.type} has no known value")  # pragma: no cover


def _int_range(enc: Encoding) -> tuple[int, int]:
    bits = 8 * enc.width
    if enc.type in _SIGNED:
        return -(1 << (bits - 1)), 1 << (bits - 1)
    return 0, 1 << bits


def _to_text_bytes(value: Any, type_: str, what: str) -> bytes:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        if type_ == "symbol":
            try:
                return value.encode("ascii", SURROGATE)
            except UnicodeEncodeError as exc:
                raise EncodeError(f"{what}: symbol {value!r} is not 7-bit ASCII (character {value[exc.start]!r});"
                                  " pass Encoded(b'...', 'sym8') to send other octets") from None
        try:
            return value.encode("utf-8", SURROGATE)
        except UnicodeEncodeError as exc:
            raise EncodeError(f"{what}: character {value[exc.start]!r} at index {exc.start} has no UTF-8 encoding;"
                              " pass bytes in Encoded(b'...', 'str8') to send arbitrary octets") from None
    raise EncodeError(f"{what}: a {type_} needs str or bytes, got {type(value).__name__}")


class _Options:
    """What the wrappers around one value asked for."""

    __slots__ = ("encoding", "size", "count", "retype")

    def __init__(self) -> None:
        self.encoding: Encoding | None = None
        self.size: int | None = None
        self.count: int | None = None
        self.retype: int | None = None


_NO_OPTIONS = _Options()


def _unwrap(value: Any, what: str) -> tuple[Any, _Options]:
    opts = _Options()
    while isinstance(value, _WRAPPERS):
        if isinstance(value, Encoded):
            opts.encoding = encoding(value.encoding)
        elif isinstance(value, Sized):
            opts.size = value.length
        elif isinstance(value, Counted):
            opts.count = value.count
        else:
            opts.retype = value.code
        value = value.value
    return value, opts


class _Encoder:
    __slots__ = ("what",)

    def __init__(self, what: str = "value") -> None:
        self.what = what

    # -- entry ------------------------------------------------------------------------
    def value(self, value: Any, depth: int = 0, prefer: int | None = None, what: str | None = None) -> bytes:
        """The full encoding (constructor + data); ``prefer`` is a remembered constructor."""
        what = what or self.what
        if isinstance(value, Raw):
            return bytes(value.data)
        if isinstance(value, _WRAPPERS):
            value, opts = _unwrap(value, what)
            if isinstance(value, Raw):
                if opts.retype is not None and value.data:
                    return bytes((opts.retype & 0xFF,)) + bytes(value.data[1:])
                return bytes(value.data)
            out = self._value(value, depth, opts, None, what)
            if opts.retype is not None:
                out = bytes((opts.retype & 0xFF,)) + out[1:]
            return out
        return self._value(value, depth, _NO_OPTIONS, prefer, what)

    def _value(self, value: Any, depth: int, opts: _Options, prefer: int | None, what: str) -> bytes:
        if depth > MAX_DEPTH:
            raise EncodeError(f"{what}: nested deeper than {MAX_DEPTH}")
        t = _CLASS_TYPE.get(value.__class__)
        if t is None or t == "described":
            to_described = getattr(value, "to_described", None)
            if to_described is not None or isinstance(value, Described):
                if opts.encoding is not None or opts.size is not None or opts.count is not None:
                    raise EncodeError(f"{what}: Encoded/Sized/Counted do not apply to a described value;"
                                      " wrap its value, or use a composite's override(...)")
                return self._described(value if to_described is None else to_described(), depth, what)
        enc = opts.encoding
        if enc is not None:
            t = enc.type
            value = self._convert(value, enc, what)
        elif t is None:
            t = type_of(value)
        cat = _category(t)
        if cat == "fixed":
            if enc is None:
                enc = self._choose_fixed(t, value, prefer)
            return bytes((enc.code,)) + self._fixed_payload(enc, value, what)
        if cat == "variable":
            data = _to_text_bytes(value, t, what)
            enc = enc or self._choose_sized(t, len(data) if opts.size is None else max(len(data), opts.size), 0, prefer)
            return bytes((enc.code,)) + self._sized(enc, data, opts.size, what)
        body, count = self._compound_body(t, value, depth, what)
        if enc is None:
            enc = self._choose_compound(t, value, body, count, opts, prefer)
        return bytes((enc.code,)) + self._compound_payload(enc, body, count, opts, what)

    # -- conversions for Encoded(value, encoding) -----------------------------------------
    def _convert(self, value: Any, enc: Encoding, what: str) -> Any:
        t = enc.type
        if _CLASS_TYPE.get(value.__class__) == t:
            return value  # already of the type (a decoded NaN keeps its bits)
        if t in _INT_CLASS:
            if isinstance(value, int) and not isinstance(value, bool):
                return _INT_CLASS[t](value)
            if t == "timestamp" and isinstance(value, _dt.datetime):
                return Timestamp.from_datetime(value)
        elif t in ("float", "double"):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return Float(value) if t == "float" else float(value)
        elif t in _TEXT_TYPES:
            if isinstance(value, (str, bytes, bytearray, memoryview)):
                return value
        elif t == "boolean":
            if isinstance(value, bool):
                return value
        elif t == "null":
            if value is None:
                return value
        elif t == "char":
            if isinstance(value, str) and len(value) == 1:
                return Char(value)
        elif t == "uuid":
            if isinstance(value, uuid.UUID):
                return value
        elif t == "list":
            if isinstance(value, (list, tuple)) and not isinstance(value, (Array, Pairs)):
                return value
        elif t == "map":
            if isinstance(value, (Mapping, Pairs)):
                return value
        elif t == "array":
            if isinstance(value, Array):
                return value
        raise EncodeError(f"{what}: a {type(value).__name__} value cannot be written as {enc.name} (0x{enc.code:02x});"
                          " use Raw(...) or Retyped(...) for a wrong constructor")

    # -- fixed width -------------------------------------------------------------------
    def _fits_fixed(self, enc: Encoding, value: Any) -> bool:
        if enc.width == 0:
            t = enc.type
            if t == "null":
                return value is None
            if t == "boolean":
                return value is (enc.xml_name == "true")
            if t == "list":
                return isinstance(value, (list, tuple)) and not value
            return isinstance(value, int) and not isinstance(value, bool) and value == 0
        if enc.type in _INT_CLASS:
            lo, hi = _int_range(enc) if enc.type in _INTEGER_TYPES else (0, 1 << (8 * enc.width))
            return isinstance(value, int) and lo <= value < hi
        return True

    def _choose_fixed(self, t: str, value: Any, prefer: int | None) -> Encoding:
        if prefer is not None:
            enc = BY_CODE.get(prefer)
            if enc is not None and enc.type == t and self._fits_fixed(enc, value):
                return enc
        for enc in BY_TYPE[t]:
            if self._fits_fixed(enc, value):
                return enc
        lo, hi = _int_range(BY_TYPE[t][-1]) if t in _INTEGER_TYPES else (0, 0)
        shown = int(value) if isinstance(value, int) else repr(value)
        raise EncodeError(f"{self.what}: {shown} does not fit a {t} ({lo} .. {hi - 1}); use Raw(...) to send other octets")

    def _fixed_payload(self, enc: Encoding, value: Any, what: str) -> bytes:
        if enc.width == 0:
            if not self._fits_fixed(enc, value):
                raise EncodeError(f"{what}: {enc.name} (0x{enc.code:02x}) can only stand for {_implied(enc)!r}, not {value!r};"
                                  f" send Raw(b'\\x{enc.code:02x}') to claim it anyway")
            return b""
        st = _STRUCTS.get(enc.code)
        if st is not None:
            bits = getattr(value, "bits", None)
            if bits is not None and len(bits) == enc.width and value != value:
                return bytes(bits)  # a decoded NaN: its exact octets
            if enc.type in _INT_CLASS:
                if isinstance(value, _dt.datetime):
                    value = Timestamp.from_datetime(value)
                if not isinstance(value, int) or isinstance(value, bool):
                    raise EncodeError(f"{what}: {enc.name} needs an integer, got {type(value).__name__}")
                if not self._fits_fixed(enc, value):
                    lo, hi = _int_range(enc) if enc.type in _INTEGER_TYPES else (0, 1 << (8 * enc.width))
                    raise EncodeError(f"{what}: {int(value)} does not fit {enc.name} (0x{enc.code:02x}, {lo} .. {hi - 1});"
                                      " use Raw(...) to send other octets")
            return st.pack(value)
        t = enc.type
        if t == "boolean":
            return b"\x01" if value else b"\x00"
        if t == "char":
            if not isinstance(value, str) or len(value) != 1:
                raise EncodeError(f"{what}: a char is one character, got {value!r}")
            return _U32.pack(ord(value))
        if t == "uuid":
            if not isinstance(value, uuid.UUID):
                raise EncodeError(f"{what}: a uuid needs a uuid.UUID, got {type(value).__name__}")
            return value.bytes
        if t in _INT_CLASS:  # decimal128 and any other wide integer-like encoding
            if not 0 <= int(value) < 1 << (8 * enc.width):
                raise EncodeError(f"{what}: {value} does not fit the {enc.width} octets of {enc.name}")
            return int(value).to_bytes(enc.width, "big")
        raise EncodeError(f"{what}: no fixed-width layout for {t}")  # pragma: no cover

    # -- variable width ----------------------------------------------------------------------
    def _choose_sized(self, t: str, size: int, count: int, prefer: int | None) -> Encoding:
        candidates = BY_TYPE[t]
        if prefer is not None:
            enc = BY_CODE.get(prefer)
            if enc is not None and enc.type == t and not enc.zero_width and size < 1 << (8 * enc.width) \
                    and count < 1 << (8 * enc.width):
                return enc
        for enc in candidates:
            if enc.width and size < 1 << (8 * enc.width) and count < 1 << (8 * enc.width):
                return enc
        raise EncodeError(f"{self.what}: {size} octets do not fit any {t} encoding")

    def _sized(self, enc: Encoding, data: bytes, size: int | None, what: str) -> bytes:
        n = len(data) if size is None else size
        if not 0 <= n < 1 << (8 * enc.width):
            raise EncodeError(f"{what}: size {n} does not fit the {enc.width}-octet size of {enc.name};"
                              " choose a wider encoding with Encoded(...)")
        return _SIZE[enc.width].pack(n) + data

    # -- compound and array ------------------------------------------------------------------
    def _compound_body(self, t: str, value: Any, depth: int, what: str) -> tuple[bytes, int]:
        if t == "list":
            codes = getattr(value, "codes", None)
            parts = []
            for i, item in enumerate(value):
                prefer = codes[i] if codes is not None and i < len(codes) else None
                parts.append(self.value(item, depth + 1, prefer, f"{what}[{i}]"))
            return b"".join(parts), len(parts)
        if t == "map":
            codes = getattr(value, "codes", None)
            items: Iterable[Any] = value if isinstance(value, Pairs) else value.items()
            received = getattr(value, "received", None)
            if received and dict((k, v) for k, v, _, _ in received) == value:
                items = received  # decoded with duplicate keys, unchanged since: write them all again
            parts = []
            n = 0
            for k, v, *remembered in items:
                if remembered:
                    kc, vc = remembered
                else:
                    kc, vc = codes.get(k, (None, None)) if codes else (None, None)
                parts.append(self.value(k.value if isinstance(k, Key) else k, depth + 1, kc, f"{what} key"))
                parts.append(self.value(v, depth + 1, vc, f"{what}[{k!r}]"))
                n += 2
            return b"".join(parts), n
        if t == "array":
            return self._array_body(value, depth, what)
        raise EncodeError(f"{what}: no compound layout for {t}")  # pragma: no cover

    def _array_body(self, arr: Any, depth: int, what: str) -> tuple[bytes, int]:
        """Element constructor + element payloads (the part after size and count)."""
        if depth + 1 > MAX_DEPTH:
            raise EncodeError(f"{what}: nested deeper than {MAX_DEPTH}")
        t = arr.type if isinstance(arr, Array) else "null"
        if t not in BY_TYPE:
            raise EncodeError(f"{what}: array element type {t!r} is not a primitive type; use a type name such as 'symbol'")
        forced = arr.element if isinstance(arr, Array) else None
        items = list(arr)
        cat = _category(t)
        enc: Encoding | None = BY_CODE.get(forced) if forced is not None else None
        if enc is not None and enc.type != t:
            enc = None
        if cat == "fixed":
            conv = [self._convert(v, BY_TYPE[t][-1], f"{what}[{i}]") if not isinstance(v, Raw) else v for i, v in enumerate(items)]
            if enc is None or not all(isinstance(v, Raw) or self._fits_fixed(enc, v) for v in conv):
                enc = self._choose_array_fixed(t, conv, what)
            payloads = [bytes(v.data) if isinstance(v, Raw) else self._fixed_payload(enc, v, f"{what}[{i}]")
                        for i, v in enumerate(conv)]
        elif cat == "variable":
            datas = [v if isinstance(v, Raw) else _to_text_bytes(v, t, f"{what}[{i}]") for i, v in enumerate(items)]
            longest = max((len(d) for d in datas if not isinstance(d, Raw)), default=0)
            if enc is None or longest >= 1 << (8 * enc.width):
                enc = self._choose_sized(t, longest, 0, None)
            payloads = [bytes(d.data) if isinstance(d, Raw) else self._sized(enc, d, None, f"{what}[{i}]")
                        for i, d in enumerate(datas)]
        else:
            bodies: list[tuple[Any, int, _Options]] = []
            for i, v in enumerate(items):
                if isinstance(v, Raw):
                    bodies.append((v, 0, _NO_OPTIONS))
                    continue
                v, opts = _unwrap(v, f"{what}[{i}]")
                if not isinstance(v, _ELEMENT_CLASSES[t]) or (t != "array" and isinstance(v, Array)):
                    raise EncodeError(f"{what}[{i}]: an array of {t} cannot hold a {type(v).__name__}")
                body, count = self._compound_body(t, v, depth + 1, f"{what}[{i}]")
                bodies.append((body, count, opts))

            def fits(e: Encoding) -> bool:
                return all(isinstance(b, Raw) or self._compound_fits(
                    e, len(b) if o.size is None else o.size, n if o.count is None else o.count, n, False)
                    for b, n, o in bodies)

            keep_zero = enc is not None and enc.zero_width and all(
                not isinstance(b, Raw) and n == 0 and o.size is None and o.count is None for b, n, o in bodies)
            if not keep_zero and (enc is None or enc.zero_width or not fits(enc)):
                enc = next((e for e in BY_TYPE[t] if not e.zero_width and fits(e)), None)
                if enc is None:
                    raise EncodeError(f"{what}: the elements do not fit any one {t} encoding")
            assert enc is not None
            payloads = [bytes(b.data) if isinstance(b, Raw) else self._compound_payload(enc, b, n, o, f"{what}[{i}]")
                        for i, (b, n, o) in enumerate(bodies)]
        head = bytes((enc.code,))
        if isinstance(arr, Array) and arr.descriptor is not UNDESCRIBED:
            head = b"\x00" + self.value(arr.descriptor, depth + 1, arr.descriptor_code, f"{what} descriptor") + head
        return head + b"".join(payloads), len(items)

    def _choose_array_fixed(self, t: str, values: list[Any], what: str) -> Encoding:
        candidates = [e for e in BY_TYPE[t] if not e.zero_width] or BY_TYPE[t]
        for enc in candidates:
            if all(isinstance(v, Raw) or self._fits_fixed(enc, v) for v in values):
                return enc
        raise EncodeError(f"{what}: the elements do not fit any one {t} encoding")

    def _choose_compound(self, t: str, value: Any, body: bytes, count: int, opts: _Options, prefer: int | None) -> Encoding:
        size = len(body) if opts.size is None else opts.size
        n = count if opts.count is None else opts.count
        lied = opts.size is not None or opts.count is not None
        if prefer is not None:
            enc = BY_CODE.get(prefer)
            if enc is not None and enc.type == t and self._compound_fits(enc, size, n, count, lied):
                return enc
        for enc in BY_TYPE[t]:
            if self._compound_fits(enc, size, n, count, lied):
                return enc
        raise EncodeError(f"{self.what}: {size} octets / {n} elements do not fit any {t} encoding")  # pragma: no cover

    @staticmethod
    def _compound_fits(enc: Encoding, size: int, n: int, count: int, lied: bool) -> bool:
        if enc.zero_width:
            return count == 0 and not lied
        limit = 1 << (8 * enc.width)
        return size + enc.width < limit and n < limit

    def _compound_payload(self, enc: Encoding, body: bytes, count: int, opts: _Options, what: str) -> bytes:
        if enc.zero_width:
            if count:
                raise EncodeError(f"{what}: {enc.name} (0x{enc.code:02x}) is the empty {enc.type}; this one has {count} elements")
            return b""
        if enc.category not in ("compound", "array"):
            raise EncodeError(f"{what}: {enc.name} is not a compound encoding")  # pragma: no cover
        w = enc.width
        size = len(body) + w if opts.size is None else opts.size
        n = count if opts.count is None else opts.count
        limit = 1 << (8 * w)
        if not 0 <= size < limit or not 0 <= n < limit:
            raise EncodeError(f"{what}: size {size} / count {n} do not fit the {w}-octet fields of {enc.name};"
                              " choose a wider encoding with Encoded(...)")
        st = _SIZE[w]
        return st.pack(size) + st.pack(n) + body

    # -- described ---------------------------------------------------------------------------
    def _described(self, d: Described, depth: int, what: str) -> bytes:
        if depth + 1 > MAX_DEPTH:
            raise EncodeError(f"{what}: nested deeper than {MAX_DEPTH}")
        return (b"\x00" + self.value(d.descriptor, depth + 1, d.descriptor_code, f"{what} descriptor")
                + self.value(d.value, depth + 1, d.value_code, what))


_ELEMENT_CLASSES: dict[str, Any] = {"list": (list, tuple), "map": (Mapping, Pairs), "array": Array}


def _category(t: str) -> str:
    encs = BY_TYPE.get(t)
    if not encs:
        raise EncodeError(f"{t!r} is not an AMQP 1.0 primitive type")
    return encs[-1].category


def encode(value: Any, what: str = "value", *, prefer: int | None = None) -> bytes:
    """The AMQP encoding of ``value`` (constructor included), honouring override wrappers."""
    return _Encoder(what).value(value, 0, prefer, what)


# ============================================================================ decoding

class _PathError(DecodeError):
    """A decode error that learns where it happened while it propagates outwards."""

    def __init__(self, reason: str, offset: int | None, path: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.path = path
        shown = path if len(path) <= 12 else path[:6] + (f" ...{len(path) - 10} levels... ",) + path[-4:]
        where = "".join(shown).strip()
        super().__init__(f"{where}: {reason}" if where else reason, offset)

    def inside(self, label: str) -> "_PathError":
        return _PathError(self.reason, self.offset, (label,) + self.path)


_K_IMPLIED, _K_BOOL, _K_STRUCT, _K_FLOAT, _K_CHAR, _K_UUID, _K_WIDE, _K_BIN, _K_STR, _K_SYM, _K_LIST, _K_MAP, _K_ARRAY = range(13)


def _kind(enc: Encoding) -> int:
    if enc.category == "fixed":
        if enc.width == 0:
            return _K_IMPLIED
        if enc.type == "boolean":
            return _K_BOOL
        if enc.type in ("float", "double"):
            return _K_FLOAT
        if enc.code in _STRUCTS:
            return _K_STRUCT
        if enc.type == "char":
            return _K_CHAR
        if enc.type == "uuid":
            return _K_UUID
        return _K_WIDE
    if enc.category == "variable":
        return {"binary": _K_BIN, "string": _K_STR, "symbol": _K_SYM}[enc.type]
    if enc.category == "compound":
        return {"list": _K_LIST, "map": _K_MAP}[enc.type]
    return _K_ARRAY


_DECODE_TABLE: dict[int, tuple[int, Encoding, Any]] = {}
for _e in BY_CODE.values():
    _k = _kind(_e)
    _DECODE_TABLE[_e.code] = (_k, _e, _STRUCTS.get(_e.code) if _k in (_K_STRUCT, _K_FLOAT) else
                              (_INT_CLASS.get(_e.type) if _k in (_K_STRUCT, _K_WIDE) else None))
_RESULT_CLASS = {code: _INT_CLASS.get(e.type, Float if e.type == "float" else None) for code, e in BY_CODE.items()}

_SUBCATEGORY = {0x4: "fixed-width, 0 octets", 0x5: "fixed-width, 1 octet", 0x6: "fixed-width, 2 octets",
                0x7: "fixed-width, 4 octets", 0x8: "fixed-width, 8 octets", 0x9: "fixed-width, 16 octets",
                0xA: "variable-width, 1-octet size", 0xB: "variable-width, 4-octet size",
                0xC: "compound, 1-octet size and count", 0xD: "compound, 4-octet size and count",
                0xE: "array, 1-octet size and count", 0xF: "array, 4-octet size and count"}

Factory = Callable[[Any, int | None, Any, int | None], Any]


class Decoder:
    """A bounded decoder; ``registry`` maps descriptors (ULong code or Symbol) to factories.

    A factory (or its ``from_described``) receives ``(descriptor, descriptor constructor,
    value, value constructor)`` and returns the object to use in place of :class:`Described`:
    the generated classes of ``spec.py`` are such factories. Values whose descriptor is not
    in the registry decode as :class:`Described`. ``NAME`` and ``field_label`` of a factory,
    when present, name the place of a decode error ("open.max-frame-size: ...").
    """

    def __init__(self, registry: Mapping[Any, Factory] | None = None, max_depth: int = MAX_DEPTH,
                 max_zero_width: int = MAX_ZERO_WIDTH) -> None:
        self.registry = registry or {}
        self.max_depth = max_depth
        self.max_zero_width = max_zero_width

    def decode(self, data: bytes) -> Any:
        """Exactly one value filling ``data``."""
        buf = bytes(data)
        _, value, end = self.item(buf, 0, len(buf))
        if end != len(buf):
            raise DecodeError(f"{len(buf) - end} octets after the value", end)
        return value

    def item(self, buf: bytes, o: int, end: int, depth: int = 0) -> tuple[int, Any, int]:
        """(constructor, value, offset after it) of the value at ``o``; nothing read past ``end``."""
        if o >= end:
            raise _PathError("missing constructor: no octets left", o)
        code = buf[o]
        if code == 0:
            value, o2 = self._described(buf, o, end, depth)
            return 0, value, o2
        entry = _DECODE_TABLE.get(code)
        if entry is None:
            raise self._undefined(code, o)
        value, o2 = self._payload(entry, code, buf, o + 1, end, depth)
        return code, value, o2

    def _undefined(self, code: int, o: int) -> _PathError:
        sub = _SUBCATEGORY.get(code >> 4)
        what = f" (a {sub} format code that no type defines)" if sub else ""
        return _PathError(f"constructor 0x{code:02x} is not defined{what}", o)

    def _payload(self, entry: tuple[int, Encoding, Any], code: int, buf: bytes, o: int, end: int, depth: int) -> tuple[Any, int]:
        kind, enc, aux = entry
        if kind == _K_STRUCT:
            e = o + enc.width
            if e > end:
                raise _PathError(f"{enc.name} (0x{code:02x}) needs {enc.width} octets, {end - o} left", o)
            return _RESULT_CLASS[code](aux.unpack_from(buf, o)[0]), e
        if kind == _K_IMPLIED:
            return _implied(enc), o
        if kind in (_K_BIN, _K_STR, _K_SYM):
            w = enc.width
            if o + w > end:
                raise _PathError(f"{enc.name} (0x{code:02x}) needs a {w}-octet size, {end - o} left", o)
            n = buf[o] if w == 1 else _U32.unpack_from(buf, o)[0]
            s = o + w
            e = s + n
            if e > end:
                raise _PathError(f"{enc.name} (0x{code:02x}) claims {n} octets, {end - s} left", o)
            raw = buf[s:e]
            if kind == _K_BIN:
                return raw, e
            if kind == _K_STR:
                return raw.decode("utf-8", SURROGATE), e
            return Symbol(raw.decode("ascii", SURROGATE)), e
        if kind == _K_BOOL:
            if o + 1 > end:
                raise _PathError(f"{enc.name} (0x{code:02x}) needs 1 octet, 0 left", o)
            b = buf[o]
            if b > 1:
                raise _PathError(f"boolean (0x{code:02x}) octet 0x{b:02x} is neither 0x00 (false) nor 0x01 (true)", o)
            return b == 1, o + 1
        if kind == _K_LIST or kind == _K_MAP or kind == _K_ARRAY:
            if depth >= self.max_depth:
                raise _PathError(f"nested deeper than {self.max_depth}", o - 1)
            return self._compound(kind, enc, code, buf, o, end, depth + 1)
        w = enc.width
        if o + w > end:
            raise _PathError(f"{enc.name} (0x{code:02x}) needs {w} octets, {end - o} left", o)
        if kind == _K_FLOAT:
            v = _STRUCTS[code].unpack_from(buf, o)[0]
            if v != v:
                return (FloatNaN if enc.type == "float" else DoubleNaN)(v, bytes(buf[o:o + w])), o + w
            return (Float(v) if enc.type == "float" else v), o + w
        if kind == _K_CHAR:
            cp = _U32.unpack_from(buf, o)[0]
            if cp > 0x10FFFF:
                raise _PathError(f"char (0x{code:02x}) 0x{cp:08x} is not a Unicode code point", o)
            return Char(chr(cp)), o + w
        if kind == _K_UUID:
            return uuid.UUID(bytes=bytes(buf[o:o + w])), o + w
        return _INT_CLASS[enc.type](int.from_bytes(buf[o:o + w], "big")), o + w  # _K_WIDE

    def _sizes(self, enc: Encoding, code: int, buf: bytes, o: int, end: int) -> tuple[int, int, int]:
        """(count, offset of the first element, offset after the value) of a compound/array."""
        w = enc.width
        if o + w > end:
            raise _PathError(f"{enc.name} (0x{code:02x}) needs a {w}-octet size, {end - o} left", o)
        size = buf[o] if w == 1 else _U32.unpack_from(buf, o)[0]
        s = o + w
        e = s + size
        if e > end:
            raise _PathError(f"{enc.name} (0x{code:02x}) claims {size} octets, {end - s} left", o)
        if size < w:
            raise _PathError(f"{enc.name} (0x{code:02x}) size {size} is smaller than its {w}-octet count", o)
        count = buf[s] if w == 1 else _U32.unpack_from(buf, s)[0]
        return count, s + w, e

    def _compound(self, kind: int, enc: Encoding, code: int, buf: bytes, o: int, end: int, depth: int) -> tuple[Any, int]:
        count, p, e = self._sizes(enc, code, buf, o, end)
        if kind == _K_ARRAY:
            return self._array(enc, code, count, buf, p, e, depth)
        if count > e - p:
            raise _PathError(f"{enc.name} (0x{code:02x}) claims {count} elements in {e - p} octets"
                             " (each takes at least one)", o)
        item = self.item
        if kind == _K_LIST:
            out = List(code=code)
            codes = out.codes
            for i in range(count):
                try:
                    c, v, p = item(buf, p, e, depth)
                except _PathError as exc:
                    raise exc.inside(f"[{i}]") from None
                out.append(v)
                codes.append(c)
        else:
            if count % 2:
                raise _PathError(f"{enc.name} (0x{code:02x}) count {count} is odd: keys and values come in pairs", o)
            out = Map()
            out.code = code
            mcodes = out.codes
            for i in range(count // 2):
                try:
                    kc, k, p = item(buf, p, e, depth)
                except _PathError as exc:
                    raise exc.inside(f" key #{i}") from None
                try:
                    vc, v, p = item(buf, p, e, depth)
                except _PathError as exc:
                    raise exc.inside(f"[{_short(k)!r}]") from None
                try:
                    hash(k)
                except TypeError:
                    k = Key(k)
                if k in out:
                    out.duplicates.append(k)
                    if out.received is None:
                        out.received = [(key, out[key], *out.codes[key]) for key in out]
                out[k] = v
                mcodes[k] = (kc, vc)
                if out.received is not None:
                    out.received.append((k, v, kc, vc))
        if p != e:
            raise _PathError(f"{enc.name} (0x{code:02x}) ends {e - p} octets after its {count} elements", p)
        return out, e

    def _array(self, enc: Encoding, code: int, count: int, buf: bytes, p: int, e: int, depth: int) -> tuple[Any, int]:
        # element constructor: a format code, or 0x00 descriptor constructor
        descriptor: Any = UNDESCRIBED
        dcode: int | None = None
        if p >= e:
            raise _PathError(f"{enc.name} (0x{code:02x}) has no element constructor", p)
        if buf[p] == 0:
            if depth >= self.max_depth:
                raise _PathError(f"nested deeper than {self.max_depth}", p)
            try:
                dcode, descriptor, p = self.item(buf, p + 1, e, depth + 1)
            except _PathError as exc:
                raise exc.inside(" element descriptor") from None
            if p >= e:
                raise _PathError(f"{enc.name} (0x{code:02x}) has no element constructor after its descriptor", p)
            if buf[p] == 0:
                raise _PathError(f"{enc.name} (0x{code:02x}) element constructor is described twice", p)
        ecode = buf[p]
        entry = _DECODE_TABLE.get(ecode)
        if entry is None:
            raise self._undefined(ecode, p).inside(" element constructor")
        p += 1
        eenc = entry[1]
        out = Array(type=eenc.type, descriptor=descriptor, element=ecode, code=code, descriptor_code=dcode)
        left = e - p
        if eenc.zero_width:
            if count > self.max_zero_width:
                raise _PathError(f"{enc.name} (0x{code:02x}) claims {count} elements of zero-width {eenc.name} "
                                 f"(0x{ecode:02x}), more than the {self.max_zero_width} accepted", p - 1)
            if left:
                raise _PathError(f"{enc.name} (0x{code:02x}) of zero-width {eenc.name} has {left} octets of data", p)
            if eenc.type == "list":
                out.extend(List(code=ecode) for _ in range(count))
            else:
                out.extend([_implied(eenc)] * count)
            return out, e
        minimum = {"fixed": 1, "variable": 1, "compound": 2}.get(eenc.category, 2) * eenc.width + (eenc.category == "array")
        if count * minimum > left:
            raise _PathError(f"{enc.name} (0x{code:02x}) claims {count} {eenc.name} elements of at least {minimum}"
                             f" octets, {left} left", p)
        if entry[0] == _K_STRUCT:
            st = _STRUCTS[ecode]
            cls = _RESULT_CLASS[ecode]
            stop = p + count * eenc.width
            out.extend(cls(v) for (v,) in st.iter_unpack(buf[p:stop]))
            p = stop
        else:
            for i in range(count):
                try:
                    v, p = self._payload(entry, ecode, buf, p, e, depth)
                except _PathError as exc:
                    raise exc.inside(f"[{i}]") from None
                out.append(v)
        if p != e:
            raise _PathError(f"{enc.name} (0x{code:02x}) ends {e - p} octets after its {count} elements", p)
        return out, e

    def _described(self, buf: bytes, o: int, end: int, depth: int) -> tuple[Any, int]:
        if depth >= self.max_depth:
            raise _PathError(f"nested deeper than {self.max_depth}", o)
        try:
            dcode, descriptor, p = self.item(buf, o + 1, end, depth + 1)
        except _PathError as exc:
            raise exc.inside(" descriptor") from None
        factory = None
        if self.registry and descriptor.__class__ in (ULong, Symbol):  # only these are descriptors (1.5)
            factory = self.registry.get(descriptor)
        try:
            vcode, value, p = self.item(buf, p, end, depth + 1)
        except _PathError as exc:
            label = getattr(factory, "NAME", None) or f"@{_short(descriptor)}"
            field_label = getattr(factory, "field_label", None)
            if field_label is not None and exc.path and exc.path[0].startswith("["):
                exc = _PathError(exc.reason, exc.offset, (field_label(exc.path[0]),) + exc.path[1:])
            raise exc.inside(label) from None
        if factory is not None:
            return getattr(factory, "from_described", factory)(descriptor, dcode, value, vcode), p
        return Described(descriptor, value, dcode, vcode), p


def _short(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return f"0x{int(value):x}"
    text = str(value) if isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_PLAIN = Decoder()


def decode(data: bytes, registry: Mapping[Any, Factory] | None = None) -> Any:
    """Exactly one value filling ``data`` (trailing octets are an error)."""
    return (Decoder(registry) if registry else _PLAIN).decode(data)


def decode_at(buf: bytes, offset: int = 0, end: int | None = None, registry: Mapping[Any, Factory] | None = None) -> tuple[Any, int]:
    """(value, offset after it) of the value at ``offset``; nothing is read past ``end``."""
    buf = buf if isinstance(buf, bytes) else bytes(buf)
    _, value, o = (Decoder(registry) if registry else _PLAIN).item(buf, offset, len(buf) if end is None else end)
    return value, o


def decode_item(buf: bytes, offset: int = 0, end: int | None = None, registry: Mapping[Any, Factory] | None = None) -> tuple[int, Any, int]:
    """(constructor, value, offset after it): the constructor says which encoding was used."""
    buf = buf if isinstance(buf, bytes) else bytes(buf)
    return (Decoder(registry) if registry else _PLAIN).item(buf, offset, len(buf) if end is None else end)
