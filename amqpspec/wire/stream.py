"""The octet buffer under both protocols' frame readers.

Both readers take octets as they arrive (``feed``), hand out whole items (``next``, or
iteration), keep the exact octets of the item last returned (``last_raw``, for transcripts)
and tell how much of an unfinished frame is waiting (``pending``). Where a protocol header
may come, both read one the same way: eight octets starting with ``AMQP``. Only the frame
envelopes differ, and those stay in each protocol's reader.
"""
from __future__ import annotations

from typing import Any, Iterator

PROTOCOL_HEADER_SIZE = 8
_WAIT = b""


class OctetStream:
    """A growing buffer read from the front; consumed octets are dropped now and then."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self.last_raw = b""  # the exact octets of the item last returned, for transcripts

    @property
    def pending(self) -> int:
        """Octets received but not yet part of a complete item."""
        return len(self._buf) - self._pos

    def pending_bytes(self) -> bytes:
        return bytes(self._buf[self._pos:])

    def feed(self, data: bytes) -> None:
        if self._pos > 65536 and self._pos * 2 > len(self._buf):
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += data

    def next(self) -> Any:
        raise NotImplementedError

    def __iter__(self) -> Iterator[Any]:
        while True:
            item = self.next()
            if item is None:
                return
            yield item

    def _header_here(self) -> bytes | None:
        """Where a protocol header may come: its eight octets (consumed, ``last_raw``), ``b""``
        while the octets so far could still become one, or None when what comes is not one."""
        buf, pos = self._buf, self._pos
        avail = len(buf) - pos
        if avail < 4:
            return _WAIT if bytes(buf[pos:pos + avail]) == b"AMQP"[:avail] else None
        if buf[pos:pos + 4] != b"AMQP":
            return None
        if avail < PROTOCOL_HEADER_SIZE:
            return _WAIT
        self._pos += PROTOCOL_HEADER_SIZE
        self.last_raw = bytes(buf[pos:pos + PROTOCOL_HEADER_SIZE])
        return self.last_raw
