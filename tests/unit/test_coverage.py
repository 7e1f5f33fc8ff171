"""The untested list and the catalog stay consistent (no drift)."""
from __future__ import annotations

from amqpspec import coverage as cov
from amqpspec.clauses import by_id


def test_untested_entries_are_real_clauses_with_known_reasons():
    known = by_id("0-9-1")
    entries = cov.load_untested("0-9-1")
    assert entries
    ids = [e.clause for e in entries]
    assert len(ids) == len(set(ids)), "a clause is listed twice"
    for e in entries:
        assert e.clause in known, e.clause
        assert e.reason in cov.REASONS and e.note


def test_no_clause_is_both_covered_and_untested():
    # a client case covers a clause too: a client-side entry leaves the list when `amqpspec client` judges it
    both = [r.clause.id for r in cov.coverage("0-9-1", extensions=True) if (r.cases or r.client_cases) and r.untested]
    assert not both, f"these clauses have cases now: remove them from untested.toml: {both}"


def test_every_clause_is_covered_or_has_a_reason():
    unaccounted = [r.clause.id for r in cov.coverage("0-9-1", extensions=True) if r.status == "unaccounted"]
    assert not unaccounted, f"give these clauses a case or an entry in untested.toml: {unaccounted}"


def test_catalog_size():
    from amqpspec.case import discover

    cases = discover("0-9-1")
    assert len(cases) >= 250
    assert len({c.id for c in cases}) == len(cases)


def test_every_amqp10_clause_is_covered_or_has_a_reason():
    entries = cov.load_untested("1.0")
    known = by_id("1.0")
    assert all(e.clause in known for e in entries)
    rows = cov.coverage("1.0")
    both = [r.clause.id for r in rows if (r.cases or r.client_cases) and r.untested]
    assert not both, f"these clauses have cases now: remove them from conformance/amqp10/untested.toml: {both}"
    unaccounted = [r.clause.id for r in rows if r.status == "unaccounted"]
    assert not unaccounted, f"give these clauses a case or an entry in conformance/amqp10/untested.toml: {unaccounted}"


def test_amqp10_catalog_size():
    from amqpspec.case import discover

    cases = discover("1.0")
    assert len(cases) >= 150
    assert len({c.id for c in cases}) == len(cases)


def test_a_clause_only_client_cases_cite_is_client_covered_not_broker_covered():
    rows = cov.coverage("0-9-1", extensions=True)
    client_only = [r for r in rows if r.client_cases and not r.cases]
    assert client_only, "the client catalog covers clauses no broker case can (e.g. client-properties)"
    assert {r.status for r in client_only} == {"client-covered"}
    assert all(r.status == "covered" for r in rows if r.cases)
