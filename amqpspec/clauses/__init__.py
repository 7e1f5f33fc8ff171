"""Clause catalogs: every normative statement of a specification, with a stable id.

Catalogs are built from the spec files in ``amqpspec/specdata`` on first use and cached
for the life of the process (the CLI asks on every start; a build takes a few tens of ms).

>>> from amqpspec import clauses
>>> clauses.get("amqp091:4.2.3/1").text
'The frame-end octet MUST always be the hexadecimal value %xCE.'
>>> clauses.get("amqp10:2.4.1/1").level
<Level.MUST: 'MUST'>
"""
from __future__ import annotations

import difflib
import functools
import re

from . import amqp091, amqp10, quote
from .model import Clause, Level

__all__ = [
    "Clause",
    "Level",
    "PROTOCOLS",
    "CatalogNotBuiltError",
    "UnknownClauseError",
    "UnknownProtocolError",
    "catalog",
    "by_id",
    "get",
    "is_documentation",
    "quote",
    "section_titles",
    "protocol_of",
]

PROTOCOLS: tuple[str, ...] = ("0-9-1", "1.0")

# Id prefix -> protocol. rabbitmq091: ids are 0-9-1 clauses that only RabbitMQ defines.
_PREFIX_PROTOCOL = {
    amqp091.SPEC_PREFIX: "0-9-1",
    amqp091.EXTENSION_PREFIX: "0-9-1",
    amqp10.PREFIX: "1.0",
    **{prefix: "1.0" for prefix in amqp10.VENDOR_PREFIXES},
}


class UnknownProtocolError(ValueError):
    """A protocol name that is neither "0-9-1" nor "1.0"."""


class CatalogNotBuiltError(NotImplementedError):
    """The protocol is known but its clause catalog does not exist yet.

    No protocol raises it any more (both catalogs are built); kept so callers that catch
    it keep working."""


class UnknownClauseError(KeyError):
    """A clause id that no catalog contains."""

    def __str__(self) -> str:  # KeyError would print the message with quotes around it
        return str(self.args[0]) if self.args else ""


def _check_protocol(protocol: str) -> str:
    if protocol not in PROTOCOLS:
        raise UnknownProtocolError(
            f"unknown protocol {protocol!r}: use one of {', '.join(map(repr, PROTOCOLS))}"
        )
    return protocol


def catalog(protocol: str, *, extensions: bool = False, documentation: bool = False) -> list[Clause]:
    """All clauses of ``protocol``, in a stable order (a fresh list each call).

    With ``documentation``, the list goes on with the sentences that are not clauses but that
    cases rely on (a field's meaning, a reply code's description, a label; see
    ``amqp091.documentation`` and ``amqp10.documentation``). Those are never part of the
    counts: the normative catalog alone is the denominator of coverage.

    For "0-9-1": the 60 prose sentences, then the 115 XML rules; with ``extensions`` also
    the 24 RabbitMQ-only rules (ids ``rabbitmq091:...``), which reports count apart from
    the specification.

    For "1.0": the 366 normative sentences of the prose, then the 5 normative notes of
    figures (see :mod:`amqpspec.clauses.amqp10`). The 1.0 extension specifications are
    not shipped, so ``extensions`` changes nothing there.
    """
    if _check_protocol(protocol) == "1.0":
        return amqp10.catalog() + (amqp10.documentation() if documentation else [])
    return amqp091.catalog(extensions=extensions) + (
        amqp091.documentation(extensions=extensions) if documentation else [])


def by_id(protocol: str, *, extensions: bool = True, documentation: bool = False) -> dict[str, Clause]:
    """Clauses of ``protocol`` keyed by id. Extension clauses are included by default,
    since looking one up never changes what the specification says; documentation
    sentences only when asked for (callers that count clauses use this without them)."""
    return dict(_index(protocol, extensions, documentation))


@functools.lru_cache(maxsize=None)
def _index(protocol: str, extensions: bool, documentation: bool = False) -> dict[str, Clause]:
    return {c.id: c for c in catalog(protocol, extensions=extensions, documentation=documentation)}


def is_documentation(clause: Clause) -> bool:
    """Whether ``clause`` is a documentation sentence rather than a clause of the catalog."""
    return clause.id not in _index(clause.protocol, True, False)


def protocol_of(clause_id: str) -> str:
    """The protocol a clause id belongs to, from its prefix ("amqp091:..." -> "0-9-1")."""
    for prefix, protocol in _PREFIX_PROTOCOL.items():
        if clause_id.startswith(prefix):
            return protocol
    raise UnknownClauseError(
        f"clause id {clause_id!r} has no known prefix; ids start with "
        f"{', '.join(_PREFIX_PROTOCOL)} (e.g. 'amqp091:4.2.3/1', "
        "'amqp091:connection.start/protocol-name', 'amqp10:2.7.1/4')"
    )


def get(clause_id: str) -> Clause:
    """The clause with this id, whatever its prefix (amqp091:, rabbitmq091:, amqp10:);
    documentation sentences (``amqp091:basic.get.no-ack/d1``) are found too.

    Rule names containing spaces ("not mandatory") are spelt with hyphens in ids; the
    spelling with spaces is accepted too.
    """
    index = _index(protocol_of(clause_id), True, True)
    clause = index.get(clause_id)
    if clause is None:
        head, sep, name = clause_id.rpartition("/")
        clause = index.get(head + sep + re.sub(r"\s+", "-", name.strip())) if sep else None
    if clause is None:
        close = difflib.get_close_matches(clause_id, list(index), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UnknownClauseError(f"no clause with id {clause_id!r}{hint}")
    return clause


def section_titles(protocol: str) -> dict[str, str]:
    """Number -> title of every numbered heading of the protocol's prose, e.g.
    ``{"4.2.3": "General Frame Format", ...}`` (0-9-1, 108 headings) or
    ``{"2.7.1": "Open", ...}`` (1.0, 190 headings), including sections without clauses."""
    if _check_protocol(protocol) == "1.0":
        return amqp10.section_titles()
    return amqp091.section_titles()
