"""`amqpspec record` stays within its bounds under a client that sends a lot (issue 11, item 7).

The proxy runs as `amqpspec record` in a subprocess (its own memory to measure); the upstream
is a local sink that echoes heartbeats (tests/support/hostile_proxy.py), no broker needed.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from amqpspec.capture import transcripts
from amqpspec.capture.proxy import ProxyOptions
from amqpspec.target import Target
from tests.support import hostile, hostile_proxy
from tests.unit.test_capture_proxy import Running

MiB = 1 << 20


def _status(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no {key} for pid {pid}")


class RecordProcess:
    """`python -m amqpspec.capture.cli record` on a free loopback port, its output collected."""

    def __init__(self, upstream_port: int, out: Path, *options: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "amqpspec.capture.cli", "record", "--listen", "127.0.0.1:0",
             "--upstream", f"amqp://127.0.0.1:{upstream_port}/", "--out", str(out), *options],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, stdin=subprocess.DEVNULL)
        self.lines: list[str] = []
        self.port = 0
        ready = threading.Event()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line.rstrip("\n"))
                m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        assert ready.wait(30) and self.port, self.lines

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        self.proc.wait(30)
        time.sleep(0.1)   # the reader thread takes the last lines


@pytest.fixture
def sink() -> Iterator[tuple[hostile.HostileServer, hostile_proxy.Counter]]:
    counter = hostile_proxy.Counter()
    with hostile.HostileServer(hostile_proxy.sink_echoing_heartbeats(counter)) as server:
        yield server, counter


def _await_octets(counter: hostile_proxy.Counter, total: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while counter.octets < total and time.monotonic() < deadline:
        time.sleep(0.05)
    assert counter.octets >= total, (counter.octets, total)


def test_memory_stays_within_max_bytes_for_150_mb(tmp_path: Path, sink) -> None:
    """150 MB through one connection: the proxy's peak RSS grows by less than --max-bytes plus a
    margin (the old proxy held the kept octets, their hex and the JSON text: 619 MB at 64 MiB)."""
    server, counter = sink
    max_bytes = 16 * MiB
    rec = RecordProcess(server.port, tmp_path, "--max-bytes", str(max_bytes), "--max-entries", "1000000")
    try:
        time.sleep(0.3)
        base = _status(rec.proc.pid, "VmRSS")
        sent = hostile_proxy.flood(rec.port, 150 * MiB)
        _await_octets(counter, sent)
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob("*.json")) and time.monotonic() < deadline:   # written whole at the end
            time.sleep(0.05)
        peak = _status(rec.proc.pid, "VmHWM")
    finally:
        rec.stop()
    growth = peak - base
    assert growth < max_bytes + 16 * MiB, f"RSS grew by {growth / MiB:.0f} MiB for --max-bytes {max_bytes / MiB:.0f}"
    [path] = list(tmp_path.glob("*.json"))
    assert not list(tmp_path.glob("*.partial"))
    tf = transcripts.load(path)
    kept = sum(len(transcripts.entry_bytes(e)) for e in tf.entries)
    assert kept <= max_bytes + 64 * len(tf.entries)
    assert "prefix" in (tf.incomplete() or "")
    assert tf.extra["complete"] is True and tf.protocol == "0-9-1"


def test_relay_is_not_stalled_while_recording(tmp_path: Path, sink) -> None:
    """Small round trips through the proxy stay fast while another connection floods it (the old
    proxy rewrote every open transcript on the event loop every --flush-interval)."""
    server, counter = sink
    rec = RecordProcess(server.port, tmp_path, "--flush-interval", "0.2")
    try:
        hostile_proxy.round_trips(rec.port, 0.3)   # warm up
        done = threading.Event()
        times: list[float] = []

        def measure() -> None:
            times.extend(hostile_proxy.round_trips(rec.port, 20.0, done))

        meter = threading.Thread(target=measure)
        meter.start()
        time.sleep(0.2)
        try:
            hostile_proxy.flood(rec.port, 120 * MiB)
            time.sleep(0.5)                         # the flood's transcript is being made whole
        finally:
            done.set()
            meter.join(30)
    finally:
        rec.stop()
    assert len(times) > 20, times
    times.sort()
    assert times[-1] < 0.5 and times[len(times) // 2] < 0.05, \
        f"round trips: median {times[len(times) // 2] * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms"


def test_concurrent_connections_are_bounded(tmp_path: Path, sink) -> None:
    server, _ = sink
    run = Running(ProxyOptions("127.0.0.1", 0, Target.parse(f"amqp://127.0.0.1:{server.port}/"), tmp_path,
                               max_concurrent=2))
    open_ = []
    try:
        for _ in range(2):
            s = socket.create_connection(("127.0.0.1", run.proxy.port), timeout=5)
            s.sendall(hostile_proxy.HEADER)
            open_.append(s)
        time.sleep(0.2)
        with socket.create_connection(("127.0.0.1", run.proxy.port), timeout=5) as extra:
            extra.settimeout(5)
            assert extra.recv(10) == b""                     # closed at once, unrecorded
        assert any("refused client" in line and "--max-concurrent 2" in line for line in run.lines), run.lines
        open_.pop().close()
        deadline = time.monotonic() + 5
        while len(run.proxy.active) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", run.proxy.port), timeout=5) as again:   # room again
            again.settimeout(0.5)
            again.sendall(hostile_proxy.HEARTBEAT)
            with pytest.raises(socket.timeout):
                again.recv(10)                               # relayed, not closed
    finally:
        for s in open_:
            s.close()
        run.stop()
    assert run.proxy.refused == 1
    assert any("1 connection(s) refused" in line for line in run.lines)


def test_spool_of_a_killed_proxy_becomes_an_incomplete_transcript(tmp_path: Path, sink) -> None:
    server, counter = sink
    rec = RecordProcess(server.port, tmp_path, "--flush-interval", "0.1")
    s = socket.create_connection(("127.0.0.1", rec.port), timeout=5)
    try:
        s.sendall(hostile_proxy.HEADER + hostile_proxy.body_frame(1000) * 3)
        _await_octets(counter, 8 + 3 * 1008)
        time.sleep(0.5)
        rec.stop(signal.SIGKILL)
    finally:
        s.close()
    [spool] = list(tmp_path.glob("*.json.partial"))
    assert os.stat(spool).st_mode & 0o077 == 0                # message bodies: the owner's only
    again = RecordProcess(server.port, tmp_path, "--duration", "0.5")
    again.proc.wait(30)
    time.sleep(0.1)
    [path] = list(tmp_path.glob("*.json"))
    assert not spool.exists() and any("recovered" in line for line in again.lines), again.lines
    tf = transcripts.load(path)
    assert tf.extra["complete"] is False
    assert sum(1 for e in tf.entries if e["dir"] == "send") == 4  # header + 3 body frames
    assert "interrupted" in tf.entries[-1]["summary"]


def test_a_left_over_spool_with_a_deeply_nested_line_is_recovered_without_a_traceback(tmp_path: Path) -> None:
    """A spool is a file like any other the tool reads: a crafted line nested 100,000 deep is passed
    over (it used to reach json.loads and end `record` in a RecursionError)."""
    from amqpspec.capture import spool as spool_mod

    left = tmp_path / f"c1.json{spool_mod.SUFFIX}"
    good = {"t": 0.0, "dir": "send", "conn": 1, "summary": "protocol header", "hex": "414d515000000901"}
    left.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n" + json.dumps(good).encode() + b"\n")
    made = spool_mod.recover(tmp_path)
    assert [p.name for p in made] == ["c1.json"]
    entries = json.loads(made[0].read_text())["entries"]
    assert entries[0]["summary"] == "protocol header"
