"""The fuzz memory oracle never sends credentials anywhere the user did not name (issue 11, item 1).

Fake management APIs (tests/support/hostile_management.py) record what reaches them: nothing
without --management-url, even for a broker address that is not 127.0.0.1; no second request
(and so no Authorization header) at the end of a redirect; no plain http:// beside amqps://.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amqpspec.errors import UsageError
from amqpspec.fuzz.management_api import ManagementAPI, ManagementError, from_options, mem_used
from amqpspec.fuzz.oracles import MemoryMonitor, is_local_host
from amqpspec.secrets import SCRUBBER, Secret
from amqpspec.target import Target
from tests.support import hostile_management as fake

PASSWORD = "mgmt-pw-4e1f"


def _free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _api(url: str, password: str = PASSWORD) -> ManagementAPI:
    return ManagementAPI(url, "monitor", Secret(password))


def test_no_management_request_without_a_management_url() -> None:
    """The old oracle called http://<host>:15672/ with the AMQP credentials for any host it did
    not take for loopback; 127.0.0.2 is local but was not on its list."""
    try:
        server = fake.FakeManagement(host="127.0.0.2", port=15672).__enter__()
    except OSError as exc:
        pytest.skip(f"cannot listen on 127.0.0.2:15672: {exc}")
    try:
        target = Target.parse(f"amqp://guest:amqp-secret-9@127.0.0.2:{_free_port('127.0.0.2')}/")
        monitor = MemoryMonitor(target)
        monitor.start()
        monitor.check()
        time.sleep(0.2)
        assert server.requests == []
        assert monitor.describe() == "memory: not measured"
    finally:
        server.__exit__()


@pytest.mark.parametrize("host,local", [("127.0.0.1", True), ("127.0.0.2", True), ("localhost", True), ("::1", True),
                                        ("0.0.0.0", True), ("10.0.0.1", False), ("broker.example", False)])
def test_local_hosts(host: str, local: bool) -> None:
    assert is_local_host(host) is local


def test_management_api_named_by_the_user_is_read() -> None:
    with fake.FakeManagement(fake.nodes(300 << 20)) as server:
        monitor = MemoryMonitor(Target.parse("amqp://guest:guest@10.9.9.9:5672/"), management=_api(server.url))
        monitor.start()
        assert monitor.baseline == 300 << 20
        assert monitor.source == f"management API {server.url}api/nodes mem_used"
        assert PASSWORD not in monitor.describe()
        [seen] = server.requests
        assert seen.path == "/api/nodes" and seen.headers["authorization"].startswith("Basic ")


def test_a_redirect_is_not_followed_and_carries_no_credentials() -> None:
    with fake.FakeManagement() as elsewhere:
        with fake.FakeManagement(fake.redirect(f"{elsewhere.url}api/nodes")) as named:
            monitor = MemoryMonitor(Target.parse("amqp://guest:guest@127.0.0.1:5672/"), management=_api(named.url))
            monitor.start()
            for _ in range(3):
                monitor.read(force=True)
            time.sleep(0.2)
            assert elsewhere.requests == []          # never a second request, so never the header elsewhere
            assert len(named.requests) == 1          # and after a failed start, no more tries
            assert monitor.baseline is None
            assert "302 redirect not followed" in monitor.describe()


@pytest.mark.parametrize("status", [301, 307, 308])
def test_every_redirect_is_an_error(status: int) -> None:
    with fake.FakeManagement() as elsewhere, \
            fake.FakeManagement(fake.redirect(f"{elsewhere.url}api/nodes", status)) as named:
        with pytest.raises(ManagementError, match="redirect"):
            mem_used(_api(named.url))
        assert elsewhere.requests == []


def test_answer_size_is_bounded() -> None:
    with fake.FakeManagement(fake.endless) as server:
        with pytest.raises(ManagementError, match="larger than"):
            mem_used(_api(server.url), timeout=5.0)


def test_answer_time_is_bounded() -> None:
    with fake.FakeManagement(fake.dribble) as server:
        t0 = time.monotonic()
        with pytest.raises(ManagementError, match="timeout"):
            mem_used(_api(server.url), timeout=0.5)
        assert time.monotonic() - t0 < 0.5 + 5.0  # the timeout, with slack for a loaded machine


@pytest.mark.parametrize("body", [b"{}", b"[" * 100_000, b"not json", b'[{"mem_used": "1e999"}]'])
def test_odd_answers_give_no_figure(body: bytes) -> None:
    def answer(h) -> None:
        h.send_response(200)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    with fake.FakeManagement(answer) as server:
        with pytest.raises(ManagementError):
            mem_used(_api(server.url))


# ---------------------------------------------------------------------------- options

def test_options_password_from_file_registered_with_the_scrubber(tmp_path: Path) -> None:
    secret = tmp_path / "pw"
    secret.write_text("file-pw-77a1\n")
    api = from_options("https://broker:15671/", "monitor", str(secret), broker_tls=True)
    assert api is not None and api.password.reveal() == "file-pw-77a1"
    assert api.nodes_url == "https://broker:15671/api/nodes"
    assert "file-pw-77a1" not in SCRUBBER.scrub("x file-pw-77a1 y")
    assert "file-pw-77a1" not in repr(api)


def test_options_password_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMQPSPEC_MANAGEMENT_PASSWORD", "env-pw-31c")
    api = from_options("http://127.0.0.1:15672", "guest", None, broker_tls=False)
    assert api is not None and api.password.reveal() == "env-pw-31c" and api.nodes_url.endswith(":15672/api/nodes")


@pytest.mark.parametrize("url,user,message", [
    ("http://127.0.0.1:15672/", "guest", "plain http"),                     # amqps broker, see below
    ("https://u:p@broker:15671/", "guest", "must not hold credentials"),
    ("ftp://broker/", "guest", "expected http"),
    ("https://broker:99999/", "guest", "--management-url"),
    ("https://broker:15671/", None, "needs --management-user"),
])
def test_unsafe_or_incomplete_options_are_usage_errors(url: str, user: str | None, message: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AMQPSPEC_MANAGEMENT_PASSWORD", "x")
    with pytest.raises(UsageError, match=message):
        from_options(url, user, None, broker_tls=True)


def test_no_password_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMQPSPEC_MANAGEMENT_PASSWORD", raising=False)
    with pytest.raises(UsageError, match="needs the password"):
        from_options("https://broker:15671/", "monitor", None, broker_tls=True)
    with pytest.raises(UsageError, match="need --management-url"):
        from_options(None, "monitor", None, broker_tls=True)


def test_cli_refuses_plain_http_management_for_an_amqps_broker(tmp_path: Path) -> None:
    """One line, exit 2, before any connection (nothing listens on the broker's port)."""
    env = dict(os.environ, AMQPSPEC_MANAGEMENT_PASSWORD=PASSWORD)
    broker = f"amqps://guest:guest@127.0.0.1:{_free_port()}/"
    proc = subprocess.run([sys.executable, "-m", "amqpspec.cli", "fuzz", broker, "--protocol", "0-9-1",
                           "--examples", "1", "--findings", str(tmp_path / "f"), "--management-url", "http://127.0.0.1:15672/", "--management-user", "guest"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "plain http://" in lines[0] and "amqps://" in lines[0], proc.stderr
    assert PASSWORD not in proc.stderr + proc.stdout
