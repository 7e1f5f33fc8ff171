"""Base classes of the generated described types: composites, described restricted types, choices.

The classes themselves are generated from the XML into ``spec.py`` (``gen.py``): every
composite type of the five documents (performatives, SASL frames, message sections, delivery
states, source/target, error, transaction types) and every restricted type that carries a
descriptor (the map/binary/list/any sections such as ``application-properties`` or ``data``).

A composite is a described list (types 1.4): field *i* is element *i*, trailing nulls may be
omitted. Attribute names are the spec's field names with ``-`` -> ``_``. ``None`` is an absent
field (null); :meth:`Composite.value_of` gives the XML default for it. Any value may be put in
any field: plain Python values are converted to the field's type where that is unambiguous
(``max_frame_size=512`` becomes a uint, ``offered_capabilities=["a"]`` an array of symbol),
everything else is sent as given, wrappers (``Raw``, ``Encoded``, ``Sized``...) included.

Decoding never fails on content: a field of the wrong type keeps the decoded value and adds a
line to ``problems``; so do a null mandatory field, elements beyond the last field, and a
described value that is not a list. Decoded objects remember their descriptor form (code or
symbol), list encoding and element constructors, so they re-encode to the same octets.
"""
from __future__ import annotations

import copy
import dataclasses
import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable, Mapping

from amqpspec.wire.errors import EncodeError
from amqpspec.wire.raw import Raw, Sized
from amqpspec.wire.amqp10 import types as t
from amqpspec.wire.amqp10.types import (
    Array, Counted, Described, Encoded, Key, List, Pairs, Retyped, Symbol, ULong, UNDESCRIBED,
)

SUMMARY_VALUE_MAX = 80  # characters of one field shown in a one-line summary
_WRAPPERS = (Encoded, Counted, Retyped, Sized)
_INTEGER = ("ubyte", "ushort", "uint", "ulong", "byte", "short", "int", "long", "timestamp")


# ============================================================================ choices

class Choices:
    """The named values of a restricted type (``Role.RECEIVER``, ``AmqpError.NOT_FOUND``)."""

    NAME: ClassVar[str] = ""
    SOURCE: ClassVar[str] = ""
    NUMBER: ClassVar[str] = ""
    PROVIDES: ClassVar[tuple[str, ...]] = ()
    NAMES: ClassVar[dict[Any, str]] = {}   # value -> choice name

    @classmethod
    def name_of(cls, value: Any) -> str | None:
        if (cls.SOURCE == "boolean") != (value.__class__ is bool):
            return None  # True is not ubyte 1, and 0 is not false
        try:
            return cls.NAMES.get(value)
        except TypeError:
            return None

    @classmethod
    def values(cls) -> list[Any]:
        return list(cls.NAMES)


# ============================================================================ fields

@dataclass(frozen=True)
class Field:
    """One field of a composite type, as the XML defines it, plus what the codec derives."""

    attr: str                              # Python attribute: "max_frame_size"
    name: str                              # spec name: "max-frame-size"
    type: str                              # XML type: "uint", "milliseconds", "*", "error"...
    primitive: str                         # what it is encoded as: "uint", "map", "*" (any)...
    requires: tuple[str, ...] = ()
    default: Any = None                    # the XML default, typed (None: no default)
    mandatory: bool = False
    multiple: bool = False
    label: str = ""
    choices: type[Choices] | None = None   # the restricted type's named values, when it has any
    accepts: tuple[str, ...] = ()          # primitive types allowed ((): any)
    composites: tuple[str, ...] = ()       # composite types allowed by name
    coerce: tuple[str, ...] = ()           # primitive types a plain Python value converts to
    symbol_keys: bool = False              # a map whose plain str keys become symbols (fields, annotations)
    secret: bool = False                   # SASL responses: never shown in summaries or transcripts

    def check(self, owner: str, value: Any) -> str | None:
        """A problem with ``value`` in this field, or None."""
        what = f"{owner}.{self.name}"
        if value is None:
            return f"{what}: mandatory field is null" if self.mandatory else None
        if isinstance(value, (Raw,) + _WRAPPERS):
            return None
        if self.multiple and isinstance(value, Array):
            if self.mandatory and not value:
                return f"{what}: mandatory multiple field holds an empty array (at least one value is required)"
            if self.accepts and value.type not in self.accepts and value.descriptor is UNDESCRIBED:
                return f"{what}: expected an array of {'/'.join(self.accepts)}, got an array of {value.type}"
            return None
        actual = kind_of(value)
        if self.composites and isinstance(value, DescribedBase) and value.NAME in self.composites:
            return None
        if not self.accepts and not self.composites:
            return None
        if actual in self.accepts:
            if self.choices is not None and self.choices.name_of(value) is None:
                names = ", ".join(self.choices.NAMES.values())
                return f"{what}: {show(value)} is not one of the {self.choices.NAME} values ({names})"
            return None
        if self.type == "*" and actual == "described" and not isinstance(value, DescribedBase):
            return None  # a descriptor the spec does not define: an extension, allowed for '*' fields
        expected = "/".join(self.composites + self.accepts)
        shown = _redacted(value) if self.secret else _short(show(value))
        return f"{what}: expected {expected}, got {actual} {shown}"


def kind_of(value: Any) -> str:
    """The AMQP type of a value as named in problems: a primitive type or a composite's name."""
    if isinstance(value, DescribedBase):
        return value.NAME
    if isinstance(value, Encoded):
        try:
            return t.encoding(value.encoding).type
        except EncodeError:
            return "value"
    try:
        return t.type_of(value)
    except EncodeError:
        return type(value).__name__


def coerce(field: Field, value: Any, owner: str = "") -> Any:
    """``value`` made into the field's type where a plain Python value leaves no doubt."""
    if value is None or isinstance(value, Raw):
        return value
    if isinstance(value, _WRAPPERS):
        return dataclasses.replace(value, value=coerce(field, value.value, owner))
    cls = value.__class__
    if field.multiple and (cls is list or cls is tuple):
        target = field.coerce[0] if len(field.coerce) == 1 else None
        if target is not None and target in t.BY_TYPE:
            return Array([_scalar(field, v, owner) for v in value], type=target)
        return value
    return _scalar(field, value, owner)


def _scalar(field: Field, value: Any, owner: str) -> Any:
    cls = value.__class__
    if cls is int:
        for target in field.coerce:
            if target in _INTEGER:
                int_cls = t._INT_CLASS[target]
                enc = t.BY_TYPE[target][-1]
                lo, hi = t._int_range(enc)
                if not lo <= value < hi:
                    raise EncodeError(f"{owner}.{field.name}: {value} does not fit a {target} ({lo} .. {hi - 1});"
                                      " pass a typed value (Long(...)) or Raw(...) to send it anyway")
                return int_cls(value)
        return value
    if cls is str:
        if "string" in field.coerce or not field.coerce:
            return value
        if "symbol" in field.coerce:
            return Symbol(value)
        return value
    if cls is dict and field.symbol_keys:
        return {Symbol(k) if k.__class__ is str else k: v for k, v in value.items()}
    if cls is _dt.datetime and "timestamp" in field.coerce:
        return t.Timestamp.from_datetime(value)
    if cls is float and "float" in field.coerce and "double" not in field.coerce:
        return t.Float(value)
    if cls is bytearray or cls is memoryview:
        return bytes(value)
    return value


# ============================================================================ summaries

_BARE_SYMBOL = re.compile(r"[A-Za-z0-9:._\-/+*@$]+")


def show(value: Any) -> str:
    """A compact rendering of a value for one-line summaries."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, DescribedBase):
        return value.summary()
    if isinstance(value, Symbol):
        return str(value) if _BARE_SYMBOL.fullmatch(value) else f"Symbol({str(value)!r})"
    if isinstance(value, t.Char):
        return f"Char({str(value)!r})"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return repr(float(value))
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return repr(data[:32]) + ("..." if len(data) > 32 else "")
    if isinstance(value, Key):
        return show(value.value)
    if isinstance(value, Array):
        return "[" + ", ".join(show(v) for v in value[:16]) + (", ..." if len(value) > 16 else "") + "]"
    if isinstance(value, (Mapping, Pairs)):
        items = list(value.items() if isinstance(value, Mapping) else value)
        inner = ", ".join(f"{show(k)}: {show(v)}" for k, v in items[:8])
        return "{" + inner + (", ..." if len(items) > 8 else "") + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value[:16]) + (", ..." if len(value) > 16 else "") + "]"
    if isinstance(value, Described):
        d = value.descriptor
        shown = f"0x{int(d):x}" if isinstance(d, int) and not isinstance(d, bool) else show(d)
        return f"@{shown} {show(value.value)}"
    if isinstance(value, Raw):
        return repr(value)
    if isinstance(value, Encoded):
        enc = value.encoding
        return f"{show(value.value)} as {f'0x{enc:02x}' if isinstance(enc, int) else enc}"
    if isinstance(value, Sized):
        return f"{show(value.value)} with size {value.length}"
    if isinstance(value, Counted):
        return f"{show(value.value)} with count {value.count}"
    if isinstance(value, Retyped):
        return f"{show(value.value)} behind 0x{value.code:02x}"
    return repr(value)


def _short(text: str) -> str:
    return text if len(text) <= SUMMARY_VALUE_MAX else text[: SUMMARY_VALUE_MAX - 3] + "..."


def _redacted(value: Any) -> str:
    if isinstance(value, Raw):
        return repr(value)
    n = len(value) if isinstance(value, (bytes, str, bytearray)) else "?"
    return f"<redacted {n} octets>"


# ============================================================================ described types

@dataclass
class Overrides:
    """How a described type is written wrong on purpose (see :meth:`DescribedBase.override`)."""

    descriptor: Any = None       # any value instead of the type's code (a symbol, a wrong code, ...)
    encoding: str | int | None = None  # "list0" / "list8" / "list32" (or anything) for the value
    size: int | None = None      # size field of the list/map
    count: int | None = None     # element count of the list/map
    nulls: bool = False          # write trailing null fields instead of omitting them
    fields: int | None = None    # write exactly this many list elements (padding with nulls, or cutting)
    body: Any = None             # a value replacing the whole described value (Raw, a map, ...)
    has_body: bool = False

    def describe(self) -> str:
        parts = []
        if self.descriptor is not None:
            parts.append(f"descriptor={show(self.descriptor)}")
        if self.encoding is not None:
            parts.append(str(self.encoding))
        if self.size is not None:
            parts.append(f"size={self.size}")
        if self.count is not None:
            parts.append(f"count={self.count}")
        if self.nulls:
            parts.append("trailing nulls")
        if self.fields is not None:
            parts.append(f"{self.fields} elements")
        if self.has_body:
            parts.append(f"body={_short(show(self.body))}")
        return ", ".join(parts)


@dataclass
class _Wire:
    """How a decoded value was encoded, to write it back the same way."""

    descriptor: Any
    descriptor_code: int | None
    value_code: int | None
    codes: list[int | None] | None = None  # element constructors (composites)
    present: int = 0                       # list elements on the wire, trailing nulls included


class DescribedBase:
    """What composites and described restricted types share: descriptor, overrides, memory."""

    __slots__ = ("problems", "_wire", "_overrides")
    NAME: ClassVar[str] = ""
    LABEL: ClassVar[str] = ""
    DESCRIPTOR: ClassVar[Symbol] = Symbol("")
    CODE: ClassVar[ULong] = ULong(0)
    SOURCE: ClassVar[str] = ""
    PROVIDES: ClassVar[tuple[str, ...]] = ()
    NUMBER: ClassVar[str] = ""      # section of the spec ("2.7.1")
    DOCUMENT: ClassVar[str] = ""    # "transport", "messaging", ...

    def _init_base(self) -> None:
        self.problems: list[str] = []
        self._wire: _Wire | None = None
        self._overrides: Overrides | None = None

    # -- overrides ---------------------------------------------------------------------
    def override(self, *, descriptor: Any = None, encoding: str | int | None = None, size: int | None = None,
                 count: int | None = None, nulls: bool = False, fields: int | None = None, **body: Any) -> Any:
        """A copy written wrong on purpose: another descriptor, list encoding, lying size/count,
        trailing nulls kept, a fixed number of elements, or ``body=`` replacing the whole value."""
        unknown = set(body) - {"body"}
        if unknown:
            raise TypeError(f"override() got unexpected argument(s) {sorted(unknown)}")
        other = self._copy()
        other._overrides = Overrides(descriptor, encoding, size, count, nulls, fields, body.get("body"), "body" in body)
        return other

    def _copy(self) -> Any:
        """A shallow copy that shares no list with the original; ``problems`` describe received
        octets, so a changed copy starts with none."""
        other = copy.copy(self)
        other.problems = []
        if isinstance(other, Composite):
            other.extra = list(other.extra)
        return other

    @property
    def overrides(self) -> Overrides | None:
        return self._overrides

    def _descriptor(self) -> tuple[Any, int | None]:
        ov = self._overrides
        if ov is not None and ov.descriptor is not None:
            return ov.descriptor, None
        if self._wire is not None:
            return self._wire.descriptor, self._wire.descriptor_code
        return self.CODE, None

    def _wrap(self, body: Any) -> Any:
        ov = self._overrides
        if ov is None:
            return body
        if ov.has_body:
            return ov.body
        if ov.count is not None:
            body = Counted(body, ov.count)
        if ov.size is not None:
            body = Sized(body, ov.size)
        if ov.encoding is not None:
            body = Encoded(body, ov.encoding)
        return body

    def to_described(self) -> Described:
        raise NotImplementedError

    def encode(self) -> bytes:
        return t.encode(self, self.NAME)

    def field_summary(self) -> str:
        raise NotImplementedError

    def summary(self) -> str:
        """One line for transcripts and reports; SASL responses are redacted."""
        extra = f" [{self._overrides.describe()}]" if self._overrides is not None else ""
        return f"{self.NAME}({self.field_summary()}){extra}"

    def check(self) -> list[str]:
        raise NotImplementedError

    def __hash__(self) -> int:
        return id(self)


class Composite(DescribedBase):
    """A composite type (types 1.4): a described list of fields; subclasses are generated."""

    __slots__ = ("extra",)
    FIELDS: ClassVar[tuple[Field, ...]] = ()

    def _init(self, extra: Iterable[Any]) -> None:
        self._init_base()
        self.extra: list[Any] = list(extra)

    # -- values ------------------------------------------------------------------------
    def values(self) -> dict[str, Any]:
        return {f.attr: getattr(self, f.attr) for f in self.FIELDS}

    def value_of(self, name: str) -> Any:
        """The field's value, or its XML default when absent (``name``: attribute or spec name)."""
        f = self.field(name)
        v = getattr(self, f.attr)
        return f.default if v is None else v

    @classmethod
    def field(cls, name: str) -> Field:
        for f in cls.FIELDS:
            if name in (f.attr, f.name):
                return f
        raise KeyError(f"{cls.NAME} has no field {name!r}")

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (remembered encodings and overrides are kept)."""
        unknown = set(changes) - {f.attr for f in self.FIELDS} - {"extra"}
        if unknown:
            raise TypeError(f"{self.NAME} has no field(s) {sorted(unknown)}")
        other = self._copy()
        for k, v in changes.items():
            setattr(other, k, list(v) if k == "extra" else v)
        return other

    # -- encoding ----------------------------------------------------------------------
    def to_described(self) -> Described:
        vals = [coerce(f, getattr(self, f.attr), self.NAME) for f in self.FIELDS] + list(self.extra)
        n = len(vals)
        ov = self._overrides
        if ov is None or not ov.nulls:
            while n and vals[n - 1] is None:
                n -= 1
        wire = self._wire
        if wire is not None and n < wire.present <= len(vals):
            n = wire.present  # the trailing nulls the peer sent
        if ov is not None and ov.fields is not None:
            vals += [None] * (ov.fields - len(vals))
            n = ov.fields
        body = List(vals[:n], codes=wire.codes if wire is not None else None,
                    code=wire.value_code if wire is not None else None)
        descriptor, dcode = self._descriptor()
        return Described(descriptor, self._wrap(body), dcode, body.code)

    # -- decoding ----------------------------------------------------------------------
    @classmethod
    def from_described(cls, descriptor: Any, descriptor_code: int | None, value: Any, value_code: int | None) -> Any:
        obj = cls.__new__(cls)
        for f in cls.FIELDS:
            setattr(obj, f.attr, None)
        obj._init(())
        if isinstance(value, list) and not isinstance(value, Array):
            n = len(cls.FIELDS)
            for f, v in zip(cls.FIELDS, value):
                setattr(obj, f.attr, v)
            obj.extra = list(value[n:])
            obj._wire = _Wire(descriptor, descriptor_code, value_code, list(getattr(value, "codes", [])), len(value))
            obj.problems = obj.check()
            if obj.extra:
                obj.problems.append(f"{cls.NAME}: {len(obj.extra)} list element(s) beyond its {n} fields")
        else:
            obj._wire = _Wire(descriptor, descriptor_code, value_code)
            obj._overrides = Overrides(body=value, has_body=True)
            obj.problems = [f"{cls.NAME}: the described value is a {kind_of(value)}, not a list"] + obj.check()
        return obj

    @classmethod
    def field_label(cls, index_label: str) -> str:
        """'[3]' (a list index in a decode error) -> '.max-frame-size'."""
        try:
            i = int(index_label.strip("[]"))
        except ValueError:
            return index_label
        return f".{cls.FIELDS[i].name}" if i < len(cls.FIELDS) else f" extra element {index_label}"

    def check(self) -> list[str]:
        """Problems of the current values: null mandatory fields, wrong types, unknown choices."""
        out = []
        for f in self.FIELDS:
            problem = f.check(self.NAME, getattr(self, f.attr))
            if problem:
                out.append(problem)
        return out

    # -- presentation --------------------------------------------------------------------
    def field_summary(self) -> str:
        parts = []
        for f in self.FIELDS:
            v = getattr(self, f.attr)
            if v is None:
                continue
            if f.secret:
                shown = _redacted(v)
            elif f.choices is not None and f.choices.name_of(v) is not None:
                shown = f.choices.name_of(v)
            else:
                try:
                    v = coerce(f, v, self.NAME)
                except EncodeError:
                    pass  # shown as given; encoding will say what is wrong
                shown = _short(show(v))
            parts.append(f"{f.name}={shown}")
        if self.extra:
            parts.append(f"+extra={_short(show(self.extra))}")
        return ", ".join(parts)

    def masked(self) -> Any:
        """A copy whose secret fields hold as many '*' octets: what a transcript may record."""
        secrets = [f for f in self.FIELDS if f.secret and getattr(self, f.attr) is not None]
        if not secrets:
            return self
        changes = {}
        for f in secrets:
            v = getattr(self, f.attr)
            n = len(v.data) if isinstance(v, Raw) else len(v) if isinstance(v, (bytes, str, bytearray)) else 3
            changes[f.attr] = b"*" * n
        return self.replace(**changes)

    def has_secrets(self) -> bool:
        return any(f.secret and getattr(self, f.attr) is not None for f in self.FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.values() == other.values() and self.extra == other.extra  # type: ignore[attr-defined]

    __hash__ = DescribedBase.__hash__

    def __repr__(self) -> str:
        args = []
        for f in self.FIELDS:
            v = getattr(self, f.attr)
            if v is not None:
                args.append(f"{f.attr}={_redacted(v) if f.secret else repr(v)}")
        if self.extra:
            args.append(f"extra={self.extra!r}")
        return f"{type(self).__name__}({', '.join(args)})"


class Restricted(DescribedBase):
    """A restricted type with a descriptor (types 1.3): one value, e.g. ``data`` or ``footer``."""

    __slots__ = ("value",)
    PRIMITIVE: ClassVar[str] = "*"   # the primitive type of the value ("map", "binary", "list", "*")
    VALUE_FIELD: ClassVar[Field] = Field("value", "value", "*", "*")

    def __init__(self, value: Any = None) -> None:
        self.value = value
        self._init_base()

    def to_described(self) -> Described:
        body = coerce(self.VALUE_FIELD, self.value, self.NAME)
        if self.PRIMITIVE == "list" and body.__class__ in (list, tuple):
            body = List(body)
        descriptor, dcode = self._descriptor()
        return Described(descriptor, self._wrap(body), dcode, self._wire.value_code if self._wire else None)

    @classmethod
    def from_described(cls, descriptor: Any, descriptor_code: int | None, value: Any, value_code: int | None) -> Any:
        obj = cls.__new__(cls)
        obj.value = value  # as received: no default filled in for a null
        obj._init_base()
        obj._wire = _Wire(descriptor, descriptor_code, value_code)
        obj.problems = obj.check()
        return obj

    def check(self) -> list[str]:
        problem = self.VALUE_FIELD.check(self.NAME, self.value)
        return [problem.replace(".value:", ":")] if problem else []

    def field_summary(self) -> str:
        return _short(show(self.value))

    def replace(self, value: Any) -> Any:
        other = self._copy()
        other.value = value
        return other

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.value == other.value  # type: ignore[attr-defined]

    __hash__ = DescribedBase.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.value!r})"
