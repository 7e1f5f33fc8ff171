"""A hostile AMQP 1.0 client cannot hang or exhaust the 1.0 server role: garbage instead of a
header, a frame announcing 4 GiB, a flood of empty frames, a delivery whose frames never end.
Each case still ends by its deadline with a verdict (or an error the suite reports), the
server role keeps what it must within its bounds, and the driver process is gone afterwards."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from amqpspec.case import discover
from amqpspec.client.drivers import DriverSpec
from amqpspec.client.runner import ClientRunner
from amqpspec.client.session import ClientTarget
from amqpspec.peer.server091 import Listener
from amqpspec.peer.server10_responder import MAX_DELIVERIES, MAX_MESSAGE
from amqpspec.runner import RunOptions

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "client10_script.py"

CASES = {"garbage": "amqp10/2.2/client-sends-header-at-once", "huge-frame": "amqp10/2.4.3/client-closes-with-close",
         "flood-empty": "amqp10/2.4.3/client-closes-with-close",
         "endless-delivery": "amqp10/2.7.1/client-respects-max-frame-size"}


@pytest.mark.parametrize("fault", sorted(CASES))
def test_hostile_client_is_bounded(fault: str) -> None:
    spec = {c.id: c for c in discover("1.0", role="client")}[CASES[fault]]
    driver = DriverSpec("client10-script", "1.0", [sys.executable, str(SCRIPT), "{url}", "{workload}", f"bad={fault}"],
                        SCRIPT.parent)
    listener = Listener()
    try:
        target = ClientTarget.create(listener, driver, "test", "1.0")
        t0 = time.monotonic()
        result = ClientRunner(target, [spec], RunOptions(jobs=1, protocol="1.0", seed=1, timeout=6.0)).run()[0]
        took = time.monotonic() - t0
    finally:
        listener.close()
    assert took < 6.0 + 15.0, took   # the case deadline, and the runner's grace to end the driver (a loaded machine)
    assert result.verdict.value in ("failed", "error", "passed"), result.reason
    # the record stays bounded whatever the client sent (the transcript keeps at most 4 MiB of octets)
    assert len(str(result.to_json())) < 12_000_000


def test_bounds_are_sane() -> None:
    assert MAX_MESSAGE <= 64 << 20 and MAX_DELIVERIES <= 10_000
