"""AMQP 1.0 frames (transport 2.3), protocol headers (2.2, security 5.1/5.2/5.3) and a bounded reader.

A frame is an 8-octet header -- SIZE (4), DOFF (1), TYPE (1), two type-specific octets (the
channel of an AMQP frame) -- then an extended header of ``DOFF * 4 - 8`` octets, then the body:
one performative (AMQP frames, type 0) or SASL frame body (type 1), and for a transfer the
payload (message octets). A frame with no body is an empty frame (a heartbeat).

Everything can be written wrong on purpose: ``size``, ``doff``, ``frame_type`` override the
header fields, ``extended`` gives the extended header octets (with ``doff`` left alone they are
zero-padded to a multiple of 4, as DOFF requires; with ``doff`` set they are written as given),
``channel`` is any 16-bit value, and the body can be anything the type codec encodes
(``Raw`` included). The reader never trusts SIZE: a frame larger than ``max_frame_size`` is
refused as soon as its first four octets arrive, before anything is buffered for it.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Union

from amqpspec.wire.errors import DecodeError, FrameError
from amqpspec.wire.stream import OctetStream
from amqpspec.wire.amqp10 import spec
from amqpspec.wire.amqp10.composite import Composite, DescribedBase, show
from amqpspec.wire.amqp10.types import BY_CODE, Decoder, Encoded, encode as encode_value

_HDR = struct.Struct(">IBBH")
FRAME_HEADER_SIZE = 8
MIN_DOFF = 2
FRAME_AMQP = 0
FRAME_SASL = 1
FRAME_TYPE_NAMES = {FRAME_AMQP: "amqp", FRAME_SASL: "sasl"}
PROTOCOL_AMQP = 0
PROTOCOL_TLS = 2
PROTOCOL_SASL = 3
PROTOCOL_NAMES = {PROTOCOL_AMQP: "amqp", PROTOCOL_TLS: "tls", PROTOCOL_SASL: "sasl"}
VERSION = (spec.MAJOR, spec.MINOR, spec.REVISION)
AMQP_HEADER = b"AMQP" + bytes((PROTOCOL_AMQP, spec.MAJOR, spec.MINOR, spec.REVISION))
TLS_HEADER = b"AMQP" + bytes((PROTOCOL_TLS, spec.TLS_MAJOR, spec.TLS_MINOR, spec.TLS_REVISION))
SASL_HEADER = b"AMQP" + bytes((PROTOCOL_SASL, spec.SASL_MAJOR, spec.SASL_MINOR, spec.SASL_REVISION))
SUMMARY_PAYLOAD_MAX = 24
DECODER = Decoder(spec.REGISTRY)


@dataclass(eq=True)
class ProtocolHeader:
    """The 8-octet protocol header, or any octets sent in its place."""

    data: bytes = AMQP_HEADER

    @classmethod
    def of(cls, protocol_id: int = PROTOCOL_AMQP, major: int = 1, minor: int = 0, revision: int = 0,
           literal: bytes = b"AMQP") -> "ProtocolHeader":
        return cls(literal + bytes((protocol_id, major, minor, revision)))

    @classmethod
    def amqp(cls) -> "ProtocolHeader":
        return cls(AMQP_HEADER)

    @classmethod
    def sasl(cls) -> "ProtocolHeader":
        return cls(SASL_HEADER)

    @classmethod
    def tls(cls) -> "ProtocolHeader":
        return cls(TLS_HEADER)

    def encode(self) -> bytes:
        return bytes(self.data)

    @property
    def well_formed(self) -> bool:
        return len(self.data) == 8 and self.data[:4] == b"AMQP"

    @property
    def protocol_id(self) -> int | None:
        return self.data[4] if self.well_formed else None

    @property
    def version(self) -> tuple[int, int, int] | None:
        return tuple(self.data[5:8]) if self.well_formed else None  # type: ignore[return-value]

    def summary(self) -> str:
        if self.well_formed:
            pid = self.data[4]
            name = PROTOCOL_NAMES.get(pid, "unknown protocol")
            return f"protocol-header AMQP {pid} {'.'.join(str(b) for b in self.data[5:8])} ({name})"
        return f"protocol-header? {bytes(self.data[:16])!r}"


@dataclass(eq=True)
class Frame:
    """Header fields shared by all frames; subclasses provide the body."""

    TYPE: ClassVar[int] = FRAME_AMQP
    channel: int = 0                                          # the two type-specific octets
    size: int | None = field(default=None, kw_only=True)      # override of SIZE
    doff: int | None = field(default=None, kw_only=True)      # override of DOFF
    frame_type: int | None = field(default=None, kw_only=True)  # override of TYPE
    extended: bytes = field(default=b"", kw_only=True)        # extended header octets

    def encode_body(self) -> bytes:
        raise NotImplementedError

    def encode(self) -> bytes:
        body = self.encode_body()
        ext = bytes(self.extended)
        if self.doff is None:
            ext += bytes(-len(ext) % 4)
            doff = MIN_DOFF + len(ext) // 4
        else:
            doff = self.doff
        size = FRAME_HEADER_SIZE + len(ext) + len(body) if self.size is None else self.size
        ftype = self.TYPE if self.frame_type is None else self.frame_type
        return _HDR.pack(size, doff, ftype, self.channel) + ext + body

    def _header_notes(self) -> str:
        notes = []
        if self.size is not None:
            notes.append(f"size={self.size}")
        if self.doff is not None:
            notes.append(f"doff={self.doff}")
        if self.frame_type is not None:
            notes.append(f"type={self.frame_type}")
        if self.extended:
            notes.append(f"extended header {bytes(self.extended[:16]).hex()}")
        return f" [{', '.join(notes)}]" if notes else ""

    def problems(self) -> list[str]:
        return []

    def masked(self) -> "Frame | None":
        """A copy with secrets replaced (for transcripts), or None when there are none."""
        return None

    def summary(self) -> str:
        raise NotImplementedError


def _body_bytes(body: Any) -> bytes:
    if body is None:
        return b""
    return encode_value(body, getattr(body, "NAME", "frame body"))


def _payload_bytes(payload: Any) -> bytes:
    if isinstance(payload, (bytes, bytearray, memoryview)):
        return bytes(payload)
    return payload.encode()  # a Message, or anything else that encodes itself


def _show_body(body: Any) -> str:
    return body.summary() if isinstance(body, DescribedBase) else show(body)


@dataclass(eq=True)
class AMQPFrame(Frame):
    """An AMQP frame (type 0): a performative on a channel, and for a transfer the payload."""

    TYPE: ClassVar[int] = FRAME_AMQP
    performative: Any = None
    payload: bytes = b""

    def encode_body(self) -> bytes:
        return _body_bytes(self.performative) + _payload_bytes(self.payload)

    def problems(self) -> list[str]:
        p = self.performative
        out = list(p.problems) if isinstance(p, DescribedBase) else []
        if not (isinstance(p, Composite) and "frame" in p.PROVIDES):
            out.append(f"the body of an AMQP frame is a {_kind(p)}, not a performative")
        if self.payload and not isinstance(p, spec.Transfer):
            out.append(f"{len(self.payload)} octets after a {_kind(p)}: only a transfer carries a payload")
        return out

    def summary(self) -> str:
        payload = b"" if not isinstance(self.payload, (bytes, bytearray, memoryview)) else bytes(self.payload)
        tail = ""
        if payload:
            shown = payload[:SUMMARY_PAYLOAD_MAX]
            tail = f" +payload {len(payload)} octets: {shown.hex()}{'...' if len(payload) > SUMMARY_PAYLOAD_MAX else ''}"
        elif self.payload:
            tail = f" +payload {type(self.payload).__name__}"
        return f"ch={self.channel} {_show_body(self.performative)}{tail}{self._header_notes()}"


@dataclass(eq=True)
class SASLFrame(Frame):
    """A SASL frame (type 1); the type-specific octets are ignored by the receiver (should be 0)."""

    TYPE: ClassVar[int] = FRAME_SASL
    body: Any = None
    channel: int = field(default=0, kw_only=True)
    trailing: bytes = field(default=b"", kw_only=True)  # octets after the SASL frame body (invalid)

    def encode_body(self) -> bytes:
        return _body_bytes(self.body) + bytes(self.trailing)

    def problems(self) -> list[str]:
        b = self.body
        out = list(b.problems) if isinstance(b, DescribedBase) else []
        if not (isinstance(b, Composite) and "sasl-frame" in b.PROVIDES):
            out.append(f"the body of a SASL frame is a {_kind(b)}, not a SASL frame body")
        if self.trailing:
            out.append(f"{len(self.trailing)} octets after the SASL frame body")
        return out

    def masked(self) -> "SASLFrame | None":
        b = self.body
        if isinstance(b, Composite) and b.has_secrets():
            return replace(self, body=b.masked())
        return None

    def summary(self) -> str:
        ch = f" ch={self.channel}" if self.channel else ""
        tail = f" +{len(self.trailing)} trailing octets" if self.trailing else ""
        return f"sasl{ch} {_show_body(self.body)}{tail}{self._header_notes()}"


@dataclass(eq=True)
class EmptyFrame(Frame):
    """An AMQP frame with no body: a heartbeat (transport 2.4.5)."""

    TYPE: ClassVar[int] = FRAME_AMQP

    def encode_body(self) -> bytes:
        return b""

    def summary(self) -> str:
        return f"ch={self.channel} empty frame{self._header_notes()}"


@dataclass(eq=True)
class RawFrame(Frame):
    """Any frame type with an opaque body; also what an undefined frame type decodes to."""

    type: int = FRAME_AMQP
    data: bytes = b""

    def encode_body(self) -> bytes:
        return bytes(self.data)

    def encode(self) -> bytes:
        if self.frame_type is None:
            return replace(self, frame_type=self.type).encode()
        return super().encode()

    def problems(self) -> list[str]:
        return [f"frame type {self.type} is not defined (0: amqp, 1: sasl)"] if self.type not in FRAME_TYPE_NAMES else []

    def summary(self) -> str:
        return f"ch={self.channel} frame type={self.type} ({len(self.data)} octets: {bytes(self.data[:16]).hex()})"


@dataclass(eq=True)
class MalformedFrame(Frame):
    """A frame whose header was fine but whose body did not decode; kept verbatim."""

    type: int = FRAME_AMQP
    data: bytes = b""
    error: str = ""

    def encode_body(self) -> bytes:
        return bytes(self.data)

    def encode(self) -> bytes:
        if self.frame_type is None:
            return replace(self, frame_type=self.type).encode()
        return super().encode()

    def problems(self) -> list[str]:
        return [self.error]

    def summary(self) -> str:
        kind = FRAME_TYPE_NAMES.get(self.type, f"type-{self.type}")
        return f"ch={self.channel} MALFORMED {kind} frame ({len(self.data)} octets): {self.error}"


def _kind(value: Any) -> str:
    if isinstance(value, DescribedBase):
        return value.NAME
    from amqpspec.wire.amqp10.composite import kind_of
    return kind_of(value)


def frame(body: Any, channel: int = 0, payload: bytes = b"", **overrides: Any) -> Frame:
    """The frame for a performative or SASL body: SASL bodies go in SASL frames."""
    if isinstance(body, Composite) and "sasl-frame" in body.PROVIDES:
        return SASLFrame(body, channel=channel, **overrides)
    return AMQPFrame(channel, body, payload, **overrides)


def transfer_frames(channel: int, transfer: Any, payload: bytes, max_frame_size: int) -> list[AMQPFrame]:
    """A delivery split into transfer frames of at most ``max_frame_size`` octets (transport 2.6.14).

    The first frame carries ``transfer`` as given, the following ones only its handle (the spec
    lets continuation frames omit delivery-id, delivery-tag, message-format...); ``more`` is set
    on all but the last. A payload that fits gives one frame with ``transfer`` untouched.
    """
    data = bytes(payload)
    frames: list[AMQPFrame] = []
    pos = 0
    while True:
        perf = transfer if not frames else spec.Transfer(handle=transfer.handle)
        room = max_frame_size - len(AMQPFrame(channel, perf.replace(more=True)).encode())
        if room <= 0:
            raise ValueError(f"a transfer frame does not fit max-frame-size {max_frame_size}")
        chunk = data[pos:pos + room]
        pos += len(chunk)
        last = pos >= len(data)
        frames.append(AMQPFrame(channel, perf if last else perf.replace(more=True), chunk))
        if last:
            return frames


Sendable = Union[Frame, ProtocolHeader, bytes, bytearray]


def encode(item: Sendable) -> bytes:
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    return item.encode()


def decode_body(ftype: int, channel: int, body: bytes, extended: bytes = b"") -> Frame:
    """Decodes a frame body whose header has been checked; body errors give MalformedFrame."""
    if not body and ftype == FRAME_AMQP:
        return EmptyFrame(channel, extended=extended)
    if ftype not in FRAME_TYPE_NAMES:
        return RawFrame(channel, type=ftype, data=body, extended=extended)
    try:
        code, value, end = DECODER.item(body, 0, len(body))
    except DecodeError as exc:
        return MalformedFrame(channel, type=ftype, data=body, error=str(exc), extended=extended)
    if code != 0:  # not even described: keep the encoding it came in, to re-send it the same
        value = Encoded(value, BY_CODE[code].name)
    rest = body[end:]
    if ftype == FRAME_AMQP:
        return AMQPFrame(channel, value, rest, extended=extended)
    return SASLFrame(value, channel=channel, trailing=rest, extended=extended)


def decode_frame(data: bytes) -> Frame:
    """One whole frame (header included); envelope errors raise FrameError."""
    reader = FrameReader(max_frame_size=max(len(data), FRAME_HEADER_SIZE), expect_header=False)
    reader.feed(data)
    item = reader.next()
    if item is None or reader.pending:
        raise FrameError(f"{len(data)} octets are not exactly one frame", 0)
    return item  # type: ignore[return-value]


Decoded = Union[Frame, ProtocolHeader]


class FrameReader(OctetStream):
    """Incremental, bounded decoder of the octets a peer sends.

    ``feed`` octets as they arrive and iterate to get complete frames and protocol headers.
    A protocol header is recognised where one may come: at the start of the stream, and
    again after a sasl-outcome (the AMQP header that follows a SASL exchange, security
    5.3.2) -- or after :meth:`expect_header`, e.g. once TLS is established. Anything else that
    starts with 'AMQP' is read as a frame header, whose absurd size then names the problem.
    Fatal framing errors raise :class:`FrameError`; the stream cannot be resynchronised.
    After a TLS header (protocol id 2) the octets are TLS records: hand the socket to TLS and
    read the decrypted stream with a new reader.
    """

    def __init__(self, max_frame_size: int = 1 << 20, expect_header: bool = True) -> None:
        super().__init__()
        self.max_frame_size = max_frame_size
        self._expect_header = expect_header
        self.frames_read = 0
        self.headers_read = 0

    def expect_header(self) -> None:
        """The next item may be a protocol header (after TLS, or a SASL outcome seen elsewhere)."""
        self._expect_header = True

    @property
    def expecting_header(self) -> bool:
        return self._expect_header

    def next(self) -> Decoded | None:
        if self._expect_header:
            raw = self._header_here()
            if raw == b"":
                return None  # could still become a protocol header
            self._expect_header = False
            if raw is not None:
                self.headers_read += 1
                return ProtocolHeader(raw)
        buf, pos = self._buf, self._pos
        avail = len(buf) - pos
        if avail < 4:
            return None
        size = int.from_bytes(buf[pos:pos + 4], "big")
        if size > self.max_frame_size:
            hint = " (these octets read 'AMQP': a protocol header where a frame was expected)" \
                if buf[pos:pos + 4] == b"AMQP" else ""
            raise FrameError(f"frame announces {size} octets, more than the {self.max_frame_size} accepted{hint}", pos)
        if size < FRAME_HEADER_SIZE:
            raise FrameError(f"frame size {size} is smaller than the {FRAME_HEADER_SIZE}-octet frame header", pos)
        if avail < FRAME_HEADER_SIZE:
            return None
        _, doff, ftype, channel = _HDR.unpack_from(buf, pos)
        if doff < MIN_DOFF:
            raise FrameError(f"frame DOFF {doff} is less than {MIN_DOFF} (the header alone is 2 words)", pos + 4)
        if doff * 4 > size:
            raise FrameError(f"frame DOFF {doff} puts the body at octet {doff * 4}, past the end of the {size}-octet frame",
                             pos + 4)
        if avail < size:
            return None
        extended = bytes(buf[pos + FRAME_HEADER_SIZE: pos + doff * 4])
        body = bytes(buf[pos + doff * 4: pos + size])
        self._pos = pos + size
        self.last_raw = bytes(buf[pos:self._pos])
        self.frames_read += 1
        item = decode_body(ftype, channel, body, extended)
        if isinstance(item, SASLFrame) and isinstance(item.body, spec.SaslOutcome):
            self._expect_header = True  # the AMQP header follows a SASL exchange
        return item


def describe(item: Any) -> str:
    """A one-line decoded description of anything sent or received."""
    if isinstance(item, (Frame, ProtocolHeader)):
        return item.summary()
    if isinstance(item, (bytes, bytearray, memoryview)):
        data = bytes(item)
        return f"raw {len(data)} octets: {data[:24]!r}{'...' if len(data) > 24 else ''}"
    return repr(item)
