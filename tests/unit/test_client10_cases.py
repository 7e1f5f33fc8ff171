"""Every AMQP 1.0 client case can fail: run against the scripted raw-socket client
(tests/support/client10_script.py) it passes when the client behaves, and does not pass when
the client breaks the one rule the case checks (``bad=FAULT``).

The conversations are real (a listening server peer, a launched driver process, the client
runner); they run six at a time, each on a listener of its own, to keep the module quick.
"""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from amqpspec.case import discover
from amqpspec.client.drivers import DriverSpec
from amqpspec.client.runner import ClientRunner
from amqpspec.client.session import ClientTarget
from amqpspec.peer.server091 import Listener
from amqpspec.runner import RunOptions

SCRIPT = Path(__file__).resolve().parents[1] / "support" / "client10_script.py"

#: case id (without "amqp10/") -> (the fault that breaks its rule, the verdict it then gets)
FAULTS: dict[str, tuple[str, str]] = {
    "2.2/client-sends-header-at-once": ("no-header", "failed"),
    "2.2/client-closes-on-header-mismatch": ("ignore-header-mismatch", "failed"),
    "5.3.2/client-chooses-offered-mechanism": ("mechanism-external", "failed"),
    "5.3.3.2/client-uses-strongest-mechanism": ("mechanism-anonymous", "failed"),
    "5.3.3.5/client-sends-amqp-header-after-sasl": ("no-amqp-header", "failed"),
    "2.7.1/client-hostname-matches-sasl": ("sasl-hostname", "warning"),
    "2.4.1/client-sends-open-first": ("begin-before-open", "failed"),
    "2.4.3/client-closes-with-close": ("no-close", "failed"),
    "2.4.3/client-answers-close": ("no-close-reply", "failed"),
    "2.4.3/nothing-after-close": ("frames-after-close", "failed"),
    "2.4.3/client-close-on-channel-0": ("close-channel-1", "warning"),
    "2.4.5/client-handles-empty-frames": ("strict-empty", "failed"),
    "2.7.1/client-honours-idle-time-out": ("no-heartbeat", "failed"),
    "2.4.5/client-detects-silent-server": ("no-idle-detect", "warning"),
    "2.7.1/client-respects-max-frame-size": ("ignore-max-frame", "failed"),
    "2.7.1/client-respects-channel-max": ("channel-5", "failed"),
    "2.7.1/client-accepts-min-max-frame-size": ("no-multi-frame", "failed"),
    "2.7.1/client-closes-on-oversized-frame": ("lenient", "failed"),
    "2.7.1/client-closes-on-channel-beyond-max": ("lenient", "failed"),
    "2.5.1/client-begin-without-remote-channel": ("begin-remote-channel", "failed"),
    "2.5.1/client-lowest-channel": ("channel-5", "warning"),
    "2.5.6/client-waits-for-incoming-window": ("ignore-window", "failed"),
    "2.5.2/client-answers-end": ("no-end-reply", "informational"),
    "2.7.4/client-ends-session-on-unattached-handle": ("lenient", "failed"),
    "2.7.3/client-lowest-handle": ("handle-5", "warning"),
    "2.7.2/client-respects-handle-max": ("handle-5", "failed"),
    "2.7.3/client-sender-initial-delivery-count": ("no-initial-delivery-count", "failed"),
    "2.7.3/client-unsettled-map-keys": ("unsettled-null-key", "failed"),
    "2.6.3/client-checks-terminus": ("trust-terminus", "failed"),
    "2.6.6/client-answers-closing-detach": ("no-detach-reply", "informational"),
    "2.6.7/client-sender-respects-credit": ("ignore-credit", "failed"),
    "2.6.7/client-sender-stops-on-withdrawn-credit": ("ignore-credit", "failed"),
    "2.6.7/client-sender-answers-drain": ("ignore-drain", "failed"),
    "2.7.4/client-receiver-delivery-count": ("delivery-count-zero", "failed"),
    "2.7.4/client-answers-echo": ("ignore-echo", "warning"),
    "2.7.5/client-receiver-settles-first": ("no-settle", "failed"),
    "2.6.14/client-discards-aborted-delivery": ("keep-aborted", "failed"),
    "2.6.12/client-sender-delivery-tags": ("no-tag", "failed"),
    "2.6.12/client-unique-delivery-tags": ("same-tag", "failed"),
    "3.2.4/client-content-encoding": ("content-encoding", "failed"),
    "3.2.4/client-content-type": ("content-type", "warning"),
    "3.5.3/client-dynamic-source-without-address": ("dynamic-address", "failed"),
    "2.4.5/client-empty-frames-on-channel-0": ("empty-on-1", "warning"),
    "2.4.3/client-waits-for-close": ("no-wait-close", "warning"),
    "5.3.2/client-skips-unknown-mechanisms": ("mechanism-external", "failed"),
    "2.6.6/client-answers-closing-detach-of-sender": ("no-detach-reply", "informational"),
    "2.6.3/client-refuses-unsolicited-link": ("ignore-attach", "failed"),
    "2.7.3/client-closes-on-handle-in-use": ("lenient", "failed"),
    "2.7.2/client-closes-on-handle-beyond-max": ("lenient", "failed"),
    "2.5.6/client-window-of-one": ("ignore-window", "failed"),
    "2.7.5/client-multi-frame-transfers": ("no-tag", "failed"),
    "2.7.1/client-frames-fit-before-open": ("big-open", "failed"),
    "2.7.4/client-flow-next-incoming-id": ("no-next-incoming-id", "failed"),
    "2.7.4/client-session-flow-without-link-fields": ("session-flow-with-credit", "failed"),
    "2.7.1/client-idle-time-out-too-small": ("accept-any-idle", "warning"),
    "2.7.6/client-disposition-role": ("disposition-role-sender", "failed"),
    "2.5.4/client-discards-after-its-end": ("answer-after-end", "failed"),
    "2.7.5/client-unset-settled-is-unsettled": ("unset-settled-true", "failed"),
    "2.4.3/nothing-after-answering-close": ("frames-after-close", "failed"),
    "2.6.7/client-sender-credit-without-delivery-count": ("dc-none-as-current", "failed"),
    "2.7.4/client-sender-flow-delivery-count": ("sender-flow-no-dc", "failed"),
    "5.3.2/client-no-usable-mechanism": ("mechanism-external", "failed"),
    "3.2.4/client-content-encoding-values": ("encoding-compress", "warning"),
    "2.4.3/client-closes-socket-after-close": ("reuse-socket", "warning"),
    "2.5.1/client-answers-server-begin-with-remote-channel": ("begin-answer-no-remote", "failed"),
    "2.7.4/client-receiver-delivery-count-wraps": ("no-wrap", "failed"),
    "5.3.1/client-sasl-frame-header": ("sasl-header", "warning"),
    "2.6.7/client-sender-credit-from-stale-delivery-count": ("credit-face-value", "failed"),
    "2.6.7/client-sender-keeps-delivery-limit": ("credit-kept", "failed"),
    "2.4.6/client-discards-after-error-close": ("answer-while-discarding", "failed"),
    "2.7.4/client-echo-not-echoed": ("echo-back", "warning"),
    "2.7.3/client-no-new-deliveries-on-incomplete-unsettled": ("ignore-incomplete", "failed"),
    "2.7.5/client-ignores-more-on-aborted": ("more-over-aborted", "warning"),
    "2.6.5/client-detaches-on-message-size-exceeded": ("accept-large", "failed"),
    "3.2.10/client-ignores-unknown-x-opt-annotation": ("strict-annotations", "failed"),
    "3.2.10/client-detaches-on-unknown-annotation": ("ignore-annotations", "failed"),
    "2.7.5/client-settled-flag-follows-snd-settle-mode": ("settle-in-unsettled-mode", "failed"),
    # issue 15, area A (transport and security)
    "2.3.1/client-frames-decode": ("frame-size-lies", "failed"),
    "2.3.2/client-sends-only-performatives": ("unknown-performative", "failed"),
    "2.3.1/client-skips-extended-header": ("strict-doff", "failed"),
    "2.3.1/client-reassembles-split-frames": ("whole-reads", "failed"),
    "2.2/client-reads-split-header": ("whole-reads", "failed"),
    "2.2/client-closes-on-protocol-id-mismatch": ("ignore-protocol-id", "failed"),
    "5.3.1/client-ignores-sasl-extended-header": ("strict-doff", "failed"),
    "2.4.2/client-accepts-pipelined-open": ("reset-after-sasl", "failed"),
    "2.4.3/client-answers-close-on-channel-1": ("close-only-on-0", "failed"),
    "2.4.3/client-close-carries-its-cause": ("bare-close", "failed"),
    "2.4.3/client-answers-close-pipelined-with-open": ("no-close-reply", "failed"),
    "2.7.9/client-orderly-shutdown-writes-close": ("no-close", "failed"),
    "2.4.5/client-waits-twice-its-idle-time-out": ("idle-at-announced", "warning"),
    "2.5.1/client-session-on-asymmetric-channels": ("symmetric-channels", "failed"),
    "2.5.4/client-ends-session-on-unattached-transfer": ("ignore-unattached-transfer", "failed"),
    "2.5.6/client-next-incoming-id-follows-server": ("own-transfer-count", "failed"),
    "5.1/client-closes-after-failed-sasl": ("proceed-after-auth-failure", "failed"),
    "5.3.1/client-sasl-frame-holds-one-value": ("sasl-trailing", "failed"),
    "5.3.2/client-plays-sasl-client": ("sasl-as-server", "failed"),
    "5.3.2/client-anonymous-only": ("plain-always", "failed"),
    "5.3.2/client-reads-single-mechanism": ("array-only", "failed"),
    "5.3.3.5/client-proceeds-after-outcome-with-additional-data": ("strict-outcome", "failed"),
    "2.8.16/client-follows-redirect": ("no-redirect", "warning"),
    "2.8.16/client-redirect-hostname": ("redirect-keep-hostname", "warning"),
    "5.2/client-validates-certificate": ("no-verify", "failed"),
    "5.2/client-sends-sni": ("no-sni", "warning"),
    "0.2/client-authenticates-with-scram-sha-1": ("no-scram", "warning"),
    # the other 1.0 helper's case (s2_8_18_link_redirect.py, its scripted redirect): its entry left its file
    "2.8.18/client-link-redirect-hostname": ("redirect-keep-hostname", "warning"),
}


def _run(case_id: str, fault: str | None) -> Any:
    spec = {c.id: c for c in discover("1.0", role="client")}[case_id]
    command = [sys.executable, str(SCRIPT), "{url}", "{workload}"] + ([f"bad={fault}"] if fault else [])
    driver = DriverSpec("client10-script", "1.0", command, SCRIPT.parent)
    listener = Listener()
    try:
        target = ClientTarget.create(listener, driver, "test", "1.0")
        return ClientRunner(target, [spec], RunOptions(jobs=1, protocol="1.0", seed=1)).run()[0]
    finally:
        listener.close()


def run_faults(faults: dict[str, tuple[str, str]]) -> dict[tuple[str, str | None], Any]:
    """Results of each case of ``faults`` against the correct scripted client (fault None) and
    against the fault it must catch, runs side by side; keyed by (case id, fault)."""
    jobs = [(f"amqp10/{cid}", None) for cid in faults] + [(f"amqp10/{cid}", f) for cid, (f, _) in faults.items()]
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda job: _run(*job), jobs))
    return dict(zip(jobs, results))


def assert_passes(verdicts: dict, case_id: str) -> None:
    r = verdicts[(f"amqp10/{case_id}", None)]
    assert r.verdict.value == "passed", f"{case_id}: {r.verdict.value}: {r.reason} {r.evidence.get('observed', '')}"


def assert_catches(verdicts: dict, faults: dict[str, tuple[str, str]], case_id: str) -> None:
    fault, expected = faults[case_id]
    r = verdicts[(f"amqp10/{case_id}", fault)]
    assert r.verdict.value == expected, f"{case_id} with bad={fault}: {r.verdict.value}: {r.reason} " \
                                        f"{r.evidence.get('observed', '')}"


@pytest.fixture(scope="module")
def verdicts() -> dict[tuple[str, str | None], Any]:
    return run_faults(FAULTS)


def test_every_client10_case_has_a_fault() -> None:
    from tests.unit.test_client10_cases_more import MORE_FAULTS   # the links-and-messaging batch: tested there
    from tests.unit.test_client10_tx_cases import TX_FAULTS   # section 4 (transactions): tested there
    ids = {c.id.removeprefix("amqp10/") for c in discover("1.0", role="client")} - set(MORE_FAULTS) - set(TX_FAULTS)
    assert ids == set(FAULTS), f"cases without a fault here: {ids - set(FAULTS)}; stale: {set(FAULTS) - ids}"


@pytest.mark.parametrize("case_id", sorted(FAULTS))
def test_case_passes_a_correct_client(verdicts: dict, case_id: str) -> None:
    assert_passes(verdicts, case_id)


@pytest.mark.parametrize("case_id", sorted(FAULTS))
def test_case_fails_a_client_breaking_its_rule(verdicts: dict, case_id: str) -> None:
    assert_catches(verdicts, FAULTS, case_id)
