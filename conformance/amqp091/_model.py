"""Helpers for model cases (exchanges, queues, bindings, basic, tx): a thin client over the raw peer.

They do the ordinary, correct thing -- declare, bind, publish, get, consume -- so a case can
spend its lines on the one step it checks. Everything a helper declares is registered for
deletion after the case. Helpers raise ``UnexpectedReply`` when the broker answers
something else; a case that checks an answer should send the method itself and observe.
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterable

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Peer
from amqpspec.peer.base import Closed
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec

WAIT = 3.0  # seconds to wait for something a correct broker sends at once


@dataclass
class Message:
    """A message as received: the method that carried it, its properties, its body."""

    method: Any                      # BasicDeliver, BasicGetOk or BasicReturn
    properties: spec.BasicProperties | None
    body: bytes
    channel: int = 0
    header: HeaderFrame | None = field(default=None, repr=False)

    @property
    def delivery_tag(self) -> int:
        return getattr(self.method, "delivery_tag", 0)

    @property
    def redelivered(self) -> bool:
        return bool(getattr(self.method, "redelivered", False))

    @property
    def routing_key(self) -> str:
        return str(getattr(self.method, "routing_key", ""))

    def summary(self) -> str:
        return f"{self.method.NAME}(tag={self.delivery_tag}, rk={self.routing_key!r}, body={self.body[:32]!r})"


def unique(ctx: Context, what: str = "q") -> str:
    """A name unique to this case and run (short: queue names are short strings)."""
    return ctx.name(f"{what}{uuid.uuid4().hex[:6]}")


def declare_queue(ctx: Context, peer: Peer, ch: int, name: str | None = None, **flags: Any) -> str:
    """queue.declare with a unique name (unless given), registered for deletion; returns the name."""
    qname = unique(ctx) if name is None else name
    reply = peer.call(ch, spec.QueueDeclare(queue=qname, **flags))
    actual = reply.method.queue or qname  # type: ignore[attr-defined]
    ctx.will_delete("queue", actual)
    return actual


def declare_exchange(ctx: Context, peer: Peer, ch: int, type: str, name: str | None = None, **flags: Any) -> str:
    xname = unique(ctx, "x") if name is None else name
    peer.call(ch, spec.ExchangeDeclare(exchange=xname, type=type, **flags))
    ctx.will_delete("exchange", xname)
    return xname


def bind(peer: Peer, ch: int, queue: str, exchange: str, routing_key: str = "", arguments: Any = None) -> None:
    peer.call(ch, spec.QueueBind(queue=queue, exchange=exchange, routing_key=routing_key, arguments=arguments))


def content_frames(ch: int, body: bytes, properties: spec.BasicProperties | None = None,
                   frame_body_max: int = 4096) -> list:
    frames: list = [HeaderFrame(ch, 60, len(body), properties or spec.BasicProperties())]
    for i in range(0, len(body), frame_body_max):
        frames.append(BodyFrame(ch, body[i:i + frame_body_max]))
    return frames


def publish(peer: Peer, ch: int, exchange: str, routing_key: str, body: bytes = b"", *,
            properties: spec.BasicProperties | None = None, mandatory: bool = False, immediate: bool = False) -> None:
    """basic.publish with its content (asynchronous: no reply expected)."""
    peer.send(MethodFrame(ch, spec.BasicPublish(exchange=exchange, routing_key=routing_key, mandatory=mandatory,
                                                immediate=immediate)), *content_frames(ch, body, properties))


def read_content(peer: Peer, method_frame: MethodFrame, timeout: float = WAIT) -> Message:
    """Reads the content header and body frames that follow a content-carrying method."""
    header = peer.recv(timeout)
    if not isinstance(header, HeaderFrame):
        if header is not None and not isinstance(header, Closed):
            peer.unread(header)
        return Message(method_frame.method, None, b"", method_frame.channel)
    body = b""
    while len(body) < header.body_size:
        item = peer.recv(timeout)
        if not isinstance(item, BodyFrame):
            if item is not None and not isinstance(item, Closed):
                peer.unread(item)
            break
        body += item.data
    return Message(method_frame.method, header.properties, body, method_frame.channel, header)  # type: ignore[arg-type]


def get(peer: Peer, ch: int, queue: str, no_ack: bool = True, timeout: float = WAIT) -> Message | None:
    """basic.get; None for get-empty."""
    reply = peer.call(ch, spec.BasicGet(queue=queue, no_ack=no_ack), ("basic.get-ok", "basic.get-empty"), timeout)
    if reply.method.NAME == "basic.get-empty":
        return None
    return read_content(peer, reply, timeout)


def consume(peer: Peer, ch: int, queue: str, *, tag: str = "", no_ack: bool = True, **flags: Any) -> str:
    reply = peer.call(ch, spec.BasicConsume(queue=queue, consumer_tag=tag, no_ack=no_ack, **flags))
    return reply.method.consumer_tag  # type: ignore[attr-defined]


def receive(peer: Peer, count: int, timeout: float = WAIT, *, methods: tuple[str, ...] = ("basic.deliver",),
            others: list | None = None) -> list[Message]:
    """Collects up to ``count`` messages (deliveries by default) within ``timeout`` seconds each.

    Frames that are not such messages go to ``others`` when given (else they are dropped),
    so a case can also see a channel.close or basic.cancel that arrived meanwhile.
    """
    got: list[Message] = []
    while len(got) < count:
        item = peer.recv(timeout)
        if item is None or isinstance(item, Closed):
            break
        if isinstance(item, MethodFrame) and item.method.NAME in methods:
            got.append(read_content(peer, item, timeout))
        elif others is not None:
            others.append(item)
            if isinstance(item, MethodFrame) and item.method.NAME in ("connection.close", "channel.close"):
                break
    return got


def quiet(peer: Peer, timeout: float = 0.5, *, methods: tuple[str, ...] = ("basic.deliver",)) -> list[Message]:
    """Messages arriving within a short window: for checks that nothing (more) is delivered."""
    return receive(peer, 1 << 30, timeout, methods=methods)


def fence(peer: Peer, ch: int, timeout: float = WAIT) -> None:
    """A synchronous no-op on the channel: when it returns, everything sent before on that
    channel has been processed (frames on one channel are handled in order)."""
    peer.call(ch, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True), timeout=timeout)


def close_channel(peer: Peer, ch: int) -> None:
    """Orderly channel.close / close-ok."""
    peer.call(ch, spec.ChannelClose(200, "amqpspec done", 0, 0), "channel.close-ok")


def bodies(msgs: Iterable[Message]) -> list[bytes]:
    return [m.body for m in msgs]


def message_count(peer: Peer, ch: int, queue: str) -> tuple[int, int]:
    """(message-count, consumer-count) of a passive queue.declare."""
    reply = peer.call(ch, spec.QueueDeclare(queue=queue, passive=True), timeout=WAIT)
    return reply.method.message_count, reply.method.consumer_count  # type: ignore[attr-defined]


def wait_count(peer: Peer, ch: int, queue: str, wanted: int, timeout: float = WAIT) -> int:
    """Polls the queue's message-count until it is ``wanted`` or ``timeout`` passes; returns the last count.

    For effects a broker may apply asynchronously (a requeue after nack, an enqueue after commit
    seen from another connection); a correct broker is done at the first poll or soon after.
    """
    until = time.monotonic() + timeout
    pause = 0.02
    while True:
        count, _ = message_count(peer, ch, queue)
        if count == wanted or time.monotonic() >= until:
            return count
        time.sleep(pause)
        pause = min(pause * 2, 0.2)
