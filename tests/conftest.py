"""Session fixtures that give tests real local brokers (see amqpspec.brokers).

Each fixture starts its broker only if it is not already serving, remembers whether it
did, and at the end of the session stops only what it started: a broker a developer
started by hand is used and left alone. Brokers are installed by scripts/setup.sh, so a
broker that does not start fails the tests that need it instead of skipping them.

``AMQPSPEC_NO_BROKERS=1`` skips every test that needs a broker (the fixtures below or
``@pytest.mark.broker``), for quick unit-only runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import pytest

from amqpspec.brokers import Broker, BrokerError, get_broker

# outside CI, `amqpspec run --json` starts a warm Spark for the report to come and `amqpspec report`
# runs in one (reports/warm): tests spawn hundreds of such commands and judge each alone, so none
# of them gets a service unless its test asks (test_report_warm), wherever the suite runs
os.environ.setdefault("AMQPSPEC_KEEP_WARM", "0")

NO_BROKERS_ENV = "AMQPSPEC_NO_BROKERS"
NO_BROKERS_REASON = f"{NO_BROKERS_ENV}=1: tests that need a real broker are skipped"

#: fixture name -> broker name
BROKER_FIXTURES = {"rabbitmq": "rabbitmq", "garagemq": "garagemq", "proton_broker": "proton"}


def _brokers_disabled() -> bool:
    return os.environ.get(NO_BROKERS_ENV, "").strip() not in ("", "0")


def _broker_fixture(fixture_name: str, broker_name: str) -> Callable[[], Iterator[Broker]]:
    @pytest.fixture(scope="session", name=fixture_name)
    def fixture() -> Iterator[Broker]:
        if _brokers_disabled():
            pytest.skip(NO_BROKERS_REASON)
        problem = None
        try:
            broker = get_broker(broker_name)
            started = broker.start()
        except BrokerError as exc:
            problem = str(exc)
        if problem is not None:  # failed outside the except block: no chained traceback
            pytest.fail(f"broker {broker_name!r} could not be started: {problem}", pytrace=False)
        try:
            yield broker
        finally:
            if started:
                broker.stop()

    fixture.__doc__ = f"The local {broker_name} broker, started for this session unless already running."
    return fixture


rabbitmq = _broker_fixture("rabbitmq", "rabbitmq")
garagemq = _broker_fixture("garagemq", "garagemq")
proton_broker = _broker_fixture("proton_broker", "proton")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With AMQPSPEC_NO_BROKERS=1, skip broker tests up front (clear reason, no start attempt)."""
    if not _brokers_disabled():
        return
    skip = pytest.mark.skip(reason=NO_BROKERS_REASON)
    for item in items:
        needs = set(getattr(item, "fixturenames", ())) & BROKER_FIXTURES.keys()
        if needs or item.get_closest_marker("broker") is not None:
            item.add_marker(skip)
