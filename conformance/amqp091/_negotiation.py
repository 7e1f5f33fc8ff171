"""Connection negotiation driven part-way, the way a correct client would (shared by the 0-9-1 case modules).

The connection class and spec 2.2.4 check what a broker does when one step of start .. open goes
wrong: these helpers take a connection to the step before, and build the start-ok a correct
client would send, so a case can override the one field it breaks.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Peer, client_properties, sasl_plain
from amqpspec.wire.amqp091 import MethodFrame, spec


def offered_mechanisms(peer: Peer) -> list[str]:
    start = peer.negotiated.start
    raw = start.mechanisms if start is not None else b""
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw).decode("utf-8", "replace")
    return str(raw or "").split()


def start_ok(ctx: Context, peer: Peer, *, properties: dict[str, Any] | None = None, mechanism: str | None = None,
             response: bytes | None = None, locale: str = "en_US") -> MethodFrame:
    """The start-ok a correct client would send (PLAIN with the target's credentials), with overrides."""
    offered = offered_mechanisms(peer)
    mech = mechanism or ("PLAIN" if "PLAIN" in offered or not offered else offered[0])
    if response is None:
        response = sasl_plain(ctx.target.username, ctx.target.password.reveal())
    return MethodFrame(0, spec.ConnectionStartOk(client_properties() if properties is None else properties,
                                                 mech, response, locale))


def after_tune(ctx: Context) -> tuple[Peer, spec.ConnectionTune]:
    """A connection whose broker has sent connection.tune and awaits tune-ok."""
    peer = ctx.connect(handshake=False)
    n = peer.handshake(upto="tune")
    assert n.tune is not None
    return peer, n.tune
