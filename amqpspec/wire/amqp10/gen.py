"""Generates ``codes.py`` (the primitive encodings) and ``spec.py`` (the described types) from the XML.

Run ``python -m amqpspec.wire.amqp10.gen`` after changing the generator; a unit test fails when
the committed modules differ from what the XML generates (``--check``), so the codec cannot
drift from the specification.

What is derived, per field of a composite type:

* ``primitive``: the type it is encoded as, following restricted types to their source
  (``milliseconds`` -> ``uint``, ``fields`` -> ``map``; ``*`` for any type);
* ``accepts`` / ``composites``: what a decoded value may be without being a problem. For
  ``type="*"`` fields these are the types that *provide* the ``requires`` archetype
  (``delivery-state`` -> received, accepted, ...; ``message-id`` -> ulong, uuid, binary, string);
* ``coerce``: the primitive types a plain Python value is converted to when encoding;
* ``default``: the XML default as a typed value (choice names resolved: ``mixed`` -> ``UByte(2)``);
* ``choices``: the restricted type's named values, when it has any.
"""
from __future__ import annotations

import builtins
import keyword
import re
import sys
from pathlib import Path

from amqpspec.wire.amqp10.xmlspec import XField, XSpec, XType, load

HERE = Path(__file__).parent
CODES_TARGET = HERE / "codes.py"
SPEC_TARGET = HERE / "spec.py"

# SASL data that carries credentials (PLAIN: the password): never shown or recorded.
SECRET_FIELDS = {("sasl-init", "initial-response"), ("sasl-response", "response")}
# Restricted map types whose keys are symbols (types 2.8.13 "fields", messaging 3.2.10
# "annotations", 3.5.8 "filter-set"): the prose says so, the XML has no attribute for it.
SYMBOL_KEYED = {"fields", "annotations", "filter-set"}
INT_CLASSES = {"ubyte": "UByte", "ushort": "UShort", "uint": "UInt", "ulong": "ULong", "byte": "Byte",
               "short": "Short", "int": "Int", "long": "Long", "timestamp": "Timestamp"}


def attr(name: str) -> str:
    a = name.replace("-", "_")
    return a + "_" if keyword.iskeyword(a) else a


def camel(name: str) -> str:
    c = "".join(p[:1].upper() + p[1:] for p in name.split("-"))
    return "Amqp" + c if hasattr(builtins, c) else c


def const_name(name: str) -> str:
    return name.replace("-", "_").upper()


def literal(spec: XSpec, type_name: str, text: str) -> str:
    """Python source of a value of ``type_name`` written as ``text`` in the XML."""
    prim = spec.primitive_of(type_name)
    if prim == "boolean":
        if text not in ("true", "false"):
            raise ValueError(f"boolean literal {text!r}")
        return "True" if text == "true" else "False"
    if prim in INT_CLASSES:
        return f"{INT_CLASSES[prim]}({int(text, 0)})"
    if prim == "symbol":
        return f"Symbol({text!r})"
    if prim == "string":
        return repr(text)
    raise ValueError(f"no literal form for {prim} ({type_name}) value {text!r}")


def chain(spec: XSpec, type_name: str) -> list[str]:
    out = []
    while type_name in spec.types and type_name not in out:
        out.append(type_name)
        xt = spec.types[type_name]
        if xt.cls != "restricted":
            break
        type_name = xt.source
    return out


def default_of(spec: XSpec, f: XField) -> str:
    if f.default is None:
        return "None"
    xt = spec.types.get(f.type)
    if xt is not None and xt.choices:
        for c in xt.choices:
            if c.name == f.default:
                return literal(spec, xt.source, c.value)
    return literal(spec, f.type, f.default)


def field_meta(spec: XSpec, owner: XType, f: XField) -> str:
    prim = spec.primitive_of(f.type)
    xt = spec.types.get(f.type)
    accepts: list[str] = []
    composites: list[str] = []
    coerce: list[str] = []
    if f.type == "*":
        for archetype in f.requires:
            for p in spec.providers(archetype):
                if p.cls == "composite":
                    composites.append(p.name)
                else:
                    accepts.append(spec.primitive_of(p.name))
        coerce = list(dict.fromkeys(accepts))
    elif xt is not None and xt.cls == "composite":
        composites.append(xt.name)
    else:
        accepts.append(prim)
        coerce.append(prim)
    args = [repr(attr(f.name)), repr(f.name), repr(f.type), repr(prim)]
    kw = {
        "requires": repr(f.requires) if f.requires else None,
        "default": default_of(spec, f) if f.default is not None else None,
        "mandatory": "True" if f.mandatory else None,
        "multiple": "True" if f.multiple else None,
        "label": repr(f.label) if f.label else None,
        "choices": camel(xt.name) if xt is not None and xt.choices else None,
        "accepts": repr(tuple(dict.fromkeys(accepts))) if accepts else None,
        "composites": repr(tuple(dict.fromkeys(composites))) if composites else None,
        "coerce": repr(tuple(coerce)) if coerce else None,
        "symbol_keys": "True" if SYMBOL_KEYED & set(chain(spec, f.type)) else None,
        "secret": "True" if (owner.name, f.name) in SECRET_FIELDS else None,
    }
    args += [f"{k}={v}" for k, v in kw.items() if v is not None]
    return f"Field({', '.join(args)})"


def gen_choices(spec: XSpec, xt: XType) -> list[str]:
    lines = [f"class {camel(xt.name)}(Choices):", f'    """{xt.name} ({xt.number or "-"}): {xt.label or "named values"}."""', "",
             f"    NAME = {xt.name!r}", f"    SOURCE = {xt.source!r}", f"    NUMBER = {xt.number!r}",
             f"    PROVIDES = {xt.provides!r}"]
    for c in xt.choices:
        lines.append(f"    {const_name(c.name)} = {literal(spec, xt.source, c.value)}")
    lines.append("    NAMES = {")
    for c in xt.choices:
        lines.append(f"        {literal(spec, xt.source, c.value)}: {c.name!r},")
    lines += ["    }", ""]
    return lines


def gen_head(xt: XType, base: str) -> list[str]:
    return [
        f"class {camel(xt.name)}({base}):",
        f'    """{xt.name} ({xt.document} {xt.number or "-"}): {xt.label or xt.name}."""',
        "",
        f"    NAME = {xt.name!r}",
        f"    LABEL = {xt.label!r}",
        f"    DESCRIPTOR = Symbol({xt.descriptor_name!r})",
        f"    CODE = ULong(0x{xt.descriptor_code:016x})",
        f"    SOURCE = {xt.source!r}",
        f"    PROVIDES = {xt.provides!r}",
        f"    NUMBER = {xt.number!r}",
        f"    DOCUMENT = {xt.document!r}",
    ]


def gen_composite(spec: XSpec, xt: XType) -> list[str]:
    lines = gen_head(xt, "Composite")
    lines.insert(3, f"    __slots__ = ({''.join(repr(attr(f.name)) + ', ' for f in xt.fields)})")
    lines.append("    FIELDS = (")
    lines += [f"        {field_meta(spec, xt, f)}," for f in xt.fields]
    lines += ["    )", ""]
    params = "".join(f"{attr(f.name)}: Any = None, " for f in xt.fields)
    lines.append(f"    def __init__(self, {params}*, extra: Iterable[Any] = ()) -> None:")
    lines += [f"        self.{attr(f.name)} = {attr(f.name)}" for f in xt.fields]
    lines += ["        self._init(extra)", ""]
    return lines


def gen_restricted(spec: XSpec, xt: XType) -> list[str]:
    lines = gen_head(xt, "Restricted")
    lines.insert(3, "    __slots__ = ()")
    prim = spec.primitive_of(xt.source)
    accepts = () if prim == "*" else (prim,)
    symbol_keys = bool(SYMBOL_KEYED & set(chain(spec, xt.source)))
    lines += [
        f"    PRIMITIVE = {prim!r}",
        f"    VALUE_FIELD = Field('value', 'value', {xt.source!r}, {prim!r}, accepts={accepts!r}, coerce={accepts!r}"
        f"{', symbol_keys=True' if symbol_keys else ''})",
        "",
    ]
    empty = {"map": "{}", "binary": "b''", "list": "[]"}.get(prim)
    if empty is not None:
        lines += [
            "    def __init__(self, value: Any = None) -> None:",
            f"        super().__init__({empty} if value is None else value)",
            "",
        ]
    return lines


def generate_codes(spec: XSpec) -> str:
    lines = [
        '"""The encodings of the AMQP 1.0 primitive types, GENERATED from the types XML: do not edit.',
        "",
        "Source: amqpspec/specdata/amqp-1.0/amqp-core-types-v1.0-os.xml, <encoding> elements.",
        "Regenerate with: python -m amqpspec.wire.amqp10.gen",
        '"""',
        "# fmt: off",
        "# ruff: noqa",
        "",
        "# (type, name ('' when the XML gives none), code, category, width, label)",
        "ENCODINGS: tuple[tuple[str, str, int, str, int, str], ...] = (",
    ]
    primitives = [t for t in spec.types.values() if t.cls == "primitive"]
    for xt in primitives:
        for e in xt.encodings:
            lines.append(f"    ({e.type!r}, {e.name!r}, 0x{e.code:02x}, {e.category!r}, {e.width}, {e.label!r}),")
    lines += [")", "", "# primitive type -> section number of its definition",
              "PRIMITIVE_TYPES: dict[str, str] = {"]
    lines += [f"    {xt.name!r}: {xt.number!r}," for xt in primitives]
    lines += ["}", ""]
    return "\n".join(lines)


def generate_spec(spec: XSpec) -> str:
    head = [
        '"""AMQP 1.0 described types and restricted types, GENERATED from the spec XML: do not edit.',
        "",
        "Source: amqpspec/specdata/amqp-1.0/amqp-core-{transport,messaging,security,transactions}-v1.0-os.xml.",
        "Regenerate with: python -m amqpspec.wire.amqp10.gen",
        '"""',
        "# fmt: off",
        "# ruff: noqa",
        "from __future__ import annotations",
        "",
        "from typing import Any, Iterable",
        "",
        "from amqpspec.wire.amqp10.composite import Choices, Composite, Field, Restricted",
        "from amqpspec.wire.amqp10.types import {VALUE_CLASSES}",
        "",
        "# <definition> elements",
    ]
    for d in spec.definitions:
        value = d.value if d.value.isdigit() else repr(d.value)
        head.append(f"{const_name(d.name)} = {value}  # {d.label}")
    head += ["", "# restricted type -> the type it restricts", "RESTRICTED: dict[str, str] = {"]
    head += [f"    {xt.name!r}: {xt.source!r}," for xt in spec.types.values() if xt.cls == "restricted"]
    head += ["}", "", "# archetype -> the types that provide it", "PROVIDERS: dict[str, tuple[str, ...]] = {"]
    archetypes = dict.fromkeys(a for xt in spec.types.values() for a in xt.provides)
    head += [f"    {a!r}: {tuple(p.name for p in spec.providers(a))!r}," for a in archetypes]
    head += ["}", "", ""]
    body: list[str] = []
    for xt in spec.types.values():
        if xt.cls == "restricted" and xt.choices:
            body += gen_choices(spec, xt) + [""]
    described = [xt for xt in spec.types.values() if xt.descriptor_code is not None]
    for xt in described:
        body += (gen_composite(spec, xt) if xt.cls == "composite" else gen_restricted(spec, xt)) + [""]
    tail = ["# every described type, in the order of the XML", "DESCRIBED = ("]
    tail += [f"    {camel(xt.name)}," for xt in described]
    tail += [")", "BY_NAME: dict[str, Any] = {cls.NAME: cls for cls in DESCRIBED}",
             "BY_CODE: dict[int, Any] = {int(cls.CODE): cls for cls in DESCRIBED}",
             "# descriptor (ulong code or symbol) -> class, for the decoder",
             "REGISTRY: dict[Any, Any] = {**{cls.CODE: cls for cls in DESCRIBED}, **{cls.DESCRIPTOR: cls for cls in DESCRIBED}}",
             ""]
    groups = {"PERFORMATIVES": "frame", "SASL_FRAMES": "sasl-frame", "SECTIONS": "section",
              "DELIVERY_STATES": "delivery-state", "OUTCOMES": "outcome"}
    for const, archetype in groups.items():
        names = [xt.name for xt in described if archetype in xt.provides]
        tail.append(f"{const} = ({''.join(camel(n) + ', ' for n in names)})")
    tail.append("")
    code = "\n".join(head + body + tail)
    used = sorted(c for c in set(INT_CLASSES.values()) | {"Symbol", "ULong"} if re.search(rf"\b{c}\(", code))
    return code.replace("{VALUE_CLASSES}", ", ".join(used))


def outputs() -> dict[Path, str]:
    spec = load()
    return {CODES_TARGET: generate_codes(spec), SPEC_TARGET: generate_spec(spec)}


def main() -> int:
    stale = []
    for target, code in outputs().items():
        if "--check" in sys.argv:
            current = target.read_text(encoding="utf-8") if target.exists() else ""
            if current != code:
                stale.append(target)
            continue
        target.write_text(code, encoding="utf-8")
        print(f"wrote {target}")
    if stale:
        for target in stale:
            print(f"{target} is out of date: run python -m amqpspec.wire.amqp10.gen", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
