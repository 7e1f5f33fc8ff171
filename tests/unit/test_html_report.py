"""The HTML report rendered from small fixture bundles (no Spark, no broker, no browser).

The bundles are made by tests/support/bundle_fixture.py from result records written with
amqpspec.result, the way ``amqpspec run --json`` writes them; what is checked is what a
reader relies on: the numbers shown are the bundle's, every link leads to a page that
exists, every clause of the catalog is in the annotated specification, broker text cannot
inject markup, and no page grows with the dataset.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("jinja2")
pytest.importorskip("pyarrow")

from amqpspec import clauses as catalog  # noqa: E402
from amqpspec.errors import UsageError  # noqa: E402
from amqpspec.reports import html as html_report  # noqa: E402
from amqpspec.reports.html import chart, hexview, pcap, site, status  # noqa: E402
from amqpspec.reports.html.paginate import PAGE_SIZE  # noqa: E402
from amqpspec.result import CloseInfo, Result, ResultWriter, Verdict  # noqa: E402
from tests.support.bundle_fixture import build_bundle  # noqa: E402

HOSTILE_TITLE = '<script>alert("title")</script>'
HOSTILE_PRODUCT = '<img src=x onerror=alert(1)>'
HOSTILE_REASON = 'reply-text="</pre><b>bold</b>"\x1b[2J and \u202eevil'


def _transcript(extra: str = "") -> list[dict[str, Any]]:
    return [
        {"t": 0.0, "dir": "event", "conn": 1, "summary": "connected to 127.0.0.1:5672", "hex": ""},
        {"t": 0.001, "dir": "send", "conn": 1, "summary": "protocol-header AMQP 0-0-9-1", "hex": "414d515000000901"},
        {"t": 0.004, "dir": "recv", "conn": 1, "summary": f"ch=0 connection.close(reply-code=505{extra})",
         "hex": "0100000000000c000a003201f9" + "00" * 3000 + "ce"},
    ]


def _result(case: str, verdict: Verdict, *, clauses: list[str], run_id: str = "run-1",
            started: str = "2026-01-01T00:00:00+00:00", product: str = "RabbitMQ", version: str = "3.10.8",
            protocol: str = "0-9-1", title: str = "", reason: str = "", deviation: str | None = None,
            checks: list[dict[str, Any]] | None = None) -> Result:
    return Result(
        case=case, title=title or f"title of {case}", section=case.split("/")[1], section_title="Some Section",
        clauses=clauses, protocol=protocol, verdict=verdict, reason=reason,
        close=CloseInfo(who="broker", how="connection.close", code=505, text="UNEXPECTED_FRAME",
                        expected_codes=[501], matched=verdict is Verdict.PASSED),
        target="amqp://guest@127.0.0.1:5672/", broker={"product": product, "version": version, "platform": "test"},
        duration_s=0.01, seed=42,
        evidence={"expected": "connection.close 501", "observed": f"connection.close 505 {reason}",
                  "checks": checks or [], "notes": ["a note"], "description": "what the case does"},
        transcript=_transcript(), replay=f"amqpspec run amqp://guest@127.0.0.1:5672/ --case {case} --seed 42 -v",
        run_id=run_id, started_at=started, deviation=deviation)


def _write(path: Path, results: list[Result]) -> Path:
    with ResultWriter(path) as writer:
        for r in results:
            writer.write(r)
    return path


class Page(HTMLParser):
    """Links, ids, data-count cells and text of one page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.counts: list[tuple[str, str, str]] = []   # (data-target of the enclosing element, name, text)
        self.scripts: list[str] = []
        self._target: list[str | None] = []
        self._count: str | None = None
        self._text: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(a[key] or "")
        if a.get("id"):
            self.ids.add(a["id"] or "")
        if tag == "script":
            self.scripts.append(a.get("src") or "inline")
        if tag in ("tr", "div", "table"):
            self._target.append(a.get("data-target"))
        if a.get("data-count"):
            self._count = a["data-count"]
            self._text = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("tr", "div", "table") and self._target:
            self._target.pop()
        if self._count is not None and tag in ("td", "span"):
            target = next((t for t in reversed(self._target) if t), "")
            self.counts.append((target, self._count, "".join(self._text).strip()))
            self._count = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._count is not None:
            self._text.append(data)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def all_pages(out: Path) -> list[Path]:
    return [out / "index.html", *sorted((out / "html").rglob("*.html"))]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two RabbitMQ runs (history), one garagemq run with hostile text, and a finding."""
    tmp = tmp_path_factory.mktemp("html")
    older = [_result("amqp091/4.2.3/frame-end", Verdict.PASSED, clauses=["amqp091:4.2.3/1"], run_id="r-old",
                     started="2025-12-01T00:00:00+00:00", version="3.10.7"),
             _result("amqp091/4.2.3/bad-type", Verdict.PASSED, clauses=["amqp091:4.2.3/2"], run_id="r-old",
                     started="2025-12-01T00:00:00+00:00", version="3.10.7")]
    newer = [
        _result("amqp091/4.2.3/frame-end", Verdict.PASSED, clauses=["amqp091:4.2.3/1"], run_id="r-new"),
        _result("amqp091/4.2.3/bad-type", Verdict.FAILED, clauses=["amqp091:4.2.3/2", "amqp091:4.2.3/1"],
                run_id="r-new", reason="wrong code",
                checks=[{"description": "frame-end", "clauses": ["amqp091:4.2.3/1"], "verdict": "passed",
                         "expected": "x", "observed": "x"},
                        {"description": "type", "clauses": ["amqp091:4.2.3/2"], "verdict": "failed",
                         "expected": "close 501", "observed": "close 505"}]),
        _result("amqp091/4.2.7/heartbeat", Verdict.WARNING, clauses=["amqp091:4.2.7/1"], run_id="r-new"),
        _result("amqp091/4.2.3/oversized", Verdict.FAILED, clauses=["amqp091:4.2.3/7"], run_id="r-new",
                deviation="RabbitMQ errata: oversized frames"),
        _result("amqp091/4.2.3/old-case", Verdict.PASSED, clauses=["amqp091:9.9/1"], run_id="r-new"),
    ]
    hostile = [_result("amqp091/4.2.3/bad-type", Verdict.FAILED, clauses=["amqp091:4.2.3/2"], run_id="g-1",
                       product=HOSTILE_PRODUCT, version="0.1", title=HOSTILE_TITLE, reason=HOSTILE_REASON)]
    hostile[0].transcript = _transcript(extra=', reply-text="<script>x()</script>"')
    files = [_write(tmp / "old.jsonl", older), _write(tmp / "new.jsonl", newer), _write(tmp / "g.jsonl", hostile)]
    finding = {
        "schema": 1, "kind": "finding",
        "signature": {"protocol": "0-9-1", "target": "method-frame", "violation": "wrong-code", "code": 505,
                      "condition": None, "state": "after-open"},
        "signature_id": "abc123", "broker": {"product": "RabbitMQ", "version": "3.10.8", "platform": "x"},
        "target_url": "amqp://guest@127.0.0.1:5672/", "seed": 7, "first_seen": "2026-01-01T00:00:00Z",
        "last_seen": "2026-01-01T01:00:00Z", "count": 12, "clauses": ["amqp091:4.2.3/2"],
        "input": {"hex": "0800000000000000ce", "summary": "heartbeat <b>on</b> ch 0"},
        "transcript": _transcript(), "replay": "amqpspec replay abc123.json", "run_id": "campaign-1"}
    (tmp / "abc123.json").write_text(json.dumps(finding), encoding="utf-8")
    out = tmp / "out"
    bundle = build_bundle(files, out, [tmp / "abc123.json"])
    index = html_report.render(bundle, out / "dataset", out, strict=True, pcaps="none")
    return {"out": out, "index": index, "bundle": json.loads(bundle.read_text()), "tmp": tmp,
            "bundle_path": bundle}


def test_render_returns_the_index_and_writes_static_assets(report):
    out = report["out"]
    assert report["index"] == out / "index.html"
    assert (out / "html" / "static" / "style.css").is_file()
    assert (out / "html" / "static" / "filter.js").is_file()
    for page in all_pages(out):
        text = page.read_text(encoding="utf-8")
        assert text.startswith("<!DOCTYPE html>")
        assert "http://" not in re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", text) or "amqp://" in text
        assert not re.search(r'(src|href)="(https?:)?//', text), f"{page}: a page must not load anything remote"


def test_every_link_leads_to_a_file_that_exists(report):
    out = report["out"]
    for page in all_pages(out):
        parsed = parse(page)
        for link in parsed.links:
            parts = urlsplit(link)
            assert not parts.scheme and not parts.netloc, f"{page}: remote link {link}"
            if not parts.path:
                assert parts.fragment in parsed.ids, f"{page}: dangling anchor #{parts.fragment}"
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            assert target.is_file(), f"{page.relative_to(out)} links to missing {link}"
            if parts.fragment and target.suffix == ".html":
                assert parts.fragment in parse(target).ids, f"{page}: missing anchor {link}"


def test_summary_numbers_are_the_bundles(report):
    counts = parse(report["out"] / "index.html").counts
    shown: dict[tuple[str, str], set[str]] = {}
    for target, name, text in counts:
        shown.setdefault((target, name), set()).add(text)
    assert report["bundle"]["verdict_counts"]
    for entry in report["bundle"]["verdict_counts"]:
        key = entry["key"]
        assert shown[(key, "cases")] == {str(entry["cases"])}
        for verdict, n in entry["verdicts"].items():
            assert shown[(key, verdict)] == {str(n)}, (key, verdict)
    rabbit = next(e for e in report["bundle"]["verdict_counts"] if e["version"] == "3.10.8")
    assert rabbit["verdicts"]["failed"] == 2 and rabbit["deviations"] == 1
    assert shown[(rabbit["key"], "deviations")] == {"1"}


def test_worst_failures_come_first(report):
    page = (report["out"] / "index.html").read_text(encoding="utf-8")
    rabbit = page[page.index('id="target-'):]
    # the undocumented failure, then the warning, then the documented deviation
    order = [rabbit.index(c) for c in ("amqp091/4.2.3/bad-type", "amqp091/4.2.7/heartbeat", "amqp091/4.2.3/oversized")]
    assert order == sorted(order)


def test_annotated_spec_lists_every_clause_in_document_order(report):
    spec = report["out"] / "html" / "spec" / "amqp091.html"
    text = spec.read_text(encoding="utf-8")
    ids = [c.id for c in catalog.catalog("0-9-1", extensions=True)]
    positions = [text.index(f'id="cl-{re.sub(r"[^A-Za-z0-9_-]+", "-", cid)}"') for cid in ids]
    assert positions == sorted(positions)
    assert "General Frame Format" in text and "4.2.3" in text
    # the clause from another suite version is listed apart, not dropped
    assert "amqp091:9.9/1" in text and "not in this amqpspec" in text


def _row(text: str, clause_id: str) -> str:
    anchor = 'id="cl-' + re.sub(r"[^A-Za-z0-9_-]+", "-", clause_id) + '"'
    start = text.index(anchor)
    return text[start:text.index("</tr>", start)]


def test_annotated_spec_marks_each_status(report):
    text = (report["out"] / "html" / "spec" / "amqp091.html").read_text(encoding="utf-8")
    # RabbitMQ is the first broker column, the hostile garagemq-like broker the second (sorted by product)
    assert "covered, passed" in _row(text, "amqp091:4.2.3/1")        # failing case passed this clause's check
    row = _row(text, "amqp091:4.2.3/2")
    assert "covered, failed" in row and "bad-type" in row
    assert "covered, warning" in _row(text, "amqp091:4.2.7/1")
    assert "documented deviation" in _row(text, "amqp091:4.2.3/7")
    untested = next(u for u in __import__("amqpspec.coverage", fromlist=["x"]).load_untested("0-9-1"))
    row = _row(text, untested.clause)
    assert "untested" in row and untested.reason in row
    assert "not run" in text                                           # covered by cases this run did not include


def test_case_page_has_evidence_transcript_hex_and_replay(report):
    out = report["out"]
    rabbit = next(t for t in report["bundle"]["targets"] if t["version"] == "3.10.8")
    page = next((out / "html" / "t").glob("RabbitMQ_3.10.8_*/c/amqp091_4.2.3_bad-type-*.html"))
    text = page.read_text(encoding="utf-8")
    for needle in ("what the case does", "amqp091:4.2.3/2", "connection.close 501", "connection.close 505",
                   "closed by broker with connection.close 505", "NOT matched",
                   "--case amqp091/4.2.3/bad-type --seed 42", "protocol-header AMQP 0-0-9-1",
                   "0000  41 4d 51 50 00 00 09 01", "|AMQP....|", "a note", "close 501"):
        assert needle in text, needle
    # a 3000-octet frame is cut in the hex view, not dumped whole
    assert f"{3014 - hexview.MAX_OCTETS} more octets" in text
    assert rabbit["key"] in text


def test_one_case_page_per_case_of_the_latest_run(report):
    out = report["out"]
    for target in report["bundle"]["targets"]:
        expected = next(v["cases"] for v in report["bundle"]["verdict_counts"] if v["key"] == target["key"])
        folder = next(p for p in (out / "html" / "t").iterdir()
                      if (p / "index.html").read_text(encoding="utf-8").count(target["latest_run"]))
        assert len(list((folder / "c").glob("*.html"))) == expected


def test_broker_text_is_escaped_everywhere(report):
    for page in all_pages(report["out"]):
        text = page.read_text(encoding="utf-8")
        assert "<script>alert" not in text and "<script>x()" not in text, page
        assert "<img src=x" not in text, page
        assert "<b>bold</b>" not in text and "<b>on</b>" not in text, page
        assert "\x1b" not in text and "\u202e" not in text, page
        for script in parse(page).scripts:
            assert script.endswith("static/filter.js"), page
    case = next((report["out"] / "html" / "t").glob("*/c/amqp091_4.2.3_bad-type-*.html"))
    texts = [p.read_text(encoding="utf-8") for p in (report["out"] / "html" / "t").glob("*/c/*.html")]
    assert any("&lt;script&gt;alert(&#34;title&#34;)&lt;/script&gt;" in t for t in texts), case
    assert any("\\x1b[2J" in t and "\\u202eevil" in t for t in texts)


def test_history_chart_is_inline_svg(report):
    text = (report["out"] / "html" / "history.html").read_text(encoding="utf-8")
    assert "<svg" in text and "<polyline" in text and "<script" not in text.split("</head>")[1]
    assert "3.10.7 → 3.10.8" in text


def test_matrix_and_findings_pages(report):
    out = report["out"]
    matrix = (out / "html" / "matrix" / "amqp091.html").read_text(encoding="utf-8")
    for column in report["bundle"]["matrix"][0]["columns"]:
        assert column.replace("<", "&lt;").replace(">", "&gt;") in matrix
    finding = next((out / "html" / "findings").glob("abc123-*.html")).read_text(encoding="utf-8")
    for needle in ("wrong-code", "after-open", "amqpspec replay abc123.json", "0000  08 00 00 00 00 00 00 00",
                   "heartbeat &lt;b&gt;on&lt;/b&gt; ch 0", "protocol-header AMQP 0-0-9-1", "12 generated inputs",
                   "spec/amqp091.html#cl-amqp091-4-2-3-2"):
        assert needle in finding, needle


def test_case_lists_are_paginated(tmp_path):
    results = [_result(f"amqp091/4.2.3/case-{i:04d}", Verdict.FAILED if i % 3 == 0 else Verdict.PASSED,
                       clauses=["amqp091:4.2.3/1"]) for i in range(PAGE_SIZE * 2 + 50)]
    out = tmp_path / "out"
    bundle = build_bundle([_write(tmp_path / "r.jsonl", results)], out)
    html_report.render(bundle, out / "dataset", out, strict=True, pcaps="none")
    folder = next((out / "html" / "t").iterdir())
    pages = sorted(folder.glob("all-*.html"))
    assert [p.name for p in pages] == ["all-1.html", "all-2.html", "all-3.html"]
    rows = [parse(p).text for p in pages]
    sizes = [p.read_text(encoding="utf-8").count('<tr data-status=') for p in pages]
    assert sizes == [PAGE_SIZE, PAGE_SIZE, 50]
    assert "rows 201–400 of 450" in "".join(rows[1])
    assert (folder / "failed-1.html").is_file() and not (folder / "failed-2.html").exists()
    assert (folder / "failed-1.html").read_text(encoding="utf-8").count('<tr data-status=') == 150
    assert len(list((folder / "c").glob("*.html"))) == 450
    # the index shows a bounded excerpt, not every failure
    links = [link for link in parse(out / "index.html").links if "/c/" in link]
    assert len(links) == site.WORST_ON_INDEX


def test_without_a_dataset_the_summary_still_renders(report, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    index = html_report.render(report["bundle_path"], None, out, strict=True)
    text = index.read_text(encoding="utf-8")
    assert "no dataset directory given" in text
    assert not (out / "html" / "t").exists() or not list((out / "html" / "t").glob("*/c/*.html"))
    assert parse(index).counts


def test_a_moved_result_file_costs_the_transcript_only(tmp_path):
    src = _write(tmp_path / "r.jsonl", [_result("amqp091/4.2.3/x", Verdict.FAILED, clauses=["amqp091:4.2.3/1"])])
    out = tmp_path / "out"
    bundle = build_bundle([src], out)
    src.unlink()
    html_report.render(bundle, out / "dataset", out, strict=True)
    page = next((out / "html" / "t").glob("*/c/*.html")).read_text(encoding="utf-8")
    assert "is not available" in page and "connection.close 501" in page


def test_bad_bundles_are_one_line_errors(tmp_path):
    with pytest.raises(UsageError, match="no such bundle"):
        html_report.render(tmp_path / "missing.json", None, tmp_path / "out")
    (tmp_path / "b.json").write_text("{not json")
    with pytest.raises(UsageError, match="not JSON"):
        html_report.render(tmp_path / "b.json", None, tmp_path / "out")
    (tmp_path / "c.json").write_text('{"kind": "something else"}')
    with pytest.raises(UsageError, match="not an amqpspec report bundle"):
        html_report.render(tmp_path / "c.json", None, tmp_path / "out")


def test_a_foreign_html_folder_is_never_deleted(report, tmp_path):
    out = tmp_path / "out"
    (out / "html").mkdir(parents=True)
    (out / "html" / "mine.txt").write_text("keep")
    with pytest.raises(UsageError, match="not written by the HTML report"):
        html_report.render(report["bundle_path"], None, out)
    assert (out / "html" / "mine.txt").read_text() == "keep"
    (out / "html" / "mine.txt").unlink()
    (out / "html").rmdir()
    html_report.render(report["bundle_path"], None, out)
    (out / "html" / "stale.html").write_text("old page")
    html_report.render(report["bundle_path"], None, out)      # its own folder is replaced
    assert not (out / "html" / "stale.html").exists()


def test_a_failed_render_leaves_the_previous_report_whole(report, tmp_path, monkeypatch):
    out = tmp_path / "out"
    html_report.render(report["bundle_path"], None, out)
    before = sorted(p.relative_to(out) for p in (out / "html").rglob("*"))

    def boom(*args, **kwargs):
        raise RuntimeError("template bug")

    monkeypatch.setattr(site.model, "build_spec", boom)
    with pytest.raises(RuntimeError):
        html_report.render(report["bundle_path"], None, out)
    assert sorted(p.relative_to(out) for p in (out / "html").rglob("*")) == before
    assert sorted(p.name for p in out.iterdir()) == ["html", "index.html"]


def test_pcap_links_follow_the_policy_and_survive_a_failing_writer(tmp_path, monkeypatch):
    results = [_result("amqp091/4.2.3/fails", Verdict.FAILED, clauses=["amqp091:4.2.3/1"]),
               _result("amqp091/4.2.3/passes", Verdict.PASSED, clauses=["amqp091:4.2.3/1"])]
    out = tmp_path / "out"
    bundle = build_bundle([_write(tmp_path / "r.jsonl", results)], out)
    written: list[tuple[int, str]] = []

    def fake(entries, path, protocol, **about):
        written.append((len(entries), protocol))
        Path(path).write_bytes(b"\xd4\xc3\xb2\xa1")

    monkeypatch.setattr(pcap, "pcap_writer", lambda: fake)

    def pages() -> dict[str, str]:
        return {p.name.split("-")[0]: p.read_text(encoding="utf-8") for p in (out / "html" / "t").glob("*/c/*.html")}

    html_report.render(bundle, out / "dataset", out)
    got = pages()
    assert "Download pcap" in got["amqp091_4.2.3_fails"] and "Download pcap" not in got["amqp091_4.2.3_passes"]
    assert "need attention" in got["amqp091_4.2.3_passes"]
    assert written == [(3, "0-9-1")]
    html_report.render(bundle, out / "dataset", out, pcaps="all")
    assert all("Download pcap" in t for t in pages().values())
    html_report.render(bundle, out / "dataset", out, pcaps="none")
    assert not any("Download pcap" in t for t in pages().values())

    def broken(entries, path, protocol, **about):
        Path(path).write_bytes(b"half")
        raise ValueError("cannot")

    monkeypatch.setattr(pcap, "pcap_writer", lambda: broken)
    html_report.render(bundle, out / "dataset", out)
    assert "could not convert" in pages()["amqp091_4.2.3_fails"]
    assert not list((out / "html").rglob("*.pcap"))
    monkeypatch.setattr(pcap, "pcap_writer", lambda: None)
    html_report.render(bundle, out / "dataset", out)
    assert "not installed" in pages()["amqp091_4.2.3_fails"]


@pytest.mark.parametrize("rows, expected", [
    ([], None),
    ([{"clause_verdict": "passed"}], "passed"),
    ([{"clause_verdict": "informational"}], "passed"),
    ([{"clause_verdict": "passed"}, {"clause_verdict": "skipped"}], "passed"),
    ([{"clause_verdict": "skipped"}, {"clause_verdict": "error"}], "skipped"),
    ([{"clause_verdict": "warning"}, {"clause_verdict": "passed"}], "warning"),
    ([{"clause_verdict": "failed", "is_deviation": True}, {"clause_verdict": "warning"}], "deviation"),
    ([{"clause_verdict": "failed", "is_deviation": True}, {"clause_verdict": "failed"}], "failed"),
    ([{"clause_verdict": "nonsense"}], "error"),
    ([{"clause_verdict": None, "verdict": "failed"}], "failed"),
])
def test_clause_status(rows, expected):
    assert status.clause_status(rows) == expected


def test_hex_view_is_bounded_and_refuses_garbage():
    view = hexview.hex_view("00" * 5000)
    assert view.total == 5000 and view.shown == hexview.MAX_OCTETS and view.cut == 5000 - hexview.MAX_OCTETS
    assert len(view.lines) == hexview.MAX_OCTETS // 16
    assert hexview.hex_view("zz").error == "not hexadecimal"
    assert hexview.hex_view(None).total == 0
    assert hexview.hex_view("41 42\n43").lines == ["0000  41 42 43" + " " * 42 + "|ABC|"]


def test_chart_draws_the_last_runs_and_counts_the_rest():
    points = [{"run_id": f"r{i}", "version": "1" if i < 150 else "2", "started_at": f"2026-01-01T00:{i % 60:02d}:00Z",
               "cases": 10, "verdicts": {"passed": 8, "failed": 2}, "must": {"ratio": 0.8}, "should": {"ratio": None}}
              for i in range(chart.MAX_POINTS + 80)]
    c = chart.build_chart({"product": "X", "protocol": "0-9-1", "points": points})
    assert len(c.points) == chart.MAX_POINTS and c.omitted == 80 and c.total == chart.MAX_POINTS + 80
    assert c.should_line == [] and len(c.must_line) == 1
    assert sum(p.version_mark for p in c.points) == 1
    bar = c.points[0].bars
    assert [b.cls for b in bar] == ["passed", "failed"]
    assert abs(sum(b.h for b in bar) - (c.bar_bottom - c.bar_top)) < 1e-6
