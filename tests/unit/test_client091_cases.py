"""Every 0-9-1 client case can fail: it passes against the scripted correct client and fails
(or warns, for a SHOULD) against the same client with the one fault the case looks for.

The scripted client (tests/support/client091_scripted.py) is a driver of the contract; the
runs go through the ClientRunner as ``amqpspec client --driver-cmd`` does. Runs of several
faults go side by side (each with its own listening peer): most of a case's time is waiting.
"""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from amqpspec.case import discover
from amqpspec.client.drivers import DriverSpec
from amqpspec.client.runner import ClientRunner
from amqpspec.client.session import ClientTarget
from amqpspec.peer.server091 import Listener
from amqpspec.result import Verdict
from amqpspec.runner import RunOptions

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "client091_scripted.py"

#: the fault of the scripted client each case must catch
FAULTS = {
    "amqp091/2.3.7/client-answers-connection-close": "no-close-ok",
    "amqp091/2.3.7/client-answers-channel-close": "no-channel-close-ok",
    "amqp091/2.3.7/client-uses-close-handshake": "drop-socket",
    "amqp091/2.3.7/no-content-after-channel-close-ok": "publish-after-close",
    "amqp091/channel.close/client-discards-after-close": "ack-after-close",
    "amqp091/channel.close/client-answers-crossing-close": "no-crossing-close-ok",
    "amqp091/connection.close/client-answers-crossing-close": "no-crossing-close-ok",
    "amqp091/4.2.2/client-sends-protocol-header": "bad-header",
    "amqp091/connection.start/client-refuses-unknown-version": "ignore-version",
    "amqp091/4.2.2/client-retries-lower-version": "no-retry",
    "amqp091/connection.start-ok/client-properties-fields": "no-properties",
    "amqp091/connection.start-ok/mechanism-from-offer": "bad-mechanism",
    "amqp091/connection.tune-ok/channel-max-within-proposal": "raise-channel-max",
    "amqp091/connection.tune-ok/frame-max-within-proposal": "raise-frame-max",
    "amqp091/connection.tune-ok/frame-max-zero-proposal": "small-frame-max",
    "amqp091/connection.tune/accepts-frame-min-size-start": "small-read-buffer",
    "amqp091/4.2.3/client-respects-frame-max": "ignore-frame-max",
    "amqp091/4.2.3/client-closes-on-unknown-frame-type": "lenient",
    "amqp091/4.2.3/client-closes-on-bad-frame-end": "lenient",
    "amqp091/4.2.3/client-rejects-oversized-frame": "lenient",
    "amqp091/4.2.3/client-rejects-connection-method-on-channel-1": "lenient",
    "amqp091/4.2.3/client-closes-on-unknown-method": "lenient",
    "amqp091/4.2.6.2/client-joins-split-body": "first-frame-only",
    "amqp091/4.2.6/client-rejects-incomplete-content": "lenient",
    "amqp091/4.2.6/client-rejects-body-past-size": "lenient",
    "amqp091/4.2.6.1/client-rejects-class-mismatch": "lenient",
    "amqp091/4.2.6.1/client-rejects-content-on-channel-zero": "lenient",
    "amqp091/4.2.6/client-rejects-unknown-property-flag": "lenient",
    "amqp091/4.2.7/client-sends-heartbeats": "no-heartbeats",
    "amqp091/4.2.7/client-detects-silent-server": "no-silence-detection",
    "amqp091/4.2.7/client-discards-unnegotiated-heartbeat": "strict-heartbeat",
    "amqp091/4.2.7/client-rejects-heartbeat-on-channel-1": "lenient",
    "amqp091/4.2.7/client-rejects-heartbeat-with-payload": "lenient",
    "amqp091/domain.delivery-tag/client-acks-on-delivery-channel": "wrong-ack-tag",
    "amqp091/domain.delivery-tag/client-echoes-large-tags": "wrong-ack-tag",
    "amqp091/domain.delivery-tag/client-acks-get-on-its-channel": "wrong-ack-tag",
    "amqp091/domain.redelivered/client-delivers-redelivered": "drop-redelivered",
    "amqp091/basic.consume/client-cancels-on-consumer-channel": "cancel-wrong-tag",
    "amqp091/channel.open/client-never-reopens-open-channel": "reopen-channel",
    "amqp091/4.3/client-uses-channels-within-channel-max": "use-channel-2",
    "amqp091/channel.flow/client-answers-flow": "ignore-flow",
    "amqp091/tx.commit/client-commits-only-transacted": "commit-without-select",
    "amqp091/3.2.1/client-waits-for-qos-ok": "pipeline",
    "amqp091/rabbitmq.basic.nack/client-takes-nack": "nack-fatal",
    "amqp091/rabbitmq.confirm/client-waits-for-late-confirms": "confirm-timeout",
    "amqp091/rabbitmq.basic.cancel/client-takes-server-cancel": "cancel-fatal",
    "amqp091/rabbitmq.connection.blocked/client-holds-publishes": "ignore-blocked",
    "amqp091/2.2.4/client-closes-on-skipped-tune": "close-method-in-handshake",
    "amqp091/2.2.4/client-closes-on-tune-on-channel-1": "close-method-in-handshake",
    "amqp091/2.2.4/client-closes-on-no-usable-mechanism": "bad-mechanism",
    "amqp091/connection.start-ok/locale-from-offer": "bad-locale",
    "amqp091/4.2.3/client-respects-frame-max-boundary": "frame-max-off-by-one",
    "amqp091/4.2.6/client-rejects-body-without-header": "lenient",
    "amqp091/4.2.6/client-rejects-header-without-method": "lenient",
    "amqp091/4.2.6/client-rejects-method-inside-body": "lenient",
    "amqp091/4.2.7/client-heartbeats-during-close": "no-heartbeats",
    "amqp091/channel.close/client-closes-with-defined-reply-code": "close-code-zero",
    "amqp091/rabbitmq.basic.nack/client-rejects-nack-of-unknown-tag": "trust-confirms",
    "amqp091/rabbitmq.confirm/client-takes-multiple-ack": "ignore-multiple",
    "amqp091/2.3.7/client-answers-channel-close-instead-of-reply": "no-channel-close-ok",
    "amqp091/2.3.7/client-answers-connection-close-instead-of-open-ok": "no-close-ok",
    "amqp091/4.2.6.2/client-joins-split-get-body": "first-frame-only",
    "amqp091/4.2.3/client-frame-end-is-ce": "bad-frame-end",
    "amqp091/4.2.3/client-connection-frames-on-channel-zero": "open-on-channel-1",
    "amqp091/4.2.6.1/client-content-header-matches-method": "content-on-channel-zero",
    "amqp091/4.2.6.1/client-header-weight-zero": "header-weight",
    "amqp091/4.2.6.1/client-body-size-is-sum-of-frames": "wrong-body-size",
    "amqp091/4.2.5.5/client-field-names-valid": "bad-field-name",
    "amqp091/4.2.7/client-heartbeats-before-open-ok": "late-heartbeats",
    "amqp091/connection.start-ok/plain-response": "bad-sasl",
    "amqp091/2.2.4/client-closes-on-unknown-frame-before-open": "lenient",
    "amqp091/connection.close/client-discards-after-close": "ack-after-close",
    "amqp091/basic.consume/client-consumer-tag-not-in-use": "duplicate-consumer-tag",
    "amqp091/channel.flow/client-holds-content-while-stopped": "publish-while-paused",
    "amqp091/2.3.3/client-disconnects-on-channel-above-channel-max": "lenient",
    "amqp091/2.3.3/client-disconnects-on-oversized-header-frame": "accept-oversized",
    "amqp091/channel.close/client-discards-flow-after-close": "ack-after-close",
    "amqp091/4.2.6/client-takes-empty-body": "wait-for-body",
    "amqp091/2.3.3/client-accepts-body-frame-at-frame-max": "strict-frame-max",
    "amqp091/3.2.1/client-waits-for-channel-open-ok": "pipeline",
    "amqp091/3.2.1/client-waits-for-tx-select-ok": "pipeline",
    "amqp091/3.2.1/client-waits-for-tx-commit-ok": "pipeline",
    "amqp091/2.3.7/client-answers-channel-close-while-publishing": "no-channel-close-ok",
    "amqp091/2.3.7/client-answers-connection-close-while-publishing": "no-close-ok",
    "amqp091/3.2.1/client-waits-for-confirm-select-ok": "pipeline",
    "amqp091/4.2.3/client-rejects-oversized-method-frame": "accept-oversized",
    "amqp091/4.2.3/client-checks-frame-end-before-decoding": "decode-before-end",
    "amqp091/2.2.4/client-closes-on-bad-frame-end-before-open": "lenient,close-method-in-handshake",
    "amqp091/2.2.4/client-closes-on-start-on-channel-1": "close-method-in-handshake",
    "amqp091/4.2.3/client-channel-frames-on-nonzero-channel": "open-channel-zero",
    "amqp091/4.2.7/client-counts-deliveries-as-traffic": "count-heartbeats-only",
    "amqp091/4.2.7/client-heartbeats-while-only-receiving": "beat-by-recv",
    "amqp091/4.2.6/client-keeps-content-frames-together": "interleave-content",
    "amqp091/4.2.6/client-takes-heartbeat-between-body-frames": "strict-content-sequence",
    "amqp091/2.3.5.2/client-joins-one-octet-body-frames": "first-frame-only",
    "amqp091/2.3.7/client-answers-connection-close-instead-of-channel-close-ok": "no-close-ok",
    "amqp091/connection.close-ok/client-waits-for-close-ok": "no-wait-close-ok",
    "amqp091/2.3.6/client-reports-channel-exception-code": "hide-close-code",
    "amqp091/channel.flow/client-resumes-after-flow-restart": "never-resume",
    "amqp091/4.2.5.5/client-reads-every-field-type": "narrow-tables",
    "amqp091/4.2.5.5/client-tables-without-duplicate-fields": "duplicate-field",
    "amqp091/connection.tune/client-refuses-frame-max-below-minimum": "accept-small-frame-max",
    "amqp091/2.3.6/client-reports-connection-exception-code": "hide-close-code",
    "amqp091/4.2.7/client-takes-heartbeat-before-tune": "strict-heartbeat",
    "amqp091/2.3.7/client-answers-connection-close-instead-of-connection-open-ok": "no-close-ok",
    "amqp091/2.3.7/client-answers-channel-close-instead-of-open-ok": "no-channel-close-ok",
    "amqp091/connection.open/client-opens-url-virtual-host": "raw-vhost-path",
}
NOT_PASSED = {Verdict.FAILED, Verdict.WARNING, Verdict.INFORMATIONAL}


def _run(case_ids: list[str], fault: str) -> dict[str, tuple[Verdict, str]]:
    cases = [c for c in discover("0-9-1", role="client") if c.id in case_ids]
    command = f"{sys.executable} {SCRIPT} {{url}} {{workload}}" + (f" fault={fault}" if fault else "")
    listener = Listener()
    try:
        target = ClientTarget.create(listener, DriverSpec.from_command(command, "0-9-1"), "test")
        results = ClientRunner(target, cases, RunOptions(seed=1)).run()
    finally:
        listener.close()
    return {r.case: (r.verdict, r.reason) for r in results}


def run_faults(faults: dict[str, str], parts: int) -> dict[str, dict[str, tuple[Verdict, str]]]:
    """Runs every case of ``faults`` (case id -> the fault it must catch) against the correct
    scripted client (split in ``parts`` runs) and against each fault, runs side by side;
    returns the verdicts by fault ("" for the correct client), then by case."""
    by_fault: dict[str, list[str]] = {}
    for case_id, fault in faults.items():
        by_fault.setdefault(fault, []).append(case_id)
    chunks = [("", ids[i::parts]) for ids in [sorted(faults)] for i in range(parts)] + list(by_fault.items())
    with ThreadPoolExecutor(max_workers=6) as pool:
        done = list(pool.map(lambda job: (job[0], _run(job[1], job[0])), chunks))
    out: dict[str, dict[str, tuple[Verdict, str]]] = {}
    for fault, found in done:
        out.setdefault(fault, {}).update(found)
    return out


def assert_passes(verdicts: dict[str, dict[str, tuple[Verdict, str]]], case_id: str) -> None:
    verdict, reason = verdicts[""][case_id]
    assert verdict is Verdict.PASSED, reason


def assert_not_passed(verdicts: dict[str, dict[str, tuple[Verdict, str]]], fault: str, case_id: str) -> None:
    verdict, reason = verdicts[fault][case_id]
    assert verdict in NOT_PASSED, f"{fault}: {verdict.value} {reason}"


@pytest.fixture(scope="module")
def verdicts() -> dict[str, dict[str, tuple[Verdict, str]]]:
    """Verdicts of the correct client ("") and of each fault, for the cases that look for it."""
    return run_faults(FAULTS, 4)


def test_every_client_case_names_its_fault() -> None:
    from tests.unit.test_client091_cases_more import FAULTS as MORE  # the cases tested there

    ids = {c.id for c in discover("0-9-1", role="client")} - set(MORE)
    assert ids == set(FAULTS), f"missing: {sorted(ids - set(FAULTS))}; stale: {sorted(set(FAULTS) - ids)}"
    assert len(ids) >= 30


@pytest.mark.parametrize("case_id", sorted(FAULTS))
def test_correct_client_passes(verdicts, case_id: str) -> None:  # type: ignore[no-untyped-def]
    assert_passes(verdicts, case_id)


@pytest.mark.parametrize("case_id", sorted(FAULTS))
def test_faulty_client_does_not_pass(verdicts, case_id: str) -> None:  # type: ignore[no-untyped-def]
    assert_not_passed(verdicts, FAULTS[case_id], case_id)
