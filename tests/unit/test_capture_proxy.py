"""The recording proxy without a broker: loopback only, secrets masked, bounded, never stuck.

The upstream here is a hostile server (tests/support/hostile.py) that only reads: the proxy's
job is to pipe and record, whatever is on the other side.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest

from amqpspec.capture.codec import sasl_plain
from amqpspec.capture.proxy import Proxy, ProxyOptions, parse_listen
from amqpspec.errors import UsageError
from amqpspec.target import Target
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader, spec
from tests.support import hostile
from tests.unit.test_capture_support import PASSWORD


@pytest.mark.parametrize("text,expected", [("127.0.0.1:0", ("127.0.0.1", 0)), ("[::1]:5673", ("::1", 5673)),
                                           ("localhost:1", ("localhost", 1)), ("127.0.0.2:80", ("127.0.0.2", 80))])
def test_listen_addresses_on_loopback(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize("text,message", [("0.0.0.0:5672", "loopback"), ("10.0.0.1:1", "loopback"),
                                          ("example.com:5672", "loopback"), ("5672", "HOST:PORT"),
                                          ("127.0.0.1:99999", "0..65535"), ("127.0.0.1:x", "number")])
def test_other_listen_addresses_are_refused(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_listen(text)


class Running:
    def __init__(self, opts: ProxyOptions) -> None:
        self.lines: list[str] = []
        self.proxy = Proxy(opts, self.lines.append)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        assert self.proxy.ready.wait(5), self.lines

    def _run(self) -> None:
        import asyncio

        asyncio.run(self.proxy.serve())

    def stop(self) -> None:
        self.proxy.stop()
        self.thread.join(10)
        assert not self.thread.is_alive()


@pytest.fixture
def upstream() -> Iterator[hostile.HostileServer]:
    with hostile.HostileServer(hostile.silent) as server:
        yield server


def _opts(tmp_path: Path, upstream_url: str, **kw) -> ProxyOptions:
    return ProxyOptions("127.0.0.1", 0, Target.parse(upstream_url.replace("guest:guest@", "")), tmp_path, **kw)


def _client_session(port: int, extra: bytes = b"") -> None:
    start_ok = MethodFrame(0, spec.ConnectionStartOk({"product": "t", "note": f"my password is {PASSWORD}"}, "PLAIN",
                                                     sasl_plain("alice", PASSWORD), "en_US"))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(ProtocolHeader().encode() + start_ok.encode() + extra)
        time.sleep(0.2)


def test_recording_masks_and_scrubs_the_password(tmp_path: Path, upstream) -> None:
    run = Running(_opts(tmp_path, upstream.url))
    try:
        _client_session(run.proxy.port, b"\x01\x00\x00garbage that is no frame")
        deadline = time.monotonic() + 5
        while not run.proxy.written and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        run.stop()
    [path] = run.proxy.written
    text = path.read_text()
    assert PASSWORD not in text and PASSWORD.encode().hex() not in text
    assert all(PASSWORD not in line for line in run.lines)
    doc = json.loads(text)
    assert doc["kind"] == "transcript" and doc["protocol"] == "0-9-1" and doc["complete"] is True
    assert doc["upstream"].startswith("amqp://") and "@" in doc["upstream"]
    sends = [e for e in doc["entries"] if e["dir"] == "send"]
    assert sends[1]["redacted"] is True and "connection.start-ok" in sends[1]["summary"]
    assert "undecodable" in sends[2]["summary"]          # garbage is kept, as octets
    summaries = [e["summary"] for e in doc["entries"] if e["dir"] == "event"]
    assert summaries[0].startswith("connected to") and "client closed (fin)" in summaries


def test_open_connections_are_written_periodically_and_on_stop(tmp_path: Path, upstream) -> None:
    run = Running(_opts(tmp_path, upstream.url, flush_interval=0.2))
    s = socket.create_connection(("127.0.0.1", run.proxy.port), timeout=5)
    try:
        s.sendall(ProtocolHeader().encode())
        deadline = time.monotonic() + 5
        spools: list[Path] = []
        while not spools and time.monotonic() < deadline:   # the open connection's entries, appended to its spool
            spools = [p for p in tmp_path.glob("*.json.partial") if b"protocol" in p.read_bytes()]
            time.sleep(0.05)
        assert spools and not list(tmp_path.glob("*.json"))
    finally:
        run.stop()
        s.close()
    files = list(tmp_path.glob("*.json"))
    assert [f.name + ".partial" for f in files] == [spools[0].name] and not spools[0].exists()
    doc = json.loads(files[0].read_text())
    assert doc["complete"] is True
    assert any("recording stopped" in e["summary"] for e in doc["entries"])


def test_memory_per_connection_is_bounded(tmp_path: Path, upstream) -> None:
    run = Running(_opts(tmp_path, upstream.url, max_entries=20, max_bytes=4096))
    try:
        with socket.create_connection(("127.0.0.1", run.proxy.port), timeout=5) as s:
            s.sendall(ProtocolHeader().encode())
            for _ in range(200):
                s.sendall(MethodFrame(1, spec.BasicPublish(exchange="", routing_key="x" * 200)).encode())
            time.sleep(0.3)
        deadline = time.monotonic() + 5
        while not run.proxy.written and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        run.stop()
    doc = json.loads(run.proxy.written[0].read_text())
    assert len(doc["entries"]) <= 21
    assert "further entries not recorded" in doc["entries"][-1]["summary"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_upstream_closes_the_client_and_goes_on(tmp_path: Path) -> None:
    run = Running(_opts(tmp_path, f"amqp://127.0.0.1:{_free_port()}/"))
    try:
        with socket.create_connection(("127.0.0.1", run.proxy.port), timeout=5) as s:
            s.settimeout(5)
            assert s.recv(10) == b""  # closed by the proxy
        deadline = time.monotonic() + 5
        while not any("cannot connect" in line for line in run.lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any("cannot connect" in line for line in run.lines), run.lines
        assert run.thread.is_alive()
    finally:
        run.stop()
