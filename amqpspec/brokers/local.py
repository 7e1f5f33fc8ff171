"""The three local brokers: RabbitMQ, garagemq and the Qpid Proton example broker.

Each class here is the one place that says which Debian packages a broker needs, which
ports it uses and how it is started; the registry, the CLI and the scripts all read these
definitions. All of them bind to 127.0.0.1 only and start without systemd.

============  ==========  =======================================  ========================
broker        protocols   ports (default)                          env overrides
============  ==========  =======================================  ========================
rabbitmq      0-9-1, 1.0  AMQP 5672, AMQPS 5671, management 15672  AMQPSPEC_RABBITMQ_PORT,
                                                                   ..._TLS_PORT,
                                                                   ..._MANAGEMENT_PORT
garagemq      0-9-1       AMQP 5673, admin 15673                   AMQPSPEC_GARAGEMQ_PORT,
                                                                   ..._ADMIN_PORT
proton        1.0         AMQP 5674                                AMQPSPEC_PROTON_PORT
============  ==========  =======================================  ========================
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path
from typing import ClassVar

from amqpspec.brokers.base import (
    LOOPBACK,
    Broker,
    BrokerStatus,
    ProcessBroker,
    pid_alive,
    pid_cmdline,
    port_accepts,
    redact_url,
    rotate,
)
from amqpspec.brokers.errors import BrokerError, BrokerStartError
from amqpspec.brokers.tls import TLSFiles, ensure_server_identity

_CONFIG_HEADER = "# Written by amqpspec (amqpspec/brokers/local.py) for local test runs."


class RabbitMQ(Broker):
    """Debian's RabbitMQ 3.10 as node ``rabbit@localhost``, AMQP 0-9-1 and 1.0 on one port.

    Why these choices (see ../shared/BROKERS.md): the ``/usr/sbin`` wrappers switch to the
    ``rabbitmq`` user so server and CLI share one Erlang cookie, which is why the node can
    only be managed as root; ``rabbitmqctl await_startup`` exits 69 at once until the node
    is registered with epmd, so readiness is a loop with a deadline; the CLI itself starts
    epmd, so stop() always ends with ``epmd -kill``.

    Configuration is written to ``/etc/rabbitmq/rabbitmq.conf`` (a foreign file found there
    is kept as ``rabbitmq.conf.before-amqpspec``); logs go to ``<state>/rabbitmq/log`` and
    the TLS material (``ca.pem`` for clients) to ``<state>/rabbitmq/tls``. The message
    store stays in Debian's ``/var/lib/rabbitmq/mnesia``, so vhosts and users that tests
    add survive a restart: tests must remove what they add. There is one such node per
    machine: whoever starts it decides its config, so a second state dir sees the same node
    (and its own, unused, ``cafile``).
    """

    name = "rabbitmq"
    protocols = ("0-9-1", "1.0")
    debian_packages = ("rabbitmq-server", "openssl")
    default_ports = {"port": 5672, "tls_port": 5671, "management_port": 15672}
    start_timeout = 60.0

    node_name: ClassVar[str] = "rabbit@localhost"
    plugins: ClassVar[tuple[str, ...]] = ("rabbitmq_amqp1_0", "rabbitmq_management")
    config_file: ClassVar[Path] = Path("/etc/rabbitmq/rabbitmq.conf")
    enabled_plugins_file: ClassVar[Path] = Path("/etc/rabbitmq/enabled_plugins")
    pid_file: ClassVar[Path] = Path("/var/lib/rabbitmq/mnesia/rabbit@localhost.pid")
    sbin: ClassVar[Path] = Path("/usr/sbin")
    service_user: ClassVar[str] = "rabbitmq"

    # --- addresses -------------------------------------------------------------------------

    @property
    def tls_port(self) -> int:
        return self.ports["tls_port"]

    @property
    def management_port(self) -> int:
        return self.ports["management_port"]

    @property
    def tls_url(self) -> str:
        """``amqps://guest:guest@127.0.0.1:5671/``; the certificate has an IP SAN for it."""
        return self._make_url("amqps", self.tls_port)

    @property
    def distribution_port(self) -> int:
        """Erlang distribution (CLI tools talk to the node here): the AMQP port + 20000.

        Set explicitly (``RABBITMQ_DIST_PORT``) because RabbitMQ derives its default from
        ``RABBITMQ_NODE_PORT``, not from the listener in rabbitmq.conf.
        """
        return self.port + 20000

    @property
    def management_url(self) -> str:
        return f"http://{LOOPBACK}:{self.management_port}/"

    @property
    def tls_dir(self) -> Path:
        return self.state_dir / "tls"

    @property
    def cafile(self) -> str:
        """CA file for clients (``--cafile``); it exists once start() has run."""
        return str(self.tls_dir / "ca.pem")

    @property
    def log_dir(self) -> Path:
        return self.state_dir / "log"

    @property
    def server_output(self) -> Path:
        """What ``rabbitmq-server -detached`` printed (early boot errors land here)."""
        return self.state_dir / "rabbitmq-server.out"

    @property
    def log_files(self) -> tuple[Path, ...]:
        return (self.log_dir / f"{self.node_name}.log", self.server_output)

    # --- commands --------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        """Environment for server and CLI; ``su`` (inside the wrappers) passes it through."""
        return dict(
            os.environ,
            RABBITMQ_NODENAME=self.node_name,
            ERL_EPMD_ADDRESS=LOOPBACK,
            RABBITMQ_LOG_BASE=str(self.log_dir),
            RABBITMQ_DIST_PORT=str(self.distribution_port),
        )

    @staticmethod
    def _wrapper_quote(arg: str) -> str:
        """Pre-escape an argument for the Debian wrapper's ``su -c "..."`` double quotes.

        The wrapper escapes only ``"``; ``$``, backquote and backslash would be expanded by
        the inner shell, so user names or passwords with them would arrive changed.
        """
        if "\n" in arg or arg.startswith("\t"):
            raise BrokerError(
                f"rabbitmqctl argument {arg!r}: the Debian wrapper cannot pass newlines or leading tabs"
            )
        return re.sub(r"([\\$`])", r"\\\1", arg)

    def ctl(self, *args: str, check: bool = True, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run ``rabbitmqctl ARGS`` against our node, e.g. ``ctl("add_vhost", "v1")``.

        Arguments reach rabbitmqctl unchanged (see :meth:`_wrapper_quote`). With
        ``check`` a non-zero exit raises :class:`BrokerError` carrying the CLI's output.
        """
        return self._sbin("rabbitmqctl", *args, check=check, timeout=timeout)

    def _sbin(
        self, tool: str, *args: str, check: bool = True, timeout: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        argv = [str(self.sbin / tool), *(self._wrapper_quote(a) if os.geteuid() == 0 else a for a in args)]
        try:
            proc = subprocess.run(
                argv,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except FileNotFoundError as exc:
            raise BrokerError(
                f"{argv[0]} not found; run `python3 -m amqpspec.brokers install rabbitmq`"
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise BrokerError(f"`{tool} {' '.join(args)}` did not finish within {timeout:.0f} s") from exc
        if check and proc.returncode != 0:
            out = (proc.stdout + proc.stderr).strip()
            raise BrokerError(f"`{tool} {' '.join(args)}` failed with exit code {proc.returncode}: {out}")
        return proc

    # --- state -----------------------------------------------------------------------------

    def node_pid(self) -> int | None:
        """Pid of our node's Erlang VM, found even while it boots (before the port opens)."""
        try:
            pid = int(self.pid_file.read_text().strip())
            if pid_alive(pid) and "beam" in " ".join(pid_cmdline(pid)):
                return pid
        except (OSError, ValueError):
            pass
        # before the node writes its pid file: any rabbit VM whose env names our node
        for proc in Path("/proc").glob("[0-9]*"):
            argv = pid_cmdline(int(proc.name))
            if not argv or not argv[0].endswith("beam.smp") or "rabbit" not in argv:
                continue
            try:
                environ = (proc / "environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if f"RABBITMQ_NODENAME={self.node_name}".encode() in environ and pid_alive(int(proc.name)):
                return int(proc.name)
        return None

    def is_running(self) -> bool:
        return port_accepts(self.port)

    def status(self) -> BrokerStatus:
        running = self.is_running()
        pid = self.node_pid()
        if running:
            tls = "TLS up" if port_accepts(self.tls_port) else "TLS port closed"
            where = f"node {self.node_name}, pid {pid}" if pid else "not node " + self.node_name
            detail = f"{where}; {tls}"
        elif pid:
            detail = f"booting or stuck (node {self.node_name}, pid {pid})"
        else:
            detail = "stopped"
        return BrokerStatus(self.name, self.protocols, redact_url(self.url), running, pid, detail)

    # --- lifecycle -------------------------------------------------------------------------

    def _require_root(self) -> None:
        if os.geteuid() != 0:
            raise BrokerError(
                "rabbitmq: Debian's rabbitmq wrappers only work as root (they switch to the "
                "rabbitmq user); run this as root"
            )

    def _prepare_tls(self) -> TLSFiles:
        files = ensure_server_identity(self.tls_dir)
        shutil.chown(files.keyfile, "root", self.service_user)
        files.keyfile.chmod(0o640)
        return files

    def _prepare_dirs(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.state_dir.chmod(0o755)
        self.log_dir.mkdir(exist_ok=True)
        shutil.chown(self.log_dir, self.service_user, self.service_user)

    def _check_access(self, files: TLSFiles) -> None:
        """The node runs as ``rabbitmq``: a state dir under /root would fail much later."""
        for test, path in (("-r", files.keyfile), ("-r", files.certfile), ("-w", self.log_dir)):
            ok = (
                subprocess.run(["runuser", "-u", self.service_user, "--", "test", test, str(path)]).returncode
                == 0
            )
            if not ok:
                raise BrokerError(
                    f"rabbitmq: the {self.service_user} user cannot {'read' if test == '-r' else 'write'} "
                    f"{path}; set AMQPSPEC_STATE_DIR to a directory every user can traverse "
                    "(default /tmp/amqpspec-brokers)"
                )

    def render_config(self, files: TLSFiles) -> str:
        """The complete rabbitmq.conf; only keys that differ from Debian's defaults."""
        return "\n".join(
            [
                _CONFIG_HEADER,
                f"listeners.tcp.default = {LOOPBACK}:{self.port}",
                f"listeners.ssl.default = {LOOPBACK}:{self.tls_port}",
                f"ssl_options.cacertfile = {files.cafile}",
                f"ssl_options.certfile = {files.certfile}",
                f"ssl_options.keyfile = {files.keyfile}",
                "ssl_options.verify = verify_none",
                "ssl_options.fail_if_no_peer_cert = false",
                f"distribution.listener.interface = {LOOPBACK}",
                f"management.tcp.ip = {LOOPBACK}",
                f"management.tcp.port = {self.management_port}",
                "",
            ]
        )

    def _write_config(self, files: TLSFiles) -> None:
        text = self.render_config(files)
        path = self.config_file
        if path.exists():
            current = path.read_text()
            if current == text:
                return
            backup = path.with_name(path.name + ".before-amqpspec")
            if not current.startswith(_CONFIG_HEADER) and not backup.exists():
                shutil.copy2(path, backup)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        path.chmod(0o644)

    def _enable_plugins(self) -> None:
        """Offline, and only when needed: ``rabbitmq-plugins`` costs a second of VM startup."""
        try:
            enabled = set(re.findall(r"[a-z0-9_]+", self.enabled_plugins_file.read_text()))
        except OSError:
            enabled = set()
        if set(self.plugins) <= enabled:
            return
        self._sbin("rabbitmq-plugins", "enable", "--offline", *self.plugins)

    def start(self, timeout: float | None = None) -> bool:
        """Start the node (or join one that is booting) and wait for AMQP and AMQPS ports.

        Returns False when the AMQP port already accepted connections. On failure the node
        is shut down again and :class:`BrokerStartError` carries the log tail.
        """
        if self.is_running():
            return False
        self._require_root()
        self.require_installed()
        deadline = time.monotonic() + (self.start_timeout if timeout is None else timeout)
        launched = False
        if self.node_pid() is None:
            self._require_free_ports([*self.ports.values(), self.distribution_port])
            self._prepare_dirs()
            rotate(self.log_files[0])
            files = self._prepare_tls()
            self._check_access(files)
            self._write_config(files)
            self._enable_plugins()
            with open(self.server_output, "wb") as out:
                proc = subprocess.run(
                    [str(self.sbin / "rabbitmq-server"), "-detached"],
                    env=self.env(),
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=max(1.0, deadline - time.monotonic()),
                )
            if proc.returncode != 0:
                raise self._start_error(f"`rabbitmq-server -detached` exited with code {proc.returncode}")
            launched = True
        try:
            self._await_startup(deadline)
            # booted means every listener was opened or failed: no need to wait long now
            self._wait_ports([self.port, self.tls_port], min(deadline, time.monotonic() + 10))
            self._check_tls()
        except BrokerStartError:
            if launched:
                try:
                    self.stop()
                except BrokerError:
                    pass
            raise
        return True

    def _await_startup(self, deadline: float) -> None:
        launched_at = time.monotonic()
        last = ""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._start_error(
                    f"`rabbitmqctl await_startup` did not succeed in time (last: {last or 'no output'})"
                )
            try:
                proc = self.ctl(
                    "await_startup",
                    "--timeout",
                    str(max(1, int(remaining))),
                    check=False,
                    timeout=remaining + 5,
                )
            except BrokerError as exc:
                raise self._start_error(str(exc)) from exc
            if proc.returncode == 0:
                return
            last = f"exit code {proc.returncode}"
            # 69 = node not registered yet; give the VM a few seconds to appear at all
            if time.monotonic() - launched_at > 10 and self.node_pid() is None:
                raise self._start_error(
                    "the Erlang VM of node rabbit@localhost is not running (it exited during boot)"
                )
            time.sleep(0.5)

    def _check_tls(self) -> None:
        """A TLS handshake with our CA; an open port alone proves little.

        Why: Erlang opens the TLS listener before it reads the key, so a bad key or
        certificate shows only at the first handshake.
        """
        context = ssl.create_default_context(cafile=self.cafile)
        try:
            with socket.create_connection((LOOPBACK, self.tls_port), timeout=5) as raw:
                with context.wrap_socket(raw, server_hostname="localhost"):
                    pass
        except (OSError, ssl.SSLError) as exc:
            raise self._start_error(
                f"TLS handshake on port {self.tls_port} with CA {self.cafile} failed: {exc}"
            ) from exc

    def stop(self) -> bool:
        """``rabbitmqctl shutdown`` (waits for the VM to exit), then ``epmd -kill``."""
        pid = self.node_pid()
        if pid is None and not self.is_running():
            return False
        self._require_root()
        proc = self.ctl("shutdown", check=False, timeout=120)
        subprocess.run(["epmd", "-kill"], env=self.env(), capture_output=True)
        if proc.returncode != 0 and (self.is_running() or self.node_pid() is not None):
            out = (proc.stdout + proc.stderr).strip().splitlines()
            raise BrokerError(
                f"rabbitmq: `rabbitmqctl shutdown` failed (exit code {proc.returncode}) and port "
                f"{self.port} is still served — is it a node other than {self.node_name}? "
                + " / ".join(out[:3])
            )
        return True


class GarageMQ(ProcessBroker):
    """garagemq, a small Go broker for AMQP 0-9-1, as a child process with its own config.

    Why a private config: Debian's ``/etc/garagemq/config.yaml`` listens on RabbitMQ's ports
    and keeps its database in /var/lib; the copy in the state dir moves both, so the two
    brokers run side by side. Default user ``guest``/``guest`` comes from that config.
    """

    name = "garagemq"
    protocols = ("0-9-1",)
    debian_packages = ("garagemq",)
    default_ports = {"port": 5673, "admin_port": 15673}
    process_marker = "garagemq"
    executable: ClassVar[str] = "/usr/bin/garagemq"
    system_config: ClassVar[Path] = Path("/etc/garagemq/config.yaml")

    @property
    def config_file(self) -> Path:
        return self.state_dir / "config.yaml"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "garagemq.log"

    @property
    def log_files(self) -> tuple[Path, ...]:
        return (self.log_file, self.output_file)

    def render_config(self, template: str) -> str:
        """Debian's config with our ports and db path, everything else kept."""
        text = _set_yaml(template, "tcp", "ip", LOOPBACK)
        text = _set_yaml(text, "tcp", "port", str(self.port))
        text = _set_yaml(text, "admin", "ip", LOOPBACK)
        text = _set_yaml(text, "admin", "port", str(self.ports["admin_port"]))
        text = _set_yaml(text, "db", "defaultPath", str(self.state_dir / "db"))
        return text

    def prepare(self) -> None:
        super().prepare()
        rotate(self.log_file)
        try:
            template = self.system_config.read_text()
        except OSError as exc:
            raise BrokerError(
                f"garagemq: cannot read {self.system_config} ({exc}); reinstall the garagemq package"
            ) from exc
        self.config_file.write_text(self.render_config(template))

    def command(self) -> list[str]:
        return [self.executable, "--config", str(self.config_file), "--log-file", str(self.log_file)]


class ProtonBroker(ProcessBroker):
    """The Qpid Proton example broker (AMQP 1.0 only, queues in memory, SASL ANONYMOUS).

    Why Debian's ``/usr/bin/python3``: the example imports the ``proton`` module from
    ``python3-qpid-proton``, which lives in the system interpreter, not in the one running
    amqpspec. Every start is a fresh, empty broker.
    """

    name = "proton"
    protocols = ("1.0",)
    debian_packages = ("libqpid-proton11-dev-examples", "python3-qpid-proton")
    default_ports = {"port": 5674}
    credentials = None
    process_marker = "broker.py"
    interpreter: ClassVar[str] = "/usr/bin/python3"
    script: ClassVar[str] = "/usr/share/proton/examples/python/broker.py"

    def child_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        env["PYTHONUNBUFFERED"] = "1"
        return env

    def command(self) -> list[str]:
        return [self.interpreter, self.script, "-a", f"{LOOPBACK}:{self.port}"]


def _set_yaml(text: str, section: str, key: str, value: str) -> str:
    """Set ``section.key`` in a two-level YAML mapping, keeping comments and order.

    Why not a YAML library: this is the only YAML we touch, its shape is fixed by the
    garagemq package, and a missing key must be an error rather than silently added.
    """
    lines = text.splitlines(keepends=True)
    in_section = False
    for i, line in enumerate(lines):
        if line.strip() and not line.startswith((" ", "\t", "#")):
            in_section = line.split(":", 1)[0].strip() == section
            continue
        m = re.match(rf"^(\s+){re.escape(key)}:(\s*)([^#\n]*?)(\s*#.*)?(\r?\n)?$", line)
        if in_section and m:
            lines[i] = f"{m.group(1)}{key}: {value}{m.group(4) or ''}{m.group(5) or ''}"
            return "".join(lines)
    raise BrokerError(f"garagemq config template has no {section}.{key}; the package layout changed")
