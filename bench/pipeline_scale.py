"""Scale benchmark of the report pipeline: synthetic result files, 1M and 5M records, end to end.

    python -m bench.pipeline_scale run --sizes 1000000 5000000 --work /tmp/pipeline-bench
    python -m bench.pipeline_scale generate --records 200000 --out /tmp/gen   # only the files

What is generated is what the pipeline would see from a real installation running the suite
nightly against many brokers for a long time: one JSON-lines file per run (every case of
the protocol, in this amqpspec's catalog, with its real ids, sections and clause lists),
brokers and versions of several products on both protocols, versions that fix and break
cases, a few flaky cases, documented deviations, retired case ids in the oldest runs, an
occasional run killed mid-line, and fuzz-finding directories. Records carry evidence and a
short transcript (a few frames with hex), about 1.5 KB a line: smaller than a real run's
records (which carry every frame), so the disk holds 5M of them; the pipeline never parses
transcripts anyway, it only has to read past them.

``run`` times, per size, a fresh ``amqpspec report`` driver process (``--no-html``) on
``local[*]``: Spark start, ingest + dataset, validation report, aggregates, JUnit, and the
bundle's size and load time (what the HTML report opens). Linearity: time per million
records at each size, and the ratio of the largest to the smallest.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from multiprocessing import Pool
from pathlib import Path
from typing import Any, Iterator

VERDICTS = ("passed", "failed", "warning", "informational", "skipped", "error")


@dataclass(frozen=True)
class Product:
    name: str
    versions: tuple[str, ...]
    protocols: tuple[str, ...]
    fail_rate: float        # share of cases failed/warning in the first version
    skip_rate: float
    platform: str


PRODUCTS = (
    Product("RabbitMQ", ("3.8.34", "3.9.29", "3.10.8", "3.11.28", "3.12.14", "3.13.7"), ("0-9-1", "1.0"),
            0.14, 0.01, "Erlang/OTP 25.2.3"),
    Product("garagemq", ("0.1", "0.2"), ("0-9-1",), 0.35, 0.13, "amd64"),
    Product("LavinMQ", ("1.2.7", "1.2.10", "1.3.0"), ("0-9-1",), 0.2, 0.05, "Crystal 1.13"),
    Product("Qpid Broker-J", ("9.1.0", "9.2.0"), ("0-9-1", "1.0"), 0.18, 0.08, "OpenJDK 17"),
    Product("ActiveMQ Artemis", ("2.31.2", "2.33.0", "2.36.0"), ("1.0",), 0.22, 0.1, "OpenJDK 17"),
    Product("unknown", ("unknown",), ("1.0",), 0.3, 0.25, ""),      # the Proton example broker names nothing
)
RETIRED = ("amqp091/4.2.3/legacy-frame-end", "amqp091/2.3.5/old-channel-max", "amqp10/2.4.1/old-open-order")


def _h(*parts: Any) -> float:
    """A stable pseudo-random number in [0, 1) from the parts (same input, same verdict)."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2 ** 64


def _catalog() -> dict[str, list[dict[str, Any]]]:
    from amqpspec.case import discover

    out = {}
    for protocol in ("0-9-1", "1.0"):
        out[protocol] = [{"id": c.id, "title": c.title, "section": c.section, "section_title": c.section_title,
                          "clauses": list(c.clauses)} for c in discover(protocol)]
    return out


def _base_verdict(product: Product, version_index: int, case_id: str) -> str:
    """Later versions fix some failures and break a few passes; skips depend on features."""
    x = _h(product.name, case_id)
    if x < product.skip_rate:
        return "skipped"
    fail = product.fail_rate * (0.85 ** version_index)
    y = _h(product.name, case_id, "fix", version_index)
    if x < product.skip_rate + fail:
        return "failed" if y < 0.6 else "warning"
    if _h(product.name, case_id, "break", version_index) < 0.01 * version_index:
        return "failed"                                       # a regression in a later version
    return "informational" if y < 0.01 else "passed"


def _fragments(case: dict[str, Any], protocol: str) -> dict[str, str]:
    """Pre-encoded JSON pieces of a case's record, so each line is a join, not a dumps()."""
    frames = [
        {"t": 0.0012, "dir": "event", "conn": 1, "summary": "connected to 127.0.0.1:5672", "hex": ""},
        {"t": 0.0013, "dir": "send", "conn": 1, "summary": "protocol-header AMQP 0-0-9-1" if protocol == "0-9-1"
         else "protocol-header AMQP 0-1-0-0", "hex": "414d515000000901" if protocol == "0-9-1" else "414d515000010000"},
        {"t": 0.0187, "dir": "recv", "conn": 1, "summary": "ch=0 connection.start(version-major=0, version-minor=9, ...)",
         "hex": "010000000001f0000a000a00090000" + "ab" * 96},
        {"t": 0.0201, "dir": "send", "conn": 1, "summary": "ch=1 frame under test", "hex": "0100010000000c" + "cd" * 40},
        {"t": 0.0230, "dir": "recv", "conn": 1, "summary": "ch=0 connection.close(reply-code=501, reply-text='FRAME_ERROR')",
         "hex": "0100000000002a000a0032" + "ef" * 30},
    ]
    head = json.dumps({"case": case["id"], "title": case["title"], "section": case["section"],
                       "section_title": case["section_title"], "clauses": case["clauses"], "protocol": protocol})[:-1]
    return {"head": head, "transcript": json.dumps(frames), "clauses": json.dumps(case["clauses"])}


def _record(frag: dict[str, str], case: dict[str, Any], verdict: str, run: dict[str, Any], at: datetime,
            duration: float, deviation: str | None) -> str:
    clauses = frag["clauses"]
    check = "passed" if verdict in ("skipped", "error") else verdict
    reason = "" if verdict == "passed" else f"the frame under test: expected connection.close 501; observed {verdict}"
    close = ('{"who": "broker", "how": "connection.close", "code": 501, "condition": null, "text": "FRAME_ERROR", '
             '"expected_codes": [501], "matched": ' + ("true" if verdict == "passed" else "false") + "}")
    evidence = ('{"expected": "connection.close with reply-code 501 (frame-error)", '
                '"observed": "ch=0 connection.close(reply-code=501, reply-text=\'FRAME_ERROR\')", '
                f'"checks": [{{"description": "the frame is refused", "clauses": {clauses}, "verdict": "{check}", '
                '"expected": "connection.close 501", "observed": "connection.close 501"}], "notes": [], '
                '"description": "Sends the frame under test and waits for the broker\'s reaction."}')
    replay = (f"amqpspec run {run['url']} --protocol {run['protocol']} --case {case['id']} --seed {run['seed']} -v")
    return (f'{frag["head"]}, "verdict": "{verdict}", "reason": {json.dumps(reason)}, "close": {close}, '
            f'"target": "{run["url"]}", "broker": {run["broker"]}, "duration_s": {duration:.4f}, '
            f'"seed": {run["seed"]}, "evidence": {evidence}, "transcript": {frag["transcript"]}, '
            f'"replay": "{replay}", "run_id": "{run["run_id"]}", '
            f'"started_at": "{at.isoformat(timespec="milliseconds")}", '
            f'"deviation": {json.dumps(deviation)}, "schema": 1}}')


@dataclass(frozen=True)
class RunPlan:
    product: int
    version: int
    protocol: str
    index: int          # run number of its target
    day: int


def _plan(records: int, catalog: dict[str, list[dict[str, Any]]]) -> list[RunPlan]:
    """Runs spread over targets until the record count is reached (nightly, versions in order)."""
    targets = [(pi, vi, proto) for pi, p in enumerate(PRODUCTS) for vi in range(len(p.versions)) for proto in p.protocols]
    plans: list[RunPlan] = []
    total = 0
    i = 0
    while total < records:
        pi, vi, proto = targets[i % len(targets)]
        n = i // len(targets)
        plans.append(RunPlan(pi, vi, proto, n, day=vi * 400 + n))
        total += len(catalog[proto])
        i += 1
    return plans


def _write_run(args: tuple[RunPlan, str, dict[str, list[dict[str, Any]]], int]) -> tuple[int, int]:
    plan, out, catalog, seed = args
    product = PRODUCTS[plan.product]
    version = product.versions[plan.version]
    run_id = hashlib.blake2b(f"{seed}/{plan}".encode(), digest_size=16).hexdigest()
    port = 5672 + plan.product
    run = {"run_id": run_id, "protocol": plan.protocol, "seed": 1000 + plan.index,
           "url": f"amqp://guest@127.0.0.1:{port}/",
           "broker": json.dumps({"product": "" if product.name == "unknown" else product.name,
                                 "version": "" if version == "unknown" else version, "platform": product.platform})}
    rng = random.Random(f"{seed}/{run_id}")
    start = datetime(2023, 1, 1, 2, 0, tzinfo=timezone.utc) + timedelta(days=plan.day, minutes=plan.product * 7)
    cases = list(catalog[plan.protocol])
    if plan.version == 0 and plan.index < 30:
        cases += [{"id": r, "title": "a case of an older suite version", "section": r.split("/")[1],
                   "section_title": "", "clauses": [r.split("/")[0].replace("amqp091", "amqp091:").replace(
                       "amqp10", "amqp10:") + r.split("/")[1] + "/99"]} for r in RETIRED
                  if r.startswith("amqp091" if plan.protocol == "0-9-1" else "amqp10")]
    folder = Path(out) / "results" / product.name.replace(" ", "_") / version / plan.protocol
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"run-{plan.index:05d}-{run_id[:8]}.jsonl"
    at = start
    lines = []
    for case in cases:
        frag = _fragments(case, plan.protocol)
        verdict = _base_verdict(product, plan.version, case["id"])
        if _h(product.name, version, case["id"], "flaky") < 0.01 and rng.random() < 0.15:
            verdict = "passed" if verdict != "passed" else "failed"            # a flaky case
        if rng.random() < 0.0005:
            verdict = "error"                                                   # a timeout now and then
        deviation = None
        if verdict == "failed" and product.name == "RabbitMQ" and _h(case["id"], "dev") < 0.2:
            deviation = "RabbitMQ documents this deviation (errata)"
        duration = 0.002 + rng.random() * (3.0 if _h(case["id"], "slow") < 0.05 else 0.05)
        lines.append(_record(frag, case, verdict, run, at, duration, deviation))
        at += timedelta(seconds=duration)
    text = "\n".join(lines) + "\n"
    if rng.random() < 0.002:                                                    # a run killed mid-write
        text = text[: len(text) - len(lines[-1]) // 2 - 1]
    path.write_text(text, encoding="utf-8")
    return len(lines), len(text)


def _write_findings(out: Path, seed: int, campaigns: int) -> int:
    rng = random.Random(seed)
    targets = ("method-frame", "content-header", "field-table", "heartbeat-frame", "open-performative", "transfer")
    violations = ("hang", "reset-without-close", "wrong-code", "liveness", "invariant", "decode-error-by-broker")
    sigs = []
    for i in range(60):
        proto = "1.0" if targets[i % len(targets)] in ("open-performative", "transfer") else "0-9-1"
        sig = {"protocol": proto, "target": targets[i % len(targets)], "violation": violations[i % len(violations)],
               "code": 501 + (i % 5) if violations[i % len(violations)] == "wrong-code" and proto == "0-9-1" else None,
               "condition": "amqp:decode-error" if proto == "1.0" and i % 3 == 0 else None,
               "state": ("after-open", "in-content", "before-open")[i % 3]}
        sigs.append((hashlib.sha256(json.dumps(sig, sort_keys=True).encode()).hexdigest()[:16], sig))
    files = 0
    for c in range(campaigns):
        product = PRODUCTS[c % len(PRODUCTS)]
        version = product.versions[c % len(product.versions)]
        folder = out / "findings" / f"campaign-{c:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        for sid, sig in rng.sample(sigs, 8):
            first = datetime(2024, 1, 1, tzinfo=timezone.utc) + timedelta(days=c, minutes=rng.randrange(600))
            data = {"schema": 1, "kind": "finding", "signature": sig, "signature_id": sid,
                    "broker": {"product": product.name, "version": version, "platform": product.platform},
                    "target_url": "amqp://guest@127.0.0.1:5672/", "seed": rng.randrange(1 << 31),
                    "first_seen": first.isoformat(), "last_seen": (first + timedelta(minutes=30)).isoformat(),
                    "count": rng.randrange(1, 500), "clauses": ["amqp091:4.2.3/1"] if sig["protocol"] == "0-9-1"
                    else ["amqp10:2.4.1/1"], "input": {"hex": "0100010000000c" + "cd" * 12, "summary": "a frame"},
                    "transcript": [], "replay": f"amqpspec replay --seed {c}", "run_id": f"campaign-{c:03d}"}
            (folder / f"{sid}.json").write_text(json.dumps(data, indent=1), encoding="utf-8")
            files += 1
    return files


def generate(records: int, out: Path, seed: int = 1, jobs: int | None = None) -> dict[str, Any]:
    t0 = time.monotonic()
    catalog = _catalog()
    plans = _plan(records, catalog)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    written = size = 0
    with Pool(jobs or os.cpu_count() or 1) as pool:
        for n, nbytes in pool.imap_unordered(_write_run, [(p, str(out), catalog, seed) for p in plans], chunksize=16):
            written += n
            size += nbytes
    findings = _write_findings(out, seed, campaigns=max(4, records // 20000))
    info = {"records": written, "runs": len(plans), "bytes": size, "findings": findings,
            "seconds": round(time.monotonic() - t0, 1)}
    (out / "generated.json").write_text(json.dumps(info), encoding="utf-8")
    return info


def _time_job(data: Path, out: Path, extra: list[str]) -> dict[str, Any]:
    """One fresh driver process: what a user waits for, Spark start included."""
    code = ("import json, sys, time\n"
            "from amqpspec.reports.pipeline.job import run_job\n"
            "from amqpspec.reports.pipeline.session import parse_conf\n"
            "t = time.monotonic()\n"
            "conf = parse_conf(sys.argv[3:])\n"
            "r = run_job([sys.argv[1] + '/results'], sys.argv[2], findings=[sys.argv[1] + '/findings'], conf=conf)\n"
            "print(json.dumps({'wall_s': round(time.monotonic() - t, 1), 'timings': r.timings,\n"
            "                  'rows': r.bundle['dataset']['results_rows'], 'records': r.bundle['inputs']['records'],\n"
            "                  'skipped': r.bundle['inputs']['skipped_total']}))\n")
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code, str(data), str(out), *extra], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"the job failed:\n{proc.stderr[-4000:]}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info["process_s"] = round(time.monotonic() - t0, 1)
    bundle = out / "bundle.json"
    t1 = time.monotonic()
    json.loads(bundle.read_text(encoding="utf-8"))
    info["bundle_bytes"] = bundle.stat().st_size
    info["bundle_load_ms"] = round(1000 * (time.monotonic() - t1), 1)
    try:
        from amqpspec.reports.html import render
    except ImportError:
        return info
    t2 = time.monotonic()
    index = render(bundle, out / "dataset", out)
    info["html_render_s"] = round(time.monotonic() - t2, 1)
    info["html_index_bytes"] = Path(index).stat().st_size
    return info


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.pipeline_scale", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    gen = sub.add_parser("generate", help="write synthetic result files and findings")
    gen.add_argument("--records", type=int, required=True)
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--seed", type=int, default=1)
    run = sub.add_parser("run", help="generate (if needed) and time the pipeline at each size")
    run.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    run.add_argument("--work", type=Path, required=True)
    run.add_argument("--keep", action="store_true", help="keep the generated files and reports")
    run.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="Spark conf for the job")
    args = parser.parse_args(argv)
    if args.cmd == "generate":
        print(json.dumps(generate(args.records, args.out, args.seed)))
        return
    results = []
    for size in args.sizes:
        data = args.work / f"data-{size}"
        marker = data / "generated.json"
        if marker.exists() and json.loads(marker.read_text())["records"] >= size:
            gen_info = json.loads(marker.read_text())
        else:
            print(f"generating {size:,} records in {data} ...", flush=True)
            gen_info = generate(size, data)
        print(f"  {gen_info}", flush=True)
        out = args.work / f"report-{size}"
        shutil.rmtree(out, ignore_errors=True)
        print(f"running the pipeline on {gen_info['records']:,} records ...", flush=True)
        info = _time_job(data, out, [c for c in args.conf])
        info["generated"] = gen_info
        results.append((size, info))
        print(f"  {json.dumps(info)}", flush=True)
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)
    print("\n| records | runs (files) | GB | dataset rows | wall s | Spark start s | dataset s | report s | "
          "aggregates s | s per M records | bundle KB | bundle load ms |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, info in results:
        t = info["timings"]
        g = info["generated"]
        print(f"| {info['records']:,} | {g['runs']:,} | {g['bytes'] / 1e9:.1f} | {info['rows']:,} | {info['wall_s']} | "
              f"{t['session_s']} | {t['dataset_s']} | {t['validation_report_s']} | {t['aggregates_s']} | "
              f"{info['wall_s'] / (info['records'] / 1e6):.1f} | {info['bundle_bytes'] // 1024} | {info['bundle_load_ms']} |")
    if len(results) > 1:
        (s0, a), (s1, b) = results[0], results[-1]
        per_a, per_b = a["wall_s"] / a["records"], b["wall_s"] / b["records"]
        print(f"\nlinearity: {b['records'] / a['records']:.1f}x the records took {b['wall_s'] / a['wall_s']:.2f}x the time "
              f"(time per record x{per_b / per_a:.2f})")


if __name__ == "__main__":
    main()
