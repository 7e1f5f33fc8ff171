"""queue.declare.durable/types and queue.declare-ok/consumer-count can fail (issue 14): against a
scripted broker that keeps queues and consumers they pass, against one that makes every queue
transient, or counts a cancelled consumer, the case concerned fails (durable/types, a MUST) or
is informational (consumer-count: the field's description has no RFC 2119 keyword, and a check weighs
no more than the text it cites)."""
from __future__ import annotations

import pytest

from amqpspec.case import REGISTRY, discover
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support import hostile
from tests.support.hostile_queue_kinds import broker

DURABLE = "amqp091/queue.declare.durable/types"
CONSUMERS = "amqp091/queue.declare-ok/consumer-count"


@pytest.mark.parametrize(("case_id", "wrong", "expected"), [
    (DURABLE, {}, Verdict.PASSED),
    (DURABLE, {"ignore_durable": True}, Verdict.FAILED),
    (CONSUMERS, {}, Verdict.PASSED),
    (CONSUMERS, {"count_cancelled": True}, Verdict.INFORMATIONAL),
])
def test_verdict_follows_what_the_broker_keeps(case_id: str, wrong: dict[str, bool], expected: Verdict) -> None:
    discover("0-9-1")
    with hostile.HostileServer(broker(**wrong)) as server:
        [result] = Runner(Target.parse(f"amqp://guest:guest@127.0.0.1:{server.port}/"), [REGISTRY[case_id]],
                          RunOptions(seed=1, protocol="0-9-1", liveness=False)).run()
    assert result.verdict is expected, f"{result.reason}: {result.evidence}"
