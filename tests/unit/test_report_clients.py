"""The report's client side: ``amqpspec client`` results beside a broker run, through the
real Spark pipeline and the HTML renderer (tests/data/clients: real files, trimmed).

Every expected number is computed here, in plain Python, from the result files: which
library a record judges, each case's verdict on each clause it cites (bundle.md's rule,
written again here), the worst of them per (library, clause) and their counts. One job and
one render are shared by the module (Spark's start dominates the time).
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("jinja2")
pa_ds = pytest.importorskip("pyarrow.dataset")

from amqpspec.reports import html as html_report  # noqa: E402
from amqpspec.reports.html import model  # noqa: E402
from amqpspec.reports.html.status import clause_status  # noqa: E402
from amqpspec.reports.pipeline.job import run_job  # noqa: E402
from amqpspec.reports.pipeline.session import create_session  # noqa: E402
from amqpspec.result import Verdict  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "clients"
BROKER = "RabbitMQ 3.10.8 (0-9-1)"


def _records() -> list[dict[str, Any]]:
    out = []
    for path in sorted(DATA.glob("*.jsonl")):
        out += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


RECORDS = _records()
CLIENT = [r for r in RECORDS if r.get("role") == "client"]
BROKER_RECORDS = [r for r in RECORDS if r.get("role") is None]


def _key(r: dict[str, Any]) -> str:
    return f"{r['broker']['product']} {r['broker']['version']} ({r['protocol']})"


def clause_verdicts(r: dict[str, Any]) -> dict[str, str]:
    """bundle.md: the worst verdict of the checks citing the clause; a skipped/errored case, or
    one worse than all its checks, gives its verdict to every clause; a clause no check cites,
    while checks decided something, is passed."""
    verdict = r["verdict"]
    checks = [c for c in r["evidence"].get("checks") or []]
    sev = {v.value: v.severity for v in Verdict}
    all_max = max((sev[c["verdict"]] for c in checks), default=-1)
    out = {}
    for cid in dict.fromkeys(r["clauses"]):
        relevant = [c["verdict"] for c in checks if cid in (c.get("clauses") or [])]
        if verdict in ("skipped", "error") or sev[verdict] > all_max:
            out[cid] = verdict
        elif relevant:
            out[cid] = max(relevant, key=lambda v: sev[v])
        elif checks:
            out[cid] = "passed"
        else:
            out[cid] = verdict
    return out


def expected_cells() -> dict[str, dict[str, dict[str, Any]]]:
    """library key -> clause -> {verdict, cases, verdicts, case_ids}."""
    sev = {v.value: v.severity for v in Verdict}
    per: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for r in CLIENT:
        for cid, v in clause_verdicts(r).items():
            per[_key(r)][cid].append((r["case"], v))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for lib, clauses in per.items():
        for cid, pairs in clauses.items():
            counts = Counter(v for _, v in pairs)
            out.setdefault(lib, {})[cid] = {
                "verdict": max((v for _, v in pairs), key=lambda v: sev[v]), "cases": len(pairs),
                "verdicts": {v.value: counts.get(v.value, 0) for v in Verdict},
                "case_ids": sorted(c for c, _ in pairs)}
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    spark = create_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    out = tmp_path_factory.mktemp("report")
    job = run_job([str(DATA)], out, spark=spark)
    html_report.render(job.bundle_path, job.dataset_dir, out, strict=True)
    return out


@pytest.fixture(scope="module")
def bundle(report) -> dict[str, Any]:
    return json.loads((report / "bundle.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------ pipeline


def test_broker_sections_do_not_mix_in_client_records(bundle):
    assert [t["key"] for t in bundle["targets"]] == [BROKER]
    assert {r["key"] for r in bundle["runs"]} == {BROKER}
    (counts,) = bundle["verdict_counts"]
    want = Counter(r["verdict"] for r in BROKER_RECORDS)
    assert counts["cases"] == len(BROKER_RECORDS)
    assert counts["verdicts"] == {v.value: want.get(v.value, 0) for v in Verdict}
    (matrix,) = bundle["matrix"]
    assert matrix["columns"] == [BROKER]
    assert {row["clause"] for row in matrix["rows"]} == {c for r in BROKER_RECORDS for c in r["clauses"]}
    # the dataset holds both sides: its totals count every record
    assert bundle["dataset"]["case_results"] == len(RECORDS)
    assert bundle["dataset"]["results_rows"] == sum(max(1, len(set(r["clauses"]))) for r in RECORDS)


def test_libraries_are_the_client_records_targets(bundle):
    clients = bundle["clients"]
    libs = {lib["key"]: lib for lib in clients["libraries"]}
    assert set(libs) == {_key(r) for r in CLIENT}
    for r in CLIENT:
        lib = libs[_key(r)]
        assert (lib["role"], lib["driver"], lib["library"], lib["library_version"]) == (
            "client", r["driver"], r["library"], r["library_version"])
    for entry in clients["verdict_counts"]:
        want = Counter(r["verdict"] for r in CLIENT if _key(r) == entry["key"])
        assert entry["verdicts"] == {v.value: want.get(v.value, 0) for v in Verdict}, entry["key"]


def test_library_by_clause_matrix(bundle):
    want = expected_cells()
    matrices = {m["protocol"]: m for m in bundle["clients"]["matrix"]}
    assert set(matrices) == {"0-9-1", "1.0"}
    seen = 0
    for protocol, m in matrices.items():
        libs = {_key(r) for r in CLIENT if r["protocol"] == protocol}
        assert sorted(m["columns"]) == sorted(libs)
        assert {row["clause"] for row in m["rows"]} == {c for lib in libs for c in want[lib]}
        for row in m["rows"]:
            for col, cell in zip(m["columns"], row["cells"]):
                expected = want[col].get(row["clause"])
                assert cell == expected, (col, row["clause"])
                seen += cell is not None
    assert seen == sum(len(c) for c in want.values())
    # the fixture has a clause that several cases of one library cite with different verdicts
    assert any(c["cases"] > 1 and len([n for n in c["verdicts"].values() if n]) > 1
               for lib in want.values() for c in lib.values())


def test_dataset_rows_keep_the_role(report):
    table = pa_ds.dataset(str(report / "dataset" / "results"), format="parquet").to_table(
        columns=["role", "driver", "library", "library_version", "case", "run_id", "clause_pos"]).to_pylist()
    rows = [t for t in table if t["clause_pos"] == 0]
    by_run_case = {(r["run_id"], r["case"]): r for r in rows}
    for r in RECORDS:
        row = by_run_case[(r["run_id"], r["case"])]
        if r.get("role") == "client":
            assert (row["role"], row["driver"], row["library"]) == ("client", r["driver"], r["library"])
        else:
            assert (row["role"], row["driver"], row["library"]) == ("broker", None, None)


# ------------------------------------------------------------------ HTML


class Page(HTMLParser):
    def __init__(self, path: Path) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.cells: list[dict[str, str]] = []
        self.rows: dict[str, str] = {}   # id -> data-status
        self.columns: list[dict[str, str]] = []
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "id" in a:
            self.ids.add(a["id"])
            if tag == "tr" and "data-status" in a:
                self.rows[a["id"]] = a["data-status"]
        if tag == "a" and "href" in a:
            self.links.append(a["href"])
        if tag == "td" and "data-verdict" in a:
            self.cells.append(a)
        if tag == "th" and a.get("class") == "status":
            self.columns.append(a)


def _resolve(page: Path, href: str) -> tuple[Path, str]:
    target, _, anchor = href.partition("#")
    return ((page.parent / target).resolve() if target else page), anchor


def _links_hold(page: Path, ids: dict[Path, set[str]]) -> None:
    """Every link of the page leads to a file that exists, and an anchor to an id on it."""
    for href in Page(page).links:
        if "://" in href:
            continue
        target, anchor = _resolve(page, href)
        assert target.exists(), (page, href)
        if anchor and target.suffix == ".html":
            if target not in ids:
                ids[target] = Page(target).ids
            assert anchor in ids[target], (page, href)


def test_matrix_pages_show_the_bundle_cells_and_link_to_the_cases(report, bundle):
    for m in bundle["clients"]["matrix"]:
        path = report / "html" / "clients" / f"{model.protocol_slug(m['protocol'])}.html"
        page = Page(path)
        want = [(c["verdict"], str(c["cases"])) for row in sorted(m["rows"], key=lambda r: r["clause"])
                for c in row["cells"] if c]
        got = [(c["data-verdict"], c["data-cases"]) for c in page.cells]
        assert sorted(got) == sorted(want)
        _links_hold(path, {})
        # a clause cited by one case of a library links to that case's page
        assert any("/c/" in href for href in page.links)


def test_library_pages_and_their_cases(report, bundle):
    index = Page(report / "index.html")
    ids: dict[Path, set[str]] = {}
    for lib in bundle["clients"]["libraries"]:
        slug = model.slug("client " + lib["key"])
        page = report / "html" / "t" / slug / "index.html"
        assert f"html/t/{slug}/index.html" in index.links
        cited = {c for r in CLIENT if _key(r) == lib["key"] for c in r["clauses"]}
        assert {cid for cid in Page(page).rows} == {model.clause_anchor(c) for c in cited}
        cases = {r["case"] for r in CLIENT if _key(r) == lib["key"]}
        assert len(list((page.parent / "c").glob("*.html"))) == len(cases)
        _links_hold(page, ids)
    for m in bundle["clients"]["matrix"]:
        assert f"html/clients/{model.protocol_slug(m['protocol'])}.html" in index.links


def test_annotated_spec_shows_broker_and_client_verdicts_side_by_side(report):
    path = report / "html" / "spec" / "amqp091.html"
    page = Page(path)
    libs = sorted({_key(r) for r in CLIENT if r["protocol"] == "0-9-1"})
    columns = [BROKER] + libs   # the brokers first, then the libraries, each in target order
    assert [c.get("data-role", "broker") for c in page.columns] == ["broker"] + ["client"] * len(libs)
    per: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in [*BROKER_RECORDS, *(c for c in CLIENT if c["protocol"] == "0-9-1")]:
        for cid, v in clause_verdicts(r).items():
            per[cid][_key(r)].append({"clause_verdict": v, "deviation": r.get("deviation")})
    both = [cid for cid, by in per.items() if BROKER in by and len(by) > 1]
    assert both, "the fixture has clauses cited by the broker run and a client run"
    for cid in both:
        statuses = page.rows[model.clause_anchor(cid)].split()
        for col, status in zip(columns, statuses):
            if per[cid].get(col):
                assert status == clause_status(per[cid][col]), (cid, col)
