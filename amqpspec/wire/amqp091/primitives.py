"""Native AMQP 0-9-1 field types (spec 4.2.5): integers, bits, strings, timestamps.

These are the building blocks the generated method codecs call. Decoders take the whole
unit being decoded (a frame payload, exactly sized) plus an offset, and check every
length against what is left *before* slicing, so no length read from the wire can make
them allocate more than the input already holds.
"""
from __future__ import annotations

import struct
from typing import Any

from amqpspec.wire.errors import DecodeError, EncodeError
from amqpspec.wire.raw import Raw, Sized

U8 = struct.Struct(">B")
U16 = struct.Struct(">H")
U32 = struct.Struct(">I")
U64 = struct.Struct(">Q")

# Native field types of the 0-9-1 XML ("type" attribute of the elementary domains).
NATIVE_TYPES = ("bit", "octet", "short", "long", "longlong", "shortstr", "longstr", "timestamp", "table")

INT_STRUCTS = {"octet": U8, "short": U16, "long": U32, "longlong": U64, "timestamp": U64}
INT_BITS = {"octet": 8, "short": 16, "long": 32, "longlong": 64, "timestamp": 64}

SURROGATE = "surrogateescape"  # keeps invalid UTF-8 from a broker round-trippable


def to_bytes(value: str | bytes | bytearray | memoryview, what: str) -> bytes:
    if isinstance(value, str):
        try:
            return value.encode("utf-8", SURROGATE)
        except UnicodeEncodeError as exc:  # a lone surrogate outside the escaped range
            raise EncodeError(f"{what}: character {value[exc.start]!r} at index {exc.start} has no UTF-8 encoding;"
                              " pass bytes (or Raw) to send arbitrary octets") from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise EncodeError(f"{what}: expected str or bytes, got {type(value).__name__}")


def enc_int(kind: str, value: Any, what: str) -> bytes:
    if isinstance(value, Raw):
        return bytes(value.data)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, bool):
            value = int(value)
        else:
            raise EncodeError(f"{what}: expected an integer for {kind}, got {type(value).__name__}")
    bits = INT_BITS[kind]
    if not 0 <= value < (1 << bits):
        raise EncodeError(f"{what}: {value} does not fit an unsigned {bits}-bit {kind}; use Raw(...) to send other bytes")
    return INT_STRUCTS[kind].pack(value)


def enc_shortstr(value: Any, what: str = "short string") -> bytes:
    if isinstance(value, Raw):
        return bytes(value.data)
    if isinstance(value, Sized):
        data = to_bytes(value.value, what)
        if not 0 <= value.length <= 255:
            raise EncodeError(f"{what}: a short-string length prefix is one octet, {value.length} does not fit")
        return bytes((value.length,)) + data
    data = to_bytes(value, what)
    if len(data) > 255:
        raise EncodeError(
            f"{what}: {len(data)} octets exceed the 255 of a short string; use Sized(value, length=N) or Raw(...) to send it anyway"
        )
    return bytes((len(data),)) + data


def enc_longstr(value: Any, what: str = "long string") -> bytes:
    if isinstance(value, Raw):
        return bytes(value.data)
    if isinstance(value, Sized):
        data = to_bytes(value.value, what)
        if not 0 <= value.length < 1 << 32:
            raise EncodeError(f"{what}: length {value.length} does not fit 32 bits")
        return U32.pack(value.length) + data
    data = to_bytes(value, what)
    if len(data) >= 1 << 32:
        raise EncodeError(f"{what}: {len(data)} octets exceed a long string")
    return U32.pack(len(data)) + data


def enc_bits(values: list[Any]) -> bytes:
    """Packs up to 8 contiguous bits per octet, low bit first (spec 4.2.5.2)."""
    out = bytearray()
    for start in range(0, len(values), 8):
        octet = 0
        for i, v in enumerate(values[start:start + 8]):
            if isinstance(v, Raw):
                raise EncodeError("a bit field cannot be Raw; put the Raw on the neighbouring field or the frame payload")
            if v:
                octet |= 1 << i
        out.append(octet)
    return bytes(out)


def need(buf: bytes, offset: int, n: int, what: str) -> None:
    if n < 0 or offset + n > len(buf):
        raise DecodeError(f"{what}: needs {n} octets, {max(len(buf) - offset, 0)} left", offset)


def dec_int(kind: str, buf: bytes, offset: int, what: str) -> tuple[int, int]:
    st = INT_STRUCTS[kind]
    need(buf, offset, st.size, what)
    return st.unpack_from(buf, offset)[0], offset + st.size


def dec_shortstr(buf: bytes, offset: int, what: str = "short string") -> tuple[str, int]:
    need(buf, offset, 1, what)
    n = buf[offset]
    start = offset + 1
    need(buf, start, n, what)
    return bytes(buf[start:start + n]).decode("utf-8", SURROGATE), start + n


def dec_longstr(buf: bytes, offset: int, what: str = "long string") -> tuple[bytes, int]:
    need(buf, offset, 4, what)
    n = U32.unpack_from(buf, offset)[0]
    start = offset + 4
    need(buf, start, n, what)
    return bytes(buf[start:start + n]), start + n
