"""Sessions for the case modules (2.5, 2.7.2, 2.7.8): beginning and ending through the framework's
session layer, a marker link that shows a session went on, and the reaction to a frame on a
channel with no session.

Neither broker under test answers ``echo``, so where a case must know that the broker has
processed what it sent, it sends an attach of a fresh link on the same session (a "marker"):
a session that ended discards it, a session that goes on answers it.
"""
from __future__ import annotations

import uuid
from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import WINDOW, Observation, Peer, performative_name
from amqpspec.peer.session10 import SEQ, Session, begin
from amqpspec.verify10 import ConnectionError
from amqpspec.wire.amqp10 import AMQPFrame

from ._common import REACTION_WINDOW, STATE_ERROR_TEXT, STATE_ERRORS, WAIT, address
from ._common import record_error_condition as record_condition

SERIAL = SEQ                # transfer-numbers are RFC-1982 serial numbers of 32 bits
UNATTACHED = 7              # a handle no case attaches before using it as "unattached"
UNMAPPED_TEXT = ("In the UNMAPPED state, the session endpoint is not mapped to any incoming or outgoing channels "
                 "on the connection endpoint. In this state an endpoint cannot send or receive frames.")

__all__ = ["SERIAL", "STATE_ERRORS", "STATE_ERROR_TEXT", "UNATTACHED", "UNMAPPED_TEXT", "Session", "begin_session",
           "end_session", "ends_or", "marker", "named_attach", "record_condition", "reserve_channel",
           "unattached_flow", "unmapped_reaction"]


def reserve_channel(peer: Peer, ch: int) -> None:
    """Keeps ``Peer.free_channel`` (used by probes) from handing out a channel a case chose itself."""
    peer.reserve_channel(ch)


def begin_session(peer: Peer, channel: int | None = None, *, incoming_window: int = WINDOW,
                  outgoing_window: int = WINDOW, next_outgoing_id: int = 0, handle_max: int | None = None,
                  timeout: float = WAIT) -> Session:
    """Begins a session and returns it with the channel the broker answered on."""
    return begin(peer, channel, timeout=timeout, next_outgoing_id=next_outgoing_id, incoming_window=incoming_window,
                 outgoing_window=outgoing_window, handle_max=handle_max)


def end_session(peer: Peer, s: Session, timeout: float = WAIT) -> Any:
    """Our end, then the broker's end on its channel (the end handshake, 2.5.2)."""
    return s.end(timeout=timeout)


def unattached_flow(s: Session) -> AMQPFrame:
    """A flow carrying link state for a handle no link is attached to (2.7.4: unattached-handle)."""
    return s.flow_frame(UNATTACHED, delivery_count=0, link_credit=1)


def marker(ctx: Context, peer: Peer, s: Session, handle: int) -> str:
    """Attaches a fresh sending link on ``s`` without waiting; its answer shows the session went on."""
    return s.sender(address(ctx, "mark"), name=f"marker-{uuid.uuid4().hex[:8]}", handle=handle, wait=False).name


def named_attach(item: Any, name: str) -> bool:
    return performative_name(item) == "attach" and str(item.performative.name) == name


def ends_or(s: Session, *names: str) -> Callable[[Any], bool]:
    """Stop predicate: a close, an end on the session's channel, or an attach of one of ``names``."""
    def stop(item: Any) -> bool:
        got = performative_name(item)
        return got == "close" or (got == "end" and item.channel == s.remote) or \
            any(named_attach(item, n) for n in names)
    return stop


def unmapped_reaction(ctx: Context, peer: Peer, frame: AMQPFrame, what: str) -> None:
    """Sends ``frame`` on a channel with no session and checks the connection error it calls for."""
    peer.send(frame)
    obs = peer.observe(REACTION_WINDOW, probe=True)
    ctx.check(obs, ConnectionError(), what=what, level=Level.SHOULD, guideline=UNMAPPED_TEXT)
    record_condition(ctx, obs, "close", STATE_ERRORS, STATE_ERROR_TEXT, what=f"{what}: error condition")


def on_channel(obs: Observation, channel: int) -> list[Any]:
    return [f for f in obs.frames() if isinstance(f, AMQPFrame) and f.channel == channel]
