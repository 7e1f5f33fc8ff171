"""Do verdicts hold across runs and across --jobs? Wall time of each run, and every case whose
verdict changed, with the reasons side by side.

Run by hand (not a test):

    python -m bench.verdict_stability URL --protocol 0-9-1 --jobs 1 --jobs 8 --runs 3
    python -m bench.verdict_stability URL --protocol 1.0 --runs 5        # default --jobs only
    python -m bench.verdict_stability amqp://guest:guest@127.0.0.1:5673/ --runs 5 \
        --restart-command 'python3 -m amqpspec.brokers down garagemq; python3 -m amqpspec.brokers up garagemq'

Each run is ``amqpspec run URL --protocol P [--jobs N] --seed S --json FILE`` in a subprocess
(the same command a user types; without --jobs the command's own default is measured). A case is
stable when every run gave it the same verdict. Exit code 1 when some case changed, so the
script can gate a change of the default --jobs.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(url: str, protocol: str, jobs: int | None, seed: int, out: Path, restart: str | None) -> float:
    cmd = [sys.executable, "-m", "amqpspec.cli", "run", url, "--protocol", protocol, "--seed", str(seed),
           "--json", str(out), "--no-keep-warm"]   # no warm Spark starting beside the next run
    if jobs is not None:
        cmd += ["--jobs", str(jobs)]
    if restart:
        # Passed through as the user would: a broker that crashes on a case is restarted and the run goes
        # on, and the restart cases (exclusive) run instead of being skipped.
        cmd += ["--restart-command", restart]
    t0 = time.monotonic()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    wall = time.monotonic() - t0
    if done.returncode not in (0, 1):
        sys.exit(f"run failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return wall


def read(path: Path) -> dict[str, dict]:
    records = (json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip())
    return {r["case"]: r for r in records}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("url", nargs="?", default="amqp://guest:guest@127.0.0.1:5672/")
    ap.add_argument("--protocol", choices=("0-9-1", "1.0"), default="0-9-1")
    ap.add_argument("--jobs", type=int, action="append", help="a --jobs value to run (repeatable; default: "
                                                               "the command's own default)")
    ap.add_argument("--runs", type=int, default=3, help="runs per --jobs value")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--restart-command", metavar="CMD", help="passed to each run (a broker that stops serving "
                                                               "is restarted; the restart cases run)")
    ap.add_argument("--keep", metavar="DIR", type=Path, help="keep each run's JSON-lines file in DIR")
    args = ap.parse_args()
    jobs_values: list[int | None] = list(args.jobs) if args.jobs else [None]
    runs: list[tuple[str, dict[str, dict]]] = []
    with tempfile.TemporaryDirectory() as scratch:
        tmp = args.keep or Path(scratch)
        tmp.mkdir(parents=True, exist_ok=True)
        for jobs in jobs_values:
            label = "default" if jobs is None else str(jobs)
            walls = []
            for i in range(args.runs):
                out = Path(tmp) / f"j{label}-{i}.jsonl"
                walls.append(run_once(args.url, args.protocol, jobs, args.seed, out, args.restart_command))
                records = read(out)
                runs.append((f"jobs {label} run {i + 1}", records))
                counts = collections.Counter(r["verdict"] for r in records.values())
                print(f"--jobs {label} run {i + 1}: {walls[-1]:.1f}s wall, {len(records)} cases, {dict(sorted(counts.items()))}",
                      flush=True)
            print(f"--jobs {label}: min {min(walls):.1f}s, max {max(walls):.1f}s over {len(walls)} runs")
    cases = sorted(set().union(*(records for _, records in runs)))
    changed = 0
    for case in cases:
        seen = [(name, records.get(case)) for name, records in runs]
        verdicts = {r["verdict"] if r else "missing" for _, r in seen}
        if len(verdicts) == 1:
            continue
        changed += 1
        print(f"CHANGED {case}:")
        for name, r in seen:
            print(f"    {name:<18} {r['verdict'] if r else 'missing':<13} {(r or {}).get('reason', '')[:160]}")
    print(f"{len(cases)} cases over {len(runs)} runs: {changed} changed verdict")
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
