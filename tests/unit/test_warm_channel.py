"""The warm Spark's parts that need no Spark: its folder, framing, settings and the client's
fall-backs when the service misbehaves (a scripted peer on the socket, not a Spark)."""
from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from amqpspec.errors import UsageError
from amqpspec.reports.warm import channel, client, server


@pytest.fixture()
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "run"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


def test_the_folder_is_made_private(runtime: Path) -> None:
    place = channel.place()
    assert place.folder == runtime / "amqpspec"
    assert place.folder.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("spoil", ["open to others", "symlink"])
def test_a_folder_others_can_reach_is_refused(runtime: Path, tmp_path: Path, spoil: str) -> None:
    if spoil == "open to others":
        (runtime / "amqpspec").mkdir(mode=0o700)
        os.chmod(runtime / "amqpspec", 0o777)
    else:
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir(mode=0o700)
        (runtime / "amqpspec").symlink_to(elsewhere)
    with pytest.raises(channel.ChannelError, match="not a private folder"):
        channel.place()


def _pair() -> tuple[socket.socket, socket.socket]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.settimeout(5)
    b.settimeout(5)
    return a, b


def test_messages_round_trip_and_a_clean_close_ends_them() -> None:
    a, b = _pair()
    channel.send(a, {"op": "hello"})
    channel.send(a, {"out": "x" * 1000})
    a.close()
    reader = channel.Reader(b)
    assert reader.next() == {"op": "hello"}
    assert reader.next() == {"out": "x" * 1000}
    assert reader.next() is None


@pytest.mark.parametrize("wire,error", [
    (b"not json\n", "not JSON"),
    (b"[1, 2]\n", "not a JSON object"),
    (b"\xff\xfe\n", "not JSON"),
    (b'{"op": "hel', "in the middle of a message"),
])
def test_garbage_is_one_clear_error(wire: bytes, error: str) -> None:
    a, b = _pair()
    a.sendall(wire)
    a.close()
    with pytest.raises(channel.ChannelError, match=error):
        channel.Reader(b).next()


def test_an_endless_message_is_cut_off() -> None:
    a, b = _pair()

    def flood() -> None:
        try:
            for _ in range(channel.MAX_MESSAGE // 65536 + 4):
                a.sendall(b"x" * 65536)
        except OSError:
            pass

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    with pytest.raises(channel.ChannelError, match="longer than"):
        channel.Reader(b).next()
    b.close()
    t.join(5)
    a.close()


def test_wanted_follows_flag_then_environment_then_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMQPSPEC_KEEP_WARM", raising=False)
    for name in client.CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert client.wanted(True) is True and client.wanted(False) is False
    monkeypatch.setenv("AMQPSPEC_KEEP_WARM", "1")
    assert client.wanted(None) is True
    monkeypatch.setenv("AMQPSPEC_KEEP_WARM", "off")
    assert client.wanted(None) is False
    monkeypatch.delenv("AMQPSPEC_KEEP_WARM")
    assert client.wanted(None) is True       # outside CI, even without a terminal (a script)
    monkeypatch.setenv("CI", "false")
    assert client.wanted(None) is True
    for name in client.CI_VARIABLES:
        monkeypatch.setenv(name, "true" if name == "CI" else "x")
        assert client.wanted(None) is False, name
        assert client.wanted(True) is True   # asked for in CI: given
        monkeypatch.delenv(name)


@pytest.mark.parametrize("value", ["soon", "nan", "0", "-3", "1e9"])
def test_bad_idle_minutes_are_one_line(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AMQPSPEC_KEEP_WARM_MINUTES", value)
    with pytest.raises(UsageError, match="AMQPSPEC_KEEP_WARM_MINUTES") as info:
        client.idle_seconds()
    assert "\n" not in str(info.value)


def test_the_key_changes_with_the_settings_a_jvm_starts_with(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMQPSPEC_SPARK_DRIVER_MEMORY", raising=False)
    base = channel.key("local[*]", {})
    assert channel.key("local[*]", {}) == base
    assert channel.key("local[2]", {}) != base
    assert channel.key("local[*]", {"spark.driver.memory": "4g"}) != base
    monkeypatch.setenv("AMQPSPEC_SPARK_DRIVER_MEMORY", "3g")
    assert channel.key("local[*]", {}) != base


def test_a_changed_code_file_is_seen(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("x = 1\n")
    snapshot = {str(module): (module.stat().st_mtime_ns, module.stat().st_size)}
    assert server._changed(snapshot) is None
    module.write_text("x = 22\n")
    assert server._changed(snapshot) == str(module)
    module.unlink()
    assert server._changed(snapshot) == str(module)


def test_the_output_stream_is_text_only_and_chunked() -> None:
    a, b = _pair()
    stream = server._Stream(a, "err", True, threading.Lock())
    assert stream.isatty()
    with pytest.raises(TypeError):
        stream.write(b"")   # click's probe for a binary stream must fail, or it writes bytes
    text = "y" * (channel.MAX_MESSAGE // 8 * 2 + 5)
    parts: list[str] = []

    def read() -> None:
        reader = channel.Reader(b)
        while (message := reader.next()) is not None:
            parts.append(message["err"])

    t = threading.Thread(target=read, daemon=True)
    t.start()
    stream.write(text)
    a.close()
    t.join(5)
    assert not stream.broken and "".join(parts) == text and len(parts) == 3


# ---------------------------------------------------------------- the client against a bad service

class ScriptedService:
    """A socket at the service's place that answers ``hello`` with the right key and then
    does what ``on_run`` says: the client must fall back to its own Spark, with one line."""

    def __init__(self, place: channel.Place, key: str, on_run: Callable[[socket.socket], None]) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(place.socket))
        self.listener.listen(4)
        self.listener.settimeout(10)
        self.key, self.on_run = key, on_run
        self.requests: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            while True:
                conn, _ = self.listener.accept()
                with conn:
                    request = channel.Reader(conn).next() or {}
                    self.requests.append(request)
                    if request.get("op") == "hello":
                        channel.send(conn, {"key": self.key, "pid": 1, "reports": 0, "since": 0, "idle_s": 60})
                    elif request.get("op") == "run":
                        self.on_run(conn)
        except (OSError, channel.ChannelError):
            pass

    def close(self) -> None:
        self.listener.close()


def _garbage(conn: socket.socket) -> None:
    conn.sendall(b'{"err": "reading ...\\n"}\n\x00\x01 garbage\n')


def _gone(conn: socket.socket) -> None:
    channel.send(conn, {"out": "half a report\n"})


def _refuses(conn: socket.socket) -> None:
    channel.send(conn, {"refused": "the amqpspec code changed since it started"})


class _Ended:
    """A spawned service that died at once."""

    def poll(self) -> int:
        return 1


@pytest.fixture()
def scripted(runtime: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Any]]:
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps({"case": "x"}) + "\n")
    params = {"results": [str(results)], "out_dir": str(tmp_path / "out"), "findings": [], "spark_master": None,
              "spark_conf": [], "strict": False, "no_html": True}
    spawned: list[dict[str, Any]] = []
    monkeypatch.setattr(client, "_spawn", lambda place, settings: spawned.append(settings) or _Ended())
    monkeypatch.setattr(client, "STOP_TIMEOUT_S", 0.5)
    services: list[ScriptedService] = []

    def start(on_run: Callable[[socket.socket], None]) -> Any:
        place = channel.place()
        service = ScriptedService(place, channel.key("local[*]", {}), on_run)
        services.append(service)
        return client.run(params, check=lambda: None), spawned, service

    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("MASTER", raising=False)
    yield start
    for s in services:
        s.close()


@pytest.mark.parametrize("on_run", [_garbage, _gone])
def test_a_broken_service_means_the_report_runs_here(scripted: Callable[..., Any], on_run: Any,
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    code, spawned, _ = scripted(on_run)
    assert code is None and not spawned    # None: the CLI then runs the report in its own Spark
    err = capfd.readouterr().err
    assert "ended during the report" in err and "Traceback" not in err


def test_a_service_that_refuses_and_stays_means_the_report_runs_here(scripted: Callable[..., Any],
                                                                    capfd: pytest.CaptureFixture[str]) -> None:
    code, spawned, _ = scripted(_refuses)
    assert code is None and not spawned
    assert "refused the report (the amqpspec code changed" in capfd.readouterr().err


def test_a_service_that_refuses_and_ends_is_replaced(runtime: Path, scripted: Callable[..., Any],
                                                     capfd: pytest.CaptureFixture[str]) -> None:
    def refuse_and_end(conn: socket.socket) -> None:
        _refuses(conn)
        channel.place().socket.unlink()   # as a real service does when its code changed

    code, spawned, _ = scripted(refuse_and_end)
    assert code is None and len(spawned) == 1 and spawned[0]["key"] == channel.key("local[*]", {})
    assert "did not start" in capfd.readouterr().err     # the new one (a stub here) died at once


def test_a_terminal_without_a_size_sends_no_width(scripted: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A pty whose size is 0x0 (`script`, some CI runners): COLUMNS=0 would make rich print
    nothing at all in the service; without it rich takes its default width."""
    import pty

    master, slave = pty.openpty()

    class Tty:
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            return slave

        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    try:
        monkeypatch.delenv("COLUMNS", raising=False)
        monkeypatch.setattr(sys, "stderr", Tty())
        _, _, service = scripted(lambda conn: channel.send(conn, {"exit": 0}))
    finally:
        os.close(master)
        os.close(slave)
    run = [r for r in service.requests if r.get("op") == "run"]
    assert run and run[0]["tty"]["stderr"] is True and "COLUMNS" not in run[0]["env"]


def test_bytes_after_the_request_do_not_interrupt_the_report() -> None:
    a, b = _pair()
    a.sendall(b"x")    # a client that says more than its request (ours never does)
    watcher = server._Watcher(b)
    time.sleep(0.5)
    assert not watcher.fired and watcher.thread.is_alive()
    watcher.stop()
    assert not watcher.thread.is_alive() and not watcher.fired
    a.close()
    b.close()


@pytest.mark.parametrize("asked", [False, True])
def test_a_young_warm_up_is_waited_for_only_when_asked(runtime: Path, tmp_path: Path, asked: bool,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capfd: pytest.CaptureFixture[str]) -> None:
    """A pre-warm a few seconds old has most of its 20-25 s to go: a report not asked to use it
    runs here at once rather than wait that long and then report; --keep-warm waits."""
    results = tmp_path / "r.jsonl"
    results.write_text(json.dumps({"case": "x"}) + "\n")
    params = {"results": [str(results)], "out_dir": str(tmp_path / "out"), "findings": [], "spark_master": None,
              "spark_conf": [], "strict": False, "no_html": True}
    monkeypatch.delenv("SPARK_MASTER", raising=False)
    monkeypatch.delenv("MASTER", raising=False)
    place = channel.place()
    place.lock.write_text("4242")             # a service started just now, not yet listening
    monkeypatch.setattr(client, "_pid_of", lambda p: 4242)
    waited: list[str] = []
    monkeypatch.setattr(client, "_wait_ready", lambda p, display, label, proc=None, timeout=0.0:
                        waited.append(f"{label} {timeout:g}"))
    assert client.run(params, check=lambda: None, asked=asked) is None
    assert waited == ([f"wait for the warm Spark {client.START_TIMEOUT_S:g}"] if asked else [])
    assert ("still warming up: running Spark here" in capfd.readouterr().err) is not asked
    old = time.time() - client.WORTH_WAITING_AFTER_S - 1
    os.utime(place.lock, (old, old))          # most of the way through: waited for either way
    assert client.run(params, check=lambda: None, asked=False) is None
    assert waited[-1] == f"wait for the warm Spark {client.WORTH_WAITING_AT_MOST_S:g}"   # not for ever


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no scheduler autogroups on this kernel")
def test_the_service_lowers_its_own_session_group_not_the_callers() -> None:
    """With autogroups the scheduler shares the CPU between sessions first: a nice of the
    service's processes alone would not put its warm-up below a report in the user's session."""
    import subprocess

    code = ("import os; from amqpspec.reports.warm import server; server._lower_priority(); "
            "print(open('/proc/self/autogroup').read().split()[-1], os.nice(0))")
    shown = subprocess.run([sys.executable, "-c", code], start_new_session=True, capture_output=True, text=True,
                           timeout=60, stdin=subprocess.DEVNULL).stdout.split()
    assert shown == [str(server.NICE), str(server.NICE)]


def test_stop_ends_a_service_still_starting(runtime: Path) -> None:
    """Before it listens (its JVM starting, or a run's warm-up) a service answers nothing: stop
    must end it all the same, or a warm-up outlives `amqpspec spark stop`."""
    import subprocess

    starting = subprocess.Popen([sys.executable, "-c", "import time; print('up', flush=True); time.sleep(120)",
                                 "amqpspec.reports.warm.server"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        # Popen returns inside the child's exec, before its command line is readable from /proc
        # (empty under load); a service writes its lock only once running, so wait for that too.
        assert starting.stdout is not None and starting.stdout.readline() == b"up\n"
        place = channel.place()
        place.lock.write_text(str(starting.pid))
        assert client.stop(place, timeout=30) == "stopped"
        assert starting.wait(30) == -signal.SIGTERM
    finally:
        starting.kill()
        starting.wait()
