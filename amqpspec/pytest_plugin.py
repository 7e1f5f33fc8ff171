"""pytest plugin: the conformance catalog as pytest items (``pytest --amqp-url URL``).

Registered through the ``pytest11`` entry point, so a broker project that installs amqpspec can
put the suite into its own pytest run, from any directory and with no test file of its own.
Without ``--amqp-url`` the plugin only adds its options: no items, no markers, no import of the
framework -- other pytest runs where amqpspec is installed (ours included) see nothing of it.

Items: one per case, named by case id (``amqp091/4.2.3/frame-end-zero``), under one collector
named ``amqpspec``. Markers: the protocol (``amqp091``, ``amqp10``), the level families of the
cited clauses (``must``, ``should``, ``may``) and ``section(id="4.2.3")``; so ``-k`` matches
case ids and ``-m "amqp091 and must"`` or ``-m "section(id='4.2.3')"`` select by marker.

Outcomes, decided by the same rule as ``amqpspec run``'s exit code
(:func:`amqpspec.reports.console.fails_run`):

- passed, informational -> passed
- failed                -> failed, the evidence (clauses, expected, observed, checks, close,
                           replay command) as the failure text, the transcript as a report section
- warning (unmet SHOULD) and failed with a documented deviation of the broker's profile
                        -> xfailed with the reason ("does not fail the run"); failed with
                           ``--amqp-strict``
- skipped               -> skipped with the reason
- error (the suite could not decide: timeout, broker gone) -> a pytest *error* (raised in setup),
                           so it is never counted as a broker failure

The JSON-lines file of ``--amqp-json`` holds the same records as ``amqpspec run --json``.
"""
from __future__ import annotations

import inspect
import random
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generator

import pytest

if TYPE_CHECKING:  # the framework is imported only once --amqp-url turns the plugin on
    from amqpspec.case import CaseSpec
    from amqpspec.result import Result, ResultWriter
    from amqpspec.runner import Runner
    from amqpspec.target import Target

PROTOCOL_CHOICES = ("0-9-1", "1.0", "auto")
COLLECTOR_NAME = "amqpspec"
SESSION_PLUGIN = "amqpspec-catalog"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("amqpspec", "AMQP conformance catalog (amqpspec)")
    group.addoption("--amqp-url", metavar="URL",
                    help="Run the amqpspec catalog against the broker at URL (amqp[s]://user:pass@host:port/vhost); "
                         "without it the plugin does nothing.")
    group.addoption("--amqp-protocol", choices=PROTOCOL_CHOICES, default="auto",
                    help="Protocol whose cases are collected; auto asks the broker (default: auto).")
    group.addoption("--amqp-case", action="append", default=[], metavar="GLOB",
                    help="Collect only cases whose id matches (repeatable; -k and -m select further).")
    group.addoption("--amqp-exclude", action="append", default=[], metavar="GLOB",
                    help="Do not collect cases whose id matches (repeatable).")
    group.addoption("--amqp-json", metavar="FILE", help="Write the JSON-lines results here, as `amqpspec run --json`.")
    group.addoption("--amqp-timeout", type=_seconds, metavar="S", help="Per-case deadline in seconds (default: each case's own).")
    group.addoption("--amqp-jobs", type=int, metavar="N",
                    help="Cases run in parallel, ahead of pytest's reporting (default: as `amqpspec run`).")
    group.addoption("--amqp-seed", type=int, metavar="N", help="Seed for all randomness (default: random, shown in the header).")
    group.addoption("--amqp-strict", action="store_true",
                    help="Unmet SHOULDs and documented deviations fail instead of xfail.")
    group.addoption("--amqp-profile", metavar="FILE",
                    help="Broker profile (TOML) of documented deviations (default: the shipped one for the broker).")
    group.addoption("--amqp-no-profile", action="store_true", help="Report documented deviations as plain failures.")
    group.addoption("--amqp-cafile", metavar="FILE", help="CA certificate(s) to verify an amqps:// broker.")
    group.addoption("--amqp-insecure", action="store_true", help="Do not verify the broker's TLS certificate.")


def _seconds(text: str) -> float:
    """A per-case deadline as `amqpspec run --timeout` takes it (nan, inf and 1e300 refused)."""
    import argparse

    from amqpspec.cliutil import parse_seconds

    try:
        return parse_seconds(text, 0.0, low_open=True)  # any finite deadline above zero
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("amqp_url", None):
        return
    catalog = CatalogRun(config)
    for line in catalog.marker_lines():
        config.addinivalue_line("markers", line)
    config.pluginmanager.register(catalog, SESSION_PLUGIN)


@dataclass
class Prepared:
    """What running a case needs, made once on first use (a connection to the broker)."""

    runner: "Runner | None" = None
    problem: str = ""          # why the broker could not be probed: every case errors with it


class CatalogRun:
    """The plugin's state and hooks for one session with ``--amqp-url``."""

    def __init__(self, config: pytest.Config) -> None:
        from amqpspec.case import PROTOCOL_PREFIXES
        from amqpspec.clauses import Level

        self.config = config
        self.url: str = config.getoption("amqp_url")
        self.protocol: str = config.getoption("amqp_protocol")
        self.strict: bool = config.getoption("amqp_strict")
        seed = config.getoption("amqp_seed")
        self.seed: int = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
        self.protocol_marker = {proto: prefix for prefix, proto in PROTOCOL_PREFIXES.items()}
        self.level_markers = sorted({lv.family.lower() for lv in Level} - {"none"})
        self.target: Target | None = None
        self.cases: list[CaseSpec] = []
        self._prepared: Prepared | None = None
        self._prepare_lock = threading.Lock()
        self._writer: ResultWriter | None = None
        self._write_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._ahead: dict[str, Future[Result]] = {}
        self.finished: list[Result] = []

    def marker_lines(self) -> list[str]:
        lines = [f"{name}: amqpspec case of AMQP {proto}" for proto, name in self.protocol_marker.items()]
        lines += [f"{name}: amqpspec case citing a {name.upper()} clause" for name in self.level_markers]
        lines.append('section(id): amqpspec case of this spec section, e.g. -m "section(id=\'4.2.3\')"')
        return lines

    # ------------------------------------------------------------------ collection
    def collect_cases(self) -> list[CaseSpec]:
        """The selected cases of the protocol (asking the broker when it is ``auto``)."""
        from amqpspec import brokerops
        from amqpspec.case import discover, select
        from amqpspec.target import Target

        self.target = Target.parse(self.url, cafile=self.config.getoption("amqp_cafile"),
                                   insecure=self.config.getoption("amqp_insecure"))
        if self.protocol == "auto":
            self.protocol = brokerops.detect_protocol(self.target)
        self.cases = select(discover(self.protocol), self.config.getoption("amqp_case"),
                            self.config.getoption("amqp_exclude"))
        return self.cases

    def markers_for(self, spec: CaseSpec) -> list[pytest.MarkDecorator]:
        from amqpspec import clauses as clause_catalog

        known = clause_catalog.by_id(spec.protocol)
        levels = {known[c].level for c in spec.clauses if c in known}
        if spec.level is not None:
            levels.add(spec.level)
        families = sorted({lv.family.lower() for lv in levels} & set(self.level_markers))
        marks = [getattr(pytest.mark, self.protocol_marker[spec.protocol])]
        marks += [getattr(pytest.mark, family) for family in families]
        marks.append(pytest.mark.section(id=spec.section))
        return marks

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, Any, Any]:
        """The session collects the catalog beside whatever its arguments give: this works in a
        directory without any test file, where no file-collection hook would ever fire."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.append(Catalog.from_parent(collector, name=COLLECTOR_NAME, nodeid=COLLECTOR_NAME))
        return report

    # ------------------------------------------------------------------ running
    def prepare(self) -> Prepared:
        """Probes the broker once (identity, capabilities, profile) and builds the runner."""
        with self._prepare_lock:
            if self._prepared is None:
                self._prepared = self._prepare()
            return self._prepared

    def _prepare(self) -> Prepared:
        from amqpspec import brokerops, profiles
        from amqpspec.errors import AmqpspecError
        from amqpspec.runner import RunOptions, Runner

        assert self.target is not None
        try:
            self.target.broker = brokerops.probe(self.target, protocol=self.protocol)
            profile_path = self.config.getoption("amqp_profile")
            profile = profiles.load_file(profile_path) if profile_path else None
            if profile is None and not self.config.getoption("amqp_no_profile"):
                profile = profiles.for_product(self.target.broker.product)
        except AmqpspecError as exc:
            return Prepared(problem=str(exc))
        defaults = RunOptions()
        options = RunOptions(jobs=self.config.getoption("amqp_jobs") or defaults.jobs,
                             timeout=self.config.getoption("amqp_timeout"), seed=self.seed, protocol=self.protocol,
                             profile=profile)
        return Prepared(Runner(self.target, self.cases, options))

    def result_of(self, spec: CaseSpec) -> Result | str:
        """The case's result (run now, or awaited when run ahead), or why it could not run."""
        ahead = self._ahead.pop(spec.id, None)
        if ahead is not None:
            result = ahead.result()
        else:
            prepared = self.prepare()
            if prepared.runner is None:
                return prepared.problem
            result = prepared.runner.run_case(spec)
        self._record(result)
        return result

    def _record(self, result: Result) -> None:
        from amqpspec.result import ResultWriter

        with self._write_lock:
            self.finished.append(result)
            path = self.config.getoption("amqp_json")
            if path:
                if self._writer is None:
                    self._writer = ResultWriter(path)
                self._writer.write(result)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, Any]:
        """With more than one job, the selected cases run ahead in a pool; each item then only
        awaits its own result, so pytest still reports them in catalog order."""
        try:
            if not session.config.option.collectonly:
                self._run_ahead([item for item in session.items if isinstance(item, CaseItem)])
            return (yield)
        finally:
            if self._pool is not None:  # cases not reached (-x, Ctrl-C) are not started
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None

    def _run_ahead(self, items: list[CaseItem]) -> None:
        if not items:
            return
        prepared = self.prepare()
        if prepared.runner is None or prepared.runner.options.jobs <= 1:
            return
        runner = prepared.runner
        self._pool = ThreadPoolExecutor(max_workers=runner.options.jobs, thread_name_prefix="amqpspec-case")
        for item in items:
            self._ahead[item.spec.id] = self._pool.submit(runner.run_case, item.spec)

    def pytest_sessionfinish(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # ------------------------------------------------------------------ reporting
    def pytest_report_header(self) -> str:
        from amqpspec.target import Target

        try:
            where = Target.parse(self.url).url()  # never the password
        except Exception:
            where = "(URL not valid)"
        return f"amqpspec: {where}, protocol {self.protocol}, seed {self.seed}" + (", strict" if self.strict else "")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.finished:
            return
        from amqpspec.reports.console import count_verdicts

        counts = count_verdicts(self.finished)
        shown = ", ".join(f"{counts[v]} {v}" for v in ("passed", "failed", "warning", "informational", "skipped", "error")
                          if counts[v])
        broker = self.target.broker if self.target is not None else None
        who = f" ({broker.product} {broker.version})".rstrip() if broker is not None and broker.product else ""
        terminalreporter.write_sep("-", "amqpspec")
        terminalreporter.write_line(f"{counts['total']} cases against {self.target.url() if self.target else self.url}{who}, "
                                    f"AMQP {self.protocol}, seed {self.seed}: {shown}")
        path = self.config.getoption("amqp_json")
        if path:
            terminalreporter.write_line(f"results: {path}")


class Catalog(pytest.Collector):
    """The cases of the chosen protocol, as items."""

    def collect(self) -> list[pytest.Item]:
        from amqpspec.errors import AmqpspecError

        catalog: CatalogRun = self.config.pluginmanager.get_plugin(SESSION_PLUGIN)
        try:
            cases = catalog.collect_cases()
        except AmqpspecError as exc:  # bad URL, unreachable broker with --amqp-protocol auto: one line
            raise self.CollectError(f"amqpspec: {exc}") from None
        items: list[pytest.Item] = []
        for spec in cases:
            item = CaseItem.from_parent(self, name=spec.id, spec=spec, catalog=catalog)
            for mark in catalog.markers_for(spec):
                item.add_marker(mark)
            items.append(item)
        return items


class CaseItem(pytest.Item):
    """One case. Setup runs it (an undecided case is a pytest error); the call judges it."""

    def __init__(self, *, spec: CaseSpec, catalog: CatalogRun, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec
        self.catalog = catalog
        self.result: Result | None = None

    def setup(self) -> None:
        from amqpspec.result import Verdict

        outcome = self.catalog.result_of(self.spec)
        if isinstance(outcome, str):
            pytest.fail(f"amqpspec: {outcome}", pytrace=False)
        self.result = outcome
        self.user_properties += [("amqpspec_verdict", outcome.verdict.value), ("clauses", ", ".join(outcome.clauses))]
        if outcome.verdict is not Verdict.PASSED:
            self._add_transcript("setup")
        if outcome.verdict is Verdict.ERROR:
            pytest.fail(f"the suite could not decide: {outcome.reason}\n{evidence_text(outcome)}", pytrace=False)

    def runtest(self) -> None:
        from amqpspec.reports.console import fails_run
        from amqpspec.reports.counts import is_documented_deviation
        from amqpspec.result import Verdict

        result = self.result
        assert result is not None
        verdict = result.verdict
        if fails_run(result, self.catalog.strict):
            why = {Verdict.WARNING: "SHOULD not met (--amqp-strict): "}.get(verdict, "")
            if is_documented_deviation(verdict, result.deviation):  # the one definition every report uses
                why = "documented deviation (--amqp-strict): "
            pytest.fail(f"{why}{result.reason}\n{evidence_text(result)}", pytrace=False)
        if verdict is Verdict.SKIPPED:
            pytest.skip(result.reason or "skipped")
        if verdict is Verdict.WARNING:
            pytest.xfail(f"SHOULD not met (fails with --amqp-strict): {result.reason}")
        if verdict is Verdict.FAILED:  # not failing the run: a documented deviation
            pytest.xfail(f"documented deviation (fails with --amqp-strict): {result.deviation}")

    def _add_transcript(self, when: str) -> None:
        from amqpspec.reports.console import transcript_lines

        assert self.result is not None
        lines = transcript_lines(self.result.transcript)
        if lines:
            self.add_report_section(when, "amqpspec transcript", "\n".join(lines))

    def reportinfo(self) -> tuple[Path | str, int | None, str]:
        """Points at the case function, so a failure's header names the code that decided it.

        The domain (the failure's headline) is the id with the title: an id alone, being the end of
        the node id, would have its dots shown as ``::`` by the verbose progress lines.
        """
        domain = f"{self.spec.id}: {self.spec.title}"
        func = inspect.unwrap(self.spec.func)
        try:
            return Path(inspect.getsourcefile(func) or self.path), func.__code__.co_firstlineno - 1, domain
        except (TypeError, AttributeError):
            return self.path, None, domain


def evidence_text(result: Result) -> str:
    """The evidence of a case as indented ``label: text`` lines (continuations aligned)."""
    from amqpspec.reports.console import case_details

    lines: list[str] = []
    for label, value in case_details(result):
        head = f"{label}: "
        first, *more = value.split("\n")
        lines.append(head + first)
        lines.extend(" " * len(head) + line for line in more)
    return "\n".join(lines)

