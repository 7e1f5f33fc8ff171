"""The ``amqpspec`` command line.

Exit codes: 0 nothing failed (beyond the baseline), 1 failures (or undecided cases),
2 usage or connection errors -- always with a one-line reason, never a traceback.
"""
from __future__ import annotations

import json
import random
import time
from typing import Any

import click

from amqpspec import __version__
from amqpspec.cliutil import Seconds, check_output_file, fail, guarded, parse_target, password_option
from amqpspec.errors import UsageError
from amqpspec.run_outputs import finish_outputs
from amqpspec.defaults import JOBS as DEFAULT_JOBS
from amqpspec.sanitize import safe_line

PROTOCOLS = ("0-9-1", "1.0", "auto")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="amqpspec")
def main() -> None:
    """Conformance and fuzz testing for AMQP 0-9-1 and AMQP 1.0 brokers."""


@main.command()
@click.argument("url")
@click.option("--protocol", type=click.Choice(PROTOCOLS), default="auto", show_default=True,
              help="Protocol to test; auto asks the broker.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write JSON-lines results here, one line per finished case.")
@click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here at the end.")
@click.option("--strict", is_flag=True, help="Count warnings (unmet SHOULDs) and documented deviations as failures.")
@click.option("--case", "include", multiple=True, metavar="GLOB", help="Run only cases whose id matches (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip cases whose id matches (repeatable).")
@click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), help="Fail only on results worse than this baseline.")
@click.option("--write-baseline", "write_baseline_path", type=click.Path(dir_okay=False), help="Record this run's verdicts as a baseline.")
@click.option("--timeout", type=Seconds(0.1), help="Per-case deadline in seconds (default: each case's own).")
@click.option("--jobs", type=click.IntRange(min=1, max=64), default=DEFAULT_JOBS, show_default=True,
              help="Cases run in parallel (a broker one of them stops is sorted out as --jobs 1 would).")
@click.option("--seed", type=int, help="Seed for all randomness (default: random, printed).")
@click.option("--profile", "profile_path", type=click.Path(dir_okay=False),
              help="Broker profile (TOML) of documented deviations (default: the shipped one for the broker's product).")
@click.option("--no-profile", is_flag=True, help="Report documented deviations as plain failures.")
@click.option("--restart-command", metavar="CMD",
              help="Shell command that restarts the broker when it stops serving after a case; the run then goes on.")
@click.option("--cafile", type=click.Path(exists=True, dir_okay=False), help="CA certificate(s) to verify an amqps:// broker.")
@click.option("--insecure", is_flag=True, help="Do not verify the broker's TLS certificate.")
@password_option
@click.option("-v", "--verbose", is_flag=True, help="Print every frame sent and received, decoded.")
@click.option("--dry-run", is_flag=True, help="List the selected cases without connecting.")
@click.option("--keep-warm/--no-keep-warm", default=None,
              help="With --json: start a Spark in the background, warmed for `amqpspec report` of the results "
                   "(see `report --keep-warm`). Default: on outside CI.")
@guarded
def run(url: str, protocol: str, json_path: str | None, junit_path: str | None, strict: bool,
        include: tuple[str, ...], exclude: tuple[str, ...], baseline_path: str | None,
        write_baseline_path: str | None, timeout: float | None, jobs: int, seed: int | None,
        profile_path: str | None, no_profile: bool, restart_command: str | None, cafile: str | None,
        insecure: bool, password_file: str | None, verbose: bool, dry_run: bool, keep_warm: bool | None) -> None:
    """Run the conformance suite against the broker at URL (amqp[s]://user:pass@host:port/vhost)."""
    from amqpspec import baseline as bl
    from amqpspec import profiles
    from amqpspec.case import discover, select
    from amqpspec.result import ResultWriter
    from amqpspec.brokerops import detect_protocol, probe
    from amqpspec.runner import RunOptions, Runner

    target = parse_target(url, cafile=cafile, insecure=insecure, password_file=password_file)
    if not dry_run:  # an output that cannot be written fails now, not after the whole run
        for path, option in ((json_path, "--json"), (junit_path, "--junit"), (write_baseline_path, "--write-baseline")):
            check_output_file(path, option)
    baseline = bl.load_baseline(baseline_path) if baseline_path else None
    if protocol == "auto" and dry_run:
        protocol = "0-9-1"
    if protocol == "auto":
        protocol = detect_protocol(target)
    cases = discover(protocol)
    if not cases:
        raise UsageError(f"no AMQP {protocol} cases exist in this version of amqpspec")
    chosen = select(cases, list(include), list(exclude))
    if not chosen:
        raise UsageError("no case matches the --case/--exclude patterns (try --dry-run to list case ids)")
    if dry_run:
        for c in chosen:
            click.echo(f"{c.id}  [{', '.join(c.clauses) or c.guideline[:40]}]  {c.title}")
        click.echo(f"{len(chosen)} cases")
        return
    run_seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    profile = profiles.load_file(profile_path) if profile_path else None
    target.broker = probe(target, protocol)
    if profile is None and not no_profile:
        profile = profiles.for_product(target.broker.product)

    from rich.console import Console

    from amqpspec.reports.console import ConsoleReporter

    console = Console(highlight=False)
    reporter = ConsoleReporter(console, verbose=verbose, strict=strict)
    writer = ResultWriter(json_path) if json_path else None
    options = RunOptions(jobs=jobs, timeout=timeout, seed=run_seed, protocol=protocol, restart_command=restart_command,
                         profile=None if no_profile else profile)
    if options.profile is not None:
        console.print(safe_line(f"profile: {options.profile.product} ({options.profile.source}, "
                                f"{len(options.profile.deviations)} documented deviations)"), markup=False)

    def on_result(r: Any) -> None:
        if writer is not None:
            writer.write(r)
        reporter.case_finished(r)

    shown_broker = {k: safe_line(v) for k, v in target.broker.identity().items()}  # scrubbed: it may echo the password
    reporter.start({"target": target.url(), "broker": shown_broker, "protocol": protocol,
                    "cases": len(chosen), "seed": run_seed, "jobs": jobs})
    t0 = time.monotonic()
    try:
        results = Runner(target, chosen, options, on_result=on_result, on_start=reporter.case_started).run()
    finally:
        reporter.close()
        if writer is not None:
            writer.close()
    reporter.finish(results, time.monotonic() - t0)
    if json_path:
        _prewarm(keep_warm)
    finish_outputs(results, target, strict=strict, junit_path=junit_path, write_baseline_path=write_baseline_path,
                   baseline=baseline, baseline_path=baseline_path, show_improvements=True)


def _prewarm(keep_warm: bool | None) -> None:
    """A Spark warming up for the report of these results, when wanted; never fails the run."""
    try:
        from amqpspec.reports.warm import client

        if not client.wanted(keep_warm):
            return
        from amqpspec.reports.pipeline.session import check_runtime

        check_runtime()   # no PySpark or no Java: nothing to warm, the report will say why
        note = client.prewarm()
    except Exception:   # an optional speed-up: whatever stops it, the run's outcome is unchanged
        return
    if note:
        click.echo(note, err=True)


#: the states of a clause in ``clauses --coverage`` (amqpspec.coverage.ClauseCoverage.status)
STATUSES = ("covered", "client-covered", "untested", "unaccounted")


@main.command()
@click.option("--protocol", type=click.Choice(("0-9-1", "1.0")), default="0-9-1", show_default=True)
@click.option("--coverage", is_flag=True, help="Show the cases covering each clause, or why it is untested.")
@click.option("--extensions", is_flag=True, help="Include RabbitMQ extension rules (rabbitmq091:).")
@click.option("--level", type=click.Choice(("MUST", "SHOULD", "MAY", "DEFINITION")),
              help="Only clauses of this level family (DEFINITION: with --documentation).")
@click.option("--status", type=click.Choice(STATUSES),
              help="With --coverage: only clauses in this state.")
@click.option("--documentation", is_flag=True,
              help="The sentences that are not clauses (a field's doc, a reply code, a label) instead; with "
                   "--coverage only those a case's guideline quotes, and the cases.")
@click.option("--id", "clause_id", metavar="ID", help="Show one clause or documentation sentence, e.g. "
              "amqp091:basic.get.no-ack/d1.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@guarded
def clauses(protocol: str, coverage: bool, extensions: bool, level: str | None, status: str | None,
            documentation: bool, clause_id: str | None, as_json: bool) -> None:
    """List the normative clauses of a specification; with --coverage, how each is tested.

    Definition-level sentences (no RFC 2119 keyword) are never in this list or its counts: they
    are listed with --documentation, apart from MUST/SHOULD/MAY."""
    from amqpspec import clauses as catalog
    from amqpspec import coverage as cov

    if clause_id:
        try:
            c = catalog.get(clause_id)
        except catalog.UnknownClauseError as exc:
            raise UsageError(str(exc)) from None
        kind = "documentation sentence" if catalog.is_documentation(c) else "clause"
        shown = {"id": c.id, "kind": kind, "level": c.level.value, "section": c.section,
                 "section_title": c.section_title, "text": c.text, "source": c.source}
        if c.versions:
            shown.update(product=c.product, versions=c.versions, versions_source=c.versions_source)
        if as_json:
            click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        else:
            for key, value in shown.items():
                click.echo(f"{key + ':':<16}{value}")
        return
    if level == "DEFINITION" and not documentation:
        raise UsageError("--level DEFINITION lists documentation sentences: add --documentation")
    try:
        rows = (cov.documentation_coverage(protocol) if documentation
                else cov.coverage(protocol, extensions=extensions))
    except NotImplementedError as exc:
        raise UsageError(str(exc)) from None
    if documentation and coverage:
        rows = [r for r in rows if r.cases]
    if level:
        rows = [r for r in rows if r.clause.level.family == level]
    if coverage and status:
        rows = [r for r in rows if r.status == status]
    if as_json:
        out = []
        for r in rows:
            c = r.clause
            row = {"id": c.id, "level": c.level.value, "section": c.section, "section_title": c.section_title,
                   "text": c.text, "source": c.source}
            if c.versions:  # a vendor clause: the releases its text describes, and which edition says so
                row.update(product=c.product, versions=c.versions, versions_source=c.versions_source)
            if coverage:
                row.update(status=r.status, cases=r.cases, client_cases=r.client_cases,
                           untested=None if r.untested is None else {"reason": r.untested.reason, "note": r.untested.note})
            out.append(row)
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
        return
    width = max((len(r.clause.id) for r in rows), default=10)
    for r in rows:
        click.echo(f"{r.clause.id:<{width}}  {r.clause.level.value:<10}  {r.clause.text}")
        if r.clause.versions:
            click.echo(f"{'':<{width}}  {'':<10}  applies to {r.clause.applicability()}; source: {r.clause.versions_source}")
        if coverage:
            if r.cases:
                how = "-> " + ", ".join(r.cases)
            elif documentation:
                how = "-> quoted by no case"
            elif r.client_cases:
                how = "-> no broker case: an obligation of the client, judged on the client side"
            elif r.untested:
                how = f"-> untested ({r.untested.reason}): {r.untested.note}"
            else:
                how = "-> UNACCOUNTED: no case and no reason"
            click.echo(f"{'':<{width}}  {'':<10}  {how}")
            if r.client_cases:
                click.echo(f"{'':<{width}}  {'':<10}  -> client side: {', '.join(r.client_cases)}")
    if documentation:
        fams = ", ".join(f"{fam} {n}" for fam, n in sorted(_families(rows).items()))
        click.echo(f"{len(rows)} documentation sentences{' quoted by cases' if coverage else ''} ({fams}); "
                   "not clauses: the coverage counts leave them out")
    elif coverage:
        _coverage_summary(rows)
    else:
        click.echo(f"{len(rows)} clauses")


def _families(rows: list[Any]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r.clause.level.family] = out.get(r.clause.level.family, 0) + 1
    return out


def _coverage_summary(rows: list[Any]) -> None:
    by_family: dict[str, list[int]] = {}
    for r in rows:
        tally = by_family.setdefault(r.clause.level.family, [0, 0])
        tally[1] += 1
        tally[0] += 1 if r.cases else 0
    counts = {s: sum(1 for r in rows if r.status == s) for s in STATUSES}
    client = sum(1 for r in rows if r.client_cases)
    reasons: dict[str, int] = {}
    for r in rows:
        if r.status == "untested":
            reasons[r.untested.reason] = reasons.get(r.untested.reason, 0) + 1
    fams = ", ".join(f"{fam} {a}/{b}" for fam, (a, b) in sorted(by_family.items()))
    click.echo(f"{len(rows)} clauses: {counts['covered']} covered ({fams}), "
               f"{counts['client-covered']} covered on the client side only, {counts['untested']} untested with a reason"
               + (f" ({', '.join(f'{k} {v}' for k, v in sorted(reasons.items()))})" if reasons else "")
               + f", {counts['unaccounted']} unaccounted; {client} clauses have client cases")


# The commands of the other parts, attached by import path so that this list is the only
# place that names them. A part whose import fails (an optional dependency missing) becomes a
# command that says so in one line instead of breaking every other command.
COMMANDS = (
    ("brokers", "amqpspec.brokers.cli", "brokers"),
    ("fuzz", "amqpspec.fuzz.cli", "fuzz"),
    ("replay", "amqpspec.capture.cli", "replay"),
    ("record", "amqpspec.capture.cli", "record"),
    ("capture", "amqpspec.capture.cli", "capture"),
    ("report", "amqpspec.reports.cli", "report"),
    ("html", "amqpspec.reports.html.cli", "html_command"),
    ("spark", "amqpspec.reports.warm.cli", "spark"),
    ("client", "amqpspec.cli_client", "client"),
    ("serve", "amqpspec.cli_client", "serve"),
)


def _unavailable(name: str, why: str) -> click.Command:
    @click.command(name=name, context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
                   help=f"(unavailable: {why})", add_help_option=False)
    def stub() -> None:
        fail(f"the {name} command is unavailable: {why}")
    return stub


def _attach_commands() -> None:
    import importlib

    for name, module, attr in COMMANDS:
        try:
            command = getattr(importlib.import_module(module), attr)
        except ImportError as exc:
            command = _unavailable(name, f"{exc} (reinstall amqpspec with its dependencies)")
        main.add_command(command, name=name)


_attach_commands()


if __name__ == "__main__":  # pragma: no cover
    main()
