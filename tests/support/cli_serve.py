"""Runs `amqpspec serve` for one case with a repository driver as the client it did not launch,
for the client-role integration tests (pika for 0-9-1, qpid-proton-python for 1.0)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def amqpspec(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`amqpspec ARGS...` in a subprocess, with no stdin (a prompt would hang the test)."""
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def serve_one_case(out: Path, port_base: int, serve_args: list[str], driver: str) -> dict[str, Any]:
    """Starts `amqpspec serve --listen 127.0.0.1:PORT SERVE_ARGS --json OUT` (PORT picked from
    port_base..port_base+8 so reruns rarely meet a port in TIME_WAIT), connects the driver once
    with its `connect` workload and returns the first JSON record; asserts serve exited 0."""
    port = port_base + (int(time.time()) % 9)
    proc = subprocess.Popen([sys.executable, "-m", "amqpspec.cli", "serve", "--listen", f"127.0.0.1:{port}",
                             *serve_args, "--json", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # printed once the peer listens
        assert first.startswith("serving 1 cases on amqp://127.0.0.1:"), first
        subprocess.run([sys.executable, str(REPO / "drivers" / driver / "driver.py"),
                        f"amqp://guest:guest@127.0.0.1:{port}/", "connect"], capture_output=True, timeout=20)
        stdout, stderr = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0, first + stdout + stderr
    return json.loads(out.read_text().splitlines()[0])
