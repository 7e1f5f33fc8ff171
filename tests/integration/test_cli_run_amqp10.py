"""`amqpspec run --protocol 1.0` end to end against RabbitMQ's AMQP 1.0 plugin and the Qpid
Proton example broker: the same result contract as 0-9-1, no undecided case, and the two
brokers' results differ where the brokers do."""
from __future__ import annotations

import sys

import pytest

from amqpspec.case import discover

from .test_cli_run import REQUIRED_KEYS, VERDICTS, FullRun, amqpspec


@pytest.fixture(scope="module")
def rabbit10_run(rabbitmq, tmp_path_factory) -> FullRun:
    return FullRun(rabbitmq.url, tmp_path_factory.mktemp("rabbit10"), "--protocol", "1.0")


@pytest.fixture(scope="module")
def proton_run(proton_broker, tmp_path_factory) -> FullRun:
    restart = f"{sys.executable} -m amqpspec.brokers down proton && {sys.executable} -m amqpspec.brokers up proton"
    return FullRun(proton_broker.url, tmp_path_factory.mktemp("proton"), "--protocol", "1.0",
                   "--restart-command", restart, jobs=1)


@pytest.mark.parametrize("which", ["rabbit10_run", "proton_run"])
def test_full_1_0_run_writes_the_contract(which, request):
    run: FullRun = request.getfixturevalue(which)
    assert run.proc.returncode in (0, 1), run.proc.stderr
    cases = discover("1.0")
    assert len(run.records) == len(cases) >= 1
    for rec in run.records:
        assert REQUIRED_KEYS <= rec.keys(), rec["case"]
        assert rec["verdict"] in VERDICTS and rec["protocol"] == "1.0"
        assert "condition" in rec["close"]
    errors = [f'{r["case"]}: {r["reason"]}' for r in run.records if r["verdict"] == "error"]
    assert not errors


def test_1_0_brokers_differ(rabbit10_run, proton_run):
    rv, pv = rabbit10_run.verdicts(), proton_run.verdicts()
    assert rv.keys() == pv.keys()
    assert any(rv[c] != pv[c] for c in rv)


def test_1_0_wrong_password_exit_2(rabbitmq):
    proc = amqpspec("run", f"amqp://guest:wrong-pass-1234@127.0.0.1:{rabbitmq.port}/", "--protocol", "1.0")
    assert proc.returncode == 2 and "login refused" in proc.stderr and proc.stderr.count("\n") == 1
    assert "wrong-pass-1234" not in proc.stderr + proc.stdout


def test_auto_detects_a_1_0_only_broker(proton_broker):
    proc = amqpspec("run", proton_broker.url, "--case", "amqp10/2.2/amqp-header-answered")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "protocol 1.0" in proc.stdout
