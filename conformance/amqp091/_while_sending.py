"""A method sent while the server is still sending a message's content, and whether the server
processed it then (basic.reject/01, RabbitMQ's basic.nack/01: "the server should read and process
incoming methods while sending output frames").

A content that fits in the socket buffers is sent completely before the method arrives, so a
server that reads only between contents passes; nothing "while sending" is then observed. Here
the content is larger than the buffers of a loopback connection whose reader does not read (our
receive window without reads stays near its initial size; Linux grows a sender's buffer to at most
4 MiB), and the receiving client reads none of it until the method's effect has been looked for.
The method requeues the message, an effect another connection sees at once as the queue's
message-count; so a server that processes the method while it still has content to send shows
count 1 while the content is unread, or cuts the content short with an empty body frame. A
server that reads the method only after it has sent the whole content shows neither.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import StaysOpen
from amqpspec.wire.amqp091 import FRAME_OVERHEAD, BodyFrame, HeaderFrame, MethodFrame, spec

from ._content import SETTLE, next_item, queue_count, wait_queued
from ._model import WAIT, declare_queue
from ._replies import react

CONTENT_SIZE = 8 * 1024 * 1024  # more than a stalled loopback connection buffers (see the module text)
LOOK = 2.0                      # how long the requeue is looked for while the content stays unread

#: the settling method (basic.reject or basic.nack with requeue) for a channel and delivery tag
Settle = Callable[[int, int], MethodFrame]


@dataclass
class WhileSending:
    """What one run showed: whether the requeue was seen before the content was read, how much
    content came, whether it was cut, what the channel did, and the close or liveness seen."""

    requeued_early: bool
    requeued_late: bool
    octets: int
    size: int
    cut: bool
    channel: str
    open: bool

    @property
    def processed_while_sending(self) -> bool:
        return self.requeued_early or self.cut

    def describe(self) -> str:
        when = ("message-count 1 while the content was unread" if self.requeued_early else
                "message-count 1 only after the content was read" if self.requeued_late else
                "the message never counted again")
        cut = ", cut by an empty body frame" if self.cut else ""
        return f"{when}; content {self.octets} of {self.size} octets{cut}; {self.channel}"


def _requeued(peer: Peer, ch: int, queue: str, wait: float) -> bool:
    until = time.monotonic() + wait
    while True:
        if queue_count(peer, ch, queue) >= 1:
            return True
        if time.monotonic() >= until:
            return False
        time.sleep(0.05)


def _read_content(peer: Peer) -> tuple[int, int, bool]:
    """(octets read, body size, cut by an empty body frame) of the content after a get-ok."""
    header = next_item(peer, WAIT)
    if not isinstance(header, HeaderFrame):
        return 0, 0, False
    octets = 0
    while octets < header.body_size:
        part = next_item(peer, WAIT)
        if not isinstance(part, BodyFrame):
            break
        if not part.data:
            return octets, header.body_size, True
        octets += len(part.data)
    return octets, header.body_size, False


def settle_while_sending(ctx: Context, settle: Settle) -> WhileSending | None:
    """Queues one CONTENT_SIZE message, fetches it with basic.get (no-ack false) on a second
    connection, sends ``settle`` for it as soon as get-ok arrives, looks for the requeue for
    LOOK seconds without reading, then reads the content and, if needed, looks again. None when
    the message could not be fetched (the case cannot decide)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch)
    payload = ctx.rng.randbytes(CONTENT_SIZE)
    step = peer.negotiated.frame_max - FRAME_OVERHEAD
    peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=queue)),
              HeaderFrame(ch, 60, len(payload)),
              *[BodyFrame(ch, payload[i:i + step]) for i in range(0, len(payload), step)])
    if wait_queued(peer, ch, queue, 1) < 1:
        return None
    consumer = ctx.connect()
    cch = consumer.open_channel()
    consumer.send(MethodFrame(cch, spec.BasicGet(queue=queue, no_ack=False)))
    reply = next_item(consumer, WAIT)
    if not (isinstance(reply, MethodFrame) and reply.method.NAME == "basic.get-ok"):
        return None
    consumer.send(settle(cch, reply.method.delivery_tag))  # type: ignore[attr-defined]
    early = _requeued(peer, ch, queue, LOOK)
    octets, size, cut = _read_content(consumer)
    obs = react(consumer, cch)
    late = not early and _requeued(peer, ch, queue, SETTLE)
    return WhileSending(early, late, octets, size, cut, obs.describe(), StaysOpen().accepts(obs))


def judge(ctx: Context, seen: WhileSending | None, method: str) -> None:
    """Records the two checks: the method is accepted (the channel stays open) and it was
    processed while the content was being sent."""
    if seen is None:
        ctx.skip("the message could not be queued and fetched with basic.get")
        return
    ctx.note(seen.describe())
    if not ctx.record(seen.open, expected=f"no exception after the {method}", observed=seen.channel,
                      what=f"the {method} sent during the content is accepted"):
        return
    ctx.record(seen.processed_while_sending,
               expected=f"the {method} processed while the content is sent: the requeued message counted before "
                        "the content is read, or the content cut by an empty body frame",
               observed=seen.describe(), what=f"the {method} is processed while the content is being sent")
