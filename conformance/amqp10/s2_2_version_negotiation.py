"""Spec 2.2 Version Negotiation (transport).

"Prior to sending any frames on a connection, each peer MUST start by sending a protocol
header ..." and a peer that does not support the requested version MUST send the header
of a version it supports and close the socket.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify10 import HeaderThenClose, Replies
from amqpspec.wire.amqp10 import ProtocolHeader


@case("amqp10/2.2/amqp-header-answered", title="the AMQP 1.0 header is answered with the AMQP 1.0 header",
      clauses=("amqp10:2.2/1",))
def amqp_header_answered(ctx: Context) -> None:
    """Sends AMQP 0 1.0.0: the broker must answer with its own protocol header before any frame."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader.amqp())
    obs = peer.observe(3.0, stop=lambda item: isinstance(item, ProtocolHeader))
    frames = obs.frames()
    ok = bool(frames) and isinstance(frames[0], ProtocolHeader) and frames[0].well_formed
    ctx.record(ok, expected="a protocol header first", observed=obs.describe())
