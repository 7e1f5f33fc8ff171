"""2.4.6 Connection states: DISCARDING, from the client's side.

"The DISCARDING state is a variant of the CLOSE_SENT state where the close is triggered by an
error. In this case any incoming frames on the connection MUST be silently discarded until
the peer's close frame is received" (2.4.6/3). We make the client close with an error (a
frame whose performative has a descriptor no part of the specification defines), hold our
answering close back and meanwhile ask things of it on its open session and link (an echo
flow, a closing detach) and on channel 0 (a begin): it must answer none of them -- nothing
after its close, until ours.
"""
from __future__ import annotations

import struct

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, spec

from ._client import QUICK, after, await_sender, describe_frames, named, open_conversation

#: an AMQP frame on channel 0 whose body is described by 0x7f (no performative) over an empty list
UNKNOWN = (lambda body: struct.pack(">IBBH", 8 + len(body), 2, 0, 0) + body)(b"\x00\x53\x7f\x45")


@case("amqp10/2.4.6/client-discards-after-error-close", role="client",
      title="after closing the connection with an error, the client answers nothing (an echo flow, a detach, a begin) until the server's close",
      clauses=("amqp10:2.4.6/3",))
def discards_after_error_close(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    p.responder.on("close", lambda f: False)   # its close is not answered yet: we keep talking
    p.peer.send(UNKNOWN)
    first = p.serve(QUICK * 2, stop=lambda f: performative_name(f) == "close")
    closes = named(first.received, "close")
    if not closes or error_condition(closes[0].performative) is None:
        p.finish(0.2)
        raise Skip("the client did not close the connection with an error on an unknown performative "
                   f"(observed {describe_frames(first.received)})")
    p.peer.send(cs.ours.flow_frame(snd.handle, delivery_count=snd.delivery_count, link_credit=snd.link_credit,
                                   echo=True), snd.detach_frame(closed=True),
                AMQPFrame(0, spec.Begin(remote_channel=None, next_outgoing_id=0, incoming_window=10,
                                        outgoing_window=10)), EmptyFrame(0))
    obs = p.serve(1.5)
    # answers are performatives; an empty frame after the close breaks 2.4.3/2 (another case's rule)
    answered = [f for f in after(first.received, lambda f: performative_name(f) == "close") + obs.received
                if performative_name(f) is not None]
    ctx.record(not answered, expected="nothing after the client's close until ours",
               observed=describe_frames(answered) if answered else "nothing")
    p.responder.overrides.pop("close", None)
    p.peer.send(AMQPFrame(0, spec.Close()))
    p.finish()
