"""pcap downloads, when the capture module is there to write them.

``amqpspec.capture.pcap`` is optional for the report: without it (or when it fails on one
transcript) the page simply has no download link. A transcript's octets are still on the
page, in the hex views.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger(__name__)

Writer = Callable[..., Any]


def pcap_writer() -> Writer | None:
    """A function (entries, path, protocol, **about) -> anything, or None without capture support.

    ``amqpspec.capture.pcap.write_pcap`` takes a ``TranscriptFile`` (entries plus protocol,
    start time, source); a plain ``(entries, path, protocol)`` writer is accepted too.
    """
    try:
        from amqpspec.capture.pcap import write_pcap
    except ImportError:
        return None
    try:
        from amqpspec.capture.transcripts import TranscriptFile
    except ImportError:
        return lambda entries, path, protocol, **about: write_pcap(entries, path, protocol)

    def write_file(entries: list[dict[str, Any]], path: Path, protocol: str, **about: Any) -> Any:
        tf = TranscriptFile(protocol=protocol, entries=entries, upstream=str(about.get("upstream") or ""),
                            started=str(about.get("started") or ""), source=str(about.get("source") or ""),
                            case=about.get("case"), replay=about.get("replay"))
        return write_pcap(tf, path)

    return write_file


def write(writer: Writer | None, transcript: Any, path: Path, protocol: str, **about: Any) -> bool:
    """True when a pcap was written for this transcript."""
    if writer is None or not isinstance(transcript, list):
        return False
    entries = [e for e in transcript if isinstance(e, dict)]
    if not any(e.get("hex") for e in entries):
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        writer(entries, path, protocol, **about)
    except Exception as exc:  # a transcript the writer cannot take costs its link only
        log.warning("no pcap for %s: %s: %s", path.name, type(exc).__name__, exc)
        try:
            path.unlink()
        except OSError:
            pass
        return False
    return path.is_file()
