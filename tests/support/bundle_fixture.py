"""A small, Spark-free stand-in for the report pipeline, for the HTML renderer's tests only.

It turns result files (JSON lines, amqpspec.result) and finding files (the fuzzer's JSON)
into the directory the pipeline produces (``reports/pipeline/bundle.md``): ``bundle.json``
plus ``dataset/results`` and ``dataset/findings`` as Parquet (written with pyarrow). It
follows that document closely enough for the renderer to be tested against it without
starting a JVM; the real pipeline stays the reference, and the integration test uses it when
it is available.

It is deliberately simple: no validation report beyond "invalid JSON", everything in memory.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from amqpspec import clauses as catalog
from amqpspec.case import REGISTRY, discover
from amqpspec.result import Verdict, worst

VERDICTS = [v.value for v in Verdict]
FAMILIES = ["MUST", "SHOULD", "MAY", "DEFINITION", "NONE", "UNKNOWN"]
_RANK = {"passed": 0, "informational": 0, "warning": 1, "failed": 2}


def _zero() -> dict[str, int]:
    return {v: 0 for v in VERDICTS}


def _clause(cid: str) -> Any:
    try:
        return catalog.get(cid)
    except (catalog.UnknownClauseError, KeyError):
        return None


def _version_key(version: str) -> tuple[Any, ...]:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"[.\-]", version))


def _ts(text: str) -> datetime | None:
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _iso(stamp: datetime | None) -> str | None:
    return stamp.astimezone(timezone.utc).isoformat().replace("+00:00", "Z") if stamp else None


def _clause_verdicts(record: dict[str, Any]) -> dict[str, str]:
    """Per clause, as the pipeline decides it: the worst verdict of the checks citing the
    clause (a check citing none counts for all); the case's own verdict when it is skipped or
    error, or worse than every check (a liveness failure found after the checks)."""
    cited = list(dict.fromkeys(c.strip() for c in record.get("clauses") or [] if c and c.strip()))
    checks = [c for c in (record.get("evidence") or {}).get("checks") or []
              if isinstance(c, dict) and c.get("verdict") in VERDICTS]
    verdict = record["verdict"]
    all_max = max((Verdict(c["verdict"]).severity for c in checks), default=-1)
    out: dict[str, str] = {}
    for cid in cited:
        relevant = [Verdict(c["verdict"]) for c in checks if cid in (c.get("clauses") or []) or not c.get("clauses")]
        if verdict in ("skipped", "error") or Verdict(verdict).severity > all_max or not relevant:
            out[cid] = verdict
        else:
            out[cid] = worst(relevant).value
    return out


def _read_results(paths: Iterable[Path], inputs: dict[str, Any]) -> list[dict[str, Any]]:
    records = []
    seen = set()
    for path in paths:
        good = bad = 0
        with open(path, encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    bad += 1
                    inputs["bad"].append({"path": str(path), "line": number, "kind": "results",
                                          "reason": f"invalid JSON: {exc}", "excerpt": line[:120]})
                    inputs["bad_by_reason"]["invalid JSON"] = inputs["bad_by_reason"].get("invalid JSON", 0) + 1
                    continue
                key = (record.get("run_id"), record.get("case"))
                if key in seen:
                    bad += 1
                    continue
                seen.add(key)
                record["_file"], record["_line"] = str(path), number
                records.append(record)
                good += 1
        inputs["files"].append({"path": str(path), "kind": "results", "records": good, "bad": bad,
                                "status": "ok" if not bad else ("partial" if good else "skipped")})
    return records


def _outcome(clause_verdicts: list[str]) -> str:
    if any(v in ("failed", "warning") for v in clause_verdicts):
        return "failed"
    if any(v in ("passed", "informational") for v in clause_verdicts):
        return "passed"
    return "undecided"


def build_bundle(result_files: Iterable[str | Path], out_dir: str | Path,
                 finding_files: Iterable[str | Path] = ()) -> Path:
    """Writes ``out_dir/bundle.json`` and ``out_dir/dataset``; returns the bundle's path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    inputs: dict[str, Any] = {"files": [], "bad": [], "bad_by_reason": {}, "warnings": []}
    records = _read_results([Path(p) for p in result_files], inputs)
    for protocol in catalog.PROTOCOLS:
        discover(protocol)

    rows: list[dict[str, Any]] = []
    unknown_cases: Counter[tuple[str, str]] = Counter()
    unknown_clauses: Counter[str] = Counter()
    for rec in records:
        broker = rec.get("broker") or {}
        rec["_product"] = str(broker.get("product") or "unknown")
        rec["_version"] = str(broker.get("version") or "unknown")
        rec["_key"] = f'{rec["_product"]} {rec["_version"]} ({rec["protocol"]})'
        rec["_started"] = _ts(rec.get("started_at", "")) or datetime(1970, 1, 1, tzinfo=timezone.utc)
        rec["_run"] = rec.get("run_id") or "unknown"
        rec["_cv"] = _clause_verdicts(rec)
        case_known = rec["case"] in REGISTRY
        if not case_known:
            unknown_cases[(rec["case"], rec["protocol"])] += 1
        close = rec.get("close") or {}
        evidence = rec.get("evidence") or {}
        base = {
            "run_id": rec["_run"], "product": rec["_product"], "version": rec["_version"],
            "platform": broker.get("platform"), "protocol": rec["protocol"], "target_url": rec.get("target", ""),
            "case": rec["case"], "title": rec.get("title", ""), "section": rec.get("section", ""),
            "section_title": rec.get("section_title", ""), "case_known": case_known,
            "verdict": rec["verdict"], "reason": rec.get("reason", ""), "deviation": rec.get("deviation"),
            "is_deviation": bool(rec.get("deviation")), "close_who": close.get("who"),
            "close_how": close.get("how"), "close_code": close.get("code"), "close_matched": close.get("matched"),
            "expected": str(evidence.get("expected", "")), "observed": str(evidence.get("observed", "")),
            "duration_s": float(rec.get("duration_s") or 0.0), "started_at": rec["_started"],
            "seed": int(rec.get("seed") or 0), "replay": rec.get("replay", ""), "suite_schema": rec.get("schema", 1),
            "source_file": rec["_file"], "source_line": rec["_line"],
        }
        cited = rec["_cv"] or {None: rec["verdict"]}
        for cid, cverdict in cited.items():
            clause = _clause(cid) if cid else None
            if cid and clause is None:
                unknown_clauses[cid] += 1
            rows.append({**base, "clause": cid, "clause_known": None if cid is None else clause is not None,
                         "level": clause.level.value if clause else None,
                         "family": (clause.level.family if clause else "UNKNOWN") if cid else None,
                         "clause_verdict": cverdict})

    # runs and targets
    runs: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        runs[(rec["_key"], rec["_run"])].append(rec)
    run_list = []
    for (key, run_id), recs in runs.items():
        verdicts = _zero()
        for r in recs:
            verdicts[r["verdict"]] += 1
        first = recs[0]
        start = min(r["_started"] for r in recs)
        end = max(r["_started"].timestamp() + float(r.get("duration_s") or 0) for r in recs)
        run_list.append({
            "run_id": run_id, "key": key, "product": first["_product"], "version": first["_version"],
            "protocol": first["protocol"], "target_url": first.get("target", ""), "seed": first.get("seed"),
            "started_at": _iso(start), "ended_at": _iso(datetime.fromtimestamp(end, timezone.utc)),
            "cases": len(recs), "duration_s": round(sum(float(r.get("duration_s") or 0) for r in recs), 4),
            "verdicts": verdicts, "deviations": sum(1 for r in recs if r["verdict"] == "failed" and r.get("deviation")),
            "suite_schema": first.get("schema", 1), "_start": start, "_recs": recs,
        })
    run_list.sort(key=lambda r: (r["key"], r["_start"], r["run_id"]))
    latest: dict[str, dict[str, Any]] = {}
    for run in run_list:
        cur = latest.get(run["key"])
        if cur is None or (run["_start"], run["run_id"]) > (cur["_start"], cur["run_id"]):
            latest[run["key"]] = run
    targets = []
    for key, run in latest.items():
        all_runs = [r for r in run_list if r["key"] == key]
        targets.append({"key": key, "product": run["product"], "version": run["version"], "protocol": run["protocol"],
                        "platform": (run["_recs"][0].get("broker") or {}).get("platform"), "runs": len(all_runs),
                        "latest_run": run["run_id"], "first_started_at": all_runs[0]["started_at"],
                        "last_started_at": all_runs[-1]["started_at"]})
    targets.sort(key=lambda t: (t["protocol"], t["product"].lower(), _version_key(t["version"])))

    def clause_outcomes(run: dict[str, Any]) -> dict[str, str]:
        per: dict[str, list[str]] = defaultdict(list)
        for r in run["_recs"]:
            for cid, v in r["_cv"].items():
                per[cid].append(v)
        return {cid: _outcome(vs) for cid, vs in per.items()}

    def family_of(cid: str) -> str:
        clause = _clause(cid)
        if clause is None:
            return "UNKNOWN"
        return "DEFINITION" if catalog.is_documentation(clause) else clause.level.family

    def levels(run: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out = {}
        outcomes = clause_outcomes(run)
        cat = Counter(family_of(c.id) for c in catalog.catalog(run["protocol"], extensions=True, documentation=True))
        for fam in FAMILIES:
            got = [o for cid, o in outcomes.items() if family_of(cid) == fam]
            passed, failed = got.count("passed"), got.count("failed")
            tested = passed + failed
            out[fam] = {"passed": passed, "failed": failed, "undecided": got.count("undecided"), "tested": tested,
                        "catalog": cat.get(fam, 0) if fam != "UNKNOWN" else 0,
                        "ratio": round(passed / tested, 4) if tested else None}
        return out

    verdict_counts, compliance = [], []
    for t in targets:
        run = latest[t["key"]]
        sections: dict[str, dict[str, Any]] = {}
        for r in run["_recs"]:
            s = sections.setdefault(r.get("section", ""), {"section": r.get("section", ""),
                                                           "section_title": r.get("section_title", ""),
                                                           "cases": 0, "verdicts": _zero()})
            s["cases"] += 1
            s["verdicts"][r["verdict"]] += 1
        ident = {"key": t["key"], "product": t["product"], "version": t["version"], "protocol": t["protocol"],
                 "run_id": run["run_id"]}
        verdict_counts.append({**ident, "cases": run["cases"], "verdicts": run["verdicts"],
                               "deviations": run["deviations"], "by_section": list(sections.values())})
        compliance.append({**ident, "levels": levels(run), "deviations": run["deviations"]})

    matrix = []
    for protocol in sorted({t["protocol"] for t in targets}):
        columns = [t["key"] for t in targets if t["protocol"] == protocol]
        outcomes = {k: clause_outcomes(latest[k]) for k in columns}
        cited = sorted({cid for k in columns for run in runs_of(run_list, k) for r in run["_recs"] for cid in r["_cv"]})
        rows_m = []
        for cid in cited:
            clause = _clause(cid)
            rows_m.append({"clause": cid, "family": family_of(cid), "level": clause.level.value if clause else None,
                           "known": clause is not None, "cells": [outcomes[k].get(cid) for k in columns]})
        without = sum(1 for k in columns for run in runs_of(run_list, k) for r in run["_recs"] if not r["_cv"])
        matrix.append({"protocol": protocol, "columns": columns, "rows": rows_m, "cases_without_clause": without})

    history, changes, flaky = [], [], []
    families: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for run in run_list:
        families[(run["product"], run["protocol"])].append(run)
    for (product, protocol), fam_runs in sorted(families.items(), key=lambda kv: (kv[0][0].lower(), kv[0][1])):
        fam_runs.sort(key=lambda r: (r["_start"], r["run_id"]))
        points = []
        for run in fam_runs:
            lv = levels(run)
            points.append({"run_id": run["run_id"], "version": run["version"], "started_at": run["started_at"],
                           "cases": run["cases"], "verdicts": run["verdicts"],
                           "must": {k: lv["MUST"][k] for k in ("passed", "tested", "ratio")},
                           "should": {k: lv["SHOULD"][k] for k in ("passed", "tested", "ratio")}})
        history.append({"product": product, "protocol": protocol, "points": points})
        for a, b in zip(fam_runs, fam_runs[1:]):
            va = {r["case"]: r["verdict"] for r in a["_recs"]}
            vb = {r["case"]: r["verdict"] for r in b["_recs"]}
            reg, imp, und = [], [], 0
            for case in sorted(va.keys() & vb.keys()):
                was, now = va[case], vb[case]
                if was not in _RANK or now not in _RANK:
                    und += was != now
                    continue
                if _RANK[now] > _RANK[was]:
                    reg.append({"case": case, "was": was, "now": now})
                elif _RANK[now] < _RANK[was]:
                    imp.append({"case": case, "was": was, "now": now})
            side = lambda r: {"run_id": r["run_id"], "version": r["version"], "started_at": r["started_at"]}  # noqa: E731
            changes.append({"product": product, "protocol": protocol, "from": side(a), "to": side(b),
                            "same_version": a["version"] == b["version"], "regressions": reg[:500],
                            "improvements": imp[:500], "regressions_total": len(reg), "improvements_total": len(imp),
                            "undecided": und, "added": sorted(vb.keys() - va.keys())[:500],
                            "removed": sorted(va.keys() - vb.keys())[:500]})
    for t in targets:
        seq: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for run in sorted(runs_of(run_list, t["key"]), key=lambda r: r["_start"]):
            for r in run["_recs"]:
                seq[r["case"]].append({"run_id": run["run_id"], "started_at": run["started_at"], "verdict": r["verdict"]})
        for case, items in sorted(seq.items()):
            if len({i["verdict"] for i in items}) > 1:
                counts = _zero()
                for i in items:
                    counts[i["verdict"]] += 1
                flaky.append({"key": t["key"], "product": t["product"], "version": t["version"],
                              "protocol": t["protocol"], "case": case, "runs": len(items), "verdicts": counts,
                              "sequence": items})

    findings_rows, findings = _findings([Path(p) for p in finding_files], inputs)

    mentioned = {row["clause"] for m in matrix for row in m["rows"]}
    mentioned |= {c for f in findings["by_signature"] for c in f["clauses"]}
    clause_map = {}
    for cid in sorted(mentioned):
        clause = _clause(cid)
        if clause is not None:
            clause_map[cid] = {"level": clause.level.value, "family": clause.level.family, "section": clause.section,
                               "section_title": clause.section_title, "text": clause.text}

    inputs.update({"records": len(records), "findings": findings["total"], "bad_total": len(inputs["bad"]),
                   "bad_truncated": False, "schemas": dict(Counter(str(r.get("schema", 1)) for r in records))})
    for run in run_list:
        del run["_start"], run["_recs"]
    bundle = {
        "schema": 1, "kind": "amqpspec-report-bundle", "generated_at": _iso(datetime.now(timezone.utc)),
        "amqpspec_version": "0.1.0", "spark": {"master": "none (test fixture)", "version": None, "seconds": 0.0},
        "dataset": {"dir": "dataset", "results_rows": len(rows), "case_results": len(records),
                    "findings": len(findings_rows)},
        "inputs": inputs, "targets": targets, "runs": run_list, "verdict_counts": verdict_counts,
        "compliance": compliance, "matrix": matrix, "history": history, "changes": changes, "flaky": flaky,
        "findings": findings,
        "unknown": {"cases": [{"case": c, "protocol": p, "records": n} for (c, p), n in sorted(unknown_cases.items())],
                    "clauses": [{"clause": c, "records": n} for c, n in sorted(unknown_clauses.items())]},
        "clauses": clause_map,
    }

    (out / "dataset" / "results").mkdir(parents=True, exist_ok=True)
    (out / "dataset" / "findings").mkdir(parents=True, exist_ok=True)
    if rows:
        pq.write_table(pa.Table.from_pylist(rows), out / "dataset" / "results" / "part-00000.parquet")
    if findings_rows:
        pq.write_table(pa.Table.from_pylist(findings_rows), out / "dataset" / "findings" / "part-00000.parquet")
    (out / "dataset" / "_SUCCESS").write_text("")
    path = out / "bundle.json"
    path.write_text(json.dumps(bundle, ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    return path


def runs_of(run_list: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [r for r in run_list if r["key"] == key]


def _findings(paths: list[Path], inputs: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            inputs["bad"].append({"path": str(path), "line": None, "kind": "findings",
                                  "reason": f"invalid JSON: {exc}", "excerpt": None})
            continue
        sig = data.get("signature") or {}
        broker = data.get("broker") or {}
        rows.append({
            "signature_id": data.get("signature_id"), "protocol": sig.get("protocol"), "fuzz_target": sig.get("target"),
            "violation": sig.get("violation"), "code": sig.get("code"), "condition": sig.get("condition"),
            "state": sig.get("state"), "product": broker.get("product"), "version": broker.get("version"),
            "platform": broker.get("platform"), "target_url": data.get("target_url"), "seed": data.get("seed"),
            "first_seen": _ts(data.get("first_seen", "")), "last_seen": _ts(data.get("last_seen", "")),
            "count": int(data.get("count") or 0), "clauses": list(data.get("clauses") or []),
            "input_hex": (data.get("input") or {}).get("hex", ""),
            "input_summary": (data.get("input") or {}).get("summary", ""), "replay": data.get("replay", ""),
            "run_id": data.get("run_id"), "source_file": str(path),
        })
        inputs["files"].append({"path": str(path), "kind": "findings", "records": 1, "bad": 0, "status": "ok"})
    by_sig: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_sig[row["signature_id"]].append(row)
    out = []
    for sig_id, items in by_sig.items():
        first = max(items, key=lambda r: r["count"])
        out.append({
            "signature_id": sig_id, "protocol": first["protocol"], "target": first["fuzz_target"],
            "violation": first["violation"], "code": first["code"], "condition": first["condition"],
            "state": first["state"], "brokers": sorted({f'{r["product"]} {r["version"]}' for r in items}),
            "files": len(items), "hits": sum(r["count"] for r in items),
            "first_seen": _iso(min((r["first_seen"] for r in items if r["first_seen"]), default=None)),
            "last_seen": _iso(max((r["last_seen"] for r in items if r["last_seen"]), default=None)),
            "clauses": sorted({c for r in items for c in r["clauses"]}),
            "runs": sorted({r["run_id"] for r in items if r["run_id"]}),
            "example": {"input_hex": first["input_hex"], "input_summary": first["input_summary"],
                        "replay": first["replay"], "seed": first["seed"]},
        })
    out.sort(key=lambda f: (-f["hits"], f["signature_id"] or ""))
    return rows, {"total": len(rows), "hits": sum(r["count"] for r in rows),
                  "by_violation": dict(Counter(r["violation"] for r in rows)), "by_signature": out}
