"""Spec 2.1.2 Connections and Sessions (transport overview): "A single connection MAY have
multiple independent sessions active simultaneously, up to the negotiated channel limit."
A MAY: a broker offering one session only is reported as informational."""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import UnexpectedReply
from amqpspec.wire.amqp10 import AMQPFrame, spec

SESSIONS = 8


@case("amqp10/2.1.2/multiple-sessions", title=f"{SESSIONS} sessions on one connection are all begun",
      clauses=("amqp10:2.1.2/2",))
def multiple_sessions(ctx: Context) -> None:
    """Sends begin on channels 0..7 in one burst (fewer if the broker's channel-max is lower):
    each must be answered by a begin naming our channel as remote-channel."""
    peer = ctx.connect()
    limit = int(peer.opened.channel_max) + 1
    channels = list(range(min(SESSIONS, limit)))
    peer.reserve_channel(channels[-1])  # the liveness probe must not reuse them
    peer.send(*[AMQPFrame(ch, spec.Begin(next_outgoing_id=0, incoming_window=64, outgoing_window=64)) for ch in channels])
    answered = set()
    for _ in channels:
        try:
            f = peer.await_frame("begin", timeout=3.0)
        except UnexpectedReply:
            break
        answered.add(int(f.performative.remote_channel))
    ctx.record(answered == set(channels), expected=f"a begin answering each of channels {channels}",
               observed=f"answered: {sorted(answered)}")
