"""What ``amqpspec report`` does with the warm Spark: find it, start it, run a report in it.

Every way this can fail (no private folder, a service that does not start, is busy, was
started with other settings or older code, or ends mid-report) ends in one line on stderr and
the report run in this process as without the service: the warm Spark can make a report
faster, never make it fail.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from amqpspec.errors import UsageError

from . import channel

START_TIMEOUT_S = 180.0
# A warm-up (JVM start, then a report of the bundled sample) is ready 20-25 s after it starts
# on 2 cores, and a report in it then takes about 12 s; a report in its own process, about 23 s.
# So a report not asked to (no --keep-warm) waits for a warm-up only from this far into it; an
# earlier one runs here, beside it, and the warm-up serves the reports after it.
WORTH_WAITING_AFTER_S = 12.0
WORTH_WAITING_AT_MOST_S = 15.0   # ... and no longer than this (a busy machine slows a warm-up at nice 10)
HELLO_TIMEOUT_S = 2.0
STOP_TIMEOUT_S = 15.0
_SPAWNED: list[subprocess.Popen[bytes]] = []   # kept referenced: they outlive this command on purpose


# set by CI services (CI: GitHub Actions, GitLab, CircleCI, Travis, Buildkite, Bitbucket, Woodpecker;
# the others by Jenkins, Azure Pipelines, TeamCity, AWS CodeBuild, which do not set CI)
CI_VARIABLES = ("CI", "JENKINS_URL", "TF_BUILD", "TEAMCITY_VERSION", "CODEBUILD_BUILD_ID")


def in_ci() -> bool:
    return any(os.environ.get(name, "").strip().lower() not in ("", "0", "false") for name in CI_VARIABLES)


def wanted(flag: bool | None) -> bool:
    """--keep-warm / --no-keep-warm; else AMQPSPEC_KEEP_WARM; else on outside CI.

    On by default wherever reports follow one another (a terminal, a script, a make target),
    as build tools keep their daemons (Gradle's model): the service ends by itself after its
    idle minutes and holds nothing but a JVM. A CI job runs one report on a fresh machine and
    ends: a service would only outlive the job there, so CI gets none unless asked."""
    if flag is not None:
        return flag
    env = os.environ.get("AMQPSPEC_KEEP_WARM", "").strip().lower()
    if env:
        return env not in ("0", "off", "no", "false")
    return not in_ci()


def idle_seconds() -> float:
    raw = os.environ.get("AMQPSPEC_KEEP_WARM_MINUTES", "").strip()
    if not raw:
        return channel.IDLE_MINUTES * 60
    try:
        minutes = float(raw)
    except ValueError:
        minutes = float("nan")
    if not 0.1 <= minutes <= 24 * 60:   # also false for nan
        raise UsageError(f"AMQPSPEC_KEEP_WARM_MINUTES={raw!r}: give minutes between 0.1 and 1440")
    return minutes * 60


def _say(text: str) -> None:
    print(f"amqpspec: {text}", file=sys.stderr, flush=True)


def _connect(place: channel.Place, timeout: float) -> socket.socket | None:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        conn.connect(str(place.socket))
    except OSError:
        conn.close()
        return None
    return conn


def hello(place: channel.Place, timeout: float = HELLO_TIMEOUT_S) -> dict[str, Any] | None:
    """The service's answer (key, pid, reports, since, idle_s); {"busy": True} when it holds a
    report and does not answer in time; None when none runs."""
    conn = _connect(place, timeout)
    if conn is None:
        return None
    with conn:
        try:
            channel.send(conn, {"op": "hello"})
            answer = channel.Reader(conn).next()
        except socket.timeout:
            return {"busy": True}
        except (OSError, channel.ChannelError):
            return None
    return answer if answer and "key" in answer else None


def stop(place: channel.Place, timeout: float | None = None) -> str:
    """Ends the service: asked politely; when busy with a report, or still starting or warming
    up (not listening yet), SIGTERM (the report cleans up as after Ctrl-C). What happened, in a
    few words."""
    answer = hello(place)
    if answer is None or answer.get("busy"):   # not listening yet (starting, warming up), or busy
        pid = _pid_of(place)
        if pid is None:
            return "no warm Spark running" if answer is None else \
                "the warm Spark is busy and its pid is unknown: not stopped"
        os.kill(pid, signal.SIGTERM)
    else:
        conn = _connect(place, HELLO_TIMEOUT_S)
        if conn is not None:
            with conn, contextlib.suppress(OSError, channel.ChannelError):
                channel.send(conn, {"op": "stop"})
                channel.Reader(conn).next()
    return "stopped" if _wait_gone(place, timeout) else "asked to stop; still ending"


def _pid_of(place: channel.Place) -> int | None:
    """The pid in the lock file, if that process is a live warm Spark of this user."""
    try:
        pid = int(place.lock.read_text().strip() or "0")
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        owner = os.stat(f"/proc/{pid}").st_uid
    except (OSError, ValueError):
        return None
    return pid if pid > 0 and owner == os.getuid() and b"amqpspec.reports.warm.server" in cmdline else None


def _spawn(place: channel.Place, settings: dict[str, Any]) -> subprocess.Popen[bytes]:
    with open(place.log, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-m", "amqpspec.reports.warm.server"], stdin=subprocess.PIPE,
                                stdout=log, stderr=subprocess.STDOUT, cwd=place.folder,
                                start_new_session=True, close_fds=True)
    _SPAWNED.append(proc)
    assert proc.stdin is not None
    try:   # the settings on stdin: --conf values may be secrets, a command line is public
        proc.stdin.write(json.dumps(settings).encode())
        proc.stdin.close()
    except OSError:
        pass   # it died at once: the wait below says so
    return proc


def _wait_ready(place: channel.Place, display: Any, label: str,
                proc: subprocess.Popen[bytes] | None = None, timeout: float = START_TIMEOUT_S) -> dict[str, Any] | None:
    """Waits until a service answers and returns its answer (whatever its settings: the caller
    compares keys); None (with the reason said) if it ends or does not answer in ``timeout``."""
    display.started(label)
    t0 = time.monotonic()
    deadline = t0 + timeout
    try:
        while time.monotonic() < deadline:
            ended = proc.poll() is not None if proc is not None else _pid_of(place) is None
            answer = hello(place, 1.0)
            if answer and "key" in answer:
                display.finished(label, time.monotonic() - t0)
                return answer
            if ended and not answer:
                display.close()
                _say(f"the warm Spark did not start ({_last_line(place.log)}): running Spark here")
                return None
            time.sleep(0.1)
    except BaseException:
        display.close()
        raise
    display.close()
    _say(f"the warm Spark did not answer in {timeout:.0f}s: running Spark here")
    return None


def _wait_gone(place: channel.Place, timeout: float | None = None) -> bool:
    deadline = time.monotonic() + (STOP_TIMEOUT_S if timeout is None else timeout)
    while time.monotonic() < deadline:
        if not place.socket.exists() and _pid_of(place) is None:
            return True
        time.sleep(0.1)
    return False


def settings(master: str, conf: dict[str, str], input_bytes: int | None, warmup: bool = False) -> dict[str, Any]:
    return {"key": channel.key(master, conf), "master": master, "conf": conf, "input_bytes": input_bytes,
            "idle_s": idle_seconds(), "warmup": warmup}


def prewarm() -> str | None:
    """Starts a warm Spark for a later report with the default settings (``amqpspec run`` calls
    this once its results are written), unless one runs; it runs a report of a small bundled
    sample first, so even the first real report finds Spark's code compiled. What it did, or None."""
    from amqpspec.reports.pipeline.session import resolve_master

    master = resolve_master(None)
    if not master.startswith("local"):
        return None
    try:
        place = channel.place()
    except channel.ChannelError:
        return None
    if hello(place) is not None or _pid_of(place) is not None:
        return None
    started = settings(master, {}, channel.WARMUP_SAMPLE.stat().st_size, warmup=True)
    _spawn(place, started)
    return f"Spark is warming up for `amqpspec report` ({started['idle_s'] / 60:g} min idle; `amqpspec spark stop` ends it)"


def _last_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return lines[-1][:200] if lines else f"see {path}"


def _remote(place: channel.Place, key: str, params: dict[str, Any], input_bytes: int) -> int | str | None:
    """The exit code of the report run in the service; a str: why it refused; None: it ended
    before the report did."""
    conn = _connect(place, HELLO_TIMEOUT_S)
    if conn is None:
        return None
    with conn:
        conn.settimeout(None)
        env = {k: os.environ[k] for k in channel.JOB_ENV if k in os.environ}
        if sys.stderr.isatty() and "COLUMNS" not in env:
            with contextlib.suppress(OSError):
                columns = os.get_terminal_size(sys.stderr.fileno()).columns
                if columns > 0:   # a pty without a size (script, some CI runners) says 0: rich's default then
                    env["COLUMNS"] = str(columns)
        try:
            channel.send(conn, {"op": "run", "key": key, "params": params, "input_bytes": input_bytes,
                                "cwd": os.getcwd(), "env": env,
                                "tty": {"stdout": sys.stdout.isatty(), "stderr": sys.stderr.isatty()}})
            reader = channel.Reader(conn)
            while True:
                message = reader.next()
                if message is None:
                    return None
                if "exit" in message:
                    return message["exit"] if isinstance(message["exit"], int) else 1
                if "refused" in message:
                    return str(message["refused"])
                for name, stream in (("out", sys.stdout), ("err", sys.stderr)):
                    if isinstance(message.get(name), str):
                        stream.write(message[name])
                        stream.flush()
        except (OSError, channel.ChannelError):
            return None


def _age(place: channel.Place) -> float:
    """Seconds since the running service started (its lock file is written then); 0 if unknown."""
    try:
        return max(0.0, time.time() - place.lock.stat().st_mtime)
    except OSError:
        return 0.0


def run(params: dict[str, Any], check: Callable[[], None], asked: bool = False) -> int | None:
    """The exit code of the report run in the warm Spark (started if need be); None: run it here.

    ``asked``: --keep-warm was given, so a service still warming up is waited for however long
    it has to go (by default only when that is quicker than a report here)."""
    from amqpspec.reports.pipeline import ingest
    from amqpspec.reports.pipeline.session import SMALL_INPUT_BYTES, parse_conf, resolve_master
    from amqpspec.reports.report_progress import StageDisplay

    master = resolve_master(params["spark_master"])
    if not master.startswith("local"):
        return None          # a cluster's own driver: nothing to keep warm here
    check()                  # a bad --out is said before any Spark starts, as without the service
    conf = parse_conf(params["spark_conf"])
    size = ingest.input_bytes(ingest.discover_inputs(params["results"], params["findings"]))
    if size is None or size > SMALL_INPUT_BYTES:
        return None          # a large input gets a session sized for it (partitions, JIT)
    try:
        place = channel.place()
    except channel.ChannelError as exc:
        _say(f"Spark not kept warm: {exc}")
        return None
    wanted_settings = settings(master, conf, size)
    key, idle = wanted_settings["key"], wanted_settings["idle_s"]
    for attempt in range(2):
        answer = hello(place)
        if answer is None and _pid_of(place) is not None:   # starting, or warming up (prewarm)
            if not asked and _age(place) < WORTH_WAITING_AFTER_S:
                _say("the warm Spark is still warming up: running Spark here (it serves the next reports)")
                return None
            answer = _wait_ready(place, StageDisplay(), "wait for the warm Spark",
                                 timeout=START_TIMEOUT_S if asked else WORTH_WAITING_AT_MOST_S)
            if answer is None:
                return None
        if answer is not None and answer.get("busy"):
            _say("the warm Spark is busy with another report: running Spark here")
            return None
        if answer is not None and answer.get("key") != key:
            stop(place)      # started with other settings: replaced
            answer = None
        if answer is None:
            proc = _spawn(place, wanted_settings)
            answer = _wait_ready(place, StageDisplay(), "start the warm Spark", proc)
            if answer is None:
                return None
            if answer.get("key") != key:
                _say("another warm Spark, with other settings, started meanwhile: running Spark here")
                return None
            _say(f"Spark stays warm for the next reports ({idle / 60:g} min idle; `amqpspec spark stop` ends it)")
        outcome = _remote(place, key, params, size)
        if isinstance(outcome, int):
            return outcome
        if outcome is None:
            _say(f"the warm Spark ended during the report (see {place.log}): running Spark here")
            return None
        if attempt == 0 and _wait_gone(place):
            continue         # refused (its code changed) and ended: a new one is started
        _say(f"the warm Spark refused the report ({outcome}): running Spark here")
        return None
    return None
