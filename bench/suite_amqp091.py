"""Wall time of the whole AMQP 0-9-1 case set against a broker, with --jobs 1 and --jobs 4.

Run by hand (not a test):  python -m bench.suite_amqp091 [URL] [--repeat N]
Default URL: the local RabbitMQ (amqpspec brokers up rabbitmq). Target: under 30 s for the
set on a 2-core machine. Prints per run: wall time, cases, verdict counts, and the slowest
cases, so a regression in suite speed can be traced to the case that caused it.
"""
from __future__ import annotations

import argparse
import collections
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(url: str, jobs: int) -> tuple[float, list[dict]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.jsonl"
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "amqpspec.cli", "run", url, "--protocol", "0-9-1", "--jobs", str(jobs),
                        "--seed", "1", "--json", str(out), "--no-keep-warm"], stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wall = time.monotonic() - t0
        return wall, [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("url", nargs="?", default="amqp://guest:guest@127.0.0.1:5672/")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, nargs="*", default=[1, 4])
    args = ap.parse_args()
    for jobs in args.jobs:
        walls = []
        records: list[dict] = []
        for _ in range(args.repeat):
            wall, records = run_once(args.url, jobs)
            walls.append(wall)
        counts = collections.Counter(r["verdict"] for r in records)
        slow = sorted(records, key=lambda r: -r["duration_s"])[:5]
        print(f"--jobs {jobs}: {len(records)} cases, wall median {statistics.median(walls):.1f}s "
              f"(min {min(walls):.1f}, max {max(walls):.1f}) over {len(walls)} runs; {dict(counts)}")
        for r in slow:
            print(f"    {r['duration_s']:6.2f}s  {r['case']}")


if __name__ == "__main__":
    main()
