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

from amqpspec.wire.amqp091 import MethodFrame, spec

from .fake091 import broker, serving

# an OSC sequence that retitles a terminal, a NUL, CR/LF with a fake summary line
ESCAPES = "\x1b]0;pwned\x07 \x00 nul\r\nall cases passed"
PASSWORD = "s3cret-hunter2"


def hostile_identity() -> dict[str, Any]:
    return {"product": "Hostile" + ESCAPES, "version": "6.6\x1b[2J" + ESCAPES, "platform": ESCAPES,
            "capabilities": {"publisher_confirms": True}}


def huge_identity(size: int = 900_000) -> dict[str, Any]:
    return {"product": "P" * size, "version": "V" * 1000, "capabilities": {}}


def _echo_password(frame: MethodFrame) -> tuple[list[bytes], bool]:
    if frame.method.NAME != "connection.start-ok":
        return serving(frame)
    response = frame.method.response  # type: ignore[attr-defined]
    said = bytes(response).decode("utf-8", "replace").replace("\x00", " ")
    text = f"ACCESS_REFUSED \x1b]0;pwned\x07 you said {said}\r\nall cases passed"
    return [MethodFrame(0, spec.ConnectionClose(403, text[:255], 10, 11)).encode()], False


def identity_broker(props: dict[str, Any]) -> Callable[[socket.socket], None]:
    """Serves with these server properties; refuses everything past the handshake."""
    return broker(props)


def password_echo_broker() -> Callable[[socket.socket], None]:
    """Refuses the login with a reply-text that repeats the SASL response (the password)."""
    return broker(hostile_identity(), _echo_password)
