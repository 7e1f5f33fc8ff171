"""A class-data-sharing (CDS) archive for the driver JVM, kept in the user's cache.

Why: a report of one run spends most of its time not on data but on the JVM loading and
verifying some 20,000 Spark classes, then interpreting them cold (measured on 2 cores: JVM,
SparkContext and SparkSession up, and a first query, in 32 s cold against 10 s from an
archive; see bench/README.md). Java 13+ can write the classes an application loaded into an
archive when it exits (``-XX:ArchiveClassesAtExit``) and map that archive at the next start
(``-XX:SharedArchiveFile``): the first report pays a few seconds more at exit, every later one
starts faster. Nothing changes in what Spark computes; the archive only replaces class loading.

The archive is tied to the Java runtime, the Spark jars and the JVM options that decide the
class path; all of them are in its file name, so another Java, pyspark or class path uses
(and writes) another archive. The JVM checks the archive itself too, and with
``-Xshare:auto`` starts without it (silently: ``-Xlog:cds*=off``) when it does not match.
``AMQPSPEC_SPARK_CDS=off`` turns it off.

The archive is written under a temporary name and renamed into place only once the JVM has
exited (``finish_pending``, also run at interpreter exit), so a concurrent run never maps a
half-written file.
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

_PREFIX = "spark-driver-"
_QUIET = "-Xlog:cds*=off"
KEEP_ARCHIVES = 3
STALE_TMP_S = 86400
EXIT_WAIT_S = 120.0        # writing the archive takes seconds; a JVM that hangs on exit is not waited for beyond
_pending: dict[str, Path] = {}   # the temporary archive this process's JVM will write -> its final name


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "amqpspec"


def enabled() -> bool:
    return os.environ.get("AMQPSPEC_SPARK_CDS", "on").strip().lower() not in ("0", "off", "no", "false")


def _java() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and Path(java_home, "bin", "java").exists():
        return str(Path(java_home, "bin", "java"))
    return shutil.which("java")


def archive_key(jvm_options: str, class_path: str = "") -> str | None:
    """What the archive depends on, hashed; None when there is no Java to key it on.

    System properties (``-Dname=value``, such as the per-run logging configuration file) do
    not change which classes load: they are left out, or every run would write a new archive.
    """
    java = _java()
    if java is None:
        return None
    vm_options = " ".join(sorted(o for o in shlex.split(jvm_options) if not o.startswith("-D")))
    try:
        import pyspark

        real = os.path.realpath(java)
        stamp = os.stat(real).st_mtime_ns
        jars = Path(pyspark.__file__).resolve().parent / "jars"
        parts = [real, str(stamp), str(jars), pyspark.__version__, vm_options, class_path]
    except (ImportError, OSError, ValueError):
        return None
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]


def archive_path(jvm_options: str, class_path: str = "") -> Path | None:
    """Where the archive for these driver options lives (written or not); None when there is
    no Java to key it on."""
    key = archive_key(jvm_options, class_path)
    return None if key is None else cache_dir() / f"{_PREFIX}{key}.jsa"


def ready(path: Path) -> bool:
    return path.is_file() and path.stat().st_size > 0


def driver_options(jvm_options: str, class_path: str = "") -> list[str]:
    """The JVM options that use the archive, or write it at exit when there is none yet."""
    if not enabled():
        return []
    final = archive_path(jvm_options, class_path)
    if final is None:
        return []
    folder = final.parent
    if ready(final):
        try:
            os.utime(final)   # most recently used: kept when old archives are removed
        except OSError:
            pass
        return ["-Xshare:auto", f"-XX:SharedArchiveFile={final}", _QUIET]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return []
    if not os.access(folder, os.W_OK):
        return []
    tmp = folder / f"{final.stem}.{os.getpid()}.tmp"
    if not _pending:
        atexit.register(finish_pending)
    _pending[str(tmp)] = final
    return [f"-XX:ArchiveClassesAtExit={tmp}", _QUIET]


def finish_pending() -> None:
    """Lets this process's JVM exit (it writes the archive as it does) and puts the archive in place.

    Called after the session is stopped, and at interpreter exit; does nothing when no archive
    is being written. Ends the py4j gateway, so a later session in this process starts a new JVM.
    """
    if not _pending:
        return
    _stop_gateway()
    for tmp_name, final in list(_pending.items()):
        tmp = Path(tmp_name)
        try:
            if tmp.is_file() and tmp.stat().st_size > 0:
                os.replace(tmp, final)
                _remove_stale(final)
        except OSError:
            pass
        finally:
            try:
                tmp.unlink()
            except OSError:
                pass
        _pending.pop(tmp_name, None)


def forget_pending() -> None:
    """The JVM did not start with the archive options: nothing will be written."""
    _pending.clear()


def _stop_gateway() -> None:
    """Closes the JVM's stdin (the gateway exits on EOF, with System.exit) and waits for it."""
    try:
        from pyspark import SparkContext
    except ImportError:  # pragma: no cover
        return
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return
    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    try:
        gateway.shutdown()
    except Exception:  # py4j raises its own types for a JVM already gone
        pass
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=EXIT_WAIT_S)
    except (OSError, subprocess.TimeoutExpired):
        print("amqpspec: the Spark JVM did not exit; its class archive is not kept", file=sys.stderr)
    SparkContext._gateway = None
    SparkContext._jvm = None


def _remove_stale(keep: Path) -> None:
    """Keeps the KEEP_ARCHIVES most recently used archives (100+ MB each; two installations of
    different Spark or Java versions on one machine keep one each) and removes temporary ones
    a killed process left behind."""
    now = time.time()
    archives = []
    for old in keep.parent.glob(f"{_PREFIX}*"):
        try:
            if old.suffix == ".tmp":
                if now - old.stat().st_mtime > STALE_TMP_S:
                    old.unlink()
            elif old != keep:
                archives.append((old.stat().st_mtime, old))
        except OSError:
            pass
    for _, old in sorted(archives, reverse=True)[KEEP_ARCHIVES - 1:]:
        try:
            old.unlink()
        except OSError:
            pass
