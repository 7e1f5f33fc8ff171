"""The warm Spark with a real Spark: reports run in it give the bundle an in-process Spark
gives, one service serves report after report, a client that goes away leaves nothing behind.

Each test has its own private folder (XDG_RUNTIME_DIR) and stops its service at the end; the
services' idle timeout is short as well, so none can outlive a failed test for long.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("pyspark")

DATA = Path(__file__).resolve().parents[1] / "data" / "clients" / "broker-rabbitmq-091.jsonl"
VOLATILE = {"generated_at", "spark"}
TIMEOUT = 300


def _cli(env: dict[str, str], *args: str, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.fixture()
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    e = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "AMQPSPEC_KEEP_WARM_MINUTES": "3"}
    e.pop("AMQPSPEC_KEEP_WARM", None)
    yield e
    _cli(e, "spark", "stop", timeout=60)


def _status(env: dict[str, str]) -> str:
    return _cli(env, "spark", "status", timeout=30).stdout.strip()


def _shown(stdout: str, out: Path) -> str:
    return re.sub(r" in [0-9.]+s ", " in Ns ", stdout.replace(str(out), "OUT"))


def _bundle(out: Path) -> dict[str, object]:
    data = json.loads((out / "bundle.json").read_text())
    return {k: v for k, v in data.items() if k not in VOLATILE}


def test_reports_in_the_warm_spark_match_the_in_process_ones(env: dict[str, str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from amqpspec.reports.warm import channel, client

    # what `amqpspec run --json` does at its end: a service warmed on the bundled sample
    for name in ("XDG_RUNTIME_DIR", "AMQPSPEC_KEEP_WARM_MINUTES"):
        monkeypatch.setenv(name, env[name])
    assert "warming up" in (client.prewarm() or "")
    deadline = time.monotonic() + 30
    while client._pid_of(channel.place()) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert client.prewarm() is None      # one is already starting: not a second
    first = _cli(env, "report", str(DATA), "--out", str(tmp_path / "a"), "--keep-warm", "--no-html")
    assert first.returncode == 0, first.stderr
    assert "stage: wait for the warm Spark" in first.stderr or "stage: start the warm Spark" not in first.stderr
    assert "start the warm Spark" not in first.stderr
    status = _status(env)
    assert "1 reports" in status, status
    second = _cli(env, "report", str(DATA), "--out", str(tmp_path / "b"), "--keep-warm")
    assert second.returncode == 0, second.stderr
    assert "start the warm Spark" not in second.stderr and "report:" in second.stdout
    assert (tmp_path / "b" / "index.html").exists()
    assert "2 reports" in _status(env) and status.split(",")[0] in _status(env)   # the same pid
    here = _cli(env, "report", str(DATA), "--out", str(tmp_path / "c"), "--no-keep-warm", "--no-html")
    assert here.returncode == 0, here.stderr
    assert "2 reports" in _status(env)          # --no-keep-warm: not sent to the service
    assert _bundle(tmp_path / "a") == _bundle(tmp_path / "c") == _bundle(tmp_path / "b")
    assert _shown(first.stdout, tmp_path / "a") == _shown(here.stdout, tmp_path / "c")   # the same summary
    # a usage error inside the service is the CLI's one line and exit code 2
    bad = _cli(env, "report", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "d"), "--keep-warm")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    assert _cli(env, "spark", "stop", timeout=60).stdout.strip() == "stopped"
    assert _status(env) == "no warm Spark running"


def test_a_client_that_goes_away_ends_its_report_and_the_service(env: dict[str, str], tmp_path: Path) -> None:
    assert _cli(env, "report", str(DATA), "--out", str(tmp_path / "a"), "--keep-warm", "--no-html").returncode == 0
    out = tmp_path / "b"
    proc = subprocess.Popen([sys.executable, "-m", "amqpspec.cli", "report", str(DATA), "--out", str(out),
                             "--keep-warm"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            stdin=subprocess.DEVNULL)
    assert proc.stderr is not None
    deadline = time.monotonic() + TIMEOUT
    for line in proc.stderr:   # the service is running the report: it has said its first stage
        if line.startswith("stage: start Spark") or time.monotonic() > deadline:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _status(env) != "no warm Spark running":
        time.sleep(0.5)
    assert _status(env) == "no warm Spark running"   # a half-cancelled Spark is not kept
    assert not list(out.glob(".dataset-*"))          # the interrupted report cleaned up after itself
    assert not (out / "bundle.json").exists()
