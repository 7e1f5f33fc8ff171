"""Every file that holds a transcript loads; everything else is a one-line usage error."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from amqpspec.capture import transcripts
from amqpspec.capture.transcripts import (
    TranscriptFile,
    close_event,
    incomplete,
    load,
    replay_command,
    save,
)
from amqpspec.errors import UsageError
from tests.unit.test_capture_support import PASSWORD, session_091, session_10


def _record(case: str, tf: TranscriptFile, verdict: str = "failed") -> dict:
    return {"case": case, "title": "t", "section": "1", "section_title": "", "clauses": [], "protocol": tf.protocol,
            "verdict": verdict, "reason": "", "close": {}, "target": "amqp://guest@127.0.0.1:5672/", "broker": {},
            "duration_s": 0.1, "seed": 1, "evidence": {}, "transcript": tf.entries,
            "replay": f"amqpspec run X --case {case}", "started_at": "2024-01-01T00:00:00Z", "schema": 1}


def test_transcript_file_round_trip_is_atomic_and_scrubbed(tmp_path: Path) -> None:
    tf = session_091()
    tf.extra["client"] = "127.0.0.1:1234"
    path = tmp_path / "sub" / "t.json"
    save(path, tf)
    assert [p.name for p in path.parent.iterdir()] == ["t.json"]  # no temporary file left behind
    doc = json.loads(path.read_text())
    assert doc["schema"] == 1 and doc["kind"] == "transcript" and doc["protocol"] == "0-9-1"
    assert doc["client"] == "127.0.0.1:1234"
    back = load(path)
    assert back.entries == tf.entries and back.protocol == "0-9-1" and back.upstream == tf.upstream
    assert PASSWORD not in path.read_text()


def test_result_file_needs_case_when_it_holds_several(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    lines = [json.dumps(_record("a/1", session_091(), "passed")), json.dumps(_record("a/2", session_10()))]
    path.write_text("\n".join(lines) + "\n{\"truncated\": ")  # a killed run's last line
    with pytest.raises(UsageError, match=r"--case ID.*a/2"):
        load(path)
    tf = load(path, "a/2")
    assert tf.protocol == "1.0" and tf.case == "a/2" and tf.source == "result a/2"
    assert tf.replay == "amqpspec run X --case a/2"
    with pytest.raises(UsageError, match="no result record for case"):
        load(path, "a/3")


def test_single_record_and_finding(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(_record("a/1", session_091())))
    assert load(one).case == "a/1"
    finding = {"schema": 1, "kind": "finding",
               "signature": {"protocol": "1.0", "target": "frame", "violation": "hang", "code": None,
                             "condition": None, "state": "after-open"},
               "signature_id": "abc123", "broker": {}, "target_url": "amqp://guest@h:5672/", "seed": 1,
               "first_seen": "2024-01-01T00:00:00Z", "last_seen": "", "count": 1, "clauses": [],
               "input": {"hex": "", "summary": ""}, "transcript": session_10().entries,
               "replay": "amqpspec replay abc123.json URL", "run_id": "r"}
    path = tmp_path / "abc123.json"
    path.write_text(json.dumps(finding))
    tf = load(path)
    assert tf.protocol == "1.0" and tf.source == "finding abc123" and tf.replay.startswith("amqpspec replay")


@pytest.mark.parametrize("content,message", [
    ("{\"kind\": \"transcript\", \"schema\": 7, \"entries\": []}", "schema 7"),
    ("{\"hello\": 1}", "not a transcript"),
    ("not json\nat all", "not JSON"),
    ("{\"kind\": \"transcript\", \"schema\": 1, \"entries\": [{\"dir\": \"sideways\"}]}", "entry #1"),
    ("{\"kind\": \"transcript\", \"schema\": 1, \"entries\": [{\"dir\": \"send\", \"hex\": \"zz\"}]}", "bad hex"),
    ("{\"kind\": \"transcript\", \"schema\": 1, \"entries\": [{\"dir\": \"send\", \"hex\": \"0102\"}]}", "protocol"),
])
def test_bad_files_are_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=message) as info:
        load(path)
    assert "\n" not in str(info.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file"):
        load(tmp_path / "nope.json")
    with pytest.raises(UsageError, match="directory"):
        load(tmp_path)


def test_result_without_frames_sent_cannot_be_replayed(tmp_path: Path) -> None:
    rec = _record("pika/1", session_091())
    rec["transcript"] = [{"t": 0.0, "dir": "event", "conn": 1, "summary": "[pika] connected", "hex": ""}]
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    with pytest.raises(UsageError, match="nothing to replay"):
        load(path)


def test_events_and_incompleteness() -> None:
    assert close_event({"dir": "event", "summary": "socket closed (rst: reset by peer)"}) == ("broker", "rst")
    assert close_event({"dir": "event", "summary": "client closed (fin)"}) == ("client", "fin")
    assert close_event({"dir": "event", "summary": "connected to h:1"}) is None
    assert incomplete([{"dir": "event", "summary": "12 further entries not recorded (limit 5000)"}])
    assert incomplete([{"dir": "recv", "summary": "x [only the first 64 of 900 octets kept]", "t": 1}])
    assert incomplete(session_091().entries) is None
    assert transcripts.guess_protocol(session_10().entries) == "1.0"


def test_replay_command_quotes() -> None:
    assert replay_command("my file.jsonl", "amqp://guest@h:5672/", case="a/b") == \
        "amqpspec replay 'my file.jsonl' amqp://guest@h:5672/ --case a/b"
