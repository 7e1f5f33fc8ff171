"""Brokers in containers: defined by ``docker-compose.yml``, run through the Docker SDK.

Why a second backend: Debian ships RabbitMQ 3.10, garagemq and the Proton example broker (see
:mod:`amqpspec.brokers.local`), but the brokers people run in production — RabbitMQ 4.x and
3.13, LavinMQ, ActiveMQ Artemis, Qpid Broker-J, the Skupper router — come as images. The compose
file is their single source of truth (images, ports, credentials, health checks, and, in
``amqpspec.*`` labels, the protocols to test); this module reads it and repeats none of it.

Why the Docker SDK rather than the ``docker compose`` CLI: the SDK needs only a reachable engine
(``DOCKER_HOST`` or the default socket), reports container health directly, and lets
``amqpspec brokers`` share one code path with the local brokers. Only the compose keys listed in
:data:`SUPPORTED_KEYS` are understood; any other key in a broker service is an error rather than
something silently dropped, so a container started here is the one ``docker compose`` would start.

Containers created here are named ``amqpspec-<service>`` and labelled ``amqpspec.service``;
containers started by ``docker compose up`` are recognised by compose's service label, used as
they are, and never removed by amqpspec.

Compose file lookup: ``$AMQPSPEC_COMPOSE_FILE``, else ``./docker-compose.yml`` (when it defines
amqpspec brokers), else the one next to this source checkout.
"""

from __future__ import annotations

import importlib
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

from amqpspec.brokers.base import LOOPBACK, Broker, BrokerStatus, port_accepts, redact_url, state_root
from amqpspec.brokers.errors import BrokerError, BrokerStartError
from amqpspec.secrets import MASK, Scrubber

COMPOSE_FILE_ENV = "AMQPSPEC_COMPOSE_FILE"
COMPOSE_FILE_NAME = "docker-compose.yml"
_CHECKOUT_COMPOSE = Path(__file__).resolve().parents[2] / COMPOSE_FILE_NAME

LABEL_PROTOCOLS = "amqpspec.protocols"
LABEL_AMQP_PORT = "amqpspec.amqp-port"
LABEL_USER = "amqpspec.user"
LABEL_PASSWORD = "amqpspec.password"
LABEL_PRODUCT = "amqpspec.product"
#: set on containers this module creates, so ``down`` removes only what amqpspec started
LABEL_SERVICE = "amqpspec.service"
COMPOSE_SERVICE_LABEL = "com.docker.compose.service"
COMPOSE_PROJECT_LABEL = "com.docker.compose.project"

PROTOCOLS = ("0-9-1", "1.0")
SUPPORTED_KEYS = frozenset(
    {"image", "hostname", "profiles", "ports", "environment", "volumes", "healthcheck", "labels", "command"}
)
HEALTHCHECK_KEYS = frozenset({"test", "interval", "timeout", "retries", "start_period"})
DEFAULT_SOCKET = "unix:///var/run/docker.sock"
ENGINE_TIMEOUT = 3.0
# the Docker SDK and PyYAML are the optional extra `docker` (pyproject.toml): a plain install lacks them
INSTALL_EXTRA = "pip install 'amqpspec[docker]'"

Backend = Literal["auto", "docker", "local"]
BACKENDS: tuple[Backend, ...] = ("auto", "docker", "local")


class ComposeError(BrokerError):
    """docker-compose.yml is missing, unreadable, or uses something this backend cannot honour."""


# --- the compose file ------------------------------------------------------------------------


@dataclass(frozen=True)
class PortBinding:
    """``127.0.0.1:HOST:CONTAINER[/tcp]`` — only loopback bindings are accepted."""

    host_ip: str
    host_port: int
    container_port: int
    protocol: str = "tcp"


@dataclass(frozen=True)
class BindMount:
    """``./relative/file:/absolute/target[:ro]``, the source resolved against the compose file's directory."""

    source: Path
    target: str
    read_only: bool


@dataclass(frozen=True)
class HealthCheck:
    """A compose ``healthcheck``; durations in seconds."""

    test: tuple[str, ...]
    interval: float | None = None
    timeout: float | None = None
    retries: int | None = None
    start_period: float | None = None

    def for_sdk(self) -> dict[str, Any]:
        """The Docker API form: durations in nanoseconds, absent values left to the engine."""
        out: dict[str, Any] = {"test": list(self.test)}
        for key in ("interval", "timeout", "start_period"):
            value = getattr(self, key)
            if value is not None:
                out[key] = int(value * 1_000_000_000)
        if self.retries is not None:
            out["retries"] = self.retries
        return out


@dataclass(frozen=True)
class ComposeService:
    """One broker service of the compose file, as amqpspec needs it."""

    name: str
    image: str
    protocols: tuple[str, ...]
    amqp_port: int
    ports: tuple[PortBinding, ...]
    healthcheck: HealthCheck
    credentials: tuple[str, str] | None
    product: str
    environment: Mapping[str, str] = field(default_factory=dict)
    volumes: tuple[BindMount, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    profiles: tuple[str, ...] = ()
    hostname: str | None = None
    command: str | tuple[str, ...] | None = None

    @property
    def amqp_host_port(self) -> int:
        for binding in self.ports:
            if binding.container_port == self.amqp_port:
                return binding.host_port
        raise ComposeError(f"service {self.name}: container port {self.amqp_port} is not published")

    def host_ports(self) -> dict[str, int]:
        """``port`` is the AMQP listener (as for the local brokers); others are named by container port."""
        ports = {"port": self.amqp_host_port}
        for binding in self.ports:
            if binding.container_port != self.amqp_port:
                ports[f"tcp_{binding.container_port}"] = binding.host_port
        return ports


@dataclass(frozen=True)
class ComposeFile:
    path: Path
    #: amqpspec brokers only, in file order
    services: Mapping[str, ComposeService]


def find_compose_file() -> Path:
    """Where the broker definitions are (see the module docstring for the order)."""
    explicit = os.environ.get(COMPOSE_FILE_ENV)
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise ComposeError(f"{COMPOSE_FILE_ENV}={explicit}: no such file")
        return path
    for candidate in (Path.cwd() / COMPOSE_FILE_NAME, _CHECKOUT_COMPOSE):
        try:
            if candidate.is_file() and LABEL_PROTOCOLS in candidate.read_text(encoding="utf-8"):
                return candidate
        except OSError:
            continue
    raise ComposeError(
        f"no {COMPOSE_FILE_NAME} defining amqpspec brokers in {Path.cwd()} or {_CHECKOUT_COMPOSE.parent}; "
        f"set {COMPOSE_FILE_ENV} to the one from the amqpspec repository"
    )


_cache: dict[tuple[Path, int, int], ComposeFile] = {}


def load_compose(path: Path | None = None) -> ComposeFile:
    """Parse and check the compose file (cached while the file is unchanged)."""
    path = (path or find_compose_file()).resolve()
    try:
        stat = path.stat()
        key = (path, stat.st_mtime_ns, stat.st_size)
        if key in _cache:
            return _cache[key]
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ComposeError(f"cannot read {path}: {exc.strerror or exc}") from None
    parsed = parse_compose(text, path)
    _cache[key] = parsed
    return parsed


def parse_compose(text: str, path: Path) -> ComposeFile:
    """The broker services of a compose document; ``path`` anchors relative bind mounts."""
    try:
        import yaml
    except ImportError:
        raise ComposeError(f"reading {path.name} needs PyYAML: {INSTALL_EXTRA}") from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ComposeError(f"{path}: not valid YAML{where}: {problem}") from None
    if not isinstance(document, dict) or not isinstance(document.get("services"), dict):
        raise ComposeError(f"{path}: no `services:` mapping")
    services: dict[str, ComposeService] = {}
    for name, spec in document["services"].items():
        service = _parse_service(str(name), spec, path)
        if service is not None:
            services[service.name] = service
    _check_distinct_host_ports(services, path)
    return ComposeFile(path, services)


def _parse_service(name: str, spec: object, path: Path) -> ComposeService | None:
    where = f"{path.name}: service {name}"
    if not isinstance(spec, dict):
        raise ComposeError(f"{where}: not a mapping")
    labels = _string_map(spec.get("labels"), f"{where}: labels")
    if LABEL_PROTOCOLS not in labels:
        return None  # not a broker amqpspec tests (a helper container, for example)
    unsupported = sorted(set(spec) - SUPPORTED_KEYS)
    if unsupported:
        raise ComposeError(
            f"{where}: key(s) {', '.join(unsupported)} not supported by amqpspec's Docker backend "
            f"(supported: {', '.join(sorted(SUPPORTED_KEYS))})"
        )
    _no_interpolation(spec, where)
    if LABEL_SERVICE in labels:
        raise ComposeError(f"{where}: label {LABEL_SERVICE} is reserved (amqpspec sets it on containers it creates)")

    image = spec.get("image")
    if not isinstance(image, str) or not image:
        raise ComposeError(f"{where}: needs an `image`")
    if not image_is_pinned(image):
        raise ComposeError(f"{where}: image {image!r} must be pinned to a version tag or digest (not :latest)")

    protocols = tuple(p for p in re.split(r"[\s,]+", labels[LABEL_PROTOCOLS]) if p)
    bad = [p for p in protocols if p not in PROTOCOLS]
    if not protocols or bad:
        raise ComposeError(
            f"{where}: label {LABEL_PROTOCOLS} must list {' and/or '.join(PROTOCOLS)}, "
            f"not {labels[LABEL_PROTOCOLS]!r}"
        )

    try:
        amqp_port = int(labels.get(LABEL_AMQP_PORT, ""))
    except ValueError:
        raise ComposeError(
            f"{where}: label {LABEL_AMQP_PORT} must be the container port of the AMQP listener"
        ) from None

    ports = tuple(_parse_port(p, where) for p in _list(spec.get("ports"), f"{where}: ports"))
    if amqp_port not in {p.container_port for p in ports}:
        raise ComposeError(f"{where}: the AMQP port {amqp_port} ({LABEL_AMQP_PORT}) is not in `ports`")

    user, password = labels.get(LABEL_USER), labels.get(LABEL_PASSWORD)
    if (user is None) != (password is None):
        raise ComposeError(f"{where}: give both {LABEL_USER} and {LABEL_PASSWORD}, or neither (SASL ANONYMOUS)")
    credentials = (user, password) if user is not None and password is not None else None

    hostname = spec.get("hostname")
    if hostname is not None and not isinstance(hostname, str):
        raise ComposeError(f"{where}: hostname must be a string")

    return ComposeService(
        name=name,
        image=image,
        protocols=protocols,
        amqp_port=amqp_port,
        ports=ports,
        healthcheck=_parse_healthcheck(spec.get("healthcheck"), where),
        credentials=credentials,
        product=labels.get(LABEL_PRODUCT, name),
        environment=_string_map(spec.get("environment"), f"{where}: environment"),
        volumes=tuple(_parse_volume(v, where, path.parent) for v in _list(spec.get("volumes"), f"{where}: volumes")),
        labels=labels,
        profiles=tuple(str(p) for p in _list(spec.get("profiles"), f"{where}: profiles")),
        hostname=hostname,
        command=_parse_command(spec.get("command"), where),
    )


def image_is_pinned(image: str) -> bool:
    """True for ``name:tag`` with a tag other than ``latest``, or ``name@sha256:…``."""
    if "@" in image:
        return True
    repository, sep, tag = image.rpartition(":")
    if not sep or "/" in tag:  # no tag at all, or the colon belonged to a registry host:port
        return False
    return bool(repository) and tag != "latest"


def _no_interpolation(value: object, where: str) -> None:
    """``docker compose`` would substitute ``$VAR``; this backend would not, so refuse it."""
    if isinstance(value, str) and "$" in value:
        raise ComposeError(f"{where}: {value!r}: variable substitution ($) is not supported; write the value out")
    if isinstance(value, dict):
        for item in value.values():
            _no_interpolation(item, where)
    elif isinstance(value, list):
        for item in value:
            _no_interpolation(item, where)


def _list(value: object, where: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ComposeError(f"{where}: must be a list")
    return value


def _string_map(value: object, where: str) -> dict[str, str]:
    """A compose mapping given as ``{K: V}`` or ``["K=V", ...]``, values as strings."""
    if value is None:
        return {}
    items: list[tuple[object, object]]
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = []
        for entry in value:
            if not isinstance(entry, str) or "=" not in entry:
                raise ComposeError(f"{where}: {entry!r} is not KEY=VALUE")
            key, _, text = entry.partition("=")
            items.append((key, text))
    else:
        raise ComposeError(f"{where}: must be a mapping or a list of KEY=VALUE")
    out: dict[str, str] = {}
    for name, item in items:
        if item is None or isinstance(item, (dict, list)):
            raise ComposeError(f"{where}: {name} needs a plain value")
        out[str(name)] = str(item).lower() if isinstance(item, bool) else str(item)
    return out


_PORT = re.compile(r"^(?P<ip>[0-9.]+):(?P<host>\d+):(?P<container>\d+)(?:/(?P<proto>tcp|udp))?$")


def _parse_port(value: object, where: str) -> PortBinding:
    match = _PORT.match(str(value)) if isinstance(value, (str, int)) else None
    if match is None:
        raise ComposeError(f"{where}: port {value!r} must be written \"{LOOPBACK}:HOST:CONTAINER\"")
    if match["ip"] != LOOPBACK:
        raise ComposeError(f"{where}: port {value!r} must be published on {LOOPBACK} only")
    host, container = int(match["host"]), int(match["container"])
    if not (0 < host < 65536 and 0 < container < 65536):
        raise ComposeError(f"{where}: port {value!r} is out of range")
    return PortBinding(match["ip"], host, container, match["proto"] or "tcp")


def _parse_volume(value: object, where: str, base: Path) -> BindMount:
    if not isinstance(value, str):
        raise ComposeError(f"{where}: volume {value!r} must be \"./SOURCE:/TARGET[:ro]\"")
    parts = value.split(":")
    if len(parts) not in (2, 3) or not parts[0].startswith(("./", "../")) or not parts[1].startswith("/"):
        raise ComposeError(
            f"{where}: volume {value!r}: only bind mounts of files next to the compose file are supported "
            "(\"./SOURCE:/TARGET[:ro]\")"
        )
    mode = parts[2] if len(parts) == 3 else "rw"
    if mode not in ("ro", "rw"):
        raise ComposeError(f"{where}: volume {value!r}: mode must be ro or rw")
    return BindMount((base / parts[0]).resolve(), parts[1], mode == "ro")


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(us|ms|s|m|h)")
_UNIT_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object, where: str) -> float:
    """Compose durations (``1m30s``, ``500ms``, ``10s``) in seconds."""
    text = str(value).strip()
    if not text or _DURATION.sub("", text):
        raise ComposeError(f"{where}: {value!r} is not a duration like 10s, 1m30s or 500ms")
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION.findall(text))


def _parse_healthcheck(value: object, where: str) -> HealthCheck:
    if not isinstance(value, dict):
        raise ComposeError(f"{where}: needs a `healthcheck` (amqpspec waits for the container to be healthy)")
    unknown = sorted(set(value) - HEALTHCHECK_KEYS)
    if unknown:
        raise ComposeError(f"{where}: healthcheck key(s) {', '.join(unknown)} not supported")
    test = value.get("test")
    if isinstance(test, str):
        argv: tuple[str, ...] = ("CMD-SHELL", test)
    elif isinstance(test, list) and len(test) >= 2 and test[0] in ("CMD", "CMD-SHELL"):
        argv = tuple(str(t) for t in test)
    else:
        raise ComposeError(f"{where}: healthcheck test must be [\"CMD\", ...], [\"CMD-SHELL\", \"...\"] or a string")
    durations = {
        key: parse_duration(value[key], f"{where}: healthcheck {key}") if key in value else None
        for key in ("interval", "timeout", "start_period")
    }
    retries = value.get("retries")
    if retries is not None and (not isinstance(retries, int) or retries < 1):
        raise ComposeError(f"{where}: healthcheck retries must be a positive integer")
    return HealthCheck(argv, durations["interval"], durations["timeout"], retries, durations["start_period"])


def _parse_command(value: object, where: str) -> str | tuple[str, ...] | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    raise ComposeError(f"{where}: command must be a string or a list")


def _check_distinct_host_ports(services: Mapping[str, ComposeService], path: Path) -> None:
    seen: dict[int, str] = {}
    for service in services.values():
        for binding in service.ports:
            other = seen.setdefault(binding.host_port, service.name)
            if other != service.name:
                raise ComposeError(
                    f"{path.name}: host port {binding.host_port} is published by both {other} and {service.name}"
                )


def container_name(service: str) -> str:
    return f"amqpspec-{service}"


def run_kwargs(service: ComposeService) -> dict[str, Any]:
    """Arguments of ``client.containers.run`` for ``service``: what ``docker compose up`` would create."""
    ports: dict[str, list[tuple[str, int]]] = {}
    for binding in service.ports:
        ports.setdefault(f"{binding.container_port}/{binding.protocol}", []).append(
            (binding.host_ip, binding.host_port)
        )
    kwargs: dict[str, Any] = {
        "image": service.image,
        "name": container_name(service.name),
        "detach": True,
        "environment": dict(service.environment),
        "ports": ports,
        "volumes": {
            str(m.source): {"bind": m.target, "mode": "ro" if m.read_only else "rw"} for m in service.volumes
        },
        "healthcheck": service.healthcheck.for_sdk(),
        "labels": {**service.labels, LABEL_SERVICE: service.name},
    }
    if service.hostname:
        kwargs["hostname"] = service.hostname
    if service.command is not None:
        kwargs["command"] = service.command if isinstance(service.command, str) else list(service.command)
    return kwargs


# --- the engine and the choice of backend --------------------------------------------------------


@dataclass(frozen=True)
class EngineProbe:
    """Whether a Docker engine answered; ``where`` never carries a password."""

    reachable: bool
    where: str
    detail: str
    client: Any = field(default=None, repr=False, compare=False)


def _sdk() -> Any:
    """The Docker SDK (PyPI ``docker``), imported lazily so local brokers work without it.

    Why importlib: this module is itself named ``docker``; at run time ``import docker`` already
    means the SDK (absolute imports), but linters and type checkers that put this directory on
    their path would resolve it to this file.
    """
    return importlib.import_module("docker")


def _sdk_errors() -> tuple[type[BaseException], ...]:
    """What the SDK raises when the engine is unreachable or refuses: its own errors, HTTP errors, OS errors."""
    sdk = _sdk()
    requests = importlib.import_module("requests")
    return (sdk.errors.DockerException, requests.exceptions.RequestException, OSError)


def engine_location() -> str:
    return redact_url(os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET)


def _one_line(exc: BaseException, limit: int = 240) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


_ENGINE_FAILURES = (
    ("FileNotFoundError", "no such socket"),
    ("No such file or directory", "no such socket"),
    ("Connection refused", "connection refused"),
    ("Errno 111", "connection refused"),
    ("Permission denied", "permission denied (is this user allowed to use the Docker socket?)"),
    ("timed out", "no answer in time"),
    ("Name or service not known", "unknown host"),
)


def _engine_failure(exc: BaseException) -> str:
    """A short reason instead of the SDK's nested urllib3 message (which stays available as the fallback).

    The SDK quotes DOCKER_HOST verbatim in some messages; a password in it is masked.
    """
    text = str(exc)
    for needle, reason in _ENGINE_FAILURES:
        if needle in text:
            return reason
    line = _one_line(exc)
    raw = os.environ.get("DOCKER_HOST") or ""
    if raw and raw in line:
        line = line.replace(raw, redact_url(raw))
    password = urlsplit(raw).password if "@" in raw else None
    if password:
        line = line.replace(password, MASK)
    return line


def probe_engine(timeout: float = ENGINE_TIMEOUT) -> EngineProbe:
    """``docker.from_env().ping()`` with a short timeout; never raises."""
    where = engine_location()
    errors: tuple[type[BaseException], ...]
    try:
        sdk = _sdk()
        errors = (*_sdk_errors(), ValueError)  # ValueError: a DOCKER_HOST the SDK cannot parse
    except ImportError:
        return EngineProbe(False, where, f"the Docker SDK (Python package `docker`) is not installed: {INSTALL_EXTRA}")
    try:
        client = sdk.from_env(timeout=max(0.1, timeout))  # fetches the API version: connects now
        client.ping()
        version = client.version().get("Version", "unknown version")
    except errors as exc:
        return EngineProbe(False, where, _engine_failure(exc))
    return EngineProbe(True, where, f"Docker {version}", client)


@dataclass(frozen=True)
class BackendChoice:
    """Which brokers ``amqpspec brokers`` manages: ``docker`` (compose services) or ``local``."""

    kind: Literal["docker", "local"]
    requested: Backend
    engine: EngineProbe | None = None

    @property
    def message(self) -> str:
        engine = self.engine
        if self.kind == "docker" and engine is not None:
            return f"docker engine at {engine.where} ({engine.detail})"
        if engine is None:
            return "local OS-package brokers (--backend local)"
        return f"no Docker engine reachable at {engine.where} ({engine.detail}): using local OS-package brokers"


def choose_backend(requested: Backend = "auto", probe: Callable[[], EngineProbe] = probe_engine) -> BackendChoice:
    """``auto``: Docker when an engine answers, else local. ``docker`` without an engine is an error."""
    if requested not in BACKENDS:
        raise BrokerError(f"unknown backend {requested!r} (choose from {', '.join(BACKENDS)})")
    if requested == "local":
        return BackendChoice("local", requested)
    engine = probe()
    if engine.reachable:
        return BackendChoice("docker", requested, engine)
    if requested == "docker":
        raise BrokerError(
            f"--backend docker: no Docker engine reachable at {engine.where} ({engine.detail}); "
            "start Docker or set DOCKER_HOST, or use --backend local"
        )
    return BackendChoice("local", requested, engine)


# --- containers ------------------------------------------------------------------------------------


def health_verdict(state: Mapping[str, Any]) -> tuple[Literal["ready", "waiting", "failed"], str]:
    """Read a container's ``State`` (Docker API): ready, still waiting, or failed for good."""
    status = str(state.get("Status") or "unknown")
    if status in ("exited", "dead", "removing"):
        error = state.get("Error") or ""
        code = state.get("ExitCode")
        return "failed", f"container {status} with exit code {code}" + (f": {error}" if error else "")
    if status == "paused":
        return "failed", "container is paused"
    if status != "running":
        return "waiting", f"container {status}"
    health = state.get("Health") or {}
    health_status = health.get("Status")
    if not health_status or health_status == "none":
        return "ready", "running (no healthcheck)"
    if health_status == "healthy":
        return "ready", "healthy"
    if health_status == "unhealthy":
        log = health.get("Log") or []
        last = " ".join(str(log[-1].get("Output", "")).split()) if log else ""
        return "failed", "unhealthy" + (f": last check said {last[:300]!r}" if last else "")
    streak = health.get("FailingStreak") or 0
    return "waiting", f"{health_status}" + (f", {streak} failed check(s) so far" if streak else "")


@contextmanager
def _engine_errors(what: str) -> Iterator[None]:
    """Docker SDK and HTTP errors become one-line BrokerErrors."""
    errors = _sdk_errors()
    try:
        yield
    except BrokerError:
        raise
    except errors as exc:
        raise BrokerError(f"{what}: {_one_line(exc)}") from None


class DockerBroker(Broker):
    """One compose service as a :class:`Broker`: same interface as the local brokers.

    Not registered in the local registry (no class-level ``name``): there is one class for every
    compose service, and the instance carries the name, protocols and credentials read from the
    compose file.
    """

    debian_packages: ClassVar[tuple[str, ...]] = ()
    default_ports: ClassVar[Mapping[str, int]] = {}
    #: JVM brokers need tens of seconds; image pulls happen before this deadline starts
    start_timeout: ClassVar[float] = 240.0
    log_lines: ClassVar[int] = 25

    def __init__(self, service: ComposeService, engine: EngineProbe | None = None) -> None:
        # Broker.__init__ is not called: ports come from the compose file, not AMQPSPEC_*_PORT
        self.service = service
        self.name = service.name  # type: ignore[misc]
        self.protocols = service.protocols  # type: ignore[misc]
        self.credentials = service.credentials  # type: ignore[misc]
        self.ports = service.host_ports()
        self.state_dir = state_root() / service.name
        self._engine = engine

    @property
    def engine(self) -> EngineProbe:
        if self._engine is None:
            self._engine = probe_engine()
        return self._engine

    @property
    def image(self) -> str:
        return self.service.image

    def install(self) -> list[str]:
        """Nothing to install from Debian: ``start`` pulls the image when it is missing."""
        return []

    def _client(self) -> Any:
        engine = self.engine
        if not engine.reachable:
            raise BrokerError(
                f"{self.name}: no Docker engine reachable at {engine.where} ({engine.detail}); this broker "
                f"runs in a container: start Docker or set DOCKER_HOST, or use a local broker "
                "(amqpspec brokers list --backend local)"
            )
        return engine.client

    def _find(self, client: Any) -> tuple[Any, bool] | None:
        """Our container (True), else one ``docker compose up`` made for this service (False)."""
        with _engine_errors(f"{self.name}: listing containers at {self.engine.where}"):
            ours = client.containers.list(all=True, filters={"label": [f"{LABEL_SERVICE}={self.name}"]})
            if ours:
                return ours[0], True
            theirs = client.containers.list(
                all=True, filters={"label": [f"{COMPOSE_SERVICE_LABEL}={self.name}", LABEL_PROTOCOLS]}
            )
        if not theirs:
            return None
        running = [c for c in theirs if c.status == "running"]
        return (running or theirs)[0], False

    @staticmethod
    def _state(container: Any) -> Mapping[str, Any]:
        state = container.attrs.get("State")
        return state if isinstance(state, dict) else {}

    # --- state -------------------------------------------------------------------------------

    def is_running(self) -> bool:
        """Healthy container and an open host port; without an engine, only the port can tell."""
        if not self.engine.reachable:
            return port_accepts(self.port)
        found = self._find(self._client())
        if found is None:
            return False
        verdict, _ = health_verdict(self._state(found[0]))
        return verdict == "ready" and port_accepts(self.port)

    def status(self) -> BrokerStatus:
        url = redact_url(self.url)
        engine = self.engine
        if not engine.reachable:
            running = port_accepts(self.port)
            detail = f"unavailable: no Docker engine reachable at {engine.where}"
            if running:
                detail += f"; port {self.port} accepts TCP"
            return BrokerStatus(self.name, self.protocols, url, running, None, detail)
        found = self._find(self._client())
        if found is None:
            running = port_accepts(self.port)
            detail = f"port {self.port} accepts TCP (not a container amqpspec knows)" if running else "stopped"
            return BrokerStatus(self.name, self.protocols, url, running, None, detail)
        container, ours = found
        state = self._state(container)
        verdict, health = health_verdict(state)
        running = verdict == "ready" and port_accepts(self.port)
        origin = "" if ours else f", started by docker compose (project {self._project(container)})"
        pid = state.get("Pid") or None
        detail = f"container {container.name} ({self.image}): {health}{origin}"
        return BrokerStatus(self.name, self.protocols, url, running, pid, detail)

    @staticmethod
    def _project(container: Any) -> str:
        return str((container.labels or {}).get(COMPOSE_PROJECT_LABEL, "?"))

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self, timeout: float | None = None) -> bool:
        """Create and start the container (pulling the image first), wait until healthy.

        Returns False when a container for this service already runs (after waiting for it to
        become healthy if it is still booting). On failure the container we created is removed
        and :class:`BrokerStartError` carries the tail of its log.
        """
        client = self._client()
        budget = self.start_timeout if timeout is None else timeout
        found = self._find(client)
        if found is not None:
            container, ours = found
            if container.status == "running":
                self._wait_ready(container, time.monotonic() + budget, created=False)
                return False
            if not ours:  # stopped compose container: start it as compose would, keep it
                with _engine_errors(f"{self.name}: starting container {container.name}"):
                    container.start()
                self._wait_ready(container, time.monotonic() + budget, created=False)
                return True
            with _engine_errors(f"{self.name}: removing stopped container {container.name}"):
                container.remove(force=True)  # ours and stopped: recreate from the current compose file
        self._require_free_ports(self.ports.values())
        self._check_mounts()
        self._ensure_image(client)
        deadline = time.monotonic() + budget
        with _engine_errors(f"{self.name}: creating container from {self.image}"):
            container = client.containers.run(**run_kwargs(self.service))
        self._wait_ready(container, deadline, created=True)
        return True

    def _require_free_ports(self, ports: Iterable[int]) -> None:
        """As for local brokers, but the way out differs: these ports are fixed in the compose file."""
        busy = [p for p in ports if port_accepts(p)]
        if busy:
            raise BrokerError(
                f"{self.name}: port(s) {', '.join(map(str, busy))} on {LOOPBACK} already in use by another "
                f"process or container; stop it (the ports are fixed in {COMPOSE_FILE_NAME})"
            )

    def _check_mounts(self) -> None:
        """A missing bind source would be created as an empty directory by the engine."""
        for mount in self.service.volumes:
            if not mount.source.exists():
                raise BrokerError(
                    f"{self.name}: {mount.source} (mounted at {mount.target}) does not exist; "
                    "run from a complete amqpspec checkout"
                )

    def _ensure_image(self, client: Any) -> None:
        sdk = _sdk()
        try:
            client.images.get(self.image)
            return
        except sdk.errors.ImageNotFound:
            pass
        except _sdk_errors() as exc:
            raise BrokerError(f"{self.name}: looking up image {self.image}: {_one_line(exc)}") from None
        with _engine_errors(f"{self.name}: cannot pull {self.image}"):
            client.images.pull(self.image)

    def _wait_ready(self, container: Any, deadline: float, *, created: bool) -> None:
        detail = "not inspected yet"
        try:
            while True:
                with _engine_errors(f"{self.name}: inspecting container {container.name}"):
                    container.reload()
                verdict, detail = health_verdict(self._state(container))
                if verdict == "ready":
                    if port_accepts(self.port):
                        return
                    detail = f"{detail}, but {LOOPBACK}:{self.port} does not accept TCP"
                elif verdict == "failed":
                    raise self._container_error(container, detail)
                if time.monotonic() > deadline:
                    raise self._container_error(container, f"not healthy before the deadline (last: {detail})")
                time.sleep(0.5)
        except BrokerStartError:
            if created:
                self._remove_quietly(container)
            raise

    def _remove_quietly(self, container: Any) -> None:
        try:
            with _engine_errors("cleanup"):
                container.remove(force=True, v=True)
        except BrokerError:
            pass

    def _container_error(self, container: Any, what: str) -> BrokerStartError:
        return BrokerStartError(
            f"{self.name} did not start: {what}; container {container.name} from {self.image}\n"
            f"--- last lines of `docker logs {container.name}`:\n{self._logs(container)}"
        )

    def _logs(self, container: Any) -> str:
        """The log tail, with the test password masked unless it is just the user name again."""
        try:
            with _engine_errors("logs"):
                raw = container.logs(tail=self.log_lines)
        except BrokerError as exc:
            return f"(no log: {exc})"
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        if self.credentials and self.credentials[1] != self.credentials[0]:
            scrubber = Scrubber()
            scrubber.register(self.credentials[1])
            text = scrubber.scrub(text)
        return text.rstrip("\n") or "(empty)"

    def stop(self) -> bool:
        """Stop and remove our container. Containers from ``docker compose up`` are left to compose."""
        engine = self.engine
        if not engine.reachable:
            if port_accepts(self.port):
                raise BrokerError(
                    f"{self.name}: port {self.port} accepts TCP, but no Docker engine is reachable at "
                    f"{engine.where} to stop it ({engine.detail})"
                )
            return False
        client = self._client()
        found = self._find(client)
        if found is None:
            if port_accepts(self.port):
                raise BrokerError(
                    f"{self.name}: port {self.port} accepts TCP, but not from a container amqpspec knows; "
                    "stop that process yourself"
                )
            return False
        container, ours = found
        if not ours:
            project = self._project(container)
            raise BrokerError(
                f"{self.name}: container {container.name} was started by docker compose (project {project}); "
                f"stop it with `docker compose -p {project} stop {self.name}`"
            )
        was_running = bool(container.status == "running")
        with _engine_errors(f"{self.name}: stopping container {container.name}"):
            if was_running:
                container.stop(timeout=30)
            container.remove(v=True, force=True)
        return was_running


# --- the brokers of the compose file ---------------------------------------------------------------


def docker_brokers(engine: EngineProbe | None = None, path: Path | None = None) -> list[DockerBroker]:
    """Every broker of the compose file, sharing one engine probe."""
    return [DockerBroker(service, engine) for service in load_compose(path).services.values()]


def docker_broker_names(path: Path | None = None) -> list[str]:
    return list(load_compose(path).services)


def docker_broker(name: str, engine: EngineProbe | None = None, path: Path | None = None) -> DockerBroker:
    compose = load_compose(path)
    try:
        return DockerBroker(compose.services[name], engine)
    except KeyError:
        raise BrokerError(f"no broker {name!r} in {compose.path}") from None
