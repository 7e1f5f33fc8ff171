"""A scripted 0-9-1 broker for queue.declare.durable/types and queue.declare-ok/consumer-count
(issue 14): it keeps queues and consumers, and may get either wrong on purpose -- ``ignore_durable``
records every queue as transient (so a transient redeclare of a durable queue is accepted), and
``count_cancelled`` reports every consumer ever started, cancelled or not. Built on
:mod:`tests.support.fake091`; never a broker in a conformance verdict outside these tests."""
from __future__ import annotations

import itertools
import socket
from collections.abc import Callable

from amqpspec.wire.amqp091 import MethodFrame, spec
from tests.support import fake091

PRECONDITION_FAILED = 406


class Queues:
    """Queues (name -> durable) and consumers (tag -> queue) shared by every connection."""

    def __init__(self, *, ignore_durable: bool = False, count_cancelled: bool = False) -> None:
        self.ignore_durable, self.count_cancelled = ignore_durable, count_cancelled
        self.queues: dict[str, bool] = {}
        self.consumers: dict[str, str] = {}
        self.cancelled: dict[str, str] = {}
        self.tags = itertools.count(1)

    def _count(self, queue: str) -> int:
        seen = list(self.consumers.values()) + (list(self.cancelled.values()) if self.count_cancelled else [])
        return seen.count(queue)

    def answer(self, frame: MethodFrame) -> tuple[list[bytes], bool]:
        name, ch, m = frame.method.NAME, frame.channel, frame.method
        if name == "queue.declare":
            durable = bool(m.durable) and not self.ignore_durable
            if m.queue in self.queues and not m.passive and self.queues[m.queue] != durable:
                return [MethodFrame(ch, spec.ChannelClose(PRECONDITION_FAILED, "PRECONDITION_FAILED - durable",
                                                          50, 10)).encode()], False
            self.queues.setdefault(m.queue, durable)
            return [MethodFrame(ch, spec.QueueDeclareOk(m.queue, 0, self._count(m.queue))).encode()], False
        if name == "exchange.declare":
            return [MethodFrame(ch, spec.ExchangeDeclareOk()).encode()], False
        if name == "queue.delete":
            self.queues.pop(m.queue, None)
            return [MethodFrame(ch, spec.QueueDeleteOk(0)).encode()], False
        if name == "basic.consume":
            tag = m.consumer_tag or f"ctag-{next(self.tags)}"
            self.consumers[tag] = m.queue
            return [MethodFrame(ch, spec.BasicConsumeOk(tag)).encode()], False
        if name == "basic.cancel":
            if m.consumer_tag in self.consumers:
                self.cancelled[m.consumer_tag] = self.consumers.pop(m.consumer_tag)
            return [MethodFrame(ch, spec.BasicCancelOk(m.consumer_tag)).encode()], False
        return fake091.serving(frame)


def broker(**wrong: bool) -> Callable[[socket.socket], None]:
    """A HostileServer behaviour; ``wrong`` names what it gets wrong (see :class:`Queues`)."""
    return fake091.broker({"product": "queue-kinds fake"}, Queues(**wrong).answer)
