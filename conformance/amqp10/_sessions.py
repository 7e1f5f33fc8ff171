"""Sessions for the case modules (2.5, 2.6, 2.7): the stop predicates a case observes a session with,
a marker link that shows a session went on, and the reaction to a frame on a channel with no session.

Neither broker under test answers ``echo``, so where a case must know that the broker has
processed what it sent, it sends an attach of a fresh link on the same session (a "marker"):
a session that ended discards it, a session that goes on answers it.
"""
from __future__ import annotations

from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Peer, performative_name
from amqpspec.peer.session10 import Session
from amqpspec.verify10 import ConnectionError
from amqpspec.wire.amqp10 import AMQPFrame

from ._common import REACTION_WINDOW, STATE_ERROR_TEXT, STATE_ERRORS, address, link_name, record_error_condition

UNATTACHED = 7              # a handle no case attaches before using it as "unattached"
UNMAPPED_TEXT = ("In the UNMAPPED state, the session endpoint is not mapped to any incoming or outgoing channels "
                 "on the connection endpoint. In this state an endpoint cannot send or receive frames.")


def unattached_flow(s: Session) -> AMQPFrame:
    """A flow carrying link state for a handle no link is attached to (2.7.4: unattached-handle)."""
    return s.flow_frame(UNATTACHED, delivery_count=0, link_credit=1)


def marker_link(ctx: Context, s: Session, *, handle: int | None = None) -> str:
    """Attaches a fresh sending link on ``s`` without waiting and returns its name: the broker's
    attach of it shows the session went on."""
    return s.sender(address(ctx, "mark"), name=link_name(ctx, "marker"), handle=handle, wait=False).name


def named_attach(item: Any, name: str) -> bool:
    return performative_name(item) == "attach" and str(item.performative.name) == name


def ends(s: Session) -> Callable[[Any], bool]:
    """Stop predicate: the session ends or the connection closes."""
    return ends_or_attach(s)


def ends_or_attach(s: Session, *names: str) -> Callable[[Any], bool]:
    """Stop predicate: a close, an end on the session's channel, or the broker's attach of one of ``names``."""
    def stop(item: Any) -> bool:
        got = performative_name(item)
        return got == "close" or (got == "end" and item.channel == s.remote) or \
            any(named_attach(item, n) for n in names)
    return stop


def unmapped_reaction(ctx: Context, peer: Peer, frame: AMQPFrame, what: str) -> None:
    """Sends ``frame`` on a channel with no session and checks the connection error it calls for."""
    peer.send(frame)
    obs = peer.observe(REACTION_WINDOW, probe=True)
    ctx.check(obs, ConnectionError(), what=what, guideline=UNMAPPED_TEXT)
    record_error_condition(ctx, obs, "close", STATE_ERRORS, STATE_ERROR_TEXT, what=f"{what}: error condition")
