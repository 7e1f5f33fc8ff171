"""The command line against hostile brokers and hostile option values (issue 11 items 4, 9, 11, 12).

Every broker string that reaches stdout/stderr is escaped and scrubbed; bad option values,
long virtual hosts and unwritable output paths are one-line usage errors (exit 2) found
before any connection; a 900 kB product name costs a few hundred octets per result.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile import HostileServer
from tests.support.hostile_cli import PASSWORD, hostile_identity, huge_identity, identity_broker, password_echo_broker

UNREACHABLE = "amqp://guest:guest@127.0.0.1:1/"
ONE_CASE = "amqp091/2.2.4/undecodable-frame-instead-of-start-ok"


def amqpspec(*args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", *args], capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL, **kw)


def assert_terminal_safe(data: bytes) -> None:
    """No ESC, no NUL, no CR, and no line that a broker started (the fake "all cases passed")."""
    assert b"\x1b" not in data and b"\x00" not in data and b"\r" not in data
    assert not any(line.startswith(b"all cases passed") for line in data.splitlines())
    assert b"Traceback" not in data


def assert_one_line_usage_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    assert proc.returncode == 2, proc
    assert b"Traceback" not in proc.stderr
    errors = [line for line in proc.stderr.decode().splitlines() if "rror" in line]
    assert len(errors) == 1, proc.stderr
    return errors[0]


# ---------------------------------------------------------------------------- item 4

def test_run_login_refusal_quoting_the_password_is_escaped_and_scrubbed() -> None:
    with HostileServer(password_echo_broker()) as srv:
        proc = amqpspec("run", f"amqp://guest:{PASSWORD}@127.0.0.1:{srv.port}/", "--protocol", "0-9-1")
    line = assert_one_line_usage_error(proc)
    assert "login refused" in line
    assert_terminal_safe(proc.stdout + proc.stderr)
    assert PASSWORD.encode() not in proc.stdout + proc.stderr
    assert b"\\x1b]0;pwned\\x07" in proc.stderr  # shown, escaped


def test_run_header_escapes_the_broker_identity(tmp_path: Path) -> None:
    with HostileServer(identity_broker(hostile_identity())) as srv:
        proc = amqpspec("run", srv.url, "--protocol", "0-9-1", "--case", ONE_CASE, "--json", str(tmp_path / "r.jsonl"))
    assert proc.returncode in (0, 1), proc.stderr
    assert_terminal_safe(proc.stdout + proc.stderr)
    assert b"Hostile\\x1b]0;pwned" in proc.stdout


def test_fuzz_header_and_notes_escape_the_broker_identity(tmp_path: Path) -> None:
    with HostileServer(identity_broker(hostile_identity())) as srv:
        proc = amqpspec("fuzz", srv.url, "--protocol", "0-9-1", "--examples", "3", "--shrink-time", "0",
                        "--timeout", "0.5", "--findings", str(tmp_path / "findings"), timeout=240)
    assert proc.returncode in (0, 1), proc.stderr
    assert_terminal_safe(proc.stdout + proc.stderr)
    assert b"broker Hostile\\x1b]0;pwned" in proc.stdout


# ---------------------------------------------------------------------------- item 12

def test_a_900_kB_product_name_costs_little_per_result_and_on_stdout(tmp_path: Path) -> None:
    results = tmp_path / "r.jsonl"
    with HostileServer(identity_broker(huge_identity())) as srv:
        proc = amqpspec("run", srv.url, "--protocol", "0-9-1", "--case", ONE_CASE, "--json", str(results))
    assert proc.returncode in (0, 1), proc.stderr
    lines = results.read_bytes().splitlines()
    assert lines
    for line in lines:
        # the transcript too: a received item past transcript.MAX_RECV_ITEM keeps only a prefix
        # (the record of every case used to carry the whole connection.start, 1.8 MB as hex)
        assert len(line) < 64 * 1024
        record = json.loads(line)
        assert record["broker"]["product"].endswith("more characters)")
        start = [e for e in record["transcript"] if "connection.start" in e["summary"]]
        assert start and all("octets kept]" in e["summary"] for e in start)
    assert len(proc.stdout) < 64 * 1024 and len(proc.stderr) < 64 * 1024


# ---------------------------------------------------------------------------- item 9

SECONDS = [
    ("run", UNREACHABLE, "--timeout", "nan"), ("run", UNREACHABLE, "--timeout", "inf"),
    ("run", UNREACHABLE, "--timeout", "1e300"),
    ("fuzz", UNREACHABLE, "--timeout", "nan"), ("fuzz", UNREACHABLE, "--timeout", "inf"),
    ("fuzz", UNREACHABLE, "--shrink-time", "nan"), ("fuzz", UNREACHABLE, "--duration", "1e300"),
    ("fuzz", UNREACHABLE, "--duration", "999999h"),
    ("replay", "/dev/null", UNREACHABLE, "--timeout", "nan"), ("replay", "/dev/null", UNREACHABLE, "--timeout", "1e300"),
    ("replay", "/dev/null", UNREACHABLE, "--answer-timeout", "nan"),
    ("replay", "/dev/null", UNREACHABLE, "--max-gap", "inf"),
    ("record", "--listen", "127.0.0.1:0", "--upstream", UNREACHABLE, "--out", "/tmp/x", "--duration", "nan"),
    ("record", "--listen", "127.0.0.1:0", "--upstream", UNREACHABLE, "--out", "/tmp/x", "--flush-interval", "inf"),
    ("brokers", "up", "rabbitmq", "--timeout", "nan"),
]


@pytest.mark.parametrize("args", SECONDS, ids=[" ".join(a[:1] + a[-2:]) for a in SECONDS])
def test_bad_seconds_are_one_line_usage_errors(args: tuple[str, ...]) -> None:
    proc = amqpspec(*args, timeout=30)
    line = assert_one_line_usage_error(proc)
    assert "seconds" in line or "duration" in line


@pytest.mark.parametrize("value", ["nan", "inf", "1e300"])
def test_the_pytest_plugin_refuses_bad_seconds_as_a_usage_error(value: str, tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "--amqp-url", "amqp://guest:guest@127.0.0.1:1/",
                           "--amqp-timeout", value, "--co", "-q", "-p", "no:cacheprovider"], cwd=tmp_path,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
    assert "--amqp-timeout" in proc.stderr and "Traceback" not in proc.stdout + proc.stderr


def test_a_vhost_over_255_octets_is_a_usage_error() -> None:
    proc = amqpspec("run", "amqp://guest:guest@127.0.0.1:1/" + "v" * 300, timeout=30)
    assert "virtual host is 300 octets" in assert_one_line_usage_error(proc)


# ---------------------------------------------------------------------------- item 10

def test_a_password_with_an_unencoded_slash_is_refused_without_showing_it() -> None:
    proc = amqpspec("run", "amqp://guest:Xq7/zz9@127.0.0.1:1/", timeout=30)
    line = assert_one_line_usage_error(proc)
    assert "percent-encode" in line
    assert b"Xq7" not in proc.stdout + proc.stderr and b"zz9" not in proc.stdout + proc.stderr


def test_the_password_given_twice_is_refused(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("other\n")
    proc = amqpspec("run", UNREACHABLE, "--password-file", str(pw), timeout=30)
    assert "given twice" in assert_one_line_usage_error(proc)


# ---------------------------------------------------------------------------- item 11

@pytest.mark.parametrize("option", ["--junit", "--json", "--write-baseline"])
def test_an_unwritable_output_fails_before_connecting(option: str) -> None:
    proc = amqpspec("run", UNREACHABLE, option, "/proc/nope/out.file", timeout=30)
    line = assert_one_line_usage_error(proc)
    assert option in line and "/proc/nope/out.file" in line
    assert "127.0.0.1" not in line and "refused" not in line.lower()


def test_an_output_that_is_a_directory_fails_before_connecting(tmp_path: Path) -> None:
    proc = amqpspec("run", UNREACHABLE, "--junit", str(tmp_path), timeout=30)
    assert "is a directory" in assert_one_line_usage_error(proc)


def test_missing_output_directories_are_not_left_behind(tmp_path: Path) -> None:
    proc = amqpspec("run", UNREACHABLE, "--json", str(tmp_path / "a" / "b" / "r.jsonl"), timeout=30)
    assert proc.returncode == 2 and b"127.0.0.1" in proc.stderr  # the path was fine: the broker is not there
    assert not (tmp_path / "a").exists()
