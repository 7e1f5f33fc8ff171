"""Usage errors of fuzz --as-server and replay --driver: one line, exit 2, nothing launched."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from amqpspec.cli import main


@pytest.mark.parametrize("args,message", [
    (["fuzz"], "fuzz needs the broker's URL"),
    (["fuzz", "--as-server"], "--as-server needs --driver NAME"),
    (["fuzz", "--as-server", "amqp://127.0.0.1/", "--driver", "pika"], "--as-server takes no URL"),
    (["fuzz", "--as-server", "--driver", "no-such-driver"], "no driver 'no-such-driver'"),
    (["fuzz", "--as-server", "--driver", "pika", "--driver-cmd", "x {url} {workload}"], "not both"),
    (["fuzz", "--as-server", "--driver-cmd", "x {url}"], "--driver-cmd needs --protocol"),
    (["fuzz", "--as-server", "--protocol", "1.0", "--driver-cmd", "x {url}"], "needs {url} and {workload}"),
])
def test_fuzz_as_server_usage(args: list[str], message: str) -> None:
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 2, done.output
    assert message in done.output


def test_replay_driver_refuses_a_broker_side_finding(tmp_path: Path) -> None:
    finding = tmp_path / "f.json"
    finding.write_text(json.dumps({"kind": "finding", "signature": {"protocol": "0-9-1"}, "transcript": []}))
    done = CliRunner().invoke(main, ["replay", str(finding), "--driver", "pika"])
    assert done.exit_code == 2 and "broker-side campaign" in done.output
    done = CliRunner().invoke(main, ["replay", str(finding), "amqp://127.0.0.1/", "--driver", "pika"])
    assert done.exit_code == 2 and "takes no URL" in done.output
