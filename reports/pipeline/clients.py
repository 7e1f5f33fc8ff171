"""The client side of the bundle: client libraries judged by ``amqpspec client`` / ``serve``.

A client record (``role: "client"``) names the library it judges in ``broker`` (product =
library, version = library version: the peer under test) and again in ``library`` /
``library_version``, with the ``driver`` that ran it. The broker-side aggregates never see
these rows (``aggregates.of_role``); here the same Aggregator runs over them alone, so a
library's runs, verdict counts and compliance by level mean what a broker's do, and one
more action builds the library x clause matrix (Autobahn's client matrix, by clause id).

Matrix cell: the latest run of one library, every case of it citing the clause; ``verdict``
is the worst ``clause_verdict`` among them (amqpspec.result's severity order, the one
``worst()`` uses: error > failed > warning > skipped > informational > passed), ``verdicts``
counts those cases by clause verdict, ``case_ids`` names them (capped) so a page can link a
cell to the library's case pages. bundle.md "clients" has the layout.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .aggregates import SEP, Aggregator, Limits, _clause_key, _run_key, _run_key_col, target_key
from .dataset import Catalog, _severity, _verdict_of
from .ingest import VERDICTS

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

CELL_CASES = 20   # case ids kept per cell (the counts are complete)


def empty_section() -> dict[str, Any]:
    return {"libraries": [], "runs": [], "verdict_counts": [], "compliance": [], "matrix": [],
            "unknown": {"cases": [], "clauses": []}, "results_rows": 0, "case_results": 0}


def client_section(results: "DataFrame", catalog: Catalog, limits: Limits = Limits()) -> dict[str, Any]:
    """The bundle's ``clients`` object from the dataset's rows (all roles; only client rows count)."""
    a = Aggregator(results, None, catalog, limits, role="client")
    # a broker-only input (the common case) costs one scan that stops at the first client row,
    # not the grouped actions below (measured on tests/data/pipeline, warm, a loaded 2-CPU machine:
    # 1.0 s instead of 3.7 s)
    if not a.results.select("run_id").take(1):
        return empty_section()
    a.collect_runs()
    if not a.runs:
        return empty_section()
    a.collect_family_counts()
    libraries = a.targets()
    cells, drivers, no_clause = _cells(a)
    for lib in libraries:
        info = drivers.get(SEP.join((lib["latest_run"], lib["product"], lib["version"], lib["protocol"])), {})
        lib["role"] = "client"
        lib["driver"] = info.get("driver")
        lib["library"] = info.get("library") or lib["product"]
        lib["library_version"] = info.get("library_version") or lib["version"]
    return {
        "libraries": libraries,
        "runs": a.runs_listed(),
        "verdict_counts": a.verdict_counts(),
        "compliance": a.compliance(),
        "matrix": _matrix(a, libraries, cells, no_clause),
        "unknown": a.unknown(),
        "results_rows": a.results_rows(),
        "case_results": sum(r["cases"] for r in a.runs),
    }


def _cells(a: Aggregator) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, Any]], dict[str, int]]:
    """One action over the latest runs' rows, grouped by (run, clause): per run key and clause
    the cell; per run key the driver and library named by its records; cases citing no clause."""
    from pyspark.sql import functions as F

    latest = [_run_key(r) for r in a.latest.values()]
    rows = a.results.where(_run_key_col().isin(latest))
    cv = F.lower(F.col("clause_verdict"))
    grouped = rows.groupBy(_run_key_col().alias("rk"), "clause").agg(
        _verdict_of(F.max(_severity(cv))).alias("worst"),
        *[F.sum((cv == v).cast("int")).alias(f"v_{v}") for v in VERDICTS],
        F.count(F.lit(1)).alias("cases"),
        F.slice(F.array_sort(F.collect_set("case")), 1, CELL_CASES).alias("case_ids"),
        F.first("driver", ignorenulls=True).alias("driver"),
        F.first("library", ignorenulls=True).alias("library"),
        F.first("library_version", ignorenulls=True).alias("library_version"),
    ).collect()
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    drivers: dict[str, dict[str, Any]] = {}
    no_clause: dict[str, int] = {}
    for row in grouped:
        info = drivers.setdefault(row["rk"], {})
        for name in ("driver", "library", "library_version"):
            if info.get(name) is None and row[name] is not None:
                info[name] = row[name]
        if row["clause"] is None:
            no_clause[row["rk"]] = no_clause.get(row["rk"], 0) + int(row["cases"])
            continue
        cells.setdefault(row["rk"], {})[row["clause"]] = {
            "verdict": row["worst"], "cases": int(row["cases"]),
            "verdicts": {v: int(row[f"v_{v}"] or 0) for v in VERDICTS}, "case_ids": list(row["case_ids"])}
    return cells, drivers, no_clause


def _matrix(a: Aggregator, libraries: list[dict[str, Any]], cells: dict[str, dict[str, dict[str, Any]]],
            no_clause: dict[str, int]) -> list[dict[str, Any]]:
    """Per protocol: rows = clause ids the libraries' latest runs cite, columns = libraries."""
    families = {row["clause"]: row["family"] for row in a.outcomes}
    out = []
    for protocol in sorted({lib["protocol"] for lib in libraries}):
        libs = [lib for lib in libraries if lib["protocol"] == protocol]
        keys = [SEP.join((lib["latest_run"], lib["product"], lib["version"], lib["protocol"])) for lib in libs]
        clause_ids = sorted({c for k in keys for c in cells.get(k, {})}, key=_clause_key)
        rows = []
        for clause in clause_ids:
            level = a.catalog.clause_levels.get(clause)
            rows.append({"clause": clause, "family": families.get(clause, "UNKNOWN"), "level": level,
                         "known": level is not None, "cells": [cells.get(k, {}).get(clause) for k in keys]})
        out.append({"protocol": protocol,
                    "columns": [target_key(lib["product"], lib["version"], lib["protocol"]) for lib in libs],
                    "drivers": [lib["driver"] for lib in libs], "rows": rows,
                    "cases_without_clause": sum(no_clause.get(k, 0) for k in keys)})
    return out
