"""Fake AMQP 0-9-1 brokers whose words aim at the user's terminal (issue 11 items 4 and 12).

``identity_broker(props)`` serves the handshake with the given server properties (a product
name holding an OSC title change, NUL and a fake "all cases passed" line; or 900 kB long), then
refuses every other method with a channel.close so a case ends at once.
``password_echo_broker()`` answers connection.start-ok with a connection.close whose reply-text
quotes the SASL response it was sent -- the password in clear -- wrapped in terminal escapes.
Frames are built with the suite's own codec; each behaviour runs in a HostileServer.
"""
from __future__ import annotations

import socket
from typing import Any, Callable

from amqpspec.wire.amqp091 import FrameReader, HeartbeatFrame, MethodFrame, ProtocolHeader, spec
from amqpspec.wire.errors import DecodeError

# an OSC sequence that retitles a terminal, a NUL, CR/LF with a fake summary line
ESCAPES = "\x1b]0;pwned\x07 \x00 nul\r\nall cases passed"
PASSWORD = "s3cret-hunter2"


def hostile_identity() -> dict[str, Any]:
    return {"product": "Hostile" + ESCAPES, "version": "6.6\x1b[2J" + ESCAPES, "platform": ESCAPES,
            "capabilities": {"publisher_confirms": True}}


def huge_identity(size: int = 900_000) -> dict[str, Any]:
    return {"product": "P" * size, "version": "V" * 1000, "capabilities": {}}


def _start(props: dict[str, Any]) -> bytes:
    return MethodFrame(0, spec.ConnectionStart(0, 9, props, b"PLAIN AMQPLAIN", b"en_US")).encode()


Answer = Callable[[MethodFrame], tuple[list[bytes], bool]]


def _serving(frame: MethodFrame) -> tuple[list[bytes], bool]:
    """A broker's answers to the handshake and channel life; everything else refused."""
    name, ch = frame.method.NAME, frame.channel
    if name == "connection.start-ok":
        return [MethodFrame(0, spec.ConnectionTune(2047, 131072, 0)).encode()], False
    if name in ("connection.tune-ok", "channel.close-ok"):
        return [], False
    if name == "connection.open":
        return [MethodFrame(0, spec.ConnectionOpenOk()).encode()], False
    if name == "connection.close":
        return [MethodFrame(0, spec.ConnectionCloseOk()).encode()], True
    if name == "connection.close-ok":
        return [], True
    if name == "channel.open":
        return [MethodFrame(ch, spec.ChannelOpenOk()).encode()], False
    if name == "channel.close":
        return [MethodFrame(ch, spec.ChannelCloseOk()).encode()], False
    cls_id, meth_id = frame.method.CLASS_ID, frame.method.METHOD_ID
    if ch == 0:
        return [MethodFrame(0, spec.ConnectionClose(540, "NOT_IMPLEMENTED", cls_id, meth_id)).encode()], False
    return [MethodFrame(ch, spec.ChannelClose(540, "NOT_IMPLEMENTED", cls_id, meth_id)).encode()], False


def _echo_password(frame: MethodFrame) -> tuple[list[bytes], bool]:
    if frame.method.NAME != "connection.start-ok":
        return _serving(frame)
    response = frame.method.response  # type: ignore[attr-defined]
    said = bytes(response).decode("utf-8", "replace").replace("\x00", " ")
    text = f"ACCESS_REFUSED \x1b]0;pwned\x07 you said {said}\r\nall cases passed"
    return [MethodFrame(0, spec.ConnectionClose(403, text[:255], 10, 11)).encode()], False


def _broker(props: dict[str, Any], answer: Answer) -> Callable[[socket.socket], None]:
    def behaviour(conn: socket.socket) -> None:
        conn.settimeout(10)
        reader = FrameReader()
        while True:
            data = conn.recv(65536)
            if not data:
                return
            reader.feed(data)
            try:
                for item in reader:
                    if isinstance(item, ProtocolHeader):
                        conn.sendall(_start(props))
                        continue
                    if isinstance(item, HeartbeatFrame) or not isinstance(item, MethodFrame):
                        continue
                    out, hang_up = answer(item)
                    for chunk in out:
                        conn.sendall(chunk)
                    if hang_up:
                        return
            except DecodeError:  # the suite's malformed frames: hang up, as a strict broker would
                return

    return behaviour


def identity_broker(props: dict[str, Any]) -> Callable[[socket.socket], None]:
    """Serves with these server properties; refuses everything past the handshake."""
    return _broker(props, _serving)


def password_echo_broker() -> Callable[[socket.socket], None]:
    """Refuses the login with a reply-text that repeats the SASL response (the password)."""
    return _broker(hostile_identity(), _echo_password)
