"""Real brokers on 127.0.0.1 for amqpspec's own tests and for local runs.

``python3 -m amqpspec.brokers up rabbitmq`` (or :func:`get_broker` from Python) installs
nothing and starts one broker; ``install`` fetches the Debian packages. The definitions in
:mod:`amqpspec.brokers.local` are the single source of names, packages and ports; the
registry below is derived from them, not kept by hand.

The brokers of ``docker-compose.yml`` (RabbitMQ 4.x and 3.13, LavinMQ, Artemis, Broker-J, the
Skupper router) are :class:`DockerBroker` objects from :mod:`amqpspec.brokers.docker`; they are
not in :func:`registry` (that stays the local, Debian-packaged brokers), but :func:`get_broker`
finds them by name, and :func:`choose_backend` says which kind ``amqpspec brokers`` manages.
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
from amqpspec.brokers.docker import (
    BACKENDS,
    BackendChoice,
    ComposeError,
    DockerBroker,
    choose_backend,
    docker_broker,
    docker_broker_names,
    docker_brokers,
    probe_engine,
)
from amqpspec.brokers.errors import BrokerError, BrokerStartError
from amqpspec.brokers.local import GarageMQ, ProtonBroker, RabbitMQ

__all__ = [
    "BACKENDS",
    "DEFAULT_STATE_DIR",
    "BackendChoice",
    "Broker",
    "BrokerError",
    "BrokerStartError",
    "BrokerStatus",
    "ComposeError",
    "DockerBroker",
    "GarageMQ",
    "ProcessBroker",
    "ProtonBroker",
    "RabbitMQ",
    "all_brokers",
    "broker_names",
    "choose_backend",
    "debian_packages",
    "docker_broker",
    "docker_broker_names",
    "docker_brokers",
    "get_broker",
    "port_accepts",
    "probe_engine",
    "redact_url",
    "registry",
    "state_root",
]


def registry() -> dict[str, type[Broker]]:
    """Local broker classes by name, in definition order (filled when the classes are defined)."""
    return dict(_REGISTRY)


def broker_names() -> list[str]:
    return list(_REGISTRY)


def get_broker(name: str) -> Broker:
    """A fresh broker object; ports and state dir are read from the environment now.

    Local brokers first; other names are looked up in docker-compose.yml (the Docker engine is
    probed only when the returned broker is used).
    """
    cls = _REGISTRY.get(name)
    if cls is not None:
        return cls()
    try:
        compose_names = docker_broker_names()
    except ComposeError as exc:
        docker_part = f"; Docker brokers unavailable: {exc}"
    else:
        if name in compose_names:
            return docker_broker(name)
        docker_part = f"; Docker: {', '.join(compose_names)}" if compose_names else ""
    raise BrokerError(f"unknown broker {name!r} (known: {', '.join(_REGISTRY)}{docker_part})")


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
