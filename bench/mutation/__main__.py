"""``python -m bench.mutation URL --protocol P [--case GLOB] [--mutations N] [--jobs N] [--merge LIST]
[--restart-command CMD] --out FILE``."""
from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from amqpspec import case as case_mod

from bench.mutation import merge, report
from bench.mutation.run import FLIPPED, FLIPPED_TO_ERROR, NOT_FLIPPED, Outcome, run_all

DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.mutation",
                                 description="Runs the catalog under seeded mutations of the broker's frames and "
                                             "lists the cases no mutation made fail.")
    ap.add_argument("url", nargs="?", default=DEFAULT_URL, help=f"a correct broker (default {DEFAULT_URL})")
    ap.add_argument("--protocol", choices=("0-9-1", "1.0"), default="0-9-1")
    ap.add_argument("--case", action="append", default=[], help="case id glob (repeatable; default: every case)")
    ap.add_argument("--exclude", action="append", default=[], help="case id glob to leave out (repeatable)")
    ap.add_argument("--mutations", type=int, default=16, help="at most this many mutations per case (default 16)")
    ap.add_argument("--jobs", type=int, default=4, help="cases judged at once, one proxy each (default 4)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, required=True, help="the generated list (TOML)")
    ap.add_argument("--merge", type=Path, metavar="LIST",
                    help="an earlier list (another broker's pass): run only the cases it does not show able to fail, "
                         "and write both passes as one list (a case counts when either broker shows it)")
    ap.add_argument("--broker-name", metavar="NAME",
                    help="how the list names the broker (default: the product and version it announces; some, "
                         "like the Proton example broker, announce none)")
    ap.add_argument("--restart-command", metavar="CMD",
                    help="shell command that restarts the broker when it stops serving; the spoiled run is done again")
    args = ap.parse_args(argv)
    catalog = case_mod.discover(args.protocol)
    cases = case_mod.select(catalog, args.case, args.exclude)
    earlier = merge.read(args.merge) if args.merge else None
    if earlier is not None:
        if earlier.protocol != args.protocol:
            print(f"--merge {args.merge} is a {earlier.protocol} list, not {args.protocol}", file=sys.stderr)
            return 2
        shown_before = earlier.shown()
        cases = [c for c in cases if c.id not in shown_before]
        # a case since removed from the catalog leaves the list
        known = {c.id for c in catalog}
        earlier.outcomes = {cid: o for cid, o in earlier.outcomes.items() if cid in known}
    if not cases and earlier is None:
        print("no case matches", file=sys.stderr)
        return 2
    shown = ["python", "-m", "bench.mutation", _safe_url(args.url), "--protocol", args.protocol]
    for g in args.case:
        shown += ["--case", g]
    for g in args.exclude:
        shown += ["--exclude", g]
    shown += ["--mutations", str(args.mutations), "--jobs", str(args.jobs), "--seed", str(args.seed)]
    if args.broker_name:
        shown += ["--broker-name", args.broker_name]
    if args.restart_command:
        shown += ["--restart-command", args.restart_command]
    if args.merge:
        shown += ["--merge", str(args.merge)]
    shown += ["--out", str(args.out)]
    done = [0]
    t0 = time.monotonic()

    def progress(o: Outcome) -> None:
        done[0] += 1
        how = ""
        if o.status in (FLIPPED, FLIPPED_TO_ERROR) and o.by is not None:
            how = f" by {o.by.mutation.describe()} -> {o.by.verdict}"
        elif o.status == NOT_FLIPPED:
            how = f" ({o.why}, {len(o.tried)} tried)"
        print(f"[{done[0]}/{len(cases)} {time.monotonic() - t0:6.0f}s] {o.case}: {o.baseline} -> {o.status}{how} "
              f"({o.seconds:.1f}s)", flush=True)

    outcomes = run_all(args.url, args.protocol, cases, jobs=args.jobs, budget=args.mutations, seed=args.seed,
                       on_outcome=progress, restart=args.restart_command) if cases else []
    wall = time.monotonic() - t0
    broker = args.broker_name or _broker_name(args.url, args.protocol)
    restarts = sum(o.restarts for o in outcomes)
    if restarts:
        print(f"{restarts} runs done again after the broker stopped serving and was restarted", flush=True)
    merged_from = ""
    if earlier is not None:
        print(f"{len(cases)} cases run against {broker}; {len(earlier.shown())} already shown by {args.merge}",
              flush=True)
        merged_from = f"{args.merge} ({earlier.brokers}, {earlier.wall_seconds:.0f} s)"
        outcomes = merge.combine(earlier, outcomes, broker, [c.id for c in catalog])
    report.write(args.out, outcomes, command=shlex.join(shown), protocol=args.protocol, broker=broker,
                 seed=args.seed, budget=args.mutations, wall_s=wall, merged_from=merged_from)
    s = report.summary(outcomes)
    print(f"{s['cases']} cases in {wall:.0f}s: {s['shown_able_to_fail']} shown able to fail ({s['shown_percent']}%): "
          f"{s['flipped']} flipped, {s['fails_unmutated']} failed unmutated; {s['flipped_to_error_only']} flipped to "
          f"error only, {s['not_flipped']} not flipped {s['not_flipped_by_reason']}, {s['skipped_unmutated']} skipped, "
          f"{s['error_unmutated']} error unmutated -> {args.out}")
    return 0


def _safe_url(url: str) -> str:
    from amqpspec.target import Target

    return Target.parse(url).url()


def _broker_name(url: str, protocol: str) -> str:
    from amqpspec import brokerops
    from amqpspec.target import Target

    info = brokerops.probe(Target.parse(url), protocol)
    ident = info.identity()
    return " ".join(v for v in (ident.get("product", ""), ident.get("version", "")) if v) or "unknown"


if __name__ == "__main__":
    sys.exit(main())
