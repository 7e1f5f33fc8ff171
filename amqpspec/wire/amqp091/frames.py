"""AMQP 0-9-1 frames (spec 4.2.3), the protocol header (4.2.2) and a bounded stream reader.

Every frame can be written wrong on purpose: ``frame_type``, ``size`` and ``end``
override the type octet, the size field and the frame-end octet(s), and ``trailing``
appends bytes after a method's arguments. The reader never trusts a size field: a
frame announcing more than ``max_payload`` octets is refused as soon as its 7-octet
header is read, before anything is buffered for it.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Union

from amqpspec.wire.errors import DecodeError, FrameError
from amqpspec.wire.stream import OctetStream
from amqpspec.wire.amqp091 import spec
from amqpspec.wire.amqp091.base import Method, Properties, UnknownMethod
from amqpspec.wire.amqp091.table import SPEC, Dialect

PROTOCOL_HEADER = b"AMQP\x00" + bytes(spec.PROTOCOL_VERSION)
FRAME_END = spec.FRAME_END
FRAME_HEADER_SIZE = 7
FRAME_OVERHEAD = FRAME_HEADER_SIZE + 1  # header + frame-end octet
_HDR = struct.Struct(">BHI")
_CONTENT_HDR = struct.Struct(">HHQ")
_INDEX = struct.Struct(">I")
FRAME_TYPE_NAMES = {spec.FRAME_METHOD: "method", spec.FRAME_HEADER: "header",
                    spec.FRAME_BODY: "body", spec.FRAME_HEARTBEAT: "heartbeat"}
SUMMARY_BODY_MAX = 32


@dataclass(eq=True)
class ProtocolHeader:
    """The 8-octet protocol header, or any bytes sent in its place."""

    data: bytes = PROTOCOL_HEADER

    @classmethod
    def of(cls, major: int, minor: int, revision: int, protocol_id: int = 0, literal: bytes = b"AMQP") -> "ProtocolHeader":
        return cls(literal + bytes((protocol_id, major, minor, revision)))

    def encode(self, dialect: Dialect = SPEC) -> bytes:
        return bytes(self.data)

    @property
    def well_formed(self) -> bool:
        """'AMQP' followed by four octets: a valid header of *some* AMQP version (4.2.2)."""
        return len(self.data) == 8 and self.data[:4] == b"AMQP"

    @property
    def version(self) -> tuple[int, int, int, int] | None:
        """(protocol-id, major, minor, revision) when well-formed."""
        return tuple(self.data[4:8]) if self.well_formed else None  # type: ignore[return-value]

    def summary(self) -> str:
        if self.well_formed:
            return "protocol-header AMQP " + "-".join(str(b) for b in self.data[4:8])
        return f"protocol-header? {bytes(self.data[:16])!r}"


@dataclass(eq=True)
class Frame:
    """Common fields of all frames; subclasses provide the payload."""

    TYPE: ClassVar[int] = 0
    channel: int = 0
    frame_type: int | None = field(default=None, kw_only=True)  # override of the type octet
    size: int | None = field(default=None, kw_only=True)        # override of the size field
    end: int | bytes = field(default=FRAME_END, kw_only=True)   # frame-end octet, or bytes (b"" = none)

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        raise NotImplementedError

    def encode(self, dialect: Dialect = SPEC) -> bytes:
        body = self.payload(dialect)
        end = bytes((self.end,)) if isinstance(self.end, int) else bytes(self.end)
        ftype = self.TYPE if self.frame_type is None else self.frame_type
        return _HDR.pack(ftype, self.channel, len(body) if self.size is None else self.size) + body + end

    @property
    def kind(self) -> str:
        return FRAME_TYPE_NAMES.get(self.TYPE, f"type-{self.TYPE}")

    def summary(self) -> str:
        return f"{self.kind} ch={self.channel}"


@dataclass(eq=True)
class MethodFrame(Frame):
    TYPE: ClassVar[int] = spec.FRAME_METHOD
    method: Method = field(default_factory=lambda: UnknownMethod(0, 0))
    trailing: bytes = field(default=b"", kw_only=True)  # extra octets after the arguments

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        return self.method.encode(dialect) + self.trailing

    def summary(self) -> str:
        extra = f" +{len(self.trailing)} trailing octets" if self.trailing else ""
        return f"ch={self.channel} {self.method.summary()}{extra}"


@dataclass(eq=True)
class HeaderFrame(Frame):
    """A content header: class-id, weight, body-size, property flags and values (4.2.6.1)."""

    TYPE: ClassVar[int] = spec.FRAME_HEADER
    class_id: int = 60
    body_size: int = 0
    properties: Properties | None = None
    weight: int = field(default=0, kw_only=True)
    property_flags: list[int] | None = field(default=None, kw_only=True)  # override of the flags words
    raw_properties: bytes | None = field(default=None, kw_only=True)      # exact bytes after body-size

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        head = _CONTENT_HDR.pack(self.class_id, self.weight, self.body_size)
        if self.raw_properties is not None:
            return head + self.raw_properties
        props = self.properties
        if props is None:
            props_cls = spec.PROPERTIES.get(self.class_id)
            if props_cls is None:
                return head + (b"\x00\x00" if self.property_flags is None else b"".join(_U16(w) for w in self.property_flags))
            props = props_cls()
        return head + props.encode(dialect, self.property_flags)

    def summary(self) -> str:
        props = self.properties.summary() if self.properties is not None else ""
        extra = f", weight={self.weight}" if self.weight else ""
        if self.property_flags is not None:
            extra += ", property-flags=[" + ", ".join(f"0x{w:04x}" for w in self.property_flags) + "]"
        if self.raw_properties is not None:
            extra += f", raw properties {bytes(self.raw_properties[:24]).hex()}"
        return f"ch={self.channel} content-header(class={self.class_id}, body-size={self.body_size}{extra}{', ' + props if props else ''})"


@dataclass(eq=True)
class BodyFrame(Frame):
    TYPE: ClassVar[int] = spec.FRAME_BODY
    data: bytes = b""

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        return bytes(self.data)

    def summary(self) -> str:
        shown = bytes(self.data[:SUMMARY_BODY_MAX])
        return f"ch={self.channel} content-body({len(self.data)} octets: {shown!r}{'...' if len(self.data) > SUMMARY_BODY_MAX else ''})"


@dataclass(eq=True)
class HeartbeatFrame(Frame):
    TYPE: ClassVar[int] = spec.FRAME_HEARTBEAT
    data: bytes = b""

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        return bytes(self.data)

    def summary(self) -> str:
        extra = f", {len(self.data)} payload octets" if self.data else ""
        return f"ch={self.channel} heartbeat{extra}"


@dataclass(eq=True)
class RawFrame(Frame):
    """Any frame type with an opaque payload; also what an undefined type decodes to."""

    type: int = 0
    data: bytes = b""

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        return bytes(self.data)

    def encode(self, dialect: Dialect = SPEC) -> bytes:
        if self.frame_type is None:  # write ``type`` without changing this frame (equality)
            return replace(self, frame_type=self.type).encode(dialect)
        return super().encode(dialect)

    def summary(self) -> str:
        return f"ch={self.channel} frame type={self.type} ({len(self.data)} octets: {bytes(self.data[:16]).hex()})"


@dataclass(eq=True)
class MalformedFrame(Frame):
    """A frame whose envelope was fine but whose payload did not decode."""

    type: int = 0
    data: bytes = b""
    error: str = ""

    def payload(self, dialect: Dialect = SPEC) -> bytes:
        return bytes(self.data)

    def encode(self, dialect: Dialect = SPEC) -> bytes:
        if self.frame_type is None:  # write ``type`` without changing this frame (equality)
            return replace(self, frame_type=self.type).encode(dialect)
        return super().encode(dialect)

    def summary(self) -> str:
        kind = FRAME_TYPE_NAMES.get(self.type, f"type-{self.type}")
        return f"ch={self.channel} MALFORMED {kind} frame ({len(self.data)} octets): {self.error}"


def _U16(v: int) -> bytes:
    return struct.pack(">H", v)


Sendable = Union[Frame, ProtocolHeader, bytes, bytearray]


def encode(item: Sendable, dialect: Dialect = SPEC) -> bytes:
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    return item.encode(dialect)


def decode_method(payload: bytes, dialect: Dialect = SPEC) -> Method:
    """Decodes a method payload; unknown class/method ids give :class:`UnknownMethod`."""
    if len(payload) < 4:
        raise DecodeError(f"method payload of {len(payload)} octets has no class-id/method-id", 0)
    index = _INDEX.unpack_from(payload, 0)[0]
    cls = spec.METHODS.get(index)
    if cls is None:
        return UnknownMethod(index >> 16, index & 0xFFFF, payload[4:])
    method, end = cls.decode_args(payload, 4, dialect)
    if end != len(payload):
        raise DecodeError(f"{cls.NAME}: {len(payload) - end} octets after the last argument", end)
    return method


def decode_frame(ftype: int, channel: int, payload: bytes, dialect: Dialect = SPEC) -> Frame:
    """Decodes one frame whose envelope has been checked; payload errors give MalformedFrame."""
    try:
        if ftype == spec.FRAME_METHOD:
            return MethodFrame(channel, decode_method(payload, dialect))
        if ftype == spec.FRAME_HEADER:
            if len(payload) < 14:
                raise DecodeError(f"content header of {len(payload)} octets is shorter than 14", 0)
            class_id, weight, body_size = _CONTENT_HDR.unpack_from(payload, 0)
            props_cls = spec.PROPERTIES.get(class_id)
            if props_cls is None:
                raise DecodeError(f"content header for class-id {class_id}, which has no content", 0)
            props, end = props_cls.decode(payload, 12, dialect)
            if end != len(payload):
                raise DecodeError(f"content header: {len(payload) - end} octets after the properties", end)
            return HeaderFrame(channel, class_id, body_size, props, weight=weight)
        if ftype == spec.FRAME_BODY:
            return BodyFrame(channel, payload)
        if ftype == spec.FRAME_HEARTBEAT:
            return HeartbeatFrame(channel, payload)
        return RawFrame(channel, type=ftype, data=payload)
    except DecodeError as exc:
        return MalformedFrame(channel, type=ftype, data=payload, error=str(exc))


Decoded = Union[Frame, ProtocolHeader]


class FrameReader(OctetStream):
    """Incremental decoder of a byte stream from a peer.

    ``feed`` bytes as they arrive and iterate to get complete frames. A protocol header
    is recognised only at the very start of the stream. Fatal framing errors raise
    :class:`FrameError`; after one, the stream cannot be resynchronised.
    """

    def __init__(self, max_payload: int = 1 << 20, dialect: Dialect = SPEC, expect_protocol_header: bool = True) -> None:
        super().__init__()
        self.max_payload = max_payload
        self.dialect = dialect
        self._at_start = expect_protocol_header
        self.frames_read = 0

    def next(self) -> Decoded | None:
        if self._at_start:
            raw = self._header_here()
            if raw == b"":
                return None  # could still become a protocol header
            self._at_start = False
            if raw is not None:
                return ProtocolHeader(raw)
        buf, pos = self._buf, self._pos
        avail = len(buf) - pos
        if avail < FRAME_HEADER_SIZE:
            return None
        ftype, channel, size = _HDR.unpack_from(buf, pos)
        if size > self.max_payload:
            raise FrameError(f"frame type {ftype} on channel {channel} announces {size} payload octets, more than the {self.max_payload} accepted", pos)
        if avail < FRAME_HEADER_SIZE + size + 1:
            return None
        end = buf[pos + FRAME_HEADER_SIZE + size]
        if end != FRAME_END:
            raise FrameError(f"frame type {ftype} on channel {channel} ({size} octets) ends with 0x{end:02x}, not frame-end 0x{FRAME_END:02X}", pos + FRAME_HEADER_SIZE + size)
        payload = bytes(buf[pos + FRAME_HEADER_SIZE: pos + FRAME_HEADER_SIZE + size])
        self._pos = pos + FRAME_HEADER_SIZE + size + 1
        self.last_raw = bytes(buf[pos:self._pos])
        self.frames_read += 1
        return decode_frame(ftype, channel, payload, self.dialect)


def describe(item: Any) -> str:
    """A one-line decoded description of anything the peer sends or receives."""
    if isinstance(item, (Frame, ProtocolHeader)):
        return item.summary()
    if isinstance(item, (bytes, bytearray, memoryview)):
        data = bytes(item)
        return f"raw {len(data)} octets: {data[:24]!r}{'...' if len(data) > 24 else ''}"
    return repr(item)
