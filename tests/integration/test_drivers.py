"""Each shipped client driver (drivers/*/driver.toml) against the real local brokers, quickly.

No amqpspec framework in between: the driver is launched as `amqpspec client` launches it and
its JSON lines are checked against the driver contract (docs/drivers.md) by
bench/drivers_matrix.py, which also runs the full workload matrix by hand. Here each driver
does a few quick workloads: 0-9-1 ones publish two messages and get them back from RabbitMQ;
1.0 ones send and receive two on the Proton example broker and connect through RabbitMQ's
plugin. Every driver also meets a wrong password, and the runs with a right one use a user
with a password of its own, so "the password never appears" is checked on a string that can
only come from the URL (guest's password is also its user name).

A driver whose library is missing is skipped with its check's reason, except under CI
(CI=true), where scripts/setup-drivers.sh has installed them all and a missing one is a fault.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from bench.drivers_matrix import Driver, check, discover, expect, queue_091, run

DRIVERS = discover()
USER = "amqpspec-drivers"


def _ids(driver: Driver) -> str:
    return driver.name


def _require(driver: Driver) -> None:
    reason = check(driver)
    if reason is None:
        return
    message = f"{driver.name}: library not usable: {reason}"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message + " (scripts/setup-drivers.sh should have installed it)", pytrace=False)
    pytest.skip(message)


def _management(method: str, path: str, body: dict[str, Any] | None = None) -> None:
    """One call of RabbitMQ's management API as guest (loopback only, as guest may)."""
    request = urllib.request.Request(
        f"http://127.0.0.1:15672/api/{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"content-type": "application/json",
                 "authorization": "Basic " + base64.b64encode(b"guest:guest").decode()})
    with urllib.request.urlopen(request, timeout=10):
        pass


@pytest.fixture(scope="module")
def rabbit_url(rabbitmq: Any) -> Iterator[str]:
    """amqp://USER:PASSWORD@... for a user made for this module, its password random."""
    password = "drvpw-" + secrets.token_hex(8)
    try:
        _management("PUT", f"users/{USER}", {"password": password, "tags": ""})
        _management("PUT", f"permissions/%2F/{USER}", {"configure": ".*", "write": ".*", "read": ".*"})
    except (urllib.error.URLError, OSError) as exc:
        pytest.fail(f"RabbitMQ's management API did not create the test user: {exc}", pytrace=False)
    yield f"amqp://{USER}:{password}@127.0.0.1:{rabbitmq.port}/"
    _management("DELETE", f"users/{USER}")


def _wrong_password(url: str) -> str:
    return url.replace(url.split("@")[0].rsplit(":", 1)[1], "wrong-" + secrets.token_hex(6))


def _assert_refused(driver: Driver, url: str) -> None:
    """A wrong password: an error event and exit 1, the (wrong) password nowhere in the output."""
    bad = _wrong_password(url)
    result = run(driver, bad, "connect", "timeout=5")
    assert not result.problems, result.problems
    assert result.kinds[-1:] == ["error"] and result.returncode == 1, result.summary()


@pytest.mark.parametrize("driver", [d for d in DRIVERS if d.protocol == "0-9-1"], ids=_ids)
def test_driver_091_publish_get_and_wrong_password(driver: Driver, rabbit_url: str) -> None:
    _require(driver)
    queue = f"amqpspec-drv-ci-{driver.name}"
    body = f"from-{driver.name}"
    with queue_091(rabbit_url, queue):
        connected = run(driver, rabbit_url, "connect")
        assert not expect(connected), expect(connected)
        published = run(driver, rabbit_url, "publish", f"queue={queue}", "count=2", f"body={body}")
        assert not expect(published, published=2), expect(published, published=2)
        got = run(driver, rabbit_url, "get", f"queue={queue}", "count=2")
        assert not expect(got, delivered=2), expect(got, delivered=2)
        assert [e["body"] for e in got.events if e["event"] == "delivered"] == [body, body]
    _assert_refused(driver, rabbit_url)


@pytest.mark.parametrize("driver", [d for d in DRIVERS if d.protocol == "1.0"], ids=_ids)
def test_driver_10_send_receive_and_rabbitmq_connect(driver: Driver, proton_broker: Any, rabbit_url: str) -> None:
    _require(driver)
    address = f"amqpspec-drv-ci-{driver.name}-{secrets.token_hex(3)}"
    body = f"from-{driver.name}"
    sent = run(driver, proton_broker.url, "send", f"address={address}", "count=2", f"body={body}")
    assert not expect(sent, published=2, confirmed=2), expect(sent, published=2, confirmed=2)
    assert all(e["ack"] is True for e in sent.events if e["event"] == "confirmed"), sent.summary()
    got = run(driver, proton_broker.url, "receive", f"address={address}", "count=2")
    assert not expect(got, delivered=2), expect(got, delivered=2)
    assert [e["body"] for e in got.events if e["event"] == "delivered"] == [body, body]
    through_rabbit = run(driver, rabbit_url, "connect")
    assert not expect(through_rabbit), expect(through_rabbit)
    _assert_refused(driver, rabbit_url)


def test_every_driver_toml_is_complete() -> None:
    """The keys the framework reads are there, and each driver's command has {url} and {workload}."""
    assert DRIVERS, "no drivers/*/driver.toml found"
    for driver in DRIVERS:
        assert driver.protocol in ("0-9-1", "1.0"), driver
        assert "{url}" in driver.command and "{workload}" in driver.command, driver
