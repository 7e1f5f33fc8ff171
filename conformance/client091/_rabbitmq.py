"""What the cases of RabbitMQ's server-sent extensions share: the capability a client must
announce before the server may send it the method, and a connection blocked from its open
(with the check that nothing is published while it is)."""
from __future__ import annotations

import time

from amqpspec.case import Context, Skip
from amqpspec.client.session import Play, play
from amqpspec.wire.amqp091 import MethodFrame, spec, to_plain

__all__ = ["announced", "blocked_at_open", "holds_while_blocked"]


def announced(p: Play, capability: str) -> None:
    """Skips the case (after letting the client go) unless the client's start-ok announced
    ``capabilities.<capability>``: a server must not send an unannounced extension method."""
    props = to_plain(p.peer.negotiated.start_ok.client_properties or {})
    caps = props.get("capabilities") if isinstance(props, dict) else None
    if not (isinstance(caps, dict) and caps.get(capability)):
        p.finish(0.3)
        raise Skip(f"the client does not announce capabilities.{capability}: the server must not send it")


def blocked_at_open(ctx: Context, workload: str, count: int) -> Play:
    """The client connected and told, with its open-ok, that the connection is blocked (skipped
    unless it announced ``capabilities.connection.blocked``)."""
    p = play(ctx, workload, count=count, body="blocked")
    p.handshake(upto="tune-ok")
    announced(p, "connection.blocked")
    # blocked right behind open-ok: the client reads it before it can publish anything
    p.handshake(open_ok=MethodFrame(0, spec.ConnectionOpenOk()).encode()
                + MethodFrame(0, spec.ConnectionBlocked("amqpspec: low on resources")).encode())
    return p


def holds_while_blocked(ctx: Context, workload: str, count: int, hold: float, guideline: str, *,
                        timed: bool = False) -> None:
    """Blocked at open, the client publishes nothing in ``hold`` s; then it is unblocked and the
    workload ends. ``timed``: publishes seen are reported with the time since the block."""
    p = blocked_at_open(ctx, workload, count)
    blocked_at = time.monotonic()
    during = p.serve(hold)
    published = during.methods("basic.publish")
    p.peer.send(MethodFrame(0, spec.ConnectionUnblocked()))
    p.serve()
    when = (f"within {time.monotonic() - blocked_at:.1f} s of connection.blocked" if timed
            else "while the connection was blocked")
    ctx.record(not published, expected=f"no basic.publish in the {hold:g} s the connection is blocked",
               observed=f"{len(published)} basic.publish {when}" if published else "nothing published while blocked",
               guideline=guideline)
    p.finish()
