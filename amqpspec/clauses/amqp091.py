"""The AMQP 0-9-1 clause catalog, built from the spec files in ``amqpspec/specdata``.

Three sources, three id schemes (all stable: they depend only on the spec text):

* every ``<rule>`` of ``amqp0-9-1.xml`` (115): ``amqp091:<class>[.<method>[.<field>]]/<rule>``,
  domain rules ``amqp091:domain.<name>/<rule>``. Rule names alone are not unique
  ("01" occurs 16 times) but this path is.
* the 24 rules that exist only in RabbitMQ's ``amqp0-9-1.extended.xml`` (exchange.bind /
  unbind, basic.nack, confirm, two on exchange.declare): same scheme, prefix
  ``rabbitmq091:``. They are not part of the specification, so they are kept out of the
  spec catalog and reports count them separately.
* every normative sentence of the prose ``amqp0-9-1.txt`` (60): ``amqp091:<section>/<k>``,
  ``k`` the 1-based ordinal of the normative sentence within its deepest numbered section.
* the statements of RabbitMQ's guides that cases rely on (``rabbitmq-guides.toml``, e.g.
  Direct Reply-To): ``rabbitmq091:<guide>/<name>``, counted with the extension rules.

Those are the normative catalog (:func:`catalog`), whose counts are the denominators of
coverage. Cases also rely on text that is not a clause: the meaning of a field or a reply
code, a lower-case "should", a field's label. :func:`documentation` gives every such sentence
an id too, so that every verdict names the text it stands on:

* every sentence of the ``<doc>`` elements (``type="grammar"`` included, scenarios excluded: those
  belong to their rule) of a class, method, field, domain or constant:
  ``amqp091:<class>[.<method>[.<field>]]/d<k>``, ``amqp091:domain.<name>/d<k>``,
  ``amqp091:constant.<name>/d<k>``, ``k`` the 1-based ordinal of the sentence among the
  element's own docs; the element's ``label`` attribute is ``.../label``, and each
  ``<chassis>`` of a class or method is ``.../chassis-<name>`` with the text
  ``<chassis name="server" implement="SHOULD"/>`` (the XML's own spelling, spaces removed),
  each ``<assert>`` is ``.../assert-<check>`` (``<assert check="length" value="127"/>``).
  The extended XML's elements that the specification lacks, and its sentences that the
  specification's element lacks (RabbitMQ reworded basic.cancel), get the prefix
  ``rabbitmq091:`` (ordinals as in the extended XML).
* with the extensions, every sentence of the paragraphs of RabbitMQ's errata page
  (``errata.md``): ``rabbitmq091:errata.<n>/d<k>``, ``n`` the erratum's number.
* every sentence of the prose that is not a clause: ``amqp091:<section>/d<k>``, ``k`` the
  ordinal of such sentences within the section (the clauses keep their own ordinals).

A documentation sentence takes the strongest upper-case keyword it contains (a field's doc can
say SHOULD), else :attr:`Level.DEFINITION`; a label is always a definition, a chassis takes its
``implement`` attribute.

Every ``rabbitmq091:`` clause is a vendor clause: it names the RabbitMQ releases its text
describes (``Clause.versions``) and the document edition it comes from (``Clause.source``),
since RabbitMQ's texts change between releases and a release is judged by its own.

The extraction follows the method of ``specs/README.md`` to the letter, because the counts
given there are the acceptance test of this module.
"""
from __future__ import annotations

import functools
import html
import re
import tomllib
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass, replace
from importlib import resources

from .keywords import (
    KEYWORD_LEVEL,
    collapse_whitespace,
    is_keyword_definition,
    split_sentences,
    strongest_level,
)
from .model import Clause, Level

__all__ = [
    "PROTOCOL",
    "SPEC_PREFIX",
    "EXTENSION_PREFIX",
    "XML_FILE",
    "EXTENDED_XML_FILE",
    "PROSE_FILE",
    "CatalogError",
    "ProseSentence",
    "spec_rules",
    "extension_rules",
    "guide_clauses",
    "VENDOR",
    "EXTENDED_XML_VERSIONS",
    "prose_clauses",
    "prose_sentences",
    "prose_body",
    "section_titles",
    "catalog",
    "documentation",
]

PROTOCOL = "0-9-1"
SPEC_PREFIX = "amqp091:"
EXTENSION_PREFIX = "rabbitmq091:"

_SPECDIR = "amqp-0-9-1"  # under amqpspec/specdata
XML_FILE = "amqp0-9-1.xml"
EXTENDED_XML_FILE = "amqp0-9-1.extended.xml"
PROSE_FILE = "amqp0-9-1.txt"
GUIDES_FILE = "rabbitmq-guides.toml"

VENDOR = "RabbitMQ"  # the product every rabbitmq091: clause describes (connection.start "product")
# The extended XML's methods (exchange.bind/unbind, basic.nack, confirm) and rules are the same
# in every RabbitMQ 3.x and 4.x release: RabbitMQ's Protocol Extensions guide lists them in its
# 3.13 and current editions alike, and the XML (rabbitmq/amqp-0.9.1-spec) has no per-release text.
EXTENDED_XML_VERSIONS = ">=3.0"
EXTENDED_XML_VERSIONS_SOURCE = ("RabbitMQ 3.x and 4.x alike (Protocol Extensions guide, 3.13 and current editions: "
                       "versioned_docs/version-3.13/extensions.md, docs/extensions.md)")

BULLET = "\ue00c"  # pdftotext renders the PDF's bullets as this private-use glyph


class CatalogError(ValueError):
    """The spec files do not yield a consistent catalog (duplicate ids, missing anchors).

    This means the files under amqpspec/specdata were changed or damaged: restore them
    from the sources named in their SOURCE.md.
    """


def _read_spec_bytes(name: str) -> bytes:
    return (resources.files("amqpspec") / "specdata" / _SPECDIR / name).read_bytes()


def _check_unique(clauses: list[Clause], what: str) -> None:
    counts = Counter(c.id for c in clauses)
    duplicates = sorted(i for i, n in counts.items() if n > 1)
    if duplicates:
        raise CatalogError(
            f"{what}: clause ids are not unique: {', '.join(duplicates)}. "
            "Each clause must have a distinct id; check the spec file for a rule "
            "or heading that now appears twice."
        )


# --------------------------------------------------------------------------- XML rules


def _id_part(name: str) -> str:
    """Rule names are used verbatim, except that the few with spaces (RabbitMQ's
    ``confirm`` rules, e.g. "all queues") get hyphens so an id is one shell word."""
    return re.sub(r"\s+", "-", name.strip())


def _doc_text(docs: list[ET.Element]) -> str:
    return collapse_whitespace(" ".join("".join(d.itertext()) for d in docs))


@functools.lru_cache(maxsize=None)
def _rules_by_path(xml_name: str) -> dict[str, Clause]:
    """Every rule of one XML file, keyed by its XML path (``class:x/method:y/rule:z``).

    Built with an empty id prefix; callers rename (and must not mutate the cached dict).
    Raises CatalogError on duplicates.
    """
    root = ET.fromstring(_read_spec_bytes(xml_name))
    out: dict[str, Clause] = {}

    def visit(elem: ET.Element, path: list[str], section: list[str], title: str) -> None:
        for child in elem:
            tag = child.tag
            if tag == "domain":
                visit(child, path + [f"domain:{child.get('name')}"],
                      ["domain", child.get("name", "")], child.get("label", ""))
            elif tag == "class":
                visit(child, path + [f"class:{child.get('name')}"],
                      [child.get("name", "")], child.get("label", ""))
            elif tag == "method":
                # The method's label titles the method and its fields (see model.Clause);
                # the confirm.select methods of the extended XML have none: use the name.
                visit(child, path + [f"method:{child.get('name')}"],
                      section + [child.get("name", "")],
                      child.get("label") or child.get("name", ""))
            elif tag == "field":
                visit(child, path + [f"field:{child.get('name')}"],
                      section + [child.get("name", "")], title)
            elif tag == "rule":
                name = child.get("name", "")
                xml_path = "/".join(path + [f"rule:{name}"])
                if xml_path in out:
                    raise CatalogError(f"{xml_name}: rule path {xml_path} occurs twice")
                docs = [d for d in child if d.tag == "doc" and d.get("type") != "scenario"]
                scenarios = [d for d in child if d.tag == "doc" and d.get("type") == "scenario"]
                text = _doc_text(docs)
                sec = ".".join(section)
                out[xml_path] = Clause(
                    id=f"{sec}/{_id_part(name)}",
                    protocol=PROTOCOL,
                    section=sec,
                    section_title=title,
                    level=strongest_level(text) or Level.NONE,
                    text=text,
                    source=f"{xml_name}:{xml_path}",
                    scenario=_doc_text(scenarios),
                    on_failure=child.get("on-failure", ""),
                )

    visit(root, [], [], "")
    return out


def _prefixed(clauses: list[Clause], prefix: str) -> tuple[Clause, ...]:
    return tuple(replace(c, id=prefix + c.id) for c in clauses)


@functools.lru_cache(maxsize=None)
def spec_rules() -> tuple[Clause, ...]:
    """The 115 ``<rule>`` elements of amqp0-9-1.xml, in document order."""
    rules = _prefixed(list(_rules_by_path(XML_FILE).values()), SPEC_PREFIX)
    _check_unique(list(rules), XML_FILE)
    return rules


@functools.lru_cache(maxsize=None)
def extension_rules() -> tuple[Clause, ...]:
    """The 24 rules that only RabbitMQ's amqp0-9-1.extended.xml has, in document order.

    A rule is an extension when its XML path is absent from amqp0-9-1.xml. Rules present
    in both files stay spec rules even where RabbitMQ reworded them (basic.ack field
    multiple, rule "exists"): the specification's wording is the one cited.
    """
    base = _rules_by_path(XML_FILE)
    extended = _rules_by_path(EXTENDED_XML_FILE)
    extra = [replace(c, product=VENDOR, versions=EXTENDED_XML_VERSIONS, versions_source=EXTENDED_XML_VERSIONS_SOURCE)
             for path, c in extended.items() if path not in base]
    rules = _prefixed(extra, EXTENSION_PREFIX)
    _check_unique(list(rules), EXTENDED_XML_FILE)
    return rules


@functools.lru_cache(maxsize=None)
def guide_clauses() -> tuple[Clause, ...]:
    """The statements of RabbitMQ's guides in rabbitmq-guides.toml, in file order.

    Each carries the releases it describes; a statement the guide changed appears once per
    range. Raises CatalogError on a malformed entry (bad level or version range, duplicates).
    """
    data = tomllib.loads(_read_spec_bytes(GUIDES_FILE).decode("utf-8"))
    out: list[Clause] = []
    for n, entry in enumerate(data.get("clause", []), 1):
        try:
            level = Level(entry["level"])
            clause = Clause(
                id=f"{EXTENSION_PREFIX}{entry['section']}/{entry['name']}",
                protocol=PROTOCOL,
                section=entry["section"],
                section_title=entry["title"],
                level=level,
                text=collapse_whitespace(entry["text"]),
                source=f"{GUIDES_FILE}:{entry['section']}/{entry['name']}",
                product=VENDOR,
                versions=entry["versions"],
                versions_source=f"RabbitMQ {entry['source']}",
            )
            clause.version_range  # noqa: B018 -- validates the spelling now, not at run time
        except (KeyError, ValueError) as exc:
            raise CatalogError(f"{GUIDES_FILE}: clause #{n} is malformed ({type(exc).__name__}: {exc}); "
                               "each needs section, title, name, level, versions, source and text") from None
        out.append(clause)
    _check_unique(out, GUIDES_FILE)
    return tuple(out)


# --------------------------------------------------------------------------- prose

# The two running footer lines of every page; the copyright line opens the next page
# after a form feed and carries the chapter title on its right.
_FOOTER_PAGE_RE = re.compile(
    r"^\s*Advanced Message Queuing Protocol Specification v0-9-1\s+Page \d+ of \d+\s*$"
)
_FOOTER_COPYRIGHT_RE = re.compile(
    r"^\s*Copyright \(c\) 2006-2008\. All rights reserved\. See Notice and License\.(\s.*)?$"
)
# "4.2.5.5 Field Tables": chapters 1-4, up to four levels, a title starting upper-case.
# Candidates must also be the *next* heading in sequence (see _is_successor), which rules
# out look-alikes such as table rows or a footnote marker.
_HEADING_RE = re.compile(r"^\s*([1-4](?:\.\d{1,2}){0,3})\s+([A-Z].*?)\s*$")
_START_RE = re.compile(r"^1 Overview\s*$")  # the TOC line has a dot leader and page number


@dataclass(frozen=True)
class ProseSentence:
    """One sentence of the prose body, normative or not, with its section."""

    section: str
    text: str


def _is_successor(current: tuple[int, ...], candidate: tuple[int, ...]) -> bool:
    """True when ``candidate`` can follow heading ``current`` in a numbered outline:
    its first child (4.2 -> 4.2.1), or the next sibling of it or of an ancestor."""
    depth = len(candidate)
    if depth > len(current) + 1:
        return False
    if candidate[:-1] != current[: depth - 1]:
        return False
    if depth == len(current) + 1:
        return candidate[-1] == 1
    return candidate[-1] == current[depth - 1] + 1


def _body_lines(text: str) -> list[str]:
    """The lines of the body, from the real "1 Overview" heading, without page footers."""
    lines = text.replace("\f", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if _START_RE.match(line)), None)
    if start is None:
        raise CatalogError(f"{PROSE_FILE}: the '1 Overview' heading after the table of "
                           "contents was not found")
    return [
        line
        for line in lines[start:]
        if not (_FOOTER_PAGE_RE.match(line) or _FOOTER_COPYRIGHT_RE.match(line))
    ]


@functools.lru_cache(maxsize=None)
def _parse_prose() -> tuple[tuple[tuple[str, str], ...], dict[str, str], str]:
    """Blocks of the body as (section, text), the heading titles, and the body text."""
    raw = _read_spec_bytes(PROSE_FILE).decode("utf-8")
    lines = _body_lines(raw)
    titles: dict[str, str] = {}
    blocks: list[tuple[str, str]] = []
    current: tuple[int, ...] = ()
    section = ""
    pending: list[str] = []

    def flush() -> None:
        if pending:
            text = collapse_whitespace(" ".join(pending))
            if text:
                blocks.append((section, text))
            pending.clear()

    for line in lines:
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        m = _HEADING_RE.match(line)
        if m:
            number = tuple(int(p) for p in m.group(1).split("."))
            if _is_successor(current, number):
                flush()
                current = number
                section = m.group(1)
                titles[section] = collapse_whitespace(m.group(2))
                continue
        if stripped.startswith(BULLET):
            flush()
            stripped = stripped[len(BULLET):].strip()
        pending.append(stripped)
    flush()
    if "4.10.2" not in titles:
        raise CatalogError(f"{PROSE_FILE}: numbered headings not found as expected "
                           f"(last heading seen: {section or 'none'})")
    body = "\n".join(lines)
    return tuple(blocks), titles, body


def prose_body() -> str:
    """The body text the prose clauses come from: from "1 Overview", footers removed."""
    return _parse_prose()[2]


@functools.lru_cache(maxsize=None)
def prose_sentences() -> tuple[ProseSentence, ...]:
    """Every sentence of the body (normative or not), for cross-checks and search."""
    blocks, _, _ = _parse_prose()
    return tuple(
        ProseSentence(section, sentence)
        for section, block in blocks
        for sentence in split_sentences(block)
    )


@functools.lru_cache(maxsize=None)
def prose_clauses() -> tuple[Clause, ...]:
    """The 60 normative sentences of amqp0-9-1.txt, in document order."""
    titles = section_titles()
    ordinal: Counter[str] = Counter()
    clauses: list[Clause] = []
    for sentence in prose_sentences():
        level = strongest_level(sentence.text)
        if level is None or is_keyword_definition(sentence.text):
            continue
        ordinal[sentence.section] += 1
        clauses.append(
            Clause(
                id=f"{SPEC_PREFIX}{sentence.section}/{ordinal[sentence.section]}",
                protocol=PROTOCOL,
                section=sentence.section,
                section_title=titles[sentence.section],
                level=level,
                text=sentence.text,
                source=f"{PROSE_FILE}:{sentence.section}",
            )
        )
    result = tuple(clauses)
    _check_unique(list(result), PROSE_FILE)
    return result


def section_titles() -> dict[str, str]:
    """Number -> title of every numbered heading of the prose ("4.2.3": "General Frame
    Format"), including headings without clauses, in document order."""
    return dict(_parse_prose()[1])


@functools.lru_cache(maxsize=None)
def _catalog(extensions: bool) -> tuple[Clause, ...]:
    clauses = prose_clauses() + spec_rules()
    if extensions:
        clauses += extension_rules() + guide_clauses()
    _check_unique(list(clauses), "AMQP 0-9-1 catalog")
    return clauses


def catalog(*, extensions: bool = False) -> list[Clause]:
    """Prose clauses then XML rules (then RabbitMQ's extension rules and guide statements if
    asked for)."""
    return list(_catalog(extensions))


# --------------------------------------------------------------------------- documentation


def _doc_units(xml_name: str) -> dict[str, list[Clause]]:
    """The documentation units of one XML file, grouped by element XML path (unprefixed ids)."""
    root = ET.fromstring(_read_spec_bytes(xml_name))
    out: dict[str, list[Clause]] = {}

    def unit(sec: str, title: str, name: str, level: Level, text: str, source: str) -> Clause:
        return Clause(id=f"{sec}/{name}", protocol=PROTOCOL, section=sec, section_title=title,
                      level=level, text=text, source=source)

    def visit(elem: ET.Element, path: list[str], section: list[str]) -> None:
        for child in elem:
            tag, name = child.tag, child.get("name", "")
            if tag not in ("domain", "class", "method", "field", "constant"):
                continue
            if tag in ("domain", "constant"):
                sec_parts = [tag, name]
            elif tag == "class":
                sec_parts = [name]
            else:
                sec_parts = section + [name]
            xml_path = "/".join(path + [f"{tag}:{name}"])
            sec = ".".join(sec_parts)
            title = child.get("label") or name
            units: list[Clause] = []
            if child.get("label"):
                units.append(unit(sec, title, "label", Level.DEFINITION,
                                  collapse_whitespace(child.get("label", "")), f"{xml_name}:{xml_path}/@label"))
            for check in (c for c in child if c.tag == "assert"):
                attrs = " ".join(f'{k}="{v}"' for k, v in check.attrib.items())
                units.append(unit(sec, title, f"assert-{check.get('check', '')}", Level.DEFINITION,
                                  f"<assert {attrs}/>", f"{xml_name}:{xml_path}/assert:{check.get('check', '')}"))
            for chassis in (c for c in child if c.tag == "chassis"):
                implement = chassis.get("implement", "")
                text = f'<chassis name="{chassis.get("name", "")}" implement="{implement}"/>'
                units.append(unit(sec, title, f"chassis-{chassis.get('name', '')}",
                                  KEYWORD_LEVEL.get(implement, Level.DEFINITION), text,
                                  f"{xml_name}:{xml_path}/chassis:{chassis.get('name', '')}"))
            k = 0
            for doc in (d for d in child if d.tag == "doc" and d.get("type") != "scenario"):
                for sentence in split_sentences("".join(doc.itertext())):
                    k += 1
                    units.append(unit(sec, title, f"d{k}", strongest_level(sentence) or Level.DEFINITION,
                                      sentence, f"{xml_name}:{xml_path}/doc"))
            if units:
                out[xml_path] = units
            visit(child, path + [f"{tag}:{name}"], sec_parts)

    visit(root, [], [])
    return out


ERRATA_FILE = "errata.md"
_ERRATUM_RE = re.compile(r"^## (\d+) (.*?)\s*\{#section_\d+\}\s*$", re.M)
_PARAGRAPH_RE = re.compile(r"<p[^>]*>(.*?)</p>", re.S)
_TAG_RE = re.compile(r"<[^>]+>")


def _errata_units() -> list[Clause]:
    """The sentences of RabbitMQ's errata page, one erratum per numbered heading."""
    text = _read_spec_bytes(ERRATA_FILE).decode("utf-8")
    heads = list(_ERRATUM_RE.finditer(text))
    out: list[Clause] = []
    for head, following in zip(heads, heads[1:] + [None]):
        body = text[head.end(): following.start() if following else len(text)]
        sec = f"errata.{head.group(1)}"
        sentences = [s for p in _PARAGRAPH_RE.findall(body)
                     for s in split_sentences(html.unescape(_TAG_RE.sub("", p)))]
        for k, sentence in enumerate(sentences, 1):
            out.append(Clause(id=f"{EXTENSION_PREFIX}{sec}/d{k}", protocol=PROTOCOL, section=sec,
                              section_title=f"RabbitMQ errata {head.group(1)}: {head.group(2)}",
                              level=strongest_level(sentence) or Level.DEFINITION, text=sentence,
                              source=f"{ERRATA_FILE}:section_{head.group(1)}", product=VENDOR,
                              versions=EXTENDED_XML_VERSIONS,
                              versions_source="RabbitMQ's AMQP 0-9-1 errata page (one edition for all releases)"))
    return out


@functools.lru_cache(maxsize=None)
def _documentation(extensions: bool) -> tuple[Clause, ...]:
    titles = section_titles()
    normative = {(c.section, c.text) for c in prose_clauses()}
    ordinal: Counter[str] = Counter()
    prose: list[Clause] = []
    for sentence in prose_sentences():
        if (sentence.section, sentence.text) in normative:
            continue
        ordinal[sentence.section] += 1
        prose.append(Clause(
            id=f"{SPEC_PREFIX}{sentence.section}/d{ordinal[sentence.section]}",
            protocol=PROTOCOL, section=sentence.section, section_title=titles[sentence.section],
            # the keyword-definition sentence names every keyword and requires nothing
            level=(Level.DEFINITION if is_keyword_definition(sentence.text)
                   else strongest_level(sentence.text) or Level.DEFINITION),
            text=sentence.text, source=f"{PROSE_FILE}:{sentence.section}",
        ))
    base = _doc_units(XML_FILE)
    units = list(prose) + [replace(c, id=SPEC_PREFIX + c.id) for group in base.values() for c in group]
    if extensions:
        # RabbitMQ's XML adds elements and rewords some docs of the specification's (basic.cancel
        # may be sent by the server): its sentences that the specification's element lacks.
        ours = {path: {c.text for c in group} for path, group in base.items()}
        units += [replace(c, id=EXTENSION_PREFIX + c.id, product=VENDOR, versions=EXTENDED_XML_VERSIONS,
                          versions_source=EXTENDED_XML_VERSIONS_SOURCE)
                  for path, group in _doc_units(EXTENDED_XML_FILE).items() for c in group
                  if c.text not in ours.get(path, ())]
        units += _errata_units()
    result = tuple(units)
    _check_unique(list(result) + list(_catalog(extensions)), "AMQP 0-9-1 documentation")
    return result


def documentation(*, extensions: bool = False) -> list[Clause]:
    """The sentences cases rely on that are not clauses (see the module docstring), in a
    stable order: the prose's, then the XML docs' in document order (then the extended XML's
    elements that the specification lacks, if asked for)."""
    return list(_documentation(extensions))
