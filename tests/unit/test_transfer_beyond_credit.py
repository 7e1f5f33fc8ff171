"""amqp10/2.6.7/transfer-beyond-credit can fail (issue 14): against a scripted receiver that reacts to a
transfer beyond its credit in each way, the case passes only for the two reactions 2.6.7/10 allows
(handle the excess normally, or detach the link with transfer-limit-exceeded)."""
from __future__ import annotations

import pytest

from amqpspec.case import REGISTRY, discover
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support import hostile
from tests.support.hostile_credit10 import excess_broker, url_10

CASE = "amqp10/2.6.7/transfer-beyond-credit"
EXPECTED = {
    "accept": Verdict.PASSED,
    "detach-limit": Verdict.PASSED,
    "drop": Verdict.INFORMATIONAL,   # the deliveries within credit settled, the excess one silently lost
    # neither reaction: 2.6.7/10 is a MAY and the condition's text a definition, so both checks weigh
    # informational (a check weighs no more than the text it cites)
    "detach-other": Verdict.INFORMATIONAL,
    "close": Verdict.INFORMATIONAL,   # likewise: an error wider than the link
}


@pytest.mark.parametrize("reaction", sorted(EXPECTED))
def test_verdict_follows_the_reaction_to_the_excess_transfer(reaction: str) -> None:
    discover("1.0")
    with hostile.HostileServer(excess_broker(reaction)) as server:
        [result] = Runner(Target.parse(url_10(server.port)), [REGISTRY[CASE]],
                          RunOptions(seed=1, protocol="1.0", liveness=False)).run()
    assert result.verdict is EXPECTED[reaction], f"{result.reason}: {result.evidence}"
