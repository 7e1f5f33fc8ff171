"""`amqpspec client --driver pika` end to end on a focused set of cases (quick: < 30 s).

Checks the contract of a client run, not pika's verdicts (those belong to pika's version):
the JSON-lines keys of every record plus role/driver/library/library_version, the JUnit file,
exit codes, the replay command, and that the per-run password given to the driver appears
nowhere. Also `amqpspec serve` with a client it does not launch, and the usage errors.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli_serve import amqpspec, serve_one_case

REQUIRED_KEYS = {"case", "clauses", "protocol", "verdict", "close", "target", "broker", "duration_s",
                 "seed", "evidence", "transcript", "role", "driver", "library", "library_version"}
FOCUS = ["amqp091/4.2.2/client-sends-protocol-header", "amqp091/2.3.7/client-answers-channel-close",
         "amqp091/2.3.7/client-answers-connection-close", "amqp091/domain.delivery-tag/client-acks-on-delivery-channel",
         "amqp091/4.2.3/client-respects-frame-max", "amqp091/connection.start-ok/client-properties-fields"]

pika = pytest.importorskip("pika")


def test_client_run_with_pika(tmp_path: Path) -> None:
    out, junit = tmp_path / "r.jsonl", tmp_path / "r.xml"
    args = ["client", "--driver", "pika", "--json", str(out), "--junit", str(junit), "--seed", "7"]
    for c in FOCUS:
        args += ["--case", c]
    t0 = time.monotonic()
    done = amqpspec(*args)
    took = time.monotonic() - t0
    assert done.returncode in (0, 1), done.stderr
    assert took < 30
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["case"] for r in records) == sorted(FOCUS)
    for r in records:
        assert REQUIRED_KEYS <= set(r), set(REQUIRED_KEYS) - set(r)
        assert r["role"] == "client" and r["driver"] == "pika" and r["library"] == "pika"
        assert r["library_version"] == pika.__version__
        assert r["verdict"] in {"passed", "failed", "warning", "informational", "skipped"}, r["reason"]
        assert r["replay"].startswith("amqpspec client --protocol 0-9-1 --driver pika --case ")
        assert r["transcript"] and r["close"]["who"] in ("client", "none")
    assert junit.read_text().startswith("<?xml")
    # the throwaway password of the URL the driver got shows up in no output; the URL does not either
    everything = out.read_text() + done.stdout + done.stderr
    assert "amqp://amqpspec:" not in everything
    failed = any(r["verdict"] == "failed" for r in records)
    assert done.returncode == (1 if failed else 0)


def test_serve_mode_judges_a_client_it_did_not_launch(tmp_path: Path) -> None:
    record = serve_one_case(tmp_path / "serve.jsonl", 5990, ["--case", "amqp091/connection.start-ok/client-properties-fields"],
                            "pika")
    assert record["verdict"] == "passed" and record["role"] == "client" and record["driver"] == "external"
    assert record["replay"].startswith("amqpspec serve ")


@pytest.mark.parametrize("args,message", [
    (["client"], "exactly one of --driver"),
    (["client", "--driver", "no-such-driver"], "no driver"),
    (["client", "--driver", "../etc"], "bad driver name"),
    (["client", "--driver-cmd", "python3 x.py"], "{url} and {workload}"),
    (["client", "--driver", "pika", "--listen", "nonsense"], "HOST:PORT"),
    (["client", "--driver", "pika", "--case", "nothing-matches"], "no client case matches"),
])
def test_usage_errors_are_one_line(args: list[str], message: str) -> None:
    done = amqpspec(*args)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1


def test_driver_whose_library_is_missing_is_skipped_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "nolib").mkdir()
    (tmp_path / "nolib" / "driver.toml").write_text(
        'name = "nolib"\nprotocol = "0-9-1"\nlibrary = "nolib"\n'
        'check = "echo no module named nolib >&2; exit 1"\ncommand = ["false", "{url}", "{workload}"]\n')
    out = tmp_path / "r.jsonl"
    done = subprocess.run([sys.executable, "-m", "amqpspec.cli", "client", "--driver", "nolib", "--case", "*4.2.2*",
                           "--json", str(out)], capture_output=True, text=True, timeout=60,
                          env={**__import__("os").environ, "AMQPSPEC_DRIVERS": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records and all(r["verdict"] == "skipped" and "no module named nolib" in r["reason"] for r in records)
