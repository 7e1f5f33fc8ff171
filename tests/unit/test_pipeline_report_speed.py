"""What makes ``amqpspec report`` quick on one run's results, without starting a JVM:
the local session sized from the input (shuffle partitions, C1-only JIT), the driver's class
archive (written once under a temporary name, then mapped), and the stage display.
"""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from amqpspec.reports.pipeline import jvmcache
from amqpspec.reports.pipeline.progress import Stages
from amqpspec.reports.pipeline.session import SMALL_INPUT_BYTES, jit_options, shuffle_partitions, sql_settings
from amqpspec.reports.report_progress import StageDisplay

ONE_RUN = 13 << 20    # a 0-9-1 run against RabbitMQ with its transcripts: about 13 MB


def test_a_small_local_input_gets_one_shuffle_partition_a_cluster_keeps_its_own():
    assert shuffle_partitions("local[*]", ONE_RUN) == 1
    assert shuffle_partitions("local[*]", 0) == 1
    most = max(4, 4 * (os.cpu_count() or 1))
    assert shuffle_partitions("local[*]", None) == most          # unknown size (remote input)
    assert shuffle_partitions("local[*]", 100 << 30) == most
    assert shuffle_partitions("spark://10.0.0.5:7077", ONE_RUN) is None


def test_c1_only_jit_for_a_small_local_input_only():
    assert "-XX:TieredStopAtLevel=1" in jit_options("local[*]", ONE_RUN)
    assert jit_options("local[*]", SMALL_INPUT_BYTES + 1) == []
    assert jit_options("local[*]", None) == []
    assert jit_options("spark://127.0.0.1:7077", ONE_RUN) == []


def test_icu_case_mappings_off_everywhere_plan_text_cut_for_a_small_local_input_only():
    for url, size in (("local[*]", ONE_RUN), ("local[2]", None), ("spark://10.0.0.5:7077", ONE_RUN)):
        assert sql_settings(url, size)["spark.sql.icu.caseMappings.enabled"] == "false"
        assert sql_settings(url, size)["spark.python.sql.dataFrameDebugging.enabled"] == "false"
    assert sql_settings("local[*]", ONE_RUN)["spark.sql.maxPlanStringLength"] == "2048"
    assert "spark.sql.maxPlanStringLength" not in sql_settings("local[*]", SMALL_INPUT_BYTES + 1)
    assert "spark.sql.maxPlanStringLength" not in sql_settings("local[*]", None)
    assert "spark.sql.maxPlanStringLength" not in sql_settings("spark://127.0.0.1:7077", ONE_RUN)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("AMQPSPEC_SPARK_CDS", raising=False)
    monkeypatch.setattr(jvmcache, "_pending", {})
    monkeypatch.setattr(jvmcache, "_stop_gateway", lambda: None)   # no JVM in these tests
    if jvmcache.archive_key("") is None:
        pytest.skip("no java on this machine")
    return tmp_path / "amqpspec"


def test_archive_key_ignores_system_properties_but_not_vm_options():
    if jvmcache.archive_key("") is None:
        pytest.skip("no java on this machine")
    base = jvmcache.archive_key("-Dlog4j2.configurationFile=file:/tmp/amqpspec-log4j2-abc.properties")
    assert base == jvmcache.archive_key("-Dlog4j2.configurationFile=file:/tmp/amqpspec-log4j2-xyz.properties")
    assert base != jvmcache.archive_key("-XX:TieredStopAtLevel=1")


def test_first_run_writes_the_archive_under_a_temporary_name_then_later_runs_map_it(cache):
    first = jvmcache.driver_options("-XX:+UseSerialGC")
    written = [o for o in first if o.startswith("-XX:ArchiveClassesAtExit=")]
    assert written and "-Xlog:cds*=off" in first
    tmp = Path(written[0].split("=", 1)[1])
    assert tmp.suffix == ".tmp" and tmp.parent == cache
    tmp.write_bytes(b"archive")        # what the JVM writes as it exits
    jvmcache.finish_pending()
    archives = list(cache.glob("*.jsa"))
    assert len(archives) == 1 and not tmp.exists()
    again = jvmcache.driver_options("-XX:+UseSerialGC")
    assert f"-XX:SharedArchiveFile={archives[0]}" in again and "-Xshare:auto" in again


def test_no_archive_kept_when_the_jvm_wrote_none(cache):
    jvmcache.driver_options("")
    jvmcache.finish_pending()
    assert not list(cache.glob("*.jsa")) and not list(cache.glob("*.tmp"))


def test_only_the_most_recently_used_archives_are_kept(cache):
    cache.mkdir(parents=True)
    for i in range(5):
        old = cache / f"spark-driver-old{i}.jsa"
        old.write_bytes(b"x")
        os.utime(old, (1000 + i, 1000 + i))
    options = jvmcache.driver_options("-XX:+UseParallelGC")
    Path(options[0].split("=", 1)[1]).write_bytes(b"archive")
    jvmcache.finish_pending()
    left = sorted(p.name for p in cache.glob("*.jsa"))
    assert len(left) == jvmcache.KEEP_ARCHIVES
    assert "spark-driver-old4.jsa" in left and "spark-driver-old0.jsa" not in left


def test_archive_can_be_turned_off(cache, monkeypatch):
    monkeypatch.setenv("AMQPSPEC_SPARK_CDS", "off")
    assert jvmcache.driver_options("") == []


def test_stages_are_timed_and_shown_one_line_each_when_not_a_terminal():
    out = io.StringIO()
    display = StageDisplay(Console(file=out, force_terminal=False, width=200))
    stages = Stages(display)
    with stages.stage("dataset_s", "read the input, write the dataset"):
        display.note("reading 1 result files")
    with pytest.raises(RuntimeError):
        with stages.stage("aggregates_s", "aggregate"):
            raise RuntimeError("boom")
    lines = out.getvalue().splitlines()
    assert lines[0] == "reading 1 result files"
    assert lines[1].startswith("stage: read the input, write the dataset: ") and lines[1].endswith("s")
    assert len(lines) == 2                              # a stage that failed is not shown as done
    assert set(stages.timings) == {"dataset_s"}


# ---------------------------------------------------------------------------- amqpspec spark prepare

def _prepare(monkeypatch, run=None):
    from click.testing import CliRunner

    from amqpspec.reports.warm import cli as spark_cli

    def no_report(*args, **kwargs):   # the archive is there, or is off: no report may be started
        raise AssertionError("a report was started")

    monkeypatch.setattr(spark_cli.subprocess, "run", run or no_report)
    monkeypatch.setattr("amqpspec.reports.pipeline.session.check_runtime", lambda: None)
    return CliRunner().invoke(spark_cli.spark, ["prepare"])


def _sample_archive() -> Path:
    from amqpspec.reports.pipeline import session
    from amqpspec.reports.warm import channel

    path = session.default_class_archive(channel.WARMUP_SAMPLE.stat().st_size)
    assert path is not None
    return path


def test_prepare_does_nothing_when_the_archive_is_there(cache, monkeypatch):
    path = _sample_archive()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"archive")
    result = _prepare(monkeypatch)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"class archive ready: {path}"


def test_prepare_does_nothing_when_archives_are_off(cache, monkeypatch):
    monkeypatch.setenv("AMQPSPEC_SPARK_CDS", "off")
    result = _prepare(monkeypatch)
    assert result.exit_code == 0 and "off" in result.output


def test_prepare_runs_a_report_of_the_sample_and_says_when_it_wrote_nothing(cache, monkeypatch):
    import subprocess

    seen: list[list[str]] = []

    def report(argv, **kwargs):
        seen.append(argv)
        assert kwargs["env"]["AMQPSPEC_KEEP_WARM"] == "0"    # a process of its own writes the archive
        return subprocess.CompletedProcess(argv, 2, "", "Error: cannot start Spark\n")

    result = _prepare(monkeypatch, report)
    assert result.exit_code == 2
    assert result.output.strip().splitlines()[-1].endswith(
        "the class archive was not written (report exit 2: Error: cannot start Spark)")
    assert seen and seen[0][3] == "report" and seen[0][4].endswith("warmup.jsonl")

    def writes(argv, **kwargs):
        _sample_archive().parent.mkdir(parents=True, exist_ok=True)
        _sample_archive().write_bytes(b"x" * 2_000_000)
        return subprocess.CompletedProcess(argv, 0, "", "")

    result = _prepare(monkeypatch, writes)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"class archive written: {_sample_archive()} (2 MB")
