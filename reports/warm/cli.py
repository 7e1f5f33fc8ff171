"""``amqpspec spark status`` and ``amqpspec spark stop``: the warm Spark of ``report --keep-warm``."""
from __future__ import annotations

import time

import click

from amqpspec.cliutil import guarded

from . import channel, client


@click.group("spark")
def spark() -> None:
    """The Spark kept warm between reports (`amqpspec report --keep-warm`)."""


@spark.command("status")
@guarded
def status() -> None:
    """Whether a warm Spark runs, since when, how many reports it ran."""
    place = channel.place()
    answer = client.hello(place)
    if answer is None:
        click.echo("no warm Spark running")
    elif answer.get("busy"):
        click.echo("a warm Spark is running a report")
    else:
        since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(answer.get("since") or 0)))
        click.echo(f"warm Spark: pid {answer.get('pid')}, {answer.get('reports')} reports since {since}, "
                   f"ends after {float(answer.get('idle_s') or 0) / 60:g} min idle (log: {place.log})")


@spark.command("stop")
@guarded
def stop() -> None:
    """End the warm Spark (a report it is running is interrupted and cleaned up)."""
    click.echo(client.stop(channel.place()))
