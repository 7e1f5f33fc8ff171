"""The Clause: one normative statement of a specification.

Clauses are built from the specification sources shipped in ``amqpspec/specdata`` and
never typed by hand, so the catalog cannot drift from the text it cites.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass


class Level(str, enum.Enum):
    """RFC 2119 strength of a clause; a unit takes the strongest keyword it contains."""

    MUST_NOT = "MUST NOT"
    MUST = "MUST"
    SHOULD_NOT = "SHOULD NOT"
    SHOULD = "SHOULD"
    MAY = "MAY"
    # A rule element without any upper-case keyword (two 0-9-1 "syntax" rules): it still
    # states what is valid, so a violation is reported, but with the weight the citing case gives.
    NONE = "NONE"
    # A sentence without any keyword (a field's meaning, a reply code's glossary entry, a
    # lower-case "should", a label): cases may rely on it, but it obliges nobody, so a check
    # citing only such sentences is informational. Never part of the normative catalogs.
    DEFINITION = "definition"

    @property
    def rank(self) -> int:
        """Smaller is stronger: MUST NOT > MUST > SHOULD NOT > SHOULD > MAY > NONE > definition."""
        return _RANK[self]

    @property
    def family(self) -> str:
        """MUST / SHOULD / MAY: the compliance bucket a report aggregates by."""
        if self in (Level.MUST, Level.MUST_NOT):
            return "MUST"
        if self in (Level.SHOULD, Level.SHOULD_NOT):
            return "SHOULD"
        if self is Level.MAY:
            return "MAY"
        if self is Level.DEFINITION:
            return "DEFINITION"
        return "NONE"


_RANK = {lvl: i for i, lvl in enumerate(Level)}


@dataclass(frozen=True)
class Clause:
    """One normative statement: a ``<rule>`` of the 0-9-1 XML or a sentence of the prose."""

    id: str            # stable id, e.g. "amqp091:connection.start/protocol-name", "amqp091:4.2.3/2"
    protocol: str      # "0-9-1" or "1.0"
    section: str       # "4.2.3" for prose; "connection.start" (class[.method[.field]]) for XML rules
    section_title: str  # "General Frame Format", or the method label for XML rules
    level: Level
    text: str          # verbatim text, whitespace collapsed
    source: str        # file name inside specdata plus locator, e.g. "amqp0-9-1.xml:class:connection/method:start/rule:protocol-name"
    scenario: str = ""  # the XML rule's <doc type="scenario">, when it has one
    on_failure: str = ""  # the XML rule's on-failure reply code name, when it has one
    # Vendor clauses only: the product whose documentation states the text, the releases of it
    # the text describes (a VersionRange spelling, e.g. ">=3.0,<4.2"), and the document
    # edition(s) that say so (versions_source). A vendor's text changes between releases
    # (RabbitMQ 3.x returned a mandatory Direct Reply-To reply, 4.2 routes it), so a release
    # outside the range is not judged by it. Empty for the specifications, which have one text.
    product: str = ""
    versions: str = ""
    versions_source: str = ""

    @property
    def version_range(self) -> "VersionRange":
        return VersionRange.parse(self.versions)

    def applies_to(self, product: str, version: str) -> bool:
        """Whether this clause judges a broker announcing ``product`` / ``version``.

        A specification clause judges every broker. A vendor clause judges the vendor's releases
        in its range; a broker of another product implementing the vendor's extension (or one
        whose version cannot be read) is judged by the vendor's current text, the clause whose
        range has no upper bound: that is the text such an implementation follows.
        """
        if not self.versions:
            return True
        rng = self.version_range
        if product.strip().lower() != self.product.lower():
            return rng.upper is None
        parsed = parse_version(version)
        if parsed is None:
            return rng.upper is None
        return rng.contains(parsed)

    def applicability(self) -> str:
        """"RabbitMQ >=3.4,<4.2" for a vendor clause, "" for a specification clause."""
        return f"{self.product} {self.versions}".strip() if self.versions else ""


_VERSION_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
_BOUND_RE = re.compile(r"^(>=|<)\s*(\d+(?:\.\d+)*)$")


def parse_version(text: str) -> tuple[int, ...] | None:
    """The leading dotted numbers of a product version ("3.10.8", "4.2.0-rc.1" -> (4, 2, 0)),
    or None when it does not start with one."""
    m = _VERSION_RE.match(text or "")
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def _padded(v: tuple[int, ...], n: int) -> tuple[int, ...]:
    return v + (0,) * (n - len(v))


@dataclass(frozen=True)
class VersionRange:
    """A half-open range of releases, ``>=lower`` and/or ``<upper`` ("" is every release).

    Two bounds are all a vendor clause needs (the release where a text took effect and the one
    where it was replaced), so nothing richer is parsed; a bad spelling raises ValueError.
    """

    lower: tuple[int, ...] | None = None
    upper: tuple[int, ...] | None = None

    @classmethod
    def parse(cls, text: str) -> "VersionRange":
        lower = upper = None
        for part in filter(None, (p.strip() for p in (text or "").split(","))):
            m = _BOUND_RE.match(part)
            if not m:
                raise ValueError(f"version bound {part!r} is not '>=X.Y' or '<X.Y'")
            bound = tuple(int(p) for p in m.group(2).split("."))
            if m.group(1) == ">=":
                lower = bound
            else:
                upper = bound
        return cls(lower, upper)

    def contains(self, version: tuple[int, ...]) -> bool:
        n = max(len(version), len(self.lower or ()), len(self.upper or ()))
        v = _padded(version, n)
        if self.lower is not None and v < _padded(self.lower, n):
            return False
        return self.upper is None or v < _padded(self.upper, n)
