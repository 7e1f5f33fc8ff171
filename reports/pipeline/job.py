"""The pipeline end to end: input files -> dataset (Parquet) -> summary bundle (JSON) -> JUnit.

One pass over the input: every line is parsed and classified once and written to a staging
table (Parquet, next to the output), from which both the dataset and the report of skipped
input are read. The staging table is deleted at the end. The dataset is written to a
temporary folder and renamed into place only when complete, so a killed job never leaves a
half dataset where a previous good one was.

``run_job`` can be given a running SparkSession (tests, notebooks); otherwise it starts one
with ``session.create_session`` and stops it at the end.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from amqpspec.atomicfile import write_atomically
from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER

from . import aggregates as agg
from . import dataset as ds
from . import ingest, jvmcache
from . import records as source_records
from .progress import StageListener, Stages
from .session import check_runtime, create_session, resolve_master
from .clients import client_section, empty_section

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

BUNDLE_SCHEMA = 1
BUNDLE_KIND = "amqpspec-report-bundle"
BACKGROUND_WAIT_S = 60.0   # after a failure, how long each thread still asking Spark is waited for
_URL_PASSWORD = re.compile(r"(://[^/:@\s]*):[^@/\s]*@")


def _keep() -> Any:
    """How a table read more than once is kept: in memory, spilling to disk (a cluster's
    millions of rows too), so its plan runs once."""
    from pyspark import StorageLevel

    return StorageLevel.MEMORY_AND_DISK


@dataclass
class JobResult:
    """What the job wrote, for the CLI to report and the renderer to read."""

    out_dir: Path
    bundle_path: Path
    dataset_dir: Path
    junit_paths: list[Path]
    bundle: dict[str, Any]
    seconds: float
    timings: dict[str, float] = field(default_factory=dict)


def _log_nothing(_: str) -> None:
    pass


def _clean_excerpt(text: str | None) -> str | None:
    if text is None:
        return None
    return SCRUBBER.scrub(_URL_PASSWORD.sub(r"\1@", text))


def _empty(spark: "SparkSession", schema: Any) -> "DataFrame":
    """An empty DataFrame of ``schema`` built from literals (no Python worker needed)."""
    from pyspark.sql import functions as F

    return spark.range(0).select(*[F.lit(None).cast(f.dataType).alias(f.name) for f in schema.fields])


def _write_atomically(path: Path, text: str) -> None:
    write_atomically(path, text)


def _prepare_out(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: exists and is not a directory")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot create the directory: {exc.strerror or exc}") from None
    if not os.access(out_dir, os.W_OK):
        raise UsageError(f"--out {out_dir}: not writable")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "target"


def run_job(results: Sequence[str], out_dir: str | os.PathLike[str], *, findings: Sequence[str] = (),
            master: str | None = None, conf: Mapping[str, str] | None = None,
            spark: "SparkSession | None" = None, limits: agg.Limits = agg.Limits(),
            junit: bool = True, strict: bool = False,
            log: Callable[[str], None] = _log_nothing, progress: StageListener | None = None) -> JobResult:
    """Reads the inputs, writes ``out_dir/dataset``, ``out_dir/bundle.json`` and the JUnit files.

    ``progress`` is told when each stage starts and ends (see ``progress.Stages``).
    """
    t_start = time.monotonic()
    source_records.forget()   # the records of an earlier job in this process (a notebook, tests)
    stages = Stages(progress)
    out = Path(out_dir)
    _prepare_out(out)
    inputs = ingest.discover_inputs(results, findings)
    if not inputs.files:
        reasons = "; ".join(f"{b.path}: {b.reason}" for b in inputs.bad[:5]) or "no input given"
        raise UsageError(f"nothing to read: {reasons}")

    own_session = False
    with stages.stage("session_s", "start Spark"):
        if spark is None:
            # PySpark's own imports first, alone: the catalog's thread would hold the GIL
            # through them and put off the JVM's launch (measured: by about a second)
            check_runtime()
        # the catalog (every case module imported) is built while the JVM starts
        catalog_loader = _Background(ds.load_catalog, "amqpspec-catalog")
        if spark is None:
            from pyspark.sql import SparkSession

            # a session already running in this process (a notebook, tests) is used and left running
            own_session = SparkSession.getActiveSession() is None
            if own_session:
                log(f"starting Spark ({resolve_master(master)}) ...")
            spark = create_session(master, conf, input_bytes=ingest.input_bytes(inputs))
        catalog = catalog_loader.result()
    background: list[_Background] = []   # Spark actions asked from other threads (see below)
    token = uuid.uuid4().hex[:12]
    tmp_dataset = out / f".dataset-{token}"
    final_dataset = out / "dataset"
    try:
        result_files = inputs.of_kind("results")
        finding_files = inputs.of_kind("findings")
        log(f"reading {len(result_files)} result files and {len(finding_files)} finding files ...")
        with stages.stage("dataset_s", "read the input, write the dataset"):
            # the input is parsed once and kept (memory, spilling to disk) for everything read
            # from it: the dataset, the list of skipped input, the per-file counts
            staged = ds.stage(ingest.read_results(spark, result_files)).persist(_keep()) if result_files else None
            rows = ds.result_rows(staged, catalog) if staged is not None else None
            if rows is None:
                rows = _empty(spark, _rows_schema(spark, catalog))
            rows = rows.persist(_keep())   # the aggregates read it again: no re-parse, no Parquet read back
            if finding_files:
                parsed_findings = ingest.read_findings(spark, finding_files).persist(_keep())
                findings_df = ds.finding_rows(parsed_findings).persist(_keep())
            else:
                parsed_findings = findings_df = None
            # JUnit and the HTML report quote whole records: parsed in Python while the JVM
            # works (the driver thread only waits on it from here on; see records.py)
            source_records.prefetch([f.path for f in result_files if f.local])
            # The counts of the input, the aggregates' two actions and JUnit's read the same kept
            # tables and nothing the write makes: they are asked from threads of their own while
            # this one writes, and so is the findings table written. In a cold JVM most of a small
            # query's time is its planning on the driver, one thread; beside the write's tasks it
            # uses the other core (measured on 2 cores, one run, medians of five: the stages after
            # the write went from 4.4 s to 2.5 s, the write itself no slower).
            listing = _Background(lambda: _inputs_section(inputs, staged, parsed_findings, limits), "amqpspec-inputs")
            aggregator = agg.Aggregator(rows, findings_df, catalog, limits)

            def collect() -> Located:
                aggregator.collect()
                # JUnit's one action, the records of each latest run, rides on the same thread
                return _locate_latest(rows, aggregator.targets()) if junit else {}
            collecting = _Background(collect, "amqpspec-aggregates")
            writing_findings = _Background(lambda: _write_findings(spark, findings_df, tmp_dataset / "findings"),
                                           "amqpspec-findings")
            background += [listing, collecting, writing_findings]
            rows.write.mode("overwrite").parquet(str(tmp_dataset / "results"))
            writing_findings.result()

        with stages.stage("validation_report_s", "list the skipped input"):
            inputs_section, client_records = listing.result()
            if parsed_findings is not None:
                parsed_findings.unpersist()

        # the dataset is complete: put it in place, then aggregate from it
        _swap_in(tmp_dataset, final_dataset)
        with stages.stage("aggregates_s", "aggregate"):
            latest_records = collecting.result()
            if staged is not None:
                staged.unpersist()
            bundle = _bundle(aggregator, rows, catalog, limits, inputs_section, client_records > 0)
            if findings_df is not None:
                findings_df.unpersist()

        with stages.stage("junit_s", "write JUnit"):
            junit_paths = _write_junit(latest_records, bundle, out, strict) if junit else []
            rows.unpersist()
            bundle["junit"] = [{"key": k, "run_id": r, "path": p.relative_to(out).as_posix()}
                               for k, r, p in junit_paths]
        seconds = round(time.monotonic() - t_start, 2)
        bundle["spark"] = {"master": spark.sparkContext.master, "version": spark.version, "seconds": seconds}
        bundle_path = out / "bundle.json"
        _write_atomically(bundle_path, json.dumps(bundle, ensure_ascii=False, indent=1) + "\n")
        return JobResult(out, bundle_path, final_dataset, [p for _, _, p in junit_paths], bundle, seconds,
                         stages.timings)
    except BaseException:
        # threads still asking Spark (the write failed, or was interrupted) end before the
        # temporary dataset goes: a late write would make its folder again
        if any(b.running() for b in background):
            try:
                spark.sparkContext.cancelAllJobs()
            except Exception:
                pass
            for b in background:
                b.wait(BACKGROUND_WAIT_S)
        raise
    finally:
        shutil.rmtree(tmp_dataset, ignore_errors=True)
        if own_session:
            spark.stop()
            jvmcache.finish_pending()


def _write_findings(spark: "SparkSession", findings: "DataFrame | None", path: Path) -> None:
    """The findings table; an empty one of the same schema when no finding was given."""
    table = findings if findings is not None else _empty(spark, _findings_schema(spark))
    table.write.mode("overwrite").parquet(str(path))


class _Background:
    """One call run in a thread; ``result()`` waits for it and returns or raises what it did."""

    def __init__(self, fn: Callable[[], Any], name: str) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), name=name, daemon=True)
        self._thread.start()

    def _run(self, fn: Callable[[], Any]) -> None:
        try:
            self._value = fn()
        except BaseException as exc:  # handed to the caller's thread
            self._error = exc

    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, timeout: float) -> None:
        """Waits for the call to end (at most ``timeout`` seconds), whatever it returns or raises."""
        self._thread.join(timeout)

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _lit(value: str) -> Any:
    from pyspark.sql import functions as F

    return F.lit(value)


def _rows_schema(spark: "SparkSession", catalog: ds.Catalog) -> Any:
    """The dataset's schema, from the same code that builds it (applied to no input)."""
    from pyspark.sql import types as T

    parsed_schema = T.StructType([
        T.StructField("source_file", T.StringType()), T.StructField("source_line", T.IntegerType()),
        T.StructField("excerpt", T.StringType()), T.StructField("status", T.StringType()),
        T.StructField("reason", T.StringType()), T.StructField("r", ingest.result_schema())])
    return ds.result_rows(ds.stage(_empty(spark, parsed_schema)), catalog).schema


def _findings_schema(spark: "SparkSession") -> Any:
    from pyspark.sql import types as T

    parsed_schema = T.StructType([
        T.StructField("source_file", T.StringType()), T.StructField("excerpt", T.StringType()),
        T.StructField("status", T.StringType()), T.StructField("reason", T.StringType()),
        T.StructField("f", ingest.finding_schema())])
    return ds.finding_rows(_empty(spark, parsed_schema)).schema


def _swap_in(tmp: Path, final: Path) -> None:
    (tmp / "_SUCCESS").write_text("", encoding="utf-8")
    old = final.with_name(final.name + f".old-{uuid.uuid4().hex[:8]}")
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)


def _inputs_section(inputs: ingest.Inputs, staged: "DataFrame | None", findings: "DataFrame | None",
                    limits: agg.Limits) -> tuple[dict[str, Any], int]:
    """The ``inputs`` part of the bundle: per-file counts, every bad entry (capped), warnings;
    and how many of the records taken judge a client library (``role: "client"``).

    One grouped action per input kind counts everything (bounded by files x schema versions x
    reasons); the bad lines themselves are listed by a second one, only when there are some.
    The client count rides on the same action, so a broker-only report (the common case)
    needs no action of its own to learn that it has no client section.
    """
    from pyspark.sql import functions as F

    from amqpspec.result import RESULT_SCHEMA_VERSION

    shown: dict[str, str] = {}
    for f in inputs.files:
        shown[_spark_path(f)] = f.path
    per_file: dict[str, dict[str, int]] = {}
    schemas: dict[str, int] = {}
    bad_counts: list[tuple[str, str, int]] = []   # (reason key, action, count)
    client_records = 0
    listings: list["DataFrame"] = []
    reason_key = F.regexp_extract("reason", r"^[^:]*", 0)
    if staged is not None:
        taken = (F.col("status") != "skipped") & (F.col("dup_rank") == 1)
        bad = ds.bad_lines(staged, keep_all=True)
        # the dataset's role column: "client" when the record says so, else a broker's record
        client = taken & (F.coalesce(F.trim(F.col("r.role")), F.lit("")) == "client")
        grouped = bad.groupBy("source_file", F.when(taken, F.col("r.schema")).alias("schema"),
                              F.when(F.col("bad"), reason_key).alias("key"), "action").agg(
            F.sum(taken.cast("int")).alias("records"), F.count(F.lit(1)).alias("n"),
            F.sum(client.cast("int")).alias("clients"))
        for row in grouped.collect():
            client_records += int(row["clients"] or 0)
            counts = per_file.setdefault(row["source_file"], {"records": 0, "bad": 0})
            records = int(row["records"] or 0)
            counts["records"] += records
            if row["key"] is not None:
                counts["bad"] += int(row["n"])
                bad_counts.append((row["key"], row["action"], int(row["n"])))
            if records:
                name = str(row["schema"]) if row["schema"] is not None else "unknown"
                schemas[name] = schemas.get(name, 0) + records
        if any(c["bad"] for c in per_file.values()):
            listings.append(bad.where(F.col("bad")).drop("bad", "r", "status", "dup_rank")
                            .withColumn("kind", F.lit("results")))
    if findings is not None:
        fb = ds.bad_findings(findings, keep_all=True)
        grouped = fb.groupBy("source_file", F.when(F.col("bad"), reason_key).alias("key"), "action").agg(
            F.sum((F.col("status") != "skipped").cast("int")).alias("records"), F.count(F.lit(1)).alias("n"))
        found_bad = False
        for row in grouped.collect():
            counts = per_file.setdefault(row["source_file"], {"records": 0, "bad": 0})
            counts["records"] += int(row["records"] or 0)
            if row["key"] is not None:
                found_bad = True
                counts["bad"] += int(row["n"])
                bad_counts.append((row["key"], row["action"], int(row["n"])))
        if found_bad:
            listings.append(fb.where(F.col("bad")).drop("bad", "status").withColumn("kind", F.lit("findings")))

    bad: list[dict[str, Any]] = [b.to_json() for b in inputs.bad]
    by_reason: dict[str, int] = {}
    for b in inputs.bad:
        by_reason[_reason_key(b.reason)] = by_reason.get(_reason_key(b.reason), 0) + 1
    bad_total = len(inputs.bad)
    skipped_total = len(inputs.bad)
    for key, action, n in bad_counts:
        by_reason[key] = by_reason.get(key, 0) + n
        bad_total += n
        if action == "skipped":
            skipped_total += n
    if listings:
        bad_df = listings[0] if len(listings) == 1 else listings[0].unionByName(listings[1])
        room = max(0, limits.bad - len(bad))
        for row in bad_df.orderBy("source_file", "source_line").limit(room).collect():
            bad.append({"path": shown.get(row["source_file"], row["source_file"]), "line": row["source_line"],
                        "kind": row["kind"], "reason": row["reason"], "action": row["action"],
                        "excerpt": _clean_excerpt(row["excerpt"])})

    files = []
    records = found = 0
    for f in inputs.files:
        counts = per_file.get(_spark_path(f), {"records": 0, "bad": 0})
        status = "ok" if counts["bad"] == 0 else ("partial" if counts["records"] else "skipped")
        if counts["records"] == 0 and counts["bad"] == 0:
            status = "skipped"   # only blank lines: say so
            bad.append({"path": f.path, "line": None, "kind": f.kind, "reason": "empty file (only blank lines)",
                        "action": "skipped", "excerpt": None})
            by_reason["empty file"] = by_reason.get("empty file", 0) + 1
            bad_total += 1
            skipped_total += 1
        files.append({"path": f.path, "kind": f.kind, "records": counts["records"], "bad": counts["bad"],
                      "status": status})
        if f.kind == "results":
            records += counts["records"]
        else:
            found += counts["records"]
    for b in inputs.bad:
        files.append({"path": b.path, "kind": b.kind, "records": 0, "bad": 1, "status": "skipped"})

    warnings = []
    newer = sum(n for s, n in schemas.items() if s.isdigit() and int(s) > RESULT_SCHEMA_VERSION)
    if newer:
        warnings.append(f"{newer} records of a result schema newer than this amqpspec reads "
                        f"({RESULT_SCHEMA_VERSION}): read with the fields it knows")
    if schemas.get("unknown"):
        warnings.append(f"{schemas['unknown']} records carry no schema version (an older amqpspec): read as schema 1")
    if skipped_total:
        warnings.append(f"{skipped_total} input items skipped (see the list of skipped input)")
    kept = bad_total - skipped_total
    if kept:
        warnings.append(f"{kept} records kept with fields of the wrong type emptied")
    return {"files": files, "records": records, "findings": found, "bad_total": bad_total,
            "skipped_total": skipped_total, "bad_by_reason": dict(sorted(by_reason.items())),
            "bad": bad[:limits.bad], "bad_truncated": bad_total > limits.bad,
            "schemas": dict(sorted(schemas.items())), "warnings": warnings}, client_records


def _reason_key(reason: str) -> str:
    return reason.split(":", 1)[0]


def _spark_path(f: ingest.InputFile) -> str:
    """How ``ingest._read_whole`` names this file in ``source_file``."""
    if not f.local:
        return f.uri
    return os.path.realpath(f.path)


def _bundle(a: agg.Aggregator, results: "DataFrame", catalog: ds.Catalog, limits: agg.Limits,
            inputs_section: dict[str, Any], has_clients: bool = True) -> dict[str, Any]:
    """The bundle, from an aggregator whose ``collect`` has run."""
    from amqpspec import __version__

    targets = a.targets()
    matrix = a.matrix(targets)
    findings_summary = a.findings_summary()
    flaky, flaky_total = a.flaky()
    # client records: their own side, their own matrix
    clients = client_section(results, catalog, limits) if has_clients else empty_section()
    clause_ids = {row["clause"] for m in matrix + clients["matrix"] for row in m["rows"]}
    clause_ids |= {c for s in findings_summary["by_signature"] for c in s["clauses"]}
    case_results = sum(r["cases"] for r in a.runs) + clients["case_results"]
    return {
        "schema": BUNDLE_SCHEMA,
        "kind": BUNDLE_KIND,
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "amqpspec_version": __version__,
        "spark": {},
        "dataset": {"dir": "dataset", "results_rows": a.results_rows() + clients["results_rows"],
                    "case_results": case_results,
                    "findings": findings_summary["total"]},
        "inputs": inputs_section,
        "targets": targets,
        "runs": a.runs_listed(),
        "runs_total": len(a.runs),
        "verdict_counts": a.verdict_counts(),
        "compliance": a.compliance(),
        "matrix": matrix,
        "history": a.history(),
        "changes": a.changes(),
        "flaky": flaky,
        "flaky_total": flaky_total,
        "findings": findings_summary,
        "unknown": a.unknown(),
        "clauses": a.clause_texts(clause_ids),
        "junit": [],
        "limits": limits.to_json(),
        "clients": clients,
    }


Located = dict[str, dict[int, tuple[str, str, str, str]]]   # file -> line -> (run, product, version, protocol)


def _locate_latest(results: "DataFrame", targets: list[dict[str, Any]]) -> Located:
    """Where the records of each target's latest run are (one action, asked with the aggregates)."""
    from pyspark.sql import functions as F

    keys = [agg.SEP.join((t["latest_run"], t["product"], t["version"], t["protocol"])) for t in targets]
    if not keys:
        return {}
    where = agg._run_key_col().isin(keys) & (F.col("clause_pos") == 0)
    located = results.where(where).select("run_id", "product", "version", "protocol", "source_file",
                                          "source_line").collect()
    wanted: Located = {}
    for row in located:
        wanted.setdefault(row["source_file"], {})[row["source_line"]] = (
            row["run_id"], row["product"], row["version"], row["protocol"])
    return wanted


def _write_junit(wanted: Located, bundle: dict[str, Any], out: Path,
                 strict: bool) -> list[tuple[str, str, Path]]:
    """JUnit XML of each target's latest run, built from the original records (with transcripts)."""
    from amqpspec.reports.junit import write_junit

    from amqpspec.result import Result

    latest = {(t["latest_run"], t["product"], t["version"], t["protocol"]): t["key"] for t in bundle["targets"]}
    if not latest:
        return []
    records: dict[tuple[str, str, str, str], list[Result]] = {k: [] for k in latest}
    for path, lines in wanted.items():
        try:
            # parsed once per process: the HTML report quotes the same records (records.py)
            found = source_records.read_lines(path, set(lines))
        except OSError:
            continue   # not a local file (or moved since): JUnit is a convenience, the dataset is complete
        for number in sorted(found):
            try:
                records[lines[number]].append(Result.from_json(found[number]))
            except (ValueError, TypeError, KeyError, AttributeError):
                continue   # already reported as bad input; the dataset row stays
    written = []
    folder = out / "junit"
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)
    for run_key, key in latest.items():
        recs = records.get(run_key) or []
        if not recs:
            continue
        path = folder / f"{_slug(f'{run_key[1]}-{run_key[2]}-{run_key[3]}')}.xml"
        write_junit(recs, path, suite_name=f"amqpspec {key}", strict=strict, properties={"run_id": run_key[0]})
        written.append((key, run_key[0], path))
    return written
