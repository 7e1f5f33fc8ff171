"""Vendor clauses carry the product releases their text describes; a release outside is not judged.

RabbitMQ's Direct Reply-To guide changed in 4.2 (a mandatory reply is returned up to 4.1, routed
from 4.2), so its statements are clauses with version ranges, and cases pick the one of the
broker's own release or are skipped.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from amqpspec import clauses
from amqpspec.case import REGISTRY, CaseDefinitionError, Context, Skip, case
from amqpspec.cli import main
from amqpspec.clauses import amqp091
from amqpspec.clauses.model import VersionRange, parse_version
from amqpspec.target import Target

ROUTED = "rabbitmq091:direct-reply-to/mandatory-routed"
NOT_ROUTED = "rabbitmq091:direct-reply-to/mandatory-not-routed"
ONE_CONSUMER = "rabbitmq091:direct-reply-to/one-consumer-per-channel"


def _target(product: str, version: str) -> Target:
    target = Target.parse("amqp://guest:guest@127.0.0.1:5672/")
    target.broker.product, target.broker.version = product, version
    return target


class TestVersionRange:
    def test_parse_and_contains(self):
        rng = VersionRange.parse(">=3.0,<4.2")
        assert rng.contains((3, 10, 8)) and rng.contains((4, 1, 9)) and rng.contains((3, 0))
        assert not rng.contains((4, 2)) and not rng.contains((4, 2, 0)) and not rng.contains((2, 8, 7))
        assert VersionRange.parse("").contains((1,))

    def test_bad_spelling(self):
        with pytest.raises(ValueError):
            VersionRange.parse("~=3.0")

    def test_parse_version(self):
        assert parse_version("3.10.8") == (3, 10, 8)
        assert parse_version("4.2.0-rc.1") == (4, 2, 0)
        assert parse_version("unknown") is None


class TestClauses:
    def test_every_rabbitmq_clause_has_versions_and_their_source(self):
        vendor = [c for c in clauses.catalog("0-9-1", extensions=True) if c.id.startswith("rabbitmq091:")]
        assert len(vendor) == 24 + len(amqp091.guide_clauses())
        assert all(c.product == "RabbitMQ" and c.versions and c.versions_source for c in vendor)
        assert not any(c.versions for c in clauses.catalog("0-9-1"))  # the specification has one text

    def test_mandatory_statement_per_release(self):
        routed, not_routed = clauses.get(ROUTED), clauses.get(NOT_ROUTED)
        assert "4.2 edition" in routed.versions_source and "3.13 edition" in not_routed.versions_source
        assert not_routed.applies_to("RabbitMQ", "3.10.8") and not routed.applies_to("RabbitMQ", "3.10.8")
        assert routed.applies_to("RabbitMQ", "4.2.1") and not not_routed.applies_to("RabbitMQ", "4.2.1")

    def test_other_products_and_unreadable_versions_get_the_current_text(self):
        routed, not_routed = clauses.get(ROUTED), clauses.get(NOT_ROUTED)
        assert routed.applies_to("garagemq", "0.1") and not not_routed.applies_to("garagemq", "0.1")
        assert routed.applies_to("RabbitMQ", "") and not not_routed.applies_to("RabbitMQ", "")

    def test_spec_clause_applies_to_everyone(self):
        assert clauses.get("amqp091:4.2.3/1").applies_to("Anything", "0.0.1")


class TestCaseSkippedOutsideRange:
    @pytest.fixture()
    def registered(self):
        ids = []

        def register(case_id: str, cited: tuple[str, ...], body):
            case(case_id, title="a test case", clauses=cited)(body)
            ids.append(case_id)
            return REGISTRY[case_id]

        yield register
        for case_id in ids:
            REGISTRY.pop(case_id, None)

    def test_skipped_with_the_reason(self, registered):
        ran = []
        spec = registered("amqp091/rabbitmq.test/one-consumer", (ONE_CONSUMER,), lambda ctx: ran.append(1))
        ctx = Context(spec, _target("RabbitMQ", "3.10.8"), deadline=0.0, seed=1)
        with pytest.raises(Skip) as info:
            spec.func(ctx)
        assert not ran
        assert "RabbitMQ 3.10.8" in str(info.value) and ">=4.2" in str(info.value)
        assert "4.2 edition" in str(info.value)

    def test_runs_inside_range(self, registered):
        ran = []
        spec = registered("amqp091/rabbitmq.test/one-consumer-4", (ONE_CONSUMER,), lambda ctx: ran.append(1))
        spec.func(Context(spec, _target("RabbitMQ", "4.2.0"), deadline=0.0, seed=1))
        assert ran == [1]

    def test_judged_by_the_clause_of_its_release(self, registered):
        chosen = []
        spec = registered("amqp091/rabbitmq.test/mandatory", (NOT_ROUTED, ROUTED),
                          lambda ctx: chosen.append(ctx.applicable(ROUTED, NOT_ROUTED)))
        spec.func(Context(spec, _target("RabbitMQ", "3.10.8"), deadline=0.0, seed=1))
        spec.func(Context(spec, _target("RabbitMQ", "4.2.0"), deadline=0.0, seed=1))
        assert chosen == [NOT_ROUTED, ROUTED]

    def test_a_check_citing_another_release_is_a_case_bug(self, registered):
        spec = registered("amqp091/rabbitmq.test/wrong-release", (NOT_ROUTED, ROUTED), lambda ctx: None)
        ctx = Context(spec, _target("RabbitMQ", "3.10.8"), deadline=0.0, seed=1)
        with pytest.raises(CaseDefinitionError):
            ctx.record(True, expected="x", observed="x", clauses=(ROUTED,))

    def test_catalog_direct_reply_to_cases_cite_versioned_clauses(self):
        from amqpspec.case import discover

        cases = {c.id: c for c in discover("0-9-1")}
        mandatory = cases["amqp091/rabbitmq.direct-reply-to/mandatory-reply-routed"]
        assert {NOT_ROUTED, ROUTED} <= set(mandatory.clauses)
        gone = cases["amqp091/rabbitmq.direct-reply-to/reply-to-gone-dropped"]
        assert {NOT_ROUTED, ROUTED} <= set(gone.clauses)
        assert cases["amqp091/rabbitmq.direct-reply-to/one-consumer-per-channel"].clauses == (ONE_CONSUMER,)


class TestClausesCommand:
    def test_text_shows_range_and_source(self):
        out = CliRunner().invoke(main, ["clauses", "--protocol", "0-9-1", "--extensions"]).output
        lines = out.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(NOT_ROUTED + " "))
        assert "applies to RabbitMQ >=3.0,<4.2" in lines[at + 1]
        assert "3.13 edition" in lines[at + 1]

    def test_json_carries_versions(self):
        out = CliRunner().invoke(main, ["clauses", "--protocol", "0-9-1", "--extensions", "--json"]).output
        rows = {r["id"]: r for r in json.loads(out)}
        assert rows[ROUTED]["versions"] == ">=4.2" and "4.2 edition" in rows[ROUTED]["versions_source"]
        assert "versions" not in rows["amqp091:4.2.3/1"]
