"""Cleaning and shaping the dataset: one row per (run, broker, version, case, clause), with the
clause's own verdict, catalog levels, unknown ids kept and flagged, duplicates reported.

Inputs are real result lines (tests/data/pipeline), some edited the way an older suite
version or a hand-made file would differ.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from amqpspec import clauses as catalog  # noqa: E402
from amqpspec.reports.pipeline import dataset as ds  # noqa: E402
from amqpspec.reports.pipeline import ingest  # noqa: E402
from amqpspec.reports.pipeline.session import create_session  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "pipeline"


@pytest.fixture(scope="module")
def spark():
    return create_session("local[2]", {"spark.sql.shuffle.partitions": "4"})


def records(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines()]


def build(spark, paths: list[Path]):
    files = ingest.discover_inputs([str(p) for p in paths]).files
    staged = ds.stage(ingest.read_results(spark, files)).cache()
    rows = [r.asDict() for r in ds.result_rows(staged, ds.load_catalog()).collect()]
    bad = [r.asDict() for r in ds.bad_lines(staged).collect()]
    return rows, bad


@pytest.fixture(scope="module")
def real(spark):
    return build(spark, sorted(DATA.glob("*.jsonl")))


def test_one_row_per_clause_and_one_for_a_case_citing_none(real):
    rows, bad = real
    assert not bad
    expected = sum(max(1, len(r["clauses"])) for p in DATA.glob("*.jsonl") for r in records(p.name))
    assert len(rows) == expected
    first = [r for r in rows if r["clause_pos"] == 0]
    assert len(first) == sum(len(records(p.name)) for p in DATA.glob("*.jsonl"))
    no_clause = [r for r in rows if r["clause"] is None]
    assert no_clause and all(r["clause_pos"] == 0 and r["clause_known"] is None for r in no_clause)
    # a case citing no clause declares its own level (a guideline it checks)
    # (or, since every case cites ids, the level of the text its guideline quotes: "definition")
    assert all(r["level"] in ("MUST", "SHOULD", "MAY", "MUST NOT", "SHOULD NOT", "definition") for r in no_clause)


def test_levels_come_from_the_catalog(real):
    rows, _ = real
    for row in rows:
        if row["clause"] is None:
            continue
        assert row["clause_known"] is True
        clause = catalog.get(row["clause"])
        assert row["level"] == clause.level.value
        assert row["family"] == clause.level.family


def test_clause_verdict_follows_the_checks_that_cite_the_clause(real):
    rows, _ = real
    by = {(r["run_id"], r["case"], r["clause"]): r for r in rows}
    rec = next(r for r in records("rabbitmq-091-run1.jsonl") if r["case"] == "amqp091/4.2.5.5/name-129-characters")
    assert rec["verdict"] == "warning"
    cited = {c for check in rec["evidence"]["checks"] for c in check["clauses"]}
    assert cited == {"amqp091:4.2.5.5/2"}
    key = (rec["run_id"], rec["case"])
    assert by[key + ("amqp091:4.2.5.5/2",)]["clause_verdict"] == "warning"
    assert by[key + ("amqp091:4.2.5.5/1",)]["clause_verdict"] == "passed"    # no check found fault with it
    assert by[key + ("amqp091:4.2.5.5/1",)]["verdict"] == "warning"          # the case's own verdict is kept


def test_documented_deviations_and_passwords(real):
    rows, _ = real
    devs = [r for r in rows if r["is_deviation"]]
    assert devs and all(r["deviation"] and r["verdict"] in ("failed", "warning") and r["product"] == "RabbitMQ" for r in devs)
    assert all("guest:guest" not in (r["target_url"] or "") for r in rows)


def test_a_broker_that_names_no_product_is_unknown_not_dropped(real):
    rows, _ = real
    proton = {r["case"] for r in rows if r["product"] == "unknown"}
    assert proton == {r["case"] for r in records("proton-10.jsonl")}
    assert {r["version"] for r in rows if r["product"] == "unknown"} == {"unknown"}


def test_older_suite_records_are_kept_flagged_and_deduplicated(spark, tmp_path):
    recs = records("garagemq-091.jsonl")
    multi = next(r for r in recs if len(r["clauses"]) > 1)
    retired = dict(recs[0], case="amqp091/9.9/retired-case", clauses=["amqp091:9.9/1", recs[0]["clauses"][0]]
                   if recs[0]["clauses"] else ["amqp091:9.9/1"])
    old = {k: v for k, v in recs[1].items() if k not in ("run_id", "protocol", "schema", "broker")}
    lines = [json.dumps(multi), json.dumps(retired), json.dumps(old), json.dumps(multi),
             json.dumps(dict(recs[2], target="amqp://guest:secret@127.0.0.1:5673/"))]
    path = tmp_path / "old-suite.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows, bad = build(spark, [path])
    retired_rows = [r for r in rows if r["case"] == "amqp091/9.9/retired-case"]
    assert retired_rows and all(r["case_known"] is False for r in retired_rows)
    unknown = next(r for r in retired_rows if r["clause"] == "amqp091:9.9/1")
    assert (unknown["clause_known"], unknown["level"], unknown["family"]) == (False, None, "UNKNOWN")
    old_rows = [r for r in rows if r["case"] == old["case"]]
    assert old_rows and all(r["run_id"] == f"file:{path.resolve()}" and r["protocol"] == "0-9-1"
                            and r["product"] == "unknown" and r["suite_schema"] is None for r in old_rows)
    assert len([r for r in rows if r["case"] == multi["case"]]) == len(multi["clauses"])   # once, not twice
    assert bad == [{"source_file": str(path.resolve()), "source_line": 4,
                    "reason": f"duplicate record: same run_id and case as {path.resolve()}:1",
                    "action": "skipped", "excerpt": lines[3][:120]}]
    assert {r["target_url"] for r in rows if r["case"] == recs[2]["case"]} == {"amqp://guest@127.0.0.1:5673/"}


def test_liveness_failure_fails_every_clause_of_the_case(spark, tmp_path):
    rec = next(r for r in records("garagemq-091.jsonl") if r["clauses"] and r["verdict"] == "passed")
    # what the runner writes when the broker stops serving after an otherwise passing case
    dead = dict(rec, verdict="failed", reason="the broker stopped serving new connections after this case")
    path = tmp_path / "dead.jsonl"
    path.write_text(json.dumps(dead) + "\n", encoding="utf-8")
    rows, _ = build(spark, [path])
    assert {r["clause_verdict"] for r in rows} == {"failed"}


def test_a_check_citing_no_clause_counts_against_no_clause(spark, tmp_path):
    """DESIGN: every check counts only against the clauses it cites. A case whose only failing
    check cites nothing keeps its failed verdict, but none of its clauses is booked as failed."""
    rec = next(r for r in records("garagemq-091.jsonl") if len(r["clauses"]) >= 2)
    a, b = rec["clauses"][:2]

    def check(clauses: list[str], verdict: str) -> dict:
        return {"description": "a check", "clauses": clauses, "verdict": verdict, "expected": "", "observed": ""}

    uncited = dict(rec, case=rec["case"], clauses=[a, b], verdict="failed",
                   evidence=dict(rec["evidence"], checks=[check([], "failed"), check([a], "passed")]))
    cited = dict(rec, case=rec["case"] + "-cited", clauses=[a, b], verdict="failed",
                 evidence=dict(rec["evidence"], checks=[check([a], "failed"), check([], "passed")]))
    path = tmp_path / "checks.jsonl"
    path.write_text(json.dumps(uncited) + "\n" + json.dumps(cited) + "\n", encoding="utf-8")
    rows, bad = build(spark, [path])
    assert not bad
    got = {(r["case"], r["clause"]): (r["verdict"], r["clause_verdict"]) for r in rows}
    assert got == {(uncited["case"], a): ("failed", "passed"), (uncited["case"], b): ("failed", "passed"),
                   (cited["case"], a): ("failed", "failed"), (cited["case"], b): ("failed", "passed")}
