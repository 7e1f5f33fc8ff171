"""The client catalog against every shipped driver, on a focused set of cases (quick).

`amqpspec client --driver NAME` for each drivers/*/driver.toml, three cases of its protocol
that every library reaches (the handshake, frame limits, closing): the run ends, every case
has its record with the client keys, and every verdict is decided -- an error or a skip here
means the driver or the suite broke, not that the library fails the spec. The libraries'
verdicts themselves are not asserted (they belong to each library's version); the whole
catalog per driver is the benchmark (`amqpspec client` by hand, see README "Client
conformance"). A driver whose library is missing is skipped with its reason, except under CI,
where scripts/setup-drivers.sh installed them all.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.drivers_matrix import Driver, discover
from tests.integration.test_drivers import _require
from tests.support.cli_serve import amqpspec

FOCUS = {
    "0-9-1": ["amqp091/4.2.2/client-sends-protocol-header", "amqp091/4.2.3/client-respects-frame-max",
              "amqp091/2.2.4/client-closes-on-skipped-tune"],
    "1.0": ["amqp10/2.4.3/client-close-on-channel-0", "amqp10/2.4.3/client-answers-close",
            "amqp10/2.4.3/client-closes-with-close"],
}
DECIDED = {"passed", "failed", "warning", "informational"}


@pytest.mark.parametrize("driver", discover(), ids=lambda d: d.name)
def test_focused_client_cases_run_against_the_driver(driver: Driver, tmp_path: Path) -> None:
    _require(driver)
    out = tmp_path / "r.jsonl"
    args = ["client", "--protocol", driver.protocol, "--driver", driver.name, "--json", str(out), "--seed", "3"]
    for c in FOCUS[driver.protocol]:
        args += ["--case", c]
    done = amqpspec(*args)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["case"] for r in records) == sorted(FOCUS[driver.protocol])
    for r in records:
        assert r["role"] == "client" and r["driver"] == driver.name and r["library_version"], r
        assert r["verdict"] in DECIDED, f"{r['case']}: {r['verdict']}: {r['reason']}"
