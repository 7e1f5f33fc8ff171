"""`fuzz --as-server` end to end: a short seeded hostile-broker campaign against two real client
libraries (pika for 0-9-1, rhea for 1.0), every finding replayed against the same driver.

Checks the contract, not the libraries' verdicts (those belong to their versions): every
example runs to its end, findings are valid finding files facing the client's side, the stored
replay command names the driver, and replay says whether each reproduces (the CLI path for the
first one). The kinds of the 1.0 run are narrowed to quick ones that require a reaction, so
that the test stays short.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from amqpspec.client.drivers import DriverSpec
from amqpspec.fuzz.findings import validate
from amqpspec.fuzz.server_campaign import ServerCampaign, ServerConfig
from amqpspec.fuzz.server_replay import replay_server_finding
from tests.support.cli_serve import amqpspec

RUNS = [("pika", 3, 3, ()), ("rhea", 2, 3, ("flow-credit", "vanish"))]


def _driver(name: str) -> DriverSpec:
    spec = DriverSpec.load(name)
    ok, why = spec.usable()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name}: {why} (scripts/setup-drivers.sh should have installed it)", pytrace=False)
        pytest.skip(f"{name}: {why}")
    return spec


def test_short_campaigns_with_every_finding_replayed(tmp_path: Path) -> None:
    for name, seed, examples, kinds in RUNS:
        driver = _driver(name)
        out = tmp_path / name
        cfg = ServerConfig(driver.protocol, driver, seed=seed, examples=examples, findings_dir=str(out),
                           deadline_s=6.0, kinds=kinds)
        stats = ServerCampaign(cfg).run()
        assert stats.execs == examples
        for i, (sid, rec) in enumerate(sorted(stats.findings.items())):
            path = out / f"{sid}.json"
            assert validate(rec) == [], rec
            assert rec["replay"] == f"amqpspec replay {path} --driver={name}"
            assert rec["signature"]["target"].startswith(f"{name}/")
            assert any(e["dir"] == "recv" and "[hostile" in e["summary"] for e in rec["transcript"])
            if i == 0:
                done = amqpspec("replay", str(path), "--driver", name, timeout=60)
                assert "REPRODUCED" in done.stdout, done.stdout + done.stderr
                assert done.returncode == (1 if "NOT REPRODUCED" in done.stdout else 0), done.stdout
                continue
            result = replay_server_finding(str(path), driver)
            # it reproduces, or says what it saw instead
            assert result.reproduced or (result.observed and result.reason), result
