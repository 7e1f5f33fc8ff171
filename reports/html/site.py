"""Writes the report's pages: Jinja2 templates, autoescaped, into a folder that opens offline.

Layout under ``out_dir`` (beside the pipeline's ``bundle.json`` and ``dataset/``)::

    index.html                         summary per broker and protocol, worst failures first
    html/spec/<protocol>.html          the annotated specification
    html/matrix/<protocol>.html        clause x broker (when a protocol has several brokers)
    html/history.html, runs-N.html, flaky-N.html      history (when there are several runs)
    html/t/<target>/index.html         one broker+protocol: by section, links to the case lists
    html/t/<target>/<verdict>-N.html   its cases, worst first, 200 a page
    html/t/<target>/c/<case>.html      one case of the latest run: evidence, transcript, replay
    html/findings/index-N.html, <signature>.html      fuzz findings
    html/inputs-N.html                 what the pipeline could not read
    html/static/                       CSS and a few lines of JS (filtering only)

Only ``index.html`` and ``html/`` are the renderer's; ``html/`` is replaced on every render
(when it carries the renderer's marker file), so pages of cases that no longer exist do not
linger. ``index.html`` is written last: a report whose index exists is complete.
"""
from __future__ import annotations

import logging
import re
import shutil
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import jinja2

from amqpspec.atomicfile import write_atomically
from amqpspec.reports.console import format_close, printable, redact_url

from . import chart, load, model, pcap, split
from . import clients as client_view
from .hexview import hex_view
from .paginate import PAGE_SIZE, paginate
from .status import STATUSES

log = logging.getLogger(__name__)

HERE = Path(__file__).parent
MARKER = ".amqpspec-html"
MAX_TRANSCRIPT_ENTRIES = 1000   # entries shown on a case page; the rest are in the pcap / result file
WORST_ON_INDEX = 10
VERDICTS = model.VERDICTS


# ----------------------------------------------------------------------------------------
# filters: everything from a broker or a file is shown through ``p`` (control and bidi
# characters made visible) and then autoescaped by Jinja
# ----------------------------------------------------------------------------------------

# what printable() would change: C0/C1 controls, DEL, lone surrogates, bidi and invisible marks
_SUSPECT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]")


def _p(value: Any) -> str:
    """printable(), with a fast path for the common clean string (transcripts are long)."""
    if isinstance(value, str) and not _SUSPECT.search(value):
        return value
    return printable(value)


def _pm(value: Any) -> str:
    if isinstance(value, str) and not _SUSPECT.search(value.replace("\n", "")):
        return value
    return printable(value, multiline=True)


def _pct(value: Any) -> str:
    try:
        ratio = float(value)
    except (TypeError, ValueError):
        return "–"
    if ratio != ratio:
        return "–"
    return f"{ratio * 100:.1f}%"


def _ts(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, datetime):
        stamp = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return stamp.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")
    text = printable(value)
    try:
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%SZ")


def _seconds(value: Any) -> str:
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return "–"
    if seconds != seconds:
        return "–"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def _short(value: Any, limit: int = 200) -> str:
    text = printable(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _close_text(close: Any) -> str:
    """The close verdict in words (shared wording with the console), plus the AMQP 1.0
    error condition, which the console's one-liner leaves out."""
    text = format_close(close if isinstance(close, dict) else None)
    condition = close.get("condition") if isinstance(close, dict) else None
    if condition:
        text += f" [condition {printable(condition)}]"
    return text


def make_env(strict: bool = False) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined if strict else jinja2.Undefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update({
        "p": _p,
        "pm": _pm,
        "pct": _pct,
        "ts": _ts,
        "secs": _seconds,
        "short": _short,
        "url": redact_url,
        "slug": model.slug,
        "close_text": _close_text,
    })
    env.globals.update({
        "VERDICTS": VERDICTS,
        "FAMILIES": model.FAMILIES,
        "STATUSES": STATUSES,
        "status_legend": model.status_legend(),
    })
    return env


class Site:
    """The pages of one report, written into ``out_dir``."""

    def __init__(self, out_dir: Path, bundle: dict[str, Any], env: jinja2.Environment, staging: Path) -> None:
        self.out = out_dir
        self.staging = staging      # where html/ is written until it replaces the old one
        self.bundle = bundle
        self.env = env
        self.pages = 0
        self.nav: dict[str, Any] = {}

    def write(self, template: str, rel: str, **context: Any) -> None:
        depth = rel.count("/")
        root = "../" * depth
        html = self.env.get_template(template).render(
            root=root, href=lambda path: root + path, page=rel, nav=self.nav, bundle=self.bundle, **context)
        target = self.path(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
        self.pages += 1

    def path(self, rel: str) -> Path:
        """Where the file a link calls ``rel`` is written now (``html/...`` goes to staging:
        links are relative to ``out_dir`` and hold once the staging folder is renamed)."""
        return self.staging / rel[len("html/"):] if rel.startswith("html/") else self.out / rel

    def write_paginated(self, template: str, prefix: str, items: list[Any], size: int = PAGE_SIZE,
                        **context: Any) -> list[str]:
        """``prefix-1.html``, ``prefix-2.html``...; returns the paths written."""
        def href(n: int) -> str:
            return f"{prefix}-{n}.html"
        written = []
        for page in paginate(items, href, size):
            path = href(page.number)
            self.write(template, path, pager=page, **context)
            written.append(path)
        return written


# ----------------------------------------------------------------------------------------
# building the views
# ----------------------------------------------------------------------------------------

def _by_key(entries: list[Any]) -> dict[str, dict[str, Any]]:
    return {e["key"]: e for e in entries if isinstance(e, dict) and "key" in e}


def _targets(bundle: dict[str, Any]) -> list[model.TargetView]:
    counts = _by_key(bundle["verdict_counts"])
    urls = {(r.get("key"), r.get("run_id")): r.get("target_url") for r in bundle["runs"] if isinstance(r, dict)}
    compliance = _by_key(bundle["compliance"])
    out = []
    for t in bundle["targets"]:
        if not isinstance(t, dict) or "key" not in t:
            continue
        key = str(t["key"])
        out.append(model.TargetView(
            key=key, product=str(t.get("product") or "unknown"), version=str(t.get("version") or "unknown"),
            protocol=str(t.get("protocol") or ""), platform=t.get("platform"), runs=int(t.get("runs") or 0),
            latest_run=str(t.get("latest_run") or ""), slug=model.slug(key),
            counts=counts.get(key, {"cases": 0, "verdicts": {v: 0 for v in VERDICTS}, "deviations": 0,
                                    "by_section": []}),
            compliance=compliance.get(key, {"levels": {}, "deviations": 0}),
            last_started_at=t.get("last_started_at"),
            target_url=str(urls.get((key, t.get("latest_run"))) or "")))
    return out


def _transcript_view(transcript: Any) -> tuple[list[dict[str, Any]], int, str | None]:
    """Entries to show (with hex views), how many were left out, and a note for a transcript
    that is a path or garbage rather than a list."""
    if transcript in (None, "", []):
        return [], 0, None
    if not isinstance(transcript, list):
        return [], 0, f"transcript stored apart: {printable(transcript)}"
    arrows = {"send": "→", "recv": "←", "event": "•"}
    shown = []
    for entry in transcript[:MAX_TRANSCRIPT_ENTRIES]:
        if not isinstance(entry, dict):
            continue
        direction = str(entry.get("dir", ""))
        try:
            t = f"{float(entry.get('t')):.3f}"
        except (TypeError, ValueError):
            t = ""
        shown.append({"t": t, "dir": direction if direction in arrows else "other",
                      "arrow": arrows.get(direction, "?"), "conn": entry.get("conn", ""),
                      "summary": entry.get("summary", ""), "hex": hex_view(entry.get("hex")),
                      "redacted": bool(entry.get("redacted"))})
    return shown, max(0, len(transcript) - MAX_TRANSCRIPT_ENTRIES), None


def _evidence_view(record: dict[str, Any] | None) -> dict[str, Any]:
    """The parts of a result record's evidence a case page shows, with every key present
    (a record from a file may lack any of them or hold the wrong type)."""
    evidence = (record or {}).get("evidence")
    evidence = evidence if isinstance(evidence, dict) else {}
    checks = []
    for check in evidence.get("checks") if isinstance(evidence.get("checks"), list) else []:
        if isinstance(check, dict):
            verdict = str(check.get("verdict") or "error")
            clauses = check.get("clauses") if isinstance(check.get("clauses"), list) else []
            checks.append({"verdict": verdict if verdict in VERDICTS else "error",
                           "description": check.get("description") or "", "clauses": clauses,
                           "expected": check.get("expected") or "", "observed": check.get("observed") or ""})
    notes = evidence.get("notes") if isinstance(evidence.get("notes"), list) else []
    close = (record or {}).get("close")
    return {"description": evidence.get("description") or "", "checks": checks, "notes": notes,
            "close": close if isinstance(close, dict) else None}


def _attach_records(targets: list[model.TargetView], bases: list[Path]) -> None:
    """Reads the original result lines of every case shown (transcript, checks, close text)."""
    wanted: dict[Path, set[int]] = {}
    located: dict[int, tuple[Path, int]] = {}
    for t in targets:
        for case in t.cases:
            path = load.resolve(case.source_file, bases)
            if path is None:
                case.record_problem = (f"the result file {printable(case.source_file)!s} is not available: "
                                       "no transcript or checks" if case.source_file else
                                       "the dataset does not say which result file this came from")
                continue
            try:
                line = int(case.source_line or 0)
            except (TypeError, ValueError):
                line = 0
            if line < 1:
                case.record_problem = "the dataset has no line number for this record"
                continue
            wanted.setdefault(path, set()).add(line)
            located[id(case)] = (path, line)
    records = load.read_source_lines(wanted)
    for t in targets:
        for case in t.cases:
            where = located.get(id(case))
            if where is None:
                continue
            record = records.get(where)
            if record is None or str(record.get("case")) != case.case or \
                    str(record.get("run_id") or "unknown") != case.run_id:
                case.record_problem = (f"{printable(where[0])} line {where[1]} no longer holds this record "
                                       "(the file changed after the pipeline read it)")
                continue
            case.record = record


def _finding_about(data: dict[str, Any] | None, entry: dict[str, Any]) -> dict[str, Any]:
    """What a finding page shows from the finding file, falling back on the bundle's example
    (every key present: the file may be gone or hand-edited)."""
    data = data or {}
    example = entry.get("example") if isinstance(entry.get("example"), dict) else {}
    given = data.get("input") if isinstance(data.get("input"), dict) else {}
    return {
        "target_url": data.get("target_url") or "",
        "seed": data.get("seed", example.get("seed")),
        "input_summary": given.get("summary") or example.get("input_summary") or "",
        "input_hex": given.get("hex") or example.get("input_hex") or "",
        "replay": data.get("replay") or example.get("replay") or "",
    }


def _finding_views(bundle: dict[str, Any], rows: list[dict[str, Any]], bases: list[Path]) -> list[dict[str, Any]]:
    """The bundle's signatures, each with its richest finding file (most hits) when readable."""
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        sig = row.get("signature_id")
        if sig is None:
            continue
        if sig not in best or int(row.get("count") or 0) > int(best[sig].get("count") or 0):
            best[sig] = row
    out = []
    findings = bundle["findings"] if isinstance(bundle["findings"], dict) else {}
    for entry in findings.get("by_signature") or []:
        if not isinstance(entry, dict):
            continue
        sig = str(entry.get("signature_id") or "")
        view = {"entry": entry, "slug": model.slug(sig or "unknown"), "file": None, "problem": None}
        row = best.get(entry.get("signature_id"))
        path = load.resolve(row.get("source_file"), bases) if row else None
        if path is not None:
            view["file"] = load.read_json_file(path)
            if view["file"] is None:
                view["problem"] = f"{printable(path)} is not readable JSON"
        elif row is not None:
            view["problem"] = f"the finding file {printable(row.get('source_file'))} is not available"
        else:
            view["problem"] = "no finding file in the dataset for this signature"
        view["href"] = f"html/findings/{view['slug']}.html"
        view["about"] = _finding_about(view["file"], entry)
        out.append(view)
    return out


def _clause_order(protocol: str) -> dict[str, int]:
    from amqpspec import clauses as catalog
    try:
        return {c.id: i for i, c in enumerate(catalog.catalog(protocol, extensions=True))}
    except Exception:
        return {}


def _matrices(bundle: dict[str, Any], targets: list[model.TargetView]) -> list[dict[str, Any]]:
    by_key = {t.key: t for t in targets}
    out = []
    for m in bundle["matrix"]:
        if not isinstance(m, dict):
            continue
        columns = [str(c) for c in m.get("columns") or []]
        protocol = str(m.get("protocol") or "")
        order = _clause_order(protocol)
        rows = [r for r in m.get("rows") or [] if isinstance(r, dict)]
        rows.sort(key=lambda r: (order.get(r.get("clause"), len(order)), str(r.get("clause"))))
        totals = [Counter() for _ in columns]
        prepared = []
        for r in rows:
            cells = list(r.get("cells") or [])[:len(columns)]
            cells += [None] * (len(columns) - len(cells))
            for i, cell in enumerate(cells):
                totals[i][cell if cell in ("passed", "failed", "undecided") else "none"] += 1
            known = bool(r.get("known"))
            prepared.append({"clause": r.get("clause"), "family": r.get("family"), "level": r.get("level"),
                             "known": known, "cells": cells, "differ": len({c for c in cells}) > 1,
                             "href": model.spec_href(protocol, str(r.get("clause"))) if known else None})
        out.append({"protocol": protocol, "slug": model.protocol_slug(protocol), "columns": columns,
                    "targets": [by_key.get(c) for c in columns], "rows": prepared, "totals": totals,
                    "cases_without_clause": m.get("cases_without_clause", 0),
                    "href": f"html/matrix/{model.protocol_slug(protocol)}.html"})
    return out


def _check_out(out_dir: Path) -> None:
    html = out_dir / "html"
    if html.exists() and not (html / MARKER).exists():
        raise load.ReportInputError(
            f"{html} exists and was not written by the HTML report: move it away or choose another --out")


def _start_staging(out_dir: Path) -> Path:
    staging = Path(tempfile.mkdtemp(prefix=".html-", dir=out_dir))
    (staging / MARKER).write_text("written by amqpspec.reports.html; replaced on every render\n", encoding="utf-8")
    shutil.copytree(HERE / "static", staging / "static")
    return staging


def _swap_in(staging: Path, out_dir: Path) -> None:
    """The new html/ replaces the old one in two renames: pages of cases that no longer exist
    do not linger, and a render that fails half-way leaves the previous report whole."""
    html = out_dir / "html"
    old = None
    if html.exists():
        old = Path(tempfile.mkdtemp(prefix=".html-old-", dir=out_dir))
        old.rmdir()
        html.rename(old)
    staging.chmod(0o755)
    staging.rename(html)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _write_index_atomically(site: Site, **context: Any) -> Path:
    """index.html last and atomically: a browser or a test never sees half of it."""
    html = site.env.get_template("index.html.j2").render(
        root="", href=lambda path: path, page="index.html", nav=site.nav, bundle=site.bundle, **context)
    final = write_atomically(site.out / "index.html", html)
    site.pages += 1
    return final


PCAP_CHOICES = ("attention", "all", "none")


def _pcap_note(policy: str, writer: Any, wanted: bool) -> str:
    """Why a page with a transcript has no pcap link (shown only when it has none)."""
    if policy == "none":
        return "this report was rendered without pcaps"
    if writer is None:
        return "capture support (amqpspec.capture.pcap with scapy) is not installed"
    if not wanted:
        return "pcaps are written for cases that need attention (render with pcaps=\"all\" for every case)"
    return "the capture writer could not convert this transcript (see the render log)"


def render_site(bundle_path: Path, dataset_dir: Path | None, out_dir: Path, *, strict: bool = False,
                pcaps: str = "attention", progress: Callable[[str], None] | None = None) -> Path:
    if pcaps not in PCAP_CHOICES:
        raise load.ReportInputError(f"pcaps must be one of {', '.join(PCAP_CHOICES)}, not {pcaps!r}")
    bundle = load.load_bundle(bundle_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    env = make_env(strict)
    _check_out(out_dir)
    staging = _start_staging(out_dir)
    try:
        return _render(Site(out_dir, bundle, env, staging), bundle, bundle_path, dataset_dir, pcaps, progress)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _render(site: Site, bundle: dict[str, Any], bundle_path: Path, dataset_dir: Path | None, pcaps: str,
            progress: Callable[[str], None] | None) -> Path:
    bases = [bundle_path.resolve().parent, Path.cwd()]
    targets = _targets(bundle)
    clients = client_view.section(bundle)
    libraries = client_view.library_views(clients)   # client libraries: pages like a broker's, apart
    rows = load.read_latest_rows(dataset_dir, bundle["targets"] + clients["libraries"])
    for t in targets + libraries:
        t.cases = model.build_cases(t, rows.by_target.get(t.key, []))
    _attach_records(targets + libraries, bases)

    writer = pcap.pcap_writer() if pcaps != "none" else None
    batch = pcap.Batch(writer)
    try:
        return _render_pages(site, bundle, bases, pcaps, progress, targets, libraries, clients, rows, writer, batch)
    finally:
        batch.close()


def _case_pcap(t: model.TargetView, case: Any, pcaps: str) -> tuple[str, dict[str, Any], bool]:
    """Where a case's pcap goes, what it says about itself, and whether the policy wants one."""
    pcap_rel = f"html/t/{t.slug}/c/{Path(case.href).stem}.pcap"
    about = {"upstream": case.target_url, "started": (case.record or {}).get("started_at", ""),
             "source": f"result {case.case}", "case": case.case, "replay": case.replay}
    return pcap_rel, about, pcaps == "all" or case.verdict != "passed"


def _finding_pcap(f: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    pcap_rel = f"html/findings/{f['slug']}.pcap"
    about = {"upstream": (f["file"] or {}).get("target_url", ""), "started": (f["file"] or {}).get("first_seen", ""),
             "source": f"finding {f['entry'].get('signature_id')}", "replay": (f["file"] or {}).get("replay")}
    return pcap_rel, about


def _render_pages(site: Site, bundle: dict[str, Any], bases: list[Path], pcaps: str,
                  progress: Callable[[str], None] | None, targets: list[model.TargetView],
                  libraries: list[model.TargetView], clients: dict[str, Any], rows: Any, writer: Any,
                  batch: pcap.Batch) -> Path:
    """Every page, with the targets, libraries and dataset rows ``_render`` read; pcaps through ``batch``."""
    out_dir = site.out
    protocols = sorted({t.protocol for t in targets})
    # the annotated specification: the brokers' columns, then the libraries' (client-side verdicts)
    specs = [model.build_spec(p, [t for t in targets + libraries if t.protocol == p], rows.by_target)
             for p in sorted({t.protocol for t in targets + libraries}) if p in model.PROTOCOL_SLUGS]
    matrices = _matrices(bundle, targets)
    client_matrices = client_view.matrices(clients, libraries)
    charts = [chart.build_chart(h) for h in bundle["history"] if isinstance(h, dict)]
    findings = _finding_views(bundle, rows.findings, bases)
    # every pcap is queued now, written by the worker while the pages below are rendered
    for t in targets + libraries:
        for case in t.cases:
            pcap_rel, about, wanted = _case_pcap(t, case, pcaps)
            if wanted:
                batch.submit(case.record.get("transcript") if case.record else None, site.path(pcap_rel),
                             t.protocol, **about)
    for f in findings:
        pcap_rel, about = _finding_pcap(f)
        batch.submit((f["file"] or {}).get("transcript"), site.path(pcap_rel), str(f["entry"].get("protocol") or ""),
                     **about)
    for f in findings:   # a violated clause links to the annotated spec when that page exists
        protocol = str(f["entry"].get("protocol") or "")
        known = bundle["clauses"] if isinstance(bundle["clauses"], dict) else {}
        f["clauses"] = [{"id": cid, "info": known.get(cid) if isinstance(known.get(cid), dict) else None,
                         "href": model.spec_href(protocol, cid) if protocol in protocols and cid in known else None}
                        for cid in f["entry"].get("clauses") or [] if isinstance(cid, str)]
    inputs = bundle["inputs"] if isinstance(bundle["inputs"], dict) else {}
    several_runs = any(len(c.points) > 1 for c in charts)
    site.nav = {
        "specs": [(s.protocol, s.href) for s in specs],
        "matrices": [(m["protocol"], m["href"]) for m in matrices if len(m["columns"]) > 1],
        "client_matrices": [(m["protocol"], m["href"]) for m in client_matrices],
        "history": "html/history.html" if several_runs else None,
        "findings": "html/findings/index-1.html" if findings else None,
        "inputs": "html/inputs-1.html" if (inputs.get("bad") or inputs.get("files")) else None,
    }

    for spec in specs:
        if progress:
            progress(f"annotated specification {spec.protocol}")
        site.write("spec.html.j2", spec.href, spec=spec)
    for m in matrices:
        if len(m["columns"]) > 1:
            site.write("matrix.html.j2", m["href"], matrix=m)
    for m in client_matrices:
        site.write("client_matrix.html.j2", m["href"], matrix=m)
    case_pages: list[tuple[model.TargetView, Any, str | None]] = []
    for t in targets + libraries:
        if progress:
            progress(f"{t.key}: {len(t.cases)} cases")
        if t.role == "client":
            site.write("library.html.j2", t.href, target=t, clause_index=client_view.clause_index(t))
        else:
            site.write("target.html.j2", t.href, target=t)
        tabs = [("all", "all", len(t.cases))] + [
            (v, v, sum(1 for c in t.cases if c.verdict == v)) for v in VERDICTS]
        for name, verdict, _n in tabs:
            chosen = t.cases if name == "all" else [c for c in t.cases if c.verdict == verdict]
            if name != "all" and not chosen:
                continue
            site.write_paginated("cases.html.j2", f"html/t/{t.slug}/{name}", chosen, target=t, tab=name, tabs=tabs)
        for case in t.cases:
            pcap_rel, _about, wanted = _case_pcap(t, case, pcaps)
            if wanted and batch.done(site.path(pcap_rel)):
                case.pcap_href = pcap_rel
            case_pages.append((t, case, _pcap_note(pcaps, writer, wanted)))

    def case_page(job: tuple[model.TargetView, Any, str | None]) -> None:
        t, case, pcap_note = job
        transcript = case.record.get("transcript") if case.record else None
        entries, elided, note = _transcript_view(transcript)
        site.write("case.html.j2", case.href, target=t, case=case, ev=_evidence_view(case.record),
                   transcript=entries, elided=elided, transcript_note=note, pcap_note=pcap_note)

    # one page per case: most of the report's time, rendered on two cores (split.py)
    pages_before = site.pages
    site.pages = pages_before + split.render_all(case_pages, case_page)
    if several_runs:
        site.write("history.html.j2", "html/history.html", charts=charts, changes=bundle["changes"],
                   flaky_count=len(bundle["flaky"]), runs_count=len(bundle["runs"]), targets=targets)
        site.write_paginated("runs.html.j2", "html/runs", [r for r in bundle["runs"] if isinstance(r, dict)])
        site.write_paginated("flaky.html.j2", "html/flaky", [f for f in bundle["flaky"] if isinstance(f, dict)])
    if findings:
        for f in findings:
            transcript = (f["file"] or {}).get("transcript")
            pcap_rel, _about = _finding_pcap(f)
            f["pcap_href"] = pcap_rel if batch.done(site.path(pcap_rel)) else None
            entries, elided, note = _transcript_view(transcript)
            f["input_hex"] = hex_view(f["about"]["input_hex"])
            site.write("finding.html.j2", f["href"], finding=f, transcript=entries, elided=elided,
                       transcript_note=note, pcap_note=_pcap_note(pcaps, writer, True))
        site.write_paginated("findings.html.j2", "html/findings/index", findings)
    if site.nav["inputs"]:
        site.write_paginated("inputs.html.j2", "html/inputs", [b for b in inputs.get("bad") or [] if isinstance(b, dict)],
                             inputs=inputs)

    _swap_in(site.staging, out_dir)
    return _write_index_atomically(
        site, targets=targets, specs=specs, matrices=matrices, charts=charts, findings=findings,
        dataset_problem=rows.problem, inputs=inputs, protocols=protocols, worst_limit=WORST_ON_INDEX,
        pages_written=site.pages, libraries=libraries, client_matrices=client_matrices)
