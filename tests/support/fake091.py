"""A scripted fake AMQP 0-9-1 broker for the suite's own tests of how it survives brokers.

It answers the handshake and channel life the way a broker does and refuses every other method
(a channel.close, or a connection.close on channel 0, with the code and text given), so a case
against it ends at once. It never stands in for a broker in a conformance verdict: the tests
that use it check what the suite does with hostile or failing brokers (their strings, their
crashes), not what a broker should do. Frames are built with the suite's own codec.
"""
from __future__ import annotations

import socket
from collections.abc import Callable
from functools import partial
from typing import Any

from amqpspec.wire.amqp091 import FrameReader, HeartbeatFrame, MethodFrame, ProtocolHeader, spec
from amqpspec.wire.errors import DecodeError

#: what the broker sends for one method frame it read, and whether it then hangs up
Answer = Callable[[MethodFrame], tuple[list[bytes], bool]]


def start_frame(props: dict[str, Any]) -> bytes:
    return MethodFrame(0, spec.ConnectionStart(0, 9, props, b"PLAIN AMQPLAIN", b"en_US")).encode()


def serving(frame: MethodFrame, *, channel_code: int = 540, connection_code: int = 540,
            text: str = "NOT_IMPLEMENTED") -> tuple[list[bytes], bool]:
    """A broker's answers to the handshake and channel life; any other method refused with
    ``channel_code`` (``connection_code`` on channel 0) and ``text``."""
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
        return [MethodFrame(0, spec.ConnectionClose(connection_code, text, cls_id, meth_id)).encode()], False
    return [MethodFrame(ch, spec.ChannelClose(channel_code, text, cls_id, meth_id)).encode()], False


def refusing(**refusal: Any) -> Answer:
    """:func:`serving` with another refusal code or text."""
    return partial(serving, **refusal)


def serve(conn: socket.socket, props: dict[str, Any], answer: Answer = serving, *,
          on_frame_error: bytes = b"") -> None:
    """Runs one connection: connection.start with ``props`` after our protocol header (another
    header, or a second one, is refused with ours as 4.2.2 says), then ``answer`` per method.
    Octets that do not frame end it, after ``on_frame_error`` (say, a connection.close)."""
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
                    conn.sendall(start_frame(props))
                    continue
                if isinstance(item, HeartbeatFrame) or not isinstance(item, MethodFrame):
                    continue  # heartbeats, content headers and bodies: ignored
                out, hang_up = answer(item)
                for chunk in out:
                    conn.sendall(chunk)
                if hang_up:
                    return
        except DecodeError:  # the suite's malformed frames: hang up, as a strict broker would
            if on_frame_error:
                conn.sendall(on_frame_error)
            return


def broker(props: dict[str, Any], answer: Answer = serving, *,
           on_frame_error: bytes = b"") -> Callable[[socket.socket], None]:
    """A behaviour for :class:`tests.support.hostile.HostileServer`."""
    return partial(serve, props=props, answer=answer, on_frame_error=on_frame_error)
