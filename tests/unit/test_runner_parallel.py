"""Cases run side by side give the verdicts a serial run gives, even when one of them stops the broker.

The broker is the scripted fake of tests/support/fake091.py behind a switch: one case "crashes"
it (from then on it accepts connections and never answers, as a deadlocked broker does) and
the restart command (a file the fake watches) brings it back. It stands in for no broker in a
conformance verdict: the cases here are the test's own and check nothing about a broker.
"""
from __future__ import annotations

import shlex
import socket
import threading
import time
from pathlib import Path

import pytest

from amqpspec.case import CaseSpec, Context
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support.fake091 import serve
from tests.support.hostile import HostileServer, silent

KILLER = "amqp091/4.2.2/c05"


class Switch:
    """The fake's state: serving, or (after a crash) silent until the restart file appears."""

    def __init__(self, restart_file: Path) -> None:
        self.dead = threading.Event()
        self.restart_file = restart_file

    def behaviour(self, conn: socket.socket) -> None:
        if self.dead.is_set() and self.restart_file.exists():
            self.restart_file.unlink()
            self.dead.clear()
        if self.dead.is_set():
            silent(conn)
        else:
            serve(conn, {"product": "switchable fake"})


def _cases(switch: Switch) -> list[CaseSpec]:
    def harmless(ctx: Context) -> None:
        time.sleep(0.3)  # long enough for the cases of one round to run side by side
        ctx.record(True, expected="-", observed="-")

    def killer(ctx: Context) -> None:
        time.sleep(0.1)
        switch.dead.set()
        ctx.record(True, expected="any close", observed="closed")

    return [CaseSpec(id=f"amqp091/4.2.2/c{i:02d}", title=f"c{i}", protocol="0-9-1", section="4.2.2",
                     clauses=("amqp091:4.2.2/3",), requires=(), timeout=3.0,
                     func=killer if f"amqp091/4.2.2/c{i:02d}" == KILLER else harmless) for i in range(12)]


@pytest.mark.parametrize("jobs", [1, 4])
def test_only_the_case_that_stops_the_broker_is_blamed_whatever_the_jobs(tmp_path: Path, jobs: int) -> None:
    restart_file = tmp_path / "restart"
    switch = Switch(restart_file)
    with HostileServer(switch.behaviour) as server:
        options = RunOptions(seed=1, jobs=jobs, restart_command=f"touch {shlex.quote(str(restart_file))}",
                             restart_wait=15.0)
        results = Runner(Target.parse(server.url), _cases(switch), options).run()
    by_case = {r.case: r for r in results}
    assert len(results) == 12 and len(by_case) == 12  # each case reported once, re-runs included
    assert by_case[KILLER].verdict is Verdict.FAILED, by_case[KILLER].reason
    assert "stopped serving" in by_case[KILLER].reason
    others = {cid: (r.verdict, r.reason) for cid, r in by_case.items() if cid != KILLER}
    assert all(v is Verdict.PASSED for v, _ in others.values()), others
    if jobs > 1:  # the bystanders of the crash were run again alone, and say so
        assert any("run again alone" in note for r in results for note in r.evidence.get("notes", []))


def test_without_a_restart_command_a_parallel_run_against_a_dead_broker_still_ends_quickly(tmp_path: Path) -> None:
    switch = Switch(tmp_path / "never")
    with HostileServer(switch.behaviour) as server:
        t0 = time.monotonic()
        results = Runner(Target.parse(server.url), _cases(switch), RunOptions(seed=1, jobs=4)).run()
        took = time.monotonic() - t0
    assert len(results) == 12
    assert sum(r.verdict is Verdict.FAILED for r in results) == 1  # the first to see it is blamed
    assert all(r.verdict in (Verdict.PASSED, Verdict.FAILED, Verdict.ERROR) for r in results)
    assert took < 30.0, took


def test_an_exclusive_case_runs_alone_after_the_parallel_ones() -> None:
    """A case that restarts the broker (CaseSpec.exclusive) would stop the cases beside it: it runs
    when no other case is running, after all of them."""
    running: set[str] = set()
    seen_beside: dict[str, set[str]] = {}
    lock = threading.Lock()

    def body(ctx: Context) -> None:
        with lock:
            seen_beside[ctx.spec.id] = set(running)
            running.add(ctx.spec.id)
        time.sleep(0.2)
        with lock:
            seen_beside[ctx.spec.id] |= running - {ctx.spec.id}
            running.discard(ctx.spec.id)
        ctx.record(True, expected="-", observed="-")

    lone = "amqp091/4.2.2/c00"  # first in order: a plain deque would start it at once
    cases = [CaseSpec(id=f"amqp091/4.2.2/c{i:02d}", title=f"c{i}", protocol="0-9-1", section="4.2.2",
                      clauses=("amqp091:4.2.2/3",), requires=(), timeout=3.0, func=body,
                      exclusive=f"amqp091/4.2.2/c{i:02d}" == lone) for i in range(8)]
    started: list[str] = []
    with HostileServer(lambda conn: serve(conn, {"product": "fake"})) as server:
        results = Runner(Target.parse(server.url), cases, RunOptions(seed=1, jobs=4),
                         on_start=started.append).run()
    assert all(r.verdict is Verdict.PASSED for r in results) and len(results) == 8
    assert started[-1] == lone
    assert seen_beside[lone] == set()
    assert any(seen_beside[c.id] for c in cases if c.id != lone)  # the others did run side by side


def test_a_case_undecided_beside_others_runs_again_alone_and_keeps_that_verdict() -> None:
    """A case that errors while others run beside it (an answer that missed its deadline under load)
    is run again alone after the parallel cases: its verdict is the serial one, with a note."""
    running: set[str] = set()
    lock = threading.Lock()
    shy = "amqp091/4.2.2/c03"

    def body(ctx: Context) -> None:
        with lock:
            running.add(ctx.spec.id)
        crowded = False
        for _ in range(10):  # did another case run beside this one?
            time.sleep(0.05)
            with lock:
                crowded = crowded or len(running) > 1
        with lock:
            running.discard(ctx.spec.id)
        if ctx.spec.id == shy and crowded:
            raise TimeoutError("expected an answer, got nothing before the deadline")
        ctx.record(True, expected="-", observed="-")

    cases = [CaseSpec(id=f"amqp091/4.2.2/c{i:02d}", title=f"c{i}", protocol="0-9-1", section="4.2.2",
                      clauses=("amqp091:4.2.2/3",), requires=(), timeout=3.0, func=body) for i in range(8)]
    with HostileServer(lambda conn: serve(conn, {"product": "fake"})) as server:
        results = Runner(Target.parse(server.url), cases, RunOptions(seed=1, jobs=4)).run()
    by_case = {r.case: r for r in results}
    assert len(results) == 8 and len(by_case) == 8
    assert all(r.verdict is Verdict.PASSED for r in results), {r.case: r.reason for r in results}
    notes = by_case[shy].evidence.get("notes", [])
    assert any("run again alone" in n and "deadline" in n for n in notes), notes
