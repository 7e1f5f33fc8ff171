"""A fake AMQP 0-9-1 broker whose every string is hostile, to prove no broker text can stop a
run or lose a result (issue 11 items 2 and 6).

It completes the handshake and opens channels like a broker, then refuses every other method
with a channel.close (or, on channel 0, a connection.close) whose reply-text holds an octet
that is not UTF-8, a NUL, an ESC sequence that would retitle a terminal, a CR/LF with a fake
summary line and the Unicode line separators that ``str.splitlines`` splits on. Its product
and version in connection.start carry the same text. Frames are built with the suite's own
codec; the surrogateescape'd ``\\udcff`` in a str encodes to the raw octet 0xFF.
"""
from __future__ import annotations

import socket

from amqpspec.wire.amqp091 import FrameReader, HeartbeatFrame, MethodFrame, ProtocolHeader, spec
from amqpspec.wire.amqp091.frames import FrameError

# the octet 0xFF (invalid anywhere in UTF-8), NUL, an OSC title change, CR/LF with a fake
# summary, NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR
HOSTILE_TEXT = ("bad \udcff octet \x00 nul \x1b]0;pwned\x07 title\r\n all cases passed \x85 nel"
                " \u2028 ls \u2029 ps")


def _start() -> MethodFrame:
    props = {"product": "Hostile" + HOSTILE_TEXT, "version": "6.6\x1b[2J" + HOSTILE_TEXT,
             "capabilities": {"publisher_confirms": True, "basic.nack": True}}
    return MethodFrame(0, spec.ConnectionStart(0, 9, props, b"PLAIN AMQPLAIN", b"en_US"))


def _answer(frame: object) -> tuple[list[bytes], bool]:
    """What the fake broker sends for one frame it reads, and whether it then hangs up."""
    if not isinstance(frame, MethodFrame):
        return [], False  # heartbeats, content headers and bodies: ignored
    name, ch = frame.method.NAME, frame.channel
    if name == "connection.start-ok":
        return [MethodFrame(0, spec.ConnectionTune(2047, 131072, 0)).encode()], False
    if name == "connection.tune-ok":
        return [], False
    if name == "connection.open":
        return [MethodFrame(0, spec.ConnectionOpenOk()).encode()], False
    if name == "connection.close":
        return [MethodFrame(0, spec.ConnectionCloseOk()).encode()], True
    if name in ("connection.close-ok", "channel.close-ok"):
        return [], name == "connection.close-ok"
    if name == "channel.open":
        return [MethodFrame(ch, spec.ChannelOpenOk()).encode()], False
    if name == "channel.close":
        return [MethodFrame(ch, spec.ChannelCloseOk()).encode()], False
    cls_id, meth_id = frame.method.CLASS_ID, frame.method.METHOD_ID
    if ch == 0:
        return [MethodFrame(0, spec.ConnectionClose(503, HOSTILE_TEXT, cls_id, meth_id)).encode()], False
    return [MethodFrame(ch, spec.ChannelClose(406, HOSTILE_TEXT, cls_id, meth_id)).encode()], False


def hostile_text_broker(conn: socket.socket) -> None:
    """A broker that serves the handshake and refuses all else with :data:`HOSTILE_TEXT`."""
    conn.settimeout(10)
    reader = FrameReader()
    header_seen = False
    while True:
        data = conn.recv(65536)
        if not data:
            return
        reader.feed(data)
        try:
            for item in reader:
                if isinstance(item, ProtocolHeader):
                    if item.data != ProtocolHeader().data or header_seen:
                        conn.sendall(ProtocolHeader().encode())
                        return
                    header_seen = True
                    conn.sendall(_start().encode())
                    continue
                if isinstance(item, HeartbeatFrame):
                    continue
                out, hang_up = _answer(item)
                for chunk in out:
                    conn.sendall(chunk)
                if hang_up:
                    return
        except FrameError:
            conn.sendall(MethodFrame(0, spec.ConnectionClose(501, HOSTILE_TEXT, 0, 0)).encode())
            return
