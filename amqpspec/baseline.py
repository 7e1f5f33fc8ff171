"""Baselines: accepted verdicts per case, so CI fails only on regressions.

``--write-baseline FILE`` records the verdict of every case of a run; ``--baseline FILE``
then makes a run fail only for cases that got worse than recorded (or are new and
failing), and lists the cases that got better.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from amqpspec.atomicfile import write_atomically
from amqpspec.datafile import DataFileError, load_json
from amqpspec.errors import UsageError
from amqpspec.result import Result, Verdict, clean_record

BASELINE_SCHEMA = 1


@dataclass
class Comparison:
    regressions: list[tuple[str, str, str]] = field(default_factory=list)   # case, was, now
    improvements: list[tuple[str, str, str]] = field(default_factory=list)
    new_failures: list[tuple[str, str]] = field(default_factory=list)        # case, now
    missing: list[str] = field(default_factory=list)                         # in baseline, not run


def write_baseline(path: str | os.PathLike[str], results: Iterable[Result], target: str, broker: dict[str, str]) -> None:
    data = {
        "schema": BASELINE_SCHEMA,
        "target": target,
        "broker": broker,
        "verdicts": {r.case: r.verdict.value for r in sorted(results, key=lambda r: r.case)},
    }
    # the broker's product and version are its own strings: cleaned like every record
    write_atomically(path, json.dumps(clean_record(data), indent=2, sort_keys=True) + "\n")


def load_baseline(path: str | os.PathLike[str]) -> dict[str, Verdict]:
    if not Path(path).exists():
        raise UsageError(f"baseline file {path} does not exist (create one with --write-baseline)")
    try:
        data = load_json(path, max_bytes=64 << 20, what="baseline")
        verdicts = data["verdicts"]
        return {str(case): Verdict(v) for case, v in verdicts.items()}
    except DataFileError as exc:
        raise UsageError(f"baseline file {exc}: not a valid amqpspec baseline") from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"baseline file {path} is not a valid amqpspec baseline: {exc}") from None


def _counts_as_failure(v: Verdict, strict: bool) -> bool:
    return v in (Verdict.FAILED, Verdict.ERROR) or (strict and v is Verdict.WARNING)


def compare(results: Iterable[Result], baseline: dict[str, Verdict], strict: bool = False) -> Comparison:
    cmp = Comparison()
    seen = set()
    for r in results:
        seen.add(r.case)
        was = baseline.get(r.case)
        if was is None:
            if _counts_as_failure(r.verdict, strict):
                cmp.new_failures.append((r.case, r.verdict.value))
            continue
        if r.verdict.severity > was.severity and _counts_as_failure(r.verdict, strict):
            cmp.regressions.append((r.case, was.value, r.verdict.value))
        elif r.verdict.severity < was.severity:
            cmp.improvements.append((r.case, was.value, r.verdict.value))
    cmp.missing = sorted(set(baseline) - seen)
    return cmp
