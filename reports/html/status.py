"""What the report says about one clause for one broker, and in which order cases are shown.

The annotated specification marks every normative sentence, as TLS-Anvil marks RFC text, so
that coverage is seen rather than claimed. A clause's status for one target comes from the
dataset rows of that target's latest run (``clause_verdict``: the worst verdict of the checks
citing the clause, see bundle.md), or, when no case of the run cites it, from the catalog's
accounting (``amqpspec.coverage``): untested with a reason, or covered by cases that this run
did not include.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from amqpspec.reports.counts import is_documented_deviation

# status -> (label shown, one-line meaning); the order is the legend's
STATUSES: dict[str, tuple[str, str]] = {
    "failed": ("covered, failed", "a case citing it failed (MUST / MUST NOT not met)"),
    "warning": ("covered, warning", "a case citing it found a SHOULD not met"),
    "deviation": ("documented deviation", "failed, but the broker's profile documents the deviation"),
    "passed": ("covered, passed", "every case citing it passed"),
    "skipped": ("covered, skipped", "the cases citing it were skipped (feature not offered)"),
    "error": ("covered, undecided", "the suite could not decide (timeout, broker gone): not a broker failure"),
    "untested": ("untested", "no case checks it; the reason is given"),
    "not-run": ("not run", "cases cover it, but none of them was in this run"),
    "unaccounted": ("unaccounted", "neither covered by a case nor listed as untested"),
}

_FAMILY_RANK = {"MUST": 0, "SHOULD": 1, "MAY": 2, "DEFINITION": 3, "NONE": 4, "UNKNOWN": 5}


def clause_status(rows: Iterable[dict[str, Any]]) -> str | None:
    """Status of one clause from the rows citing it (None when there are none).

    An undocumented failure outweighs a documented one, which outweighs a warning; a clause
    passed by one case and skipped by another is passed: something did decide it.
    """
    seen = set()
    for row in rows:
        verdict = row.get("clause_verdict") or row.get("verdict")
        if verdict == "failed":
            seen.add("deviation" if row.get("is_deviation") or row.get("deviation") else "failed")
        elif verdict in ("passed", "informational"):
            seen.add("passed")
        elif verdict in ("warning", "skipped", "error"):
            seen.add(verdict)
        else:
            seen.add("error")
    for status in ("failed", "deviation", "warning", "passed", "skipped", "error"):
        if status in seen:
            return status
    return None


def case_category(verdict: str, deviation: Any) -> str:
    """The case's bucket: its verdict, except that a documented failure is a deviation."""
    if is_documented_deviation(verdict, deviation or None):
        return "deviation"
    return verdict


_CATEGORY_RANK = {"failed": 0, "warning": 1, "deviation": 2, "error": 3, "skipped": 4, "informational": 5,
                  "passed": 6}


@dataclass(frozen=True)
class Badness:
    """Sort key putting the worst failures first: undocumented MUST failures, then SHOULDs
    not met, then documented deviations, then what could not be decided; within a bucket the
    strongest level of the clauses the case failed, then spec order."""

    category: int
    family: int
    section: tuple[Any, ...]
    case: tuple[Any, ...]

    def __lt__(self, other: "Badness") -> bool:
        return (self.category, self.family, self.section, self.case) < (
            other.category, other.family, other.section, other.case)


def badness(category: str, failing_families: Iterable[str], section_key: tuple[Any, ...],
            case_key: tuple[Any, ...]) -> Badness:
    fam = min((_FAMILY_RANK.get(f, 5) for f in failing_families), default=5)
    return Badness(_CATEGORY_RANK.get(category, 3), fam, section_key, case_key)
