"""The client side of the report: libraries judged by ``amqpspec client``, from the bundle's
``clients`` object (reports/pipeline/bundle.md).

A library is shown with the same objects as a broker (:class:`model.TargetView`: its cases,
case pages with evidence and transcripts, its column in the annotated specification), marked
``role="client"`` so that pages say "library" and the specification puts its verdicts beside
the brokers'. Its pages live under ``html/t/<slug>/`` like a broker's, with a slug made from
"client " + its key so a library never shares a folder with a broker of the same name.

The library x clause matrix (``html/clients/<protocol>.html``) is Autobahn's client matrix by
clause id: each cell is the worst clause verdict of the library's cases citing the clause,
with their counts, linking to the case page (one case) or to the clause's entry on the
library page (several).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from . import model

VERDICTS = model.VERDICTS


def section(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle's ``clients`` object with every key present (an older bundle has none)."""
    raw = bundle.get("clients")
    raw = raw if isinstance(raw, dict) else {}
    out: dict[str, Any] = {}
    for key in ("libraries", "runs", "verdict_counts", "compliance", "matrix"):
        out[key] = [x for x in raw.get(key) or [] if isinstance(x, dict)] if isinstance(raw.get(key), list) else []
    return out


def library_views(clients: dict[str, Any]) -> list[model.TargetView]:
    counts = {e.get("key"): e for e in clients["verdict_counts"]}
    compliance = {e.get("key"): e for e in clients["compliance"]}
    urls = {(r.get("key"), r.get("run_id")): r.get("target_url") for r in clients["runs"]}
    out = []
    for lib in clients["libraries"]:
        if "key" not in lib:
            continue
        key = str(lib["key"])
        out.append(model.TargetView(
            key=key, product=str(lib.get("product") or "unknown"), version=str(lib.get("version") or "unknown"),
            protocol=str(lib.get("protocol") or ""), platform=lib.get("platform"), runs=int(lib.get("runs") or 0),
            latest_run=str(lib.get("latest_run") or ""), slug=model.slug("client " + key),
            counts=counts.get(key, {"cases": 0, "verdicts": {v: 0 for v in VERDICTS}, "deviations": 0,
                                    "by_section": []}),
            compliance=compliance.get(key, {"levels": {}, "deviations": 0}),
            last_started_at=lib.get("last_started_at"),
            target_url=str(urls.get((key, lib.get("latest_run"))) or ""),
            role="client", driver=str(lib.get("driver") or "") or None))
    return out


def clause_index(library: model.TargetView) -> list[dict[str, Any]]:
    """The library's latest run by clause (the matrix cells' destination): every clause its
    cases cite, in specification order, with those cases and their verdict on the clause."""
    from .status import clause_status

    cited: dict[str, list[tuple[model.CaseView, model.ClauseRef]]] = defaultdict(list)
    for case in library.cases:
        for ref in case.clauses:
            cited[ref.id].append((case, ref))
    order = _clause_order(library.protocol)
    out = []
    for cid in sorted(cited, key=lambda c: (order.get(c, len(order)), c)):
        pairs = sorted(cited[cid], key=lambda p: p[1].verdict != "failed")
        first = pairs[0][1]
        out.append({"id": cid, "anchor": model.clause_anchor(cid), "level": first.level, "family": first.family,
                    "text": first.text, "spec_href": first.spec_href,
                    "status": clause_status({"clause_verdict": ref.verdict, "deviation": case.deviation}
                                            for case, ref in pairs) or "error",
                    "cases": [{"case": case, "verdict": ref.verdict} for case, ref in pairs]})
    return out


def _clause_order(protocol: str) -> dict[str, int]:
    from amqpspec import clauses as catalog
    try:
        return {c.id: i for i, c in enumerate(catalog.catalog(protocol, extensions=True, documentation=True))}
    except Exception:
        return {}


def matrices(clients: dict[str, Any], libraries: list[model.TargetView]) -> list[dict[str, Any]]:
    """One view per protocol of the bundle's client matrix, cells resolved to page links."""
    by_key = {t.key: t for t in libraries}
    out = []
    for m in clients["matrix"]:
        protocol = str(m.get("protocol") or "")
        columns = [str(c) for c in m.get("columns") or []]
        libs = [by_key.get(c) for c in columns]
        case_pages = [{c.case: c.href for c in lib.cases} if lib else {} for lib in libs]
        order = _clause_order(protocol)
        rows = [r for r in m.get("rows") or [] if isinstance(r, dict)]
        rows.sort(key=lambda r: (order.get(r.get("clause"), len(order)), str(r.get("clause"))))
        totals = [{v: 0 for v in (*VERDICTS, "none")} for _ in columns]
        prepared = []
        for r in rows:
            clause = str(r.get("clause"))
            raw = list(r.get("cells") or [])[:len(columns)]
            raw += [None] * (len(columns) - len(raw))
            cells = []
            for i, cell in enumerate(raw):
                if not isinstance(cell, dict) or cell.get("verdict") not in VERDICTS:
                    totals[i]["none"] += 1
                    cells.append(None)
                    continue
                verdict = str(cell["verdict"])
                totals[i][verdict] += 1
                ids = [str(x) for x in cell.get("case_ids") or []]
                counts = cell.get("verdicts") if isinstance(cell.get("verdicts"), dict) else {}
                n = int(cell.get("cases") or 0)
                href = None
                if libs[i] is not None:
                    href = case_pages[i].get(ids[0]) if n == 1 and ids else None
                    href = href or f"{libs[i].href}#{model.clause_anchor(clause)}"
                cells.append({"verdict": verdict, "cases": n, "href": href, "worst": int(counts.get(verdict) or 0),
                              "counts": [(v, int(counts.get(v) or 0)) for v in VERDICTS if counts.get(v)],
                              "case_ids": ids})
            known = bool(r.get("known"))
            prepared.append({"clause": clause, "level": r.get("level"), "family": r.get("family"), "known": known,
                             "href": model.spec_href(protocol, clause) if known else None, "cells": cells,
                             "differ": len({c["verdict"] if c else None for c in cells}) > 1})
        drivers = list(m.get("drivers") or [])
        out.append({"protocol": protocol, "columns": columns, "libraries": libs,
                    "drivers": drivers + [None] * (len(columns) - len(drivers)), "rows": prepared,
                    "totals": totals, "cases_without_clause": m.get("cases_without_clause", 0),
                    "href": f"html/clients/{model.protocol_slug(protocol)}.html"})
    return out
