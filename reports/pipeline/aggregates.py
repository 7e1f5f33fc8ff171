"""The aggregates of the report bundle, computed from the dataset (bundle.md has the layout).

Spark does everything that grows with the input (group-bys over millions of rows); what
comes back to the driver is bounded by the number of runs, targets and clauses, and the
lists a page shows are capped (``Limits``). Ordering decisions that need the run list as a
whole (latest run of a target, consecutive runs of a broker) are made on the driver from the
collected run table, then sent back to Spark as literals.

Definitions used throughout (kept in one place so pages and numbers agree):
- a *run* is (run_id, product, version, protocol); a *target* is (product, version, protocol);
- a run's time is the earliest ``started_at`` of its records; the latest run of a target is
  the one with the greatest time (then run_id);
- a clause's outcome in a run: failed if a row citing it has clause_verdict failed or warning,
  else passed if one has passed or informational, else undecided (only skipped / error).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Iterable

from amqpspec.reports.counts import documented_deviation_column

from .dataset import FAMILIES, Catalog
from .ingest import VERDICTS

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

SEP = "\u001f"   # joins the parts of a run key inside Spark; never appears in ids
_RANK = {"passed": 0, "informational": 0, "warning": 1, "failed": 2}


@dataclass(frozen=True)
class Limits:
    """Caps on the lists in the bundle, so a report of millions of rows opens at once."""

    bad: int = 1000
    runs_per_target: int = 200
    history_points: int = 200
    change_pairs: int = 100
    change_cases: int = 500
    flaky: int = 1000
    flaky_sequence: int = 50

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def target_key(product: str, version: str, protocol: str) -> str:
    return f"{product} {version} ({protocol})"


def _version_key(version: str) -> tuple[Any, ...]:
    """Numeric where numeric: 3.10.8 after 3.9.2."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-+_ ]", version or ""))


def _iso(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return str(value)


def _ts(column: str) -> "Column":
    """A timestamp column as an ISO-8601 UTC string, formatted by Spark: collecting a
    timestamp would convert it to the driver's local time zone."""
    from pyspark.sql import functions as F

    return F.date_format(F.col(column), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def _ratio(passed: int, tested: int) -> float | None:
    return round(passed / tested, 4) if tested else None


def _run_key_col() -> "Column":
    from pyspark.sql import functions as F

    return F.concat_ws(SEP, F.col("run_id"), F.col("product"), F.col("version"), F.col("protocol"))


def _run_key(run: dict[str, Any]) -> str:
    return SEP.join((run["run_id"], run["product"], run["version"], run["protocol"]))


def _verdict_sums() -> list["Column"]:
    from pyspark.sql import functions as F

    return [F.sum(F.when(F.col("verdict") == v, 1).otherwise(0)).alias(f"v_{v}") for v in VERDICTS]


def _verdicts_of(row: Any) -> dict[str, int]:
    return {v: int(row[f"v_{v}"] or 0) for v in VERDICTS}


class Aggregator:
    """Computes the bundle sections from the dataset's two tables."""

    def __init__(self, results: "DataFrame", findings: "DataFrame | None", catalog: Catalog,
                 limits: Limits = Limits(), role: str = "broker") -> None:
        from pyspark.sql import functions as F

        # one side of the wire at a time: a client library's failure is not a broker's
        self.role = role
        self.results = of_role(results, role)
        self.findings = findings
        self.catalog = catalog
        self.limits = limits
        self.cases = self.results.where(F.col("clause_pos") == 0)
        self.runs: list[dict[str, Any]] = []
        self.latest: dict[str, dict[str, Any]] = {}      # target key -> latest run
        self.family_counts: dict[str, dict[str, dict[str, int]]] = {}  # run key -> family -> counts
        # filled by collect_runs (one action) and collect_clause_outcomes (one action): every
        # section below is finished in Python from these, bounded by runs x (sections + clauses)
        self.sections: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
        self.no_clause: dict[tuple[str, str, str, str], int] = {}
        self.any_unknown_case = False
        self.outcomes: list[dict[str, Any]] = []   # one per (run, clause)

    # ------------------------------------------------------------------ runs and targets

    def collect(self) -> None:
        """The two actions every section below is finished from (``collect_runs``, then
        ``collect_family_counts``)."""
        self.collect_runs()
        self.collect_family_counts()

    def collect_runs(self) -> list[dict[str, Any]]:
        """The run table, from one action grouped by (run, section): the same rows give each
        latest run's counts by section (``verdict_counts``), the cases citing no clause
        (``matrix``) and whether any case id is unknown, bounded by runs x sections."""
        from pyspark.sql import functions as F

        fmt = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        end_micros = F.unix_micros(F.col("started_at")) + (F.coalesce(F.col("duration_s"), F.lit(0.0)) * 1e6).cast("long")
        rows = self.cases.groupBy("run_id", "product", "version", "protocol", "section", "section_title").agg(
            F.date_format(F.min("started_at"), fmt).alias("started_at"),
            F.date_format(F.timestamp_micros(F.max(end_micros)), fmt).alias("ended_at"),
            F.count(F.lit(1)).alias("cases"),
            F.sum(F.coalesce(F.col("duration_s"), F.lit(0.0))).alias("duration_s"),
            F.first("target_url", ignorenulls=True).alias("target_url"),
            F.first("seed", ignorenulls=True).alias("seed"),
            F.max("platform").alias("platform"),
            F.sum(documented_deviation_column().cast("int")).alias("deviations"),   # reports/counts.py
            F.max("suite_schema").alias("suite_schema"),
            F.sum(F.col("clause").isNull().cast("int")).alias("no_clause"),
            F.sum((~F.col("case_known")).cast("int")).alias("unknown_cases"),
            *_verdict_sums(),
        ).collect()
        merged: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.sections = {}
        for row in rows:
            ident = (row["run_id"], row["product"], row["version"], row["protocol"])
            run = merged.get(ident)
            if run is None:
                run = merged[ident] = {
                    "run_id": row["run_id"], "key": target_key(row["product"], row["version"], row["protocol"]),
                    "product": row["product"], "version": row["version"], "protocol": row["protocol"],
                    "platform": None, "target_url": None, "seed": None, "started_at": None, "ended_at": None,
                    "cases": 0, "duration_s": 0.0, "verdicts": {v: 0 for v in VERDICTS}, "deviations": 0,
                    "suite_schema": None}
            # min, max and sums of the sections are those of the run; "first non-null" as well
            for name, pick in (("started_at", min), ("ended_at", max), ("platform", max), ("suite_schema", max)):
                if row[name] is not None:
                    run[name] = row[name] if run[name] is None else pick(run[name], row[name])
            for name in ("target_url", "seed"):
                if run[name] is None:
                    run[name] = row[name]
            run["cases"] += int(row["cases"])
            run["duration_s"] += float(row["duration_s"] or 0.0)
            run["deviations"] += int(row["deviations"] or 0)
            for v, n in _verdicts_of(row).items():
                run["verdicts"][v] += n
            self.no_clause[ident] = self.no_clause.get(ident, 0) + int(row["no_clause"] or 0)
            self.any_unknown_case = self.any_unknown_case or bool(row["unknown_cases"])
            self.sections.setdefault(ident, []).append(
                {"section": row["section"], "section_title": row["section_title"], "cases": int(row["cases"]),
                 "verdicts": _verdicts_of(row)})
        runs = []
        for run in merged.values():
            run["seed"] = int(run["seed"]) if run["seed"] is not None else None
            run["started_at"], run["ended_at"] = _iso(run["started_at"]), _iso(run["ended_at"])
            run["duration_s"] = round(run["duration_s"], 3)
            runs.append(run)
        runs.sort(key=lambda r: (r["key"], r["started_at"] or "", r["run_id"]))
        self.runs = runs
        for run in runs:   # sorted by time within a key: the last one wins
            self.latest[run["key"]] = run
        return runs

    def targets(self) -> list[dict[str, Any]]:
        by_key: dict[str, list[dict[str, Any]]] = {}
        for run in self.runs:
            by_key.setdefault(run["key"], []).append(run)
        out = []
        for key, runs in by_key.items():
            latest = self.latest[key]
            stamps = [r["started_at"] for r in runs if r["started_at"]]
            out.append({"key": key, "product": latest["product"], "version": latest["version"],
                        "protocol": latest["protocol"], "platform": latest["platform"], "runs": len(runs),
                        "latest_run": latest["run_id"], "first_started_at": min(stamps) if stamps else None,
                        "last_started_at": max(stamps) if stamps else None})
        out.sort(key=lambda t: (t["protocol"], t["product"].lower(), _version_key(t["version"])))
        return out

    def runs_listed(self) -> list[dict[str, Any]]:
        """The latest ``runs_per_target`` runs of each target, in the bundle's order."""
        by_key: dict[str, list[dict[str, Any]]] = {}
        for run in self.runs:
            by_key.setdefault(run["key"], []).append(run)
        out: list[dict[str, Any]] = []
        for key in sorted(by_key):
            out.extend(by_key[key][-self.limits.runs_per_target:])
        return out

    def _latest_keys(self) -> list[str]:
        return [_run_key(r) for r in self.latest.values()]

    # ------------------------------------------------------------------ verdicts and compliance

    def verdict_counts(self) -> list[dict[str, Any]]:
        out = []
        for key, run in self.latest.items():
            ident = (run["run_id"], run["product"], run["version"], run["protocol"])
            secs = sorted(self.sections.get(ident, []), key=lambda s: _section_key(s["section"]))
            out.append({"key": key, "product": run["product"], "version": run["version"],
                        "protocol": run["protocol"], "run_id": run["run_id"], "cases": run["cases"],
                        "verdicts": dict(run["verdicts"]), "deviations": run["deviations"], "by_section": secs})
        return self._in_target_order(out)

    def _clause_outcomes(self) -> "DataFrame":
        """(run key, clause, family, outcome, undocumented failure) per clause of each run."""
        from pyspark.sql import functions as F

        cv = F.col("clause_verdict")
        fail = cv.isin("failed", "warning")
        return self.results.where(F.col("clause").isNotNull()).groupBy(
            "run_id", "product", "version", "protocol", "clause", "family").agg(
            F.max(fail.cast("int")).alias("failed"),
            F.max((fail & ~F.col("is_deviation")).cast("int")).alias("failed_undocumented"),
            F.max(cv.isin("passed", "informational").cast("int")).alias("passed"),
            F.max(F.col("clause_known").cast("int")).alias("known"),
            F.count(F.lit(1)).alias("rows"),
        ).select("*", F.when(F.col("failed") == 1, "failed").when(F.col("passed") == 1, "passed")
                 .otherwise("undecided").alias("outcome"))

    def collect_family_counts(self) -> None:
        """Clause outcomes of every run, collected once (bounded by runs x clauses): the
        compliance by family, the history, the matrix and the unknown clauses come from them."""
        self.outcomes = [row.asDict() for row in self._clause_outcomes().collect()]
        counts: dict[str, dict[str, dict[str, int]]] = {}
        for row in self.outcomes:
            key = SEP.join((row["run_id"], row["product"], row["version"], row["protocol"]))
            fam = counts.setdefault(key, {}).setdefault(
                row["family"], {"passed": 0, "failed": 0, "undecided": 0, "documented": 0})
            fam[row["outcome"]] += 1
            if row["outcome"] == "failed" and row["failed_undocumented"] == 0:
                fam["documented"] += 1
        self.family_counts = counts

    def results_rows(self) -> int:
        """Rows of the dataset: one per (record, clause), one for a record citing none."""
        return sum(int(r["rows"]) for r in self.outcomes) + sum(self.no_clause.values())

    def _levels(self, run: dict[str, Any]) -> dict[str, dict[str, Any]]:
        counts = self.family_counts.get(_run_key(run), {})
        totals = self.catalog.family_totals.get(run["protocol"], {})
        levels = {}
        for fam in FAMILIES:
            c = counts.get(fam, {})
            passed, failed = c.get("passed", 0), c.get("failed", 0)
            tested = passed + failed
            levels[fam] = {"passed": passed, "failed": failed, "undecided": c.get("undecided", 0), "tested": tested,
                           "catalog": totals.get(fam, 0) if fam != "UNKNOWN" else 0, "ratio": _ratio(passed, tested)}
        return levels

    def compliance(self) -> list[dict[str, Any]]:
        out = []
        for key, run in self.latest.items():
            counts = self.family_counts.get(_run_key(run), {})
            out.append({"key": key, "product": run["product"], "version": run["version"], "protocol": run["protocol"],
                        "run_id": run["run_id"], "levels": self._levels(run),
                        "deviations": sum(c.get("documented", 0) for c in counts.values())})
        return self._in_target_order(out)

    def matrix(self, targets: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = set(self._latest_keys())
        if not keys:
            return []
        cells: dict[str, dict[str, dict[str, str]]] = {}   # protocol -> clause -> target key -> outcome
        families: dict[str, str] = {}
        for row in self.outcomes:
            if SEP.join((row["run_id"], row["product"], row["version"], row["protocol"])) not in keys:
                continue
            key = target_key(row["product"], row["version"], row["protocol"])
            cells.setdefault(row["protocol"], {}).setdefault(row["clause"], {})[key] = row["outcome"]
            families[row["clause"]] = row["family"]
        no_clause: dict[str, int] = {}
        for ident, n in self.no_clause.items():
            if n and SEP.join(ident) in keys:
                no_clause[ident[3]] = no_clause.get(ident[3], 0) + n
        out = []
        for protocol in sorted(set(cells) | set(no_clause)):
            columns = [t["key"] for t in targets if t["protocol"] == protocol]
            rows = []
            for clause in sorted(cells.get(protocol, {}), key=_clause_key):
                level = self.catalog.clause_levels.get(clause)
                rows.append({"clause": clause, "family": families[clause], "level": level, "known": level is not None,
                             "cells": [cells[protocol][clause].get(col) for col in columns]})
            out.append({"protocol": protocol, "columns": columns, "rows": rows,
                        "cases_without_clause": no_clause.get(protocol, 0)})
        return out

    # ------------------------------------------------------------------ over time

    def _families(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        fams: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for run in self.runs:
            fams.setdefault((run["product"], run["protocol"]), []).append(run)
        for runs in fams.values():
            runs.sort(key=lambda r: (r["started_at"] or "", r["run_id"]))
        return fams

    def history(self) -> list[dict[str, Any]]:
        out = []
        for (product, protocol), runs in sorted(self._families().items(), key=lambda kv: (kv[0][0].lower(), kv[0][1])):
            points = []
            for run in runs[-self.limits.history_points:]:
                levels = self._levels(run)
                points.append({
                    "run_id": run["run_id"], "version": run["version"], "started_at": run["started_at"],
                    "cases": run["cases"], "verdicts": dict(run["verdicts"]),
                    "must": {k: levels["MUST"][k] for k in ("passed", "tested", "ratio")},
                    "should": {k: levels["SHOULD"][k] for k in ("passed", "tested", "ratio")}})
            out.append({"product": product, "protocol": protocol, "points_total": len(runs), "points": points})
        return out

    def changes(self) -> list[dict[str, Any]]:
        """Regressions and improvements between consecutive runs of one (product, protocol)."""
        from pyspark.sql import functions as F

        pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
        for runs in self._families().values():
            fam_pairs = list(zip(runs, runs[1:]))
            pairs.extend(fam_pairs[-self.limits.change_pairs:])
        if not pairs:
            return []
        spark = self.results.sparkSession
        pair_structs = [F.struct(F.lit(_run_key(a)).alias("from_key"), F.lit(_run_key(b)).alias("to_key"))
                        for a, b in pairs]
        pair_df = spark.range(1).select(F.explode(F.array(*pair_structs)).alias("p")).select("p.*")
        wanted = sorted({_run_key(a) for a, _ in pairs} | {_run_key(b) for _, b in pairs})
        verdicts = self.cases.where(_run_key_col().isin(wanted)).select(
            _run_key_col().alias("rk"), F.col("case"), F.col("verdict"))
        was = pair_df.join(verdicts.withColumnRenamed("verdict", "was"), F.col("from_key") == F.col("rk")).drop("rk")
        now = pair_df.join(verdicts.withColumnRenamed("verdict", "now"), F.col("to_key") == F.col("rk")).drop("rk")
        both = was.join(now, ["from_key", "to_key", "case"], "full_outer")
        rank = F.create_map(*[x for k, v in _RANK.items() for x in (F.lit(k), F.lit(v))])
        r_was, r_now = F.element_at(rank, F.col("was")), F.element_at(rank, F.col("now"))
        decided = r_was.isNotNull() & r_now.isNotNull()
        item = F.struct(F.col("case").alias("case"), F.col("was").alias("was"), F.col("now").alias("now"))
        cap = self.limits.change_cases

        def capped(cond: "Column", value: "Column") -> "Column":
            return F.slice(F.array_sort(F.collect_list(F.when(cond, value))), 1, cap)

        agg = both.groupBy("from_key", "to_key").agg(
            capped(decided & (r_now > r_was), item).alias("regressions"),
            capped(decided & (r_now < r_was), item).alias("improvements"),
            F.sum((decided & (r_now > r_was)).cast("int")).alias("regressions_total"),
            F.sum((decided & (r_now < r_was)).cast("int")).alias("improvements_total"),
            F.sum((F.col("was").isNotNull() & F.col("now").isNotNull() & ~decided).cast("int")).alias("undecided"),
            capped(F.col("was").isNull(), F.col("case")).alias("added"),
            capped(F.col("now").isNull(), F.col("case")).alias("removed"),
        ).collect()
        found = {(row["from_key"], row["to_key"]): row for row in agg}
        out = []
        for a, b in pairs:
            row = found.get((_run_key(a), _run_key(b)))
            out.append({
                "product": b["product"], "protocol": b["protocol"],
                "from": {"run_id": a["run_id"], "version": a["version"], "started_at": a["started_at"]},
                "to": {"run_id": b["run_id"], "version": b["version"], "started_at": b["started_at"]},
                "same_version": a["version"] == b["version"],
                "regressions": [dict(x.asDict()) for x in row["regressions"]] if row else [],
                "improvements": [dict(x.asDict()) for x in row["improvements"]] if row else [],
                "regressions_total": int(row["regressions_total"] or 0) if row else 0,
                "improvements_total": int(row["improvements_total"] or 0) if row else 0,
                "undecided": int(row["undecided"] or 0) if row else 0,
                "added": list(row["added"]) if row else [], "removed": list(row["removed"]) if row else [],
            })
        out.sort(key=lambda c: (c["product"].lower(), c["protocol"], c["to"]["started_at"] or "", c["to"]["run_id"]))
        return out

    def flaky(self) -> tuple[list[dict[str, Any]], int]:
        from pyspark.sql import functions as F

        # a case differs across runs only in a target with two runs or more (a run holds each
        # case once): without one, there is nothing to ask Spark
        if all(n < 2 for n in _count_by(r["key"] for r in self.runs).values()):
            return [], 0
        seq = F.struct(_ts("started_at").alias("started_at"), F.col("run_id"), F.col("verdict"))
        groups = self.cases.groupBy("product", "version", "protocol", "case").agg(
            F.countDistinct("verdict").alias("distinct"), F.count(F.lit(1)).alias("runs"), *_verdict_sums(),
            F.array_sort(F.collect_list(seq)).alias("sequence"),
        ).where(F.col("distinct") > 1)
        keep = self.limits.flaky_sequence   # the latest runs: slice(-n) would be empty for shorter arrays
        groups = groups.withColumn("sequence", F.slice("sequence", F.greatest(F.lit(1), F.size("sequence") - (keep - 1)),
                                                       F.lit(keep)))
        total = groups.count()
        rows = groups.orderBy(F.lower("product"), "version", "protocol", "case").limit(self.limits.flaky).collect()
        out = []
        for row in rows:
            out.append({"key": target_key(row["product"], row["version"], row["protocol"]),
                        "product": row["product"], "version": row["version"], "protocol": row["protocol"],
                        "case": row["case"], "runs": int(row["runs"]), "verdicts": _verdicts_of(row),
                        "sequence": [{"run_id": s["run_id"], "started_at": _iso(s["started_at"]),
                                      "verdict": s["verdict"]} for s in row["sequence"]]})
        out.sort(key=lambda f: (f["key"], f["case"]))
        return out, int(total)

    # ------------------------------------------------------------------ findings and unknown ids

    def findings_summary(self) -> dict[str, Any]:
        from pyspark.sql import functions as F

        empty = {"total": 0, "hits": 0, "by_violation": {}, "by_signature": []}
        if self.findings is None:
            return empty
        example = F.struct(F.col("count"), F.col("input_hex"), F.col("input_summary"), F.col("replay"), F.col("seed"))
        rows = self.findings.groupBy("signature_id").agg(
            F.first("protocol").alias("protocol"), F.first("fuzz_target").alias("target"),
            F.first("violation").alias("violation"), F.first("code").alias("code"),
            F.first("condition").alias("condition"), F.first("state").alias("state"),
            F.array_sort(F.collect_set(F.concat_ws(" ", "product", "version"))).alias("brokers"),
            F.count(F.lit(1)).alias("files"), F.sum("count").alias("hits"),
            F.date_format(F.min("first_seen"), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").alias("first_seen"),
            F.date_format(F.max("last_seen"), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'").alias("last_seen"),
            F.array_sort(F.array_distinct(F.flatten(F.collect_list("clauses")))).alias("clauses"),
            F.array_sort(F.collect_set("run_id")).alias("runs"),
            F.max(example).alias("example"),
        ).collect()
        sigs = []
        for row in rows:
            ex = row["example"]
            sigs.append({
                "signature_id": row["signature_id"], "protocol": row["protocol"], "target": row["target"],
                "violation": row["violation"], "code": row["code"], "condition": row["condition"],
                "state": row["state"], "brokers": list(row["brokers"]), "files": int(row["files"]),
                "hits": int(row["hits"] or 0), "first_seen": _iso(row["first_seen"]), "last_seen": _iso(row["last_seen"]),
                "clauses": list(row["clauses"]), "runs": list(row["runs"]),
                "example": {"input_hex": ex["input_hex"], "input_summary": ex["input_summary"],
                            "replay": ex["replay"], "seed": ex["seed"]}})
        sigs.sort(key=lambda s: (-s["hits"], s["signature_id"]))
        by_violation: dict[str, int] = {}
        for s in sigs:
            by_violation[s["violation"]] = by_violation.get(s["violation"], 0) + 1
        return {"total": sum(s["files"] for s in sigs), "hits": sum(s["hits"] for s in sigs),
                "by_violation": dict(sorted(by_violation.items())), "by_signature": sigs}

    def unknown(self) -> dict[str, list[dict[str, Any]]]:
        from pyspark.sql import functions as F

        cases = []
        if self.any_unknown_case:
            cases = self.cases.where(~F.col("case_known")).groupBy("case", "protocol").agg(
                F.count(F.lit(1)).alias("records")).orderBy("case").collect()
        clauses: dict[str, int] = {}
        for row in self.outcomes:
            if row["known"] == 0:
                clauses[row["clause"]] = clauses.get(row["clause"], 0) + int(row["rows"])
        return {"cases": [{"case": r["case"], "protocol": r["protocol"], "records": int(r["records"])} for r in cases],
                "clauses": [{"clause": c, "records": n} for c, n in sorted(clauses.items())]}

    def clause_texts(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        from amqpspec import clauses

        out = {}
        for cid in sorted(set(ids), key=_clause_key):
            if cid not in self.catalog.clause_levels:
                continue
            c = clauses.get(cid)
            out[cid] = {"level": c.level.value, "family": self.catalog.clause_families.get(cid, c.level.family),
                        "section": c.section,
                        "section_title": c.section_title, "text": c.text}
        return out

    # ------------------------------------------------------------------ helpers

    def _in_target_order(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(items, key=lambda t: (t["protocol"], t["product"].lower(), _version_key(t["version"])))


def of_role(results: "DataFrame", role: str) -> "DataFrame":
    """The rows judging ``role`` ("broker" or "client"); a dataset from before the role column
    holds broker records only."""
    from pyspark.sql import functions as F

    if "role" not in results.columns:
        return results if role == "broker" else results.limit(0)
    return results.where(F.coalesce(F.col("role"), F.lit("broker")) == role)


def _count_by(keys: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k in keys:
        out[k] = out.get(k, 0) + 1
    return out


def _section_key(section: str | None) -> tuple[Any, ...]:
    parts = (section or "").split(".")
    if parts and all(p.isdigit() for p in parts):
        return (0, tuple(int(p) for p in parts), "")
    return (1, (), section or "")


def _clause_key(clause_id: str) -> tuple[Any, ...]:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"([0-9]+)", clause_id) if p)
