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



# How long the page loop waits for the worker's pcap before writing it itself: the worker is a
# fork of a process with threads (a JVM gateway, a prefetch), and a fork can inherit a lock held
# by a thread that does not exist in the child; the report must not hang on that.
WORKER_WAIT_S = 60.0


def _write_with_default_writer(transcript: Any, path: Path, protocol: str, about: dict[str, Any]) -> bool:
    """``write`` with the default writer, into a temporary name renamed into place: what the worker
    runs (top-level, so it pickles). The rename means a pcap this process wrote meanwhile (after a
    timeout) is replaced whole by the same octets, never interleaved."""
    tmp = path.with_name(path.name + ".part")
    if not write(pcap_writer(), transcript, tmp, protocol, **about):
        return False
    tmp.replace(path)
    return True


class Batch:
    """pcaps written beside the page rendering, in one worker process.

    Why: scapy builds every packet in Python, and a report of several runs writes hundreds of
    pcaps (measured: a third of the HTML stage of four runs). The pages are Python too, so a
    thread would only take turns with them on the GIL; a forked worker uses the second core.
    ``submit`` queues a pcap and returns at once; ``done`` waits for it (WORKER_WAIT_S at most)
    and says whether it was written. Where no worker can be had (no ``fork``, ``workers=0``, a
    writer of the caller's own), or the worker fails or stalls, the pcap is written in this
    process when ``done`` asks for it, and so is every later one.
    """

    def __init__(self, writer: Writer | None, workers: int = 1) -> None:
        self._writer = writer
        self._pool: Any = None
        self._jobs: dict[Path, tuple[Any, tuple[Any, str, dict[str, Any]]]] = {}
        if writer is not None and workers > 0 and getattr(writer, "__module__", None) == __name__:
            self._pool = _fork_pool(workers)

    def submit(self, transcript: Any, path: Path, protocol: str, **about: Any) -> None:
        if self._writer is None or not isinstance(transcript, list):
            return
        args = (transcript, protocol, about)
        pending = None
        if self._pool is not None:
            try:
                pending = self._pool.apply_async(_write_with_default_writer, (transcript, path, protocol, about))
            except Exception as exc:  # a broken pool: this pcap and the rest are written here
                self._give_up(f"no pcap worker ({exc})")
        self._jobs[path] = (pending, args)

    def done(self, path: Path) -> bool:
        """True when the pcap queued for ``path`` was written (False when none was queued)."""
        job = self._jobs.pop(path, None)
        if job is None:
            return False
        pending, (transcript, protocol, about) = job
        if pending is not None and self._pool is not None:
            try:
                return bool(pending.get(WORKER_WAIT_S))
            except Exception as exc:  # died, failed or stalled: this one and the rest are written here
                self._give_up(f"pcap worker failed on {path.name} ({type(exc).__name__}: {exc})")
        if pending is not None:  # what an ended worker may have left half-written
            path.with_name(path.name + ".part").unlink(missing_ok=True)
        return write(self._writer, transcript, path, protocol, **about)

    def _give_up(self, why: str) -> None:
        log.warning("%s: writing pcaps in this process", why)
        self.close()

    def close(self) -> None:
        """Ends the worker (at once: every pcap the pages wanted was waited for or written here)."""
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.terminate()
            pool.join()


def _fork_pool(workers: int) -> Any:
    """A pool of forked processes (they start with scapy and the capture code already imported),
    or None where the platform has no fork."""
    import multiprocessing

    try:
        return multiprocessing.get_context("fork").Pool(workers)
    except (OSError, ValueError) as exc:
        log.warning("no pcap worker (%s): writing pcaps in this process", exc)
        return None
