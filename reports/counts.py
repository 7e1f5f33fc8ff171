"""What every report counts, defined once: a *documented deviation* is a case whose verdict is
``failed`` and whose record carries a deviation note (the broker's profile documents it).

A warning with a note is not one: it is counted with the warnings, and ``--strict`` decides
whether it fails a run. The console summary, the JUnit files (which report a documented
deviation as skipped), the pipeline's ``deviations`` counts of runs and targets and the HTML
badges all use these two functions, the Python one on records and the Spark one on the
dataset, so the numbers they print agree (tests/unit/test_report_counts.py).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column


def is_documented_deviation(verdict: Any, deviation: Any) -> bool:
    """True for a failed case with a deviation note (``verdict`` as a string or a Verdict)."""
    value = str(getattr(verdict, "value", verdict) or "").strip().lower()
    return value == "failed" and deviation not in (None, "")


def documented_deviation_column(verdict: str = "verdict", deviation: str = "deviation") -> "Column":
    """The same rule on the dataset's columns (``deviation`` is null when there is no note)."""
    from pyspark.sql import functions as F

    return (F.col(verdict) == "failed") & (F.coalesce(F.col(deviation), F.lit("")) != "")
