"""The report job on a real Spark standalone cluster gives the same dataset as local[*].

A master and one worker are started on 127.0.0.1 from the installed pyspark
(``spark-class org.apache.spark.deploy.master.Master`` / ``...worker.Worker``); the job is
submitted to the master by URL from a separate driver process (``--spark-master``), exactly as
a user would, and its dataset and bundle are compared with a local[*] run on the same input
(real result files in tests/data/pipeline). Everything is bounded in time and the cluster is
stopped, by process group, at the end.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

DATA = Path(__file__).resolve().parents[1] / "data" / "pipeline"
START_TIMEOUT = 90.0
JOB_TIMEOUT = 300.0
VOLATILE = {"generated_at", "spark"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    return Path(pyspark.__file__).resolve().parent


class Cluster:
    """A standalone master and one worker on loopback, each in its own process group."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.port, self.ui_port, self.worker_ui = _free_port(), _free_port(), _free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []
        self.env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=str(_spark_home()),
                        SPARK_LOG_DIR=str(work / "logs"), SPARK_WORKER_DIR=str(work / "worker"),
                        SPARK_NO_DAEMONIZE="1")

    def _spawn(self, name: str, *args: str) -> None:
        log = open(self.work / f"{name}.log", "wb")
        cmd = [str(_spark_home() / "bin" / "spark-class"), *args]
        self.procs.append(subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL, start_new_session=True))

    def start(self) -> None:
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        self._spawn("worker", "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                    "--webui-port", str(self.worker_ui), "--cores", "2", "--memory", "1g",
                    "--work-dir", str(self.work / "worker"))
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            for proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited with {proc.returncode}: {self.logs()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as resp:
                    state = json.load(resp)
                if state.get("aliveworkers", 0) >= 1 and state.get("status") == "ALIVE":
                    return
            except (OSError, ValueError):
                pass
            time.sleep(1.0)
        raise RuntimeError(f"the standalone cluster did not come up in {START_TIMEOUT:.0f}s: {self.logs()}")

    def logs(self) -> str:
        tails = []
        for name in ("master", "worker"):
            path = self.work / f"{name}.log"
            if path.exists():
                tails.append(f"--- {name}:\n" + "\n".join(path.read_text(errors="replace").splitlines()[-15:]))
        return "\n".join(tails)

    def stop(self) -> None:
        for proc in reversed(self.procs):   # the worker first: it stops its executors
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("Java is needed for Spark (scripts/setup.sh installs openjdk-17-jre-headless)", pytrace=False)
    c = Cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        c.start()
        yield c
    finally:
        c.stop()


def _report(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``amqpspec report`` in its own driver process, as a user runs it."""
    code = "import sys; from amqpspec.reports.cli import report; report(sys.argv[1:])"
    args = [sys.executable, "-c", code, str(DATA), "--findings", str(DATA / "findings"), "--out", str(out),
            "--no-html", *extra]
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1")
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT)


def _rows(spark, folder: Path) -> list[tuple]:
    df = spark.read.parquet(str(folder))
    return sorted(tuple(map(repr, row)) for row in df.collect())


def test_cluster_job_gives_the_same_dataset_as_local(cluster, tmp_path):
    on_cluster = _report(tmp_path / "cluster", "--spark-master", cluster.url)
    assert on_cluster.returncode == 0, on_cluster.stderr[-3000:] + cluster.logs()
    local = _report(tmp_path / "local")
    assert local.returncode == 0, local.stderr[-3000:]

    b_cluster = json.loads((tmp_path / "cluster" / "bundle.json").read_text(encoding="utf-8"))
    b_local = json.loads((tmp_path / "local" / "bundle.json").read_text(encoding="utf-8"))
    assert b_cluster["spark"]["master"] == cluster.url
    assert b_local["spark"]["master"] == "local[*]"
    assert {k: v for k, v in b_cluster.items() if k not in VOLATILE} == {k: v for k, v in b_local.items() if k not in VOLATILE}

    from pyspark.sql import SparkSession

    from amqpspec.reports.pipeline.session import create_session

    spark = SparkSession.getActiveSession() or create_session("local[1]")
    for table in ("results", "findings"):
        assert _rows(spark, tmp_path / "cluster" / "dataset" / table) == _rows(spark, tmp_path / "local" / "dataset" / table)
    assert b_local["dataset"]["results_rows"] > 100 and b_local["findings"]["total"] == 4
