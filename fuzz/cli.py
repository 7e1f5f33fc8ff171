"""``amqpspec fuzz``: the command that runs a campaign.

Attach it to the ``amqpspec`` group with ``main.add_command(amqpspec.fuzz.cli.fuzz)``.
Exit codes: 0 no finding, 1 findings (new or found again), 2 usage or connection errors.
"""
from __future__ import annotations

import random
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import click

from amqpspec.cliutil import DAY, Seconds, broker_password, guarded, password_option
from amqpspec.errors import UsageError
from amqpspec.sanitize import safe_line

DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")
UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
DEFAULT_DURATION = "10m"
MAX_DURATION = 30 * DAY  # a month of fuzzing: longer is a typo (or 1e300), not a plan


def parse_duration(text: str) -> float:
    """'30s', '10m', '1h', '90' (seconds) -> seconds."""
    m = DURATION_RE.match(text or "")
    if not m:
        raise UsageError(f"bad duration {text!r}: use a number with s, m or h (30s, 10m, 1h)")
    seconds = float(m.group(1)) * UNITS[m.group(2)]
    if seconds <= 0:
        raise UsageError(f"bad duration {text!r}: it must be more than zero")
    if seconds > MAX_DURATION:
        raise UsageError(f"bad duration {text!r}: at most {MAX_DURATION / DAY:g} days")
    return seconds


class _Duration(click.ParamType):
    name = "DURATION"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, (int, float)):
            return Seconds(0.0, MAX_DURATION, low_open=True).convert(value, param, ctx)
        try:
            return parse_duration(value)
        except UsageError as exc:
            self.fail(str(exc).split(": ", 1)[-1], param, ctx)


def _list_targets(protocol: str) -> None:
    from . import targets

    for t in targets.for_protocol(protocol):
        click.echo(f"{t.name:<18} from {t.start:<14} {t.description}")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("url", required=False)
@click.option("--as-server", is_flag=True, help="Play a hostile broker against a client library instead (no URL): "
              "needs --driver or --driver-cmd; see fuzz/server_campaign.py.")
@click.option("--driver", metavar="NAME", help="--as-server: the client's driver (a folder of drivers/).")
@click.option("--driver-cmd", metavar="CMD", help="--as-server: 'CMD {url} {workload}' of a driver of your own.")
@click.option("--rss-limit", type=click.IntRange(min=1), default=512, show_default=True, metavar="MB",
              help="--as-server: the driver's resident memory that counts as a finding.")
@click.option("--protocol", type=click.Choice(("0-9-1", "1.0", "auto")), default="auto", show_default=True,
              help="Protocol to fuzz; auto asks the broker.")
@click.option("--target", "target_names", multiple=True, metavar="NAME",
              help="Fuzz target (repeatable; default: every target of the protocol). --list-targets shows them.")
@click.option("--duration", type=_Duration(), help=f"How long to fuzz: 30s, 10m, 1h (default {DEFAULT_DURATION} "
                                                    "unless --examples is given).")
@click.option("--examples", type=click.IntRange(min=1), help="How many generated examples in all (across targets).")
@click.option("--seed", type=int, help="Seed of all generation (default: random, printed).")
@click.option("--jobs", type=click.IntRange(min=1, max=32), default=1, show_default=True,
              help="Worker processes, each with its own connections.")
@click.option("--slots", type=click.IntRange(min=1, max=256), default=None, metavar="N",
              help="Examples in flight per worker, each on its own connections (default 64): examples that must "
                   "wait for the broker do not hold up the others.")
@click.option("--findings", "findings_dir", type=click.Path(file_okay=False), default="findings", show_default=True,
              help="Directory of finding files (one JSON file per distinct finding).")
@click.option("--timeout", "window", type=Seconds(0.2, 60.0), default=2.0, show_default=True,
              help="Seconds a reaction may take before silence counts as a hang.")
@click.option("--shrink-time", type=Seconds(0.0), default=30.0, show_default=True,
              help="Seconds spent shrinking each new finding to a minimal input.")
@click.option("--restart-command", metavar="CMD",
              help="Shell command that restarts the broker when it stops serving; the campaign then goes on.")
@click.option("--memory-limit", type=click.IntRange(min=1), default=512, show_default=True, metavar="MB",
              help="Broker memory growth over its level at the start that counts as a finding.")
@click.option("--management-url", metavar="URL",
              help="Management HTTP API that reports the broker's memory (RabbitMQ: https://HOST:15671/); "
                   "without it, memory is the local broker process's RSS, or not measured. Never guessed, never "
                   "plain http:// for an amqps:// broker; redirects are not followed.")
@click.option("--management-user", metavar="USER", help="User of --management-url (not the AMQP URL's).")
@click.option("--management-password-file", type=click.Path(dir_okay=False), metavar="FILE",
              help="File whose first line is the --management-user password (else $AMQPSPEC_MANAGEMENT_PASSWORD).")
@click.option("--cafile", type=click.Path(exists=True, dir_okay=False), help="CA certificate(s) for an amqps:// broker.")
@click.option("--insecure", is_flag=True, help="Do not verify the broker's TLS certificate.")
@password_option
@click.option("--seeds", "seed_paths", multiple=True, metavar="PATH",
              help="Recorded sessions to mutate (files or directories of `amqpspec record` transcripts, findings, "
                   "pcaps; repeatable): enables the 'seeded' target of either protocol.")
@click.option("--list-targets", is_flag=True, help="List the fuzz targets of the protocol and exit.")
@guarded
def fuzz(url: str, protocol: str, target_names: tuple[str, ...], duration: float | None, examples: int | None,
         seed: int | None, jobs: int, slots: int | None, findings_dir: str, window: float, shrink_time: float,
         restart_command: str | None, memory_limit: int, management_url: str | None, management_user: str | None,
         management_password_file: str | None, cafile: str | None, insecure: bool, password_file: str | None,
         seed_paths: tuple[str, ...], list_targets: bool, as_server: bool = False, driver: str | None = None,
         driver_cmd: str | None = None, rss_limit: int = 512) -> None:
    """Fuzz the broker at URL (amqp[s]://user:pass@host:port/vhost) and keep every finding.

    Each finding is a minimal input with its two-way transcript, the clauses it violates and
    the command that replays it, in DIR/<signature-id>.json.
    """
    from amqpspec.brokerops import detect_protocol, probe
    from amqpspec.target import Target

    # text from the broker (reply-texts, property values) reaches notes and summaries decoded with
    # surrogateescape: printing it must not crash a campaign ("surrogates not allowed")
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")

    from .campaign import Campaign, Config, resolve_targets
    from .display import Progress
    from .targets import Env

    if as_server:
        from .server_cli import run_as_server

        if url:
            raise UsageError("--as-server takes no URL: amqpspec listens and launches the client (--driver NAME)")
        _check_findings_dir(findings_dir)
        run_as_server(protocol=protocol, driver=driver, driver_cmd=driver_cmd, seed=seed, examples=examples,
                      duration=duration, findings_dir=findings_dir, rss_limit_mb=rss_limit,
                      default_duration=parse_duration(DEFAULT_DURATION))
        return
    if not url:
        raise UsageError("fuzz needs the broker's URL (amqpspec fuzz amqp://HOST:PORT/), or --as-server --driver NAME")
    password = broker_password(password_file)
    target = Target.parse(url, cafile=cafile, insecure=insecure, password=password)
    if password is not None:  # the workers (other processes) parse the URL again: hand them this password
        url = target.url_with_password()
    if list_targets:
        _list_targets("0-9-1" if protocol == "auto" else protocol)
        return
    _check_findings_dir(findings_dir)  # before any connection: a typo costs no broker round trip
    from .management_api import from_options as management_api

    management = management_api(management_url, management_user, management_password_file, target.tls, cafile,
                                 insecure)
    if protocol == "auto":
        protocol = detect_protocol(target)
    resolve_targets(protocol, target_names)  # unknown names fail before connecting
    seeds = tuple(str(Path(p).resolve()) for p in seed_paths)
    if seeds:
        from .seeds import load

        corpus = load(list(seeds), protocol)
        click.echo(safe_line(f"seeds: {len(corpus.seeds)} recorded connection(s)"
                             + (f", {len(corpus.skipped)} skipped: {'; '.join(corpus.skipped[:3])}"
                                if corpus.skipped else "")))
    if duration is None and examples is None:
        duration = parse_duration(DEFAULT_DURATION)
    run_seed = seed if seed is not None else random.SystemRandom().randrange(1 << 31)
    broker = probe(target, protocol)
    target.broker = broker
    names = resolve_targets(protocol, target_names, Env(target, protocol, broker, seeds=seeds))
    cfg = Config(url=url, protocol=protocol, targets=names, broker=broker, seed=run_seed, jobs=jobs,
                 duration=duration, examples=examples, window=window, shrink_time=shrink_time,
                 restart_command=restart_command, memory_limit=memory_limit << 20, cafile=cafile, insecure=insecure,
                 seeds=seeds, management=management, **({"slots": slots} if slots else {}))
    progress = Progress()
    budget = " and ".join(x for x in (f"{examples} examples" if examples else "",
                                        f"{duration:g}s" if duration else "") if x)
    # product and version are the broker's words: each header line is made safe whole
    progress.start("\n".join(safe_line(line) for line in (
        f"amqpspec fuzz  target {target.url()}  broker {broker.product} {broker.version}  protocol {protocol}"
        f"  seed {run_seed}  jobs {jobs}  budget {budget}", f"targets: {', '.join(names)}", f"findings: {findings_dir}")))
    campaign = Campaign(cfg, findings_dir, on_event=progress)
    t0 = time.monotonic()
    try:
        stats = campaign.run()
    except KeyboardInterrupt:
        stats = campaign.stats
        progress.finish(stats, ["interrupted; findings so far are in " + findings_dir])
        sys.exit(130)
    summary = _summary(stats, cfg, time.monotonic() - t0, findings_dir, target.url(), names)
    progress.finish(stats, summary)
    if stats.dead and not stats.findings:
        sys.exit(2)
    sys.exit(1 if stats.findings else 0)


def _check_findings_dir(path: str) -> None:
    """The findings directory exists (or is made) and takes files; else a usage error."""
    from .findings import FindingStore

    try:
        store = FindingStore(path)
        probe = store.dir / ".amqpspec-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as exc:
        raise UsageError(f"findings directory {path}: {exc.strerror or exc}; choose another with --findings") from None


def _summary(stats: Any, cfg: Any, elapsed: float, findings_dir: str, url: str, names: list[str]) -> list[str]:
    out = []
    per = ", ".join(f"{n} {stats.by_target.get(n, 0)}" for n in names)
    out.append(f"executions per target: {per}")
    if stats.memory:
        out.append(stats.memory)
    if stats.restarts:
        out.append(f"broker restarted {stats.restarts} time(s)")
    if stats.dead:
        out.append("the broker stopped serving and no --restart-command was given: the campaign ended early")
    for sid, rec in sorted(stats.findings.items(), key=lambda kv: kv[1]["signature"]["target"]):
        sig = rec["signature"]
        mark = "new" if sid in stats.new else "again"
        what = sig["violation"] + (f" {sig['code']}" if sig["code"] is not None else "") + \
            (f" {sig['condition']}" if sig["condition"] else "")
        out.append(f"  {mark:5} {sid}  {sig['target']}: {what} in {sig['state']}  x{stats.hits.get(sid, 0)}  "
                   f"{', '.join(rec['clauses']) or 'robustness'}")
        out.append(f"        replay: {rec['replay']}")
    verdict = "no findings" if not stats.findings else f"{len(stats.findings)} finding(s), {len(stats.new)} new"
    out.append(f"{stats.execs} executions in {elapsed:.1f}s ({stats.execs / elapsed if elapsed else 0:.1f}/s): {verdict}"
               f"  (seed {cfg.seed}; same again: {_again(cfg, url, findings_dir, names)})")
    return out


def _again(cfg: Any, url: str, findings_dir: str, names: list[str]) -> str:
    from .campaign import SLOTS

    args = ["amqpspec", "fuzz", url, "--protocol", cfg.protocol, "--seed", str(cfg.seed), "--findings", findings_dir]
    for n in names:
        args += ["--target", n]
    if cfg.examples:
        args += ["--examples", str(cfg.examples)]
    if cfg.duration:
        args += ["--duration", f"{cfg.duration:g}s"]
    if cfg.jobs > 1:
        args += ["--jobs", str(cfg.jobs)]
    if cfg.slots != SLOTS:
        args += ["--slots", str(cfg.slots)]
    for path in cfg.seeds:
        args += ["--seeds", path]
    return shlex.join(args)


__all__ = ["fuzz", "parse_duration"]


if __name__ == "__main__":  # pragma: no cover - `python -m amqpspec.fuzz.cli` before the command is attached
    fuzz()
