"""What the settlement cases share (acks, rejects and nacks a client sends): the ledger of
settlements, and the judgement of a workload that processes every message it is given."""
from __future__ import annotations

from typing import Callable

from amqpspec.case import Context
from amqpspec.client.session import Play
from amqpspec.peer.amqp091 import Observation
from amqpspec.wire.amqp091 import MethodFrame

from ._client import open_conversation, unmet

__all__ = ["settled_twice", "no_turning_away", "serve_preloaded", "BODIES"]

BODIES = ["one", "two", "three"]


def serve_preloaded(ctx: Context, workload: str, count: int, ack: bool,
                    judge: Callable[[Play, Observation], None]) -> None:
    """Runs ``workload`` (consume, get) for ``count`` messages, with exactly that many waiting
    in its queue, then lets ``judge`` read what the client did with them."""
    p = open_conversation(ctx, workload, count=count, ack=ack)
    p.responder.preload("amqpspec-q", BODIES[:count])
    obs = p.serve()
    judge(p, obs)
    p.finish()


def settled_twice(acks: list[tuple[int, MethodFrame]], already: set[tuple[int, int]],
                  delivered: set[tuple[int, int]]) -> list[str]:
    """The client's settlements (ack, reject, nack, in order) that settle again a delivery
    already settled; ``already``: the deliveries settled before any of them (taken no-ack)."""
    settled = set(already)
    wrong: list[str] = []
    for ch, f in acks:
        tag, multiple = int(f.method.delivery_tag), bool(getattr(f.method, "multiple", False))
        if tag and (ch, tag) in settled:
            wrong.append(f.summary())
            continue
        if multiple:
            settled |= {(c, t) for c, t in delivered if c == ch and (tag == 0 or t <= tag)}
        else:
            settled.add((ch, tag))
    return wrong


def no_turning_away(ctx: Context, p, obs: Observation, method: str) -> None:  # type: ignore[no-untyped-def]
    """Judges a workload that processes every message it is given: no ``method`` (basic.reject
    or basic.nack) for any of them."""
    if not p.responder.delivered:
        unmet("a delivery", obs)
    turned = [f.summary() for _, f in p.responder.acks if f.method.NAME == method]
    ctx.record(not turned, expected=f"every message processed: acknowledged, none turned away with {method}",
               observed="; ".join(turned[:4]) or f"{len(p.responder.delivered)} delivered, no {method}")
