"""The finding file format (fuzz/findings.py): schema, stable signature ids, no password
anywhere, and repeated findings merged into one file (count, last_seen)."""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from amqpspec.fuzz.findings import (
    KEYS, SIGNATURE_KEYS, FindingStore, Signature, make_finding, replay_command, signature_id, validate,
)
from amqpspec.fuzz.stimulus import Credentials
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import MethodFrame, spec

PASSWORD = "s3cret-Pa55word"
TARGET = Target.parse(f"amqp://fuzzer:{PASSWORD}@127.0.0.1:5672/")   # registers the password for scrubbing
SIG = Signature("0-9-1", "frame-header", "wrong-code", 501, None, "after-open")
BROKER = {"product": "RabbitMQ", "version": "3.10.8", "platform": "Erlang/OTP 25"}


def finding(sig: Signature = SIG, *, seen: str = "2026-01-01T00:00:00.000Z", transcript: list[dict[str, Any]] | None = None,
            input_hex: str = "00000100000000ce") -> dict[str, Any]:
    return make_finding(sig, broker=BROKER, target_url=TARGET.url(), seed=7, run_id="ab" * 16,
                        clauses=["amqp091:4.2.3/2", "amqp091:4.2.3/2"], input_hex=input_hex,
                        input_summary="ch=1 frame type=0 (0 octets: )", transcript=transcript or [], seen=seen)


def test_signature_id_is_stable() -> None:
    """Signature ids name finding files across runs and versions: pinned to a known value, and
    independent of key order."""
    assert SIG.id == signature_id(SIG.to_json()) == signature_id(dict(reversed(list(SIG.to_json().items()))))
    assert SIG.id == "b82a088022a956b7"   # the id of this signature in every campaign so far
    assert len(SIG.id) == 16 and int(SIG.id, 16) >= 0
    other = Signature("0-9-1", "frame-header", "wrong-code", 505, None, "after-open")
    assert other.id != SIG.id
    assert Signature("1.0", "frame-header", "wrong-code", 501, None, "after-open").id != SIG.id


def test_a_new_finding_is_valid_and_complete(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    rec, new = store.record(finding())
    assert new
    path = tmp_path / f"{SIG.id}.json"
    on_disk = json.loads(path.read_text())
    assert validate(on_disk) == []
    assert set(KEYS) <= set(on_disk) and set(on_disk["signature"]) == set(SIGNATURE_KEYS)
    assert on_disk["schema"] == 1 and on_disk["kind"] == "finding"
    assert on_disk["clauses"] == ["amqp091:4.2.3/2"]   # deduplicated, order kept
    assert on_disk["replay"] == replay_command(path, TARGET.url())
    assert on_disk["replay"].startswith("amqpspec replay ") and str(path) in on_disk["replay"]
    assert on_disk["count"] == 1 and on_disk["first_seen"] == on_disk["last_seen"]


@pytest.mark.parametrize("break_it, problem", [
    (lambda r: r.pop("transcript"), "missing key"),
    (lambda r: r.update(schema=2), "schema"),
    (lambda r: r["signature"].update(violation="oops"), "signature.violation"),
    (lambda r: r["signature"].update(code=501.5), "signature.code"),
    (lambda r: r.update(signature_id="0" * 16), "signature_id does not match"),
    (lambda r: r.update(target_url=f"amqp://fuzzer:{PASSWORD}@127.0.0.1:5672/"), "password"),
    (lambda r: r.update(count=0), "count"),
    (lambda r: r.update(first_seen="yesterday"), "first_seen"),
    (lambda r: r["input"].update(hex="xyz"), "input.hex"),
    (lambda r: r.update(transcript=[{"t": 0}]), "transcript entry"),
    (lambda r: r.update(replay="rm -rf /"), "replay"),
])
def test_validate_names_what_is_wrong(break_it: Any, problem: str) -> None:
    rec = finding()
    rec["replay"] = "amqpspec replay x.json amqp://fuzzer@127.0.0.1:5672/"
    assert validate(rec) == []
    break_it(rec)
    assert any(problem in p for p in validate(rec)), validate(rec)


def test_no_password_anywhere(tmp_path: Path) -> None:
    """The URL is stored without the password; a transcript that carried it (as text or as hex,
    which a bug upstream could leak) is scrubbed before the file is written; the SASL response
    the fuzzer sends stands as asterisks in the recorded octets."""
    assert PASSWORD not in TARGET.url()
    t = Transcript()
    response = Credentials(len(PASSWORD) + 8)
    frame = MethodFrame(0, spec.ConnectionStartOk({}, "PLAIN", response, "en_US"))
    t.add("send", frame.encode(), f"start-ok response={PASSWORD}", 1)
    leaked = [*t.to_json(), {"t": 0.1, "dir": "event", "conn": 1, "summary": f"oops {PASSWORD}",
                             "hex": PASSWORD.encode().hex()}]
    store = FindingStore(tmp_path)
    store.record(finding(transcript=leaked, input_hex=frame.encode().hex()))
    text = (tmp_path / f"{SIG.id}.json").read_text()
    assert PASSWORD not in text and PASSWORD.encode().hex() not in text
    assert b"*" * len(response) in bytes.fromhex(json.loads(text)["input"]["hex"])


def test_repeated_findings_merge(tmp_path: Path) -> None:
    """Finding a signature again adds to count and moves last_seen; the first (minimal) input,
    transcript, first_seen and run stay."""
    store = FindingStore(tmp_path)
    first, _ = store.record(finding(seen="2026-01-01T00:00:00.000Z"))
    again = finding(seen="2026-01-02T00:00:00.000Z", input_hex="00000100000001ffce")
    again["count"] = 3
    again["run_id"] = "cd" * 16
    merged, new = store.record(again)
    assert not new
    assert merged["count"] == 4
    assert merged["first_seen"] == "2026-01-01T00:00:00.000Z" and merged["last_seen"] == "2026-01-02T00:00:00.000Z"
    assert merged["input"]["hex"] == "00000100000000ce" and merged["run_id"] == "ab" * 16
    assert validate(json.loads((tmp_path / f"{SIG.id}.json").read_text())) == []
    hit = store.hit(SIG.id, 2, "2026-01-03T00:00:00.000Z")
    assert hit is not None and hit["count"] == 6 and hit["last_seen"] == "2026-01-03T00:00:00.000Z"
    assert store.hit("f" * 16) is None
    assert list(store.known()) == [SIG.id]
    assert sorted(p.name for p in tmp_path.glob("*.json")) == [f"{SIG.id}.json"]


def _record_many(directory: str, n: int) -> None:
    store = FindingStore(directory)
    for _ in range(n):
        store.record(finding())


def test_concurrent_workers_lose_no_count(tmp_path: Path) -> None:
    """Workers are processes sharing the directory: the lock keeps every hit and every file whole."""
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_record_many, args=(str(tmp_path), 15)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert all(p.exitcode == 0 for p in procs)
    rec = json.loads((tmp_path / f"{SIG.id}.json").read_text())
    assert rec["count"] == 45 and validate(rec) == []
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind (amqpspec.atomicfile names)


def test_unreadable_files_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "other.json").write_text(json.dumps({"kind": "result"}))
    store = FindingStore(tmp_path)
    assert store.known() == {}
    store.record(finding())
    assert list(store.known()) == [SIG.id]


def test_text_with_lone_surrogates_is_stored_and_reads_back(tmp_path: Path) -> None:
    """regression (garagemq campaign crash, UnicodeEncodeError "surrogates not allowed"): a
    stimulus summary holding octets of invalid UTF-8 (carried as lone surrogates by the codec's
    surrogateescape) must not crash the store; the file stays valid JSON, valid Unicode (other
    tools read it) and ASCII, with those octets shown as \\xNN (input.hex keeps them exactly)."""
    summary = "ch=0 connection.start-ok(locale='" + b"\xf9\xbe2P".decode("utf-8", "surrogateescape") + "')"
    rec = finding()
    rec["input"]["summary"] = summary
    store = FindingStore(tmp_path)
    store.record(rec)
    raw = (tmp_path / f"{SIG.id}.json").read_bytes()
    assert raw.isascii()
    back = json.loads(raw)
    assert back["input"]["summary"] == "ch=0 connection.start-ok(locale='\\xf9\\xbe2P')"
    assert validate(back) == []
    store.record(finding())  # merging into it works too
    assert json.loads((tmp_path / f"{SIG.id}.json").read_text(encoding="utf-8"))["count"] == 2
