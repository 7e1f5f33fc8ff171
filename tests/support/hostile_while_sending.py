"""Scripted 0-9-1 brokers for basic.reject/01 and RabbitMQ's basic.nack/01 (issue 14): one queue
holding at most one message, fetched with basic.get, whose content is sent either in one go
before the broker reads anything else (``serial``: a broker that does not read while sending) or
one body frame at a time, cut with an empty body frame when a reject or nack arrives (``cuts``).
A reject or nack with requeue puts the message back (message-count 1). Built on
:mod:`tests.support.fake091`; never a broker in a conformance verdict outside these tests."""
from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec
from tests.support import fake091

CONTENT = 8 * 1024 * 1024
FRAME_BODY = 131072 - 8
PROPS = {"product": "while-sending fake", "capabilities": {"basic.nack": True}}


class Queue:
    """The one queue's state, shared by every connection of a fake broker."""

    def __init__(self, reaction: str) -> None:
        self.reaction = reaction
        self.count = 0
        self.lock = threading.Lock()
        self.pending: dict[int, int] = {}  # channel -> octets of the content still to send (cuts)

    def answer(self, frame: MethodFrame) -> tuple[list[bytes], bool]:
        name, ch, m = frame.method.NAME, frame.channel, frame.method
        if name == "queue.declare":
            return [MethodFrame(ch, spec.QueueDeclareOk(m.queue, self.count, 0)).encode()], False
        if name == "exchange.declare":
            return [MethodFrame(ch, spec.ExchangeDeclareOk()).encode()], False
        if name == "queue.delete":
            return [MethodFrame(ch, spec.QueueDeleteOk(0)).encode()], False
        if name == "basic.publish":
            with self.lock:
                self.count = 1
            return [], False
        if name == "basic.get":
            with self.lock:
                if not self.count:
                    return [MethodFrame(ch, spec.BasicGetEmpty()).encode()], False
                self.count = 0
            start = [MethodFrame(ch, spec.BasicGetOk(1, False, "", m.queue, 0)).encode(),
                     HeaderFrame(ch, 60, CONTENT).encode()]
            if self.reaction == "serial":
                body = bytes(FRAME_BODY)
                sizes = [min(FRAME_BODY, CONTENT - i) for i in range(0, CONTENT, FRAME_BODY)]
                return start + [BodyFrame(ch, body[:n]).encode() for n in sizes], False
            self.pending[ch] = CONTENT - FRAME_BODY
            return start + [BodyFrame(ch, bytes(FRAME_BODY)).encode()], False
        if name in ("basic.reject", "basic.nack"):
            with self.lock:
                self.count = 1 if m.requeue else self.count
            out = [BodyFrame(ch, b"").encode()] if self.pending.pop(ch, 0) else []
            return out, False
        return fake091.serving(frame)


def broker(reaction: str) -> Callable[[socket.socket], None]:
    """A HostileServer behaviour: ``serial`` or ``cuts`` (see the module text)."""
    return fake091.broker(PROPS, Queue(reaction).answer)
