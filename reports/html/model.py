"""The objects the templates read: targets, their cases, the annotated specification.

Built once from the bundle and the latest-run rows of the dataset (see :mod:`.load`), so
templates only format; every decision (which status a clause has, which failure is worst,
where a page lives) is made here, in Python, where it is tested.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from amqpspec import clauses as catalog
from amqpspec.reports.console import case_sort_key, format_close, section_sort_key

from .status import STATUSES, Badness, badness, case_category, clause_status

VERDICTS = ("passed", "failed", "warning", "informational", "skipped", "error")
FAMILIES = ("MUST", "SHOULD", "MAY", "DEFINITION", "NONE", "UNKNOWN")
PROTOCOL_SLUGS = {"0-9-1": "amqp091", "1.0": "amqp10"}


def slug(text: Any, limit: int = 80) -> str:
    """A file-name-safe, unique name for any string (case ids and keys come from files)."""
    raw = str(text)
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", raw).strip("._")[:limit] or "x"
    return f"{base}-{hashlib.sha1(raw.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def protocol_slug(protocol: str) -> str:
    return PROTOCOL_SLUGS.get(protocol) or slug(protocol)


@dataclass
class ClauseRef:
    id: str
    verdict: str
    level: str | None
    family: str
    known: bool
    text: str = ""
    spec_href: str | None = None   # the clause in the annotated specification


@dataclass
class CaseView:
    target_key: str
    case: str
    title: str
    section: str
    section_title: str
    verdict: str
    reason: str
    deviation: str | None
    expected: str
    observed: str
    close: dict[str, Any]
    duration_s: float
    started_at: Any
    seed: Any
    replay: str
    run_id: str
    target_url: str
    source_file: str | None
    source_line: int | None
    clauses: list[ClauseRef]
    href: str
    category: str = ""
    order: Badness | None = None
    # from the original result record, when it can still be read
    record: dict[str, Any] | None = None
    record_problem: str | None = None
    pcap_href: str | None = None

    @property
    def close_text(self) -> str:
        return format_close(self.close)

    @property
    def failing_clauses(self) -> list[ClauseRef]:
        return [c for c in self.clauses if c.verdict in ("failed", "warning")]


@dataclass
class TargetView:
    key: str
    product: str
    version: str
    protocol: str
    platform: str | None
    runs: int
    latest_run: str
    slug: str
    counts: dict[str, Any]            # the bundle's verdict_counts entry
    compliance: dict[str, Any]        # the bundle's compliance entry
    last_started_at: Any = None
    target_url: str = ""              # of the latest run: tells apart brokers that send no product name
    cases: list[CaseView] = field(default_factory=list)
    role: str = "broker"              # "client": a client library judged by amqpspec client (see .clients)
    driver: str | None = None         # the client's driver (drivers/<name>)

    @property
    def href(self) -> str:
        return f"html/t/{self.slug}/index.html"

    def list_href(self, category: str = "all", page: int = 1) -> str:
        return f"html/t/{self.slug}/{category}-{page}.html"

    @property
    def worst(self) -> list[CaseView]:
        return [c for c in self.cases if c.category in ("failed", "warning", "deviation", "error")]


def _case_href(target_slug: str, case_id: str) -> str:
    return f"html/t/{target_slug}/c/{slug(case_id)}.html"


def clause_anchor(clause_id: str) -> str:
    return "cl-" + re.sub(r"[^A-Za-z0-9_-]+", "-", clause_id)


def spec_href(protocol: str, clause_id: str) -> str:
    return f"html/spec/{protocol_slug(protocol)}.html#{clause_anchor(clause_id)}"


def _clause_text(clause_id: str) -> tuple[str, str | None, str, bool]:
    try:
        clause = catalog.get(clause_id)
    except (catalog.UnknownClauseError, KeyError, ValueError):
        return "", None, "UNKNOWN", False
    return clause.text, clause.level.value, clause.level.family, True


def build_cases(target: TargetView, rows: list[dict[str, Any]]) -> list[CaseView]:
    """One CaseView per distinct case of the rows (rows are case x clause), worst first."""
    by_case: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_case[str(row.get("case") or "")].append(row)
    cases = []
    for case_id, case_rows in by_case.items():
        first = case_rows[0]
        refs = []
        for row in case_rows:
            cid = row.get("clause")
            if not cid:
                continue
            text, level, family, known = _clause_text(str(cid))
            refs.append(ClauseRef(
                id=str(cid), verdict=str(row.get("clause_verdict") or row.get("verdict") or ""),
                level=row.get("level") or level, family=row.get("family") or family, known=known, text=text,
                spec_href=spec_href(target.protocol, str(cid)) if known else None))
        verdict = str(first.get("verdict") or "error")
        view = CaseView(
            target_key=target.key, case=case_id, title=str(first.get("title") or ""),
            section=str(first.get("section") or ""), section_title=str(first.get("section_title") or ""),
            verdict=verdict if verdict in VERDICTS else "error", reason=str(first.get("reason") or ""),
            deviation=first.get("deviation") or None, expected=str(first.get("expected") or ""),
            observed=str(first.get("observed") or ""),
            close={"who": first.get("close_who") or "none", "how": first.get("close_how") or "none",
                   "code": first.get("close_code"), "matched": first.get("close_matched")},
            duration_s=float(first.get("duration_s") or 0.0), started_at=first.get("started_at"),
            seed=first.get("seed"), replay=str(first.get("replay") or ""), run_id=str(first.get("run_id") or ""),
            target_url=str(first.get("target_url") or ""), source_file=first.get("source_file"),
            source_line=first.get("source_line"), clauses=refs, href=_case_href(target.slug, case_id))
        view.category = case_category(view.verdict, view.deviation)
        view.order = badness(view.category, [c.family for c in view.failing_clauses] or
                             [c.family for c in refs], section_sort_key(view.section), case_sort_key(case_id))
        cases.append(view)
    cases.sort(key=lambda c: c.order)
    return cases


# ----------------------------------------------------------------------------------------
# the annotated specification
# ----------------------------------------------------------------------------------------

@dataclass
class CaseLink:
    """A case citing a clause, with the verdict of its checks on that clause (a case may
    fail on one clause it cites and pass on another)."""

    case: CaseView
    verdict: str

    @property
    def category(self) -> str:
        return case_category(self.verdict, self.case.deviation)


@dataclass
class SpecCell:
    status: str
    cases: list[CaseLink] = field(default_factory=list)
    covering: list[str] | None = None   # a client column's own covering cases (None: the clause's)
    note: str = ""                      # why a client column has no verdict


@dataclass
class SpecClause:
    id: str
    anchor: str
    level: str
    family: str
    text: str
    scenario: str
    cells: list[SpecCell]
    untested: Any = None                 # amqpspec.coverage.Untested
    untested_label: str = ""
    covering: list[str] = field(default_factory=list)   # case ids of the catalog citing it


@dataclass
class SpecSection:
    number: str
    title: str
    depth: int                           # 1..4, for the heading level
    clauses: list[SpecClause] = field(default_factory=list)
    part: str = ""                       # set on the first section of a part (e.g. "XML rules")


@dataclass
class SpecView:
    protocol: str
    slug: str
    targets: list[TargetView]
    sections: list[SpecSection]
    totals: list[Counter[str]]            # per target: clauses by status
    clause_count: int

    @property
    def href(self) -> str:
        return f"html/spec/{self.slug}.html"


def _links(rows: list[dict[str, Any]], cases: dict[str, CaseView]) -> list[CaseLink]:
    links: dict[str, CaseLink] = {}
    for row in rows:
        case = cases.get(str(row.get("case")))
        if case is not None and case.case not in links:
            links[case.case] = CaseLink(case, str(row.get("clause_verdict") or case.verdict))
    order = {"failed": 0, "warning": 1, "deviation": 2, "error": 3, "skipped": 4, "informational": 5, "passed": 6}
    return sorted(links.values(), key=lambda link: (order.get(link.category, 3), link.case.order))


def _ancestors(section: str) -> list[str]:
    parts = section.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def build_spec(protocol: str, targets: list[TargetView], rows_by_target: dict[str, list[dict[str, Any]]]) -> SpecView:
    """Every clause of the protocol's catalog in document order, grouped by section, with its
    status for each target of that protocol."""
    from amqpspec.coverage import REASONS, coverage

    titles = catalog.section_titles(protocol)
    try:
        accounting = {row.clause.id: row for row in coverage(protocol, extensions=True)}
    except Exception:  # a catalog that does not import must not cost the report
        accounting = {}
    case_by_id = [{c.case: c for c in t.cases} for t in targets]
    cites: list[dict[str, list[dict[str, Any]]]] = []
    for t in targets:
        per: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows_by_target.get(t.key, []):
            if row.get("clause"):
                per[str(row["clause"])].append(row)
        cites.append(per)

    sections: list[SpecSection] = []
    by_number: dict[str, SpecSection] = {}
    emitted: set[str] = set()
    totals = [Counter() for _ in targets]
    clauses = catalog.catalog(protocol, extensions=True)
    part = ""
    for clause in clauses:
        numeric = bool(re.fullmatch(r"[0-9]+(\.[0-9]+)*", clause.section))
        this_part = ("Vendor extensions (RabbitMQ), not the specification" if clause.id.startswith("rabbitmq091:")
                     else "" if numeric else "Rules of the XML specification")
        section = by_number.get(clause.id.split(":")[0] + ":" + clause.section)
        if section is None:
            new_part = this_part if this_part != part else ""
            part = this_part
            if numeric:
                for anc in _ancestors(clause.section):
                    if anc not in emitted and anc in titles:
                        emitted.add(anc)
                        sections.append(SpecSection(anc, titles[anc], min(anc.count(".") + 1, 4), part=new_part))
                        new_part = ""
            emitted.add(clause.section)
            title = titles.get(clause.section, "") if numeric else clause.section_title
            section = SpecSection(clause.section, title, min(clause.section.count(".") + 1, 4) if numeric else 3,
                                  part=new_part)
            by_number[clause.id.split(":")[0] + ":" + clause.section] = section
            sections.append(section)
        acc = accounting.get(clause.id)
        cells = []
        for i, t in enumerate(targets):
            rows = cites[i].get(clause.id, [])
            status = clause_status(rows)
            if status is None and t.role == "client":
                cells.append(_client_cell(acc))
                totals[i][cells[-1].status] += 1
                continue
            if status is None:
                if acc is not None and acc.cases:
                    status = "not-run"
                elif acc is not None and acc.untested is not None:
                    status = "untested"
                else:
                    status = "unaccounted"
            cells.append(SpecCell(status, _links(rows, case_by_id[i])))
            totals[i][status] += 1
        untested = acc.untested if acc is not None else None
        section.clauses.append(SpecClause(
            id=clause.id, anchor=clause_anchor(clause.id), level=clause.level.value, family=clause.level.family,
            text=clause.text, scenario=clause.scenario, cells=cells, untested=untested,
            untested_label=(f"{untested.reason}: {REASONS.get(untested.reason, '')}" if untested else ""),
            covering=list(acc.cases) if acc is not None else []))

    unknown = sorted({cid for per in cites for cid in per} - {c.id for c in clauses})
    if unknown:
        section = SpecSection("", "Clauses cited by the results but not in this amqpspec's catalog", 2,
                              part="From another suite version")
        for cid in unknown:
            cells = []
            for i, t in enumerate(targets):
                rows = cites[i].get(cid, [])
                status = clause_status(rows) or "not-run"
                cells.append(SpecCell(status, _links(rows, case_by_id[i])))
            section.clauses.append(SpecClause(cid, clause_anchor(cid), "?", "UNKNOWN", "", "", cells))
        sections.append(section)
    return SpecView(protocol, protocol_slug(protocol), targets, sections, totals, len(clauses))


def _client_cell(acc: Any) -> SpecCell:
    """A client library's cell for a clause its latest run does not cite: the catalog's client
    cases say whether one would (not run) or none does (the broker-side accounting does not
    apply: a clause covered by broker cases is still untested on the client's side)."""
    client_cases = list(getattr(acc, "client_cases", None) or [])
    if client_cases:
        return SpecCell("not-run", covering=client_cases)
    return SpecCell("untested", covering=[], note="no client case cites it")


def status_legend() -> list[tuple[str, str, str]]:
    return [(key, label, meaning) for key, (label, meaning) in STATUSES.items()]
