"""Reads the AMQP 0-9-1 XML into a small model that the code generator walks.

Two files are read: the AMQP WG's ``amqp0-9-1.xml`` (the specification) and RabbitMQ's
``amqp0-9-1.extended.xml`` (the same plus its extensions). Definitions come from the
extended file so that extension methods exist in the codec, and each method is marked
as an extension when the base specification does not define it.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

SPEC_FILE = "amqp0-9-1.xml"
EXTENDED_FILE = "amqp0-9-1.extended.xml"
SECRET_FIELDS = {("connection", "response"), ("connection", "new-secret")}  # SASL data


def _text(elem: ET.Element | None) -> str:
    return re.sub(r"\s+", " ", "".join(elem.itertext())).strip() if elem is not None else ""


def read_spec_file(name: str) -> bytes:
    return resources.files("amqpspec").joinpath("specdata", "amqp-0-9-1", name).read_bytes()


@dataclass(frozen=True)
class XField:
    name: str
    domain: str
    type: str
    reserved: bool
    secret: bool
    label: str


@dataclass(frozen=True)
class XMethod:
    class_name: str
    class_id: int
    name: str
    index: int
    label: str
    synchronous: bool
    content: bool
    responses: tuple[str, ...]
    fields: tuple[XField, ...]
    extension: bool

    @property
    def full_name(self) -> str:
        return f"{self.class_name}.{self.name}"


@dataclass(frozen=True)
class XClass:
    name: str
    index: int
    label: str
    properties: tuple[XField, ...]
    methods: tuple[XMethod, ...]
    extension: bool


@dataclass(frozen=True)
class XConstant:
    name: str
    value: int
    cls: str  # "soft-error", "hard-error" or ""
    doc: str


@dataclass
class XSpec:
    major: int
    minor: int
    revision: int
    port: int
    constants: list[XConstant] = field(default_factory=list)
    domains: dict[str, str] = field(default_factory=dict)
    classes: list[XClass] = field(default_factory=list)


def _resolve(domains: dict[str, str], elem: ET.Element) -> tuple[str, str]:
    domain = elem.get("domain") or elem.get("type") or ""
    native = elem.get("type") or domains.get(domain, domain)
    while native in domains and domains[native] != native:
        native = domains[native]
    return domain, native


@lru_cache(maxsize=1)
def load() -> XSpec:
    base = ET.fromstring(read_spec_file(SPEC_FILE))
    ext = ET.fromstring(read_spec_file(EXTENDED_FILE))
    base_methods = {(c.get("name"), m.get("name")) for c in base.iter("class") for m in c.findall("method")}
    base_classes = {c.get("name") for c in base.iter("class")}
    spec = XSpec(int(ext.get("major", 0)), int(ext.get("minor", 0)), int(ext.get("revision", 0)), int(ext.get("port", 5672)))
    for c in ext.findall("constant"):
        spec.constants.append(XConstant(c.get("name", ""), int(c.get("value", "0")), c.get("class", ""), _text(c.find("doc"))))
    for d in ext.findall("domain"):
        spec.domains[d.get("name", "")] = d.get("type", "")
    for c in ext.findall("class"):
        cname = c.get("name", "")

        def mkfield(f: ET.Element) -> XField:
            domain, native = _resolve(spec.domains, f)
            return XField(f.get("name", ""), domain, native, f.get("reserved") == "1",
                          (cname, f.get("name")) in SECRET_FIELDS, f.get("label", ""))

        methods = []
        for m in c.findall("method"):
            methods.append(XMethod(
                class_name=cname, class_id=int(c.get("index", "0")), name=m.get("name", ""),
                index=int(m.get("index", "0")), label=m.get("label", ""),
                synchronous=m.get("synchronous") == "1", content=m.get("content") == "1",
                responses=tuple(f"{cname}.{r.get('name')}" for r in m.findall("response")),
                fields=tuple(mkfield(f) for f in m.findall("field")),
                extension=(cname, m.get("name")) not in base_methods,
            ))
        spec.classes.append(XClass(cname, int(c.get("index", "0")), c.get("label", ""),
                                   tuple(mkfield(f) for f in c.findall("field")), tuple(methods),
                                   cname not in base_classes))
    return spec
