"""Spec 4.3: channels share one connection fairly -- "Each peer SHOULD balance the traffic on all
open channels in a fair fashion" (4.3/3) and "SHOULD NOT allow one very busy channel to starve
the progress of a less busy channel" (4.3/4).

Observed in the order of the frames on the connection, the way the while-sending cases observe
content: a busy channel is a consumer of a backlog larger than a loopback connection buffers
(Linux grows a sender's buffer to at most 4 MiB; our receive window without reads stays small).
The client does not read for a moment, so the backlog queues up in the server, then sends or
starts the other channel's work and reads everything, noting the position of each channel's
frames. A server that writes one channel's whole backlog before anything of another channel
(one queue of output per connection, served first come first served) starves the other channel;
a server that interleaves channels shows the other channel's frames before the backlog ends.
No bound on "how soon" is read into the text: any progress of the other channel while the busy
one still has content to send passes.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Peer
from amqpspec.peer.base import Closed
from amqpspec.wire.amqp091 import FRAME_OVERHEAD, BodyFrame, HeaderFrame, MethodFrame, spec

from ._content import next_item, wait_queued
from ._model import WAIT, declare_queue

MESSAGES = 32
SIZE = 512 * 1024      # 32 x 512 KiB: four times what a stalled loopback connection buffers
STALL = 1.0            # how long the client does not read, so the backlog queues up in the server


def backlog(ctx: Context, peer: Peer, ch: int) -> str:
    """A fresh queue holding MESSAGES messages of SIZE octets, published on ``ch``."""
    queue = declare_queue(ctx, peer, ch)
    step = peer.negotiated.frame_max - FRAME_OVERHEAD
    payload = ctx.rng.randbytes(SIZE)
    for _ in range(MESSAGES):
        peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=queue)), HeaderFrame(ch, 60, SIZE),
                  *[BodyFrame(ch, payload[i:i + step]) for i in range(0, SIZE, step)])
    if wait_queued(peer, ch, queue, MESSAGES, wait=10.0) < MESSAGES:
        ctx.skip(f"precondition: {MESSAGES} messages of {SIZE} octets were not queued")
    return queue


@dataclass
class Order:
    """Per channel, the positions (in frames read) of its deliveries and of other methods."""

    deliveries: dict[int, list[int]]
    methods: dict[tuple[int, str], int]
    read: int
    end: str

    def first(self, ch: int) -> int | None:
        return self.deliveries[ch][0] if self.deliveries.get(ch) else None

    def last(self, ch: int) -> int | None:
        return self.deliveries[ch][-1] if len(self.deliveries.get(ch, [])) == MESSAGES else None


def read_order(peer: Peer, channels: tuple[int, ...], done: Callable[[Order], bool]) -> Order:
    """Reads frames until ``done(order)`` or nothing comes for WAIT seconds, noting positions."""
    order = Order({ch: [] for ch in channels}, {}, 0, "")
    while not done(order):
        item = next_item(peer, WAIT)
        if item is None or isinstance(item, Closed):
            order.end = "the connection closed" if isinstance(item, Closed) else f"nothing more within {WAIT:g}s"
            break
        order.read += 1
        if isinstance(item, MethodFrame):
            if item.method.NAME == "basic.deliver":
                order.deliveries.setdefault(item.channel, []).append(order.read)
            else:
                order.methods.setdefault((item.channel, item.method.NAME), order.read)
            if item.method.NAME in ("connection.close", "channel.close"):
                order.end = item.summary()
                break
    return order


def setup(ctx: Context, backlogs: int) -> tuple[Peer, list[int], list[str]]:
    """Queues with a backlog each (published on another connection) and a connection with two
    open channels that consume nothing yet."""
    publisher = ctx.connect()
    pch = publisher.open_channel()
    queues = [backlog(ctx, publisher, pch) for _ in range(backlogs)]
    peer = ctx.connect()
    return peer, [peer.open_channel(), peer.open_channel()], queues


def consume(peer: Peer, ch: int, queue: str) -> None:
    """basic.consume (no-ack), not waiting for consume-ok: the deliveries follow it unread."""
    peer.send(MethodFrame(ch, spec.BasicConsume(queue=queue, no_ack=True)))


@case("amqp091/4.3/busy-channel-does-not-starve", title="a request on one channel is answered while another "
      "channel's large backlog is still being delivered", clauses=("amqp091:4.3/4",), timeout=40.0)
def busy_does_not_starve(ctx: Context) -> None:
    """Channel A consumes (no-ack) a backlog of 32 x 512 KiB; the client reads nothing for a
    second, then sends a passive exchange.declare on channel B and reads on. B's declare-ok must
    come before A's last delivery: a server that first sends all of A's backlog (one output queue
    served in order, or a channel that hogs the writer) starves B and warns."""
    peer, (busy, other), (queue,) = setup(ctx, 1)
    consume(peer, busy, queue)
    time.sleep(STALL)
    peer.send(MethodFrame(other, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True)))
    order = read_order(peer, (busy,), lambda o: (other, "exchange.declare-ok") in o.methods
                       or o.last(busy) is not None)
    if order.first(busy) is None:
        ctx.skip(f"precondition: channel {busy} got no delivery of its backlog ({order.end or 'no frame'})")
    answered = order.methods.get((other, "exchange.declare-ok"))
    last = order.last(busy)
    ctx.record(answered is not None and (last is None or answered < last),
               expected=f"exchange.declare-ok on channel {other} before the last of channel {busy}'s "
                        f"{MESSAGES} deliveries",
               observed=(f"declare-ok at frame {answered}" if answered else "no declare-ok")
               + f", channel {busy}'s deliveries {len(order.deliveries[busy])} of {MESSAGES}"
               + (f", the last at frame {last}" if last else ""))


@case("amqp091/4.3/busy-channels-balanced", title="two channels consuming large backlogs both progress "
      "before either backlog is done", clauses=("amqp091:4.3/3",), timeout=60.0)
def channels_balanced(ctx: Context) -> None:
    """Channels A and B each consume (no-ack) a backlog of 32 x 512 KiB, B a second after A
    while the client does not read; then everything is read. Fair balancing puts deliveries of
    each channel before the other's last: a server that sends A's whole backlog before B's first
    delivery (or the reverse) does not balance the channels and warns."""
    peer, (a, b), (qa, qb) = setup(ctx, 2)
    consume(peer, a, qa)
    time.sleep(STALL)
    consume(peer, b, qb)
    order = read_order(peer, (a, b), lambda o: o.last(a) is not None and o.last(b) is not None)
    if order.first(a) is None or order.first(b) is None:
        ctx.skip(f"precondition: a channel got none of its backlog ({order.end or 'no frame'})")
    firsts, lasts = (order.first(a), order.first(b)), (order.last(a), order.last(b))
    balanced = all(f is not None and (last is None or f < last) for f, last in ((firsts[1], lasts[0]), (firsts[0], lasts[1])))
    ctx.record(balanced,
               expected=f"a delivery on channel {b} before channel {a}'s last, and on {a} before {b}'s last",
               observed=f"channel {a}: first at frame {firsts[0]}, last at {lasts[0]}; "
                        f"channel {b}: first at frame {firsts[1]}, last at {lasts[1]} ({order.read} frames read)")
