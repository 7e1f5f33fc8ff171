"""The Clause: one normative statement of a specification.

Clauses are built from the specification sources shipped in ``amqpspec/specdata`` and
never typed by hand, so the catalog cannot drift from the text it cites.
"""
from __future__ import annotations

import enum
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

    @property
    def rank(self) -> int:
        """Smaller is stronger: MUST NOT > MUST > SHOULD NOT > SHOULD > MAY > NONE."""
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
