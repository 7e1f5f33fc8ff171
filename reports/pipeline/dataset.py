"""From parsed records to the compliance dataset: one row per (run, broker, version, case, clause).

Cleaning happens here, once, so every aggregate and every user query sees the same rows:

- defaults for what older or partial records leave out (product/version "unknown", the run
  id of a record without one is its file, the protocol is inferred from the case id);
- duplicates (the same run and case twice: a file concatenated into another, a run resumed)
  keep the first occurrence and report the others;
- every clause id and case id is looked up in *this* amqpspec's catalog. Unknown ones (an
  older suite version) are kept and flagged, never dropped: the level of an unknown clause is
  null and its family ``UNKNOWN``;
- a case citing several clauses gets one row per clause with the verdict of the checks that
  cite that clause (``clause_verdict``). A check counts only against the clauses it cites: one
  citing none counts for no clause (its verdict stands on the case's own ``verdict``). A clause
  no check cites, while checks decided something, is passed: nothing observed contradicts it;
  a skipped or errored case, or one whose verdict no check explains, such as a broker that
  stopped serving after it, gives its verdict to every clause; a case citing none gets one
  row with clause null.

The catalog goes into the plan as two small broadcast tables built from literals: no
shuffle, no file to ship, and executors on a cluster need nothing but the JVM.
"""
from __future__ import annotations

import functools
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amqpspec.result import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

# DEFINITION: the documentation sentences cases quote (amqpspec.clauses, documentation=True) --
# definitions, and keyword sentences outside the counted rules -- reported apart from MUST/SHOULD/MAY
FAMILIES: tuple[str, ...] = ("MUST", "SHOULD", "MAY", "DEFINITION", "NONE", "UNKNOWN")
SEVERITY: dict[str, int] = {v.value: v.severity for v in Verdict}
UNKNOWN = "unknown"
# a password in a URL never reaches the dataset, even from a hand-edited file
_URL_PASSWORD = r"(://[^/:@\s]*):[^@/\s]*@"


@dataclass(frozen=True)
class Catalog:
    """What this amqpspec knows: clause id -> level, case id -> its own level (or "")."""

    clause_levels: dict[str, str]
    clause_protocol: dict[str, str]
    case_levels: dict[str, str]
    family_totals: dict[str, dict[str, int]]   # protocol -> family -> clauses in the catalog
    clause_families: dict[str, str] = dataclasses.field(default_factory=dict)  # clause id -> family

    @staticmethod
    def family_of(level: str | None) -> str:
        if level is None:
            return "UNKNOWN"
        return {"MUST": "MUST", "MUST NOT": "MUST", "SHOULD": "SHOULD", "SHOULD NOT": "SHOULD",
                "MAY": "MAY"}.get(level, "NONE")


@functools.lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The clause and case catalogs of the installed amqpspec (built once per process)."""
    from amqpspec import clauses
    from amqpspec.case import discover

    levels: dict[str, str] = {}
    families: dict[str, str] = {}
    protocol_of: dict[str, str] = {}
    totals: dict[str, dict[str, int]] = {}
    for protocol in clauses.PROTOCOLS:
        fam = totals.setdefault(protocol, {f: 0 for f in FAMILIES})
        for clause in clauses.by_id(protocol, extensions=True, documentation=True).values():
            levels[clause.id] = clause.level.value
            protocol_of[clause.id] = protocol
            families[clause.id] = clause_family(clause)
            fam[families[clause.id]] += 1
    cases: dict[str, str] = {}
    for protocol in clauses.PROTOCOLS:
        for role in ("broker", "client"):   # client-role cases (amqpspec client) are known cases too
            for spec in discover(protocol, role=role):
                cases[spec.id] = spec.level.value if spec.level is not None else ""
    return Catalog(levels, protocol_of, cases, totals, families)


def clause_family(clause: Any) -> str:
    """The report bucket of a clause: its level's family, or DEFINITION for a documentation
    sentence whatever its keyword (the MUST/SHOULD/MAY buckets count the catalog's clauses only)."""
    from amqpspec import clauses

    return "DEFINITION" if clauses.is_documentation(clause) else clause.level.family


def _lookup(spark: "SparkSession", mapping: dict[str, tuple[str | None, ...]], key: str,
            values: tuple[str, ...]) -> "DataFrame":
    """A table (key, *values) from one JSON literal: no Python worker on the executors, no file,
    and one py4j call instead of one per entry (a catalog has thousands)."""
    import json

    from pyspark.sql import functions as F

    doc = json.dumps([{key: k, **dict(zip(values, v))} for k, v in sorted(mapping.items())])
    schema = "array<struct<" + ",".join(f"`{name}`:string" for name in (key, *values)) + ">>"
    return spark.range(1).select(F.inline(F.from_json(F.lit(doc), schema)))


def _family(level: "Column") -> "Column":
    from pyspark.sql import functions as F

    return (F.when(level.isin("MUST", "MUST NOT"), "MUST")
            .when(level.isin("SHOULD", "SHOULD NOT"), "SHOULD")
            .when(level == "MAY", "MAY")
            .when(level == "definition", "DEFINITION")
            .otherwise("NONE"))


def _severity(verdict: "Column") -> "Column":
    from pyspark.sql import functions as F

    expr = F.when(F.lit(False), F.lit(-1))
    for name, rank in SEVERITY.items():
        expr = expr.when(verdict == name, F.lit(rank))
    return expr.otherwise(F.lit(-1))


def _verdict_of(rank: "Column") -> "Column":
    from pyspark.sql import functions as F

    expr = F.when(F.lit(False), F.lit(None).cast("string"))
    for name, value in SEVERITY.items():
        expr = expr.when(rank == value, F.lit(name))
    return expr


def stage(parsed: "DataFrame") -> "DataFrame":
    """Normalised records with their duplicate rank (``dup_rank`` 1 = first occurrence).

    Keeps every input line (skipped ones too, with ``r`` null) so that one pass over the
    input yields both the dataset and the report of what was not taken.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    r = F.col("r")
    usable = F.col("status") != "skipped"
    case_id = F.trim(r["case"])
    declared = F.trim(r["protocol"])
    protocol = (F.when(declared.isin("0-9-1", "1.0"), declared)
                .when(case_id.startswith("amqp091/"), "0-9-1")
                .when(case_id.startswith("amqp10/"), "1.0")
                .when(F.element_at(r["clauses"], 1).startswith("amqp10:"), "1.0")
                .when(F.element_at(r["clauses"], 1).rlike("^(amqp|rabbitmq)091:"), "0-9-1")
                .otherwise(F.coalesce(F.nullif(declared, F.lit("")), F.lit(UNKNOWN))))
    run_id = F.coalesce(F.nullif(F.trim(r["run_id"]), F.lit("")), F.concat(F.lit("file:"), F.col("source_file")))

    def text(c: "Column") -> "Column":
        return F.coalesce(F.nullif(F.trim(c), F.lit("")), F.lit(UNKNOWN))

    norm = F.when(usable, r.withField("case", case_id).withField("protocol", protocol).withField("run_id", run_id)
                  .withField("broker", F.struct(text(r["broker"]["product"]).alias("product"),
                                                text(r["broker"]["version"]).alias("version"),
                                                r["broker"]["platform"].alias("platform"))))
    staged = parsed.select("source_file", "source_line", "excerpt", "status", "reason", norm.alias("r"))
    key = Window.partitionBy(F.col("r.run_id"), F.col("r.case")).orderBy("source_file", "source_line")
    dup_rank = F.when(usable, F.row_number().over(key))
    first_at = F.when(usable, F.concat(F.first("source_file").over(key), F.lit(":"),
                                       F.first("source_line").over(key).cast("string")))
    return staged.select("*", dup_rank.alias("dup_rank"), first_at.alias("first_at"))


def bad_lines(staged: "DataFrame", keep_all: bool = False) -> "DataFrame":
    """Lines not taken as they were: skipped, duplicate, or kept with fields emptied.

    ``keep_all`` keeps every line, with a ``bad`` flag and the columns that tell a taken
    record (``r``, ``status``, ``dup_rank``): one pass then counts both (job._inputs_section).
    """
    from pyspark.sql import functions as F

    dup = F.coalesce(F.col("dup_rank") > 1, F.lit(False))
    is_bad = dup | (F.col("status") != "ok")
    reason = F.when(dup, F.concat(F.lit("duplicate record: same run_id and case as "), F.col("first_at"))) \
        .otherwise(F.col("reason"))
    action = F.when(dup | (F.col("status") == "skipped"), "skipped").otherwise("kept")
    columns = ["source_file", "source_line", reason.alias("reason"), action.alias("action"), "excerpt"]
    if keep_all:
        return staged.select(*columns, is_bad.alias("bad"), "r", "status", "dup_rank")
    return staged.where(is_bad).select(*columns)


def result_rows(staged: "DataFrame", catalog: Catalog) -> "DataFrame":
    """The dataset: one row per (record, clause), columns as in bundle.md "Dataset"."""
    from pyspark.sql import functions as F

    rec = staged.where((F.col("status") != "skipped") & (F.col("dup_rank") == 1))
    r = F.col("r")
    clauses = F.filter(F.coalesce(r["clauses"], F.array().cast("array<string>")),
                       lambda c: c.isNotNull() & (F.trim(c) != ""))
    exploded = rec.select(
        "source_file", "source_line", "r",
        F.posexplode_outer(F.array_distinct(F.transform(clauses, lambda c: F.trim(c)))).alias("clause_pos", "clause"),
    )
    clause = F.col("clause")
    verdict = r["verdict"]
    checks = F.coalesce(r["evidence"]["checks"],
                        F.array().cast("array<struct<clauses:array<string>,verdict:string>>"))

    def check_rank(c: "Column") -> "Column":
        return _severity(F.lower(F.trim(c["verdict"])))

    # DESIGN: every check counts only against the clauses it cites (none: against no clause)
    relevant = F.filter(checks, lambda c: F.coalesce(F.array_contains(c["clauses"], clause), F.lit(False)))
    rel_max = F.aggregate(relevant, F.lit(-1), lambda acc, c: F.greatest(acc, check_rank(c)))
    all_max = F.aggregate(checks, F.lit(-1), lambda acc, c: F.greatest(acc, check_rank(c)))
    clause_verdict = (F.when(verdict.isin("skipped", "error") | clause.isNull(), verdict)
                      .when(_severity(verdict) > all_max, verdict)
                      .when(rel_max >= 0, _verdict_of(rel_max))
                      .when(all_max >= 0, F.lit("passed"))   # checks decided other clauses, none this one
                      .otherwise(verdict))

    # the catalog joins as two small broadcast tables: a hash lookup per row (a map literal
    # would be searched linearly, thousands of comparisons per row); clauses with their level
    # and family in one table (one join, one broadcast job less in a cold JVM)
    spark = staged.sparkSession
    clause_table = {cid: (level, catalog.clause_families.get(cid)) for cid, level in catalog.clause_levels.items()}
    exploded = (exploded
                .join(F.broadcast(_lookup(spark, clause_table, "clause", ("clause_level", "clause_family"))),
                      "clause", "left")
                .join(F.broadcast(_lookup(spark, {c: (lv,) for c, lv in catalog.case_levels.items()},
                                          "case_id", ("own_level",))),
                      r["case"] == F.col("case_id"), "left"))
    clause_level = F.col("clause_level")
    case_known = F.col("case_id").isNotNull()
    own_level = F.nullif(F.col("own_level"), F.lit(""))
    clause_known = F.when(clause.isNotNull(), clause_level.isNotNull())
    level = F.when(clause.isNull(), own_level).otherwise(clause_level)
    family = (F.when(clause.isNull(), F.when(own_level.isNotNull(), _family(own_level)))
              .when(clause_level.isNull(), F.lit("UNKNOWN"))
              .otherwise(F.coalesce(F.col("clause_family"), _family(clause_level))))
    close = r["close"]
    evidence = r["evidence"]

    def url(c: "Column") -> "Column":
        return F.regexp_replace(c, _URL_PASSWORD, "$1@")

    return exploded.select(
        r["run_id"].alias("run_id"),
        r["broker"]["product"].alias("product"),
        r["broker"]["version"].alias("version"),
        r["broker"]["platform"].alias("platform"),
        r["protocol"].alias("protocol"),
        url(r["target"]).alias("target_url"),
        r["case"].alias("case"),
        r["title"].alias("title"),
        r["section"].alias("section"),
        r["section_title"].alias("section_title"),
        clause.alias("clause"),
        F.coalesce(F.col("clause_pos"), F.lit(0)).cast("int").alias("clause_pos"),
        clause_known.alias("clause_known"),
        level.alias("level"),
        family.alias("family"),
        case_known.alias("case_known"),
        verdict.alias("verdict"),
        clause_verdict.alias("clause_verdict"),
        F.coalesce(r["reason"], F.lit("")).alias("reason"),
        F.nullif(r["deviation"], F.lit("")).alias("deviation"),
        (F.coalesce(r["deviation"], F.lit("")) != "").alias("is_deviation"),
        close["who"].alias("close_who"),
        close["how"].alias("close_how"),
        close["code"].alias("close_code"),
        close["matched"].alias("close_matched"),
        F.coalesce(evidence["expected"], F.lit("")).alias("expected"),
        F.coalesce(evidence["observed"], F.lit("")).alias("observed"),
        r["duration_s"].alias("duration_s"),
        r["started_at"].try_cast("timestamp").alias("started_at"),
        r["seed"].alias("seed"),
        F.coalesce(r["replay"], F.lit("")).alias("replay"),
        r["schema"].cast("int").alias("suite_schema"),
        F.col("source_file"),
        F.col("source_line").cast("int").alias("source_line"),
        # a record without a role judges a broker; client records name the library judged
        F.coalesce(F.nullif(F.trim(r["role"]), F.lit("")), F.lit("broker")).alias("role"),
        F.nullif(r["driver"], F.lit("")).alias("driver"),
        F.nullif(r["library"], F.lit("")).alias("library"),
        F.nullif(r["library_version"], F.lit("")).alias("library_version"),
    )


def finding_rows(parsed: "DataFrame") -> "DataFrame":
    """The findings table: one row per finding file taken (see bundle.md "Dataset")."""
    from pyspark.sql import functions as F

    f = F.col("f")
    sig = f["signature"]

    def text(c: "Column") -> "Column":
        return F.coalesce(F.nullif(F.trim(c), F.lit("")), F.lit(UNKNOWN))

    return parsed.where(F.col("status") != "skipped").select(
        F.trim(f["signature_id"]).alias("signature_id"),
        text(sig["protocol"]).alias("protocol"),
        text(sig["target"]).alias("fuzz_target"),
        text(sig["violation"]).alias("violation"),
        sig["code"].alias("code"),
        sig["condition"].alias("condition"),
        sig["state"].alias("state"),
        text(f["broker"]["product"]).alias("product"),
        text(f["broker"]["version"]).alias("version"),
        f["broker"]["platform"].alias("platform"),
        F.regexp_replace(f["target_url"], _URL_PASSWORD, "$1@").alias("target_url"),
        f["seed"].alias("seed"),
        f["first_seen"].try_cast("timestamp").alias("first_seen"),
        f["last_seen"].try_cast("timestamp").alias("last_seen"),
        F.coalesce(f["count"], F.lit(1)).alias("count"),
        F.coalesce(f["clauses"], F.array().cast("array<string>")).alias("clauses"),
        f["input"]["hex"].alias("input_hex"),
        f["input"]["summary"].alias("input_summary"),
        F.coalesce(f["replay"], F.lit("")).alias("replay"),
        f["run_id"].alias("run_id"),
        F.col("source_file"),
    )


def bad_findings(parsed: "DataFrame", keep_all: bool = False) -> "DataFrame":
    """Finding files not taken as they were; ``keep_all`` as in ``bad_lines``."""
    from pyspark.sql import functions as F

    is_bad = F.col("status") != "ok"
    columns = ["source_file", F.lit(None).cast("int").alias("source_line"), "reason",
               F.when(F.col("status") == "skipped", "skipped").otherwise("kept").alias("action"), "excerpt"]
    if keep_all:
        return parsed.select(*columns, is_bad.alias("bad"), "status")
    return parsed.where(is_bad).select(*columns)
