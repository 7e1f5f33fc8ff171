"""``amqpspec html BUNDLE``: render (again) the HTML report of a bundle the pipeline wrote.

``amqpspec report`` runs the pipeline and renders in one go; this command only renders, in
seconds and without Spark, e.g. after changing templates or to write pcaps for every case.
"""
from __future__ import annotations

from pathlib import Path

import click

from amqpspec.cliutil import fail
from amqpspec.errors import AmqpspecError
from amqpspec.sanitize import safe_line


@click.command(name="html")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", "dataset_dir", type=click.Path(file_okay=False, path_type=Path),
              help="The pipeline's dataset folder (default: 'dataset' beside the bundle).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where index.html and html/ go (default: the bundle's folder).")
@click.option("--pcaps", type=click.Choice(("attention", "all", "none")), default="attention", show_default=True,
              help="Which case pages get a pcap download: cases that did not pass, all, or none.")
def html_command(bundle: Path, dataset_dir: Path | None, out_dir: Path | None, pcaps: str) -> None:
    """Write the HTML report of BUNDLE (bundle.json from 'amqpspec report')."""
    from amqpspec.reports.html import render

    try:
        index = render(bundle, dataset_dir if dataset_dir is not None else bundle.parent / "dataset",
                       out_dir if out_dir is not None else bundle.parent, pcaps=pcaps,
                       progress=lambda text: click.echo(safe_line(f"  {text}"), err=True))
    except AmqpspecError as exc:  # file texts and paths are shown through the one sanitiser
        fail(str(exc), exc.exit_code)
    except OSError as exc:
        fail(f"{exc.strerror or exc}{': ' + str(exc.filename) if exc.filename else ''}")
    click.echo(safe_line(f"report: {index}"))
