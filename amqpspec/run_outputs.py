"""What a finished run writes after the console summary: JUnit XML, a new baseline, the
comparison with an old one, and the exit status. Shared by ``amqpspec run`` (broker role)
and ``amqpspec client``/``serve`` (client role) so the two report a run the same way."""

from __future__ import annotations

import sys
from typing import Any

import click

from amqpspec.sanitize import safe_line


def finish_outputs(results: list[Any], target: Any, *, strict: bool, junit_path: str | None,
                   write_baseline_path: str | None, baseline: Any, baseline_path: str | None,
                   show_improvements: bool) -> None:
    """Writes the outputs asked for and exits 1 when the run failed (against ``baseline`` when
    one was given: a regression or a new failure; otherwise any failure). ``show_improvements``
    also lists improved cases and a one-line count (``amqpspec run`` does; the client role not yet)."""
    from amqpspec import baseline as bl
    from amqpspec.reports.console import run_failed

    if junit_path:
        from amqpspec.reports.junit import write_junit

        write_junit(results, junit_path, strict=strict)
    if write_baseline_path:
        bl.write_baseline(write_baseline_path, results, target.url(), target.broker.identity())
        click.echo(f"baseline written to {write_baseline_path}")
    if baseline is not None:
        cmp = bl.compare(results, baseline, strict)
        if show_improvements:
            for case_id, was, now in cmp.improvements:
                click.echo(safe_line(f"improved: {case_id}: {was} -> {now}"))
        for case_id, was, now in cmp.regressions:
            click.echo(safe_line(f"REGRESSION: {case_id}: {was} -> {now}"))
        for case_id, now in cmp.new_failures:
            click.echo(safe_line(f"NEW FAILURE: {case_id}: {now}"))
        failed = bool(cmp.regressions or cmp.new_failures)
        if show_improvements:
            click.echo(f"baseline {safe_line(baseline_path or '')}: {len(cmp.regressions)} regressions, "
                       f"{len(cmp.new_failures)} new failures, {len(cmp.improvements)} improvements")
    else:
        failed = run_failed(results, strict)
    sys.exit(1 if failed else 0)
