"""The AMQP 1.0 client cases of the links-and-messaging batch (2.6, 2.7, 3.x) can fail: as in
test_client10_cases.py, each passes with the correct scripted client
(tests/support/client10_script.py) and gets its failing verdict with the one fault it looks for.

The runner and the scripted driver are those of test_client10_cases.py (imported, not copied).
"""
from __future__ import annotations

from typing import Any

import pytest

from amqpspec.case import discover

from tests.unit.test_client10_cases import assert_catches, assert_passes, run_faults

#: case id (without "amqp10/") -> (the fault that breaks its rule, the verdict it then gets)
MORE_FAULTS: dict[str, tuple[str, str]] = {
    "3.5.3/client-no-dynamic-node-properties-without-dynamic": ("dnp-without-dynamic", "failed"),
    "2.7.3/client-distinct-handles": ("same-handle", "failed"),
    "3.4.1/client-sender-no-received-state": ("received-state", "failed"),
    "2.7.5/client-ignores-unknown-resumed-delivery": ("keep-resumed", "failed"),
    "2.7.6/client-applies-outcome-after-detach": ("drop-on-detach", "failed"),
    "2.6.5/client-ends-session-on-input-after-link-error": ("ignore-errant", "failed"),
    "2.7.5/client-ignores-payload-of-aborted-transfer": ("keep-aborted", "failed"),
    "2.6.3/client-receiver-checks-terminus": ("trust-terminus", "failed"),
    "2.6.2/client-maps-partner-handle": ("partner-handle", "failed"),
    "2.6.5/client-ends-session-on-pipelined-reattach": ("ignore-errant", "failed"),
    "2.6.5/client-resumes-after-partner-link-error": ("pipelined-reattach", "failed"),
    "3.5.9/client-node-properties-types": ("bad-node-properties", "failed"),
    "3.5.3/client-source-outcomes-valid": ("bad-outcomes", "failed"),
    "2.7.5/client-settled-on-first-frame-only": ("last-frame-settled", "failed"),
    "3.5.3/client-detaches-on-unasked-filter": ("trust-filter", "failed"),
    "2.7.3/client-answering-sender-initial-delivery-count": ("no-initial-delivery-count", "failed"),
    "2.7.3/client-answering-attach-handle-free": ("answer-handle-in-use", "failed"),
    "2.7.7/client-link-error-has-details": ("bare-link-error", "warning"),
    "2.7.4/client-answers-session-echo": ("ignore-echo", "warning"),
    "3.2.1/client-headerless-message-defaults": ("header-defaults", "failed"),
    "2.6.7/client-sender-credit-set-not-added": ("credit-added", "failed"),
    "2.6.7/client-sender-drains-after-sending": ("drain-first", "warning"),
    "2.7.3/client-answering-attach-lowest-handle": ("answer-handle-high", "warning"),
    "2.7.2/client-answering-attach-within-handle-max": ("answer-handle-high", "failed"),
}


@pytest.fixture(scope="module")
def more_verdicts() -> dict[tuple[str, str | None], Any]:
    return run_faults(MORE_FAULTS)


def test_every_case_here_exists() -> None:
    ids = {c.id.removeprefix("amqp10/") for c in discover("1.0", role="client")}
    assert set(MORE_FAULTS) <= ids, f"stale: {set(MORE_FAULTS) - ids}"


@pytest.mark.parametrize("case_id", sorted(MORE_FAULTS))
def test_case_passes_a_correct_client(more_verdicts: dict, case_id: str) -> None:
    assert_passes(more_verdicts, case_id)


@pytest.mark.parametrize("case_id", sorted(MORE_FAULTS))
def test_case_fails_a_client_breaking_its_rule(more_verdicts: dict, case_id: str) -> None:
    assert_catches(more_verdicts, MORE_FAULTS, case_id)
