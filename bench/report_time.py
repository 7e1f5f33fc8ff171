"""Wall time of ``amqpspec report`` on given result files, per stage, best of N.

    python -m bench.report_time /tmp/report-bench/r1.jsonl --repeat 3
    python -m bench.report_time r1.jsonl r2.jsonl r3.jsonl r4.jsonl --repeat 3 -- --no-html

Each repeat is a fresh ``amqpspec report`` process (JVM start included, as a user sees it)
writing into a fresh folder. Every line the command prints is stamped with the time it arrived,
so the timeline of any version of the command can be read, and the per-stage times come from
the command's own progress lines (``stage: NAME: 1.23s``, printed when stderr is not a
terminal). On a shared machine single numbers move a lot: the minimum of the repeats is the
number to compare, per stage and for the whole.

Arguments after ``--`` are passed to ``amqpspec report`` (e.g. ``--no-html``, ``--conf K=V``).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

# the console script's entry point, run with this interpreter (no shim or PATH lookup); with
# --reports-dir, the amqpspec.reports package is taken from that folder (an older version)
_ENTRY = """import os, sys
if os.environ.get("AMQPSPEC_BENCH_REPORTS_DIR"):
    import amqpspec.reports
    amqpspec.reports.__path__[:] = [os.environ["AMQPSPEC_BENCH_REPORTS_DIR"]]
from amqpspec.cli import main
sys.argv[0] = "amqpspec"
main()
"""
CPU_SAMPLE_S = 0.25
STAGE_LINE = re.compile(r"^stage: (?P<name>.+): (?P<seconds>[0-9.]+)s$")


@dataclass
class Run:
    """One ``amqpspec report`` process: its wall time, stage times and stamped output."""

    wall: float
    returncode: int
    cpu: float = 0.0     # user + system seconds of the process tree (the Python driver and the JVM), sampled
    stages: dict[str, float] = field(default_factory=dict)
    lines: list[tuple[float, str, str]] = field(default_factory=list)   # (seconds since start, stream, text)


def _sample_cpu(root: int, seen: dict[int, float]) -> None:
    """Adds the CPU seconds so far of ``root`` and its descendants (Linux /proc) to ``seen``.

    The JVM is a grandchild that nobody waits for, so getrusage cannot count it: it is sampled
    while it runs (the last CPU_SAMPLE_S of a process are missed)."""
    tick = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    times: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        parents[int(entry)] = int(fields[1])
        times[int(entry)] = (int(fields[11]) + int(fields[12])) / tick
    for pid, t in times.items():
        p = pid
        while p in parents and p != root:
            p = parents[p]
        if p == root:
            seen[pid] = max(seen.get(pid, 0.0), t)


def _pump(stream: IO[str], name: str, start: float, out: list[tuple[float, str, str]], lock: threading.Lock) -> None:
    for line in stream:
        with lock:
            out.append((time.monotonic() - start, name, line.rstrip("\n")))


def run_once(results: list[str], extra: list[str], work: Path, reports_dir: str | None = None,
             default_warm: bool = False) -> Run:
    """``default_warm``: no --keep-warm option and none of its variables (the default outside CI);
    otherwise, unless ``extra`` says, the report runs in this process as CI runs it."""
    out_dir = work / "out"
    shutil.rmtree(out_dir, ignore_errors=True)
    # a warm Spark is bench.report_warm's subject
    chosen = default_warm or any(a in ("--keep-warm", "--no-keep-warm") for a in extra)
    warm = [] if chosen else ["--no-keep-warm"]
    cmd = [sys.executable, "-c", _ENTRY, "report", *results, "--out", str(out_dir), *warm, *extra]
    lines: list[tuple[float, str, str]] = []
    lock = threading.Lock()
    start = time.monotonic()
    env = dict(os.environ)
    if default_warm:
        from amqpspec.reports.warm.client import CI_VARIABLES

        for name in ("AMQPSPEC_KEEP_WARM", *CI_VARIABLES):
            env.pop(name, None)
    if reports_dir:
        env["AMQPSPEC_BENCH_REPORTS_DIR"] = str(Path(reports_dir).resolve())
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
                            errors="replace", stdin=subprocess.DEVNULL, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    pumps = [threading.Thread(target=_pump, args=(s, n, start, lines, lock), daemon=True)
             for s, n in ((proc.stdout, "out"), (proc.stderr, "err"))]
    for p in pumps:
        p.start()
    cpu: dict[int, float] = {}
    while proc.poll() is None:
        _sample_cpu(proc.pid, cpu)
        time.sleep(CPU_SAMPLE_S)
    returncode = proc.returncode
    wall = time.monotonic() - start
    for p in pumps:
        p.join()
    run = Run(wall, returncode, sum(cpu.values()), lines=sorted(lines))
    for _, _, text in run.lines:
        m = STAGE_LINE.match(text.strip())
        if m:
            run.stages[m["name"]] = run.stages.get(m["name"], 0.0) + float(m["seconds"])
    return run


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(prog="python -m bench.report_time", description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", help="result files (JSON lines) or folders, as for amqpspec report")
    ap.add_argument("--repeat", type=int, default=3, help="fresh processes to run (default 3)")
    ap.add_argument("--timeline", action="store_true", help="print the stamped output of the fastest run")
    ap.add_argument("--reports-dir", metavar="DIR",
                    help="run the amqpspec.reports package from DIR instead, e.g. an older version: "
                         "git archive OLD reports | tar -x -C /tmp/old, then --reports-dir /tmp/old/reports")
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="amqpspec-report-time-"))
    runs: list[Run] = []
    try:
        for i in range(args.repeat):
            run = run_once(args.results, extra, work, args.reports_dir)
            runs.append(run)
            detail = ", ".join(f"{k} {v:.2f}s" for k, v in run.stages.items())
            print(f"run {i + 1}: {run.wall:.2f}s wall, {run.cpu:.2f}s cpu (exit {run.returncode})" + (f"  [{detail}]" if detail else ""),
                  flush=True)
            if run.returncode != 0:
                for _, stream, text in run.lines[-15:]:
                    print(f"    {stream}: {text}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    best = min(runs, key=lambda r: r.wall)
    names: list[str] = []
    for run in runs:
        names += [n for n in run.stages if n not in names]
    print(f"\nwall: min {best.wall:.2f}s  max {max(r.wall for r in runs):.2f}s  over {len(runs)} runs;"
          f"  cpu: min {min(r.cpu for r in runs):.2f}s")
    if names:
        width = max(len(n) for n in names)
        print(f"{'stage':<{width}}  {'min':>7}  {'max':>7}")
        for n in names:
            values = [r.stages[n] for r in runs if n in r.stages]
            print(f"{n:<{width}}  {min(values):>6.2f}s  {max(values):>6.2f}s")
    if args.timeline or not names:
        print("\ntimeline of the fastest run (seconds since start):")
        for t, stream, text in best.lines:
            print(f"  {t:7.2f} {stream}: {text[:150]}")
    return 0 if all(r.returncode == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
