"""The SparkSession the pipeline runs in: embedded local[*] by default, any cluster by URL.

Why a module of its own: where Spark runs is the one thing a user changes, and every choice
that depends on it (which address the driver binds to, how loud the JVM is, how many shuffle
partitions make sense) belongs in one place. The job itself never looks at the master.

Master, in order of precedence:
1. ``master`` argument (``amqpspec report --spark-master URL``);
2. a master already configured by the usual Spark environment: ``spark-submit --master``,
   ``PYSPARK_SUBMIT_ARGS``, ``spark.master`` in ``$SPARK_CONF_DIR/spark-defaults.conf``, or the
   ``MASTER`` / ``SPARK_MASTER`` environment variables;
3. ``local[*]``: an embedded Spark in this process's JVM, nothing to install beyond pyspark.

On one machine (local master, or a ``spark://`` URL on a loopback address) ``SPARK_LOCAL_IP``
defaults to 127.0.0.1 so Spark neither resolves the host name nor listens beyond loopback.
"""
from __future__ import annotations

import atexit
import ipaddress
import os
import shlex
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Mapping
from urllib.parse import urlsplit

from amqpspec.errors import UsageError

from . import jvmcache

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
PARTITION_INPUT_BYTES = 64 << 20
SMALL_INPUT_BYTES = 1 << 30
APP_NAME = "amqpspec-report"

# Loud enough to see real trouble, quiet enough that a report run prints only its own lines.
_LOG4J2 = """\
rootLogger.level = {level}
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark %p %c{{1}}: %m%n
logger.parquet.name = org.apache.parquet
logger.parquet.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
"""


def _configured_master() -> str | None:
    """A master the usual Spark environment already names, or None."""
    submit_args = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    if submit_args:
        words = shlex.split(submit_args)
        for i, word in enumerate(words):
            if word == "--master" and i + 1 < len(words):
                return words[i + 1]
            if word.startswith("--master="):
                return word.split("=", 1)[1]
    for name in ("MASTER", "SPARK_MASTER"):
        if os.environ.get(name):
            return os.environ[name]
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (
        os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None)
    if conf_dir:
        defaults = Path(conf_dir) / "spark-defaults.conf"
        try:
            for line in defaults.read_text(encoding="utf-8").splitlines():
                parts = line.split(None, 1)
                if len(parts) == 2 and parts[0] == "spark.master":
                    return parts[1].strip()
        except OSError:
            pass
    return None


def resolve_master(master: str | None) -> str:
    """The master URL the session will use (see the module docstring for the order)."""
    chosen = (master or "").strip() or _configured_master() or DEFAULT_MASTER
    if not (chosen.startswith(("local", "spark://", "yarn", "k8s://", "mesos://"))):
        raise UsageError(
            f"--spark-master {chosen!r} is not a Spark master URL: use local[*], local[N], "
            "spark://HOST:PORT (standalone), yarn or k8s://...")
    return chosen


def is_single_machine(master: str) -> bool:
    """True when the driver and every executor run on this host (local, or a loopback cluster)."""
    if master.startswith("local"):
        return True
    if master.startswith("spark://"):
        hosts = [urlsplit("spark://" + part).hostname or "" for part in master[len("spark://"):].split(",")]
        return all(_is_loopback(h) for h in hosts)
    return False


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_runtime() -> None:
    """Clear one-line errors for the two things Spark cannot start without; imports PySpark's
    session module (what starting a session needs first)."""
    try:
        import pyspark.sql  # noqa: F401
    except ImportError:
        raise UsageError("the report pipeline needs PySpark: pip install 'pyspark>=4.0'") from None
    java_home = os.environ.get("JAVA_HOME")
    if not (java_home and Path(java_home, "bin", "java").exists()) and shutil.which("java") is None:
        raise UsageError("Spark needs Java 17 or later and none was found: install a JRE "
                         "(Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME")


def _log4j_file() -> str:
    level = os.environ.get("AMQPSPEC_SPARK_LOG_LEVEL", "error").lower()
    if level not in ("trace", "debug", "info", "warn", "error", "fatal", "off"):
        level = "error"
    fd, path = tempfile.mkstemp(prefix="amqpspec-log4j2-", suffix=".properties")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J2.format(level=level))
    atexit.register(_unlink_quietly, path)
    return path


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def shuffle_partitions(url: str, input_bytes: int | None) -> int | None:
    """Shuffle partitions for a local master, from the input's size; None leaves Spark's (cluster).

    Spark's 200 cost a task each per shuffle even for one run's few hundred records; after
    parsing, a result file shrinks to about a tenth (the transcripts are not kept), so one
    partition per 64 MB of input, at most four per core, keeps each task a useful size.
    """
    if not url.startswith("local"):
        return None
    most = max(4, 4 * (os.cpu_count() or 1))
    if input_bytes is None:
        return most
    return max(1, min(most, -(-input_bytes // PARTITION_INPUT_BYTES)))


def jit_options(url: str, input_bytes: int | None) -> list[str]:
    """Driver JVM options for a local job on a small input: compile with C1 only, serial GC.

    A report of a few runs is over before C2's optimised code pays for its compilation, which
    on 2 cores competes with the job for the CPU (measured: half the JVM's CPU time goes away);
    the parallel collector's threads likewise. Past SMALL_INPUT_BYTES, or on a cluster (the
    executors do the work there), the JVM's defaults stay.
    """
    if not url.startswith("local") or input_bytes is None or input_bytes > SMALL_INPUT_BYTES:
        return []
    return ["-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]


def sql_settings(url: str, input_bytes: int | None) -> dict[str, str]:
    """SQL settings that cost a cold driver JVM seconds and change nothing the job computes.

    - ICU case mappings off: ``lower()`` (the verdicts are lower-cased) then uses the JVM's
      own, not ICU's, whose first use builds title-case tables over the whole Unicode range
      (measured: a second or two of CPU on 2 cores, in the first query). The job lower-cases
      only verdict names, which ICU and the JVM map alike; everywhere, so a local and a
      cluster report read the same input alike.
    - PySpark's DataFrame debugging off: with it on (Spark 4's default), every Column and
      function call walks the Python stack and makes four more round trips to the JVM to
      record its call site for error messages (measured: 7,800 round trips instead of 2,800
      to build the dataset's plan, about 1 s of a 2-core report).
      The job's errors are reported by the CLI as one line anyway.
    - A local job on a small input: plan descriptions cut to 2 kB. Spark renders every
      query's physical plan as text for its listeners even with the UI off, and the catalog
      joins as literals of thousands of entries (several hundred kB of plan text per query).
    """
    settings = {"spark.sql.icu.caseMappings.enabled": "false",
                "spark.python.sql.dataFrameDebugging.enabled": "false"}
    if url.startswith("local") and input_bytes is not None and input_bytes <= SMALL_INPUT_BYTES:
        settings["spark.sql.maxPlanStringLength"] = "2048"
    return settings


def create_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                   app_name: str = APP_NAME, input_bytes: int | None = None) -> "SparkSession":
    """Starts (or joins) the SparkSession the job runs in.

    ``conf`` entries (``--conf KEY=VALUE``) win over the defaults set here. If a session is
    already active in this process (tests, ``spark-submit``), it is reused as it is: Spark
    cannot change the master of a running JVM, so ``master`` is then ignored. ``input_bytes``
    (the size of the input files, None when unknown) sizes a local session: shuffle
    partitions and the JIT (see ``shuffle_partitions`` and ``jit_options``).
    """
    check_runtime()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    url = resolve_master(master)
    if is_single_machine(url):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    log4j = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    driver_java = " ".join([log4j, *jit_options(url, input_bytes)])
    settings: dict[str, str] = {
        "spark.ui.enabled": "false",              # no web UI port to bind, faster start
        "spark.ui.showConsoleProgress": "false",  # the CLI prints its own progress
        "spark.sql.session.timeZone": "UTC",      # result timestamps are UTC; so are the aggregates
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.extraJavaOptions": driver_java,
        "spark.executor.extraJavaOptions": log4j,
    }
    settings.update(sql_settings(url, input_bytes))
    partitions = shuffle_partitions(url, input_bytes)
    if partitions is not None:
        settings["spark.sql.shuffle.partitions"] = str(partitions)
        if input_bytes is not None:   # a small input: no empty tasks for the tiny literal tables either
            settings["spark.default.parallelism"] = str(partitions)
    if url.startswith("local"):
        settings["spark.driver.memory"] = os.environ.get("AMQPSPEC_SPARK_DRIVER_MEMORY", "2g")
    if os.environ.get("SPARK_LOCAL_IP") and is_single_machine(url):
        settings["spark.driver.host"] = os.environ["SPARK_LOCAL_IP"]
        settings["spark.driver.bindAddress"] = os.environ["SPARK_LOCAL_IP"]
    settings.update(conf or {})
    # the class archive is keyed on the options the user's --conf may have replaced
    archive = jvmcache.driver_options(settings["spark.driver.extraJavaOptions"],
                                      settings.get("spark.driver.extraClassPath", ""))
    try:
        session = _build(app_name, url, settings, archive)
    except Exception as exc:  # py4j / JVM start failures: one line, not a Java stack
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"cannot start Spark with master {url}: {first}") from None
    session.sparkContext.setLogLevel(os.environ.get("AMQPSPEC_SPARK_LOG_LEVEL", "ERROR").upper())
    return session


def default_class_archive(input_bytes: int | None) -> Path | None:
    """The class archive a report of an input this size maps (or writes) with the default
    master and no ``--conf``: keyed on :func:`create_session`'s driver options, of which only
    the JIT's count (the logging file is a system property, left out of the key)."""
    return jvmcache.archive_path(" ".join(jit_options(resolve_master(None), input_bytes)))


def _build(app_name: str, url: str, settings: dict[str, str], archive: list[str]) -> "SparkSession":
    """The session, with the class archive's options; without them if the JVM refuses them."""
    from pyspark.sql import SparkSession

    def build(extra: list[str]) -> "SparkSession":
        builder = SparkSession.builder.appName(app_name).master(url)
        for key, value in settings.items():
            if key == "spark.driver.extraJavaOptions" and extra:
                value = " ".join([value, *extra]).strip()
            builder = builder.config(key, value)
        return builder.getOrCreate()

    if not archive:
        return build([])
    try:
        return build(archive)
    except Exception:
        jvmcache.forget_pending()
        return build([])


def parse_conf(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """``--conf KEY=VALUE`` options as a dict, with a clear error for a malformed one."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {pair!r}: expected KEY=VALUE, e.g. spark.driver.memory=4g")
        out[key.strip()] = value
    return out
