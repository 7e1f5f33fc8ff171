"""Where an AMQP 1.0 campaign's time goes: wall time of each step of the worker, one target.

    python -m bench.fuzz_steps10 URL TARGET [--seconds 15] [--slots N] [--restart-command CMD]

Runs two campaigns of TARGET (jobs 1, every oracle on, the second on the findings of the
first, so that it is warm) and prints, per campaign, the time spent in: drawing
(``draw.Drawer.draw``, pool fills included and nested inside the outer draw), reaching a start
state on a new connection (``exec10.reach``), sending, watching the reaction, the reset of a
reused connection, the liveness probes, shrinking, and the fresh-connection re-runs
(``Worker._fresh``, shrinking steps included). Times are summed over the slots: with many slots
in flight they add up to more than the wall time, and on a busy machine each grows with the
contention. The steps are wrapped by replacing the functions for the length of the run.
"""
from __future__ import annotations

import argparse
import collections
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fuzz_steps10", description=__doc__.split("\n")[0])
    ap.add_argument("url")
    ap.add_argument("target")
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--slots", type=int, default=0, help="examples in flight (0: the campaign's default)")
    ap.add_argument("--restart-command", default=None)
    args = ap.parse_args(argv)

    from amqpspec import brokerops
    from amqpspec.brokerops import probe
    from amqpspec.fuzz import campaign as C
    from amqpspec.fuzz import draw, exec10
    from amqpspec.target import Target

    acc: dict[str, float] = collections.defaultdict(float)
    cnt: collections.Counter = collections.Counter()
    lock = threading.Lock()
    for obj, name, label in ((draw.Drawer, "draw", "draw"), (C.Worker, "_fresh", "fresh re-run (incl. its run)"),
                             (C.Worker, "shrink", "shrink"), (brokerops, "problem", "liveness probe"),
                             (exec10, "reach", "reach (new connection)"), (exec10, "reset", "reset"),
                             (exec10, "watch", "watch"), (exec10, "send", "send"), (exec10, "run", "exec10.run total")):
        _wrap(obj, name, label, acc, cnt, lock)
    target = Target.parse(args.url)
    with tempfile.TemporaryDirectory(prefix="amqpspec-bench-findings-") as findings:
        for rep in range(2):
            acc.clear()
            cnt.clear()
            cfg = C.Config(url=args.url, protocol="1.0", targets=[args.target], broker=probe(target, "1.0"),
                           seed=rep + 1, jobs=1, duration=args.seconds, shrink_time=5.0,
                           restart_command=args.restart_command)
            if args.slots:
                cfg.slots = args.slots
            t0 = time.monotonic()
            stats = C.Campaign(cfg, findings).run()
            elapsed = time.monotonic() - t0
            print(f"{'cold' if rep == 0 else 'warm'}: {stats.execs} executions in {elapsed:.1f} s = "
                  f"{stats.execs / elapsed:.1f}/s; findings {len(stats.findings)}, new {len(stats.new)}, "
                  f"restarts {stats.restarts}")
            for label, total in sorted(acc.items(), key=lambda kv: -kv[1]):
                n = max(cnt[label], 1)
                print(f"   {label:30} {total:8.2f} s  n={cnt[label]:6d}  {1000 * total / n:8.2f} ms each")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
