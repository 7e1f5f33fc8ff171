"""Does the broker still serve a fresh, well-behaved client? The one probe behind every liveness check.

The runner asks after each case, the fuzz campaign after examples, the stateful machines after
each run: all with the same steps, so "stopped serving" means the same thing everywhere.
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Callable

from amqpspec.peer.base import PeerError
from amqpspec.target import Target
from amqpspec.transcript import Transcript

NO_ANSWER = "a fresh client got no answer at one step"


def fresh_client_problem(peer_cls: Any, unexpected: type[Exception], target: Target, timeout: float,
                         steps: Callable[[Any], None]) -> str:
    """Empty when a fresh client of ``peer_cls`` connects and gets an answer at each of ``steps``
    (called with the handshaken peer); else the problem. An ``unexpected`` error (the peer's
    no-answer error) is reported as such, any other peer error by its own text."""
    try:
        peer = peer_cls.connect(target, Transcript(), time.monotonic() + timeout)
    except PeerError as exc:
        return str(exc)
    try:
        peer.handshake(timeout=timeout)
        steps(peer)
        return ""
    except unexpected as exc:
        return f"{NO_ANSWER}: {exc}"
    except PeerError as exc:
        return str(exc)
    finally:
        peer.close(timeout=0.5)


def problem_091(target: Target, timeout: float) -> str:
    """AMQP 0-9-1: handshake, a channel, and an answer to a queue.declare (a broker can accept
    connections and still be wedged)."""
    from amqpspec.peer.amqp091 import Peer, UnexpectedReply
    from amqpspec.wire.amqp091 import spec

    def steps(peer: Any) -> None:
        ch = peer.open_channel(timeout=timeout)
        # any answer proves the broker is working, even a refusal of this declare
        peer.call(ch, spec.QueueDeclare(queue=f"amqpspec-liveness-{uuid.uuid4().hex}", exclusive=True,
                                        auto_delete=True), ("queue.declare-ok", "channel.close"), timeout)

    return fresh_client_problem(Peer, UnexpectedReply, target, timeout, steps)


def problem_10(target: Target, timeout: float) -> str:
    """AMQP 1.0: SASL and open, then a session begun and its begin answered."""
    from amqpspec.peer.amqp10 import Peer, UnexpectedReply

    return fresh_client_problem(Peer, UnexpectedReply, target, timeout, lambda peer: peer.begin(timeout=timeout))


def problem(target: Target, protocol: str, timeout: float) -> str:
    """Empty when the broker serves a fresh client of ``protocol``; else what went wrong."""
    return problem_10(target, timeout) if protocol == "1.0" else problem_091(target, timeout)


__all__ = ["NO_ANSWER", "fresh_client_problem", "problem", "problem_091", "problem_10"]
