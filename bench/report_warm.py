"""Wall time of ``amqpspec report`` with and without the warm Spark, alternating, per repeat.

    python -m bench.report_warm /tmp/report-bench/r1.jsonl --repeat 3

Each repeat, in this order, every report a fresh ``amqpspec report`` process (bench.report_time):
1. ``--no-keep-warm``: Spark in the report's own process (CI's default);
2. ``--keep-warm`` with no service running: the report starts one and runs in it (a first
   report at a terminal, with no run before it);
3. the service ``amqpspec run --json`` starts at its end (``client.prewarm``: Spark started and
   a report of the bundled sample run), waited for; then ``--keep-warm``: the first-hour flow,
   a run and then its report;
4. ``--keep-warm`` again in the same service: every later report;
5. a pre-warm started and the report asked for at once, with no option (a script's ``amqpspec
   run ... && amqpspec report ...``): the report runs in its own process beside the warm-up,
   which must not slow it (the service lowers its scheduling group).
The service is stopped between repeats. On a shared machine compare minimum and median.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report_time import run_once

ROWS = ("in-process (--no-keep-warm)", "--keep-warm, none running", "after a run's pre-warm (waited)",
        "--keep-warm, warm", "at once after a run's pre-warm")


def _spark(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "amqpspec.cli", "spark", *args], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL).stdout.strip()


def _start_prewarm() -> None:
    subprocess.run([sys.executable, "-c", "from amqpspec.reports.warm import client; client.prewarm()"],
                   check=True, timeout=60, stdin=subprocess.DEVNULL)


def _prewarm() -> float:
    """Seconds from the pre-warm's start until the service answers."""
    t0 = time.monotonic()
    _start_prewarm()
    while not _spark("status").startswith("warm Spark: pid"):
        if time.monotonic() - t0 > 300:
            raise SystemExit("the pre-warmed service did not answer in 300 s")
        time.sleep(0.2)
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report_warm", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="result files (JSON lines) or folders, as for amqpspec report")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="amqpspec-report-warm-"))
    times: dict[str, list[float]] = {row: [] for row in ROWS}
    warmups: list[float] = []
    for i in range(args.repeat):
        _spark("stop")
        for row, extra in ((ROWS[0], ["--no-keep-warm"]), (ROWS[1], ["--keep-warm"])):
            run = run_once(args.results, extra, work)
            times[row].append(run.wall)
            print(f"repeat {i + 1}: {row}: {run.wall:.2f}s (exit {run.returncode})", flush=True)
        _spark("stop")
        warmups.append(_prewarm())
        print(f"repeat {i + 1}: pre-warm ready after {warmups[-1]:.1f}s", flush=True)
        for row in ROWS[2:4]:
            run = run_once(args.results, ["--keep-warm"], work)
            times[row].append(run.wall)
            print(f"repeat {i + 1}: {row}: {run.wall:.2f}s (exit {run.returncode})", flush=True)
        _spark("stop")
        _start_prewarm()   # a run has just ended; its report follows at once, with no option
        run = run_once(args.results, [], work, default_warm=True)
        times[ROWS[4]].append(run.wall)
        print(f"repeat {i + 1}: {ROWS[4]}: {run.wall:.2f}s (exit {run.returncode})", flush=True)
        _spark("stop")
    print()
    for row in ROWS:
        print(f"{row:<34} min {min(times[row]):6.2f}s  median {statistics.median(times[row]):6.2f}s")
    print(f"{'pre-warm until ready':<34} min {min(warmups):6.2f}s  median {statistics.median(warmups):6.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
