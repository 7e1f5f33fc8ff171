"""The last AMQP 1.0 MUST cases of issue 13 can fail or skip as their text says: the durable-message
restart case (3.2.1) skips without a restart command and passes where the node keeps the message, and
the transaction cases (4.4.2, 4.4.3) skip without a coordinator and pass or fail against the scripted
coordinator of tests/support/fake10_txn.py."""
from __future__ import annotations

import pytest

from amqpspec.case import REGISTRY, discover
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support import hostile
from tests.support.fake10_musts import Fake, url_10
from tests.support.fake10_txn import FakeTxn


def verdict(case_id: str, fake: object, **options: object) -> tuple[Verdict, str]:
    discover("1.0")
    with hostile.HostileServer(fake.behaviour) as server:   # type: ignore[attr-defined]
        [result] = Runner(Target.parse(url_10(server.port)), [REGISTRY[case_id]],
                          RunOptions(seed=1, protocol="1.0", liveness=False, **options)).run()  # type: ignore[arg-type]
    return result.verdict, f"{result.reason}: {result.evidence}"


DURABLE = "amqp10/3.2.1/durable-message-survives-restart"


def test_durable_restart_case_skips_without_restart_command() -> None:
    got, why = verdict(DURABLE, Fake())
    assert got is Verdict.SKIPPED and "restart-command" in why, why


def test_durable_restart_case_passes_where_the_node_keeps_the_message() -> None:
    """The fake's queues outlive its connections; a no-op restart command stands for a restart that kept them."""
    got, why = verdict(DURABLE, Fake(), restart_command="true", restart_wait=5.0)
    assert got is Verdict.PASSED, why


OTHER_TXN = "amqp10/4.4.2/retirement-other-transaction"
MID = "amqp10/4.4.3/discharge-mid-acquisition"


@pytest.mark.parametrize("case_id", [OTHER_TXN, MID])
def test_transaction_cases_skip_without_a_coordinator(case_id: str) -> None:
    got, why = verdict(case_id, FakeTxn(fault="no-coordinator"))
    assert got is Verdict.SKIPPED and "transactional resource" in why, why


@pytest.mark.parametrize("case_id,fault", [(OTHER_TXN, ""), (MID, ""), (MID, "abort")])
def test_transaction_cases_pass_against_a_coordinator_that_does_as_the_text_says(case_id: str, fault: str) -> None:
    got, why = verdict(case_id, FakeTxn(fault=fault))
    assert got is Verdict.PASSED, why


@pytest.mark.parametrize("case_id,fault", [(OTHER_TXN, "other-txn-ignored"), (MID, "discharge-first"),
                                           (MID, "keep-acquired")])
def test_transaction_cases_fail_against_a_faulty_coordinator(case_id: str, fault: str) -> None:
    got, why = verdict(case_id, FakeTxn(fault=fault))
    assert got is Verdict.FAILED, why
