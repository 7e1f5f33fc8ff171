"""amqpspec.brokerops: each operation on a broker outside a case, one behaviour per test, against
fake brokers (tests/support/hostile_handshake.py) that stall, flood, hang up or refuse."""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from amqpspec import brokerops
from amqpspec.errors import ConnectError
from amqpspec.target import Target
from tests.support import hostile
from tests.support import hostile_handshake as hh


def _all_ok(method: str, name: str) -> str:
    return "ok"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------- probe wording

@pytest.mark.parametrize("behaviour, protocol, wanted", [
    (hh.start_then_silent, "0-9-1", "did not answer our connection.start-ok within"),
    (hh.start_then_heartbeat_flood, "0-9-1", "heartbeat frame(s) and no connection.tune"),
    (hh.start_then_hang_up, "0-9-1", "login refused for user 'guest'"),
    (hh.start_then_refuse, "0-9-1", "login refused for user 'guest'"),
    (hostile.heartbeat_flood, "0-9-1", "heartbeat frames where connection.start was due"),
    (hostile.silent, "0-9-1", "did not answer our protocol header within"),
    (hh.sasl_init_then_silent, "1.0", "did not answer our sasl-init within"),
    (hh.sasl_init_then_hang_up, "1.0", "login refused for user 'guest'"),
    (hostile.silent, "1.0", "did not answer our protocol header within"),
], ids=lambda v: getattr(v, "__name__", v if isinstance(v, str) and len(v) < 8 else None))
def test_probe_says_what_the_broker_did(behaviour, protocol, wanted) -> None:
    with hostile.HostileServer(behaviour) as server:
        t0 = time.monotonic()
        with pytest.raises(ConnectError) as err:
            brokerops.probe(Target.parse(server.url), protocol, timeout=2.0)
    assert wanted in str(err.value)
    assert time.monotonic() - t0 < 2.0 + 3.0
    if "login refused" not in wanted:
        assert "login refused" not in str(err.value)


def test_probe_10_reports_an_empty_frame_flood() -> None:
    with hostile.HostileServer(hostile.amqp10_flood) as server:
        with pytest.raises(ConnectError) as err:  # no user in the URL: no SASL, straight to open
            brokerops.probe(Target.parse(f"amqp://127.0.0.1:{server.port}/"), "1.0", timeout=2.0)
    assert "empty frame(s) (heartbeats) and no open" in str(err.value)
    assert "login refused" not in str(err.value)


# ---------------------------------------------------------------------------- restart

def test_restart_does_not_wait_for_a_backgrounded_command() -> None:
    """A broker started in the background keeps the command's output open: only the shell is waited for."""
    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, _all_ok)) as server:
        t0 = time.monotonic()
        note = brokerops.restart("sleep 30 & echo started", Target.parse(server.url), "0-9-1", wait=20.0)
        took = time.monotonic() - t0
    assert note.ok, note
    assert took < 5.0, f"{took:.1f}s: the restart waited for the backgrounded sleep"


def test_restart_reports_a_failing_command() -> None:
    note = brokerops.restart("echo starting; echo 'no such broker' >&2; exit 3",
                             Target.parse(f"amqp://guest:guest@127.0.0.1:{_free_port()}/"), "0-9-1", wait=5.0)
    assert not note.ok
    assert "exited 3" in note and "no such broker" in note and "starting" in note


def test_restart_stops_a_command_past_its_wait() -> None:
    t0 = time.monotonic()
    note = brokerops.restart("sleep 30", Target.parse(f"amqp://guest:guest@127.0.0.1:{_free_port()}/"), "0-9-1",
                             wait=1.0)
    assert not note.ok and "did not finish within 1s" in note
    assert time.monotonic() - t0 < 5.0


# ---------------------------------------------------------------------------- delete

def test_delete_goes_on_after_a_connection_close_and_a_channel_close() -> None:
    def react(method: str, name: str) -> str:
        return {"boom": "close-connection", "refused": "close-channel", "gone": "hang-up"}.get(name, "ok")

    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, react)) as server:
        problem = brokerops.delete(Target.parse(server.url), ["a", "boom", "b", "refused", "c", "gone", "d"], ["x"])
    assert problem == ""
    assert log.names() == ["a", "boom", "b", "refused", "c", "gone", "d", "x"]
    assert log.connections == 3  # reconnected after the connection.close and after the hang-up


def test_delete_skips_names_no_broker_holds_and_the_brokers_own() -> None:
    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, _all_ok)) as server:
        problem = brokerops.delete(Target.parse(server.url), ["ok", "x" * 256, "bad \udcff", ""],
                                   ["amq.direct", "", "mine"])
    assert problem == ""
    assert log.names() == ["ok", "mine"]


def test_delete_passes_if_unused_and_if_empty() -> None:
    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, _all_ok)) as server:
        brokerops.delete(Target.parse(server.url), ["q"], ["x"], if_unused=True, if_empty=True)
    assert log.calls == [(1, "queue.delete", "q", True, True), (1, "exchange.delete", "x", True, False)]


def test_delete_is_bounded_by_its_budget_and_never_raises() -> None:
    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, lambda m, n: "silent")) as server:
        t0 = time.monotonic()
        problem = brokerops.delete(Target.parse(server.url), [f"q{i}" for i in range(50)], budget=1.0,
                                   reply_timeout=0.2)
        took = time.monotonic() - t0
    assert "left after the 1s budget" in problem
    assert took < 5.0  # the 1 s budget, not 50 names x 0.2 s (slack for a loaded machine)


@pytest.mark.parametrize("behaviour", [hostile.silent, hostile.heartbeat_flood, hostile.garbage_stream,
                                       hh.start_then_hang_up], ids=lambda b: b.__name__)
def test_delete_against_a_hostile_server_returns_a_problem(behaviour) -> None:
    with hostile.HostileServer(behaviour) as server:
        t0 = time.monotonic()
        problem = brokerops.delete(Target.parse(server.url), ["q"], budget=1.5)
    assert problem
    assert time.monotonic() - t0 < 5.0


def test_delete_on_an_unreachable_broker_returns_a_problem() -> None:
    assert "cannot connect" in brokerops.delete(Target.parse(f"amqp://guest:guest@127.0.0.1:{_free_port()}/"), ["q"])


def test_absent_names_only_a_clear_404() -> None:
    def react(method: str, name: str) -> str:
        return {"locked": "close-channel", "quiet": "silent"}.get(name, "ok")

    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, react, existing=frozenset({"orders"}))) as server:
        queues, exchanges, problem = brokerops.absent(Target.parse(server.url), ["orders", "new", "locked", "quiet"],
                                                      ["ex-new"], reply_timeout=0.3)
    assert (queues, exchanges, problem) == ({"new"}, {"ex-new"}, "")


# ---------------------------------------------------------------------------- liveness, detection

def test_problem_is_empty_for_a_serving_broker_and_says_why_otherwise() -> None:
    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, _all_ok)) as server:
        assert brokerops.problem(Target.parse(server.url), "0-9-1", timeout=2.0) == ""
    with hostile.HostileServer(hh.start_then_silent) as server:
        assert brokerops.NO_ANSWER in brokerops.problem(Target.parse(server.url), "0-9-1", timeout=1.0)


def test_problem_10_asks_for_credit_only_when_told_and_tells_a_wedge_from_a_crash() -> None:
    from tests.support.hostile_fuzz10 import Log, scripted_broker, url_10

    for credit, wanted in ((100, ""), (0, brokerops.NO_CREDIT)):
        with hostile.HostileServer(scripted_broker(Log(), credit=credit)) as server:
            target = Target.parse(url_10(server.port))
            assert brokerops.problem(target, "1.0", timeout=2.0) == ""   # open and begin answered either way
            t0 = time.monotonic()
            got = brokerops.problem(target, "1.0", timeout=2.0, credit_node="amqpspec-live")
            assert got.startswith(wanted) if wanted else got == ""
            assert time.monotonic() - t0 < brokerops.CREDIT_PROBE_S + 1.0   # no longer than the credit wait


def test_detect_protocol_and_speaks_091() -> None:
    log = hh.DeleteLog()
    with hostile.HostileServer(hh.deleting_broker(log, _all_ok)) as server:
        target = Target.parse(server.url)
        assert brokerops.detect_protocol(target) == "0-9-1"
        assert brokerops.speaks_091(target) and brokerops.can_delete(target, "1.0")
    with hostile.HostileServer(hh.sasl_init_then_silent) as server:
        assert not brokerops.speaks_091(Target.parse(server.url))
        assert not brokerops.can_delete(Target.parse(server.url), "1.0")


# ---------------------------------------------------------------------------- through the CLI

@pytest.mark.parametrize("behaviour, protocol, wanted", [
    (hh.start_then_silent, "auto", "did not answer our connection.start-ok within"),
    (hh.start_then_heartbeat_flood, "auto", "heartbeat frame(s) and no connection.tune"),
    (hh.start_then_hang_up, "auto", "login refused"),
    (hh.sasl_init_then_silent, "1.0", "did not answer our sasl-init within"),
], ids=lambda v: getattr(v, "__name__", None))
def test_run_reports_the_handshake_failure_in_one_line(behaviour, protocol, wanted) -> None:
    with hostile.HostileServer(behaviour) as server:
        t0 = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "amqpspec.cli", "run", server.url, "--protocol", protocol],
                              capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
        took = time.monotonic() - t0
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert wanted in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert took < brokerops.PROBE_TIMEOUT_S + 15.0
