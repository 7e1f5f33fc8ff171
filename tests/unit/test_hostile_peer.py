"""The peer and the runner against servers that misbehave: every case ends by its deadline."""
from __future__ import annotations

import threading
import time

import pytest

from amqpspec.case import CaseSpec, Context
from amqpspec.peer.amqp091 import Peer
from amqpspec.peer.base import Closed
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.verify import SilentClose
from amqpspec.wire.amqp091 import ProtocolHeader
from tests.support import hostile


def _case(func, timeout: float = 2.0) -> CaseSpec:
    return CaseSpec(id="amqp091/4.2.2/hostile", title="hostile", protocol="0-9-1", section="4.2.2",
                    clauses=("amqp091:4.2.2/3",), requires=(), timeout=timeout, func=func)


def _run_one(server: hostile.HostileServer, func, timeout: float = 2.0):
    target = Target.parse(server.url)
    runner = Runner(target, [_case(func, timeout)], RunOptions(seed=1, liveness=False))
    t0 = time.monotonic()
    [result] = runner.run()
    return result, time.monotonic() - t0


def _observe_after_header(ctx: Context) -> None:
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader())
    ctx.check(peer.observe(1.0), SilentClose())


def _handshake(ctx: Context) -> None:
    ctx.connect()  # never completes against these servers
    ctx.record(True, expected="-", observed="-")


def _stuck_forever(ctx: Context) -> None:
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader())
    while True:  # a case that ignores its deadline must still be cut off...
        item = peer.recv(0.2)
        if isinstance(item, Closed) and item.how == "local":
            return  # ...by the runner shutting its sockets (then stop, not spin)


@pytest.mark.parametrize("behaviour", [hostile.silent, hostile.huge_frame, hostile.heartbeat_flood,
                                       hostile.reset_mid_frame, hostile.garbage_stream])
def test_observe_ends_by_deadline(behaviour):
    with hostile.HostileServer(behaviour) as server:
        result, took = _run_one(server, _observe_after_header)
    # deadline 2 s + the runner's 1 s grace + cleanup; the flooding server shares this process's
    # GIL, so a loaded CI machine stretches it (4.5 s seen): the bound tells an end from a hang
    assert took < 7.0
    assert result.verdict in (Verdict.FAILED, Verdict.PASSED)
    assert len(result.transcript) <= 5001  # a flood does not grow the record without bound


@pytest.mark.parametrize("behaviour", [hostile.silent, hostile.huge_frame, hostile.heartbeat_flood,
                                       hostile.reset_mid_frame, hostile.garbage_stream])
def test_handshake_against_hostile_server_is_an_error_not_a_hang(behaviour):
    with hostile.HostileServer(behaviour) as server:
        result, took = _run_one(server, _handshake)
    assert took < 7.5  # as above: deadline, grace, cleanup, and a flood sharing the GIL
    assert result.verdict is Verdict.ERROR
    assert result.reason


def test_runner_cuts_off_a_case_that_ignores_its_deadline():
    with hostile.HostileServer(hostile.silent) as server:
        result, took = _run_one(server, _stuck_forever, timeout=1.0)
    assert took < 5.0
    assert result.verdict is Verdict.ERROR
    assert "deadline" in result.reason
    # and the abandoned case thread sees its socket closed and ends (a spinning leftover thread
    # once held the GIL for the rest of the test session)
    end = time.monotonic() + 3
    while any(t.name == "case amqp091/4.2.2/hostile" for t in threading.enumerate()) and time.monotonic() < end:
        time.sleep(0.05)
    assert not any(t.name == "case amqp091/4.2.2/hostile" for t in threading.enumerate())


def test_huge_frame_is_refused_without_allocation():
    with hostile.HostileServer(hostile.huge_frame) as server:
        target = Target.parse(server.url)
        peer = Peer.connect(target, Transcript(), time.monotonic() + 3)
        peer.send(ProtocolHeader())
        obs = peer.observe(1.0)
        peer.abort()
    assert obs.framing_error and "4294967295" in obs.framing_error
    assert peer.reader.pending < 64


def test_reset_is_classified():
    with hostile.HostileServer(hostile.reset_mid_frame) as server:
        target = Target.parse(server.url)
        peer = Peer.connect(target, Transcript(), time.monotonic() + 3)
        peer.send(ProtocolHeader())
        obs = peer.observe(2.0)
        peer.abort()
    assert obs.end == "rst"


def test_a_broker_that_stops_serving_fails_the_case():
    """A crash also "closes the connection": the liveness probe must not let it pass."""
    with hostile.HostileServer(hostile.reset_mid_frame) as server:
        target = Target.parse(server.url)

        def closes_silently_is_fine(ctx: Context) -> None:
            peer = ctx.connect(handshake=False)
            peer.send(ProtocolHeader())
            ctx.record(True, expected="any close", observed="closed")

        [result] = Runner(target, [_case(closes_silently_is_fine)], RunOptions(seed=1)).run()
    assert result.verdict is Verdict.FAILED
    assert "stopped serving new connections" in result.reason


def test_only_the_case_that_broke_the_broker_is_blamed():
    with hostile.HostileServer(hostile.reset_mid_frame) as server:
        target = Target.parse(server.url)

        def harmless(ctx: Context) -> None:
            ctx.record(True, expected="-", observed="-")

        cases = [_case(harmless), CaseSpec(id="amqp091/4.2.2/second", title="second", protocol="0-9-1",
                                           section="4.2.2", clauses=("amqp091:4.2.2/3",), requires=(), timeout=2.0,
                                           func=harmless)]
        first, second = Runner(target, cases, RunOptions(seed=1, jobs=1)).run()  # serial: see test_runner_parallel
    assert first.verdict is Verdict.FAILED
    assert second.verdict is Verdict.ERROR and second.reason.startswith("not run:")


def test_the_rest_of_a_run_against_a_deadlocked_broker_ends_within_seconds():
    """A broker that accepts connections and never answers (deadlocked) costs each liveness probe
    its whole timeout; without --restart-command, whether it came back is asked at intervals, not
    before every remaining case (which made 336 cases cost 520 s against a deadlocked garagemq)."""
    with hostile.HostileServer(hostile.silent) as server:
        target = Target.parse(server.url)

        def harmless(ctx: Context) -> None:
            ctx.record(True, expected="-", observed="-")

        cases = [CaseSpec(id=f"amqp091/4.2.2/c{i:03d}", title=f"c{i}", protocol="0-9-1", section="4.2.2",
                          clauses=("amqp091:4.2.2/3",), requires=(), timeout=2.0, func=harmless) for i in range(60)]
        t0 = time.monotonic()
        first, *rest = Runner(target, cases, RunOptions(seed=1, jobs=1)).run()  # serial: see test_runner_parallel
        took = time.monotonic() - t0
    assert first.verdict is Verdict.FAILED  # the first probe (two attempts of 3 s) blames it
    assert all(r.verdict is Verdict.ERROR and r.reason.startswith("not run:") for r in rest)
    assert took < 20.0, took  # one probe per interval, not 3 s for each of the 59 others
