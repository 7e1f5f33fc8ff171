"""basic.reject/during-content and rabbitmq.basic.nack/while-sending-content can fail (issue 14):
against a scripted broker that sends the whole content before it reads the reject or nack they
warn (the SHOULD of basic.reject/01, nack/01), against one that cuts the content when the method
arrives they pass."""
from __future__ import annotations

import pytest

from amqpspec.brokerops import probe
from amqpspec.case import REGISTRY, discover
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support import hostile
from tests.support.hostile_while_sending import broker

CASES = ("amqp091/basic.reject/during-content", "amqp091/rabbitmq.basic.nack/while-sending-content")
EXPECTED = {"serial": Verdict.WARNING, "cuts": Verdict.PASSED}


@pytest.mark.parametrize("reaction", sorted(EXPECTED))
@pytest.mark.parametrize("case_id", CASES)
def test_verdict_follows_when_the_method_is_processed(case_id: str, reaction: str) -> None:
    discover("0-9-1")
    with hostile.HostileServer(broker(reaction)) as server:
        target = Target.parse(f"amqp://guest:guest@127.0.0.1:{server.port}/")
        target.broker = probe(target)  # as the CLI does: the capabilities decide what nack needs
        [result] = Runner(target, [REGISTRY[case_id]],
                          RunOptions(seed=1, protocol="0-9-1", liveness=False)).run()
    assert result.verdict is EXPECTED[reaction], f"{result.reason}: {result.evidence}"
