"""Exchanges as the routing cases need them (shared by the 0-9-1 case modules).

Whether an exchange exists or a type is supported, a body that names the case, and the polling
that tells whether a message reached a queue; ``check_instance`` is the required-instances
scenario of the exchange class, which 3.1.3 runs for the pre-declared exchanges too.
"""
from __future__ import annotations

import time
import uuid

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import ChannelException, ConnectionException, Replies, Verifier
from amqpspec.wire.amqp091 import spec

from ._common import QUICK_WINDOW, with_channel
from ._model import WAIT, declare_queue, get, unique
from ._replies import answer_channel_close, attempt


def refused(channel: int) -> Verifier:
    """Any exception: a channel exception on ``channel`` or a connection exception."""
    return ChannelException(channel=channel) | ConnectionException()


def exchange_exists(ctx: Context, name: str, peer: Peer | None = None) -> bool | None:
    """Passive exchange.declare on a fresh channel: True (declare-ok), False (channel.close 404),
    None for anything else (e.g. refused with another code). A new connection unless ``peer``."""
    if peer is None or peer.close_ok_sent or peer.link.closed:
        peer = ctx.connect()
    ch = peer.open_channel()
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", passive=True), QUICK_WINDOW)
    answer_channel_close(peer, ch, obs)
    if obs.methods("exchange.declare-ok", ch):
        return True
    close = obs.channel_close(ch)
    if close is not None and close.reply_code == 404:
        return False
    return None


def existence_text(found: bool | None) -> str:
    return {True: "passive declare answered with declare-ok: the exchange exists",
            False: "passive declare refused with 404: the exchange does not exist"}.get(
        found, "passive declare answered neither declare-ok nor 404")


def type_supported(ctx: Context, type: str) -> bool:
    """Whether the broker creates an exchange of this type (a private one, registered for deletion)."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "t")
    ctx.will_delete("exchange", name)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type=type), QUICK_WINDOW)
    return bool(obs.methods("exchange.declare-ok", ch))


def body_for(ctx: Context, label: str) -> bytes:
    return f"amqpspec {ctx.spec.id} {label} {uuid.uuid4().hex[:8]}".encode()


def collect_until(peer: Peer, ch: int, queue: str, marker: bytes, timeout: float = WAIT,
                  settle: float = 0.0) -> tuple[list[bytes], bool]:
    """basic.get on ``queue`` until the message whose body is ``marker`` arrives (polling on
    get-empty); returns the bodies got, and whether the marker came. With ``settle``, keeps
    polling that long after the marker, for copies arriving late (duplicate checks)."""
    bodies: list[bytes] = []
    seen = False
    until = time.monotonic() + timeout
    settle_until: float | None = None
    while True:
        now = time.monotonic()
        if (settle_until is not None and now >= settle_until) or now >= until:
            break
        message = get(peer, ch, queue)
        if message is None:
            if seen and settle_until is None:
                break
            time.sleep(0.02)
            continue
        bodies.append(message.body)
        if message.body == marker and not seen:
            seen = True
            if settle <= 0:
                break
            settle_until = time.monotonic() + settle
    return bodies, seen


def routed(peer: Peer, ch: int, queue: str, body: bytes, timeout: float = WAIT) -> bool:
    """Whether the message with this body reaches ``queue`` (within ``timeout``)."""
    return collect_until(peer, ch, queue, body, timeout)[1]


def check_instance(ctx: Context, exchange: str, clauses: tuple[str, ...]) -> None:
    """The required-instances scenario: a passive declare of the instance, then a temporary
    queue bound to it (with a routing key of its own, so no other client's message reaches it)."""
    peer, ch = with_channel(ctx)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=exchange, type="direct", passive=True))
    if not ctx.check(obs, Replies("exchange.declare-ok", channel=ch), clauses=clauses,
                     what=f"{exchange} exists (passive exchange.declare answered with declare-ok)"):
        return
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    obs = attempt(peer, ch, spec.QueueBind(queue=queue, exchange=exchange, routing_key=unique(ctx, "k"),
                                            arguments={"x-match": "all", "amqpspec": "never"}
                                            if exchange in ("amq.headers", "amq.match") else {}))
    ctx.check(obs, Replies("queue.bind-ok", channel=ch), clauses=clauses, sets_close=False,
              what=f"a temporary queue can be bound to {exchange}")
