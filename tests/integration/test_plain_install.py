"""A plain ``pip install .`` (no extras) into a fresh virtual environment -- not seeing this
environment's packages -- gives a package whose every command works against the local brokers:
``fuzz`` (hypothesis), ``run --protocol 1.0`` with the python-qpid-proton scenarios run (not
skipped), ``report`` (Spark) and ``replay``; and a truly optional part (the Docker SDK) missing
is one line naming the extra, never a traceback.

One environment for the module: pip takes the packages from its cache (the default one, shared
with the developer's pip), so after the first build on a machine it installs without downloading.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# fast raw-peer case (replayable) and real-client scenarios of python-qpid-proton
HEADER_CASE = "amqp10/2.2/amqp-header-answered"
SCENARIOS = "amqp10/scenario.request-reply/*"


@dataclass
class PlainInstall:
    venv: Path
    work: Path           # a directory outside the checkout: nothing is imported from the tree
    build_seconds: float

    def amqpspec(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "amqpspec"), *args], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, cwd=self.work, env=_clean_env(self.venv))

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(self.venv / "bin" / "python"), "-c", code], capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL, cwd=self.work, env=_clean_env(self.venv))


def _clean_env(venv: Path) -> dict[str, str]:
    """This environment's variables without what would let the venv see this interpreter's packages."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # one machine: no lookup of its own host name
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _copy_tree(dest: Path) -> None:
    """The checkout as a fresh clone plus uncommitted work: tracked and untracked files that git
    does not ignore (no build/, *.egg-info, results), so the build leaves the working tree alone."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> PlainInstall:
    base = tmp_path_factory.mktemp("plain-install")
    src, venv, work = base / "src", base / "venv", base / "work"
    work.mkdir()
    _copy_tree(src)
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, stdin=subprocess.DEVNULL)
    pip = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--no-input", str(src)],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, env=_clean_env(venv), timeout=1800)
    assert pip.returncode == 0, pip.stderr[-3000:]
    seconds = time.monotonic() - t0
    print(f"\nplain install: venv + pip install . in {seconds:.0f}s")
    return PlainInstall(venv, work, seconds)


def test_plain_install_has_no_extras_and_every_module_imports(plain: PlainInstall) -> None:
    # the environment is really plain: the test and docker extras are absent
    absent = plain.python("import importlib.util as u; print([m for m in ('pytest', 'docker', 'yaml', 'pamqp') "
                          "if u.find_spec(m)])")
    assert absent.returncode == 0 and absent.stdout.strip() == "[]", absent.stdout + absent.stderr
    # every module of the package imports (the pytest plugin only inside pytest, which brings pytest)
    walk = plain.python(
        "import importlib, pkgutil, amqpspec\n"
        "bad = []\n"
        "for m in pkgutil.walk_packages(amqpspec.__path__, 'amqpspec.'):\n"
        "    if m.name == 'amqpspec.pytest_plugin': continue\n"
        "    try: importlib.import_module(m.name)\n"
        "    except Exception as exc: bad.append(f'{m.name}: {exc!r}')\n"
        "print(len(bad), bad)\n")
    assert walk.returncode == 0 and walk.stdout.startswith("0 "), walk.stdout + walk.stderr
    assert str(plain.venv) in plain.python("import amqpspec; print(amqpspec.__file__)").stdout


def test_missing_docker_extra_is_one_line(plain: PlainInstall) -> None:
    proc = plain.amqpspec("brokers", "list", "--backend", "docker")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert "pip install 'amqpspec[docker]'" in proc.stderr


def test_fuzz_runs(plain: PlainInstall, rabbitmq) -> None:
    findings = plain.work / "findings"
    proc = plain.amqpspec("fuzz", rabbitmq.url, "--protocol", "0-9-1", "--examples", "20", "--seed", "3",
                          "--findings", str(findings))
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "executions in" in proc.stdout, proc.stdout[-2000:] + proc.stderr


@pytest.fixture(scope="module")
def run_1_0(plain: PlainInstall, proton_broker) -> tuple[Path, list[dict]]:
    results = plain.work / "amqp10.jsonl"
    proc = plain.amqpspec("run", proton_broker.url, "--protocol", "1.0", "--case", HEADER_CASE, "--case", SCENARIOS,
                          "--seed", "5", "--json", str(results))
    assert proc.returncode in (0, 1), proc.stdout[-2000:] + proc.stderr[-2000:]
    return results, [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


def test_run_1_0_runs_the_proton_scenarios(run_1_0: tuple[Path, list[dict]]) -> None:
    _, records = run_1_0
    scenarios = [r for r in records if "/scenario." in r["case"]]
    assert len(scenarios) >= 2 and any(r["case"] == HEADER_CASE for r in records)
    not_run = {r["case"]: r["reason"] for r in scenarios if r["verdict"] in ("skipped", "error")}
    assert not not_run, not_run


def test_report(plain: PlainInstall, run_1_0: tuple[Path, list[dict]]) -> None:
    results, records = run_1_0
    out = plain.work / "report"
    proc = plain.amqpspec("report", str(results), "--out", str(out), timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert f"read {len(records)} result records" in proc.stdout
    assert (out / "index.html").is_file() and (out / "bundle.json").is_file()


def test_replay(plain: PlainInstall, run_1_0: tuple[Path, list[dict]], proton_broker) -> None:
    results, _ = run_1_0
    proc = plain.amqpspec("replay", str(results), proton_broker.url, "--case", HEADER_CASE)
    assert proc.returncode == 0 and "SAME" in proc.stdout, proc.stdout + proc.stderr
