"""The AMQP 1.0 client cases of section 4 (transactions) can fail: as in test_client10_cases.py,
each passes with the correct scripted client (tests/support/client10_script.py, its ``tx``
workload) and gets its failing verdict with the one fault it looks for.

The runner, the scripted driver and the assertions are those of test_client10_cases.py (imported).
"""
from __future__ import annotations

from typing import Any

import pytest

from amqpspec.case import discover

from tests.unit.test_client10_cases import assert_catches, assert_passes, run_faults

#: case id (without "amqp10/") -> (the fault that breaks its rule, the verdict it then gets)
TX_FAULTS: dict[str, tuple[str, str]] = {
    "4.2/client-declare-unsettled": ("settled-declare", "failed"),
    "4.2/client-control-link-allows-rejected": ("no-rejected-outcome", "warning"),
    "4.4.1/client-transfers-carry-txn-id": ("no-txn-state", "failed"),
    "4.4.1/client-split-delivery-one-transaction": ("txn-first-frame-only", "failed"),
    "4.5.2/client-no-global-id": ("global-id", "failed"),
    "4.4.4/client-settles-after-discharge": ("no-settle-after-discharge", "warning"),
}


@pytest.fixture(scope="module")
def tx_verdicts() -> dict[tuple[str, str | None], Any]:
    return run_faults(TX_FAULTS)


def test_every_case_here_exists() -> None:
    ids = {c.id.removeprefix("amqp10/") for c in discover("1.0", role="client")}
    assert set(TX_FAULTS) <= ids, f"stale: {set(TX_FAULTS) - ids}"


@pytest.mark.parametrize("case_id", sorted(TX_FAULTS))
def test_case_passes_a_correct_client(tx_verdicts: dict, case_id: str) -> None:
    assert_passes(tx_verdicts, case_id)


@pytest.mark.parametrize("case_id", sorted(TX_FAULTS))
def test_case_fails_a_client_breaking_its_rule(tx_verdicts: dict, case_id: str) -> None:
    assert_catches(tx_verdicts, TX_FAULTS, case_id)


def test_responder_answers_as_a_transactional_resource() -> None:
    """The coordinator's default answers (4.2, 4.3): a fresh txn-id per declare, accepted for the
    discharge of a live one (once), rejected with amqp:transaction:unknown-id for any other."""
    from amqpspec.peer.server10_responder import Responder10
    from amqpspec.wire.amqp10 import spec

    r = Responder10(peer=None)  # type: ignore[arg-type]  # the answers are computed, nothing is sent
    first, second = r.default_txn_outcome(spec.Declare()), r.default_txn_outcome(spec.Declare())
    assert isinstance(first, spec.Declared) and isinstance(second, spec.Declared)
    assert first.txn_id != second.txn_id
    assert isinstance(r.default_txn_outcome(spec.Discharge(txn_id=first.txn_id, fail=False)), spec.Accepted)
    assert r.transactions[first.txn_id] == "committed"
    again = r.default_txn_outcome(spec.Discharge(txn_id=first.txn_id, fail=True))
    unknown = r.default_txn_outcome(spec.Discharge(txn_id=b"never-declared"))
    for answer in (again, unknown):
        assert isinstance(answer, spec.Rejected) and str(answer.error.condition) == "amqp:transaction:unknown-id"
    assert isinstance(r.default_txn_outcome(spec.Discharge(txn_id=second.txn_id, fail=True)), spec.Accepted)
    assert r.transactions[second.txn_id] == "rolled-back"


def test_allows_rejected_reads_the_source_as_3_5_3_says() -> None:
    from types import SimpleNamespace

    from amqpspec.peer.server10_responder import allows_rejected
    from amqpspec.wire.amqp10 import Symbol, spec

    def link(source: object) -> object:
        return SimpleNamespace(remote=SimpleNamespace(source=source))

    assert allows_rejected(link(spec.Source(outcomes=[Symbol("amqp:accepted:list"), Symbol("amqp:rejected:list")])))
    assert not allows_rejected(link(spec.Source(outcomes=[Symbol("amqp:accepted:list")])))
    assert not allows_rejected(link(spec.Source()))   # neither outcomes nor default-outcome: accepted alone
    assert allows_rejected(link(spec.Source(default_outcome=spec.Rejected())))
    assert not allows_rejected(link(None))
