"""What ``amqpspec fuzz --as-server`` and ``amqpspec replay FINDING --driver NAME`` do (the two
commands only parse their options and call in here). Exit codes: fuzz 0 no finding, 1 findings;
replay 0 the finding reproduced (the same, as replay's 0 is), 1 it did not; 2 usage errors."""
from __future__ import annotations

import random
import sys
from typing import Any

import click

from amqpspec.client.drivers import DriverSpec
from amqpspec.errors import UsageError
from amqpspec.sanitize import safe_line


def driver_spec(driver: str | None, driver_cmd: str | None, protocol: str | None) -> DriverSpec:
    if driver and driver_cmd:
        raise UsageError("give --driver or --driver-cmd, not both")
    if driver_cmd:
        if protocol not in ("0-9-1", "1.0"):
            raise UsageError("--driver-cmd needs --protocol 0-9-1 or 1.0")
        return DriverSpec.from_command(driver_cmd, protocol)
    if not driver:
        raise UsageError("--as-server needs --driver NAME (a folder of drivers/) "
                         "or --driver-cmd 'CMD {url} {workload}'")
    spec = DriverSpec.load(driver)
    if protocol not in (None, "auto") and protocol != spec.protocol:
        raise UsageError(f"driver {driver} speaks AMQP {spec.protocol}, not {protocol}")
    ok, why = spec.usable()
    if not ok:
        raise UsageError(f"driver {driver} is not usable here: {why}")
    return spec


def run_as_server(*, protocol: str, driver: str | None, driver_cmd: str | None, seed: int | None,
                  examples: int | None, duration: float | None, findings_dir: str, rss_limit_mb: int,
                  default_duration: float) -> None:
    from .server_campaign import ServerCampaign, ServerConfig, again_command, summary_lines

    spec = driver_spec(driver, driver_cmd, protocol)
    if duration is None and examples is None:
        duration = default_duration
    run_seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    cfg = ServerConfig(protocol=spec.protocol, driver=spec, seed=run_seed, examples=examples, duration=duration,
                       findings_dir=findings_dir, rss_limit=rss_limit_mb << 20, driver_cmd=driver_cmd)
    budget = " and ".join(x for x in (f"{examples} examples" if examples else "",
                                        f"{duration:g}s" if duration else "") if x)
    campaign = ServerCampaign(cfg, on_line=lambda s: click.echo(safe_line(s)))
    click.echo(safe_line(f"amqpspec fuzz --as-server  driver {spec.name} ({spec.library} "
                         f"{campaign.library_version or '?'})  protocol {spec.protocol}  seed {run_seed}  "
                         f"budget {budget}  findings: {findings_dir}"))
    try:
        stats = campaign.run()
    except KeyboardInterrupt:
        click.echo(f"interrupted; findings so far are in {findings_dir}")
        sys.exit(130)
    for line in summary_lines(stats, cfg, again_command(cfg)):
        click.echo(safe_line(line))
    sys.exit(1 if stats.findings else 0)


def replay_with_driver(file: str, driver: str | None, driver_cmd: str | None) -> None:
    from .server_replay import load_server_finding, replay_server_finding

    doc = load_server_finding(file)
    protocol = str(doc["signature"].get("protocol"))
    spec = driver_spec(driver or None, driver_cmd, protocol)
    server: dict[str, Any] = doc["server"]
    click.echo(safe_line(f"replay  {file} (finding {doc.get('signature_id')}, {server.get('example', '')})  "
                         f"driver {spec.name}"))
    result = replay_server_finding(file, spec, on_line=lambda s: click.echo(safe_line(s)))
    for note in result.notes:
        click.echo(safe_line(f"note: {note}"))
    if result.reproduced:
        click.echo(safe_line(f"REPRODUCED: {result.observed} -- {result.reason}"))
        sys.exit(0)
    click.echo(safe_line(f"NOT REPRODUCED: the finding is {result.expected}, the replay saw {result.observed} "
                         f"-- {result.reason}"))
    sys.exit(1)


__all__ = ["run_as_server", "replay_with_driver", "driver_spec"]
