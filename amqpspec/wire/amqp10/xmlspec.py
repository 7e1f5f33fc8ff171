"""Reads the AMQP 1.0 type definitions of the OASIS XML into a small model for ``gen.py``.

Five documents define types: ``types`` (the primitive types and their encodings),
``transport`` (performatives, errors), ``messaging`` (sections, delivery states, terminus),
``security`` (SASL frames) and ``transactions``. Every ``<type>`` element becomes an
:class:`XType`; its ``<encoding>``, ``<descriptor>``, ``<field>`` and ``<choice>`` children
keep the attributes of the XML unchanged (strings parsed to numbers where the DTD says so).
Section numbers, which the XML lacks, come from ``section-index.tsv`` (``type-<name>``).
"""
from __future__ import annotations

import csv
import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

DOCUMENTS = ("types", "transport", "messaging", "security", "transactions")
SPEC_DIR = "amqp-1.0"
INDEX_FILE = "section-index.tsv"


def spec_file(document: str) -> str:
    return f"amqp-core-{document}-v1.0-os.xml"


def read_spec_file(name: str) -> bytes:
    return resources.files("amqpspec").joinpath("specdata", SPEC_DIR, name).read_bytes()


@dataclass(frozen=True)
class XEncoding:
    type: str       # the primitive type: "uint"
    name: str       # the XML name, "" when the element has none: "smalluint"
    code: int       # the constructor: 0x52
    category: str   # fixed | variable | compound | array
    width: int      # octets of the value (fixed) or of the size/count fields (the others)
    label: str


@dataclass(frozen=True)
class XChoice:
    name: str
    value: str


@dataclass(frozen=True)
class XField:
    name: str
    type: str
    requires: tuple[str, ...]
    default: str | None
    mandatory: bool
    multiple: bool
    label: str


@dataclass(frozen=True)
class XType:
    name: str
    cls: str                    # primitive | composite | restricted
    source: str                 # the underlying type ("list" for composites; "" for primitives)
    provides: tuple[str, ...]
    label: str
    document: str               # "transport", ...
    section: str                # the XML <section name> it is defined in
    number: str                 # the spec's section number ("2.7.1"), "" when not indexed
    descriptor_name: str = ""   # "amqp:open:list"
    descriptor_code: int | None = None  # domain-id << 32 | descriptor-id
    fields: tuple[XField, ...] = ()
    choices: tuple[XChoice, ...] = ()
    encodings: tuple[XEncoding, ...] = ()


@dataclass(frozen=True)
class XDefinition:
    name: str
    value: str
    label: str
    document: str


@dataclass
class XSpec:
    types: dict[str, XType] = field(default_factory=dict)
    definitions: list[XDefinition] = field(default_factory=list)

    def primitive_of(self, name: str) -> str:
        """The primitive type a (restricted) type is ultimately encoded as; '*' for any."""
        seen = set()
        while name in self.types and self.types[name].cls == "restricted":
            if name in seen:  # pragma: no cover - the XML has no cycles
                break
            seen.add(name)
            name = self.types[name].source
        if name in self.types and self.types[name].cls == "composite":
            return "list"
        return name

    def providers(self, archetype: str) -> list[XType]:
        return [t for t in self.types.values() if archetype in t.provides]


def _descriptor_code(text: str) -> int:
    domain, _, ident = text.partition(":")
    return int(domain, 16) << 32 | int(ident, 16)


def _section_numbers() -> dict[str, str]:
    rows = csv.DictReader(io.StringIO(read_spec_file(INDEX_FILE).decode("utf-8")), delimiter="\t")
    return {r["html_anchor"][len("type-"):]: r["number"] for r in rows if r["html_anchor"].startswith("type-")}


def _split(text: str | None) -> tuple[str, ...]:
    return tuple(p.strip() for p in (text or "").split(",") if p.strip())


@lru_cache(maxsize=1)
def load() -> XSpec:
    numbers = _section_numbers()
    spec = XSpec()
    for document in DOCUMENTS:
        root = ET.fromstring(read_spec_file(spec_file(document)))
        for section in root.iter("section"):
            for t in section.findall("type"):
                desc = t.find("descriptor")
                name = t.get("name", "")
                spec.types[name] = XType(
                    name=name,
                    cls=t.get("class", ""),
                    source=t.get("source", ""),
                    provides=_split(t.get("provides")),
                    label=t.get("label", ""),
                    document=document,
                    section=section.get("name", ""),
                    number=numbers.get(name, ""),
                    descriptor_name=desc.get("name", "") if desc is not None else "",
                    descriptor_code=_descriptor_code(desc.get("code", "")) if desc is not None else None,
                    fields=tuple(XField(
                        name=f.get("name", ""), type=f.get("type", ""), requires=_split(f.get("requires")),
                        default=f.get("default"), mandatory=f.get("mandatory") == "true",
                        multiple=f.get("multiple") == "true", label=f.get("label", ""),
                    ) for f in t.findall("field")),
                    choices=tuple(XChoice(c.get("name", ""), c.get("value", "")) for c in t.findall("choice")),
                    encodings=tuple(XEncoding(
                        type=name, name=e.get("name", ""), code=int(e.get("code", "0"), 16),
                        category=e.get("category", ""), width=int(e.get("width", "0")), label=e.get("label", ""),
                    ) for e in t.findall("encoding")),
                )
            for d in section.findall("definition"):
                spec.definitions.append(XDefinition(d.get("name", ""), d.get("value", ""),
                                                    " ".join(d.get("label", "").split()), document))
    return spec
