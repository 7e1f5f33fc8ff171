"""Which catalog sentences a case's guideline quotes.

A case or check that cites no clause id names the text it checks instead (``guideline=``):
a field's doc, a reply code's description, a lower-case "should". That text must be quoted
verbatim from a specification file, so it can be resolved here to the ids of the sentences
it quotes (clauses or documentation sentences, see :func:`amqpspec.clauses.catalog`), and
every verdict names clause ids. A guideline that quotes nothing in the catalog is an error:
the text cannot drift from the specification.

The guideline's own markup, which is not quoted text:

* ``[...]`` -- anything in square brackets is an editorial note: a citation ("[3.1.4]",
  "[basic.ack multiple]") or an elision ("[...]"). It separates two quotations.
* ``...`` -- an elision; `` / `` -- the separator between quotations of different places.
* a leading label ``name: `` or ``name (code): `` -- the field, reply code or error condition
  whose description follows ("not-allowed (530): The client tried ..."). The label must name
  the element the quotation is found in (the last ``:``-part of ``amqp:link:detach-forced``).
* straight double quotes around a quotation.

Each remaining quotation is split into sentences like the catalogs are; each sentence (or a
fragment of one) must occur in exactly the text of catalog sentences. When the same text
occurs in several places, the places in or around the case's section win, then the
specification's over a vendor's copy; failing that, all are cited (the text says the same
thing in each).
"""
from __future__ import annotations

import functools
import re

from .keywords import collapse_whitespace
from .model import Clause, Level

__all__ = ["UnquotedTextError", "quotations", "resolve", "strongest"]

_BRACKETS_RE = re.compile(r"\[[^\]]*\]")
# " / ", an ellipsis, "; " before a capital, and the space between a closing quote and the
# label of the next quotation ('... decode." syntax-error (502): "The sender ...').
_SEPARATORS_RE = re.compile(r"\s+/\s+|\.\.\.|\u2026|;\s+(?=[A-Z])"
                            r"|(?<=\")\s+(?=[A-Za-z][\w:.\-]*(?:\s+\(\d+\))?:\s)")
_LABEL_RE = re.compile(r"^([A-Za-z][\w:.\-]*)(?:\s+\((\d+)\))?:\s+(?=\S)")
_LIST_MARKER_RE = re.compile(r"^(?:\d+|[a-z])[.)]$")


class UnquotedTextError(ValueError):
    """A guideline that is not verbatim text of the catalog."""


def quotations(guideline: str) -> list[str]:
    """The quoted pieces of a guideline, markup removed (see the module docstring)."""
    text = collapse_whitespace(guideline)
    pieces: list[str] = []
    for chunk in _BRACKETS_RE.split(text):
        for part in _SEPARATORS_RE.split(chunk):
            part = part.strip().strip(";,").strip()
            if part.startswith('"') and part.endswith('"') and len(part) > 1:
                part = part[1:-1].strip()
            if part and not _LIST_MARKER_RE.match(part):
                pieces.append(part)
    return pieces


@functools.lru_cache(maxsize=None)
def _units(protocol: str) -> tuple[Clause, ...]:
    from . import catalog  # the package imports this module

    return tuple(catalog(protocol, extensions=True, documentation=True))


def _near(units: list[Clause], section: str) -> list[Clause]:
    """The units in, above or below ``section`` (a case's section, "rabbitmq." prefix dropped)."""
    section = section.removeprefix("rabbitmq.")
    if not section:
        return units
    return [u for u in units if u.section == section or u.section.startswith(section + ".")
            or section.startswith(u.section + ".")]


def _label_names(unit: Clause) -> set[str]:
    """The names a label before a quotation may give for ``unit``'s element."""
    names = {p for p in re.split(r"[/.:]", unit.id.split(":", 1)[1]) if p}
    names |= {p.split(":", 1)[-1] for p in unit.source.split("/") if ":" in p}
    return names


def _cover(protocol: str, text: str) -> list[list[Clause]] | None:
    """The sentences ``text`` quotes, as groups of places holding the same sentence.

    ``text`` is a fragment of one sentence, or a run of whole sentences (the last one perhaps
    cut short): quotations join sentences with a space whatever punctuation ends them.
    """
    units = _units(protocol)
    found = [u for u in units if u.text == text] or [u for u in units if text in u.text]
    if found:
        return [found]
    groups: list[list[Clause]] = []
    rest = text
    while rest:
        starts = [u for u in units if rest.startswith(u.text)]
        if not starts:
            head = [u for u in units if u.text.startswith(rest)]
            return groups + [head] if head and groups else None
        longest = max(len(u.text) for u in starts)
        groups.append([u for u in starts if len(u.text) == longest])
        rest = rest[longest:].lstrip()
    return groups


def _unmatched(protocol: str, text: str) -> str:
    """Where a run of sentences stops matching the catalog (for the error message)."""
    rest = text.strip().strip('"').strip()
    m = _LABEL_RE.match(rest)
    if m and _match(protocol, rest, "") is None:
        rest = rest[m.end():].strip('"')
    units = _units(protocol)
    while rest:
        starts = [len(u.text) for u in units if rest.startswith(u.text)]
        if not starts:
            return rest
        rest = rest[max(starts):].lstrip()
    return text


def _match(protocol: str, text: str, section: str, label: str = "") -> list[Clause] | None:
    groups = _cover(protocol, text.strip().strip('"').strip())
    if groups is None:
        return None
    out: list[Clause] = []
    for group in groups:
        if label:
            group = [u for u in group if label in _label_names(u)]
            if not group:
                return None
        group = _near(group, section) or group
        # the specification's own text wins over a vendor's copy of it (the errata quote it)
        out += [u for u in group if not u.product] or group
    return out


def _resolve_piece(protocol: str, piece: str, section: str) -> list[Clause] | None:
    found = _match(protocol, piece, section)
    if found is None:
        m = _LABEL_RE.match(piece)
        if m:
            found = _match(protocol, piece[m.end():], section, m.group(1).rsplit(":", 1)[-1])
    return found


def resolve(protocol: str, guideline: str, section: str = "") -> tuple[str, ...]:
    """The ids of the catalog sentences ``guideline`` quotes, in order, without repeats.

    Raises :class:`UnquotedTextError` naming the first piece that no sentence holds.
    """
    return _resolve(protocol, collapse_whitespace(guideline), section)


@functools.lru_cache(maxsize=4096)
def _resolve(protocol: str, guideline: str, section: str) -> tuple[str, ...]:
    ids: list[str] = []
    pieces = quotations(guideline)
    if not pieces:
        raise UnquotedTextError("the guideline quotes no text")
    for quoted in pieces:
        found = _resolve_piece(protocol, quoted, section)
        if not found:
            raise UnquotedTextError(f"no {protocol} sentence contains {_unmatched(protocol, quoted)[:120]!r}")
        ids += [u.id for u in found if u.id not in ids]
    return tuple(ids)


def strongest(clauses: list[Clause]) -> Level:
    """The strongest level among ``clauses`` (DEFINITION when there are none)."""
    return min((c.level for c in clauses), key=lambda lv: lv.rank, default=Level.DEFINITION)
