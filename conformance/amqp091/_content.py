"""Messages over the raw peer, the way a correct client handles them (shared by the 0-9-1 case modules).

Publishes numbered messages, waits until a queue holds them, starts consumers, gets messages,
and reads whatever the broker sends meanwhile into a ``Gathered``: deliveries, returns and
get-oks grouped with their content, and the close that ended the wait (answered like a client
would). The basic-class modules and the content synchronisation and ordering sections (4.6,
4.7) use them so that a case spends its lines on the one step it checks.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Iterable

from amqpspec.peer.amqp091 import Peer, UnexpectedReply
from amqpspec.peer.base import Closed
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, spec

from ._model import WAIT, Message, publish
from ._replies import is_close, method_on

QUIET = 0.4          # how long "nothing more arrives" is watched when no fence can prove it
SETTLE = 2.0         # how long an asynchronous effect (a requeue, an enqueue) is waited for


def body(i: int, prefix: str = "m") -> bytes:
    return f"{prefix}{i:04d}".encode()


def publish_n(peer: Peer, ch: int, routing_key: str, n: int, *, exchange: str = "", prefix: str = "m",
              properties: Callable[[int], spec.BasicProperties | None] | None = None) -> list[bytes]:
    """Publishes ``n`` numbered messages (m0000, m0001, ...) on one channel; returns the bodies."""
    bodies = [body(i, prefix) for i in range(n)]
    for i, b in enumerate(bodies):
        publish(peer, ch, exchange, routing_key, b, properties=properties(i) if properties else None)
    return bodies


def queue_count(peer: Peer, ch: int, queue: str, into: "Gathered | None" = None) -> int:
    """The queue's message-count (passive declare); deliveries arriving meanwhile go to ``into``."""
    reply = call(peer, ch, spec.QueueDeclare(queue=queue, passive=True), into=into)
    return int(reply.method.message_count)  # type: ignore[attr-defined]


def wait_queued(peer: Peer, ch: int, queue: str, n: int, wait: float = SETTLE) -> int:
    """Waits until ``queue`` holds at least ``n`` ready messages (passive declare on ``ch``, the
    publishing channel: the broker handles a channel's methods in order). Returns the last count."""
    until = time.monotonic() + wait
    pause = 0.005
    while True:
        count = queue_count(peer, ch, queue)
        if count >= n or time.monotonic() >= until:
            return count
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def next_item(peer: Peer, timeout: float) -> Any:
    """The next frame (heartbeats skipped), a Closed, or None."""
    while True:
        item = peer.recv(timeout)
        if not isinstance(item, HeartbeatFrame):
            return item


def messages(items: Iterable[Any], names: tuple[str, ...] = ("basic.deliver", "basic.get-ok", "basic.return")) -> list[Message]:
    """Groups received frames into messages (method, content header, body frames), per channel."""
    out: list[Message] = []
    open_: dict[int, tuple[Message, int]] = {}  # channel -> (message being filled, body size)
    for item in items:
        if isinstance(item, MethodFrame) and item.method.NAME in names:
            msg = Message(item.method, None, b"", item.channel)
            out.append(msg)
            open_[item.channel] = (msg, -1)
        elif isinstance(item, HeaderFrame) and item.channel in open_:
            msg, _ = open_[item.channel]
            msg.properties, msg.header = item.properties, item  # type: ignore[assignment]
            if item.body_size == 0:
                del open_[item.channel]
            else:
                open_[item.channel] = (msg, item.body_size)
        elif isinstance(item, BodyFrame) and item.channel in open_:
            msg, size = open_[item.channel]
            msg.body += item.data
            if len(msg.body) >= size:
                del open_[item.channel]
    return out


def read_message(peer: Peer, frame: MethodFrame, timeout: float = WAIT) -> Message:
    """The content that follows ``frame`` (frames of other channels in between are kept for later)."""
    msg = Message(frame.method, None, b"", frame.channel)
    aside: list[Any] = []
    size = -1
    while size < 0 or len(msg.body) < size:
        item = next_item(peer, timeout)
        if item is None or isinstance(item, Closed):
            break
        if isinstance(item, HeaderFrame) and item.channel == frame.channel and size < 0:
            msg.properties, msg.header, size = item.properties, item, item.body_size  # type: ignore[assignment]
        elif isinstance(item, BodyFrame) and item.channel == frame.channel and size >= 0:
            msg.body += item.data
        else:
            aside.append(item)
            if size < 0 and isinstance(item, MethodFrame) and item.channel == frame.channel:
                break  # no content came: leave the method for the caller
    for item in reversed(aside):
        peer.unread(item)
    return msg


class Gathered:
    """What arrived while waiting for something: messages by kind, and every frame in order."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.messages: list[Message] = []
        self.closed: Any = None  # a channel.close / connection.close frame, or a Closed

    def deliveries(self, ch: int | None = None, tag: str | None = None) -> list[Message]:
        return [m for m in self.messages if m.method.NAME == "basic.deliver" and (ch is None or m.channel == ch)
                and (tag is None or m.method.consumer_tag == tag)]

    def returns(self, ch: int | None = None) -> list[Message]:
        return [m for m in self.messages if m.method.NAME == "basic.return" and (ch is None or m.channel == ch)]

    def describe(self) -> str:
        parts = [m.summary() for m in self.messages]
        if self.closed is not None:
            parts.append(self.closed.summary() if hasattr(self.closed, "summary") else str(self.closed))
        return "; ".join(parts) if parts else "nothing"


def gather(peer: Peer, until: Callable[[Any], bool] | None = None, timeout: float = WAIT,
           into: Gathered | None = None, count: int | None = None) -> tuple[Any, Gathered]:
    """Reads frames, collecting contents, until ``until(frame)`` holds (returns that frame),
    ``count`` messages were gathered, a close arrives (answered like a client would), or
    ``timeout`` seconds pass without any frame (returns None)."""
    got = into if into is not None else Gathered()
    while True:
        if count is not None and len(got.messages) >= count:
            return None, got
        item = next_item(peer, timeout)
        if item is None:
            return None, got
        if isinstance(item, Closed):
            got.closed = item
            return None, got
        got.items.append(item)
        if until is not None and until(item):
            return item, got
        if isinstance(item, MethodFrame) and item.method.NAME in ("basic.deliver", "basic.get-ok", "basic.return"):
            got.messages.append(read_message(peer, item, timeout))
        elif is_close(item):
            got.closed = item
            if item.method.NAME == "connection.close":
                peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
                peer.close_ok_sent = True
            else:
                peer.send(MethodFrame(item.channel, spec.ChannelCloseOk()))
            return None, got


def gather_until(peer: Peer, got: Gathered, done: Callable[[Gathered], bool], timeout: float = WAIT) -> bool:
    """Gathers messages into ``got`` until ``done(got)`` holds, a close, or ``timeout`` seconds
    without any new message. Returns whether ``done`` holds."""
    while not done(got):
        n = len(got.messages)
        gather(peer, timeout=timeout, count=n + 1, into=got)
        if len(got.messages) == n or got.closed is not None:
            return done(got)
    return True


def call(peer: Peer, ch: int, method: Any, reply: str | None = None, into: Gathered | None = None,
         timeout: float = WAIT) -> MethodFrame:
    """A synchronous method and its reply, tolerating deliveries meanwhile (kept in ``into``)."""
    names = (reply,) if reply else tuple(method.RESPONSES)
    peer.send(MethodFrame(ch, method))
    frame, got = gather(peer, method_on(ch, *names), timeout, into)
    if frame is None:
        raise UnexpectedReply(f"{' or '.join(names)} on channel {ch}", got.closed)
    return frame


def start_consumer(peer: Peer, ch: int, queue: str, into: Gathered | None = None, *, tag: str = "",
                   no_ack: bool = True, **flags: Any) -> tuple[str, Gathered]:
    """basic.consume, waiting for consume-ok; deliveries arriving meanwhile (for other consumers,
    or for this one from a broker that sends them early) are kept in the returned Gathered."""
    peer.send(MethodFrame(ch, spec.BasicConsume(queue=queue, consumer_tag=tag, no_ack=no_ack, **flags)))
    reply, got = gather(peer, method_on(ch, "basic.consume-ok"), WAIT, into)
    if reply is None:
        raise UnexpectedReply(f"basic.consume-ok on channel {ch}", got.closed)
    return str(reply.method.consumer_tag), got


def get_message(peer: Peer, ch: int, queue: str, no_ack: bool = True, timeout: float = WAIT,
                into: Gathered | None = None) -> Message | None:
    """basic.get: the message, or None for get-empty. Deliveries arriving meanwhile go to ``into``;
    anything else (a close, silence) raises UnexpectedReply."""
    peer.send(MethodFrame(ch, spec.BasicGet(queue=queue, no_ack=no_ack)))
    reply, got = gather(peer, method_on(ch, "basic.get-ok", "basic.get-empty"), timeout, into)
    if reply is None:
        raise UnexpectedReply(f"basic.get-ok or basic.get-empty on channel {ch}", got.closed)
    if reply.method.NAME == "basic.get-empty":
        return None
    return read_message(peer, reply, timeout)


def get_eventually(peer: Peer, ch: int, queue: str, no_ack: bool = True, wait: float = SETTLE) -> Message | None:
    """basic.get repeated while the queue is empty, for at most ``wait`` seconds (for effects the
    broker applies asynchronously, e.g. a requeue after another channel closed)."""
    until = time.monotonic() + wait
    pause = 0.01
    while True:
        msg = get_message(peer, ch, queue, no_ack)
        if msg is not None or time.monotonic() >= until:
            return msg
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def get_all(peer: Peer, ch: int, queue: str, limit: int = 1000, no_ack: bool = True) -> list[Message]:
    """basic.get until get-empty."""
    out: list[Message] = []
    while len(out) < limit:
        msg = get_message(peer, ch, queue, no_ack)
        if msg is None:
            break
        out.append(msg)
    return out


def shown(bs: Iterable[bytes]) -> str:
    return "[" + ", ".join(b.decode("latin-1") for b in bs) + "]"
