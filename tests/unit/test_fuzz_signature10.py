"""Finding signatures carry the verdict's clauses: two causes with the same target, violation,
code and state but different clauses are two findings; files written before keep loading."""
from __future__ import annotations

import json
from pathlib import Path

from amqpspec.fuzz.findings import FindingStore, Signature, make_finding, signature_id, validate


def _finding(sig: Signature) -> dict:
    return make_finding(sig, broker={"product": "p", "version": "1", "platform": ""},
                        target_url="amqp://127.0.0.1:5674/", seed=1, run_id="r", clauses=list(sig.clauses),
                        input_hex="00", input_summary="x", transcript=[])


def test_different_clauses_make_different_signatures() -> None:
    a = Signature("1.0", "attach", "hang", None, None, "link", ("amqp10:2.7.3/3",))
    b = Signature("1.0", "attach", "hang", None, None, "link", ("amqp10:2.4.3/1",))
    assert a.id != b.id
    # the order the verdict lists them in does not matter
    assert Signature("1.0", "t", "hang", None, None, "s", ("b", "a")).id == Signature("1.0", "t", "hang", None, None,
                                                                                     "s", ["a", "b", "a"]).id


def test_two_causes_are_stored_apart(tmp_path: Path) -> None:
    store = FindingStore(tmp_path)
    for clause in ("amqp10:2.7.3/3", "amqp10:2.4.3/1"):
        store.record(_finding(Signature("1.0", "attach", "hang", None, None, "link", (clause,))))
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2
    for path in files:
        rec = json.loads(path.read_text())
        assert validate(rec) == []
        assert Signature(**rec["signature"]).id == rec["signature_id"] == path.stem


def test_a_signature_without_clauses_keeps_its_old_id_and_file(tmp_path: Path) -> None:
    old_sig = {"protocol": "1.0", "target": "begin", "violation": "hang", "code": None, "condition": None,
               "state": "session"}
    # the id as it was computed before clauses were part of signatures
    import hashlib
    old_id = hashlib.sha256(json.dumps(old_sig, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]
    assert signature_id(old_sig) == old_id == Signature(**old_sig).id
    rec = _finding(Signature(**old_sig))
    assert "clauses" not in rec["signature"]
    store = FindingStore(tmp_path)
    stored, _ = store.record(rec)
    assert validate(stored) == []
    assert set(store.known()) == {old_id}
    stored, new = store.record(_finding(Signature(**old_sig)))
    assert not new and stored["count"] == 2          # merges as before


def test_bad_clauses_in_a_file_are_a_problem_not_a_crash() -> None:
    rec = _finding(Signature("1.0", "t", "hang", None, None, "s", ("amqp10:2.2/1",)))
    rec["signature"]["clauses"] = 5
    assert any("clauses" in p for p in validate(rec))
    rec["signature"]["clauses"] = ["amqp10:2.2/1"]
    rec["signature"]["extra"] = 1
    assert any("signature keys" in p for p in validate(rec))
