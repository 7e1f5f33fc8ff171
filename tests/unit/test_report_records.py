"""The result records JUnit and the HTML report share (reports/pipeline/records.py)."""
from __future__ import annotations

import json
import os
from pathlib import Path

from amqpspec.reports.pipeline import records


def _write(path: Path, lines: list[str]) -> None:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_lines_by_number_bad_ones_left_out(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    _write(f, [json.dumps({"case": "a"}), "{not json", "", json.dumps({"case": "d"})])
    records.forget()
    assert records.read_lines(f, {1, 2, 3, 4, 9}) == {1: {"case": "a"}, 4: {"case": "d"}}


def test_second_reader_gets_the_parsed_records_without_reading(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "r.jsonl"
    _write(f, [json.dumps({"case": "a"}), json.dumps({"case": "b"})])
    records.forget()
    first = records.read_lines(f, {1, 2})
    opened: list[str] = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    again = records.read_lines(str(f), {2})
    assert again == {2: {"case": "b"}} and again[2] is first[2]
    assert opened == []
    records.read_lines(f, {1, 3})   # a line not seen yet: the file is read again
    assert opened


def test_a_rewritten_file_is_read_again(tmp_path: Path) -> None:
    f = tmp_path / "r.jsonl"
    _write(f, [json.dumps({"case": "a"})])
    records.forget()
    assert records.read_lines(f, {1}) == {1: {"case": "a"}}
    _write(f, [json.dumps({"case": "changed"})])
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert records.read_lines(f, {1}) == {1: {"case": "changed"}}



def test_prefetch_parses_every_line_then_readers_do_not_read(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "r.jsonl"
    _write(f, [json.dumps({"case": "a"}), "not json", json.dumps({"case": "c"})])
    records.forget()
    thread = records.prefetch([f])
    assert thread is not None
    thread.join(10)
    opened: list[str] = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: opened.append(str(p)) or real_open(p, *a, **k))
    assert records.read_lines(f, {1, 2, 3, 4}) == {1: {"case": "a"}, 3: {"case": "c"}}
    assert opened == []


def test_no_prefetch_of_a_large_input(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "r.jsonl"
    _write(f, [json.dumps({"case": "a"})])
    monkeypatch.setattr(records, "PREFETCH_MAX_BYTES", 3)
    assert records.prefetch([f]) is None
    assert records.prefetch([tmp_path / "gone.jsonl"]) is None
