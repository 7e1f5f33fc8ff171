"""HTML report: static pages that open offline, from the pipeline's summary bundle.

    from amqpspec.reports.html import render
    index = render(Path("out/bundle.json"), Path("out/dataset"), Path("out"))

Static files only: Jinja2 templates rendered here, one stylesheet, a few lines of vanilla
JS for filtering tables (every page reads fully without it), no CDN, no build chain. Summary
numbers are the bundle's (``reports/pipeline/bundle.md``); per-case pages come from the
dataset's rows of each broker's latest run, completed by the original result records
(transcripts, checks). Pages are bounded: lists are paginated (200 rows), case pages exist
once per case of the latest run, history is charted over the last runs and summarized.

Everything a broker sent is escaped twice over: control and bidi characters are made
visible (``amqpspec.reports.console.printable``) and the result is HTML-autoescaped.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

__all__ = ["render"]


def render(bundle_path: str | Path, dataset_dir: str | Path | None, out_dir: str | Path, *,
           strict: bool = False, pcaps: str = "attention",
           progress: Callable[[str], None] | None = None) -> Path:
    """Writes the report into ``out_dir`` and returns the path of its ``index.html``.

    ``dataset_dir`` may be None or missing: the summary pages are still written, with a note
    that per-case pages need the dataset (and pyarrow to read it). ``strict`` makes a
    template that reads an absent value fail instead of printing nothing (for tests).
    ``pcaps``: which transcripts get a pcap download (needs ``amqpspec.capture.pcap`` and
    scapy; writing one takes tens of milliseconds): ``"attention"`` (default) every case that
    did not pass and every finding, ``"all"`` every case, ``"none"`` no pcap at all.
    Raises :class:`amqpspec.errors.UsageError` (one line) when the bundle cannot be read or
    ``out_dir/html`` belongs to something else.
    """
    from .site import render_site

    return render_site(Path(bundle_path), Path(dataset_dir) if dataset_dir is not None else None,
                       Path(out_dir), strict=strict, pcaps=pcaps, progress=progress)
