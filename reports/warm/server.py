"""The warm Spark service: a SparkSession kept between reports, one report at a time.

Started by ``amqpspec report --keep-warm`` or ``amqpspec run --json`` (``client._spawn``), never by hand: it reads its
settings as JSON on stdin (the --conf values may hold secrets, so not on its command line),
starts Spark, imports the catalog and the HTML renderer, and only then listens, so a client
that can connect finds it ready. It runs each report in its main thread exactly as the CLI
does in-process (``reports.cli.run_report``), with stdout and stderr sent to the client as
they are written and the client's terminal answers (isatty, COLUMNS) for the progress display.

It ends when idle for its minutes, when asked (``amqpspec spark stop``), after a report whose
client went away (the report is interrupted as by Ctrl-C: a half-cancelled Spark is not kept),
and when any file of the amqpspec code it loaded has changed since (an upgrade or an edit:
the next report must not run old code). Its lines and the JVM's go to ``spark.log``.
"""
from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import select
import signal
import socket
import sys
import threading
import time
import traceback
from typing import Any, Iterator

from . import channel

NICE = 10
CHUNK = channel.MAX_MESSAGE // 8   # characters of output per message: even all-escaped JSON fits
_ENDING = threading.Event()   # SIGTERM (`amqpspec spark stop` while a report runs): end after it


class _Stream(io.TextIOBase):
    """A text stream whose writes go to the client as messages (thread-safe: rich's spinner
    thread and the main thread both write)."""

    def __init__(self, conn: socket.socket, name: str, tty: bool, lock: threading.Lock) -> None:
        self.conn, self.name, self.tty, self._lock = conn, name, tty, lock
        self.broken = False
        self.pid = os.getpid()   # a forked page renderer shares the socket: only we write to it

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.tty

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def write(self, text: str) -> int:
        if not isinstance(text, str):   # click probes for a binary stream with write(b""): say no
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text and not self.broken and os.getpid() == self.pid:
            with self._lock:
                try:
                    for at in range(0, len(text), CHUNK):
                        channel.send(self.conn, {self.name: text[at:at + CHUNK]})
                except OSError:
                    self.broken = True   # the client is gone; the watcher interrupts the report
        return len(text)


def _snapshot() -> dict[str, tuple[int, int]]:
    """(mtime, size) of every file of the amqpspec modules loaded, and of their folders (a new
    case module changes its folder's mtime)."""
    seen: dict[str, tuple[int, int]] = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not (name == "amqpspec" or name.startswith("amqpspec.")) or not path:
            continue
        for p in (path, os.path.dirname(path)):
            with contextlib.suppress(OSError):
                info = os.stat(p)
                seen[p] = (info.st_mtime_ns, info.st_size)
    return seen


def _changed(snapshot: dict[str, tuple[int, int]]) -> str | None:
    for path, was in snapshot.items():
        try:
            info = os.stat(path)
        except OSError:
            return path
        if (info.st_mtime_ns, info.st_size) != was:
            return path
    return None


@contextlib.contextmanager
def _client_env(request: dict[str, Any]) -> Iterator[None]:
    env = request.get("env") if isinstance(request.get("env"), dict) else {}
    saved = {k: os.environ.get(k) for k in channel.JOB_ENV}
    cwd = os.getcwd()
    try:
        for k in channel.JOB_ENV:
            value = env.get(k)
            if isinstance(value, str):
                os.environ[k] = value
            else:
                os.environ.pop(k, None)
        os.chdir(str(request.get("cwd") or cwd))
        yield
    finally:
        os.chdir(cwd)
        for k, value in saved.items():
            if value is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = value


class _Watcher:
    """Interrupts the running report (SIGINT, as Ctrl-C would: PySpark cancels its jobs) when
    the client goes away."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.lock = threading.Lock()   # stop() and the interrupt: never an interrupt after stop()
        self.done = threading.Event()
        self.fired = False
        self.thread = threading.Thread(target=self._watch, name="amqpspec-warm-watch", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        while not self.done.is_set():
            try:
                ready, _, _ = select.select([self.conn], [], [], 0.2)
                gone = bool(ready) and not self.conn.recv(1, socket.MSG_PEEK)
            except (OSError, ValueError):
                gone = True
            if gone:
                with self.lock:
                    if not self.done.is_set():
                        self.fired = True
                        os.kill(os.getpid(), signal.SIGINT)
                return
            if ready:   # bytes after the request (none are expected): not a reason to spin
                self.done.wait(0.2)

    def stop(self) -> None:
        with self.lock:
            self.done.set()
        self.thread.join(1.0)


def _run(conn: socket.socket, request: dict[str, Any], spark: Any) -> tuple[int, bool]:
    """(exit code, whether the service may go on) of one report."""
    from amqpspec.cliutil import guarded
    from amqpspec.reports.cli import run_report
    from amqpspec.reports.pipeline.session import shuffle_partitions

    params = request.get("params")
    tty = request.get("tty") if isinstance(request.get("tty"), dict) else {}
    if not isinstance(params, dict):
        return 2, True
    lock = threading.Lock()
    out = _Stream(conn, "out", bool(tty.get("stdout")), lock)
    err = _Stream(conn, "err", bool(tty.get("stderr")), lock)
    watcher = _Watcher(conn)
    code, healthy = 1, True
    try:
        with _client_env(request), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                size = request.get("input_bytes")
                if isinstance(size, int):   # sized per report, as a fresh session would be
                    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle_partitions("local", size)))
                guarded(run_report)(**params)   # the suite's own errors: one line and exit 2, as in the CLI
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except KeyboardInterrupt:
                code, healthy = 130, False
            except Exception as exc:
                if watcher.fired:   # the interrupt landed inside a py4j call: PySpark raises its own error
                    print(f"client went away: report interrupted ({type(exc).__name__})", file=sys.__stderr__)
                    return 130, False
                # a defect: one line to the client, the trace to the log
                print(f"amqpspec: the warm Spark failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
                      file=err)
                traceback.print_exc(file=sys.__stderr__)
                code, healthy = 1, False
    except KeyboardInterrupt:   # the signal arrived between the report's end and the watcher's stop
        code, healthy = 130, False
    finally:
        watcher.stop()
    if watcher.fired or out.broken or err.broken:
        healthy = False
    return code, healthy


def _answer(conn: socket.socket, spark: Any, state: dict[str, Any]) -> bool:
    """Serves one connection; False when the service must end."""
    try:
        if channel.peer_uid(conn) != os.getuid():
            return True
        conn.settimeout(10.0)
        request = channel.Reader(conn).next()
        conn.settimeout(None)
    except (OSError, channel.ChannelError):
        return True
    if not request:
        return True
    op = request.get("op")
    try:
        if op == "hello":
            channel.send(conn, {"key": state["key"], "pid": os.getpid(), "reports": state["reports"],
                                "since": state["since"], "idle_s": state["idle_s"]})
            return True
        if op == "stop":
            channel.send(conn, {"stopping": True})
            return False
        if op != "run":
            return True
        if request.get("key") != state["key"]:
            channel.send(conn, {"refused": "started with other settings"})
            return True
        changed = _changed(state["snapshot"])
        if changed:
            channel.send(conn, {"refused": f"the amqpspec code changed since it started ({changed})"})
            return False
        state["reports"] += 1
        t0 = time.monotonic()
        code, healthy = _run(conn, request, spark)
        print(f"report {state['reports']}: exit {code} in {time.monotonic() - t0:.1f}s"
              + ("" if healthy else " (interrupted, or its client went away: ending)"), file=sys.stderr, flush=True)
        with contextlib.suppress(OSError, channel.ChannelError):
            channel.send(conn, {"exit": code})
        return healthy
    except (OSError, channel.ChannelError):
        return True


def _load_code() -> None:
    from amqpspec.reports.pipeline import dataset

    dataset.load_catalog()
    import amqpspec.reports.cli  # noqa: F401
    with contextlib.suppress(ImportError):
        import amqpspec.reports.html  # noqa: F401  (the renderer and its templates' engine)


def _warm_up() -> None:
    """A report of the bundled sample (a trimmed real run), thrown away: the first real report
    then finds the JVM's classes loaded and compiled and Spark's generated code cached
    (measured: 12 s instead of 23 s for a report of one run in a warmed process)."""
    import shutil
    import tempfile

    from amqpspec.reports.cli import run_report

    sample = channel.WARMUP_SAMPLE
    out = tempfile.mkdtemp(prefix="amqpspec-warmup-")
    try:
        run_report(results=[str(sample)], out_dir=out, findings=[], spark_master=None, spark_conf=[],
                   strict=False, no_html=False)
    except Exception:   # a warm-up that fails leaves a service that still works, only colder
        traceback.print_exc()
    finally:
        shutil.rmtree(out, ignore_errors=True)


def serve(settings: dict[str, Any]) -> int:
    place = channel.place()
    lock = open(place.lock, "a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print("another warm Spark is running", file=sys.stderr)
        return 0
    lock.seek(0)
    lock.truncate()
    lock.write(str(os.getpid()))   # for `amqpspec spark stop` while a report runs
    lock.flush()
    from amqpspec.reports.pipeline.session import check_runtime, create_session

    check_runtime()   # PySpark's imports first, alone (as run_job does: the JVM starts sooner)
    loader = threading.Thread(target=_load_code, name="amqpspec-warm-load", daemon=True)
    loader.start()    # the catalog, the report command and the renderer, while the JVM starts
    spark = create_session(settings.get("master"), settings.get("conf") or {},
                           input_bytes=settings.get("input_bytes"))
    loader.join()
    if settings.get("warmup"):
        _warm_up()
    idle_s = float(settings.get("idle_s") or channel.IDLE_MINUTES * 60)
    state = {"key": settings.get("key"), "reports": 0, "since": time.time(), "idle_s": idle_s,
             "snapshot": _snapshot()}
    with contextlib.suppress(FileNotFoundError):
        place.socket.unlink()   # a socket left by a service that was killed (we hold the lock)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(place.socket))
    finally:
        os.umask(old)
    listener.listen(8)
    listener.settimeout(idle_s)
    print(f"warm Spark ready: pid {os.getpid()}, idle timeout {idle_s:.0f}s", file=sys.stderr, flush=True)
    try:
        while True:
            try:
                conn, _ = listener.accept()
            except socket.timeout:
                print("idle: ending", file=sys.stderr)
                return 0
            with conn:
                if not _answer(conn, spark, state) or _ENDING.is_set():
                    return 0
    finally:
        with contextlib.suppress(OSError):
            place.socket.unlink()
        listener.close()
        with contextlib.suppress(Exception):
            spark.stop()


def _terminate(signum: int, frame: Any) -> None:
    _ENDING.set()
    raise KeyboardInterrupt   # a report in progress cleans up as after Ctrl-C; then Spark stops


def _lower_priority() -> None:
    """Nice NICE, for this process and the JVM it starts, and for its session's scheduling group.

    The service is a session of its own (the client starts it with setsid), and where Linux
    groups tasks by session for the scheduler (autogroup, on in most distributions) the CPU is
    first shared fairly between sessions, whatever a task's nice: a warm-up at nice 10 still took
    half of two cores from a report beside it (measured: 69-72 s against 39-59 s alone). The
    group's own nice (/proc/self/autogroup; a process may lower its group's priority) is what
    puts it below the user's other sessions there."""
    with contextlib.suppress(OSError):
        os.nice(NICE)
    with contextlib.suppress(OSError):
        with open("/proc/self/autogroup", "w", encoding="ascii") as group:
            group.write(str(NICE))


def main() -> int:
    # below the user's foreground work (the JVM inherits it): a warm-up started at the end of
    # `amqpspec run` must not take the CPU from a next run, whose verdicts have deadlines
    _lower_priority()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminate)
    try:
        settings = json.loads(sys.stdin.read(channel.MAX_MESSAGE))
    except ValueError:
        print("expected the settings as JSON on stdin", file=sys.stderr)
        return 2
    try:
        return serve(settings if isinstance(settings, dict) else {})
    except channel.ChannelError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
