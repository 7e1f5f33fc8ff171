"""Short seeded AMQP 1.0 fuzz campaigns against real brokers: RabbitMQ's 1.0 plugin and the
Qpid Proton example broker.

Each campaign must run (examples executed on every chosen target), leave a well-formed
findings directory (no password in it), and every finding must replay -- from its target's
start state and its recorded input alone -- to the same verdict, and through `amqpspec replay`
without a crash. Whether a broker has findings is the broker's business: never asserted.
"""
from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amqpspec.fuzz import targets
from amqpspec.fuzz.campaign import Campaign, Config
from amqpspec.brokerops import probe
from amqpspec.target import Target

pytestmark = pytest.mark.broker
AMQPSPEC = shutil.which("amqpspec") or str(Path(sys.executable).with_name("amqpspec"))

TARGETS = ["protocol-header", "open", "begin", "attach", "transfer", "flow-disposition", "frame-header", "types"]
KEYS = {"schema", "kind", "signature", "signature_id", "broker", "target_url", "seed", "first_seen", "last_seen", "count",
        "clauses", "input", "transcript", "replay", "run_id"}


#: the Proton example broker crashes on some inputs (a finding): the campaign brings it back, as
#: `amqpspec fuzz --restart-command` does, so that a crash is a finding and not the end of the test
PROTON_RESTART = f"{shlex.quote(sys.executable)} -m amqpspec.brokers down proton; " \
                 f"{shlex.quote(sys.executable)} -m amqpspec.brokers up proton"


def _campaign(url: str, tmp_path: Path, names: list[str], examples: int,
              restart_command: str | None = None) -> tuple[Any, Path]:
    target = Target.parse(url)
    broker = probe(target, "1.0")
    cfg = Config(url=url, protocol="1.0", targets=names, broker=broker, seed=1, examples=examples, window=1.0,
                 shrink_time=3.0, restart_command=restart_command)
    out = tmp_path / "findings"
    stats = Campaign(cfg, str(out), control=False).run()
    return stats, out


def _check(url: str, password: str | None, stats: Any, out: Path, names: list[str]) -> None:
    assert stats.execs > 0 and not stats.dead
    assert set(stats.by_target) == set(names), stats.by_target
    assert stats.setup_failures < stats.execs
    target = Target.parse(url)
    for path in sorted(out.glob("*.json")) if out.exists() else []:
        text = path.read_text()
        if password:
            # the user name is shown on purpose (guest); the password never is, in any encoding
            user = Target.parse(url).username
            assert f"{user}:{password}" not in text
            assert f"\x00{user}\x00{password}".encode().hex() not in text
            if password != user:
                assert password not in text
        rec = json.loads(text)
        assert KEYS <= rec.keys() and rec["kind"] == "finding"
        sig = rec["signature"]
        assert sig["protocol"] == "1.0" and sig["target"] in names
        assert rec["signature_id"] == path.stem
        assert all(c.startswith("amqp10:") for c in rec["clauses"])
        assert rec["replay"].startswith("amqpspec replay ")
        bytes.fromhex(rec["input"]["hex"])
        if sig["violation"] in ("liveness", "memory", "control-loss"):
            continue  # campaign-level verdicts: not a property of one input
        # up to five tries: timing decides some reactions. RabbitMQ 3.10's plugin, given a
        # session-less attach on channel 0, sometimes resets at once and sometimes answers the
        # probe first (measured: 8 of 12 replays of one such finding reset); a finding that never
        # comes back in five tries is a defect of the campaign or the replay
        verdict = None
        for _ in range(5):
            verdict = targets.replay(rec, target, window=1.0).verdict.violation
            if verdict == sig["violation"]:
                break
        if sig["violation"] == "hang":
            # silence past a 1 s window on a loaded machine need not come again: the replay must
            # run and judge, and may find the broker merely slow this time
            assert verdict in ("hang", None), (path.name, verdict)
        else:
            assert verdict == sig["violation"], (path.name, verdict)
        cli = subprocess.run([AMQPSPEC, "replay", str(path), url], capture_output=True, text=True, timeout=60)
        assert cli.returncode in (0, 1), cli.stdout + cli.stderr   # same answers, or a divergence shown
        assert "SAME:" in cli.stdout or "REPLAY DIVERGED" in cli.stdout, cli.stdout + cli.stderr


def test_fuzz_proton_broker(proton_broker: Any, tmp_path: Path) -> None:
    url = proton_broker.url
    stats, out = _campaign(url, tmp_path, TARGETS, 40, PROTON_RESTART)
    _check(url, None, stats, out, TARGETS)


def test_fuzz_rabbitmq_amqp10(rabbitmq: Any, tmp_path: Path) -> None:
    url = rabbitmq.url
    names = TARGETS + ["sasl-init"]
    stats, out = _campaign(url, tmp_path, names, 45)
    _check(url, Target.parse(url).password.reveal() or None, stats, out, names)


SEED_10 = Path(__file__).resolve().parents[1] / "data" / "seeds" / "proton-session.json"


def _queues(port: int = 15672) -> set[str] | None:
    """Queue names through RabbitMQ's management API (None when it does not answer)."""
    import base64
    import urllib.request

    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/queues?columns=name",
                                 headers={"Authorization": "Basic " + base64.b64encode(b"guest:guest").decode()})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:   # noqa: S310 - loopback management API
            return {q["name"] for q in json.load(resp)}
    except OSError:
        return None


def test_fuzz_rabbitmq_amqp10_seeded(rabbitmq: Any, tmp_path: Path) -> None:
    # a recorded proton session, re-addressed into the campaign's own queues and mutated
    url = rabbitmq.url
    target = Target.parse(url)
    cfg = Config(url=url, protocol="1.0", targets=["seeded"], broker=probe(target, "1.0"), seed=1,
                 examples=40, window=1.0, shrink_time=3.0, seeds=(str(SEED_10),))
    out = tmp_path / "findings"
    stats = Campaign(cfg, str(out), control=False).run()
    _check(url, target.password.reveal() or None, stats, out, ["seeded"])
    queues = _queues()
    if queues is not None:
        mine = sorted(q for q in queues if q.startswith(f"amqpspec-fuzz-{cfg.run_id[:8]}"))
        assert not mine, mine                               # what the seeds' attaches made is deleted


# ---------------------------------------------------------------------------- crash attribution

CRASH_TARGET = "open-crash-or-not"


def _crash_mix(env: Any) -> Any:
    """Mostly opens the Qpid Proton example broker takes, sometimes the one that kills it: an
    idle-time-out of 1 ms (AttributeError in proton's IOHandler.on_selectable_expired, found by
    the `open` target's 10-minute campaign)."""
    from hypothesis import strategies as st

    from amqpspec.fuzz.stimulus import Stimulus
    from amqpspec.wire.amqp10 import AMQPFrame, spec
    from amqpspec.wire.amqp10.types import UInt

    def stim(open_: Any) -> Stimulus:
        return Stimulus("1.0", (AMQPFrame(0, open_),))

    benign = st.integers(0, 1 << 20).map(lambda n: stim(spec.Open(container_id=f"amqpspec-benign-{n}")))
    crasher = st.just(stim(spec.Open(container_id="amqpspec-crasher", idle_time_out=UInt(1))))
    return st.one_of(*([benign] * 11), crasher)


def _is_crasher(rec: dict[str, Any]) -> bool:
    return b"amqpspec-crasher" in bytes.fromhex(rec["input"]["hex"])


def test_crash_is_blamed_on_its_input_with_many_slots(proton_broker: Any, tmp_path: Path) -> None:
    """With 8 examples in flight at once, a broker crash is blamed on the example that caused it
    -- confirmed by replaying the suspects alone -- and never on an example that merely ran
    beside it (those are run again after the restart)."""
    from amqpspec.fuzz.targets import REGISTRY, FuzzTarget, register
    from amqpspec.fuzz.targets10 import _runner

    if ("1.0", CRASH_TARGET) not in REGISTRY:
        register(FuzzTarget(CRASH_TARGET, "1.0", "header", "test: benign opens and one that crashes Proton",
                            _crash_mix, _runner("header")))
    url = proton_broker.url
    py = shlex.quote(sys.executable)
    cfg = Config(url=url, protocol="1.0", targets=[CRASH_TARGET], broker=probe(Target.parse(url), "1.0"),
                 seed=3, examples=120, window=1.0, shrink_time=3.0, slots=8,
                 restart_command=f"{py} -m amqpspec.brokers down proton; {py} -m amqpspec.brokers up proton")
    out = tmp_path / "findings"
    stats = Campaign(cfg, str(out), control=False).run()
    records = [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))] if out.exists() else []
    assert stats.restarts >= 1, stats.notes                      # the crasher was drawn and did crash it
    liveness = [r for r in records if r["signature"]["violation"] == "liveness"]
    assert liveness, [r["signature"] for r in records]
    blamed_wrongly = [r["input"]["summary"] for r in records if not _is_crasher(r)]
    assert not blamed_wrongly, blamed_wrongly                    # nothing pinned on a bystander


# ---------------------------------------------------------------------------- through the CLI

def _cli_campaign(url: str, tmp_path: Path, extra: list[str]) -> tuple[str, Path]:
    """A short seeded campaign of every 1.0 target through `amqpspec fuzz` (reused connections,
    several examples in flight, provisional hangs: the campaign as users run it)."""
    out = tmp_path / "cli-findings"
    cmd = [AMQPSPEC, "fuzz", url, "--protocol", "1.0", "--duration", "20s", "--seed", "1", "--timeout", "1",
           "--shrink-time", "3", "--findings", str(out)] + extra
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    assert " executions in " in done.stdout, done.stdout[-2000:]
    return done.stdout, out


def _replay_all(url: str, out: Path, restart: list[list[str]] | None = None) -> None:
    """Every finding replays through `amqpspec replay`, and (but hangs, liveness, memory, control
    loss: properties of a campaign or of timing) to its recorded verdict from its input alone.
    A replay that stops the broker serving (a crash found) is followed by the ``restart`` commands."""
    from amqpspec.brokerops import problem

    target = Target.parse(url)
    for path in sorted(out.glob("*.json")) if out.exists() else []:
        rec = json.loads(path.read_text())
        assert rec["signature_id"] == path.stem
        assert set(rec["signature"].get("clauses", [])) <= set(rec["clauses"])
        cli = subprocess.run([AMQPSPEC, "replay", str(path), url], capture_output=True, text=True, timeout=60)
        assert cli.returncode in (0, 1, 2), cli.stdout + cli.stderr
        violation = rec["signature"]["violation"]
        # a replay can crash the broker, or leave it serving but granting no credit (the Proton
        # example broker after some flows): either way the next replay needs a fresh one
        if restart and problem(target, "1.0", credit_node="amqpspec-replay-live"):
            for step in restart:
                subprocess.run(step, shell=False, capture_output=True, timeout=120)
        if violation in ("hang", "liveness", "memory", "control-loss"):
            continue
        assert cli.returncode in (0, 1), cli.stdout + cli.stderr
        verdicts = {targets.replay(rec, target, window=1.0).verdict.violation for _ in range(2)}
        assert violation in verdicts, (path.name, violation, verdicts)


def test_cli_campaign_rabbitmq_amqp10_replays(rabbitmq: Any, tmp_path: Path) -> None:
    url = rabbitmq.url
    stdout, out = _cli_campaign(url, tmp_path, [])
    _replay_all(url, out)


def test_cli_campaign_proton_replays(proton_broker: Any, tmp_path: Path) -> None:
    url = proton_broker.url
    py = shlex.quote(sys.executable)
    stdout, out = _cli_campaign(url, tmp_path, ["--restart-command",
                                                f"{py} -m amqpspec.brokers down proton; {py} -m amqpspec.brokers up proton"])
    _replay_all(url, out, [[sys.executable, "-m", "amqpspec.brokers", "down", "proton"],
                           [sys.executable, "-m", "amqpspec.brokers", "up", "proton"]])
