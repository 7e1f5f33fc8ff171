"""``amqpspec report``: result files in, compliance dataset + HTML report + JUnit out.

The command is a ``click.Command`` object (``report``) that the main CLI attaches; it runs the
Spark pipeline (``amqpspec.reports.pipeline.job``) and then the HTML renderer
(``amqpspec.reports.html.render``) when it is installed. Without the renderer, the dataset,
the bundle and the JUnit files are still written, and the command says so.

Exit codes: 0 report written (skipped input is listed, not fatal), 2 usage errors (no input
could be read at all, bad --out, Spark cannot start) with one line on stderr.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

import click

from amqpspec.cliutil import check_output_dir, guarded
from amqpspec.errors import UsageError
from amqpspec.sanitize import safe_line

SHOW_BAD = 10




def _renderer() -> Callable[[Path, Path, Path], Any] | None:
    try:
        from amqpspec.reports.html import render
    except ImportError:
        return None
    return render


def _summary(result: Any, echo: Callable[[str], None]) -> None:
    inputs = result.bundle["inputs"]
    n_files = sum(1 for f in inputs["files"] if f["status"] != "skipped")
    echo(f"read {inputs['records']} result records and {inputs['findings']} findings from {n_files} files "
         f"in {result.seconds:.1f}s (Spark {result.bundle['spark'].get('master')})")
    skipped, kept = inputs["skipped_total"], inputs["bad_total"] - inputs["skipped_total"]
    if skipped or kept:
        echo(f"skipped {skipped} input items" + (f", kept {kept} records with fields emptied" if kept else "")
             + ": " + ", ".join(f"{k} {v}" for k, v in inputs["bad_by_reason"].items()))
        for bad in inputs["bad"][:SHOW_BAD]:
            where = bad["path"] + (f":{bad['line']}" if bad["line"] else "")
            echo(f"  {where}: {bad['reason']} ({bad['action']})")
        if inputs["bad_total"] > SHOW_BAD:
            echo(f"  ... {inputs['bad_total'] - SHOW_BAD} more in {result.bundle_path} (inputs.bad)")
    for warning in inputs["warnings"]:
        if not warning.endswith("(see the list of skipped input)"):
            echo(f"warning: {warning}")
    unknown = result.bundle["unknown"]
    if unknown["cases"] or unknown["clauses"]:
        echo(f"note: {len(unknown['cases'])} case ids and {len(unknown['clauses'])} clause ids unknown to this "
             "amqpspec (another suite version): kept and flagged")
    for c in result.bundle["compliance"]:
        must = c["levels"]["MUST"]
        ratio = "-" if must["ratio"] is None else f"{100 * must['ratio']:.1f}%"
        echo(f"  {c['key']}: MUST {must['passed']}/{must['tested']} ({ratio}), "
             f"SHOULD {c['levels']['SHOULD']['passed']}/{c['levels']['SHOULD']['tested']}")


@click.command("report")
@click.argument("results", nargs=-1, required=True, metavar="RESULTS...")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Directory for the report, the dataset (Parquet) and the bundle (created if missing).")
@click.option("--findings", multiple=True, metavar="DIR",
              help="Directory (or file) of fuzz findings, one JSON file per finding (repeatable).")
@click.option("--spark-master", metavar="URL",
              help="Spark master, e.g. spark://host:7077 (default: the Spark environment's, else local[*]).")
@click.option("--conf", "spark_conf", multiple=True, metavar="KEY=VALUE",
              help="Spark configuration, e.g. --conf spark.executor.memory=4g (repeatable).")
@click.option("--strict", is_flag=True, help="JUnit: count warnings and documented deviations as failures.")
@click.option("--no-html", is_flag=True, help="Write only the dataset, the bundle and the JUnit files.")
@click.option("--keep-warm/--no-keep-warm", default=None,
              help="Run in a Spark kept warm between reports (idle minutes: AMQPSPEC_KEEP_WARM_MINUTES, "
                   "default 10; `amqpspec spark stop` ends it). Default: on outside CI.")
@guarded
def report(results: tuple[str, ...], out_dir: str, findings: tuple[str, ...], spark_master: str | None,
           spark_conf: tuple[str, ...], strict: bool, no_html: bool, keep_warm: bool | None) -> None:
    """Build the compliance dataset and report from RESULTS (JSON-lines files or directories).

    Bad, truncated or duplicate lines, missing or empty files are skipped and listed (in the
    output and in the report), never fatal; unknown case or clause ids from other suite
    versions are kept and flagged.
    """
    params = {"results": list(results), "out_dir": out_dir, "findings": list(findings),
              "spark_master": spark_master, "spark_conf": list(spark_conf), "strict": strict, "no_html": no_html}
    from amqpspec.reports.warm import client

    if client.wanted(keep_warm):
        code = client.run(params, check=lambda: check_output_dir(out_dir, "--out"), asked=keep_warm is True)
        if code is not None:
            sys.exit(code)
    run_report(**params)


def run_report(results: list[str], out_dir: str, findings: list[str], spark_master: str | None,
               spark_conf: list[str], strict: bool, no_html: bool) -> None:
    """The report, in this process (or in the warm Spark's: ``warm.server`` calls this too)."""
    from amqpspec.reports.pipeline import records as source_records
    from amqpspec.reports.pipeline.job import run_job
    from amqpspec.reports.pipeline.session import parse_conf
    from amqpspec.reports.report_progress import StageDisplay

    # the lines quote the inputs (broker products, reasons a record was skipped): made safe to show
    def out(line: str) -> None:
        click.echo(safe_line(line))

    check_output_dir(out_dir, "--out")  # before Spark starts: a bad path costs no pipeline run
    conf = parse_conf(spark_conf)
    display = StageDisplay()   # the stages as they run (rich on a terminal, one line each otherwise)
    try:
        result = run_job(list(results), out_dir, findings=list(findings), master=spark_master, conf=conf,
                         strict=strict, log=lambda line: display.note(safe_line(line)), progress=display)
    finally:
        display.close()
    _summary(result, out)
    click.echo(f"dataset: {result.dataset_dir}  bundle: {result.bundle_path}"
               + (f"  junit: {len(result.junit_paths)} files in {result.out_dir / 'junit'}" if result.junit_paths else ""))
    if result.bundle["inputs"]["records"] == 0 and result.bundle["inputs"]["findings"] == 0:
        raise UsageError("no valid result record or finding in the inputs (see the skipped input above)")
    if no_html:
        return
    render = _renderer()
    if render is None:
        click.echo("HTML renderer not installed (amqpspec.reports.html): wrote the dataset, bundle and JUnit only")
        return
    t0 = time.monotonic()
    display.started("write the HTML report")
    try:
        page = render(result.bundle_path, result.dataset_dir, result.out_dir,
                      progress=lambda line: display.note(safe_line(line)))
    except ImportError as exc:   # the renderer's own dependencies (templates engine, ...)
        click.echo(f"HTML report not written: {exc} (the dataset, bundle and JUnit are complete)")
        return
    finally:
        display.close()
        source_records.forget()   # the records JUnit and the pages quoted: no longer needed
    display.finished("write the HTML report", time.monotonic() - t0)
    click.echo(f"report: {page or result.out_dir / 'index.html'}")


if __name__ == "__main__":  # pragma: no cover
    report(sys.argv[1:])
