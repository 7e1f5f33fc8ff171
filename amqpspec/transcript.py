"""Two-way, timestamped record of what a case sent and received, for evidence and replay."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from amqpspec.sanitize import cap


@dataclass
class Entry:
    t: float         # seconds since the transcript started
    dir: str         # "send", "recv" or "event"
    data: bytes      # exact octets (SASL responses masked)
    summary: str     # decoded, one line
    conn: int = 0    # which connection of the case (a case may open several)
    redacted: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"t": round(self.t, 6), "dir": self.dir, "conn": self.conn,
                               "summary": self.summary, "hex": self.data.hex()}
        if self.redacted:
            out["redacted"] = True
        return out


MAX_ENTRIES = 5000        # a flooding broker must not make a transcript grow without bound:
MAX_BYTES = 4 << 20       # neither in entries nor in octets kept (data past it is cut to a prefix)
KEPT_PREFIX = 64
#: one received item above this is kept as its first KEPT_PREFIX octets: a peer's frame this
#: large (a 900 kB product name in connection.start) would otherwise be stored in the record
#: of every case, twice over as hex; no case needs its tail as evidence, and the summary
#: still says what it was
MAX_RECV_ITEM = 64 << 10
MAX_SUMMARY = 2000        # characters of one decoded summary (a broker string can be any size)


class Transcript:
    """Shared by all connections of one case, so that their frames interleave in time."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.start = time.monotonic()
        self.entries: list[Entry] = []
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.kept_bytes = 0
        self.elided = 0
        self._conns = 0

    def new_connection(self) -> int:
        self._conns += 1
        return self._conns

    def add(self, direction: str, data: bytes, summary: str, conn: int = 0, redacted: bool = False) -> None:
        if len(self.entries) >= self.max_entries:
            self.elided += 1
            return
        data = bytes(data)
        summary = cap(summary, MAX_SUMMARY)
        if self.kept_bytes + len(data) > self.max_bytes or (direction == "recv" and len(data) > MAX_RECV_ITEM):
            summary = f"{summary} [only the first {KEPT_PREFIX} of {len(data)} octets kept]"
            data = data[:KEPT_PREFIX]
        self.kept_bytes += len(data)
        self.entries.append(Entry(time.monotonic() - self.start, direction, data, summary, conn, redacted))

    def event(self, text: str, conn: int = 0) -> None:
        self.add("event", b"", text, conn)

    def to_json(self) -> list[dict[str, Any]]:
        out = [e.to_json() for e in self.entries]
        if self.elided:
            out.append({"t": round(time.monotonic() - self.start, 6), "dir": "event", "conn": 0,
                        "summary": f"{self.elided} further entries not recorded (limit {self.max_entries})", "hex": ""})
        return out

    def lines(self) -> list[str]:
        arrows = {"send": "->", "recv": "<-", "event": "**"}
        return [f"{e.t:8.3f} c{e.conn} {arrows.get(e.dir, e.dir)} {e.summary}" for e in self.entries]
