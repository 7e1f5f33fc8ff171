"""Short, bounded stateful fuzzing runs against real brokers.

They check that the machines run (examples and steps happen, the run ends within its
budget) and that whatever they write is a well-formed finding. They never assert that a
broker has no findings: what a broker does is for the fuzzer to report, not for the test.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amqpspec.fuzz.findings import validate
from amqpspec.fuzz.model_runner import run_stateful

BUDGET = 40.0     # seconds of fuzzing per run (each test stays under a minute)
#: the console script (``python -m amqpspec.cli fuzz`` imports amqpspec.cli twice, as __main__ too)
AMQPSPEC = str(Path(sys.executable).parent / "amqpspec")


def _check_findings(directory: Path, protocol: str, target: str) -> list[dict]:
    records = []
    for path in sorted(directory.glob("*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        assert validate(rec) == [], (path, validate(rec))
        assert rec["signature"]["protocol"] == protocol and rec["signature"]["target"] == target
        assert rec["replay"] == f"amqpspec replay {path} {rec['target_url']}"
        assert rec["rerun"].startswith("amqpspec fuzz ") and "--seed" in rec["rerun"]
        assert all(c.startswith("amqp091:" if protocol == "0-9-1" else "amqp10:") for c in rec["clauses"])
        assert "guest:guest" not in json.dumps(rec)
        records.append(rec)
    return records


@pytest.mark.parametrize("broker", ["rabbitmq", "garagemq"])
def test_stateful_091_runs_and_writes_wellformed_findings(broker, request, tmp_path) -> None:
    b = request.getfixturevalue(broker)
    started = time.monotonic()
    report = run_stateful(b.url, "0-9-1", examples=12, duration=BUDGET, seed=7, findings_dir=str(tmp_path))
    assert time.monotonic() - started < BUDGET + 15
    assert report.examples >= 1 and report.steps >= report.examples
    assert report.stopped in ("examples", "duration", "broker-dead")
    records = _check_findings(tmp_path, "0-9-1", "stateful-0-9-1")
    assert {r["signature_id"] for r in records} == set(report.signatures)


@pytest.mark.parametrize("broker", ["rabbitmq", "proton_broker"])
def test_stateful_10_runs_and_writes_wellformed_findings(broker, request, tmp_path) -> None:
    b = request.getfixturevalue(broker)
    started = time.monotonic()
    report = run_stateful(b.url, "1.0", examples=12, duration=BUDGET, seed=7, findings_dir=str(tmp_path))
    assert time.monotonic() - started < BUDGET + 15
    assert report.examples >= 1 and report.steps >= report.examples
    records = _check_findings(tmp_path, "1.0", "stateful-1.0")
    assert {r["signature_id"] for r in records} == set(report.signatures)


def test_campaign_runs_the_stateful_target_and_replays_its_finding(proton_broker, tmp_path) -> None:
    """`amqpspec fuzz --target stateful-1.0` goes through the campaign (progress, findings
    directory), and a finding it writes replays with the command recorded in it."""
    proc = subprocess.run([AMQPSPEC, "fuzz", proton_broker.url, "--protocol", "1.0",
                           "--target", "stateful-1.0", "--examples", "6", "--seed", "5", "--findings", str(tmp_path)],
                          capture_output=True, text=True, timeout=55)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "executions per target: stateful-1.0 6" in proc.stdout
    records = _check_findings(tmp_path, "1.0", "stateful-1.0")
    assert (proc.returncode == 1) == bool(records)
    if records:
        path = tmp_path / f"{records[0]['signature_id']}.json"
        replay = subprocess.run([AMQPSPEC, "replay", str(path), proton_broker.url],
                                capture_output=True, text=True, timeout=30)
        assert replay.returncode in (0, 1), replay.stderr[-2000:]
        assert "frame(s)" in replay.stdout
