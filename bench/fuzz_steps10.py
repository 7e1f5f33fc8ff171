"""Where an AMQP 1.0 campaign's time goes: wall time of each step of the worker, one target.

    python -m bench.fuzz_steps10 URL TARGET [--seconds 15] [--slots N] [--restart-command CMD]
        [--broker-pid PID] [--no-steps] [--runs 2] [--findings DIR] [--py-spy FILE]

Runs two campaigns of TARGET (``--runs``; jobs 1, every oracle on, each on the findings of
the ones before, so that the later ones are warm) and prints, per campaign, the time spent in: drawing
(``draw.Drawer.draw``, pool fills included and nested inside the outer draw), reaching a start
state on a new connection (``exec10.reach``), sending, watching the reaction, the reset of a
reused connection, the liveness probes, shrinking, and the fresh-connection re-runs
(``Worker._fresh``, shrinking steps included). Times are summed over the slots: with many slots
in flight they add up to more than the wall time, and on a busy machine each grows with the
contention. The steps are wrapped by replacing the functions for the length of the run.

Each campaign also prints the CPU it took: this process's (user + system, all threads: with
jobs 1 the worker is a thread of this process, so 100 % means one core, the GIL's limit) and,
with ``--broker-pid``, the broker's over the same span (from /proc), and the whole machine's (all cores: another
load leaves the worker less than a core however little it waits). ``--no-steps`` leaves the
functions unwrapped (the wrapping costs some CPU of its own). ``--py-spy FILE`` samples the last
campaign with ``py-spy record --gil`` (the thread holding the GIL: what takes the CPU).
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import os
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable


def _wrap(obj: Any, name: str, label: str, acc: dict[str, float], cnt: collections.Counter, lock: Any) -> None:
    f: Callable[..., Any] = getattr(obj, name)

    def timed(*a: Any, **k: Any) -> Any:
        t0 = time.monotonic()
        try:
            return f(*a, **k)
        finally:
            with lock:
                acc[label] += time.monotonic() - t0
                cnt[label] += 1
    setattr(obj, name, timed)


def _cpu_of(pid: int | None) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used, from /proc; None when unreadable."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _machine_busy() -> tuple[float, float] | None:
    """(busy, total) CPU seconds of the whole machine, all cores, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(ticks) - ticks[3] - ticks[4]) / hz, sum(ticks) / hz


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fuzz_steps10", description=__doc__.split("\n")[0])
    ap.add_argument("url")
    ap.add_argument("target")
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--slots", type=int, default=0, help="examples in flight (0: the campaign's default)")
    ap.add_argument("--restart-command", default=None)
    ap.add_argument("--broker-pid", type=int, default=None, help="report this process's CPU too (the broker's)")
    ap.add_argument("--runs", type=int, default=2, help="campaigns, one after another on the same findings")
    ap.add_argument("--findings", default=None, help="the findings directory (kept; default: a temporary one)")
    ap.add_argument("--py-spy", default=None, metavar="FILE",
                    help="sample the last campaign with py-spy --gil (only the thread holding the GIL: where the "
                         "CPU goes), raw collapsed stacks to FILE")
    ap.add_argument("--no-steps", action="store_true", help="do not time the steps (CPU and rate only)")
    args = ap.parse_args(argv)

    from amqpspec import brokerops
    from amqpspec.brokerops import probe
    from amqpspec.fuzz import campaign as C
    from amqpspec.fuzz import draw, exec10
    from amqpspec.target import Target

    acc: dict[str, float] = collections.defaultdict(float)
    cnt: collections.Counter = collections.Counter()
    lock = threading.Lock()
    for obj, name, label in () if args.no_steps else ((draw.Drawer, "draw", "draw"), (C.Worker, "_fresh", "fresh re-run (incl. its run)"),
                             (C.Worker, "shrink", "shrink"), (brokerops, "problem", "liveness probe"),
                             (exec10, "reach", "reach (new connection)"), (exec10, "reset", "reset"),
                             (exec10, "_unlink", "reset: the example's links detached"),
                             (exec10, "establish", "session and home links made (reach, reset)"),
                             (exec10, "watch", "watch"), (exec10, "send", "send"), (exec10, "run", "exec10.run total")):
        _wrap(obj, name, label, acc, cnt, lock)
    target = Target.parse(args.url)
    with contextlib.nullcontext(args.findings) if args.findings else \
            tempfile.TemporaryDirectory(prefix="amqpspec-bench-findings-") as findings:
        for rep in range(args.runs):
            acc.clear()
            cnt.clear()
            cfg = C.Config(url=args.url, protocol="1.0", targets=[args.target], broker=probe(target, "1.0"),
                           seed=rep + 1, jobs=1, duration=args.seconds, shrink_time=5.0,
                           restart_command=args.restart_command)
            if args.slots:
                cfg.slots = args.slots
            spy = None
            if args.py_spy and rep == args.runs - 1:
                spy = subprocess.Popen(["py-spy", "record", "--gil", "-r", "200", "-f", "raw", "-o", args.py_spy,
                                        "--pid", str(os.getpid()), "--duration", str(int(args.seconds))],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(1.0)   # py-spy attaches
            t0, cpu0, broker0, machine0 = time.monotonic(), os.times(), _cpu_of(args.broker_pid), _machine_busy()
            stats = C.Campaign(cfg, findings).run()
            elapsed = time.monotonic() - t0
            if spy is not None:
                spy.wait()
            cpu1, broker1, machine1 = os.times(), _cpu_of(args.broker_pid), _machine_busy()
            ours = (cpu1.user - cpu0.user + cpu1.system - cpu0.system) / elapsed
            theirs = "" if broker0 is None or broker1 is None else f", broker {100 * (broker1 - broker0) / elapsed:.0f} %"
            if machine0 is not None and machine1 is not None:
                theirs += f"; the machine {100 * (machine1[0] - machine0[0]) / elapsed:.0f} % " \
                          f"(of {100 * (os.cpu_count() or 1)} %)"
            print(f"{'cold' if rep == 0 else 'warm'} {rep}: {stats.execs} executions in {elapsed:.1f} s = "
                  f"{stats.execs / elapsed:.1f}/s; findings {len(stats.findings)}, new {len(stats.new)}, "
                  f"restarts {stats.restarts}; CPU (100 % = one core): this process {100 * ours:.0f} %{theirs}")
            for label, total in sorted(acc.items(), key=lambda kv: -kv[1]):
                n = max(cnt[label], 1)
                print(f"   {label:30} {total:8.2f} s  n={cnt[label]:6d}  {1000 * total / n:8.2f} ms each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
