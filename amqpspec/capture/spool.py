"""The recording proxy's spool: each connection's entries go to disk as they pass, and the
transcript file is made whole, atomically, when the connection ends.

Why not keep the transcript in memory and rewrite it every few seconds (as ``record`` once
did): one connection carrying 150 MB then held its octets, their hex, the JSON text and its
encoding at once (619 MB at peak, against a documented 64 MiB bound), and each rewrite ran on
the event loop, stalling every relayed connection for as long as it took.

Now, per connection:

* ``NAME.json.partial`` (mode 0600: it holds application message bodies) is append-only JSON
  lines: ``{"meta": {...}}`` lines (the transcript's keys, the last value of each key counts)
  and entries, one per line. Lines are buffered and written by a worker thread, never on the
  event loop; a crash loses at most the last flush interval;
* at the end, ``NAME.json`` -- the transcript format of :mod:`amqpspec.capture.transcripts` --
  is written from the spool line by line (its size never in memory) through the atomic
  writer, and the spool is removed;
* a spool left by a proxy that was killed becomes a transcript with ``"complete": false`` when
  ``record`` next starts on that directory (:func:`recover`).
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
from pathlib import Path
from typing import Any, Iterator

from amqpspec.atomicfile import atomic_writer
from amqpspec.capture.transcripts import KIND, SCHEMA
from amqpspec.datafile import parse_json
from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER

SUFFIX = ".partial"
FLUSH_AT = 256 << 10          # buffered octets of one connection that make the pipe wait for the disk


def _line(obj: dict[str, Any]) -> bytes:
    # ASCII JSON: no line separator of any kind can hide inside a line (U+2028, NEL...)
    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


class Spool:
    """One connection's append-only spool; ``add``/``meta`` on the event loop, writes off it."""

    def __init__(self, final: Path) -> None:
        self.final = final
        self.path = final.with_name(final.name + SUFFIX)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        self._fh = os.fdopen(fd, "ab", buffering=0)
        self._pending: list[bytes] = []
        self.pending_bytes = 0
        self.entries = 0            # entry lines, written or pending
        self._lock = asyncio.Lock()
        self.closed = False

    def meta(self, **keys: Any) -> None:
        self._append(_line({"meta": keys}))

    def add(self, entry: dict[str, Any]) -> None:
        self.entries += 1
        self._append(_line(entry))

    def _append(self, line: bytes) -> None:
        self._pending.append(line)
        self.pending_bytes += len(line)

    @property
    def full(self) -> bool:
        return self.pending_bytes >= FLUSH_AT

    async def flush(self) -> None:
        """Writes what is buffered, in a worker thread; in order, one write at a time."""
        async with self._lock:
            if not self._pending or self.closed:
                return
            chunk = b"".join(self._pending)
            self._pending.clear()
            self.pending_bytes = 0
            await asyncio.get_running_loop().run_in_executor(None, self._fh.write, chunk)

    async def finish(self, **meta: Any) -> bool:
        """Flushes, closes, and turns the spool into the transcript file (in a worker thread).
        False (and no file) when the spool holds no entry."""
        self.meta(**meta)
        await self.flush()
        async with self._lock:
            self.closed = True
            self._fh.close()
            return await asyncio.get_running_loop().run_in_executor(None, assemble, self.path, self.final)

    def discard(self) -> None:
        """Nothing worth keeping came (no client octets): no file at all."""
        self.closed = True
        self._fh.close()
        try:
            self.path.unlink()
        except OSError:
            pass


def _read(spool: Path) -> Iterator[dict[str, Any]]:
    with open(spool, "rb") as fh:
        for raw in fh:
            if not raw.endswith(b"\n"):
                return  # the last line of a killed proxy's spool may be cut short
            try:  # a left-over spool is a file like any other: bounded nesting, no traceback
                obj = parse_json(raw.decode("utf-8", "replace"))
            except UsageError:
                continue
            if isinstance(obj, dict):
                yield obj


def assemble(spool: Path, final: Path, extra: list[dict[str, Any]] | None = None) -> bool:
    """Writes ``final`` (the transcript format) from ``spool`` and removes the spool. Two passes
    over the spool: the meta keys first (they head the file), then the entries, one at a time.
    False, spool removed and no file, when there is no entry to keep."""
    meta: dict[str, Any] = {}
    entries = 0
    for obj in _read(spool):
        if "meta" in obj and isinstance(obj["meta"], dict):
            meta.update(obj["meta"])
        else:
            entries += 1
    if not entries:
        spool.unlink(missing_ok=True)
        return False
    head = {"schema": SCHEMA, "kind": KIND, "protocol": meta.pop("protocol", None) or "0-9-1",
            "upstream": meta.pop("upstream", ""), "started": meta.pop("started", ""), **meta}
    opening = json.dumps(head, ensure_ascii=True)[:-1] + ', "entries": [\n'
    with atomic_writer(final) as out:
        out.write(opening)
        first = True
        for obj in itertools.chain(_entries(spool), extra or ()):   # one entry in memory at a time
            # the scrubber once more: a password registered after the entry was spooled
            obj["summary"] = SCRUBBER.scrub(str(obj.get("summary", "")))
            out.write(("" if first else ",\n") + json.dumps(obj, ensure_ascii=True))
            first = False
        out.write("\n]}\n")
    spool.unlink(missing_ok=True)
    return True


def _entries(spool: Path) -> Iterator[dict[str, Any]]:
    return (obj for obj in _read(spool) if "meta" not in obj)


def recover(directory: Path) -> list[Path]:
    """Spools a killed proxy left in ``directory``, each made a transcript marked incomplete."""
    made = []
    for spool in sorted(directory.glob(f"*.json{SUFFIX}")):
        final = spool.with_name(spool.name[: -len(SUFFIX)])
        if final.exists():
            continue
        note = {"t": 0.0, "dir": "event", "conn": 1, "hex": "",
                "summary": "recording interrupted: the proxy ended without closing this connection's transcript"}
        try:
            if _assemble_incomplete(spool, final, note):
                made.append(final)
        except OSError:
            continue
    return made


def _assemble_incomplete(spool: Path, final: Path, note: dict[str, Any]) -> bool:
    with open(spool, "ab") as fh:   # the last word on "complete", whatever the spool said
        fh.write(b"\n" + _line({"meta": {"complete": False}}))
    return assemble(spool, final, extra=[note])


__all__ = ["Spool", "assemble", "recover", "SUFFIX"]
