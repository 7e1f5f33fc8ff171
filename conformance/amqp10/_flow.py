"""Flow control for the case modules (2.6.7, 2.7.4, 3.2, 3.4): sessions and links that count, and
queues filled before a case reads them.

The counting is the framework's (amqpspec.peer.session10): ``Sess``, ``Rcv`` and ``Snd`` are its
Session, Receiver and Sender under the names the case modules use. A filled queue comes from the
framework's ``publish`` on a connection of its own, so the case's session starts clean.
"""
from __future__ import annotations

import uuid
from typing import Any

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Peer, UnexpectedReply
from amqpspec.peer.base import DeadlineExceeded
from amqpspec.peer.session10 import (
    HALF, QUIET, SEQ, Delivery, Payload, Receiver, Sender, Session, SetupError, begin, publish, seq_add, seq_diff,
)
from amqpspec.wire.amqp10 import AMQPFrame, Message, describe

from ._common import WAIT, address

SESSION_WINDOW = 2048    # the incoming-window our flows advertise
ROUNDS = 5               # links on which a race-prone stimulus is repeated, for a stable verdict

Inconclusive = SetupError
Sess = Session
Rcv = Receiver
Snd = Sender

__all__ = ["HALF", "QUIET", "ROUNDS", "SEQ", "SESSION_WINDOW", "Inconclusive", "Payload", "Rcv", "Sess", "Snd",
           "attach_receiver", "attach_sender", "await_attach", "bodies", "body_of", "describe_frames", "filled",
           "filled_links", "open_session", "send_within_credit", "seq_add", "seq_diff"]


def open_session(ctx: Context, peer: Peer | None = None) -> Session:
    return begin(peer or ctx.connect(), timeout=5.0)


def describe_frames(frames: list[AMQPFrame], limit: int = 12) -> str:
    shown = [describe(f) for f in frames[:limit]]
    if len(frames) > limit:
        shown.append(f"... {len(frames) - limit} more")
    return "; ".join(shown) or "nothing"


def attach_receiver(s: Session, addr: str, *, name: str | None = None, wait: bool = True,
                    source: Any = None, **attach: Any) -> Receiver:
    """Attaches a receiving link from ``addr``; grants no credit."""
    if source is not None:
        attach["source"] = source
    return s.receiver(addr, name=name or f"rcv-{uuid.uuid4().hex[:8]}", wait=wait, **attach)


def attach_sender(s: Session, addr: str, *, init: int = 0, name: str | None = None, wait: bool = True,
                  target: Any = None, **attach: Any) -> Sender:
    if target is not None:
        attach["target"] = target
    return s.sender(addr, name=name or f"snd-{uuid.uuid4().hex[:8]}", initial_delivery_count=init, wait=wait,
                    **attach)


def await_attach(link: Receiver | Sender) -> None:
    """For a link attached with wait=False: waits for the broker's attach of it."""
    try:
        link.await_attach(WAIT)
    except (UnexpectedReply, DeadlineExceeded):
        pass
    if link.remote is None:
        raise Inconclusive(f"the broker did not attach link {link.name}: {describe_frames(link.s.log)}")


def send_within_credit(snd: Sender, messages: list[Any], timeout: float = 2 * WAIT) -> None:
    """Sends ``messages`` unsettled, never beyond the credit the broker granted."""
    snd.send_within_credit(messages, timeout)


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


def filled(ctx: Context, n: int, messages: list[Any] | None = None) -> tuple[Session, Receiver, str]:
    """A queue holding ``n`` messages (or ``messages``), then a session with a receiving link from it
    without credit; returns the session, the link and the queue's address."""
    addr = address(ctx)
    publish(ctx, addr, *(messages if messages is not None else bodies(ctx, n)))
    s = open_session(ctx)
    return s, attach_receiver(s, addr), addr


def filled_links(ctx: Context, rounds: int, n: int) -> tuple[Session, list[Receiver]]:
    """``rounds`` queues of ``n`` messages each, then one session with a receiving link (no credit) from each."""
    addrs = [address(ctx) for _ in range(rounds)]
    for addr in addrs:
        publish(ctx, addr, *bodies(ctx, n))
    s = open_session(ctx)
    return s, [attach_receiver(s, addr) for addr in addrs]
