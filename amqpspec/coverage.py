"""Which clauses the catalog covers, and why the others are untested.

A clause is either cited by at least one case (broker or client role), or listed in the protocol's
``untested.toml`` (next to its cases) with a reason category and a note. A unit test
keeps the two apart: a clause that gains a case must leave the untested list, and every
listed id must exist, so the accounting cannot drift from the catalog.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources

from amqpspec import clauses as catalog
from amqpspec.case import CASE_PACKAGES, discover

REASONS = {
    "client-side": "an obligation of the client: nothing the server does shows whether it holds",
    "not-observable": "happens inside the broker (logging, memory layout): nothing on the wire shows it",
    "implementation-defined": "the text leaves the behaviour to the implementation: any outcome conforms",
    "documentation": "about names in implementers' source code and documentation, not about behaviour",
    "needs-restart": "needs the broker restarted, which the suite cannot do through AMQP",
    "needs-admin": "needs broker configuration (users, permissions, limits) the suite cannot create through AMQP",
    "needs-second-broker": "needs a second broker (federation, clustering)",
    "timing": "a fairness or timing property the suite cannot decide reliably from outside",
    "not-a-requirement": "a permission (MAY) or a definition that asks nothing checkable of the broker",
    "optional-feature": "needs an optional feature (e.g. link recovery) that the suite does not exercise yet",
}


@dataclass(frozen=True)
class Untested:
    clause: str
    reason: str
    note: str


@dataclass
class ClauseCoverage:
    clause: catalog.Clause
    cases: list[str] = field(default_factory=list)
    untested: Untested | None = None
    #: client-role cases citing the clause (amqpspec client): shown beside the broker-side
    #: coverage; the broker-side counts never include them
    client_cases: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        """``covered`` when a broker case cites the clause; ``client-covered`` when only client
        cases do (an obligation of the client, judged by ``amqpspec client``: it needs no entry in
        untested.toml any more); else ``untested`` with a reason, or ``unaccounted``."""
        if self.cases:
            return "covered"
        if self.client_cases:
            return "client-covered"
        return "untested" if self.untested else "unaccounted"


def load_untested(protocol: str) -> list[Untested]:
    """The protocol's untested list (empty when the catalog has none)."""
    package = CASE_PACKAGES[protocol][0]
    try:
        text = resources.files(package).joinpath("untested.toml").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        return []
    data = tomllib.loads(text)
    out = []
    for row in data.get("untested", []):
        reason = row.get("reason", "")
        if reason not in REASONS:
            raise ValueError(f"{package}/untested.toml: {row.get('clause')}: unknown reason {reason!r} "
                             f"(one of {', '.join(REASONS)})")
        out.append(Untested(row["clause"], reason, row.get("note", "")))
    return out


def coverage(protocol: str, *, extensions: bool = False) -> list[ClauseCoverage]:
    rows = {c.id: ClauseCoverage(c) for c in catalog.catalog(protocol, extensions=extensions)}
    for case in discover(protocol):
        for cid in case.cited:  # a guideline quoting a clause's sentence does not cover it
            if cid in rows:
                rows[cid].cases.append(case.id)
    for case in discover(protocol, role="client"):
        for cid in case.cited:
            if cid in rows:
                rows[cid].client_cases.append(case.id)
    for item in load_untested(protocol):
        if item.clause in rows:
            rows[item.clause].untested = item
    return list(rows.values())


def documentation_coverage(protocol: str) -> list[ClauseCoverage]:
    """The documentation sentences (see :func:`amqpspec.clauses.catalog`) and the cases whose
    guideline quotes each, in catalog order: the text that verdicts without a clause of their own
    stand on. Apart from :func:`coverage`, whose MUST/SHOULD/MAY counts it never changes."""
    normative = set(catalog.by_id(protocol, extensions=True))
    rows = {c.id: ClauseCoverage(c) for c in catalog.catalog(protocol, extensions=True, documentation=True)
            if c.id not in normative}
    for case in discover(protocol):
        for cid in case.quoted:
            if cid in rows:
                rows[cid].cases.append(case.id)
    return list(rows.values())
