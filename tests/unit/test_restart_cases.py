"""The restart cases (conformance/amqp091/s1_4_3_persistence.py): skipped without a restart
command, and failed by a broker that loses across a restart what their clause protects (the
forgetful fake of tests/support/hostile_restart.py)."""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from amqpspec.case import NO_RESTART_COMMAND, discover, select
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support.hostile_restart import Forgetful

QUEUE = "amqp091/queue.declare.durable/recreated-after-restart"
BINDING = "amqp091/queue.bind/durable-binding-restored"
MESSAGE = "amqp091/1.4.3/persistent-message-survives-restart"


def _run(tmp_path: Path, forgets: str, restart: bool = True) -> dict[str, tuple[Verdict, str]]:
    restart_file = tmp_path / "restarted"
    fake = Forgetful(restart_file, forgets)
    cases = select(discover("0-9-1"), [QUEUE, BINDING, MESSAGE], [])
    with HostileServerFor(fake) as url:
        options = RunOptions(seed=1, jobs=4, restart_wait=10.0,
                             restart_command=f"touch {shlex.quote(str(restart_file))}" if restart else None)
        results = Runner(Target.parse(url), cases, options).run()
    return {r.case: (r.verdict, r.reason) for r in results}


class HostileServerFor:
    """The fake behind a HostileServer, as a URL."""

    def __init__(self, fake: Forgetful) -> None:
        from tests.support.hostile import HostileServer

        self.server = HostileServer(fake.behaviour)

    def __enter__(self) -> str:
        return self.server.__enter__().url

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(*exc)


def test_without_a_restart_command_each_restart_case_is_skipped_saying_why(tmp_path: Path) -> None:
    got = _run(tmp_path, "queues", restart=False)
    assert set(got) == {QUEUE, BINDING, MESSAGE}
    assert all(v is Verdict.SKIPPED and r == NO_RESTART_COMMAND for v, r in got.values()), got


@pytest.mark.parametrize("forgets, failed", [("queues", QUEUE), ("bindings", BINDING), ("messages", MESSAGE)])
def test_a_broker_that_loses_what_the_clause_protects_fails_its_case(tmp_path: Path, forgets: str, failed: str) -> None:
    got = _run(tmp_path, forgets)
    assert got[failed][0] is Verdict.FAILED, got
    if forgets == "queues":  # a lost queue skips the cases that need it: judged once
        assert got[BINDING][0] is got[MESSAGE][0] is Verdict.SKIPPED, got
    else:  # (the fake cannot return a message's body, so only the queue case passes on it)
        assert got[QUEUE][0] is Verdict.PASSED, got
