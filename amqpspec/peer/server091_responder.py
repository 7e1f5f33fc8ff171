"""A correct broker's answers to a client's requests, each replaceable by a case.

The server peer (:mod:`amqpspec.peer.server091`) hands every frame the client sends to a
:class:`Responder`, which answers the way the specification asks a broker to: open-ok for
channel.open, declare-ok, consume-ok followed by the queue's messages (within the client's
prefetch), get-ok or get-empty, confirms on a confirm channel, close-ok for a close. It
keeps what a case judges afterwards: the contents the client published, the acks it sent
and on which channel, what arrived on a channel after we closed it.

A case changes the broker's conduct at one point with ``on("basic.publish", fn)``: ``fn``
gets the frame and returns None to let the default answer run, False when it handled the
frame, True when the conversation is over. Messages are bodies put in queues beforehand
(``preload``) or published by the client; routing is the default exchange's (queue name =
routing key) -- enough for the workloads of the driver contract, not a broker.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Callable

from amqpspec.peer.server091 import SentContent, ServerPeer
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, spec
from amqpspec.wire.amqp091.frames import Decoded

Handler = Callable[[MethodFrame], "bool | None"]
MAX_KEPT = 10_000   # contents, acks and stray frames kept per connection (a flooding client)


@dataclass
class Message:
    body: bytes
    properties: spec.BasicProperties = field(default_factory=spec.BasicProperties)
    redelivered: bool = False


@dataclass
class Consumer:
    channel: int
    tag: str
    queue: str
    no_ack: bool


class Responder:
    def __init__(self, peer: ServerPeer) -> None:
        self.peer = peer
        self.overrides: dict[str, Handler] = {}
        self.open_channels: set[int] = set()
        self.closing: set[int] = set()                  # channels we sent channel.close on
        self.queues: dict[str, deque[Message]] = {}
        self.consumers: dict[tuple[int, str], Consumer] = {}
        self.consumer_log: list[Consumer] = []            # every consumer ever started, cancelled or not
        self.prefetch: dict[int, int] = {}
        self.unacked: dict[int, dict[int, Message]] = {}  # channel -> delivery-tag -> message
        self.next_tag: dict[int, int] = {}
        self.delivered: list[tuple[int, int]] = []        # (channel, delivery-tag) we handed out
        self.acks: list[tuple[int, MethodFrame]] = []     # ack / nack / reject frames received
        self.contents: list[SentContent] = []             # contents the client published
        self.partial: dict[int, SentContent] = {}
        self.confirming: set[int] = set()
        self.publish_seq: dict[int, int] = {}
        self.transacted: set[int] = set()
        self.after_channel_close: list[Decoded] = []      # frames on a channel after our channel.close
        self.after_connection_close: list[Decoded] = []   # frames after our connection.close
        self.channel_close_oks: list[int] = []
        self.stray: list[str] = []                        # frames no broker would expect here
        self.heartbeats = 0
        #: publisher confirms: whether sequence number n is acked (True), nacked (False) or left
        #: to the case (None)
        self.confirm_ack: Callable[[int], bool | None] = lambda seq: True
        self._generated = 0

    # ------------------------------------------------------------------ setup by a case
    def on(self, name: str, handler: Handler) -> "Responder":
        self.overrides[name] = handler
        return self

    def preload(self, queue: str, bodies: list[bytes] | list[str]) -> "Responder":
        q = self.queues.setdefault(queue, deque())
        for b in bodies:
            q.append(Message(b.encode() if isinstance(b, str) else bytes(b)))
        return self

    # ------------------------------------------------------------------ broker actions
    def deliver(self, consumer: Consumer, message: Message, *, delivery_tag: int | None = None) -> int:
        """Sends one basic.deliver with its content; returns the delivery tag used."""
        ch = consumer.channel
        tag = delivery_tag if delivery_tag is not None else self._tag(ch)
        self.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, tag, message.redelivered, "", consumer.queue)),
                       *self.peer.content_frames(ch, message.body, message.properties))
        self._handed_out(ch, tag, message, consumer.no_ack)
        return tag

    def close_channel(self, channel: int, code: int = 406, text: str = "PRECONDITION_FAILED - amqpspec",
                      class_id: int = 0, method_id: int = 0) -> None:
        self.closing.add(channel)
        self.peer.send(MethodFrame(channel, spec.ChannelClose(code, text, class_id, method_id)))

    def _tag(self, channel: int) -> int:
        self.next_tag[channel] = self.next_tag.get(channel, 0) + 1
        return self.next_tag[channel]

    def _handed_out(self, channel: int, tag: int, message: Message, no_ack: bool) -> None:
        if len(self.delivered) < MAX_KEPT:
            self.delivered.append((channel, tag))
        if not no_ack:
            self.unacked.setdefault(channel, {})[tag] = message

    def _pump(self, channel: int) -> None:
        """Delivers queued messages to the channel's consumers, within its prefetch-count."""
        for c in [c for c in self.consumers.values() if c.channel == channel]:
            q = self.queues.get(c.queue)
            while q:
                limit = self.prefetch.get(channel, 0)
                if not c.no_ack and limit and len(self.unacked.get(channel, {})) >= limit:
                    return
                self.deliver(c, q.popleft())

    # ------------------------------------------------------------------ the conversation
    def handle(self, item: Decoded) -> bool:
        """Answers one item from the client; True when the connection's closing handshake is over."""
        if isinstance(item, HeartbeatFrame):
            self.heartbeats += 1
            return False
        if self.peer.close_sent is not None:
            if isinstance(item, MethodFrame) and item.channel == 0 and item.method.NAME == "connection.close-ok":
                return True
            if isinstance(item, MethodFrame) and item.channel == 0 and item.method.NAME == "connection.close":
                self.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
                self.peer.close_ok_sent = True
                return True
            self._keep(self.after_connection_close, item)
            return False
        channel = getattr(item, "channel", 0)
        if channel in self.closing:
            if isinstance(item, MethodFrame) and item.method.NAME == "channel.close-ok":
                self.closing.discard(channel)
                self.open_channels.discard(channel)
                self.channel_close_oks.append(channel)
                return False
            if isinstance(item, MethodFrame) and item.method.NAME == "channel.close":
                self.closing.discard(channel)  # both sides closed at once: answer close-ok (channel.close/stability)
                self.open_channels.discard(channel)
                self.peer.send(MethodFrame(channel, spec.ChannelCloseOk()))
                return False
            self._keep(self.after_channel_close, item)
            return False
        if isinstance(item, (HeaderFrame, BodyFrame)):
            self._content_frame(item)
            return False
        if not isinstance(item, MethodFrame):
            self._keep(self.stray, item, str(getattr(item, "summary", lambda: repr(item))()))
            return False
        handler = self.overrides.get(item.method.NAME)
        if handler is not None:
            handled = handler(item)
            if handled is not None:
                return bool(handled)
        return self._default(item)

    def _keep(self, into: list, item: Decoded, what: object = None) -> None:  # type: ignore[type-arg]
        if len(into) < MAX_KEPT:
            into.append(item if what is None else what)

    def _content_frame(self, item: HeaderFrame | BodyFrame) -> None:
        content = self.partial.get(item.channel)
        if content is None:
            self._keep(self.stray, item, f"content frame without a content method: {item.summary()}")
            return
        if isinstance(item, HeaderFrame):
            if content.header is not None:
                self._keep(self.stray, item, f"second content header: {item.summary()}")
                return
            content.header = item
        else:
            if content.header is None:
                self._keep(self.stray, item, f"body frame before the content header: {item.summary()}")
                return
            if sum(len(b.data) for b in content.bodies) + len(item.data) > max(content.header.body_size, 0):
                self._keep(self.stray, item, f"body frame past the announced body-size: {item.summary()}")
                return
            content.bodies.append(item)
        if content.complete:
            del self.partial[item.channel]
            self._published(content)

    def _published(self, content: SentContent) -> None:
        if len(self.contents) < MAX_KEPT:
            self.contents.append(content)
        ch = content.channel
        method = content.method
        props = content.header.properties if content.header is not None else None
        if ch in self.confirming:
            seq = self.publish_seq[ch] = self.publish_seq.get(ch, 0) + 1
            verdict = self.confirm_ack(seq)
            if verdict is not None:  # None: the case confirms later, its own way
                self.peer.send(MethodFrame(ch, spec.BasicAck(seq, False) if verdict
                                           else spec.BasicNack(seq, False, False)))
        if getattr(method, "exchange", "") != "":
            return  # only the default exchange routes here
        queue = str(getattr(method, "routing_key", ""))
        message = Message(content.body)
        reply_to = getattr(props, "reply_to", None)
        if reply_to:  # the request of the rpc workload: this broker's own service answers it
            reply = Message(b"reply:" + content.body,
                            spec.BasicProperties(correlation_id=getattr(props, "correlation_id", None)))
            self.queues.setdefault(str(reply_to), deque()).append(reply)
            self._pump_queue(str(reply_to))
            return
        self.queues.setdefault(queue, deque()).append(message)
        self._pump_queue(queue)

    def _pump_queue(self, queue: str) -> None:
        for ch in sorted({c.channel for c in self.consumers.values() if c.queue == queue}):
            self._pump(ch)

    def _default(self, frame: MethodFrame) -> bool:
        m, ch, name = frame.method, frame.channel, frame.method.NAME
        send = self.peer.send

        def reply(method: object) -> None:
            send(MethodFrame(ch, method))  # type: ignore[arg-type]

        if name == "connection.close":
            reply(spec.ConnectionCloseOk())
            self.peer.close_ok_sent = True
            return True
        if name == "channel.open":
            self.open_channels.add(ch)
            reply(spec.ChannelOpenOk())
        elif name == "channel.close":
            self.open_channels.discard(ch)
            for key in [k for k in self.consumers if k[0] == ch]:
                del self.consumers[key]
            self.unacked.pop(ch, None)
            reply(spec.ChannelCloseOk())
        elif name == "channel.flow":
            reply(spec.ChannelFlowOk(m.active))
        elif name == "exchange.declare":
            if not m.no_wait:
                reply(spec.ExchangeDeclareOk())
        elif name == "queue.declare":
            queue = str(m.queue) or self._generated_name()
            self.queues.setdefault(queue, deque())
            if not m.no_wait:
                reply(spec.QueueDeclareOk(queue, len(self.queues[queue]),
                                          sum(1 for c in self.consumers.values() if c.queue == queue)))
        elif name in ("queue.bind", "queue.unbind", "queue.purge", "queue.delete", "exchange.delete"):
            if name == "queue.purge":
                count = len(self.queues.get(str(m.queue), ()))
                self.queues[str(m.queue)] = deque()
                if not m.no_wait:
                    reply(spec.QueuePurgeOk(count))
            elif name == "queue.delete":
                count = len(self.queues.pop(str(m.queue), ()))
                if not m.no_wait:
                    reply(spec.QueueDeleteOk(count))
            elif name == "queue.unbind":
                reply(spec.QueueUnbindOk())
            elif not m.no_wait:
                reply(spec.QueueBindOk() if name == "queue.bind" else spec.ExchangeDeleteOk())
        elif name == "basic.qos":
            self.prefetch[ch] = m.prefetch_count
            reply(spec.BasicQosOk())
        elif name == "basic.consume":
            tag = str(m.consumer_tag) or f"amq.ctag-amqpspec-{len(self.consumers) + 1}"
            self.consumers[(ch, tag)] = Consumer(ch, tag, str(m.queue), bool(m.no_ack))
            self._keep(self.consumer_log, self.consumers[(ch, tag)])  # type: ignore[arg-type]
            if not m.no_wait:
                reply(spec.BasicConsumeOk(tag))
            self._pump(ch)
        elif name == "basic.cancel":
            self.consumers.pop((ch, str(m.consumer_tag)), None)
            if not m.no_wait:
                reply(spec.BasicCancelOk(m.consumer_tag))
        elif name == "basic.get":
            q = self.queues.get(str(m.queue))
            if q:
                message = q.popleft()
                tag = self._tag(ch)
                send(MethodFrame(ch, spec.BasicGetOk(tag, message.redelivered, "", str(m.queue), len(q))),
                     *self.peer.content_frames(ch, message.body, message.properties))
                self._handed_out(ch, tag, message, bool(m.no_ack))
            else:
                reply(spec.BasicGetEmpty())
        elif name in ("basic.publish",):
            if ch in self.partial:
                self._keep(self.stray, frame, f"basic.publish before the previous content was complete on ch={ch}")
            self.partial[ch] = SentContent(ch, m)
        elif name in ("basic.ack", "basic.nack", "basic.reject"):
            self._keep(self.acks, (ch, frame))  # type: ignore[arg-type]
            self._settle(ch, m)
            self._pump(ch)
        elif name == "basic.recover":
            reply(spec.BasicRecoverOk())
        elif name == "confirm.select":
            self.confirming.add(ch)
            if not m.nowait:
                reply(spec.ConfirmSelectOk())
        elif name == "tx.select":
            self.transacted.add(ch)
            reply(spec.TxSelectOk())
        elif name == "tx.commit":
            reply(spec.TxCommitOk())
        elif name == "tx.rollback":
            reply(spec.TxRollbackOk())
        elif name in ("connection.close-ok", "channel.close-ok", "channel.flow-ok", "basic.cancel-ok"):
            pass  # answers to our own requests
        else:
            self._keep(self.stray, frame, f"unexpected from a client here: {frame.summary()}")
        return False

    def _settle(self, channel: int, method: object) -> None:
        tags = self.unacked.get(channel, {})
        tag = int(getattr(method, "delivery_tag", 0))
        if getattr(method, "multiple", False):
            for t in [t for t in tags if tag == 0 or t <= tag]:
                del tags[t]
        else:
            tags.pop(tag, None)

    def _generated_name(self) -> str:
        self._generated += 1
        return f"amq.gen-amqpspec-{self._generated}"
