"""The result records that JUnit and the HTML report quote, parsed once per process.

Why: both read whole records (transcripts included) back from the result files by file and
line, after the pipeline has located them; one run's file is tens of MB (five records hold
8 MB transcripts each) and parsing it costs about a second of Python each time. ``amqpspec
report`` writes JUnit and then the HTML report in one process, so the second reader takes the
records the first one parsed; and ``prefetch`` parses small local inputs in a thread while
the JVM builds the dataset (the driver's Python only waits then, so on 2 cores the parse costs
no wall time). A record is only reused while its file is unchanged (same real path, size and
modification time); ``forget`` drops everything once the report is written.

Lines are counted and parsed as ``amqpspec.datafile`` does for every reader of result files
(split on ``"\\n"`` only, bounded length and depth); a line that is not JSON is kept as
``None`` so it is not read again either.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Iterable

from amqpspec.datafile import DataFileError, parse_json, raw_lines

#: prefetch parses at most this much input (parsed JSON takes several times its size in memory)
PREFETCH_MAX_BYTES = 256 << 20


@dataclass
class _File:
    stamp: tuple[int, int]                                  # (size, mtime_ns) when it was read
    lines: dict[int, Any] = field(default_factory=dict)     # line number -> parsed JSON or None
    complete: bool = False                                  # every line of the file is in ``lines``


_lock = threading.Lock()
_cache: dict[str, _File] = {}   # real path -> what was parsed of it


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _parse(raw: bytes | None, path: str, number: int) -> Any:
    if raw is None:
        return None   # longer than a result line may be
    try:
        return parse_json(raw.decode("utf-8", "replace"), path, line=number)
    except DataFileError:
        return None


def _read(real: str, shown: str, wanted: set[int] | None) -> dict[int, Any]:
    """Parses ``wanted`` lines (None: all) of a file, keeps them in the cache while the file is
    unchanged, and returns every line known of it (those kept before too); the caller holds _lock."""
    stamp = _stamp(real)
    kept = _cache.get(real)
    if kept is None or stamp is None or kept.stamp != stamp:
        kept = _File(stamp or (-1, -1))
    if kept.complete:
        return kept.lines
    missing = None if wanted is None else {n for n in wanted if n not in kept.lines}
    if missing is not None and not missing:
        return kept.lines
    lines = dict(kept.lines)
    last = max(missing) if missing else None
    complete = False
    with open(real, "rb") as fh:
        for number, raw in raw_lines(fh):
            if missing is None or number in missing:
                lines[number] = _parse(raw, shown, number)
            if last is not None and number >= last:
                break
        else:
            complete = missing is None
    if stamp is not None and _stamp(real) == stamp:   # not rewritten while it was read
        _cache[real] = _File(stamp, lines, complete)
    return lines


def read_lines(path: str | os.PathLike[str], lines: Iterable[int]) -> dict[int, Any]:
    """The JSON values at the given 1-based ``lines`` of a result file (any JSON: callers check
    the shape). Lines that are not there, too long or not JSON are left out.

    Raises OSError when the file cannot be read (callers decide whether that matters).
    """
    real = os.path.realpath(path)
    wanted = set(lines)
    with _lock:
        known = _read(real, str(path), wanted)
    return {n: known[n] for n in wanted if known.get(n) is not None}


def prefetch(paths: Iterable[str | os.PathLike[str]]) -> threading.Thread | None:
    """Parses every line of these local files in a daemon thread, if together they are small
    (PREFETCH_MAX_BYTES); returns the thread, or None when nothing is prefetched."""
    files = [str(p) for p in paths]
    try:
        total = sum(os.path.getsize(p) for p in files)
    except OSError:
        return None
    if not files or total > PREFETCH_MAX_BYTES:
        return None

    def run() -> None:
        for p in files:
            try:
                with _lock:
                    _read(os.path.realpath(p), p, None)
            except (OSError, UnicodeError, MemoryError):
                continue   # the readers will say so, or do without

    thread = threading.Thread(target=run, name="amqpspec-records", daemon=True)
    thread.start()
    return thread


def forget() -> None:
    """Drops every record kept (the report is written; the memory goes back)."""
    with _lock:
        _cache.clear()
