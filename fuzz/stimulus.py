"""What one fuzz example sends: a sequence of frames, headers or raw octets.

A stimulus is sent exactly as generated, except for one substitution: a generated SASL
response that stands for "the target's real credentials" is a :class:`Credentials` value,
whose own octets are asterisks of the right length. Everything recorded (transcripts, the
input octets of a finding) keeps the asterisks; only the octets on the wire carry the real
response. That way a handshake target can fuzz everything around a successful login
without a password ever reaching a file.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10.composite import Composite

PROTOCOLS = ("0-9-1", "1.0")


class Credentials(bytes):
    """A SASL response standing for the target's credentials; its octets are ``*`` x length."""

    def __new__(cls, length: int) -> "Credentials":
        return super().__new__(cls, b"*" * length)

    def __reduce__(self) -> tuple[Any, ...]:
        return (Credentials, (len(self),))

    def __repr__(self) -> str:
        return f"<credentials, {len(self)} octets>"


def _resolve_value(value: Any, real: bytes) -> Any:
    return real if isinstance(value, Credentials) else value


def resolve(item: Any, real: bytes | None) -> Any:
    """The item with every :class:`Credentials` replaced by ``real`` (None: left as is)."""
    if real is None:
        return item
    if isinstance(item, RawItem):  # recorded octets: the masked response, if there, is restored
        masked = b"*" * len(real)
        return RawItem(item.data.replace(masked, real, 1), item.text) if real and masked in item.data else item
    if isinstance(item, f091.MethodFrame):
        method = item.method
        changes = {f.attr: real for f in method.FIELDS if isinstance(getattr(method, f.attr, None), Credentials)}
        return dataclasses.replace(item, method=method.replace(**changes)) if changes else item
    if isinstance(item, (f10.SASLFrame, f10.AMQPFrame)):
        attr = "body" if isinstance(item, f10.SASLFrame) else "performative"
        body = getattr(item, attr)
        if isinstance(body, Composite):
            changes = {f.attr: real for f in body.FIELDS if isinstance(getattr(body, f.attr, None), Credentials)}
            if changes:
                return dataclasses.replace(item, **{attr: body.replace(**changes)})
    return item


def describe(protocol: str, item: Any) -> str:
    """One decoded line for an item of either protocol, envelope overrides included."""
    if isinstance(item, RawItem):
        return item.summary()
    if protocol == "0-9-1":
        text = f091.describe(item)
        if isinstance(item, f091.Frame):
            notes = []
            if item.frame_type is not None and not isinstance(item, (f091.RawFrame, f091.MalformedFrame)):
                notes.append(f"type={item.frame_type}")
            if item.size is not None:
                notes.append(f"size={item.size}")
            if item.end != f091.FRAME_END:
                notes.append(f"frame-end={item.end.hex() if isinstance(item.end, bytes) else f'0x{item.end:02x}'}"
                             if item.end != b"" else "no frame-end")
            if notes:
                text += f" [{', '.join(notes)}]"
        return text
    return f10.describe(item)


def has_credentials(item: Any) -> bool:
    return resolve(item, b"") is not item


@dataclass(frozen=True)
class Stimulus:
    """The items of one example, in the order they are sent."""

    protocol: str
    items: tuple[Any, ...]

    def _encoder(self) -> Callable[[Any], bytes]:
        return f091.encode if self.protocol == "0-9-1" else f10.encode

    def encoded(self, real: bytes | None = None, dialect: Any = None) -> list[bytes]:
        """The octets of each item; with ``real``, as sent (credentials substituted)."""
        out = []
        for item in self.items:
            item = resolve(item, real)
            if isinstance(item, RawItem):
                out.append(item.encode())
            elif self.protocol == "0-9-1" and dialect is not None:
                out.append(f091.encode(item, dialect))
            else:
                out.append(self._encoder()(item))
        return out

    def octets(self, dialect: Any = None) -> bytes:
        """The recorded octets: what a finding stores (credentials as asterisks)."""
        return b"".join(self.encoded(None, dialect))

    def summaries(self) -> list[str]:
        return [describe(self.protocol, item) for item in self.items]

    def summary(self, limit: int = 400) -> str:
        text = "; ".join(self.summaries()) or "nothing"
        return text if len(text) <= limit else text[: limit - 3] + "..."

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class RawItem:
    """Exact octets with a decoded description: how a recorded input is sent again."""

    data: bytes
    text: str = ""

    def encode(self, *args: Any) -> bytes:
        return bytes(self.data)

    def summary(self) -> str:
        return self.text or f"raw {len(self.data)} octets"


def split_recorded(protocol: str, data: bytes, *, header_first: bool) -> list[RawItem]:
    """Cuts recorded input octets into the frames (and header) they are, each described, so a
    replay sends the same octets and its transcript still reads frame by frame. What does not
    decode is kept as one raw item."""
    if protocol == "0-9-1":
        reader: Any = f091.FrameReader(max_payload=len(data) + 16, expect_protocol_header=header_first)
        describe = f091.describe
    else:
        reader = f10.FrameReader(max_frame_size=len(data) + 16, expect_header=header_first)
        describe = f10.describe
    reader.feed(data)
    items: list[RawItem] = []
    used = 0
    try:
        for item in reader:
            raw = reader.last_raw
            items.append(RawItem(raw, describe(item)))
            used += len(raw)
    except Exception:  # noqa: BLE001 - undecodable octets are sent as they are
        pass
    if used < len(data):
        rest = data[used:]
        items.append(RawItem(rest, f"raw {len(rest)} octets: {rest[:24]!r}{'...' if len(rest) > 24 else ''}"))
    return items
