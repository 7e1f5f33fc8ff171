"""Helpers shared by the AMQP 1.0 case modules: sessions, links, transfers, credit.

They do the ordinary, correct thing so a case spends its lines on the step it checks.
Addresses are plain unique names, which both RabbitMQ's 1.0 plugin (as a queue name) and
the Qpid Proton example broker accept; queues a case creates on a broker that also speaks
0-9-1 are registered for deletion.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Peer, performative_name
from amqpspec.peer.base import Closed
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, spec, transfer_frames

WAIT = 3.0               # seconds for something a correct broker sends at once
REACTION_WINDOW = 5.0    # for a reaction that must come (a close after an error)


def address(ctx: Context, what: str = "q") -> str:
    """A node address unique to this case and run, registered for cleanup."""
    name = ctx.name(f"{what}{ctx.rng.getrandbits(24):06x}")
    ctx.will_delete("queue", name)
    return name


def session(ctx: Context, **handshake: Any) -> tuple[Peer, int]:
    """An open connection with one session; returns the peer and the session's channel."""
    peer = ctx.connect(**handshake)
    ch, _ = peer.begin()
    return peer, ch


def sender(peer: Peer, ch: int, addr: str, *, name: str | None = None, settled: bool = False,
           timeout: float = WAIT) -> tuple[int, spec.Attach]:
    """Attaches a sending link to ``addr``; ``settled`` asks for sender-settle-mode settled."""
    mode = spec.SenderSettleMode.SETTLED if settled else None
    h, remote = peer.attach(ch, name=name or f"snd-{uuid.uuid4().hex[:8]}", role=spec.Role.SENDER,
                            source=spec.Source(), target=spec.Target(address=addr), snd_settle_mode=mode,
                            timeout=timeout)
    return h, remote  # type: ignore[return-value]


def receiver(peer: Peer, ch: int, addr: str, *, name: str | None = None, credit: int | None = 10,
             timeout: float = WAIT, **source_fields: Any) -> tuple[int, spec.Attach]:
    """Attaches a receiving link from ``addr`` and (unless credit is None) grants credit."""
    h, remote = peer.attach(ch, name=name or f"rcv-{uuid.uuid4().hex[:8]}", role=spec.Role.RECEIVER,
                            source=spec.Source(address=addr, **source_fields), target=spec.Target(), timeout=timeout)
    if credit is not None:
        grant(peer, ch, h, credit)
    return h, remote  # type: ignore[return-value]


@dataclass
class Deliveries:
    """Counters for one session: what we sent, so transfers and flows carry correct numbers."""

    next_outgoing_id: int = 0    # transfer-id: counts transfer FRAMES (2.5.6)
    next_delivery_id: int = 0    # delivery-id: counts deliveries (messages)
    delivery_count: dict[int, int] = field(default_factory=dict)   # per handle we send on
    received_count: dict[int, int] = field(default_factory=dict)   # per handle we receive on


_COUNTERS: dict[tuple[int, int], Deliveries] = {}


def counters(peer: Peer, ch: int) -> Deliveries:
    return _COUNTERS.setdefault((id(peer), ch), Deliveries())


def grant(peer: Peer, ch: int, handle: int, credit: int, *, drain: bool | None = None, echo: bool | None = None,
          delivery_count: int | None = None) -> None:
    """flow granting ``credit`` on a receiving link (link-credit is set, not added: 2.6.7)."""
    c = counters(peer, ch)
    peer.send(AMQPFrame(ch, spec.Flow(next_incoming_id=0, incoming_window=2048, next_outgoing_id=c.next_outgoing_id,
                                      outgoing_window=2048, handle=handle,
                                      delivery_count=c.received_count.get(handle, 0) if delivery_count is None
                                      else delivery_count,
                                      link_credit=credit, drain=drain, echo=echo)))


def send_message(peer: Peer, ch: int, handle: int, message: Message | bytes | str, *, settled: bool = False,
                 tag: bytes | None = None, max_frame_size: int | None = None) -> int:
    """A transfer (split over several frames when larger than the frame size); returns its delivery-id."""
    c = counters(peer, ch)
    delivery_id = c.next_delivery_id
    c.next_delivery_id += 1
    c.delivery_count[handle] = c.delivery_count.get(handle, 0) + 1
    payload = message.encode() if isinstance(message, Message) else \
        Message(body=message).encode()
    transfer = spec.Transfer(handle=handle, delivery_id=delivery_id, delivery_tag=tag or f"t{delivery_id}".encode(),
                             message_format=0, settled=settled)
    frames = transfer_frames(ch, transfer, payload, max_frame_size or peer.opened.max_frame_size)
    c.next_outgoing_id += len(frames)
    peer.send(*frames)
    return delivery_id


@dataclass
class Received:
    transfer: spec.Transfer
    payload: bytes
    frames: int

    def message(self) -> Message:
        return Message.decode(self.payload)


def receive(peer: Peer, count: int, timeout: float = WAIT, *, others: list | None = None) -> list[Received]:
    """Collects up to ``count`` complete deliveries (multi-frame transfers joined); other frames
    go to ``others`` when given. Stops early at a close, end or detach."""
    got: list[Received] = []
    partial: dict[tuple[int, Any], tuple[spec.Transfer, bytearray, int]] = {}
    while len(got) < count:
        item = peer.recv(timeout)
        if item is None or isinstance(item, Closed):
            break
        if isinstance(item, EmptyFrame):
            continue
        name = performative_name(item)
        if name == "transfer":
            t = item.performative  # type: ignore[union-attr]
            key = (item.channel, t.handle)  # type: ignore[union-attr]
            first, data, n = partial.get(key, (t, bytearray(), 0))
            data += bytes(item.payload)  # type: ignore[union-attr]
            if t.more:
                partial[key] = (first, data, n + 1)
                continue
            partial.pop(key, None)
            if not t.aborted:
                got.append(Received(first, bytes(data), n + 1))
            continue
        if others is not None:
            others.append(item)
        if name in ("close", "end", "detach"):
            break
    return got


def settle(peer: Peer, ch: int, first: int, last: int | None = None, state: Any = None, *, role: bool = True) -> None:
    """disposition settling deliveries ``first``..``last`` (as receiver by default) with ``state``."""
    peer.send(AMQPFrame(ch, spec.Disposition(role=role, first=first, last=last, settled=True,
                                             state=state if state is not None else spec.Accepted())))
