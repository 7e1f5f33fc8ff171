"""`amqpspec client --protocol 1.0 --driver qpid-proton-python` end to end on a focused set of
cases (quick: < 30 s).

Checks the contract of a 1.0 client run, not proton's verdicts (those belong to proton's
version): every record's keys plus role/driver/library/library_version, no undecided case,
the replay command, exit codes, and that the per-run password the driver got appears nowhere.
"""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.cli_serve import amqpspec, serve_one_case

REQUIRED_KEYS = {"case", "clauses", "protocol", "verdict", "close", "target", "broker", "duration_s",
                 "seed", "evidence", "transcript", "role", "driver", "library", "library_version"}
FOCUS = ["amqp10/2.2/client-sends-header-at-once", "amqp10/5.3.3.2/client-uses-strongest-mechanism",
         "amqp10/2.4.3/client-answers-close", "amqp10/2.7.1/client-respects-max-frame-size",
         "amqp10/2.7.5/client-receiver-settles-first",
         "amqp10/3.5.3/client-dynamic-source-without-address"]

proton = pytest.importorskip("proton")


def test_client_run_with_qpid_proton_python(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["client", "--protocol", "1.0", "--driver", "qpid-proton-python", "--json", str(out), "--seed", "7"]
    for c in FOCUS:
        args += ["--case", c]
    t0 = time.monotonic()
    done = amqpspec(*args)
    took = time.monotonic() - t0
    assert done.returncode in (0, 1), done.stderr
    assert took < 30
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["case"] for r in records) == sorted(FOCUS)
    version = ".".join(map(str, proton.VERSION))
    for r in records:
        assert REQUIRED_KEYS <= set(r), set(REQUIRED_KEYS) - set(r)
        assert r["role"] == "client" and r["driver"] == "qpid-proton-python" and r["protocol"] == "1.0"
        assert r["library"] == "python-qpid-proton" and r["library_version"] == version
        assert r["verdict"] in {"passed", "failed", "warning", "informational", "skipped"}, r["reason"]
        assert r["replay"].startswith("amqpspec client --protocol 1.0 --driver qpid-proton-python --case ")
        assert r["transcript"]
    everything = out.read_text() + done.stdout + done.stderr
    assert "amqp://amqpspec:" not in everything
    failed = any(r["verdict"] == "failed" for r in records)
    assert done.returncode == (1 if failed else 0)


def test_serve_mode_judges_a_1_0_client_it_did_not_launch(tmp_path: Path) -> None:
    record = serve_one_case(tmp_path / "serve.jsonl", 5980,
                            ["--protocol", "1.0", "--case", "amqp10/2.4.3/client-closes-with-close"], "qpid-proton-python")
    assert record["verdict"] == "passed" and record["role"] == "client" and record["driver"] == "external"
    assert record["protocol"] == "1.0" and record["replay"].startswith("amqpspec serve --protocol 1.0 ")


def test_protocol_mismatch_is_a_usage_error() -> None:
    done = amqpspec("client", "--protocol", "0-9-1", "--driver", "qpid-proton-python")
    assert done.returncode == 2 and "speaks AMQP 1.0" in (done.stdout + done.stderr)
