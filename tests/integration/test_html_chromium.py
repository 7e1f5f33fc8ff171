"""The HTML report of real runs, opened in headless Chromium (Debian's ``chromium`` package).

Result files come from ``amqpspec run --json`` against the real brokers (RabbitMQ and
garagemq for 0-9-1, RabbitMQ and the Qpid Proton example broker for 1.0; RabbitMQ 0-9-1
twice, for a history), on a few sections only to keep the test short. The bundle comes from
the Spark pipeline when it and pyspark are installed, else from the test stand-in
(tests/support/bundle_fixture.py). Chromium then loads the pages from disk: no console message
may appear (the report's own script logs nothing, so any message is an error), the filtering
script must have run, and the numbers in the rendered DOM must be the bundle's.

Set ``AMQPSPEC_HTML_SHOTS=DIR`` to keep the screenshots for a look.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from amqpspec.reports import html as html_report

from tests.support.bundle_fixture import build_bundle
from tests.unit.test_html_report import Page

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-quic", "--no-first-run",
    "--enable-logging=stderr", "--v=0",
]
SECTIONS_091 = ["amqp091/4.2.3/frame-end*", "amqp091/4.2.3/undefined-type*", "amqp091/2.2.4/*"]
SECTIONS_10 = ["amqp10/2.7.1/*"]


def _chromium() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("headless Chromium is needed: apt-get install -y --no-install-recommends chromium",
                    pytrace=False)
    return path


def browse(url: str, profile: Path, *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """Chromium on one page, with its own throw-away profile; fails on any console message."""
    proc = subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, url],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert not console, f"{url}: console messages:\n" + "\n".join(console)
    return proc


def _run(url: str, out: Path, protocol: str, cases: list[str], *extra: str) -> Path:
    args = [sys.executable, "-m", "amqpspec.cli", "run", url, "--protocol", protocol, "--json", str(out),
            "--seed", "7", *[a for c in cases for a in ("--case", c)], *extra]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1), proc.stderr
    assert out.is_file() and out.stat().st_size > 0, proc.stderr
    return out


def _restart(name: str) -> str:
    py = sys.executable
    return f"{py} -m amqpspec.brokers down {name} && {py} -m amqpspec.brokers up {name}"


def _pipeline(files: list[Path], out: Path) -> tuple[Path, str]:
    try:
        import pyspark  # noqa: F401

        from amqpspec.reports.pipeline.job import run_job
    except ImportError:
        return build_bundle(files, out), "test stand-in (no pyspark / pipeline)"
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return run_job([str(f) for f in files], out).bundle_path, "Spark pipeline"


@pytest.fixture(scope="module")
def report(rabbitmq, garagemq, proton_broker, tmp_path_factory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("html-real")
    files = [
        _run(rabbitmq.url, tmp / "rabbit-091-a.jsonl", "0-9-1", SECTIONS_091),
        _run(rabbitmq.url, tmp / "rabbit-091-b.jsonl", "0-9-1", SECTIONS_091),
        _run(garagemq.url, tmp / "garage-091.jsonl", "0-9-1", SECTIONS_091, "--restart-command", _restart("garagemq")),
        _run(rabbitmq.url, tmp / "rabbit-10.jsonl", "1.0", SECTIONS_10),
        _run(proton_broker.url, tmp / "proton-10.jsonl", "1.0", SECTIONS_10, "--restart-command", _restart("proton")),
    ]
    out = tmp / "report"
    bundle_path, source = _pipeline(files, out)
    index = html_report.render(bundle_path, bundle_path.parent / "dataset", out)
    return {"out": out, "index": index, "bundle": json.loads(bundle_path.read_text(encoding="utf-8")),
            "source": source, "tmp": tmp}


def _dom(report: dict[str, Any], page: Path) -> str:
    proc = browse(page.as_uri(), report["tmp"] / "chromium-profile", "--dump-dom")
    assert "</html>" in proc.stdout, proc.stderr[-2000:]
    return proc.stdout


def test_report_covers_every_broker_and_protocol(report):
    keys = {t["key"] for t in report["bundle"]["targets"]}
    assert {t["protocol"] for t in report["bundle"]["targets"]} == {"0-9-1", "1.0"}
    assert len(keys) == 4, keys
    assert len(report["bundle"]["runs"]) == 5


def test_summary_numbers_in_the_browser_are_the_bundles(report):
    page = Page()
    page.feed(_dom(report, report["index"]))
    shown: dict[tuple[str, str], set[str]] = {}
    for target, name, text in page.counts:
        shown.setdefault((target, name), set()).add(text)
    for entry in report["bundle"]["verdict_counts"]:
        assert shown[(entry["key"], "cases")] == {str(entry["cases"])}, report["source"]
        for verdict, n in entry["verdicts"].items():
            assert shown[(entry["key"], verdict)] == {str(n)}, (entry["key"], verdict)
        if entry["deviations"]:
            assert shown[(entry["key"], "deviations")] == {str(entry["deviations"])}


def test_pages_load_without_errors_and_the_script_runs(report):
    out = report["out"]
    pages = [out / "html" / "spec" / "amqp091.html", out / "html" / "spec" / "amqp10.html",
             out / "html" / "matrix" / "amqp091.html", out / "html" / "matrix" / "amqp10.html",
             out / "html" / "history.html"]
    failing = sorted((out / "html" / "t").glob("*/c/*.html"))
    assert failing
    pages.append(failing[0])
    pages.append(next(p for p in (out / "html" / "t").glob("*/failed-1.html")))
    for path in pages:
        assert path.is_file(), path
        dom = _dom(report, path)
        if 'class="filter"' in dom:
            # the filter form is hidden in the file and shown by the script: proof it ran
            assert re.search(r'<form class="filter"[^>]*>', dom)
            assert not re.search(r'<form class="filter"[^>]*hidden', dom), path
    history = _dom(report, out / "html" / "history.html")
    assert "<svg" in history and "<polyline" in history


def test_screenshots_are_written(report):
    keep = os.environ.get("AMQPSPEC_HTML_SHOTS")
    folder = Path(keep) if keep else report["tmp"] / "shots"
    folder.mkdir(parents=True, exist_ok=True)
    case = next(p for p in sorted((report["out"] / "html" / "t").glob("*/c/*.html"))
                if "failed" in p.read_text(encoding="utf-8")[:4000])
    for name, page, height in (("index", report["index"], 1800), ("case", case, 1600),
                               ("spec-091", report["out"] / "html" / "spec" / "amqp091.html", 1600)):
        shot = folder / f"{name}.png"
        browse(page.as_uri(), report["tmp"] / "chromium-profile", f"--screenshot={shot}",
               f"--window-size=1400,{height}")
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000, name
