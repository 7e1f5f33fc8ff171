"""A conformance failure from ``amqpspec run --json`` replays, exports to pcap, and fails where it should."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest

CASE_091 = "amqp091/4.2.3/heartbeat-nonzero-channel"   # RabbitMQ answers 505 where 501/503 is expected
CASE_10 = "amqp10/2.7.1/second-open"


def run(*args: str, module: str = "amqpspec.capture.cli", timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def results(rabbitmq, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("results")
    path = out / "results.jsonl"
    for protocol, case in (("0-9-1", CASE_091), ("1.0", CASE_10)):
        part = out / f"{protocol}.jsonl"
        proc = run("run", rabbitmq.url, "--protocol", protocol, "--case", case, "--json", str(part), "--seed", "5",
                   module="amqpspec.cli")
        assert proc.returncode in (0, 1), proc.stderr
        with open(path, "a") as fh:
            fh.write(part.read_text())
    return path


def test_results_hold_a_transcript_to_replay(results) -> None:
    records = [json.loads(line) for line in results.read_text().splitlines()]
    assert {r["case"] for r in records} == {CASE_091, CASE_10}
    assert all(r["transcript"] and r["replay"] for r in records)


@pytest.mark.parametrize("case", [CASE_091, CASE_10])
def test_failure_record_replays_the_same(results, rabbitmq, case) -> None:
    proc = run("replay", str(results), rabbitmq.url, "--case", case)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SAME:" in proc.stdout and f"result {case}" in proc.stdout


def test_several_records_need_a_case(results, rabbitmq) -> None:
    proc = run("replay", str(results), rabbitmq.url)
    assert proc.returncode == 2 and "--case" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_unreachable_broker_is_exit_2(results) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = run("replay", str(results), f"amqp://guest:guest@127.0.0.1:{port}/", "--case", CASE_091)
    assert proc.returncode == 2 and "cannot connect" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_wrong_password_diverges_at_the_login(results, rabbitmq) -> None:
    parts = urllib.parse.urlsplit(rabbitmq.url)
    wrong = urllib.parse.urlunsplit(parts._replace(netloc=f"guest:wrong-pass@{parts.hostname}:{parts.port}"))
    proc = run("replay", str(results), wrong, "--case", CASE_091, "--answer-timeout", "0.5")
    assert proc.returncode == 1
    assert "DIVERGENCE" in proc.stdout and "connection.tune" in proc.stdout and "wrong-pass" not in proc.stdout


def test_failure_record_exports_to_pcap(results, tmp_path) -> None:
    pcap = tmp_path / "case.pcap"
    proc = run("capture", "export", str(results), "--case", CASE_091, "--out", str(pcap))
    assert proc.returncode == 0, proc.stderr
    show = run("capture", "show", str(pcap))
    assert show.returncode == 0 and "connection.close(reply-code=" in show.stdout
