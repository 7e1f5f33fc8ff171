"""The pipeline end to end on real result files (tests/data/pipeline) plus the bad input a
real installation sees: a missing file, an empty one, a killed run's truncated last line, a
duplicated record, a rerun whose verdicts changed, a case id from an older suite version.

One job run is shared by the module (Spark start and the job dominate the time); each test
checks one part of the bundle against numbers computed here, in plain Python, from the files.
"""
from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from click.testing import CliRunner  # noqa: E402

from amqpspec import clauses as catalog  # noqa: E402
from amqpspec.reports.cli import report  # noqa: E402
from amqpspec.reports.pipeline.job import run_job  # noqa: E402
from amqpspec.reports.pipeline.session import create_session  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "pipeline"
TOP_KEYS = {"schema", "kind", "generated_at", "amqpspec_version", "spark", "dataset", "inputs", "targets", "runs",
            "runs_total", "verdict_counts", "compliance", "matrix", "history", "changes", "flaky", "flaky_total",
            "findings", "unknown", "clauses", "junit", "limits", "clients"}
FLIPPED = "amqp091/4.2.3/frame-end-body"       # failed in run 2; passes in the rerun (run 3)
WORSE = "amqp091/2.2.4/undecodable-frame-instead-of-start-ok"   # passed in run 2, fails in run 3
RETIRED = "amqp091/9.9/retired-case"


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """Real files, plus a rerun derived from run 2 and the usual damage."""
    root = tmp_path_factory.mktemp("inputs")
    results = root / "results"
    shutil.copytree(DATA, results, ignore=shutil.ignore_patterns("findings", "*.md"))
    run2 = records(DATA / "rabbitmq-091-run2.jsonl")
    rerun = []
    for rec in run2:
        rec = dict(rec, run_id="rerun-0003", started_at=rec["started_at"].replace("T07:", "T09:"))
        if rec["case"] == FLIPPED:
            rec["verdict"], rec["deviation"] = "passed", None
        if rec["case"] == WORSE:
            rec["verdict"] = "failed"
        rerun.append(rec)
    retired = dict(rerun[0], case=RETIRED, clauses=["amqp091:9.9/1"])
    lines = [json.dumps(r) for r in rerun] + [json.dumps(retired), json.dumps(rerun[5])]   # a duplicate
    lines.append(json.dumps(rerun[6])[:150])                                             # killed mid-write
    (results / "rabbitmq-091-run3.jsonl").write_text("\n".join(lines), encoding="utf-8")
    (results / "empty.jsonl").write_text("", encoding="utf-8")
    return {"results": results, "findings": DATA / "findings", "missing": root / "gone.jsonl",
            "rerun": results / "rabbitmq-091-run3.jsonl"}


@pytest.fixture(scope="module")
def job(inputs, tmp_path_factory):
    spark = create_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    out = tmp_path_factory.mktemp("report")
    return run_job([str(inputs["results"]), str(inputs["missing"])], out,
                   findings=[str(inputs["findings"])], spark=spark)


@pytest.fixture(scope="module")
def bundle(job) -> dict:
    return json.loads(job.bundle_path.read_text(encoding="utf-8"))


def valid_records(inputs) -> list[dict]:
    out = []
    for path in sorted(inputs["results"].glob("*.jsonl")):
        seen = set()
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if (rec["run_id"], rec["case"]) not in seen:
                seen.add((rec["run_id"], rec["case"]))
                out.append(rec)
    return out


def test_bundle_has_every_documented_key(bundle, job):
    assert set(bundle) == TOP_KEYS
    assert bundle["schema"] == 1 and bundle["kind"] == "amqpspec-report-bundle"
    assert bundle["spark"]["master"].startswith("local")
    assert (job.dataset_dir / "_SUCCESS").exists()
    assert not [p for p in job.out_dir.iterdir() if p.name.startswith(".")]   # no staging left behind


def test_skipped_input_is_listed_with_file_line_and_reason(bundle, inputs):
    inp = bundle["inputs"]
    rerun = str(inputs["rerun"])
    listed = {(b["path"], b["line"], b["reason"].split(":")[0], b["action"]) for b in inp["bad"]}
    n = len(records(DATA / "rabbitmq-091-run2.jsonl"))
    assert (str(inputs["missing"]), None, "file not found", "skipped") in listed
    assert (str(inputs["results"] / "empty.jsonl"), None, "empty file", "skipped") in listed
    assert (rerun, n + 2, "duplicate record", "skipped") in listed
    assert (rerun, n + 3, "truncated line (no newline at end of file)", "skipped") in listed
    assert inp["skipped_total"] == inp["bad_total"] == 4
    assert inp["records"] == len(valid_records(inputs))
    status = {f["path"]: f["status"] for f in inp["files"]}
    assert status[rerun] == "partial" and status[str(inputs["missing"])] == "skipped"
    assert inp["findings"] == 4


def test_dataset_rows_match_the_records(job, bundle, inputs):
    recs = valid_records(inputs)
    assert bundle["dataset"]["case_results"] == len(recs)
    assert bundle["dataset"]["results_rows"] == sum(max(1, len(r["clauses"])) for r in recs)


def test_verdict_counts_of_each_targets_latest_run(bundle):
    for name, key in (("garagemq-091.jsonl", "garagemq 0.1 (0-9-1)"), ("proton-10.jsonl", "unknown unknown (1.0)"),
                      ("rabbitmq-10.jsonl", "RabbitMQ 3.10.8 (1.0)")):
        counts = next(v for v in bundle["verdict_counts"] if v["key"] == key)
        expect = Counter(r["verdict"] for r in records(DATA / name))
        assert counts["verdicts"] == {v: expect.get(v, 0) for v in counts["verdicts"]}
    rabbit = next(v for v in bundle["verdict_counts"] if v["key"] == "RabbitMQ 3.10.8 (0-9-1)")
    assert rabbit["run_id"] == "rerun-0003"


def _clause_outcomes(recs: list[dict]) -> dict[str, str]:
    """The bundle.md rule, written out independently of the Spark code."""
    rank = {"passed": 0, "informational": 1, "skipped": 2, "warning": 3, "failed": 4, "error": 5}
    per: dict[str, set[str]] = {}
    for rec in recs:
        checks = rec["evidence"]["checks"]
        all_max = max((rank[c["verdict"]] for c in checks), default=-1)
        for clause in rec["clauses"]:
            rel = [rank[c["verdict"]] for c in checks if clause in (c["clauses"] or [])]   # cites it
            if rec["verdict"] in ("skipped", "error") or rank[rec["verdict"]] > all_max:
                v = rec["verdict"]
            elif rel:
                v = next(k for k, x in rank.items() if x == max(rel))
            elif checks:
                v = "passed"
            else:
                v = rec["verdict"]
            per.setdefault(clause, set()).add(v)
    out = {}
    for clause, vs in per.items():
        out[clause] = ("failed" if vs & {"failed", "warning"} else
                       "passed" if vs & {"passed", "informational"} else "undecided")
    return out


def test_compliance_by_level_matches_an_independent_count(bundle):
    recs = records(DATA / "garagemq-091.jsonl")
    outcomes = _clause_outcomes(recs)
    comp = next(c for c in bundle["compliance"] if c["key"] == "garagemq 0.1 (0-9-1)")
    for fam in ("MUST", "SHOULD", "MAY"):
        mine = [o for cid, o in outcomes.items() if catalog.get(cid).level.family == fam]
        level = comp["levels"][fam]
        assert (level["passed"], level["failed"], level["undecided"]) == (
            mine.count("passed"), mine.count("failed"), mine.count("undecided")), fam
        assert level["catalog"] == sum(1 for c in catalog.by_id("0-9-1").values() if c.level.family == fam)
    matrix = next(m for m in bundle["matrix"] if m["protocol"] == "0-9-1")
    col = matrix["columns"].index("garagemq 0.1 (0-9-1)")
    assert {r["clause"]: r["cells"][col] for r in matrix["rows"] if r["cells"][col]} == outcomes
    unknown_row = next(r for r in matrix["rows"] if r["clause"] == "amqp091:9.9/1")
    assert (unknown_row["known"], unknown_row["family"]) == (False, "UNKNOWN")


def test_regressions_improvements_and_flaky_cases(bundle):
    pairs = [c for c in bundle["changes"] if c["product"] == "RabbitMQ" and c["protocol"] == "0-9-1"]
    assert [(p["from"]["run_id"], p["to"]["run_id"]) for p in pairs][-1][1] == "rerun-0003"
    last = pairs[-1]
    assert last["same_version"] is True
    assert last["regressions"] == [{"case": WORSE, "was": "passed", "now": "failed"}]
    assert last["improvements"] == [{"case": FLIPPED, "was": "failed", "now": "passed"}]
    assert last["added"] == [RETIRED] and last["removed"] == []
    flaky = {f["case"]: f for f in bundle["flaky"] if f["key"] == "RabbitMQ 3.10.8 (0-9-1)"}
    assert set(flaky) == {FLIPPED, WORSE}
    assert [s["verdict"] for s in flaky[FLIPPED]["sequence"]] == ["failed", "failed", "passed"]
    history = next(h for h in bundle["history"] if h["product"] == "RabbitMQ" and h["protocol"] == "0-9-1")
    assert history["points_total"] == 3 and history["points"][-1]["run_id"] == "rerun-0003"


def test_findings_grouped_by_signature(bundle):
    f = bundle["findings"]
    assert f["total"] == 4 and f["hits"] == 41 + 3 + 12 + 5
    by = {s["violation"]: s for s in f["by_signature"]}
    live = by["liveness"]
    assert (live["files"], live["hits"], live["brokers"], live["runs"]) == (
        2, 17, ["garagemq 0.1"], ["fuzz-garage-1", "fuzz-garage-2"])
    assert by["wrong-code"]["code"] == 505 and by["wrong-code"]["brokers"] == ["RabbitMQ 3.10.8"]
    assert f["by_signature"][0]["violation"] == "wrong-code"     # most hits first
    for cid in by["wrong-code"]["clauses"]:
        assert bundle["clauses"][cid]["text"] == catalog.get(cid).text


def test_unknown_case_ids_are_kept_and_listed(bundle):
    assert bundle["unknown"]["cases"] == [{"case": RETIRED, "protocol": "0-9-1", "records": 1}]
    assert bundle["unknown"]["clauses"] == [{"clause": "amqp091:9.9/1", "records": 1}]


def test_junit_of_each_latest_run_from_the_original_records(bundle, job):
    assert {j["key"] for j in bundle["junit"]} == {t["key"] for t in bundle["targets"]}
    for entry in bundle["junit"]:
        root = ET.parse(job.out_dir / entry["path"]).getroot()
        latest = next(v for v in bundle["verdict_counts"] if v["key"] == entry["key"])
        assert int(root.get("tests")) == latest["cases"]
    assert "transcript:" in (job.out_dir / bundle["junit"][0]["path"]).read_text(encoding="utf-8")


def test_cli_report_writes_the_dataset_and_says_what_it_skipped(inputs, tmp_path, job):
    out = tmp_path / "cli"
    result = CliRunner().invoke(report, [str(inputs["results"] / "garagemq-091.jsonl"), str(inputs["missing"]),
                                         "--out", str(out), "--no-html"])
    assert result.exit_code == 0, result.output
    assert "read 24 result records and 0 findings from 1 files" in result.output
    assert f"{inputs['missing']}: file not found (skipped)" in result.output
    assert "garagemq 0.1 (0-9-1): MUST" in result.output
    for stage in ("start Spark", "read the input, write the dataset", "aggregate", "write JUnit"):
        assert f"stage: {stage}: " in result.output   # the progress display, one line per stage when piped
    assert (out / "dataset" / "results").is_dir() and (out / "bundle.json").exists()


def test_cli_with_nothing_readable_is_one_line_and_exit_2(inputs, tmp_path):
    result = CliRunner().invoke(report, [str(inputs["missing"]), "--out", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"amqpspec: error: nothing to read: {inputs['missing']}: file not found"]


def test_a_failed_write_waits_for_the_threads_asking_spark_and_leaves_no_temporary_dataset(
        inputs, tmp_path, job, monkeypatch):
    """The skipped-input counts, the aggregates and the findings table are asked from threads
    while the dataset is written: when the write fails they end before the temporary dataset
    is removed (a late findings write would make its folder again) and the error is the write's."""
    import threading
    import time as _time

    from pyspark.sql.readwriter import DataFrameWriter

    from amqpspec.reports.pipeline import job as job_module

    slow_findings = job_module._write_findings

    def late_findings(*args, **kwargs):
        _time.sleep(1.0)   # still writing when the results write has failed
        return slow_findings(*args, **kwargs)

    real_parquet = DataFrameWriter.parquet

    def failing_parquet(self, path, *args, **kwargs):
        if str(path).endswith("results"):
            raise OSError("disk full (test)")
        return real_parquet(self, path, *args, **kwargs)

    monkeypatch.setattr(job_module, "_write_findings", late_findings)
    monkeypatch.setattr(DataFrameWriter, "parquet", failing_parquet)
    out = tmp_path / "failed"
    spark = create_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    with pytest.raises(OSError, match="disk full"):
        run_job([str(inputs["results"] / "garagemq-091.jsonl")], out, spark=spark)
    assert not [t for t in threading.enumerate() if t.name.startswith("amqpspec-") and t.is_alive()]
    assert not list(out.glob(".dataset-*"))
