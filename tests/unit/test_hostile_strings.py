"""No broker string can stop a run, lose a result or break a file the suite writes.

Issue 11 items 2, 6 and 8, against the fake broker of tests/support/hostile_strings.py (an
invalid UTF-8 octet, NUL, ESC, CR/LF, U+0085, U+2028, U+2029 in every reply-text and in its
product and version) and against crafted files.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from amqpspec.atomicfile import atomic_writer, creation_mode
from amqpspec.result import CloseInfo, Result, ResultWriter, Verdict, read_results
from tests.support.hostile import HostileServer
from tests.support.hostile_strings import HOSTILE_TEXT, hostile_text_broker

# the connection, channel and queue sections: every close path (channel.close after a
# declare, connection.close on channel 0, refusals of odd frames) and the scenarios' clients
CASES = ("amqp091/4.2.*", "amqp091/queue.declare*", "amqp091/connection.*", "amqp091/channel.*",
         "amqp091/scenario.*")
SEPARATORS = ("\u2028", "\u2029", "\x85")


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[subprocess.CompletedProcess[str], Path]]:
    out = tmp_path_factory.mktemp("hostile-run")
    args = [sys.executable, "-m", "amqpspec.cli", "run", "--protocol", "0-9-1", "--no-profile", "--timeout", "2",
            "--jobs", "4", "--seed", "1", "--json", str(out / "out.jsonl"), "--junit", str(out / "j.xml")]
    for glob in CASES:
        args += ["--case", glob]
    with HostileServer(hostile_text_broker) as server:
        proc = subprocess.run([*args[:4], server.url, *args[4:]], capture_output=True, text=True, errors="replace",
                              timeout=300)
    yield proc, out


def _selected() -> list[str]:
    from amqpspec.case import discover, select

    return [c.id for c in select(discover("0-9-1"), list(CASES), [])]


def test_run_against_hostile_reply_texts_ends_normally(hostile_run) -> None:
    proc, _ = hostile_run
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "UnicodeEncodeError" not in proc.stderr


def test_every_case_is_in_the_result_file_as_ascii_json(hostile_run) -> None:
    _, out = hostile_run
    raw = (out / "out.jsonl").read_bytes()
    assert raw.isascii()  # no octet of the broker's can fail the write, no U+2028 split a line
    records = [json.loads(line) for line in raw.split(b"\n") if line]
    assert sorted(r["case"] for r in records) == sorted(_selected())
    closes = [r["close"]["text"] for r in records if r["close"]["text"]]
    assert closes, "the fake broker's close texts reached no record"
    # the undecodable octet is shown, not dropped; the other characters are kept as they came
    assert all("\\xff" in text and "\u2028" in text and "\x1b" in text for text in closes)
    assert all(r["broker"]["product"].startswith("Hostile") for r in records)
    assert [r.case for r in read_results(out / "out.jsonl")] == [r["case"] for r in records]


def test_junit_is_well_formed(hostile_run) -> None:
    _, out = hostile_run
    root = ET.parse(out / "j.xml").getroot()
    assert int(root.get("tests", "0")) == len(_selected())


def test_the_run_files_read_back_through_capture_and_seeds(hostile_run) -> None:
    from amqpspec.capture import transcripts
    from amqpspec.fuzz import seeds

    _, out = hostile_run
    line = next(line for line in (out / "out.jsonl").read_text().split("\n")
                if line and (r := json.loads(line))["close"]["text"] and r["close"]["how"] == "channel.close")
    tf = transcripts.load(out / "out.jsonl", json.loads(line)["case"])
    assert tf.entries and tf.protocol == "0-9-1"
    (out / "one.jsonl").write_text(line + "\n")  # a seed file holds one record (or names its case)
    assert seeds.load([str(out / "one.jsonl")], "0-9-1").seeds


# ------------------------------------------------------------------ item 6: files of older versions

def _old_style_result(tmp_path: Path) -> Path:
    """A result file as amqpspec wrote it before: ensure_ascii=False, so the line separators
    are raw characters inside the JSON strings. Two records, the first carrying them."""
    from tests.unit.test_capture_support import session_091

    entries = session_091().entries
    lines = []
    for case in ("amqp091/x/odd", "amqp091/x/plain"):
        record = Result(case=case, title="t", section="x", section_title="", clauses=[], protocol="0-9-1",
                        verdict=Verdict.FAILED, reason="reply-text " + "".join(SEPARATORS),
                        close=CloseInfo(who="broker", how="channel.close", code=406, text="a\u2028b\u2029c\x85d"),
                        transcript=entries).to_json()
        if case.endswith("plain"):
            record["reason"], record["close"]["text"] = "plain", "plain"
        lines.append(json.dumps(record, ensure_ascii=False))
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(path.read_text(encoding="utf-8").splitlines()) > 2  # what used to break the readers
    return path


def test_old_result_files_with_line_separators_still_read(tmp_path: Path) -> None:
    from amqpspec.capture import transcripts
    from amqpspec.fuzz import seeds

    path = _old_style_result(tmp_path)
    assert [r.close.text for r in read_results(path)] == ["a\u2028b\u2029c\x85d", "plain"]
    tf = transcripts.load(path, "amqp091/x/odd")  # the loader of replay, capture show/export
    assert tf.entries
    one = tmp_path / "seed.jsonl"  # a seed file holds one record
    one.write_text(path.read_text(encoding="utf-8").split("\n")[0] + "\n", encoding="utf-8")
    corpus = seeds.load([str(one)], "0-9-1")  # fuzz --seeds
    assert corpus.seeds, corpus.skipped


def test_capture_export_of_an_old_result_file(tmp_path: Path) -> None:
    path = _old_style_result(tmp_path)
    pcap = tmp_path / "x.pcap"
    proc = subprocess.run([sys.executable, "-m", "amqpspec.cli", "capture", "export", str(path), "--case",
                           "amqp091/x/odd", "--out", str(pcap)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert pcap.stat().st_size > 24


# ------------------------------------------------------------------ item 8: modes follow the umask

@pytest.fixture(params=[0o077, 0o022, 0o027], ids=lambda m: f"umask-{m:03o}")
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_writer_creates_files_as_open_would(umask: int, tmp_path: Path) -> None:
    from amqpspec.baseline import write_baseline
    from amqpspec.capture import transcripts
    from amqpspec.fuzz.findings import FindingStore, Signature, make_finding
    from amqpspec.reports.junit import write_junit
    from tests.unit.test_capture_support import session_091

    expected = 0o666 & ~umask
    assert creation_mode() == expected
    result = Result(case="amqp091/x/y", title="t", section="x", section_title="", clauses=[], protocol="0-9-1",
                    verdict=Verdict.PASSED)
    with atomic_writer(tmp_path / "plain.txt") as fh:
        fh.write("x")
    with ResultWriter(tmp_path / "results.jsonl") as writer:
        writer.write(result)
    write_junit([result], tmp_path / "junit.xml")
    write_baseline(tmp_path / "baseline.json", [result], "amqp://h/", {})
    transcripts.save(tmp_path / "recording.json", session_091())
    store = FindingStore(tmp_path / "findings")
    sig = Signature("0-9-1", "t", "hang", None, None, "s")
    stored, _ = store.record(make_finding(sig, broker={}, target_url="amqp://h/", seed=1, run_id="r", clauses=[],
                                          input_hex="00", input_summary="x", transcript=[]))
    written = ["plain.txt", "results.jsonl", "junit.xml", "baseline.json", "recording.json"]
    modes = {name: _mode(tmp_path / name) for name in written}
    modes["finding"] = _mode(store.path(stored["signature_id"]))
    assert modes == dict.fromkeys(modes, expected)
    with open(tmp_path / "reference", "w") as fh:  # what the suite is measured against
        fh.write("x")
    assert _mode(tmp_path / "reference") == expected


def test_a_replaced_file_takes_the_umask_of_the_new_write(tmp_path: Path) -> None:
    path = tmp_path / "f.json"
    old = os.umask(0o022)
    try:
        with atomic_writer(path) as fh:
            fh.write("1")
        assert _mode(path) == 0o644
        os.umask(0o077)
        with atomic_writer(path) as fh:
            fh.write("2")
        assert _mode(path) == 0o600 and path.read_text() == "2"
    finally:
        os.umask(old)


def test_hostile_text_itself_round_trips_through_a_result_record(tmp_path: Path) -> None:
    """The in-process half of item 2: scrub (what the runner applies to every record) makes the
    text writable, and the written line reads back to the same cleaned text."""
    from amqpspec.runner import scrub

    result = Result(case="amqp091/x/y", title="t", section="x", section_title="", clauses=[], protocol="0-9-1",
                    verdict=Verdict.FAILED, close=CloseInfo(text=HOSTILE_TEXT), evidence={HOSTILE_TEXT: [HOSTILE_TEXT]})
    clean = scrub(result)
    with ResultWriter(tmp_path / "r.jsonl") as writer:
        writer.write(clean)
        writer.write(result)  # an uncleaned record is cleaned by the writer itself
    back = list(read_results(tmp_path / "r.jsonl"))
    assert [r.close.text for r in back] == [clean.close.text] * 2
    assert "\\xff" in clean.close.text and "\udcff" not in clean.close.text


def test_baseline_keeps_the_broker_identity_as_valid_unicode(tmp_path: Path) -> None:
    from amqpspec.baseline import load_baseline, write_baseline

    result = Result(case="amqp091/x/y", title="t", section="x", section_title="", clauses=[], protocol="0-9-1",
                    verdict=Verdict.FAILED)
    write_baseline(tmp_path / "b.json", [result], "amqp://h/", {"product": "Hostile" + HOSTILE_TEXT})
    data = json.loads((tmp_path / "b.json").read_bytes())
    data["broker"]["product"].encode("utf-8")  # no lone surrogate left for a strict reader to refuse
    assert "\\xff" in data["broker"]["product"]
    assert load_baseline(tmp_path / "b.json") == {"amqp091/x/y": Verdict.FAILED}
