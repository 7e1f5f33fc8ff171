"""``amqpspec spark status`` and ``amqpspec spark stop``: the warm Spark of ``report --keep-warm``;
``amqpspec spark prepare``: the report JVM's class archive written ahead of the first report."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
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


@spark.command("prepare")
@guarded
def prepare() -> None:
    """Write the report JVM's class archive now (setup, an image build, a CI cache step), so that
    the first report on this machine starts as fast as later ones.

    The first report in a fresh process on a machine otherwise writes it as its JVM exits (tens
    of seconds, once: reports/pipeline/jvmcache.py). Here a report of the bundled warm-up sample
    writes it; nothing is done when the archive for this Java, Spark and local master is there."""
    from amqpspec.errors import UsageError
    from amqpspec.reports.pipeline import jvmcache, session

    if not jvmcache.enabled():
        click.echo("class archives are off (AMQPSPEC_SPARK_CDS): nothing to prepare")
        return
    session.check_runtime()
    sample = channel.WARMUP_SAMPLE
    path = session.default_class_archive(sample.stat().st_size)
    if path is None:
        raise UsageError("no Java runtime to write a class archive for")
    if jvmcache.ready(path):
        click.echo(f"class archive ready: {path}")
        return
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="amqpspec-prepare-") as out:
        env = dict(os.environ, AMQPSPEC_KEEP_WARM="0")   # in a process of its own: its JVM writes it
        done = subprocess.run([sys.executable, "-m", "amqpspec.cli", "report", str(sample), "--out", out, "--no-html"],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
    if not jvmcache.ready(path):
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"the class archive was not written (report exit {done.returncode}: {last})")
    click.echo(f"class archive written: {path} ({path.stat().st_size / 1e6:.0f} MB, {time.monotonic() - t0:.0f} s)")
