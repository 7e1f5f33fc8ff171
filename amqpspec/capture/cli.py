"""The ``replay``, ``record`` and ``capture`` commands (attached to the ``amqpspec`` CLI).

Exit codes as everywhere in amqpspec: 0 the same / done, 1 the broker diverged from the
recording, 2 usage or connection error with one line on stderr.
"""
from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path
from typing import Any

import click

from amqpspec.cliutil import DAY, Seconds, check_output_dir, check_output_file, guarded, parse_target, password_option
from amqpspec.errors import UsageError
from amqpspec.sanitize import safe_line


def _target(url: str, cafile: str | None, insecure: bool, password_file: str | None = None) -> Any:
    return parse_target(url, cafile=cafile, insecure=insecure, password_file=password_file)


def _echo(text: str) -> None:
    """A line that may quote the broker or a file someone handed us: made safe to show."""
    click.echo(safe_line(text))


def _names_vhost(url: str) -> bool:
    """True when the URL's path names a virtual host other than the default one."""
    try:
        path = urllib.parse.urlsplit(url).path
    except ValueError:
        return False
    return path not in ("", "/")


# ---------------------------------------------------------------------------- replay

@click.command(name="replay")
@click.argument("file", required=False, type=click.Path(dir_okay=False))
@click.argument("url", required=False)
@click.option("--case", "case_id", metavar="ID", help="The case to replay from a result file (JSON lines).")
@click.option("--timing", type=click.Choice(("fast", "original")), default="fast", show_default=True,
              help="fast: send when the recorded answers came; original: keep the recorded gaps (capped), never ahead of the answers the client had.")
@click.option("--answer-timeout", type=Seconds(0.05), default=2.0, show_default=True,
              help="Seconds to wait for a recorded answer before going on (a missing one is reported at the end).")
@click.option("--max-gap", type=Seconds(0.0), default=10.0, show_default=True,
              help="Longest recorded gap honoured, in seconds.")
@click.option("--timeout", type=Seconds(1.0), default=120.0, show_default=True,
              help="Deadline of the whole replay, in seconds.")
@click.option("--ignore", "ignore", multiple=True, metavar="FRAME.FIELD",
              help="Also leave this field of the broker's frames out of the comparison (repeatable), "
                   "e.g. queue.declare-ok.message-count.")
@click.option("--strict", is_flag=True, help="Also diverge on counts that race with the broker's asynchronous work "
              "and on texts meant for people (reply-text, error descriptions); see --explain.")
@click.option("--cleanup/--no-cleanup", default=None,
              help="Delete what the replay created: the suite's own amqpspec-* names before and after it, other "
                   "names it declared only if they did not exist before (if unused and empty) "
                   "[default: for result records and findings, not for recordings and pcaps].")
@click.option("--cafile", type=click.Path(exists=True, dir_okay=False), help="CA certificate(s) for an amqps:// broker.")
@click.option("--insecure", is_flag=True, help="Do not verify the broker's TLS certificate.")
@password_option
@click.option("-v", "--verbose", is_flag=True, help="Print every frame sent and received, decoded.")
@click.option("--explain", is_flag=True, help="Print what the comparison ignores, and why, then exit.")
@click.option("--driver", metavar="NAME", help="A finding of `fuzz --as-server`: play its broker frames to this client "
              "driver (no URL) and say whether the finding reproduces.")
@click.option("--driver-cmd", metavar="CMD", help="As --driver, for a driver of your own: 'CMD {url} {workload}'.")
@guarded
def replay(file: str | None, url: str | None, case_id: str | None, timing: str, answer_timeout: float, max_gap: float,
           timeout: float, ignore: tuple[str, ...], strict: bool, cleanup: bool | None, cafile: str | None,
           insecure: bool, password_file: str | None, verbose: bool, explain: bool, driver: str | None = None,
           driver_cmd: str | None = None) -> None:
    """Re-send the client side of FILE to the broker at URL and compare its answers with the recording.

    FILE: a transcript written by `amqpspec record`, a result file of `amqpspec run --json`
    (with --case), a finding of `amqpspec fuzz`, or a pcap/pcapng capture. The SASL
    response is re-made with URL's credentials. Exit 0: the same answers; 1: a divergence
    (the first differing frame is printed, recorded and live); 2: usage or connection error.
    """
    from amqpspec.capture.compare import explain as explain_lines

    if explain:
        for line in explain_lines():
            click.echo(line)
        return
    if file and (driver or driver_cmd):
        from amqpspec.fuzz.server_cli import replay_with_driver

        if url:
            raise UsageError("replay --driver takes no URL: amqpspec plays the broker and launches the client")
        replay_with_driver(file, driver, driver_cmd)
        return
    if not file or not url:
        raise UsageError("replay needs FILE and URL (amqpspec replay FILE URL [--case ID]); --explain needs neither")
    from amqpspec.capture import transcripts
    from amqpspec.capture.compare import check_ignore
    from amqpspec.capture.replay import ReplayOptions
    from amqpspec.capture.replay import replay as run_replay

    tf = transcripts.load(file, case_id)
    target = _target(url, cafile, insecure, password_file)
    check_ignore(tf.protocol, list(ignore))
    sends = sum(1 for e in tf.entries if e.get("dir") == "send")
    label = f"{tf.source}, " if tf.source else ""
    _echo(f"replay  {file} ({label}protocol {tf.protocol}, {len(tf.connections())} connection(s), "
               f"{sends} client entries)  target {target.url()}  timing {timing}")
    options = ReplayOptions(timing=timing, answer_timeout=answer_timeout, max_gap=max_gap, deadline=timeout,
                            ignore=list(ignore), strict=strict, cleanup=cleanup)
    report = run_replay(tf, target, options, on_line=_echo if verbose else None, vhost_override=_names_vhost(url))
    for note in report.notes:
        _echo(f"note: {note}")
    if report.divergence is not None:
        for line in report.divergence.lines():
            _echo(line)
        click.echo(f"REPLAY DIVERGED after {report.compared} matching frame(s), {report.elapsed:.2f}s")
        sys.exit(1)
    click.echo(f"SAME: {report.compared} frame(s) compared on {report.connections} connection(s), in {report.elapsed:.2f}s")


# ---------------------------------------------------------------------------- record

@click.command(name="record")
@click.option("--listen", "listen", required=True, metavar="HOST:PORT",
              help="Loopback address to accept clients on (127.0.0.1:PORT, [::1]:PORT; port 0: any free one).")
@click.option("--upstream", required=True, metavar="URL",
              help="The broker: amqp[s]://host:port/ (credentials come from the client).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Directory for the transcript files.")
@click.option("--max-connections", type=click.IntRange(min=1),
              help="Stop after this many client connections ended (in all).")
@click.option("--max-concurrent", type=click.IntRange(min=1, max=4096), default=32, show_default=True,
              help="Client connections relayed at once; one more is closed at once, unrecorded, with a line saying so.")
@click.option("--duration", type=Seconds(0.1, 30 * DAY), help="Stop after this many seconds.")
@click.option("--flush-interval", type=Seconds(0.1), default=2.0, show_default=True,
              help="Seconds at most between writes of what open connections recorded (to NAME.json.partial).")
@click.option("--max-entries", type=click.IntRange(min=10), default=100_000, show_default=True,
              help="Entries recorded per connection; further frames are relayed and counted, not recorded.")
@click.option("--max-bytes", type=click.IntRange(min=1024), default=64 << 20, show_default=True,
              help="Octets recorded per connection; past them every frame is still relayed whole but recorded as "
                   "its first 64 octets with a note. Recorded octets go to disk as they pass, not to memory.")
@click.option("--cafile", type=click.Path(exists=True, dir_okay=False), help="CA certificate(s) for an amqps:// upstream.")
@click.option("--insecure", is_flag=True, help="Do not verify the upstream's TLS certificate.")
@guarded
def record(listen: str, upstream: str, out_dir: str, max_connections: int | None, max_concurrent: int,
           duration: float | None, flush_interval: float, max_entries: int, max_bytes: int, cafile: str | None,
           insecure: bool) -> None:
    """Record the sessions of real clients: a loopback proxy writing one transcript per connection.

    Point the client at --listen instead of the broker; its octets pass unchanged to
    --upstream. Each connection's transcript (credentials masked) goes to --out, ready for
    `amqpspec replay`, `amqpspec capture export` or as fuzz seeds. Ctrl-C stops.
    """
    from amqpspec.capture.proxy import ProxyOptions, parse_listen, run_proxy

    host, port = parse_listen(listen)
    target = _target(upstream, cafile, insecure)
    check_output_dir(out_dir, "--out")
    opts = ProxyOptions(host, port, target, Path(out_dir), flush_interval=flush_interval, max_entries=max_entries,
                        max_bytes=max_bytes, max_connections=max_connections, max_concurrent=max_concurrent,
                        duration=duration)

    def line(text: str) -> None:
        _echo(text)
        sys.stdout.flush()

    run_proxy(opts, line)


# ---------------------------------------------------------------------------- capture

@click.group(name="capture")
def capture() -> None:
    """Transcripts and pcaps: export to pcap for Wireshark, import a pcap, show a transcript."""


@capture.command(name="export")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--case", "case_id", metavar="ID", help="The case to export from a result file (JSON lines).")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="The pcap file to write.")
@guarded
def export(file: str, case_id: str | None, out: str) -> None:
    """Write the transcript in FILE (record's, a result's, a finding's) as a pcap for Wireshark/tshark."""
    from amqpspec.capture import transcripts
    from amqpspec.capture.pcap import write_pcap

    check_output_file(out, "--out")
    tf = transcripts.load(file, case_id)
    n = write_pcap(tf, out)
    click.echo(f"wrote {out}: {n} packets, {len(tf.connections())} TCP stream(s) "
               "10.0.0.1 -> 10.0.0.2:5672 (synthetic addresses)")


@capture.command(name="import")
@click.argument("pcap", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="The transcript file to write.")
@guarded
def import_(pcap: str, out: str) -> None:
    """Turn the AMQP conversations of a pcap/pcapng into a transcript file (credentials masked)."""
    from amqpspec.capture import transcripts
    from amqpspec.capture.pcap import read_pcap

    check_output_file(out, "--out")
    tf = read_pcap(pcap)
    transcripts.save(out, tf)
    for note in tf.extra.get("notes", []):
        _echo(f"note: {note}")
    _echo(f"wrote {out}: {tf.protocol}, {len(tf.connections())} connection(s), {len(tf.entries)} entries")


@capture.command(name="show")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--case", "case_id", metavar="ID", help="The case to show from a result file (JSON lines).")
@guarded
def show(file: str, case_id: str | None) -> None:
    """Print the transcript in FILE (any accepted kind, pcaps included), one decoded line per entry."""
    from amqpspec.capture import transcripts

    tf = transcripts.load(file, case_id)
    _echo(f"{file}: {tf.source or 'transcript'}, protocol {tf.protocol}, upstream {tf.upstream or '?'}, "
          f"started {tf.started or '?'}")
    for line in transcripts.format_lines(tf.entries):
        _echo(line)
    why = tf.incomplete()
    if why:
        _echo(f"note: incomplete transcript: {why}")


@click.group(name="amqpspec-capture", context_settings={"help_option_names": ["-h", "--help"]})
def standalone() -> None:
    """The capture commands on their own (``python -m amqpspec.capture.cli``), before or without ``amqpspec``."""


for _command in (replay, record, capture):
    standalone.add_command(_command)


if __name__ == "__main__":  # pragma: no cover
    standalone()
