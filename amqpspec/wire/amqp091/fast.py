"""Fast encoders for well-formed strings, used by the generated code.

They accept only the plain, valid case and raise otherwise, which sends the generated
encoder to the generic path (override wrappers, clear errors).
"""
from __future__ import annotations

import struct

_U32 = struct.Struct(">I")


def fast_shortstr(v: object) -> bytes:
    if v.__class__ is str:
        b = v.encode("utf-8", "surrogateescape")  # type: ignore[attr-defined]
    elif v.__class__ is bytes:
        b = v  # type: ignore[assignment]
    else:
        raise TypeError("not a plain short string")
    n = len(b)
    if n > 255:
        raise ValueError("short string too long")
    return bytes((n,)) + b


def fast_longstr(v: object) -> bytes:
    if v.__class__ is bytes:
        b = v  # type: ignore[assignment]
    elif v.__class__ is str:
        b = v.encode("utf-8", "surrogateescape")  # type: ignore[attr-defined]
    else:
        raise TypeError("not a plain long string")
    return _U32.pack(len(b)) + b
