"""Errors of the wire layer. Every message names the element and the offset involved."""
from __future__ import annotations


class WireError(Exception):
    """Base class of codec errors."""


class EncodeError(WireError, ValueError):
    """A value cannot be encoded as asked (wrap it in Raw/Sized to send it anyway)."""


class DecodeError(WireError, ValueError):
    """Bytes do not decode; ``offset`` is relative to the start of the decoded unit."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        self.offset = offset
        super().__init__(message if offset is None else f"{message} (at offset {offset})")


class FrameError(DecodeError):
    """The frame stream itself is broken (bad frame-end, oversized frame): no resync possible."""
