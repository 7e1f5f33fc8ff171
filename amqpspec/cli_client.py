"""``amqpspec client`` and ``amqpspec serve``: amqpspec plays the broker and judges a client.

``client`` launches the library under test through its driver once per case; ``serve``
waits for a client it does not launch (an application, another language's test suite) and
gives each incoming connection the next case (the fuzzingserver mode). Both report exactly
like ``amqpspec run``: console tree, JSON lines (with role/driver/library/library_version),
JUnit, baselines and exit codes (0 nothing failed, 1 failures, 2 usage errors).
"""
from __future__ import annotations

import random
import time
from typing import Any

import click

from amqpspec.cliutil import Seconds, check_output_file, guarded
from amqpspec.errors import UsageError
from amqpspec.run_outputs import finish_outputs
from amqpspec.sanitize import safe_line


def _listen_address(value: str | None) -> tuple[str, int]:
    if not value:
        return "127.0.0.1", 0
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise UsageError(f"--listen takes HOST:PORT (e.g. 127.0.0.1:5999), not {value!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _cases(protocol: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> list[Any]:
    from amqpspec.case import discover, select

    cases = discover(protocol, role="client")
    if not cases:
        raise UsageError(f"no AMQP {protocol} client cases exist in this version of amqpspec")
    chosen = select(cases, list(include), list(exclude))
    if not chosen:
        raise UsageError("no client case matches the --case/--exclude patterns (try --dry-run to list case ids)")
    return chosen


def _report(target: Any, chosen: list[Any], options: Any, *, json_path: str | None, junit_path: str | None,
            strict: bool, verbose: bool, baseline_path: str | None, write_baseline_path: str | None,
            run: Any) -> None:
    """Runs ``run(on_result, on_start)`` and reports as ``amqpspec run`` does; exits."""
    from rich.console import Console

    from amqpspec import baseline as bl
    from amqpspec.reports.console import ConsoleReporter
    from amqpspec.result import ResultWriter

    baseline = bl.load_baseline(baseline_path) if baseline_path else None
    console = Console(highlight=False)
    reporter = ConsoleReporter(console, verbose=verbose, strict=strict)
    writer = ResultWriter(json_path) if json_path else None

    def on_result(r: Any) -> None:
        if writer is not None:
            writer.write(r)
        reporter.case_finished(r)

    shown = {k: safe_line(v) for k, v in target.broker.identity().items()}
    reporter.start({"target": target.url(), "broker": shown, "protocol": options.protocol,
                    "cases": len(chosen), "seed": options.seed, "jobs": options.jobs})
    t0 = time.monotonic()
    try:
        results = run(on_result, reporter.case_started)
    finally:
        reporter.close()
        if writer is not None:
            writer.close()
    reporter.finish(results, time.monotonic() - t0)
    finish_outputs(results, target, strict=strict, junit_path=junit_path, write_baseline_path=write_baseline_path,
                   baseline=baseline, baseline_path=baseline_path, show_improvements=False)


def _common(func: Any) -> Any:
    for option in reversed((
        click.option("--protocol", type=click.Choice(("0-9-1", "1.0")), default="0-9-1", show_default=True),
        click.option("--case", "include", multiple=True, metavar="GLOB", help="Run only cases whose id matches (repeatable)."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip cases whose id matches (repeatable)."),
        click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write JSON-lines results here."),
        click.option("--junit", "junit_path", type=click.Path(dir_okay=False), help="Write JUnit XML here at the end."),
        click.option("--strict", is_flag=True, help="Count warnings (unmet SHOULDs) as failures."),
        click.option("--baseline", "baseline_path", type=click.Path(dir_okay=False), help="Fail only on results worse than this baseline."),
        click.option("--write-baseline", "write_baseline_path", type=click.Path(dir_okay=False), help="Record this run's verdicts as a baseline."),
        click.option("--timeout", type=Seconds(0.5), help="Per-case deadline in seconds (default: each case's own)."),
        click.option("--seed", type=int, help="Seed for all randomness (default: random, printed)."),
        click.option("--listen", metavar="HOST:PORT", help="Where the playing broker listens (default 127.0.0.1, a free port)."),
        click.option("-v", "--verbose", is_flag=True, help="Print every frame sent and received, decoded."),
        click.option("--dry-run", is_flag=True, help="List the selected cases without running them."),
    )):
        func = option(func)
    return func


@click.command("client")
@click.option("--driver", "driver_name", metavar="NAME", help="The driver in drivers/NAME (see docs/drivers.md).")
@click.option("--driver-cmd", metavar="'CMD {url} {workload}'", help="Launch this command as the driver instead.")
@click.option("--jobs", type=click.IntRange(min=1, max=16), default=4, show_default=True,
              help="Cases run side by side, each on a port of its own (1 with --listen).")
@_common
@guarded
def client(driver_name: str | None, driver_cmd: str | None, jobs: int, protocol: str, include: tuple[str, ...],
           exclude: tuple[str, ...], json_path: str | None, junit_path: str | None, strict: bool,
           baseline_path: str | None, write_baseline_path: str | None, timeout: float | None, seed: int | None,
           listen: str | None, verbose: bool, dry_run: bool) -> None:
    """Judge an AMQP client library: play the broker, case by case, against its driver."""
    from amqpspec.client.drivers import DriverSpec
    from amqpspec.client.session import ClientTarget
    from amqpspec.peer.base import PeerError
    from amqpspec.peer.server091 import Listener
    from amqpspec.runner import RunOptions

    if bool(driver_name) == bool(driver_cmd):
        raise UsageError("give exactly one of --driver NAME and --driver-cmd 'CMD {url} {workload}'")
    driver = DriverSpec.load(driver_name) if driver_name else DriverSpec.from_command(driver_cmd or "", protocol)
    if driver.protocol != protocol:
        raise UsageError(f"the {driver.name} driver speaks AMQP {driver.protocol}, not {protocol} (give --protocol {driver.protocol})")
    chosen = _cases(protocol, include, exclude)
    if dry_run:
        for c in chosen:
            click.echo(f"{c.id}  [{', '.join(c.clauses) or c.guideline[:40]}]  {c.title}")
        click.echo(f"{len(chosen)} cases")
        return
    for path, option in ((json_path, "--json"), (junit_path, "--junit"), (write_baseline_path, "--write-baseline")):
        check_output_file(path, option)
    ok, why = driver.usable()
    version = driver.library_version() if ok else ""
    host, port = _listen_address(listen)
    try:
        listener = Listener(host, port)
    except PeerError as exc:
        raise UsageError(str(exc)) from None
    try:
        target = ClientTarget.create(listener, driver, version, protocol)
        target.per_case_listen = not listen and jobs > 1
        options = RunOptions(jobs=jobs if target.per_case_listen else 1, timeout=timeout, protocol=protocol,
                             seed=seed if seed is not None else random.SystemRandom().randrange(1 << 31))
        _report(target, chosen, options, json_path=json_path, junit_path=junit_path, strict=strict, verbose=verbose,
                baseline_path=baseline_path, write_baseline_path=write_baseline_path,
                run=lambda on_result, on_start: _client_run(target, chosen, options, on_result, on_start,
                                                            "" if ok else f"driver {driver.name} skipped: its library "
                                                                          f"is not usable: {why}"))
    finally:
        listener.close()


def _client_run(target: Any, chosen: list[Any], options: Any, on_result: Any, on_start: Any,
                unusable: str) -> list[Any]:
    from amqpspec.client.runner import ClientRunner

    runner = ClientRunner(target, chosen, options, on_result=on_result, on_start=on_start)
    return runner.skipped(unusable) if unusable else runner.run()


@click.command("serve")
@click.option("--max-connections", type=click.IntRange(min=1), help="Stop after this many connections (default: one per case).")
@_common
@guarded
def serve(max_connections: int | None, protocol: str, include: tuple[str, ...], exclude: tuple[str, ...],
          json_path: str | None, junit_path: str | None, strict: bool, baseline_path: str | None,
          write_baseline_path: str | None, timeout: float | None, seed: int | None, listen: str | None,
          verbose: bool, dry_run: bool) -> None:
    """Play the broker for a client amqpspec does not launch: each connection gets the next case."""
    from amqpspec.client.runner import ClientRunner
    from amqpspec.client.session import ClientTarget, ServeQueue
    from amqpspec.peer.base import PeerError
    from amqpspec.peer.server091 import Listener
    from amqpspec.runner import RunOptions

    chosen = _cases(protocol, include, exclude)
    if dry_run:
        for c in chosen:
            click.echo(f"{c.id}  {c.title}")
        click.echo(f"{len(chosen)} cases")
        return
    for path, option in ((json_path, "--json"), (junit_path, "--junit"), (write_baseline_path, "--write-baseline")):
        check_output_file(path, option)
    host, port = _listen_address(listen or "127.0.0.1:5999")
    try:
        listener = Listener(host, port)
    except PeerError as exc:
        raise UsageError(str(exc)) from None
    limit = min(max_connections or len(chosen), len(chosen))
    target = ClientTarget.create(listener, None, "", protocol)
    # the playing broker takes any user name and password: nothing secret to print
    click.echo(f"serving {limit} cases on amqp://{listener.host}:{listener.port}/ (any user name and password; "
               "each connection gets the next case)")
    options = RunOptions(jobs=1, timeout=timeout, protocol=protocol,
                         seed=seed if seed is not None else random.SystemRandom().randrange(1 << 31))
    queue = ServeQueue(listener)

    def run(on_result: Any, on_start: Any) -> list[Any]:
        results = []
        runner = ClientRunner(target, chosen, options, on_result=on_result, on_start=on_start)
        for c in chosen[:limit]:
            conn = queue.next()
            if conn is None:
                break
            target.pending.append(conn)
            on_start(c.id)
            r = runner.run_case(c)
            while target.pending:  # a case that did not take its connection: end it
                leftover, _ = target.pending.popleft()
                leftover.close()
            results.append(r)
            on_result(r)
        return results

    try:
        _report(target, chosen[:limit], options, json_path=json_path, junit_path=junit_path, strict=strict,
                verbose=verbose, baseline_path=baseline_path, write_baseline_path=write_baseline_path, run=run)
    finally:
        listener.close()
