"""Broker profiles: every shipped entry cites real clauses and a reference; matching is exact."""
from __future__ import annotations

import pytest

from amqpspec import profiles
from amqpspec.clauses import by_id
from amqpspec.errors import UsageError
from amqpspec.result import Result, Verdict


def test_shipped_profiles_cite_existing_clauses():
    known = by_id("0-9-1")
    shipped = profiles.builtin()
    assert {p.product for p in shipped} >= {"RabbitMQ", "garagemq"}
    for prof in shipped:
        for dev in prof.deviations:
            assert dev.reference.strip()
            for cid in dev.clauses:
                assert cid in known, f"{prof.source}: unknown clause {cid}"


def test_product_lookup_is_case_insensitive():
    assert profiles.for_product("rabbitmq").product == "RabbitMQ"
    assert profiles.for_product("NoSuchBroker") is None


def _failed(case: str, *check_clauses: tuple[str, ...], verdict: Verdict = Verdict.FAILED) -> Result:
    checks = [{"description": "d", "clauses": list(c), "verdict": "failed", "expected": "", "observed": ""}
              for c in check_clauses]
    return Result(case=case, title="t", section="s", section_title="", clauses=[], protocol="0-9-1", verdict=verdict,
                  evidence={"checks": checks})


def test_deviation_needs_every_failing_check_covered():
    prof = profiles.Profile("X", "test", (profiles.Deviation(("amqp091:4.2.3/7",), "ignores frame-max", "doc §11",
                                                             ("amqp091/4.2.3/oversized-*",)),))
    hit = prof.apply(_failed("amqp091/4.2.3/oversized-method-frame", ("amqp091:4.2.3/7",)))
    assert hit.deviation and "doc §11" in hit.deviation
    other_case = prof.apply(_failed("amqp091/4.2.3/frame-end-zero", ("amqp091:4.2.3/7",)))
    assert other_case.deviation is None
    partly = prof.apply(_failed("amqp091/4.2.3/oversized-x", ("amqp091:4.2.3/7",), ("amqp091:4.2.3/4",)))
    assert partly.deviation is None
    passed = _failed("amqp091/4.2.3/oversized-y", ("amqp091:4.2.3/7",), verdict=Verdict.PASSED)
    assert prof.apply(passed).deviation is None


def test_bad_profile_file_is_a_usage_error(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('product = "X"\n[[deviation]]\nclauses = ["a"]\nsummary = "s"\nreference = ""\n')
    with pytest.raises(UsageError):
        profiles.load_file(bad)
    bad.write_text("not = [toml")
    with pytest.raises(UsageError):
        profiles.load_file(bad)
