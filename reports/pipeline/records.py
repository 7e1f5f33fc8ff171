"""The result records that JUnit and the HTML report quote, parsed once per process.

Why: both read whole records (transcripts included) back from the result files by file and
line, after the pipeline has located them; one run's file is tens of MB (five records hold
8 MB transcripts each) and parsing it costs about a second of Python each time. ``amqpspec
report`` writes JUnit and then the HTML report in one process, so the second reader takes the
records the first one parsed. A record is only reused while its file is unchanged (same real
path, size and modification time); ``forget`` drops everything once the report is written.

Lines are counted and parsed as ``amqpspec.datafile`` does for every reader of result files
(split on ``"\\n"`` only, bounded length and depth); a line that is not JSON is kept as
``None`` so it is not read again either.
"""
from __future__ import annotations

import os
import threading
from typing import Any

from amqpspec.datafile import DataFileError, parse_json, raw_lines

_lock = threading.Lock()
# real path -> ((size, mtime_ns), {line number: parsed JSON, or None when the line is not JSON})
_cache: dict[str, tuple[tuple[int, int], dict[int, Any]]] = {}


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def read_lines(path: str | os.PathLike[str], lines: set[int] | frozenset[int]) -> dict[int, Any]:
    """The JSON values at the given 1-based ``lines`` of a result file (any JSON: callers check
    the shape). Lines that are not there, too long or not JSON are left out.

    Raises OSError when the file cannot be read (callers decide whether that matters).
    """
    real = os.path.realpath(path)
    with _lock:
        stamp = _stamp(real)
        kept = _cache.get(real)
        known = kept[1] if kept is not None and stamp is not None and kept[0] == stamp else {}
        missing = {n for n in lines if n not in known}
        if missing:
            known = dict(known)
            last = max(missing)
            with open(real, "rb") as fh:
                for number, raw in raw_lines(fh):
                    if number in missing:
                        try:
                            known[number] = None if raw is None else parse_json(
                                raw.decode("utf-8", "replace"), str(path), line=number)
                        except DataFileError:
                            known[number] = None
                    if number >= last:
                        break
            if stamp is not None and _stamp(real) == stamp:   # not rewritten while we read it
                _cache[real] = (stamp, known)
        return {n: known[n] for n in lines if known.get(n) is not None}


def forget() -> None:
    """Drops every record kept (the report is written; the memory goes back)."""
    with _lock:
        _cache.clear()

