"""Every report of one results file gives the same counts (issue 14: the console said 7 failed
cases were documented deviations, the HTML 8 in one place and 15 in another).

One real result file with two documented failures and one warning that also carries a
deviation note (which is not a documented deviation: reports/counts.py) goes through the
console summary, the pipeline (bundle), the JUnit file and the HTML report; every number
of cases by verdict and of documented deviations they print must be the same.
"""
from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("jinja2")
pytest.importorskip("pyarrow")

from amqpspec.reports import html as html_report  # noqa: E402
from amqpspec.reports.console import count_verdicts, format_summary  # noqa: E402
from amqpspec.reports.counts import is_documented_deviation  # noqa: E402
from amqpspec.reports.pipeline.job import run_job  # noqa: E402
from amqpspec.reports.pipeline.session import create_session  # noqa: E402
from amqpspec.result import Result  # noqa: E402

SOURCE = Path(__file__).resolve().parents[1] / "data" / "pipeline" / "rabbitmq-091-run1.jsonl"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("counts")
    results = tmp / "run.jsonl"
    shutil.copy(SOURCE, results)
    records = [Result.from_json(__import__("json").loads(line))
               for line in results.read_text(encoding="utf-8").splitlines() if line.strip()]
    spark = create_session("local[2]", {"spark.sql.shuffle.partitions": "2"})
    job = run_job([str(results)], tmp / "out", spark=spark)
    html_report.render(job.bundle_path, job.dataset_dir, job.out_dir, strict=True, pcaps="none")
    return {"records": records, "job": job, "out": job.out_dir}


def test_the_input_has_what_used_to_be_counted_differently(reports):
    noted = Counter(r.verdict.value for r in reports["records"] if r.deviation)
    assert noted["failed"] >= 2 and noted["warning"] >= 1   # a warning with a note is the trap


def test_console_bundle_junit_and_html_agree(reports):
    records, job, out = reports["records"], reports["job"], reports["out"]
    expected = sum(1 for r in records if is_documented_deviation(r.verdict, r.deviation))
    console = count_verdicts(records)
    assert console["deviations"] == expected
    assert f"({expected} documented deviation" in format_summary(records)

    bundle = job.bundle
    (vc,) = bundle["verdict_counts"]
    (run,) = bundle["runs"]
    assert vc["deviations"] == run["deviations"] == expected
    assert vc["verdicts"] == {v: console[v] for v in vc["verdicts"]} and vc["cases"] == console["total"]

    (junit,) = job.junit_paths
    root = ET.parse(junit).getroot()
    skipped = root.findall(".//testcase/skipped")
    documented = [s for s in skipped if (s.get("message") or "").startswith("documented deviation")]
    assert len(documented) == expected
    assert len(root.findall(".//testcase/failure")) == console["failed"] - expected

    index = (out / "index.html").read_text(encoding="utf-8")
    shown = re.findall(r'data-count="deviations">(\d+)<', index)
    assert shown and set(shown) == {str(expected)}
    for page in (out / "html").rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert set(re.findall(r'data-count="deviations">(\d+)<', text)) <= {str(expected)}, page
    (target_dir,) = [p for p in (out / "html" / "t").iterdir() if p.is_dir()]
    listing = (target_dir / "all-1.html").read_text(encoding="utf-8")
    assert listing.count("failed: documented deviation") == expected
    # the compliance note counts clauses, and says so
    assert "failed cases are documented deviations" not in index
