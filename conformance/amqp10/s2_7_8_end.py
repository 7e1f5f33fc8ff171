"""Spec 2.7.8 End (transport): the error an end carries, and ends where no session is.

"If set, this field indicates that the session is being ended due to an error condition. The
value of the field SHOULD contain details on the cause of the error." An end on a channel with
no session (never begun, or already ended) fits no transition of the state machine (2.5.5):
the text names no reaction, so those checks are guidelines.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import error_condition
from amqpspec.peer.session10 import begin
from amqpspec.wire.amqp10 import AMQPFrame, Message, spec

from ._common import REACTION_WINDOW
from ._sessions import UNATTACHED, UNMAPPED_TEXT, ends_or_attach, marker_link, unmapped_reaction


@case("amqp10/2.7.8/error-has-details", title="an end with an error carries details on its cause",
      clauses=("amqp10:2.7.8/1",))
def error_has_details(ctx: Context) -> None:
    """Provokes a session error (a transfer on handle 7, which no link uses). When the broker ends the
    session with an error, passes when that error has a description or an info map beyond its condition.
    Skipped when the broker does not end the session with an error."""
    peer = ctx.connect()
    s = begin(peer)
    did = s.take_delivery_id()
    peer.send(AMQPFrame(s.ch, spec.Transfer(handle=UNATTACHED, delivery_id=did, delivery_tag=f"t{did}".encode(),
                                            message_format=0, settled=True), Message(body="to nowhere").encode()))
    name = marker_link(ctx, s, handle=0)
    obs = peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, name))
    ends = [f.performative for f in obs.performatives("end", s.remote) if error_condition(f.performative)]
    if not ends:
        ctx.skip(f"the broker did not end the session with an error: {obs.describe()}")
    err = ends[0].error
    detailed = bool(str(err.description or "").strip()) or bool(err.info)
    ctx.record(detailed, expected="an error with a description (or info) on the cause", observed=obs.describe())


@case("amqp10/2.7.8/end-on-unbegun-channel", title="an end on a channel with no session closes the connection",
      guideline=UNMAPPED_TEXT)
def end_on_unbegun_channel(ctx: Context) -> None:
    """Begins a session on channel 0, then sends an end on channel 1, where no session was begun. Passes
    when the broker closes the connection with an error (answering with an end fails); a guideline check
    prefers amqp:illegal-state or amqp:not-allowed."""
    peer = ctx.connect()
    s = begin(peer, 0)
    peer.reserve_channel(s.ch + 1)
    unmapped_reaction(ctx, peer, AMQPFrame(s.ch + 1, spec.End()), "end on channel 1")


@case("amqp10/2.7.8/end-after-end", title="an end on a session already ended closes the connection",
      guideline=UNMAPPED_TEXT)
def end_after_end(ctx: Context) -> None:
    """Begins a session, ends it (end/end), then sends a second end on its channel. Passes when the broker
    closes the connection with an error (answering with another end fails); a guideline check prefers
    amqp:illegal-state or amqp:not-allowed."""
    peer = ctx.connect()
    s = begin(peer)
    s.end()
    unmapped_reaction(ctx, peer, AMQPFrame(s.ch, spec.End()), "second end")
