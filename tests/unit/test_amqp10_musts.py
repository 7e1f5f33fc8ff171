"""The cases of the remaining AMQP 1.0 MUSTs (issue 13) can fail: each runs against the scripted
broker of tests/support/fake10_musts.py, once behaving as the text asks (the case passes) and once
with one deliberate fault (the case fails), and skips where the feature is not offered."""
from __future__ import annotations

import math

import pytest

from amqpspec.case import REGISTRY, discover
from amqpspec.result import Verdict
from amqpspec.runner import Runner, RunOptions
from amqpspec.target import Target
from tests.support import hostile
from tests.support.fake10_musts import Fake, url_10


def verdict(case_id: str, fake: Fake) -> tuple[Verdict, str]:
    discover("1.0")
    with hostile.HostileServer(fake.behaviour) as server:
        [result] = Runner(Target.parse(url_10(server.port)), [REGISTRY[case_id]],
                          RunOptions(seed=1, protocol="1.0", liveness=False)).run()
    return result.verdict, f"{result.reason}: {result.evidence}"


def shaped(n: int):
    """3.2.1's mapping for n levels."""
    if n >= 10:
        return lambda p: min(p, n - 1)
    lo, hi = 5 - math.ceil(n / 2), 4 + n // 2
    return lambda p: min(max(p, lo), hi)


PRIORITY = "amqp10/3.2.1/priority-levels"


@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_priority_levels_shaped_as_the_text_pass(n: int) -> None:
    got, why = verdict(PRIORITY, Fake(levels=shaped(n)))
    assert got is Verdict.PASSED, why


def test_priority_arrival_order_skips() -> None:
    got, why = verdict(PRIORITY, Fake())
    assert got is Verdict.SKIPPED, why


@pytest.mark.parametrize("levels", [lambda p: -p, lambda p: 0 if p == 0 else 1, lambda p: p // 2])
def test_priority_levels_of_another_shape_fail(levels) -> None:
    got, why = verdict(PRIORITY, Fake(levels=levels))
    assert got is Verdict.FAILED, why


RESUMES = "amqp10/3.4.6/broker-resumes-deliveries"
IGNORES = "amqp10/3.4.6/broker-ignores-data-it-holds"


@pytest.mark.parametrize("case_id", [RESUMES, IGNORES])
def test_resumption_passes_where_offered_and_skips_where_not(case_id: str) -> None:
    got, why = verdict(case_id, Fake(recovery=True))
    assert got is Verdict.PASSED, why
    got, why = verdict(case_id, Fake())
    assert got is Verdict.SKIPPED, why


@pytest.mark.parametrize("fault", ["no-unsettled", "no-resume-flag", "first-frame-unflagged", "resume-unknown", "bogus"])
def test_resuming_sender_faults_fail(fault: str) -> None:
    got, why = verdict(RESUMES, Fake(recovery=True, fault=fault))
    assert got is Verdict.FAILED, why


def test_resuming_receiver_that_keeps_repeated_data_fails() -> None:
    got, why = verdict(IGNORES, Fake(recovery=True, fault="append"))
    assert got is Verdict.FAILED, why


INCOMPLETE = "amqp10/2.6.13/incomplete-map-reduced-first"


def test_incomplete_map_passes_where_offered_skips_where_not_fails_on_new_deliveries() -> None:
    assert verdict(INCOMPLETE, Fake(recovery=True))[0] is Verdict.PASSED, verdict(INCOMPLETE, Fake(recovery=True))[1]
    assert verdict(INCOMPLETE, Fake())[0] is Verdict.SKIPPED
    got, why = verdict(INCOMPLETE, Fake(recovery=True, fault="new-while-incomplete"))
    assert got is Verdict.FAILED, why


UNSET = "amqp10/2.7.5/unset-settled-is-unsettled"


def test_unset_settled_taken_as_unsettled_passes_and_as_settled_fails() -> None:
    got, why = verdict(UNSET, Fake())
    assert got is Verdict.PASSED, why
    got, why = verdict(UNSET, Fake(fault="unset-settled-true"))
    assert got is Verdict.FAILED, why
