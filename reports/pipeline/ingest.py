"""Reading result files (JSON lines) and finding files (one JSON document each) into Spark.

Why it looks the way it does:

- Nothing is lost silently and nothing crashes the job. Every line of every result file ends
  up either as a record or as a *bad entry* (file, 1-based line, reason, first 120
  characters). Whole files that cannot be read (missing, empty, binary) are bad entries too.
- Line numbers must be exact, so a file is read whole (``wholetext``) and split in the JVM
  with ``posexplode``: Spark's line reader would split big files across tasks and lose the
  numbering. A result file is one run (hundreds of records, a few MB), so this costs nothing;
  a single file larger than ~1 GB would need more executor memory.
- Everything runs in the JVM (``from_json`` with a schema, no Python UDF), so executors on a
  cluster need no Python and the parse is as fast as Spark's own JSON reader.
- A line is parsed twice only when the typed parse fails: the second parse, with every field
  as a string, tells a syntax error from a field of the wrong type. A record whose required
  fields (case, verdict) are fine but another field has the wrong type is *kept* with that
  field emptied, and reported.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from amqpspec.result import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)
EXCERPT_CHARS = 120
RESULT_GLOBS = ("*.jsonl",)
FINDING_GLOBS = ("*.json",)
_CORRUPT = "_corrupt"
_SNIFF_BYTES = 8192
# Spark expands globs in the paths it is given; a file named "run[1].jsonl" is taken literally
_GLOB_CHARS = re.compile(r"[\\*?\[\]{}]")


@dataclass
class InputFile:
    """One file to read: ``path`` is what the user sees, ``uri`` what Spark opens."""

    path: str
    kind: str            # "results" | "findings"
    uri: str
    local: bool = True


@dataclass
class BadInput:
    """One thing not taken as it was: a whole file (line None) or one line of a result file."""

    path: str
    line: int | None
    kind: str
    reason: str
    excerpt: str | None = None
    action: str = "skipped"   # "skipped" (not in the dataset) or "kept" (in it, some fields emptied)

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "kind": self.kind, "reason": self.reason,
                "action": self.action, "excerpt": self.excerpt}


@dataclass
class Inputs:
    """The files the job will read, and those it already knows it cannot."""

    files: list[InputFile] = field(default_factory=list)
    bad: list[BadInput] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[InputFile]:
        return [f for f in self.files if f.kind == kind]


def _is_remote(arg: str) -> bool:
    return "://" in arg and not arg.startswith("file://")


def _sniff_binary(path: Path) -> str | None:
    """A reason when the file is clearly not text (compressed or binary), else None."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        return f"unreadable file: {exc.strerror or exc}"
    if head.startswith(b"\x1f\x8b"):
        return "not a text file: gzip data (decompress it first)"
    if head.startswith((b"PK\x03\x04", b"BZh", b"\xfd7zXZ", b"\x28\xb5\x2f\xfd")):
        return "not a text file: an archive or compressed data"
    if b"\x00" in head:
        return "not a text file: binary data (NUL bytes)"
    return None


def discover_inputs(results: Sequence[str], findings: Sequence[str] = ()) -> Inputs:
    """Expands the command-line arguments into files; records every one that cannot be read.

    Directories are searched recursively (``*.jsonl`` for results, ``*.json`` for findings),
    in sorted order so runs are reproducible. Remote URIs (hdfs://, s3a://...) are passed to
    Spark unchecked.
    """
    out = Inputs()
    seen: dict[str, str] = {}
    for kind, args, globs in (("results", results, RESULT_GLOBS), ("findings", findings, FINDING_GLOBS)):
        for arg in args:
            if _is_remote(arg):
                out.files.append(InputFile(arg, kind, arg, local=False))
                continue
            path = Path(arg[len("file://"):] if arg.startswith("file://") else arg)
            if path.is_dir():
                found = sorted({p for g in globs for p in path.rglob(g) if p.is_file()})
                if not found:
                    out.bad.append(BadInput(str(path), None, kind,
                                            f"no {kind} files ({', '.join(globs)}) in this directory"))
                candidates = found
            elif path.exists():
                candidates = [path]
            else:
                out.bad.append(BadInput(str(path), None, kind, "file not found"))
                continue
            for candidate in candidates:
                _add_local(out, seen, candidate, kind)
    return out


def _add_local(out: Inputs, seen: dict[str, str], path: Path, kind: str) -> None:
    shown = str(path)
    real = os.path.realpath(path)
    if real in seen:
        out.bad.append(BadInput(shown, None, kind, f"duplicate input: the same file as {seen[real]}, read once"))
        return
    seen[real] = shown
    try:
        size = path.stat().st_size
    except OSError as exc:
        out.bad.append(BadInput(shown, None, kind, f"unreadable file: {exc.strerror or exc}"))
        return
    if size == 0:
        out.bad.append(BadInput(shown, None, kind, "empty file"))
        return
    if not os.access(path, os.R_OK):
        out.bad.append(BadInput(shown, None, kind, "unreadable file: permission denied"))
        return
    problem = _sniff_binary(path)
    if problem:
        out.bad.append(BadInput(shown, None, kind, problem))
        return
    out.files.append(InputFile(shown, kind, "file://" + _GLOB_CHARS.sub(r"\\\g<0>", real)))


def input_bytes(inputs: Inputs) -> int | None:
    """The size of the files to read (sizes a local Spark session); None when one is remote."""
    total = 0
    for f in inputs.files:
        if not f.local:
            return None
        try:
            total += os.path.getsize(f.path)
        except OSError:
            pass
    return total


# --------------------------------------------------------------------------- schemas

def result_schema():  # -> StructType
    """The fields of a result record the dataset uses (transcripts are not parsed at all)."""
    from pyspark.sql import types as T

    s, l, d, b = T.StringType(), T.LongType(), T.DoubleType(), T.BooleanType()
    check = T.StructType([T.StructField("clauses", T.ArrayType(s)), T.StructField("verdict", s)])
    return T.StructType([
        T.StructField("case", s), T.StructField("title", s), T.StructField("section", s),
        T.StructField("section_title", s), T.StructField("clauses", T.ArrayType(s)),
        T.StructField("protocol", s), T.StructField("verdict", s), T.StructField("reason", s),
        T.StructField("close", T.StructType([
            T.StructField("who", s), T.StructField("how", s), T.StructField("code", l),
            T.StructField("condition", s), T.StructField("matched", b)])),
        T.StructField("target", s),
        T.StructField("broker", T.StructType([
            T.StructField("product", s), T.StructField("version", s), T.StructField("platform", s)])),
        T.StructField("duration_s", d), T.StructField("seed", l),
        T.StructField("evidence", T.StructType([
            T.StructField("expected", s), T.StructField("observed", s),
            T.StructField("checks", T.ArrayType(check))])),
        T.StructField("replay", s), T.StructField("run_id", s), T.StructField("started_at", s),
        T.StructField("deviation", s), T.StructField("schema", l), T.StructField("kind", s),
        # whose conduct the record judges: absent (a broker) or "client" with the library (amqpspec client)
        T.StructField("role", s), T.StructField("driver", s), T.StructField("library", s),
        T.StructField("library_version", s),
    ])


def finding_schema():  # -> StructType
    """The finding file format shared with the fuzzer (see the FINDINGS FORMAT in fuzz/)."""
    from pyspark.sql import types as T

    s, l = T.StringType(), T.LongType()
    return T.StructType([
        T.StructField("schema", l), T.StructField("kind", s),
        T.StructField("signature", T.StructType([
            T.StructField("protocol", s), T.StructField("target", s), T.StructField("violation", s),
            T.StructField("code", l), T.StructField("condition", s), T.StructField("state", s)])),
        T.StructField("signature_id", s),
        T.StructField("broker", T.StructType([
            T.StructField("product", s), T.StructField("version", s), T.StructField("platform", s)])),
        T.StructField("target_url", s), T.StructField("seed", l),
        T.StructField("first_seen", s), T.StructField("last_seen", s), T.StructField("count", l),
        T.StructField("clauses", T.ArrayType(s)),
        T.StructField("input", T.StructType([T.StructField("hex", s), T.StructField("summary", s)])),
        T.StructField("replay", s), T.StructField("run_id", s),
    ])


def _with_corrupt(schema):  # StructType -> StructType
    from pyspark.sql import types as T

    return T.StructType(list(schema.fields) + [T.StructField(_CORRUPT, T.StringType())])


def _as_strings(schema):  # StructType -> StructType, every top-level field a string
    from pyspark.sql import types as T

    return T.StructType([T.StructField(f.name, T.StringType()) for f in schema.fields]
                        + [T.StructField(_CORRUPT, T.StringType())])


_JSON_OPTIONS = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}


# --------------------------------------------------------------------------- reading

def _read_whole(spark: "SparkSession", files: Iterable[InputFile]) -> "DataFrame":
    """One row per file: (source_file: local path or URI, value: the whole text)."""
    from pyspark.sql import functions as F

    uris = [f.uri for f in files]
    df = spark.read.text(uris, wholetext=True)
    # _metadata.file_path is a URI (file:/tmp/a%20b.jsonl); the dataset stores a plain path.
    # '+' is protected first: url_decode is form decoding, where '+' would become a space.
    raw = F.col("_metadata.file_path")
    local = F.regexp_replace(raw, "^file:(//)?", "")
    decoded = F.url_decode(F.regexp_replace(local, r"\+", "%2B"))
    source = F.when(raw.startswith("file:"), decoded).otherwise(raw)
    return df.select(source.alias("source_file"), F.col("value"))


def _parse_problem(text: "Column", typed: "Column", raw: "Column", schema, unterminated: "Column | None") -> tuple["Column", "Column"]:
    """(reason a parse failed or None, comma-separated bad fields or None)."""
    from pyspark.sql import functions as F

    starts_object = text.rlike(r"^\s*\{")
    valid_json = F.get_json_object(text, "$").isNotNull() | (F.trim(text) == F.lit("null"))
    syntax = F.when(F.instr(text, "\ufffd") > 0, F.lit("not UTF-8: invalid bytes, line unreadable"))
    if unterminated is not None:
        syntax = syntax.when(unterminated, F.lit("truncated line (no newline at end of file)"))
    syntax = syntax.otherwise(F.lit("invalid JSON"))
    bad_fields = F.array_compact(F.array(*[
        F.when(raw[f.name].isNotNull() & typed[f.name].isNull(), F.lit(f.name)) for f in schema.fields]))
    reason = (F.when(typed[_CORRUPT].isNull(), F.lit(None))
              .when(~starts_object & valid_json, F.lit("not a JSON object"))
              .when(raw[_CORRUPT].isNotNull(), syntax)
              .when(F.size(bad_fields) == 0, F.lit("invalid JSON")))
    fields = F.when(typed[_CORRUPT].isNotNull() & raw[_CORRUPT].isNull() & (F.size(bad_fields) > 0),
                    F.concat_ws(", ", bad_fields))
    return reason, fields


def read_results(spark: "SparkSession", files: Sequence[InputFile]) -> "DataFrame":
    """Every non-blank line of the result files, parsed and classified.

    Columns: source_file, source_line (1-based), excerpt, status ("ok" | "kept" |
    "skipped"), reason (null when ok), r (the typed record struct, see result_schema).
    """
    from pyspark.sql import functions as F

    schema = result_schema()
    whole = _read_whole(spark, files)
    # split once, count once, then explode: an expression next to the generator would be
    # evaluated again for every line of the file (quadratic in the file size)
    split = whole.select("source_file", F.split(F.col("value"), "\n").alias("parts"))
    split = split.select("source_file", "parts", F.size("parts").alias("n"))
    lines = split.select("source_file", "n", F.posexplode("parts").alias("pos", "line"))
    # the CR of a CRLF line end, dropped without a regular expression: a regex walks every
    # character of every line, and a line holding a transcript is megabytes (measured: a
    # sixth of the parse's CPU on one run's 49 MB)
    raw_line = F.col("line")
    line = F.when(raw_line.endswith("\r"), F.expr("substring(line, 1, length(line) - 1)")).otherwise(raw_line)
    lines = lines.select(
        "source_file", (F.col("pos") + 1).alias("source_line"), line.alias("line"),
        ((F.col("pos") == F.col("n") - 1)).alias("unterminated"),
    ).where(F.trim(F.col("line")) != "")

    typed = F.from_json(F.col("line"), _with_corrupt(schema), _JSON_OPTIONS)
    parsed = lines.select("source_file", "source_line", "line", "unterminated", typed.alias("r"))
    raw = F.when(F.col("r")[_CORRUPT].isNotNull(),
                 F.from_json(F.col("line"), _as_strings(schema), _JSON_OPTIONS))
    parsed = parsed.withColumn("raw", raw)
    syntax_reason, bad_fields = _parse_problem(F.col("line"), F.col("r"), F.col("raw"), schema, F.col("unterminated"))

    r = F.col("r")
    verdict = F.lower(F.trim(r["verdict"]))
    record_reason = (
        F.when(syntax_reason.isNotNull(), syntax_reason)
        .when((r["kind"] == "finding"), F.lit("not a result record: a fuzz finding (pass finding directories with --findings)"))
        .when(r["case"].isNull() & r["verdict"].isNull(), F.lit("not a result record: no case and no verdict"))
        .when(r["case"].isNull() | (F.trim(r["case"]) == ""), F.lit("missing field: case"))
        .when(r["verdict"].isNull(), F.lit("missing field: verdict"))
        .when(~verdict.isin(*VERDICTS), F.concat(F.lit("unknown verdict: "), F.substring(r["verdict"], 1, 40)))
    )
    out = parsed.select(
        "source_file", "source_line",
        F.substring(F.col("line"), 1, EXCERPT_CHARS).alias("excerpt"),
        F.when(record_reason.isNotNull(), F.lit("skipped"))
         .when(bad_fields.isNotNull(), F.lit("kept")).otherwise(F.lit("ok")).alias("status"),
        F.coalesce(record_reason, F.concat(F.lit("bad field: "), bad_fields)).alias("reason"),
        r.withField("verdict", verdict).dropFields(_CORRUPT).alias("r"),
    )
    return out


def read_findings(spark: "SparkSession", files: Sequence[InputFile]) -> "DataFrame":
    """Every finding file, parsed and classified (one row per file; no line numbers).

    Columns: source_file, excerpt, status, reason, f (the typed finding struct).
    """
    from pyspark.sql import functions as F

    schema = finding_schema()
    whole = _read_whole(spark, files)
    typed = F.from_json(F.col("value"), _with_corrupt(schema), _JSON_OPTIONS)
    parsed = whole.select("source_file", "value", typed.alias("f"))
    raw = F.when(F.col("f")[_CORRUPT].isNotNull(), F.from_json(F.col("value"), _as_strings(schema), _JSON_OPTIONS))
    parsed = parsed.withColumn("raw", raw)
    syntax_reason, bad_fields = _parse_problem(F.col("value"), F.col("f"), F.col("raw"), schema, None)
    f = F.col("f")
    reason = (
        F.when(syntax_reason.isNotNull(), syntax_reason)
        .when(F.coalesce(f["kind"], F.lit("")) != "finding",
              F.concat(F.lit("not a finding: kind is "),
                       F.coalesce(F.concat(F.lit("'"), F.substring(f["kind"], 1, 40), F.lit("'")), F.lit("missing"))))
        .when(f["signature_id"].isNull() | (F.trim(f["signature_id"]) == ""), F.lit("missing field: signature_id"))
        .when(f["signature"].isNull(), F.lit("missing field: signature"))
    )
    return parsed.select(
        "source_file",
        F.substring(F.regexp_replace(F.col("value"), r"\s+", " "), 1, EXCERPT_CHARS).alias("excerpt"),
        F.when(reason.isNotNull(), F.lit("skipped"))
         .when(bad_fields.isNotNull(), F.lit("kept")).otherwise(F.lit("ok")).alias("status"),
        F.coalesce(reason, F.concat(F.lit("bad field: "), bad_fields)).alias("reason"),
        f.dropFields(_CORRUPT).alias("f"),
    )
