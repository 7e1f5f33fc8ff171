"""Override wrappers: how a caller asks the encoder to write something wrong on purpose.

A conformance suite has to send what a correct encoder refuses to produce. Instead of a
``strict=False`` switch that silently mangles values, the malformation is spelled out
where the frame is built, so a case reads as what it sends:

* ``Raw(b"...")``: these exact bytes stand in for the whole field (length prefix included).
* ``Sized(value, length=N)``: encode ``value`` normally but write ``N`` as its length prefix
  (short string, long string, field table, field array) -- "a length that lies".
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Raw:
    data: bytes

    def __post_init__(self) -> None:
        if not isinstance(self.data, (bytes, bytearray, memoryview)):
            raise TypeError(f"Raw needs bytes, got {type(self.data).__name__}")

    def __repr__(self) -> str:
        shown = bytes(self.data[:32]).hex()
        return f"Raw({len(self.data)} bytes: {shown}{'...' if len(self.data) > 32 else ''})"


@dataclass(frozen=True)
class Sized:
    value: Any
    length: int

    def __repr__(self) -> str:
        return f"Sized({self.value!r}, length={self.length})"
