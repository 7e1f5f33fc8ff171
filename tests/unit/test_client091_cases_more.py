"""The 0-9-1 client cases of the basic, tx and confirm classes and RabbitMQ's extensions
added beside tests/unit/test_client091_cases.py (its runner reused): each passes against the
scripted correct client and does not pass against the same client with the one fault it
looks for."""
from __future__ import annotations

import pytest

from amqpspec.case import discover
from amqpspec.result import Verdict
from tests.unit.test_client091_cases import assert_not_passed, assert_passes, run_faults

#: the fault of the scripted client each case must catch
FAULTS = {
    "amqp091/basic.ack/client-acks-each-delivery-once": "double-ack",
    "amqp091/basic.ack/client-acks-each-get-once": "double-ack",
    "amqp091/basic.ack/client-no-ack-for-no-ack-consumer": "ack-no-ack",
    "amqp091/basic.ack/client-no-ack-for-no-ack-get": "ack-no-ack",
    "amqp091/basic.reject/client-rejects-no-consumed-message": "reject-first",
    "amqp091/basic.reject/client-rejects-no-fetched-message": "reject-first",
    "amqp091/rabbitmq.basic.nack/client-nacks-no-consumed-message": "nack-first",
    "amqp091/rabbitmq.basic.nack/client-nacks-no-fetched-message": "nack-first",
    "amqp091/rabbitmq.basic.nack/client-refuses-second-nack": "trust-confirms",
    "amqp091/rabbitmq.basic.nack/client-refuses-nack-after-ack": "trust-confirms",
    "amqp091/rabbitmq.confirm/client-takes-ack-of-all-outstanding": "ignore-multiple",
    "amqp091/rabbitmq.confirm/client-takes-nack-multiple": "ignore-multiple",
    "amqp091/rabbitmq.confirm/client-takes-confirms-out-of-order": "assume-order",
    "amqp091/rabbitmq.connection.blocked/client-holds-confirmed-publishes": "ignore-blocked",
    "amqp091/rabbitmq.connection.unblocked/client-publishes-after-unblocked": "stay-blocked",
    "amqp091/basic.get-empty/client-takes-get-empty": "empty-fatal",
    "amqp091/basic.get-empty/client-gets-after-get-empty": "empty-fatal",
    "amqp091/basic.cancel/client-takes-delivery-before-cancel-ok": "strict-after-cancel",
    "amqp091/basic.delivery-mode/client-marks-persistent-publishes": "no-persistent",
    "amqp091/basic.delivery-mode/client-marks-persistent-transacted-publishes": "no-persistent",
    "amqp091/rabbitmq.basic.nack/client-ignores-requeue-of-nack": "nack-requeue-as-ack",
    "amqp091/rabbitmq.confirm.select/client-confirms-non-transactional-channel": "tx-and-confirm",
    "amqp091/basic.ack/client-no-ack-for-rpc-reply": "ack-no-ack",
    "amqp091/3.1.10/client-declares-no-reserved-queue-name": "amq-queue-name",
    "amqp091/rabbitmq.confirm/client-takes-nack-of-all-outstanding": "ignore-multiple",
    "amqp091/domain.redelivered/client-gets-redelivered": "drop-redelivered",
    "amqp091/rabbitmq.confirm/client-numbers-publishes-from-one": "count-from-zero",
}


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, tuple[Verdict, str]]]:
    """Verdicts of the correct client ("") and of each fault, for the cases that look for it."""
    return run_faults(FAULTS, 3)


def test_cases_exist() -> None:
    ids = {c.id for c in discover("0-9-1", role="client")}
    assert set(FAULTS) <= ids, f"stale: {sorted(set(FAULTS) - ids)}"


@pytest.mark.parametrize("case_id", sorted(FAULTS))
def test_correct_client_passes(verdicts, case_id: str) -> None:  # type: ignore[no-untyped-def]
    assert_passes(verdicts, case_id)


@pytest.mark.parametrize("case_id", sorted(FAULTS))
def test_faulty_client_does_not_pass(verdicts, case_id: str) -> None:  # type: ignore[no-untyped-def]
    assert_not_passed(verdicts, FAULTS[case_id], case_id)
