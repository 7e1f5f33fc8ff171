"""Reading what the pipeline wrote: the summary bundle, the Parquet dataset, the source records.

The bundle (``reports/pipeline/bundle.md``) carries every aggregate a summary page shows, so
summary numbers are the pipeline's, never recomputed here. Per-case pages need more than
aggregates: the rows of the *latest* run of each target are read from ``dataset/results`` with
pyarrow (a filter on ``run_id``, so a dataset of millions of rows costs one scan of a few
columns, not a Spark session), and the transcript and checks, which the dataset leaves out for
size, come from the original result line that ``source_file``/``source_line`` point at.

Everything here tolerates missing parts: no pyarrow, no dataset, a moved result file each
give a report with less in it and a note saying why, never a traceback.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from amqpspec.datafile import DataFileError, load_json
from amqpspec.errors import UsageError

log = logging.getLogger(__name__)

BUNDLE_KIND = "amqpspec-report-bundle"
BUNDLE_SCHEMA = 1

# Top-level keys and the empty value a bundle without them is read as: bundle.md promises
# every key, but a report of an older or partial bundle is better than none.
_TOP_DEFAULTS: dict[str, Any] = {
    "generated_at": None, "amqpspec_version": None, "spark": {}, "dataset": {}, "inputs": {},
    "targets": [], "runs": [], "verdict_counts": [], "compliance": [], "matrix": [], "history": [],
    "changes": [], "flaky": [], "findings": {}, "unknown": {}, "clauses": {},
}

RESULT_COLUMNS = [
    "run_id", "product", "version", "platform", "protocol", "target_url", "case", "title", "section",
    "section_title", "clause", "clause_known", "level", "family", "case_known", "verdict", "clause_verdict",
    "reason", "deviation", "is_deviation", "close_who", "close_how", "close_code", "close_matched",
    "expected", "observed", "duration_s", "started_at", "seed", "replay", "source_file", "source_line",
]


class ReportInputError(UsageError):
    """The bundle cannot be read at all (missing, not JSON, not a bundle)."""


def load_bundle(path: str | Path) -> dict[str, Any]:
    """The bundle as a dict with every top-level key present."""
    path = Path(path)
    if not path.exists():
        raise ReportInputError(f"{path}: no such bundle file (run 'amqpspec report' to make one)")
    try:  # bounded in size and nesting: a bundle can come from anyone (amqpspec.datafile)
        data = load_json(path, what="report bundle")
    except DataFileError as exc:
        raise ReportInputError(f"{exc}; re-run the pipeline") from None
    if not isinstance(data, dict) or data.get("kind") != BUNDLE_KIND:
        raise ReportInputError(f"{path}: not an amqpspec report bundle (kind is not {BUNDLE_KIND!r})")
    schema = data.get("schema")
    if not isinstance(schema, int) or schema < 1:
        raise ReportInputError(f"{path}: bundle has no valid schema number")
    for key, default in _TOP_DEFAULTS.items():
        if not isinstance(data.get(key), type(default)) and default is not None:
            data[key] = type(default)()
        data.setdefault(key, default)
    if schema > BUNDLE_SCHEMA:
        data["inputs"].setdefault("warnings", []).insert(
            0, f"bundle schema {schema} is newer than this renderer reads ({BUNDLE_SCHEMA}): "
               "shown with the fields it knows")
    return data


@dataclass
class DatasetRows:
    """Rows of the latest runs, by target key, plus why there are none when there are none."""

    by_target: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    problem: str | None = None   # one line for the report when drill-down pages are missing
    findings: list[dict[str, Any]] = field(default_factory=list)


def _pyarrow() -> Any:
    try:
        import pyarrow.dataset as ds
    except ImportError:
        return None
    return ds


def _read_table(ds: Any, folder: Path, columns: list[str], filt: Any = None) -> list[dict[str, Any]]:
    dataset = ds.dataset(str(folder), format="parquet")
    present = [c for c in columns if c in dataset.schema.names]
    table = dataset.to_table(columns=present, filter=filt)
    return table.to_pylist()


def read_latest_rows(dataset_dir: str | Path | None, targets: list[dict[str, Any]]) -> DatasetRows:
    """The results rows of each target's latest run (``targets[].latest_run``)."""
    out = DatasetRows()
    if dataset_dir is None:
        out.problem = "no dataset directory given: per-case pages are not written"
        return out
    folder = Path(dataset_dir)
    ds = _pyarrow()
    if ds is None:
        out.problem = "pyarrow is not installed (pip install pyarrow): per-case pages are not written"
        return out
    if not (folder / "results").is_dir():
        out.problem = f"{folder}/results does not exist: per-case pages are not written"
        return out
    if not (folder / "_SUCCESS").exists():
        out.problem = f"{folder} has no _SUCCESS marker: the pipeline did not finish; case pages may be incomplete"
    wanted = {t.get("latest_run") for t in targets if t.get("latest_run")}
    try:
        rows = _read_table(ds, folder / "results", RESULT_COLUMNS, ds.field("run_id").isin(sorted(wanted)))
    except Exception as exc:  # a damaged Parquet file must not cost the summary pages
        out.problem = f"cannot read {folder}/results: {type(exc).__name__}: {exc}"
        return out
    def ident(item: dict[str, Any]) -> tuple[str, str, str]:
        # bundle.md: a missing product or version is "unknown" in the bundle, null in the dataset
        return (str(item.get("product") or "unknown"), str(item.get("version") or "unknown"),
                str(item.get("protocol") or ""))

    latest = {ident(t): t for t in targets}
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        target = latest.get(ident(row))
        if target is not None and row.get("run_id") == target.get("latest_run"):
            grouped[target["key"]].append(row)
    out.by_target = dict(grouped)
    if (folder / "findings").is_dir():
        try:
            out.findings = _read_table(ds, folder / "findings", [
                "signature_id", "product", "version", "count", "source_file", "run_id", "seed", "replay"])
        except Exception as exc:
            log.warning("cannot read %s/findings: %s", folder, exc)
    return out


def resolve(path: str | None, bases: Iterable[Path]) -> Path | None:
    """A source file named in the dataset: as recorded, else relative to one of ``bases``."""
    if not path:
        return None
    candidate = Path(path)
    if candidate.is_file():
        return candidate
    if not candidate.is_absolute():
        for base in bases:
            if (base / candidate).is_file():
                return base / candidate
    return None


def read_source_lines(wanted: dict[Path, set[int]]) -> dict[tuple[Path, int], dict[str, Any]]:
    """The JSON records at the given 1-based lines of each result file, read in one pass per
    file (result files of long runs are large; they are streamed, not loaded). Lines are counted
    as the pipeline counts them, split on "\n" only; a line that is not a usable record (not
    JSON, too long, too deep) is left out."""
    # parsed once per process: the pipeline's JUnit step quotes the same records
    from amqpspec.reports.pipeline import records as source_records

    found: dict[tuple[Path, int], dict[str, Any]] = {}
    for path, lines in wanted.items():
        if not lines:
            continue
        try:
            for number, record in source_records.read_lines(path, lines).items():
                if isinstance(record, dict):
                    found[(path, number)] = record
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
    return found


def read_json_file(path: Path) -> dict[str, Any] | None:
    try:
        data = load_json(path, what="finding")
    except DataFileError:
        return None
    return data if isinstance(data, dict) else None
