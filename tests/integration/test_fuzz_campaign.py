"""CI's short, seeded AMQP 0-9-1 fuzz campaign, through the real CLI, against real brokers.

One campaign per broker (module-scoped): RabbitMQ, and garagemq -- which crashes on some
malformed input, so its campaign gets a restart command built from the brokers module and
must go on. The checks are about the suite, never about the broker having no findings:
the exit code is 0 or 1 (2 would be a usage or setup error), every finding file is well
formed and holds no password, every finding's replay command replays against the broker,
and the control pair (a well-behaved producer and consumer beside the fuzzer) lost nothing.
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from amqpspec.brokers.base import port_accepts
from amqpspec.fuzz.findings import validate
from amqpspec.fuzz.targets import for_protocol
from amqpspec.target import Target

SEED = "1"
BUDGET_S = 60          # per broker: the campaign ends at its examples or this duration, whichever first
EXAMPLES = "200"
SHRINK_S = "1"         # per new finding: CI wants the findings, not the smallest inputs
OVERRUN_S = 120        # examples in flight, crash restarts (garagemq), the control pair's drain, the summary
#: the single-stimulus targets (the stateful machine has its own tests and a slower pace)
TARGETS = [t.name for t in for_protocol("0-9-1") if t.build.__module__.endswith("targets091")]


def _console_script() -> list[str]:
    """The installed `amqpspec` command, as a user runs it (next to this interpreter first)."""
    here = Path(sys.executable).with_name("amqpspec")
    found = str(here) if here.exists() else shutil.which("amqpspec")
    assert found, "the amqpspec console script is not installed (pip install -e .)"
    return [found]


def amqpspec(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_console_script(), *args], capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


class Campaign:
    """One `amqpspec fuzz` run and what it left in its findings directory."""

    def __init__(self, broker: Any, tmp: Path, *extra: str) -> None:
        self.broker = broker
        self.url = broker.url                                  # with the password: only ever on our command lines
        self.password = Target.parse(self.url).password.reveal()
        self.dir = tmp / "findings"
        t0 = time.monotonic()
        self.proc = amqpspec("fuzz", self.url, "--protocol", "0-9-1", "--seed", SEED, "--examples", EXAMPLES,
                             "--duration", f"{BUDGET_S}s", "--shrink-time", SHRINK_S, "--findings", str(self.dir),
                             *[a for name in TARGETS for a in ("--target", name)], *extra,
                             timeout=BUDGET_S + OVERRUN_S + 60)
        self.elapsed = time.monotonic() - t0
        self.files = sorted(self.dir.glob("*.json")) if self.dir.exists() else []
        self.findings = [json.loads(p.read_text()) for p in self.files]

    @property
    def sasl(self) -> bytes:
        """The SASL PLAIN response of the broker's credentials, as it goes on the wire."""
        t = Target.parse(self.url)
        return b"\x00" + t.username.encode() + b"\x00" + self.password.encode()

    def secrets(self) -> list[str]:
        """What would show the password: in the URL, and the SASL response as text or hex. (The
        test brokers' password is the user name, so the bare word cannot be looked for.)"""
        return [f":{self.password}@", self.sasl.hex(), self.sasl.decode("latin-1")]

    @property
    def executions(self) -> int:
        for line in self.proc.stdout.splitlines():
            if " executions in " in line:
                return int(line.split()[0])
        return 0


def _garage_restart() -> str:
    # down then up: a deadlocked garagemq may still accept TCP connections, so "up" alone would
    # not restart it; the AMQPSPEC_* variables of this session reach the commands as they are
    py = shlex.quote(sys.executable)
    return f"{py} -m amqpspec.brokers down garagemq; {py} -m amqpspec.brokers up garagemq"


@pytest.fixture(scope="module")
def rabbit_campaign(rabbitmq: Any, tmp_path_factory: pytest.TempPathFactory) -> Campaign:
    return Campaign(rabbitmq, tmp_path_factory.mktemp("fuzz-rabbit"))


@pytest.fixture(scope="module")
def garage_campaign(garagemq: Any, tmp_path_factory: pytest.TempPathFactory) -> Campaign:
    return Campaign(garagemq, tmp_path_factory.mktemp("fuzz-garage"), "--restart-command", _garage_restart())


CAMPAIGNS = ["rabbit_campaign", "garage_campaign"]


@pytest.mark.parametrize("which", CAMPAIGNS)
def test_campaign_runs_and_ends_with_0_or_1(which: str, request: pytest.FixtureRequest) -> None:
    c: Campaign = request.getfixturevalue(which)
    assert c.proc.returncode in (0, 1), f"exit {c.proc.returncode}\n{c.proc.stdout[-3000:]}\n{c.proc.stderr[-3000:]}"
    assert "Traceback" not in c.proc.stderr + c.proc.stdout, c.proc.stderr[-6000:]
    assert c.executions >= 40, c.proc.stdout[-2000:]      # it really fuzzed, not just connected
    assert c.elapsed < BUDGET_S + OVERRUN_S               # a hostile broker never makes the campaign hang
    assert (c.proc.returncode == 1) == bool(c.findings)   # 1 exactly when findings were kept
    assert f"--seed {SEED}" in c.proc.stdout              # the line that runs it again


@pytest.mark.parametrize("which", CAMPAIGNS)
def test_findings_are_well_formed_and_hold_no_password(which: str, request: pytest.FixtureRequest) -> None:
    c: Campaign = request.getfixturevalue(which)
    targets = {t.name for t in for_protocol("0-9-1")} | {"control"}
    for path, rec in zip(c.files, c.findings):
        assert validate(rec) == [], (path.name, validate(rec))
        assert path.name == f"{rec['signature_id']}.json"
        assert rec["signature"]["protocol"] == "0-9-1" and rec["signature"]["target"] in targets
        assert rec["seed"] == int(SEED) and rec["count"] >= 1
        assert rec["broker"]["product"]
        assert rec["transcript"], path.name
        assert rec["replay"] == shlex.join(["amqpspec", "replay", str(path), rec["target_url"]])
        text = path.read_text()
        for secret in c.secrets():
            assert secret not in text, path.name
        assert c.sasl not in bytes.fromhex(rec["input"]["hex"])
        for entry in rec["transcript"]:
            assert c.sasl not in bytes.fromhex(entry["hex"]), (path.name, entry["summary"])
    for secret in c.secrets():
        assert secret not in c.proc.stdout and secret not in c.proc.stderr


@pytest.mark.parametrize("which", CAMPAIGNS)
def test_the_control_pair_lost_nothing(which: str, request: pytest.FixtureRequest) -> None:
    """Messages of the well-behaved producer/consumer pair, next to the fuzzer, all arrived in
    order (messages in flight across a crash restart are not counted: that is a liveness finding)."""
    c: Campaign = request.getfixturevalue(which)
    control = [f"{r['signature']['violation']}: {r['input']['summary']}" for r in c.findings
               if r["signature"]["target"] == "control"]
    assert control == []
    assert "control pair could not start" not in c.proc.stdout or which == "garage_campaign"


def _replayable(rec: dict[str, Any]) -> bool:
    # control findings have no input of their own: their transcript is the pair's, not a stimulus
    return rec["signature"]["target"] != "control"


@pytest.mark.parametrize("which", CAMPAIGNS)
def test_every_finding_replays(which: str, request: pytest.FixtureRequest) -> None:
    """The `replay` command of every finding runs against the broker: exit 0 (the same answers)
    or 1 (a divergence, printed), never a usage or connection error. The URL in the command has
    no password: the test puts the broker's own URL in its place."""
    c: Campaign = request.getfixturevalue(which)
    for path, rec in zip(c.files, c.findings):
        if not _replayable(rec):
            continue
        _ensure_up(c.broker)
        argv = shlex.split(rec["replay"])
        assert argv[:3] == ["amqpspec", "replay", str(path)] and argv[3] == rec["target_url"]
        proc = amqpspec("replay", str(path), c.url, "--answer-timeout", "1", "--timeout", "30", timeout=60)
        out = proc.stdout + proc.stderr
        assert proc.returncode in (0, 1), f"{path.name}: exit {proc.returncode}\n{out[-2000:]}"
        assert ("SAME:" in out) if proc.returncode == 0 else ("REPLAY DIVERGED" in out), out[-2000:]
        for secret in c.secrets():
            assert secret not in out
    _ensure_up(c.broker)


def _ensure_up(broker: Any) -> None:
    """A finding may crash the broker again when replayed (garagemq): bring it back for the next."""
    if port_accepts(broker.port):
        return
    broker.stop()
    broker.start()
