"""Drivers: the client library under test, launched once per case (see docs/drivers.md).

A driver is ``drivers/<name>/driver.toml`` plus a program that runs one named workload
against a URL and prints one JSON event per line. This module loads the description,
runs its ``check`` and ``version`` commands, and launches it as a :class:`DriverProcess`
whose output is read by threads into bounded buffers: a driver that prints without end,
never exits or dies by a signal cannot hang or exhaust the suite. Each process runs in a
session of its own, so a kill reaches the interpreter a driver script may have started.
"""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import threading
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amqpspec.errors import UsageError
from amqpspec.sanitize import cap

EXIT_DONE, EXIT_ERROR, EXIT_UNSUPPORTED = 0, 1, 3
MAX_EVENTS = 2000            # events kept per run of a driver; more are counted, not kept
MAX_LINE = 1 << 20           # octets of one stdout line read (a delivered body may be long); longer lines are dropped
EVENT_STRING = 500           # characters of one event string kept
STDERR_TAIL = 8192           # last octets of stderr kept (a traceback's end is what tells)
CHECK_TIMEOUT_S = 60.0
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_.")


def drivers_root() -> Path:
    """Where the shipped drivers are: ``$AMQPSPEC_DRIVERS``, else ``drivers/`` of the checkout
    (next to the ``amqpspec`` package, which stays true for an editable install)."""
    env = os.environ.get("AMQPSPEC_DRIVERS")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "drivers"


@dataclass
class DriverSpec:
    name: str
    protocol: str
    command: list[str]
    directory: Path
    language: str = ""
    library: str = ""
    registry: str = ""
    setup: str = ""
    check: str = ""
    version: str = ""

    @classmethod
    def load(cls, name: str, root: Path | None = None) -> "DriverSpec":
        if not name or set(name.lower()) - NAME_CHARS or name.startswith("."):
            raise UsageError(f"bad driver name {name!r} (letters, digits, - _ . only)")
        directory = (root or drivers_root()) / name
        path = directory / "driver.toml"
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UsageError(f"no driver {name!r}: {path} does not exist (see docs/drivers.md)") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: not valid TOML: {exc}") from None
        command = data.get("command")
        if not (isinstance(command, list) and command and all(isinstance(a, str) for a in command)):
            raise UsageError(f"{path}: command must be a list of strings with {{url}} and {{workload}}")
        protocol = str(data.get("protocol", ""))
        if protocol not in ("0-9-1", "1.0"):
            raise UsageError(f"{path}: protocol must be \"0-9-1\" or \"1.0\"")
        return cls(str(data.get("name", name)), protocol, command, directory,
                   **{k: str(data.get(k, "")) for k in ("language", "library", "registry", "setup", "check", "version")})

    @classmethod
    def from_command(cls, template: str, protocol: str) -> "DriverSpec":
        """A driver given on the command line: ``--driver-cmd 'CMD {url} {workload}'``."""
        try:
            command = shlex.split(template)
        except ValueError as exc:
            raise UsageError(f"--driver-cmd does not parse: {exc}") from None
        if not command or "{url}" not in template or "{workload}" not in template:
            raise UsageError("--driver-cmd needs {url} and {workload} in it, e.g. 'python3 d.py {url} {workload}'")
        return cls("custom", protocol, command, Path.cwd(), library=command[0])

    def usable(self) -> tuple[bool, str]:
        """Runs ``check``: (True, "") when the library is usable, else (False, why)."""
        if not self.check:
            return True, ""
        code, out, err = _shell(self.check, self.directory, CHECK_TIMEOUT_S)
        if code == 0:
            return True, ""
        why = (err or out).strip().splitlines()
        return False, cap(why[-1] if why else f"check exited with {code}", 300)

    def library_version(self) -> str:
        if not self.version:
            return ""
        code, out, _ = _shell(self.version, self.directory, CHECK_TIMEOUT_S)
        return cap(out.strip().splitlines()[0], 100) if code == 0 and out.strip() else ""

    def argv(self, url: str, workload: str, options: dict[str, Any]) -> list[str]:
        args = [a.replace("{url}", url).replace("{workload}", workload) for a in self.command]
        return args + [f"{k}={_option(v)}" for k, v in options.items()]

    def launch(self, url: str, workload: str, options: dict[str, Any]) -> "DriverProcess":
        return DriverProcess(self.argv(url, workload, options), self.directory)


def _option(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _shell(command: str, cwd: Path, timeout: float) -> tuple[int, str, str]:
    try:
        done = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout:g}s"
    except OSError as exc:
        return 127, "", str(exc)
    return done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")


#: what Python prints for an exception that nobody caught while the process went on: a thread's
#: excepthook, asyncio's handler of a task, future or callback that raised
UNCAUGHT_MARKERS = ("Exception in thread ", "exception was never retrieved", "Exception in callback ")


@dataclass
class DriverOutcome:
    """How a driver run ended: its events and exit, and whether that was a crash."""

    events: list[dict[str, Any]] = field(default_factory=list)
    returncode: int | None = None     # None: still running when the suite stopped waiting (killed)
    stderr_tail: str = ""
    dropped: int = 0                  # events or lines not kept (past the caps, or not JSON)
    killed: bool = False

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e.get("event") == event]

    @property
    def crashed(self) -> bool:
        """Per the contract: exit 0 after done, 1 after an error event, 3 unsupported; any
        other ending (a signal, an uncaught exception, 1 without an error event) is a crash, and
        so is an ending by the contract after an exception nobody caught (a library thread or
        asyncio task that died while the driver went on). A traceback the library only logged
        (aiormq logs the reader's error, then raises it to the caller, who reports it as an
        error event) is not a crash."""
        if self.killed or self.returncode is None:
            return False
        if self.returncode == EXIT_ERROR:
            by_contract = bool(self.named("error"))
        else:
            by_contract = self.returncode in (EXIT_DONE, EXIT_UNSUPPORTED)
        return not by_contract or any(marker in self.stderr_tail for marker in UNCAUGHT_MARKERS)

    @property
    def unsupported(self) -> bool:
        return self.returncode == EXIT_UNSUPPORTED or bool(self.named("unsupported"))

    def summary(self) -> str:
        if self.killed:
            end = "killed by the suite (still running at the case deadline)"
        elif self.returncode is None:
            end = "still running"
        elif self.returncode < 0:
            end = f"died by signal {-self.returncode}"
        else:
            end = f"exit {self.returncode}"
        kinds: dict[str, int] = {}
        for e in self.events:
            kinds[str(e.get("event"))] = kinds.get(str(e.get("event")), 0) + 1
        shown = ", ".join(f"{k} x{n}" if n > 1 else k for k, n in kinds.items()) or "no events"
        errors = [f"{e.get('type', '')}: {e.get('message', '')}" for e in self.named("error")]
        text = f"driver {end}; events: {shown}" + (f"; error {errors[0]}" if errors else "")
        if self.crashed:
            text += "; CRASH" + (f" ({self.stderr_tail.strip().splitlines()[-1]})" if self.stderr_tail.strip() else "")
        return cap(text, 600)


def _kept(event: dict[str, Any]) -> dict[str, Any]:
    """An event as kept: scalar values only, strings capped; a capped string's full length is
    kept beside it (``body_length``), so a case can still tell a whole body from a cut one."""
    kept: dict[str, Any] = {}
    for k, v in list(event.items())[:12]:
        key = cap(str(k), 40)
        if isinstance(v, str):
            kept[key] = cap(v, EVENT_STRING)
            if len(v) > EVENT_STRING:
                kept[f"{key}_length"] = len(v)
        elif isinstance(v, (int, float, bool)) or v is None:
            kept[key] = v
    return kept


class DriverProcess:
    """One launched driver: reader threads fill bounded buffers; ``close`` waits, then kills."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.outcome = DriverOutcome()
        self._lock = threading.Lock()
        self._stderr = bytearray()
        try:
            self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            raise UsageError(f"cannot start the driver {argv[0]!r}: {exc.strerror or exc}") from None
        self._threads = [threading.Thread(target=self._read_stdout, daemon=True, name="driver-stdout"),
                         threading.Thread(target=self._read_stderr, daemon=True, name="driver-stderr")]
        for t in self._threads:
            t.start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline(MAX_LINE)
            if not line:
                return
            if not line.endswith(b"\n"):  # a line past the cap: drop its rest
                while True:
                    more = self.proc.stdout.readline(MAX_LINE)
                    if not more or more.endswith(b"\n"):
                        break
            try:
                event = json.loads(line.decode("utf-8", "replace"))
            except ValueError:
                event = None
            with self._lock:
                if isinstance(event, dict) and len(self.outcome.events) < MAX_EVENTS:
                    self.outcome.events.append(_kept(event))
                else:
                    self.outcome.dropped += 1

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        while True:
            chunk = self.proc.stderr.read1(4096)  # type: ignore[attr-defined]
            if not chunk:
                return
            with self._lock:
                self._stderr += chunk
                if len(self._stderr) > STDERR_TAIL:
                    del self._stderr[:-STDERR_TAIL]

    def events(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.outcome.events)

    def wait(self, timeout: float) -> DriverOutcome:
        """Waits up to ``timeout`` for the driver to end; kills it if it does not."""
        try:
            self.proc.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            self._kill()
            self.outcome.killed = True
        for t in self._threads:
            t.join(1.0)
        with self._lock:
            self.outcome.returncode = self.proc.returncode
            self.outcome.stderr_tail = bytes(self._stderr).decode("utf-8", "replace")
        return self.outcome

    def running(self) -> bool:
        return self.proc.poll() is None

    def _kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            pass

    # the runner's interface for what a case adopted (see Context.adopt)
    def close(self, timeout: float = 0.5) -> None:
        if self.proc.returncode is None:
            self.wait(timeout)

    def abort(self) -> None:
        if self.proc.poll() is None:
            self._kill()
            self.outcome.killed = True
