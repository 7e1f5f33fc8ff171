"""Reading result and finding files: every line ends up as a record or a bad entry with its
file, line number and reason; nothing crashes, nothing disappears.

The bad lines are made from real result lines (tests/data/pipeline) by cutting, corrupting
or editing them, the way a killed run, a disk error or a hand edit would.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from amqpspec.reports.pipeline import ingest  # noqa: E402
from amqpspec.reports.pipeline.session import create_session  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "pipeline"


@pytest.fixture(scope="module")
def spark():
    session = create_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session


def real_lines(name: str = "rabbitmq-091-run1.jsonl") -> list[str]:
    return (DATA / name).read_text(encoding="utf-8").splitlines()


# ---------------------------------------------------------------- finding the files (no Spark)

def test_discover_reports_missing_empty_binary_and_duplicate_files(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(real_lines()[0] + "\n", encoding="utf-8")
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    packed = tmp_path / "packed.jsonl"
    packed.write_bytes(gzip.compress(b"{}\n"))
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b"{\x00\x01\x02}\n")
    nothing = tmp_path / "nothing-here"
    nothing.mkdir()
    inputs = ingest.discover_inputs(
        [str(good), str(tmp_path / "missing.jsonl"), str(empty), str(packed), str(binary), str(nothing), str(good)])
    assert [f.path for f in inputs.files] == [str(good)]
    reasons = {Path(b.path).name: b.reason for b in inputs.bad}
    assert reasons["missing.jsonl"] == "file not found"
    assert reasons["empty.jsonl"] == "empty file"
    assert reasons["packed.jsonl"].startswith("not a text file: gzip")
    assert reasons["binary.jsonl"].startswith("not a text file: binary")
    assert reasons["nothing-here"].startswith("no results files (*.jsonl)")
    assert reasons["good.jsonl"].startswith("duplicate input")
    assert all(b.line is None and b.action == "skipped" for b in inputs.bad)


def test_discover_expands_directories_recursively_in_sorted_order(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "1.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("ignored\n", encoding="utf-8")
    inputs = ingest.discover_inputs([str(tmp_path)], [str(DATA / "findings")])
    results = [Path(f.path).relative_to(tmp_path).as_posix() for f in inputs.of_kind("results")]
    assert results == ["1.jsonl", "b/2.jsonl"]
    assert len(inputs.of_kind("findings")) == 4
    assert not inputs.bad


# ---------------------------------------------------------------- result lines

def _classified(spark, path: Path) -> dict[int, dict]:
    files = ingest.discover_inputs([str(path)]).files
    rows = ingest.read_results(spark, files).collect()
    return {r["source_line"]: r.asDict(recursive=True) for r in rows}


def test_every_bad_line_is_reported_with_its_line_number_and_reason(spark, tmp_path):
    good = real_lines()
    record = json.loads(good[0])
    wrong_type = dict(record, duration_s="slow", seed=1e30)
    lines = [
        good[0],                                         # 1 ok
        "",                                              # 2 blank: not a record, not an error
        good[1][: len(good[1]) // 2],                    # 3 cut in the middle
        "[1, 2, 3]",                                     # 4 JSON, not an object
        json.dumps({k: v for k, v in record.items() if k != "case"}),   # 5 no case
        json.dumps(dict(record, verdict="great")),       # 6 unknown verdict
        json.dumps(wrong_type),                          # 7 wrong types: kept, fields emptied
        json.dumps({"kind": "finding", "signature_id": "x"}),           # 8 a finding
        good[2] + "\r",                                  # 9 CRLF line ending: fine
        json.dumps(dict(record, verdict=" PASSED ")),    # 10 sloppy verdict spelling: normalised
        json.dumps({"hello": "world"}),                  # 11 some other JSON object
        good[3][:200],                                   # 12 last line, cut (no newline): a killed run
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    rows = _classified(spark, path)
    assert 2 not in rows
    expect = {
        1: ("ok", None),
        3: ("skipped", "invalid JSON"),
        4: ("skipped", "not a JSON object"),
        5: ("skipped", "missing field: case"),
        6: ("skipped", "unknown verdict: great"),
        7: ("kept", "bad field: duration_s, seed"),
        8: ("skipped", "not a result record: a fuzz finding (pass finding directories with --findings)"),
        9: ("ok", None),
        10: ("ok", None),
        11: ("skipped", "not a result record: no case and no verdict"),
        12: ("skipped", "truncated line (no newline at end of file)"),
    }
    assert {n: (r["status"], r["reason"]) for n, r in rows.items()} == expect
    kept = rows[7]["r"]
    assert kept["case"] == record["case"] and kept["verdict"] == record["verdict"]
    assert kept["duration_s"] is None and kept["seed"] is None
    assert kept["broker"]["product"] == "RabbitMQ"          # fields after the bad ones survive
    assert kept["run_id"] == record["run_id"]
    assert rows[10]["r"]["verdict"] == "passed"
    assert rows[3]["excerpt"] == good[1][:120]


def test_invalid_utf8_and_valid_records_around_it(spark, tmp_path):
    good = real_lines()
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(good[0].encode() + b"\n" + b'{"case": "x\xe9\xff' + b"\n" + good[1].encode() + b"\n")
    rows = _classified(spark, path)
    assert rows[1]["status"] == "ok" and rows[3]["status"] == "ok"
    assert rows[2]["status"] == "skipped" and rows[2]["reason"].startswith("not UTF-8")


def test_a_complete_last_line_without_newline_is_a_record(spark, tmp_path):
    good = real_lines()
    path = tmp_path / "no-final-newline.jsonl"
    path.write_text(good[0] + "\n" + good[1], encoding="utf-8")
    rows = _classified(spark, path)
    assert [rows[n]["status"] for n in (1, 2)] == ["ok", "ok"]


def test_file_names_with_spaces_and_plus_signs_come_back_as_paths(spark, tmp_path):
    odd = tmp_path / "a dir+1" / "run 50%+[1]{a,b}*.jsonl"
    odd.parent.mkdir()
    odd.write_text(real_lines()[0] + "\n", encoding="utf-8")
    rows = _classified(spark, odd)
    assert rows[1]["source_file"] == str(odd.resolve())


def test_real_result_files_parse_without_loss(spark):
    files = ingest.discover_inputs([str(DATA)]).files
    rows = ingest.read_results(spark, files).collect()
    total = sum(len(real_lines(p.name)) for p in DATA.glob("*.jsonl"))
    assert len(rows) == total
    assert {r["status"] for r in rows} == {"ok"}
    sample = next(r for r in rows if r["r"]["evidence"]["checks"])
    assert sample["r"]["evidence"]["checks"][0]["verdict"] in ingest.VERDICTS


# ---------------------------------------------------------------- finding files

def test_findings_valid_bad_and_foreign_files(spark, tmp_path):
    folder = tmp_path / "findings"
    folder.mkdir()
    real = next((DATA / "findings" / "rabbitmq").glob("*.json"))
    (folder / "good.json").write_text(real.read_text(encoding="utf-8"), encoding="utf-8")
    (folder / "cut.json").write_text(real.read_text(encoding="utf-8")[:300], encoding="utf-8")
    (folder / "result.json").write_text(real_lines()[0], encoding="utf-8")
    data = json.loads(real.read_text(encoding="utf-8"))
    (folder / "no-id.json").write_text(json.dumps(dict(data, signature_id="")), encoding="utf-8")
    (folder / "odd-count.json").write_text(json.dumps(dict(data, count="many")), encoding="utf-8")
    files = ingest.discover_inputs([], [str(folder)]).files
    rows = {Path(r["source_file"]).name: r for r in ingest.read_findings(spark, files).collect()}
    assert (rows["good.json"]["status"], rows["good.json"]["reason"]) == ("ok", None)
    assert rows["good.json"]["f"]["signature"]["violation"] == "wrong-code"
    assert rows["cut.json"]["reason"] == "invalid JSON"
    assert rows["result.json"]["reason"] == "not a finding: kind is missing"
    assert rows["no-id.json"]["reason"] == "missing field: signature_id"
    assert (rows["odd-count.json"]["status"], rows["odd-count.json"]["reason"]) == ("kept", "bad field: count")
