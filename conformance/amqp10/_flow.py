"""Flow control for the case modules (2.6.7, 2.7.4, 3.2, 3.4): queues filled before a case reads them,
the messages they hold, and how a case shows what it saw.

The counting is the framework's (amqpspec.peer.session10). A filled queue comes from the framework's
``publish`` on a connection of its own, so the case's session starts clean.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context
from amqpspec.peer.session10 import Delivery, Receiver, Session, begin, publish
from amqpspec.wire.amqp10 import AMQPFrame, Message, describe

from ._common import address, link_name

ROUNDS = 5               # links on which a race-prone stimulus is repeated, for a stable verdict


def describe_frames(frames: list[AMQPFrame], limit: int = 12) -> str:
    shown = [describe(f) for f in frames[:limit]]
    if len(frames) > limit:
        shown.append(f"... {len(frames) - limit} more")
    return "; ".join(shown) or "nothing"


def bodies(ctx: Context, n: int, tag: str = "m") -> list[Message]:
    """``n`` small messages whose data bodies say their position."""
    return [Message(body=f"{tag}{i}-{ctx.rng.randrange(1 << 30)}".encode()) for i in range(n)]


def body_of(delivery: Delivery) -> bytes | None:
    try:
        msg = delivery.message()
    except Exception:  # noqa: BLE001 - an undecodable message is shown, not raised
        return None
    value = getattr(msg.body, "value", None)
    return bytes(value) if isinstance(value, (bytes, bytearray)) else None


def _receiving_session(ctx: Context, addrs: list[str]) -> tuple[Session, list[Receiver]]:
    """A new connection with one session and a receiving link (no credit) from each of ``addrs``."""
    s = begin(ctx.connect(), timeout=5.0)
    return s, [s.receiver(addr, name=link_name(ctx, "rcv")) for addr in addrs]


def filled(ctx: Context, n: int, messages: list[Any] | None = None) -> tuple[Session, Receiver, str]:
    """A queue holding ``n`` messages (or ``messages``), then a session with a receiving link from it
    without credit; returns the session, the link and the queue's address."""
    addr = address(ctx)
    publish(ctx, addr, *(messages if messages is not None else bodies(ctx, n)))
    s, (rcv,) = _receiving_session(ctx, [addr])
    return s, rcv, addr


def filled_links(ctx: Context, rounds: int, n: int) -> tuple[Session, list[Receiver]]:
    """``rounds`` queues of ``n`` messages each, then one session with a receiving link (no credit) from each."""
    addrs = [address(ctx) for _ in range(rounds)]
    for addr in addrs:
        publish(ctx, addr, *bodies(ctx, n))
    return _receiving_session(ctx, addrs)
