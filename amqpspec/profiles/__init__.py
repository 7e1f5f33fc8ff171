"""Broker profiles: what a vendor documents as its own deviation from the specification.

One TOML file per product in this folder. A failing (or warning) case whose failing
checks all cite clauses of one documented deviation -- and whose id matches the entry's
case globs, when it gives any -- is reported as a *documented deviation*: shown apart from
unknown failures, not failing the run unless ``--strict``. An entry must say where the
vendor documents it; the suite never invents excuses for a broker.
"""
from __future__ import annotations

import fnmatch
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from amqpspec.datafile import DataFileError, load_toml
from amqpspec.errors import UsageError
from amqpspec.result import Result, Verdict


@dataclass(frozen=True)
class Deviation:
    clauses: tuple[str, ...]
    summary: str
    reference: str
    cases: tuple[str, ...] = ()   # case-id globs; empty = any case citing these clauses

    def covers(self, result: Result) -> bool:
        if self.cases and not any(fnmatch.fnmatchcase(result.case, g) for g in self.cases):
            return False
        failing = [c for c in result.evidence.get("checks", []) if c.get("verdict") not in ("passed", Verdict.PASSED)]
        if not failing:
            return False
        # every failing check must be about one of the documented clauses (a check with its own
        # guideline cites none: it is covered only through the case globs)
        return all(set(c.get("clauses") or ()) & set(self.clauses) or (not c.get("clauses") and self.cases)
                   for c in failing)


@dataclass(frozen=True)
class Profile:
    product: str
    source: str
    deviations: tuple[Deviation, ...] = field(default_factory=tuple)

    def apply(self, result: Result) -> Result:
        """Marks the result as a documented deviation when an entry covers it."""
        if result.verdict not in (Verdict.FAILED, Verdict.WARNING):
            return result
        for dev in self.deviations:
            if dev.covers(result):
                result.deviation = f"{dev.summary} ({dev.reference})"
                break
        return result


def _parse(data: dict[str, Any], source: str) -> Profile:
    try:
        product = str(data["product"])
        devs = tuple(
            Deviation(tuple(d["clauses"]), str(d["summary"]), str(d["reference"]), tuple(d.get("cases", ())))
            for d in data.get("deviation", [])
        )
    except (KeyError, TypeError) as exc:
        raise UsageError(f"profile {source} is not valid: missing or wrong field {exc}") from None
    for d in devs:
        if not d.reference.strip():
            raise UsageError(f"profile {source}: every deviation needs a reference to the vendor's documentation")
    return Profile(product, source, devs)


def load_file(path: str | Path) -> Profile:
    """A profile the user names (``--profile``): a file from anywhere, read with bounds."""
    if not Path(path).exists():
        raise UsageError(f"profile file {path} does not exist")
    try:
        data = load_toml(path, what="broker profile")
    except DataFileError as exc:
        raise UsageError(f"profile file {exc}") from None
    return _parse(data, str(path))


def builtin() -> list[Profile]:
    """The profiles shipped with amqpspec (every *.toml in this package)."""
    out = []
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            out.append(_parse(tomllib.loads(entry.read_text(encoding="utf-8")), f"amqpspec/profiles/{entry.name}"))
    return out


def for_product(product: str) -> Profile | None:
    """The shipped profile whose product name matches the broker's (case-insensitive)."""
    name = product.strip().lower()
    return next((p for p in builtin() if p.product.lower() == name), None)
