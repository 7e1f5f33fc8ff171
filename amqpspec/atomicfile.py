"""Files written whole or not at all: a killed process or a reader never sees half of one.

Results, baselines, findings, transcripts, reports and bundles are all read by other tools
(CI, the pipeline, a browser) possibly while they are being written; each is written to a
temporary file in the same directory, flushed to disk, and renamed over the target.

The file gets the mode an ordinary ``open()`` would give it (0666 less the umask): these files
hold application message bodies and broker details, and a user with umask 077 keeps them
private; mkstemp's own 0600 would hide them from a CI job's other user with umask 022.
"""
from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


_UMASK_LOCK = threading.Lock()


def creation_mode() -> int:
    """The mode ``open(path, "w")`` would create a file with: 0666 less the process's umask.

    The umask can only be read by setting it; the lock keeps two threads of this process from
    seeing each other's temporary value (no other code here changes the umask)."""
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_writer(path: str | os.PathLike[str], *, binary: bool = False) -> Iterator[IO]:
    """Yields a file to write ``path`` into; on success it replaces ``path`` (mode as ``open``
    would create it, see :func:`creation_mode`)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, creation_mode())
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
