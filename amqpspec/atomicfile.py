"""Files written whole or not at all: a killed process or a reader never sees half of one.

Results, baselines, findings, transcripts, reports and bundles are all read by other tools
(CI, the pipeline, a browser) possibly while they are being written; each is written to a
temporary file in the same directory, flushed to disk, and renamed over the target.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO]:
    """Yields a file to write ``path`` into; on success it replaces ``path`` (mode 0644)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomically(path: str | os.PathLike[str], text: str) -> Path:
    """Writes ``text`` (UTF-8) to ``path`` atomically; returns the path."""
    with atomic_writer(path) as fh:
        fh.write(text)
    return Path(path)
