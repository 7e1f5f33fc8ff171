"""The RabbitMQ profile's references point at what the shipped documents say.

An entry excuses failures, so its reference must be checkable: an errata section it names exists under
that title, a row of the "Compatibility and Conformance" tables it names exists with the status it
quotes, and every text it quotes from that page is on it. Case globs must select real cases, or an
entry silently excuses nothing (or, after a rename, something else).
"""
from __future__ import annotations

import fnmatch
import html
import re
from functools import cache
from importlib import resources

import pytest

from amqpspec import profiles
from amqpspec.case import discover

SPECDATA = resources.files("amqpspec") / "specdata" / "amqp-0-9-1"


def _plain(text: str) -> str:
    """Markup and line breaks out, entities decoded, runs of blanks as one space: what a reader sees."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


@cache
def _errata_sections() -> dict[str, str]:
    text = (SPECDATA / "errata.md").read_text(encoding="utf-8")
    return {m[1]: m[2].replace('"', "").strip().lower()
            for m in re.finditer(r"^## (\d+) (.+?)(?: \{#section_\d+\})?$", text, re.M)}


@cache
def _conformance() -> tuple[dict[tuple[str, str], set[str]], str]:
    """{(table, row name): statuses} of the methods and rules tables (a rule name such as "3.1.1" has
    several rows), and the page's plain text."""
    text = (SPECDATA / "rabbitmq-conformance.md").read_text(encoding="utf-8")
    rows: dict[tuple[str, str], set[str]] = {}
    for tr in re.findall(r"<tr([^>]*)>(.*?)</tr>", text, re.S):
        cells = [_plain(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr[1], re.S)]
        method = re.search(r'id="method-status-([^"]+)"', tr[0])
        if method and cells:
            rows.setdefault(("methods", method[1]), set()).add(cells[0])
        elif len(cells) == 5:   # status, type, actor, reference, text
            rows.setdefault(("rules", cells[3]), set()).add(cells[0])
    return rows, _plain(text)


@cache
def _errata_text() -> str:
    return _plain((SPECDATA / "errata.md").read_text(encoding="utf-8"))


def _rabbitmq() -> profiles.Profile:
    prof = profiles.for_product("RabbitMQ")
    assert prof is not None
    return prof


def test_conformance_page_is_parsed():
    rows, _ = _conformance()
    assert rows[("methods", "basic.recover")] == {"partial"}
    assert rows[("rules", "queue / delete / queue / must-exist")] == {"failing"}
    assert rows[("rules", "3.1.1")] == {"does", "doesn't"}
    assert len([k for k in rows if k[0] == "rules"]) > 100


@pytest.mark.parametrize("dev", _rabbitmq().deviations, ids=lambda d: d.summary[:60])
def test_rabbitmq_reference_is_in_the_documents(dev: profiles.Deviation):
    assert dev.reference.strip() and dev.summary.strip()
    rows, page = _conformance()
    named = 0
    for part in dev.reference.split(";"):
        errata = re.search(r"errata,? section (\d+) \(([^):]+)", part)
        if errata:   # the section's title, or its start (some end in a line reference to the XML)
            named += 1
            title = _errata_sections().get(errata[1], "")
            assert title.startswith(errata[2].lower()), f"errata section {errata[1]} is {title!r}, not {errata[2]!r}"
        table = re.search(r"(methods|rules) table, rows? (.+?) \(([^:;)]+)", part)
        if table:
            named += 1
            for name in table[2].split(" and "):
                assert (table[1], name) in rows, f"no row {name!r} in the {table[1]} table"
                assert table[3].strip() in rows[(table[1], name)], f"row {name!r} is {rows[(table[1], name)]!r}"
        if errata or table:
            for quoted in re.findall(r"'([^']{12,})'", part):
                assert _plain(quoted) in page + " " + _errata_text(), f"not in the cited documents: {quoted!r}"
        named += "https://" in part
    assert named, f"reference names no document section, row or page: {dev.reference!r}"


def test_case_globs_select_cases():
    ids = [c.id for protocol in ("0-9-1", "1.0") for c in discover(protocol)]
    for prof in profiles.builtin():
        for dev in prof.deviations:
            assert dev.clauses or dev.cases, f"{prof.source}: {dev.summary!r} can never apply"
            for glob in dev.cases:
                assert any(fnmatch.fnmatchcase(i, glob) for i in ids), f"{prof.source}: {glob!r} selects no case"
