"""`amqpspec run` end to end against the real local brokers.

One full run per broker (module-scoped) feeds most checks: the JSON-lines contract,
JUnit, exit codes and the differences between brokers. Further runs cover TLS, bad
input, secrets, a kill in the middle of a run and baselines.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from amqpspec.case import discover

REQUIRED_KEYS = {"case", "clauses", "protocol", "verdict", "close", "target", "broker", "duration_s",
                 "seed", "evidence", "transcript"}
VERDICTS = {"passed", "failed", "warning", "informational", "skipped", "error"}


def amqpspec(*args: str, timeout: float = 600, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, **kw)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class FullRun:
    def __init__(self, url: str, tmp: Path, *extra: str, jobs: int = 4) -> None:
        self.json = tmp / "results.jsonl"
        self.junit = tmp / "results.junit.xml"
        t0 = time.monotonic()
        self.proc = amqpspec("run", url, "--protocol", "0-9-1", "--json", str(self.json), "--junit", str(self.junit),
                             "--seed", "7", "--jobs", str(jobs), *extra)
        self.elapsed = time.monotonic() - t0
        self.records = read_jsonl(self.json) if self.json.exists() else []

    def verdicts(self) -> dict[str, str]:
        return {r["case"]: r["verdict"] for r in self.records}


@pytest.fixture(scope="module")
def rabbit_run(rabbitmq, tmp_path_factory) -> FullRun:
    return FullRun(rabbitmq.url, tmp_path_factory.mktemp("rabbit"))


@pytest.fixture(scope="module")
def garage_run(garagemq, tmp_path_factory) -> FullRun:
    # garagemq 0.1 crashes on some malformed frames: the runner blames the case, restarts it, goes on.
    # One job at a time, so that each crash is attributed to exactly one case.
    # down then up: a deadlocked garagemq still accepts TCP connections, so "up" alone would not restart it
    restart = f"{sys.executable} -m amqpspec.brokers down garagemq && {sys.executable} -m amqpspec.brokers up garagemq"
    return FullRun(garagemq.url, tmp_path_factory.mktemp("garage"), "--restart-command", restart, jobs=1)


def test_crashes_are_blamed_on_one_case_and_the_run_goes_on(garage_run):
    crashed = [r for r in garage_run.records if "stopped serving" in r["reason"]]
    for rec in crashed:
        assert rec["verdict"] == "failed"
        assert any("broker restarted" in note for note in rec["evidence"]["notes"]), rec["case"]
    assert not [r for r in garage_run.records if r["reason"].startswith("not run")]


@pytest.mark.parametrize("which", ["rabbit_run", "garage_run"])
def test_full_run_writes_the_contract(which, request):
    run: FullRun = request.getfixturevalue(which)
    assert run.proc.returncode in (0, 1), run.proc.stderr
    cases = discover("0-9-1")
    assert len(run.records) == len(cases) >= 60
    for rec in run.records:
        assert REQUIRED_KEYS <= rec.keys(), rec["case"]
        assert rec["verdict"] in VERDICTS
        assert rec["protocol"] == "0-9-1"
        assert ":guest@" not in rec["target"]
        assert rec["broker"]["product"]
        assert isinstance(rec["transcript"], list)
        assert {"who", "how", "code"} <= rec["close"].keys()
        assert {"expected", "observed"} <= rec["evidence"].keys()
        if rec["verdict"] != "skipped":
            assert rec["transcript"], rec["case"]
    # no case may end undecided against a healthy local broker: an error is a suite defect
    errors = [f'{r["case"]}: {r["reason"]}' for r in run.records if r["verdict"] == "error"]
    assert not errors
    # exit code follows the verdicts
    failing = [r for r in run.records if r["verdict"] == "failed"]
    assert run.proc.returncode == (1 if failing else 0)
    # the console tree groups by section and ends with the summary
    assert "4.2.2 Protocol Header" in run.proc.stdout
    assert f"{len(cases)} cases:" in run.proc.stdout
    # JUnit parses and counts every case
    tree = ET.parse(run.junit)
    assert sum(int(s.get("tests")) for s in tree.getroot().iter("testsuite")) == len(cases)


def test_brokers_differ_where_they_differ(rabbit_run, garage_run):
    rv, gv = rabbit_run.verdicts(), garage_run.verdicts()
    assert rv.keys() == gv.keys()
    assert any(rv[c] != gv[c] for c in rv)


def test_verbose_prints_decoded_frames(rabbitmq):
    proc = amqpspec("run", rabbitmq.url, "--protocol", "0-9-1", "--case", "amqp091/4.2.2/valid-header", "-v")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "-> protocol-header AMQP 0-0-9-1" in proc.stdout
    assert "<- ch=0 connection.start(" in proc.stdout


def test_single_case_alone_matches_full_run(rabbit_run, rabbitmq):
    # a sample across sections: each alone must give the verdict it had in the full parallel run
    sample = sorted(rabbit_run.verdicts().items())[:: max(1, len(rabbit_run.records) // 8)]
    for case_id, verdict in sample:
        proc = amqpspec("run", rabbitmq.url, "--protocol", "0-9-1", "--case", case_id, "--seed", "7",
                        "--json", "/dev/stdout")
        alone = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        assert alone and alone[0]["verdict"] == verdict, case_id


# ----------------------------------------------------------------------------- TLS

def test_tls_with_cafile(rabbitmq, tmp_path):
    out = tmp_path / "tls.jsonl"
    proc = amqpspec("run", rabbitmq.tls_url, "--protocol", "0-9-1", "--cafile", rabbitmq.cafile,
                    "--case", "amqp091/4.2.2/*", "--json", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    recs = read_jsonl(out)
    assert recs and all(r["target"].startswith("amqps://") for r in recs)
    assert all(r["verdict"] != "error" for r in recs)


def test_tls_insecure(rabbitmq):
    proc = amqpspec("run", rabbitmq.tls_url, "--protocol", "0-9-1", "--insecure", "--case", "amqp091/4.2.2/valid-header")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_tls_without_ca_is_a_one_line_error(rabbitmq):
    proc = amqpspec("run", rabbitmq.tls_url, "--protocol", "0-9-1", "--case", "amqp091/4.2.2/valid-header")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "CERTIFICATE_VERIFY_FAILED" in proc.stderr


# ----------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("url, words", [
    ("http://localhost:5672/", "scheme"),
    ("amqp://", "no host"),
    ("amqp://guest:guest@127.0.0.1:notaport/", "bad broker URL"),
    ("amqp://guest:guest@127.0.0.1:1/", "cannot connect"),
])
def test_bad_targets_exit_2_with_one_line(url, words):
    proc = amqpspec("run", url, "--protocol", "0-9-1")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and words in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_wrong_password_exit_2(rabbitmq):
    proc = amqpspec("run", "amqp://guest:wrong-password-123@127.0.0.1:%d/" % rabbitmq.port, "--protocol", "0-9-1",
                    timeout=60)
    assert proc.returncode == 2
    assert "login refused" in proc.stderr and proc.stderr.count("\n") == 1
    assert "wrong-password-123" not in proc.stderr + proc.stdout


def test_unknown_vhost_exit_2(rabbitmq):
    proc = amqpspec("run", rabbitmq.url + "no-such-vhost-amqpspec", "--protocol", "0-9-1", timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr


def test_unmatched_case_glob_exit_2(rabbitmq):
    proc = amqpspec("run", rabbitmq.url, "--protocol", "0-9-1", "--case", "nothing/*")
    assert proc.returncode == 2 and "no case matches" in proc.stderr


def test_dry_run_needs_no_broker():
    proc = amqpspec("run", "amqp://guest:guest@127.0.0.1:1/", "--protocol", "0-9-1", "--dry-run")
    assert proc.returncode == 0 and "amqp091/4.2.2/valid-header" in proc.stdout


# ----------------------------------------------------------------------------- secrets

@pytest.fixture
def secret_user(rabbitmq):
    user, password = "amqpspec-secret-user", "S3cret-pa55-word-xyz"
    rabbitmq.ctl("add_user", user, password)
    rabbitmq.ctl("set_permissions", "-p", "/", user, ".*", ".*", ".*")
    try:
        yield user, password
    finally:
        rabbitmq.ctl("delete_user", user, check=False)


def test_password_never_appears_in_any_output(rabbitmq, secret_user, tmp_path):
    user, password = secret_user
    url = f"amqp://{user}:{password}@127.0.0.1:{rabbitmq.port}/"
    out, junit = tmp_path / "s.jsonl", tmp_path / "s.xml"
    proc = amqpspec("run", url, "--protocol", "0-9-1", "--case", "amqp091/4.2.2/*", "--case", "amqp091/2.2.4/*",
                    "--json", str(out), "--junit", str(junit), "-v")
    assert proc.returncode in (0, 1), proc.stderr
    blob = proc.stdout + proc.stderr + out.read_text() + junit.read_text()
    assert password not in blob
    assert password.encode().hex() not in blob
    assert user in blob  # the user name is shown on purpose


# ----------------------------------------------------------------------------- crash safety

def test_killed_run_keeps_every_finished_case(rabbitmq, tmp_path):
    out = tmp_path / "killed.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "amqpspec.cli", "run", rabbitmq.url, "--protocol", "0-9-1",
                             "--json", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 5):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    lines = out.read_text().splitlines()
    assert len(lines) >= 5
    for line in lines:
        json.loads(line)  # every finished case is a whole record


# ----------------------------------------------------------------------------- baselines

def test_baseline_turns_known_failures_into_a_pass_and_catches_regressions(rabbitmq, tmp_path):
    base = tmp_path / "baseline.json"
    args = ("run", rabbitmq.url, "--protocol", "0-9-1", "--case", "amqp091/4.2.2/*", "--case", "amqp091/4.2.3/*",
            "--jobs", "4", "--seed", "3")
    first = amqpspec(*args, "--write-baseline", str(base))
    assert base.exists(), first.stderr
    again = amqpspec(*args, "--baseline", str(base))
    assert again.returncode == 0, again.stdout[-2000:]
    data = json.loads(base.read_text())
    # pretend a case used to pass that now fails or errors: that is a regression (exit 1)
    worse = next((c for c, v in data["verdicts"].items() if v in ("failed", "error")), None)
    if worse is None:
        pytest.skip("no failing case in this selection to turn into a regression")
    data["verdicts"][worse] = "passed"
    base.write_text(json.dumps(data))
    regressed = amqpspec(*args, "--baseline", str(base))
    assert regressed.returncode == 1 and f"REGRESSION: {worse}" in regressed.stdout


def test_corrupt_baseline_is_a_usage_error(rabbitmq, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    proc = amqpspec("run", rabbitmq.url, "--protocol", "0-9-1", "--baseline", str(bad))
    assert proc.returncode == 2 and "not a valid amqpspec baseline" in proc.stderr
