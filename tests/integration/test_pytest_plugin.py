"""The pytest plugin (``pytest --amqp-url URL``) run by pytester in empty directories, against the
local RabbitMQ: selection, outcomes per verdict, evidence, the JSON-lines file, and no trace of
the plugin in a pytest run without ``--amqp-url``.

The cases below are chosen for their verdicts against RabbitMQ 3.10 (each a fraction of a second):
"""
from __future__ import annotations

import json

import pytest

from amqpspec import clauses as clause_catalog
from amqpspec.case import discover

from .test_cli_run import REQUIRED_KEYS

pytest_plugins = ["pytester"]

PASSED = "amqp091/connection.tune/accepts-frame-min-size"
FAILED = "amqp091/4.2.3/type-4"                          # a MUST broken: a close instead of a silent one
DEVIATION = "amqp091/4.2.3/oversized-method-frame"        # failed, documented in the RabbitMQ profile
WARNING = "amqp091/4.2.5.5/name-with-space"                # a SHOULD not met (4.2.5.5/2: 502/503 for a bad field name)
INFORMATIONAL = "amqp091/basic/ten-priority-levels"
SKIPPED = "amqp091/basic.qos/prefetch-size-window"        # RabbitMQ does not offer prefetch-size
CHOSEN = (PASSED, FAILED, DEVIATION, WARNING, INFORMATIONAL, SKIPPED)


def case_args(*ids: str) -> list[str]:
    return [arg for case_id in ids for arg in ("--amqp-case", case_id)]


@pytest.fixture(scope="module", autouse=True)
def catalog_imported() -> None:
    """The in-process pytester runs drop the modules each run imported; the catalog modules are
    imported here first, so that they stay, and are not registered again by the next run."""
    for protocol in ("0-9-1", "1.0"):
        discover(protocol)


@pytest.fixture
def url(rabbitmq) -> str:
    return rabbitmq.url


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_outcomes_evidence_and_json(pytester: pytest.Pytester, url: str, jobs: str) -> None:
    out = pytester.path / "results.jsonl"
    result = pytester.runpytest("--amqp-url", url, "--amqp-protocol", "0-9-1", "--amqp-json", str(out),
                                "--amqp-jobs", jobs, "--amqp-seed", "11", "-rxs", *case_args(*CHOSEN))
    result.assert_outcomes(passed=2, failed=1, xfailed=2, skipped=1)
    text = result.stdout.str()
    # the failure report carries the evidence and the replay command; the transcript beside it
    failure = text[text.index(f"_ {FAILED}: "):text.index("short test summary")]
    for label in ("clauses: amqp091:4.2.3/", "expected: ", "observed: ", "close: ",
                  f"replay: amqpspec run {url.replace('guest:guest@', 'guest@')} --protocol 0-9-1 --case {FAILED} --seed 11"):
        assert label in failure, label
    assert "amqpspec transcript" in failure and "-> protocol-header AMQP 0-0-9-1" in failure
    result.stdout.fnmatch_lines([
        "6 cases against * (RabbitMQ *), AMQP 0-9-1, seed 11: 1 passed, 2 failed, 1 warning, 1 informational, 1 skipped",
        f"XFAIL amqpspec::{DEVIATION} - documented deviation (fails with --amqp-strict): *",
        f"XFAIL amqpspec::{WARNING} - SHOULD not met (fails with --amqp-strict): *",
        "SKIPPED * the broker refused basic.qos with a prefetch-size: *",
    ])
    assert "guest:guest" not in text
    records = [json.loads(line) for line in out.read_text().splitlines()]
    verdicts = {r["case"]: r["verdict"] for r in records}
    assert verdicts == {PASSED: "passed", FAILED: "failed", DEVIATION: "failed", WARNING: "warning",
                        INFORMATIONAL: "informational", SKIPPED: "skipped"}
    assert all(REQUIRED_KEYS <= r.keys() and r["seed"] == 11 for r in records)
    assert [r for r in records if r["case"] == DEVIATION][0]["deviation"]


def test_strict_fails_warnings_and_deviations(pytester: pytest.Pytester, url: str) -> None:
    result = pytester.runpytest("--amqp-url", url, "--amqp-protocol", "0-9-1", "--amqp-strict",
                                *case_args(DEVIATION, WARNING))
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(["documented deviation (--amqp-strict): *", "SHOULD not met (--amqp-strict): *"])


def test_undecided_case_is_a_pytest_error(pytester: pytest.Pytester, url: str) -> None:
    result = pytester.runpytest("--amqp-url", url, "--amqp-protocol", "0-9-1", "--amqp-timeout", "0.001",
                                *case_args(PASSED))
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([f"*ERROR at setup of {PASSED}: *", "the suite could not decide: *"])


def test_unreachable_broker_is_one_line_per_case(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--amqp-url", "amqp://guest:guest@127.0.0.1:1/", "--amqp-protocol", "0-9-1",
                                *case_args(PASSED, FAILED))
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["amqpspec: cannot connect to 127.0.0.1:1*"])
    # with protocol auto the broker is asked at collection: one collection error, no traceback
    auto = pytester.runpytest("--amqp-url", "amqp://guest:guest@127.0.0.1:1/")
    auto.stdout.fnmatch_lines(["*ERROR collecting amqpspec*", "amqpspec: cannot connect to 127.0.0.1:1*"])
    assert "Traceback" not in auto.stdout.str()


def _collected(result: pytest.RunResult) -> set[str]:
    return {line.split("::", 1)[1] for line in result.outlines if line.startswith("amqpspec::")}


def test_k_and_m_select_by_case_id_protocol_level_and_section(pytester: pytest.Pytester, url: str) -> None:
    """Collection only (no case runs): every selection is checked against the catalog itself."""
    cases = discover("0-9-1")
    base = ["--amqp-url", url, "--amqp-protocol", "0-9-1", "--collect-only", "-q"]
    assert _collected(pytester.runpytest(*base)) == {c.id for c in cases}
    assert _collected(pytester.runpytest(*base, "-k", "4.2.3/frame-end or type-4")) == {
        c.id for c in cases if "4.2.3/frame-end" in c.id or "type-4" in c.id}
    assert _collected(pytester.runpytest(*base, "-m", "section(id='4.2.3')")) == {
        c.id for c in cases if c.section == "4.2.3"}
    known = clause_catalog.by_id("0-9-1")   # the catalog's clauses (cases also quote documentation sentences)
    should = {c.id for c in cases if any(cl in known and known[cl].level.family == "SHOULD" for cl in c.clauses)
              or (c.level is not None and c.level.family == "SHOULD")}
    assert should and _collected(pytester.runpytest(*base, "-m", "amqp091 and should")) == should
    assert _collected(pytester.runpytest(*base, "-m", "amqp10")) == set()


def test_1_0_cases_against_the_1_0_plugin(pytester: pytest.Pytester, url: str) -> None:
    """protocol auto asks the broker; --amqp-protocol 1.0 collects the 1.0 catalog under its marker."""
    result = pytester.runpytest("--amqp-url", url, "--amqp-protocol", "1.0", "-m", "amqp10",
                                "--amqp-case", "amqp10/2.2/amqp-header-answered")
    result.assert_outcomes(passed=1)


def test_nothing_without_amqp_url(pytester: pytest.Pytester) -> None:
    """Installed but not asked for: no items, no markers, the framework not even imported, and an
    ordinary test file runs as if amqpspec were not there."""
    pytester.makeconftest("""
        import sys
        def pytest_sessionfinish(session):
            print("framework imported:", sorted(m for m in sys.modules if m in ("amqpspec.case", "amqpspec.runner")))
    """)
    empty = pytester.runpytest_subprocess("-s")
    assert empty.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    empty.stdout.fnmatch_lines(["framework imported: []"])
    markers = pytester.runpytest_subprocess("--markers").stdout.str()
    assert "amqp091" not in markers and "section(id)" not in markers
    pytester.makepyfile(test_mine="def test_mine():\n    assert True\n")
    mine = pytester.runpytest_subprocess("-s")
    mine.assert_outcomes(passed=1)
    mine.stdout.fnmatch_lines(["*framework imported: []"])
    assert "amqpspec:" not in mine.stdout.str()  # no header line (pytest's own "plugins:" line names it)
