"""Spec 2.1.2 Connections and Sessions (transport overview): "A single connection MAY have
multiple independent sessions active simultaneously, up to the negotiated channel limit."
A MAY: a broker offering one session only is reported as informational."""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import UnexpectedReply
from amqpspec.peer.session10 import session_of

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
    sessions = [session_of(peer, ch) for ch in channels]
    for s in sessions:
        s.incoming_window = s.outgoing_window = 64
    peer.send(*[s.begin_frame() for s in sessions])
    for _ in channels:
        try:
            peer.await_frame("begin", timeout=3.0)
        except UnexpectedReply:
            break
    answered = {s.channel for s in sessions if s.remote_begin is not None}
    ctx.record(answered == set(channels), expected=f"a begin answering each of channels {channels}",
               observed=f"answered: {sorted(answered)}")
