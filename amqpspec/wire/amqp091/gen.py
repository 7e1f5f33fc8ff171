"""Generates ``spec.py``, the AMQP 0-9-1 method and property codecs, from the spec XML.

Run ``python -m amqpspec.wire.amqp091.gen`` after changing the generator; a unit test
fails when the committed ``spec.py`` differs from what the XML generates, so the codec
cannot drift from the specification. Straight-line code per method (one struct call for
each run of fixed-width fields, inline short strings) keeps decoding fast; anything
unusual falls back to the generic codec in ``base.py``.
"""
from __future__ import annotations

import keyword
import sys
from pathlib import Path

from amqpspec.wire.amqp091.xmlspec import XField, XMethod, XSpec, load

TARGET = Path(__file__).with_name("spec.py")
FIXED = {"octet": "B", "short": "H", "long": "I", "longlong": "Q", "timestamp": "Q"}
PY_TYPES = {
    "bit": "bool", "octet": "int", "short": "int", "long": "int", "longlong": "int", "timestamp": "int",
    "shortstr": "str | bytes | Raw | Sized", "longstr": "bytes | str | Raw | Sized", "table": "TableInput",
}
DEFAULTS = {"bit": "False", "octet": "0", "short": "0", "long": "0", "longlong": "0", "timestamp": "0",
            "shortstr": "''", "longstr": "b''", "table": "None"}


def attr(name: str) -> str:
    a = name.replace("-", "_")
    return a + "_" if keyword.iskeyword(a) else a


def camel(*parts: str) -> str:
    return "".join(w.capitalize() for part in parts for w in part.replace("_", "-").split("-"))


def const_name(name: str) -> str:
    return name.upper().replace("-", "_")


class Structs:
    """Collects the struct formats the generated code needs, one module constant each."""

    def __init__(self) -> None:
        self.formats: dict[str, str] = {}

    def name(self, fmt: str) -> str:
        return self.formats.setdefault(fmt, f"_S_{fmt}")


def segments(fields: tuple[XField, ...]) -> list[tuple[str, list[tuple[int, XField]]]]:
    """Groups fields into runs: ("fixed", [...]) incl. bit groups, ("shortstr", ..), ("longstr", ..), ("table", ..)."""
    segs: list[tuple[str, list[tuple[int, XField]]]] = []
    for i, f in enumerate(fields):
        kind = "fixed" if f.type in FIXED or f.type == "bit" else f.type
        if kind == "fixed" and segs and segs[-1][0] == "fixed":
            segs[-1][1].append((i, f))
        else:
            segs.append((kind, [(i, f)]))
    return segs


def fixed_layout(run: list[tuple[int, XField]]) -> tuple[str, list[tuple[str, list[tuple[int, XField]]]]]:
    """Struct format of a fixed run and its items: ("int", [(i,f)]) or ("bits", [(i,f)...]) per slot."""
    fmt = ""
    items: list[tuple[str, list[tuple[int, XField]]]] = []
    for i, f in run:
        if f.type == "bit":
            if items and items[-1][0] == "bits" and len(items[-1][1]) < 8:
                items[-1][1].append((i, f))
                continue
            items.append(("bits", [(i, f)]))
            fmt += "B"
        else:
            items.append(("int", [(i, f)]))
            fmt += FIXED[f.type]
    return fmt, items


def gen_encode(fields: tuple[XField, ...], structs: Structs) -> list[str]:
    if not fields:
        return ["    def encode_args(self, dialect: Dialect = SPEC) -> bytes:", "        return b''", ""]
    parts: list[str] = []
    for kind, run in segments(fields):
        if kind == "fixed":
            fmt, items = fixed_layout(run)
            args = []
            for ikind, members in items:
                if ikind == "int":
                    args.append(f"self.{attr(members[0][1].name)}")
                else:
                    # _BIT takes only bool (and 0/1): anything else, a Raw say, goes to the generic codec
                    args.append(" | ".join(f"_BIT[self.{attr(f.name)}] << {k}" if k else f"_BIT[self.{attr(f.name)}]"
                                           for k, (_, f) in enumerate(members)))
            parts.append(f"{structs.name(fmt)}.pack({', '.join(args)})")
        elif kind == "shortstr":
            parts.append(f"_ss(self.{attr(run[0][1].name)})")
        elif kind == "longstr":
            parts.append(f"_ls(self.{attr(run[0][1].name)})")
        else:
            parts.append(f"encode_table(self.{attr(run[0][1].name)}, dialect, 0, '{run[0][1].name}')")
    lines = ["    def encode_args(self, dialect: Dialect = SPEC) -> bytes:", "        try:"]
    if len(parts) == 1:
        lines.append(f"            return {parts[0]}")
    else:
        lines.append("            return b''.join((")
        lines += [f"                {x}," for x in parts]
        lines.append("            ))")
    lines += ["        except Exception:  # unusual values: the generic codec handles or explains them",
              "            return generic_encode_args(self, dialect)", ""]
    return lines


def gen_decode_body(fields: tuple[XField, ...], structs: Structs, indent: str) -> list[str]:
    out: list[str] = []
    for kind, run in segments(fields):
        if kind == "fixed":
            fmt, items = fixed_layout(run)
            names = []
            bit_lines: list[str] = []
            for ikind, members in items:
                if ikind == "int":
                    names.append(f"a{members[0][0]}")
                else:
                    tmp = f"b{members[0][0]}"
                    names.append(tmp)
                    for k, (i, _) in enumerate(members):
                        bit_lines.append(f"a{i} = bool({tmp} & {1 << k})")
            size = sum({"B": 1, "H": 2, "I": 4, "Q": 8}[c] for c in fmt)
            lhs = ", ".join(names) + ("," if len(names) == 1 else "")
            out.append(f"{lhs} = {structs.name(fmt)}.unpack_from(buf, o)")
            out.append(f"o += {size}")
            out += bit_lines
        elif kind == "shortstr":
            i = run[0][0]
            out += ["n = buf[o]", "o += 1", "e = o + n", "if e > len(buf):", "    raise IndexError",
                    f"a{i} = buf[o:e].decode('utf-8', 'surrogateescape')", "o = e"]
        elif kind == "longstr":
            i = run[0][0]
            out += ["n = _U32.unpack_from(buf, o)[0]", "o += 4", "e = o + n", "if e > len(buf):", "    raise IndexError",
                    f"a{i} = buf[o:e]", "o = e"]
        else:
            i = run[0][0]
            out.append(f"a{i}, o = decode_table(buf, o, dialect, 0, '{run[0][1].name}')")
    return [indent + line if line else "" for line in out]


def gen_method(m: XMethod, structs: Structs) -> list[str]:
    cls = camel(m.class_name, m.name)
    fields = m.fields
    lines = [f"class {cls}(Method):", f'    """{m.full_name}: {m.label}."""', ""]
    lines.append(f"    __slots__ = ({''.join(repr(attr(f.name)) + ', ' for f in fields)})")
    lines += [
        f"    NAME = {m.full_name!r}",
        f"    LABEL = {m.label!r}",
        f"    CLASS_ID = {m.class_id}",
        f"    METHOD_ID = {m.index}",
        f"    SYNCHRONOUS = {m.synchronous}",
        f"    CONTENT = {m.content}",
        f"    RESPONSES = ({''.join(repr(r) + ', ' for r in m.responses)})",
        f"    EXTENSION = {m.extension}",
        "    FIELDS = (",
    ]
    for f in fields:
        lines.append(f"        Field({attr(f.name)!r}, {f.name!r}, {f.domain!r}, {f.type!r}, reserved={f.reserved}, secret={f.secret}),")
    lines += ["    )", ""]
    params = ", ".join(f"{attr(f.name)}: {PY_TYPES[f.type]} = {DEFAULTS[f.type]}" for f in fields)
    lines.append(f"    def __init__(self{', ' + params if params else ''}) -> None:")
    lines += [f"        self.{attr(f.name)} = {attr(f.name)}" for f in fields] or ["        pass"]
    lines.append("")
    lines += gen_encode(fields, structs)
    lines += [
        "    @classmethod",
        f"    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple[{cls!r}, int]:",
    ]
    if not fields:
        lines += ["        return cls(), offset", ""]
        return lines
    lines += ["        o = offset", "        try:"]
    lines += gen_decode_body(fields, structs, "            ")
    lines += ["        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where",
              "            return generic_decode_args(cls, buf, offset, dialect)",
              f"        return cls({', '.join(f'a{i}' for i in range(len(fields)))}), o", ""]
    return lines


def gen_properties(class_name: str, class_id: int, props: tuple[XField, ...], structs: Structs) -> list[str]:
    cls = camel(class_name) + "Properties"
    lines = [f"class {cls}(Properties):", f'    """Content header properties of class {class_name}; None means absent."""', ""]
    lines.append(f"    __slots__ = ({''.join(repr(attr(f.name)) + ', ' for f in props)})")
    lines += [f"    CLASS_ID = {class_id}", f"    CLASS_NAME = {class_name!r}", "    FIELDS = ("]
    for f in props:
        lines.append(f"        Field({attr(f.name)!r}, {f.name!r}, {f.domain!r}, {f.type!r}),")
    lines += ["    )", ""]
    params = ", ".join(f"{attr(f.name)}: {PY_TYPES[f.type]} | None = None" for f in props)
    lines.append(f"    def __init__(self, {params}) -> None:")
    lines += [f"        self.{attr(f.name)} = {attr(f.name)}" for f in props]
    lines.append("")
    if len(props) > 15:  # more than one flags word: the generic codec handles continuation
        return lines
    lines += [
        "    def encode(self, dialect: Dialect = SPEC, flags: list[int] | None = None) -> bytes:",
        "        if flags is not None:",
        "            return generic_encode_properties(self, dialect, flags)",
        "        try:",
        "            f = 0",
        "            parts = []",
    ]
    for i, p in enumerate(props):
        bit = 1 << (15 - i)
        lines.append(f"            v = self.{attr(p.name)}")
        lines.append("            if v is not None:")
        lines.append(f"                f |= 0x{bit:04x}")
        if p.type == "bit":
            continue
        enc = {"shortstr": "_ss(v)", "longstr": "_ls(v)", "table": f"encode_table(v, dialect, 0, '{p.name}')"}.get(p.type)
        if enc is None:
            enc = f"{structs.name(FIXED[p.type])}.pack(v)"
        lines.append(f"                parts.append({enc})")
    lines += [
        "            return _U16.pack(f) + b''.join(parts)",
        "        except Exception:  # unusual values: the generic codec handles or explains them",
        "            return generic_encode_properties(self, dialect, None)",
        "",
        "    @classmethod",
        f"    def decode(cls, buf: bytes, offset: int, dialect: Dialect = SPEC) -> tuple[{cls!r}, int]:",
        "        o = offset",
        "        try:",
        "            f = _U16.unpack_from(buf, o)[0]",
        "            o += 2",
        f"            if f & 0x{(1 << (16 - len(props))) - 1:04x}:  # continuation or undefined property bits",
        "                raise IndexError",
    ]
    for i, p in enumerate(props):
        bit = 1 << (15 - i)
        lines.append(f"            if f & 0x{bit:04x}:")
        if p.type == "bit":
            lines.append(f"                a{i} = True")
        else:
            body = gen_decode_body((p,), structs, "                ")
            # gen_decode_body names the value a0; rename to this property's index
            lines += [b.replace("a0", f"a{i}") for b in body]
        lines += ["            else:", f"                a{i} = None"]
    lines += [
        "        except (IndexError, struct.error, DecodeError):",
        "            return generic_decode_properties(cls, buf, offset, dialect)",
        f"        return cls({', '.join(f'a{i}' for i in range(len(props)))}), o",
        "",
    ]
    return lines


def generate(spec: XSpec) -> str:
    structs = Structs()
    body: list[str] = []
    for c in spec.classes:
        body.append(f"# {'=' * 20} class {c.name} ({c.index}){' -- RabbitMQ extension' if c.extension else ''}")
        body.append("")
        for m in c.methods:
            body += gen_method(m, structs)
            body.append("")
        if c.properties:
            body += gen_properties(c.name, c.index, c.properties, structs)
            body.append("")
    head = [
        '"""AMQP 0-9-1 methods and content properties, GENERATED from the spec XML: do not edit.',
        "",
        "Source: amqpspec/specdata/amqp-0-9-1/amqp0-9-1.extended.xml (RabbitMQ's superset of",
        "amqp0-9-1.xml; methods absent from the base specification have EXTENSION = True).",
        "Regenerate with: python -m amqpspec.wire.amqp091.gen",
        '"""',
        "# fmt: off",
        "# ruff: noqa",
        "from __future__ import annotations",
        "",
        "import struct",
        "",
        "from amqpspec.wire.errors import DecodeError",
        "from amqpspec.wire.raw import Raw, Sized",
        "from amqpspec.wire.amqp091.base import (",
        "    Field, Method, Properties, generic_decode_args, generic_decode_properties,",
        "    generic_encode_args, generic_encode_properties,",
        ")",
        "from amqpspec.wire.amqp091.table import SPEC, Dialect, TableInput, decode_table, encode_table",
        "from amqpspec.wire.amqp091.fast import fast_longstr as _ls, fast_shortstr as _ss",
        "",
        f"PROTOCOL_VERSION = ({spec.major}, {spec.minor}, {spec.revision})",
        f"DEFAULT_PORT = {spec.port}",
        "",
        "# constants of the spec (frame types, sizes, reply codes)",
    ]
    for k in spec.constants:
        head.append(f"{const_name(k.name)} = {k.value}")
    head += ["", "# reply code -> (name, 'soft-error' | 'hard-error' | '')", "REPLY_CODES = {"]
    for k in spec.constants:
        if k.cls or k.doc:  # reply codes are the documented constants; frame constants have no doc
            head.append(f"    {k.value}: ({k.name!r}, {k.cls!r}),")
    head += ["}", "", "_BIT = {False: 0, True: 1}", "_U16 = struct.Struct('>H')", "_U32 = struct.Struct('>I')"]
    for fmt, name in sorted(structs.formats.items(), key=lambda kv: kv[1]):
        head.append(f"{name} = struct.Struct('>{fmt}')")
    head += ["", ""]
    methods = [m for c in spec.classes for m in c.methods]
    tail = ["", "# index (class-id << 16 | method-id) -> method class", "METHODS: dict[int, type[Method]] = {"]
    tail += [f"    0x{m.class_id:04x}{m.index:04x}: {camel(m.class_name, m.name)}," for m in methods]
    tail += ["}", "", "METHODS_BY_NAME: dict[str, type[Method]] = {cls.NAME: cls for cls in METHODS.values()}", "",
             "# class-id -> content properties class", "PROPERTIES: dict[int, type[Properties]] = {"]
    tail += [f"    {c.index}: {camel(c.name)}Properties," for c in spec.classes if c.properties]
    tail += ["}", "", "CLASS_NAMES: dict[int, str] = {"]
    tail += [f"    {c.index}: {c.name!r}," for c in spec.classes]
    tail += ["}", ""]
    return "\n".join(head + body + tail)


def main() -> int:
    code = generate(load())
    if "--check" in sys.argv:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != code:
            print(f"{TARGET} is out of date: run python -m amqpspec.wire.amqp091.gen", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(code, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
