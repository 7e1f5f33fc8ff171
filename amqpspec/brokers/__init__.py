"""Real brokers on 127.0.0.1 for amqpspec's own tests and for local runs.

``python3 -m amqpspec.brokers up rabbitmq`` (or :func:`get_broker` from Python) installs
nothing and starts one broker; ``install`` fetches the Debian packages. The definitions in
:mod:`amqpspec.brokers.local` are the single source of names, packages and ports; the
registry below is derived from them, not kept by hand.
"""

from __future__ import annotations

from amqpspec.brokers.base import (
    _REGISTRY,
    DEFAULT_STATE_DIR,
    Broker,
    BrokerStatus,
    ProcessBroker,
    port_accepts,
    redact_url,
    state_root,
)
from amqpspec.brokers.errors import BrokerError, BrokerStartError
from amqpspec.brokers.local import GarageMQ, ProtonBroker, RabbitMQ

__all__ = [
    "DEFAULT_STATE_DIR",
    "Broker",
    "BrokerError",
    "BrokerStartError",
    "BrokerStatus",
    "GarageMQ",
    "ProcessBroker",
    "ProtonBroker",
    "RabbitMQ",
    "all_brokers",
    "broker_names",
    "debian_packages",
    "get_broker",
    "port_accepts",
    "redact_url",
    "registry",
    "state_root",
]


def registry() -> dict[str, type[Broker]]:
    """Broker classes by name, in definition order (filled when the classes are defined)."""
    return dict(_REGISTRY)


def broker_names() -> list[str]:
    return list(_REGISTRY)


def get_broker(name: str) -> Broker:
    """A fresh broker object; ports and state dir are read from the environment now."""
    try:
        cls = _REGISTRY[name]
    except KeyError:
        raise BrokerError(f"unknown broker {name!r} (known: {', '.join(_REGISTRY)})") from None
    return cls()


def all_brokers() -> list[Broker]:
    return [cls() for cls in _REGISTRY.values()]


def debian_packages(names: list[str] | None = None) -> list[str]:
    """The Debian packages of the named brokers (all when None), without duplicates."""
    chosen = names or broker_names()
    packages: list[str] = []
    for name in chosen:
        if name not in _REGISTRY:
            raise BrokerError(f"unknown broker {name!r} (known: {', '.join(_REGISTRY)})")
        packages.extend(p for p in _REGISTRY[name].debian_packages if p not in packages)
    return packages
