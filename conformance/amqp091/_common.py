"""Small helpers shared by the 0-9-1 case modules (not cases themselves)."""
from __future__ import annotations

import uuid

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.peer.base import Closed
from amqpspec.wire.amqp091 import (
    PROTOCOL_HEADER, BodyFrame, HeaderFrame, MethodFrame, ProtocolHeader, spec,
)

# How long to wait for a reaction that must come. Long enough for brokers that pause
# before closing (spec 4.10.2 suggests "several seconds" for negotiation errors;
# RabbitMQ waits 3 s before a silent close), short enough to keep the suite fast.
REACTION_WINDOW = 5.0
QUICK_WINDOW = 3.0
DISCARD_WINDOW = 1.0  # time for a wrongful reply to a method sent after a close, before close-ok


def opened(ctx: Context, **handshake: object) -> Peer:
    """A fully opened connection."""
    return ctx.connect(**handshake)  # type: ignore[arg-type]


def with_channel(ctx: Context, **handshake: object) -> tuple[Peer, int]:
    peer = ctx.connect(**handshake)  # type: ignore[arg-type]
    return peer, peer.open_channel()


def private_queue(peer: Peer, channel: int, ctx: Context | None = None) -> str:
    """An exclusive, auto-delete queue with a unique client-chosen name.

    Client-named rather than server-named, so that cases about something else do not
    depend on server-named queues (tested on their own); exclusive queues go with the
    connection, and with ``ctx`` the queue is also registered for deletion.
    """
    name = ctx.name(f"q{uuid.uuid4().hex[:8]}") if ctx is not None else f"amqpspec-{uuid.uuid4().hex}"
    if ctx is not None:
        ctx.will_delete("queue", name)
    reply = peer.call(channel, spec.QueueDeclare(queue=name, exclusive=True, auto_delete=True))
    return reply.method.queue or name  # type: ignore[attr-defined]


def publish_frames(channel: int, routing_key: str, body: bytes, *, frame_body_max: int | None = None,
                   properties: spec.BasicProperties | None = None, exchange: str = "") -> list:
    """basic.publish + content header + body frames (split at ``frame_body_max`` octets)."""
    frames: list = [MethodFrame(channel, spec.BasicPublish(exchange=exchange, routing_key=routing_key)),
                    HeaderFrame(channel, 60, len(body), properties or spec.BasicProperties())]
    step = frame_body_max or max(len(body), 1)
    for i in range(0, len(body), step):
        frames.append(BodyFrame(channel, body[i:i + step]))
    return frames


def get_message(peer: Peer, channel: int, queue: str, timeout: float = 3.0) -> tuple[MethodFrame, HeaderFrame | None, bytes] | None:
    """basic.get with no-ack; returns (get-ok, header, body) or None for get-empty."""
    reply = peer.call(channel, spec.BasicGet(queue=queue, no_ack=True), ("basic.get-ok", "basic.get-empty"), timeout)
    if reply.method.NAME == "basic.get-empty":
        return None
    header = peer.recv(timeout)
    if not isinstance(header, HeaderFrame):
        # an undecodable header still announces a body: read the body frames that follow it
        _drain_bodies(peer, min(timeout, 0.5))
        return reply, None, b""
    body = b""
    while len(body) < header.body_size:
        item = peer.recv(timeout)
        if not isinstance(item, BodyFrame):
            break
        body += item.data
    return reply, header, body


def _drain_bodies(peer: Peer, timeout: float) -> None:
    while True:
        item = peer.recv(timeout)
        if not isinstance(item, BodyFrame):
            if item is not None and not isinstance(item, Closed):
                peer.unread(item)  # not ours: leave it for the caller
            return


def after_start(ctx: Context) -> Peer:
    """A connection whose broker has sent connection.start and awaits start-ok."""
    peer = ctx.connect(handshake=False)
    peer.handshake(upto="start")
    return peer


def header_bytes(literal: bytes = b"AMQP", protocol_id: int = 0, major: int = 0, minor: int = 9, revision: int = 1) -> ProtocolHeader:
    return ProtocolHeader(literal + bytes((protocol_id, major, minor, revision)))


def silent(obs: Observation) -> bool:
    return obs.closed and not obs.received


__all__ = ["PROTOCOL_HEADER", "REACTION_WINDOW", "QUICK_WINDOW", "DISCARD_WINDOW", "opened", "with_channel",
           "private_queue", "publish_frames", "get_message", "after_start", "header_bytes", "silent"]
