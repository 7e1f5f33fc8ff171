"""The common shape of a local broker, and the process plumbing the concrete brokers share.

A *local broker* here is a real broker from Debian's packages, started without systemd and
bound to 127.0.0.1 only, so the test suite can run against something real on a machine
without a container engine. Every broker definition (see :mod:`amqpspec.brokers.local`)
subclasses :class:`Broker`; defining the subclass is what registers it, so the list of
brokers, their Debian packages and their ports each live in exactly one place.

Configuration comes from the environment, read when a broker object is created:

``AMQPSPEC_STATE_DIR``
    Parent of each broker's state directory (config copies, databases, logs, pid files,
    TLS material). Default ``/tmp/amqpspec-brokers``; it must be traversable by the
    ``rabbitmq`` user, which is why the default is not under ``/root``.
``AMQPSPEC_<NAME>_<PORT>``
    Override one port, e.g. ``AMQPSPEC_RABBITMQ_PORT=5682``. The port names of each broker
    are the keys of its :attr:`Broker.default_ports` (``port`` is the AMQP port and maps to
    ``AMQPSPEC_<NAME>_PORT``, ``tls_port`` to ``AMQPSPEC_<NAME>_TLS_PORT``, and so on).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar
from urllib.parse import urlsplit, urlunsplit

from amqpspec.brokers import apt
from amqpspec.brokers.errors import BrokerError, BrokerStartError

DEFAULT_STATE_DIR = "/tmp/amqpspec-brokers"
LOOPBACK = "127.0.0.1"

#: every concrete broker class, in definition order; filled by ``Broker.__init_subclass__``
_REGISTRY: dict[str, type[Broker]] = {}


@dataclass(frozen=True)
class BrokerStatus:
    """A snapshot for ``amqpspec brokers list`` and for humans; never contains a password."""

    name: str
    protocols: tuple[str, ...]
    url: str
    running: bool
    pid: int | None
    detail: str


def state_root() -> Path:
    """The directory under which every broker keeps its state (``AMQPSPEC_STATE_DIR``)."""
    return Path(os.environ.get("AMQPSPEC_STATE_DIR") or DEFAULT_STATE_DIR)


def redact_url(url: str) -> str:
    """Drop the password from a URL, keep the user: reports must not carry secrets."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{hostport}" if user else hostport))


def port_accepts(port: int, host: str = LOOPBACK, timeout: float = 0.5) -> bool:
    """True when a TCP connect succeeds: the cheapest proof that something is serving."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def log_tail(paths: Iterable[Path], lines: int = 25) -> str:
    """The last ``lines`` lines of each existing log, labelled, for error messages."""
    chunks: list[str] = []
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError:
            continue
        text = data.decode("utf-8", "replace").rstrip("\n")
        if not text:
            chunks.append(f"--- {path}: empty")
            continue
        tail = text.splitlines()[-lines:]
        chunks.append(f"--- last {len(tail)} lines of {path}:\n" + "\n".join(tail))
    return "\n".join(chunks) if chunks else "(no log output)"


def rotate(path: Path) -> None:
    """Keep the previous run's log as ``NAME.1``, so an error tail shows only this run."""
    if path.exists() and path.stat().st_size:
        path.replace(path.with_name(path.name + ".1"))


def pid_alive(pid: int) -> bool:
    """True for a live process; a zombie counts as dead (it no longer serves anything).

    Reaps the process first when it is our own child, so a broker we started and then
    killed in the same Python process does not linger as a zombie.
    """
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # the state letter follows the parenthesised command name, which may contain spaces
    return stat.rpartition(")")[2].split()[0] != "Z"


def pid_cmdline(pid: int) -> list[str]:
    """The argv of a process, or [] when it is gone (guards against reused pids)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [arg.decode("utf-8", "replace") for arg in raw.split(b"\0") if arg]


class Broker(ABC):
    """A broker that this machine can install from Debian and run on 127.0.0.1.

    Subclasses declare the class attributes below; defining a subclass with a ``name``
    registers it (see :func:`amqpspec.brokers.registry`).
    """

    #: registry key and CLI name
    name: ClassVar[str]
    #: AMQP versions the broker speaks, as amqpspec names them ("0-9-1", "1.0")
    protocols: ClassVar[tuple[str, ...]]
    #: the single list of Debian packages the broker needs (scripts ask Python for it)
    debian_packages: ClassVar[tuple[str, ...]]
    #: port name -> default; ``port`` is the plain AMQP listener
    default_ports: ClassVar[Mapping[str, int]]
    #: credentials in the URL, or None for brokers that only do SASL ANONYMOUS
    credentials: ClassVar[tuple[str, str] | None] = ("guest", "guest")
    #: seconds start() waits by default
    start_timeout: ClassVar[float] = 30.0

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if name:
            if name in _REGISTRY:
                raise TypeError(f"two broker definitions are named {name!r}")
            _REGISTRY[name] = cls

    def __init__(self) -> None:
        self.ports: dict[str, int] = {
            key: self._port_from_env(key, default) for key, default in self.default_ports.items()
        }
        self.state_dir: Path = state_root() / self.name

    def _port_from_env(self, key: str, default: int) -> int:
        suffix = "PORT" if key == "port" else key.upper()
        var = f"AMQPSPEC_{self.name.upper()}_{suffix}"
        raw = os.environ.get(var)
        if not raw:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise BrokerError(f"{var}={raw!r} is not a port number") from None
        if not 0 < value < 65536:
            raise BrokerError(f"{var}={raw!r} is not a port number (1-65535)")
        return value

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {redact_url(self.url)}>"

    # --- addresses -------------------------------------------------------------------------

    @property
    def host(self) -> str:
        return LOOPBACK

    @property
    def port(self) -> int:
        """The plain AMQP port."""
        return self.ports["port"]

    def _make_url(self, scheme: str, port: int) -> str:
        userinfo = ""
        if self.credentials is not None:
            userinfo = "{}:{}@".format(*self.credentials)
        return f"{scheme}://{userinfo}{self.host}:{port}/"

    @property
    def url(self) -> str:
        """Plain AMQP URL, with the default credentials (``amqp://guest:guest@127.0.0.1:5672/``)."""
        return self._make_url("amqp", self.port)

    @property
    def tls_url(self) -> str | None:
        """``amqps://`` URL when the broker has a TLS listener, else None."""
        return None

    @property
    def cafile(self) -> str | None:
        """PEM file of the CA that signed the broker's TLS certificate, else None."""
        return None

    @property
    def log_files(self) -> tuple[Path, ...]:
        """Where to look when something goes wrong, most useful first."""
        return ()

    # --- lifecycle -------------------------------------------------------------------------

    def install(self) -> list[str]:
        """Install the Debian packages; a fast no-op when they are there. Returns what was installed."""
        return apt.install(self.debian_packages)

    def require_installed(self) -> None:
        """Fail early, with the command that fixes it, rather than with a missing binary."""
        missing = apt.missing(self.debian_packages)
        if missing:
            raise BrokerError(
                f"{self.name}: Debian package(s) not installed: {' '.join(missing)}; "
                f"run `python3 -m amqpspec.brokers install {self.name}` (as root) first"
            )

    @abstractmethod
    def is_running(self) -> bool:
        """True when the broker accepts connections on its AMQP port."""

    @abstractmethod
    def start(self, timeout: float | None = None) -> bool:
        """Start and wait until ready. Returns False when it was already running (no-op).

        Raises :class:`BrokerStartError` with the log tail when it does not come up.
        """

    @abstractmethod
    def stop(self) -> bool:
        """Stop the broker. Returns False when there was nothing to stop."""

    @abstractmethod
    def status(self) -> BrokerStatus:
        """A password-free snapshot of the broker's state."""

    def _wait_ports(
        self, ports: Iterable[int], deadline: float, alive: Callable[[], bool] = lambda: True
    ) -> None:
        """Wait until every port accepts TCP, or raise; ``alive`` lets us stop waiting on a dead process."""
        pending = list(ports)
        while pending:
            pending = [p for p in pending if not port_accepts(p)]
            if not pending:
                return
            if not alive():
                raise self._start_error("the process exited before its port(s) accepted TCP")
            if time.monotonic() > deadline:
                raise self._start_error(
                    f"port(s) {', '.join(map(str, pending))} did not accept TCP before the deadline"
                )
            time.sleep(0.1)

    def _require_free_ports(self, ports: Iterable[int]) -> None:
        """Refuse to start when another process holds one of our ports.

        Why: our readiness check is "the port accepts TCP", which a squatter would satisfy
        while the broker itself failed to bind (RabbitMQ even keeps running without the
        listener it could not open).
        """
        busy = [p for p in ports if port_accepts(p)]
        if busy:
            raise BrokerError(
                f"{self.name}: port(s) {', '.join(map(str, busy))} on {LOOPBACK} already in use by "
                f"another process; stop it or choose other ports (AMQPSPEC_{self.name.upper()}_*PORT)"
            )

    def _start_error(self, what: str) -> BrokerStartError:
        files = self.log_files
        where = ", ".join(str(p) for p in files) or "(no log)"
        return BrokerStartError(f"{self.name} did not start: {what}; see {where}\n{log_tail(files)}", files)


class ProcessBroker(Broker):
    """A broker that is one foreground process we launch and own, in its own process group.

    Why a process group: stopping must also end whatever the broker forked, and a new
    session keeps the broker alive when the starting shell or CLI exits (``brokers up``).
    The pid file in the state directory is how a later ``brokers down`` finds it.
    """

    #: a string that must occur in the process's argv, so a reused pid is not killed
    process_marker: ClassVar[str]
    start_timeout: ClassVar[float] = 15.0

    #: Popen objects of brokers this Python process started, so stop() can reap them
    _children: ClassVar[dict[int, subprocess.Popen[bytes]]] = {}

    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{self.name}.pid"

    @property
    def output_file(self) -> Path:
        """stdout and stderr of the broker process."""
        return self.state_dir / f"{self.name}.out"

    @property
    def log_files(self) -> tuple[Path, ...]:
        return (self.output_file,)

    @abstractmethod
    def command(self) -> list[str]:
        """argv of the broker process."""

    def prepare(self) -> None:
        """Write whatever the command needs (config copies, directories) before launch."""
        self.state_dir.mkdir(parents=True, exist_ok=True)

    def child_env(self) -> dict[str, str]:
        return dict(os.environ)

    def pid(self) -> int | None:
        """The pid from our pid file, if that process is alive and still the broker."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        if not pid_alive(pid):
            return None
        if not any(self.process_marker in arg for arg in pid_cmdline(pid)):
            return None
        return pid

    def is_running(self) -> bool:
        return port_accepts(self.port)

    def start(self, timeout: float | None = None) -> bool:
        if self.is_running():
            return False
        self.require_installed()
        stale = self.pid()
        if stale is not None:  # ours, but not serving: a hung earlier start
            self._kill_group(stale)
        self._require_free_ports(self.ports.values())
        self.prepare()
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        with open(self.output_file, "wb") as out:
            proc = subprocess.Popen(
                self.command(),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.state_dir,
                env=self.child_env(),
                start_new_session=True,
            )
        self._children[proc.pid] = proc
        self.pid_file.write_text(f"{proc.pid}\n")
        try:
            self._wait_ports([self.port], deadline, alive=lambda: proc.poll() is None)
        except BrokerStartError as exc:
            code = proc.poll()
            self._kill_group(proc.pid)
            if code is not None:
                raise self._start_error(
                    f"the process exited with code {code} before its port accepted TCP"
                ) from exc
            raise
        return True

    def stop(self) -> bool:
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            if self.is_running():
                raise BrokerError(
                    f"{self.name}: port {self.port} accepts TCP, but not from a process amqpspec "
                    f"started (no live pid in {self.pid_file}); stop that process yourself"
                )
            return False
        self._kill_group(pid)
        return True

    def _kill_group(self, pid: int, grace: float = 10.0) -> None:
        """SIGTERM the group, SIGKILL what is left after ``grace`` seconds, reap if ours."""
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(pid, sig)
            except ProcessLookupError:
                break
            except PermissionError as exc:
                raise BrokerError(f"{self.name}: not allowed to stop process group {pid}: {exc}") from exc
            end = time.monotonic() + wait
            while pid_alive(pid) and time.monotonic() < end:
                time.sleep(0.05)
            if not pid_alive(pid):
                break
        proc = self._children.pop(pid, None)
        if proc is not None:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.pid_file.unlink(missing_ok=True)
        if pid_alive(pid):
            raise BrokerError(f"{self.name}: process {pid} survived SIGKILL")

    def status(self) -> BrokerStatus:
        pid = self.pid()
        running = self.is_running()
        if running and pid is not None:
            detail = f"pid {pid}, started by amqpspec"
        elif running:
            detail = f"port {self.port} accepts TCP (not started by amqpspec)"
        elif pid is not None:
            detail = f"process {pid} alive but port {self.port} closed"
        else:
            detail = "stopped"
        return BrokerStatus(self.name, self.protocols, redact_url(self.url), running, pid, detail)
