"""2.5.4 Ending a session the client cannot process input on.

"When a session is unable to process input, it MUST indicate this by issuing an END with an
appropriate error indicating the cause of the problem" (2.5.4/1); end's error field says the
same in its own words: "The value of the field SHOULD contain details on the cause of the
error" (2.7.8/1). The input here is a transfer naming handle 77, which no link of the
client's session is attached to: the transfer cannot be delivered anywhere, and the
definitions give the cause its name, amqp:session:unattached-handle ("An attempt was made to
use a handle that isn't attached"), but the sentence asks only for "an appropriate error":
any condition the end carries is accepted, and shown. What the sentence does ask is an END:
a client that closes the whole connection instead, or drops it, or carries on as if nothing
came, has not indicated the session's trouble the way it MUST. (The flow on an unattached
handle is the case 2.7.4/client-ends-session-on-unattached-handle, which accepts a close
carrying unattached-handle.)
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.wire.amqp10 import AMQPFrame, Message, spec

from ._client import QUICK, await_sender, client_closed, named, open_conversation

UNATTACHED = "amqp:session:unattached-handle"
HANDLE = 77


@case("amqp10/2.5.4/client-ends-session-on-unattached-transfer", role="client",
      title="a transfer naming a handle no link is attached to makes the client end the session with an error (unattached-handle names the cause)",
      clauses=("amqp10:2.5.4/1", "amqp10:2.7.8/1"))
def ends_on_unattached_transfer(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    s = cs.ours
    p.peer.send(AMQPFrame(s.channel, spec.Transfer(handle=HANDLE, delivery_id=0, delivery_tag=b"amqpspec-stray",
                                                   message_format=0, settled=True),
                          Message(body="for no link").encode()))
    s.next_outgoing_id = (s.next_outgoing_id + 1) % (1 << 32)   # the transfer took a transfer-id all the same
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("end", "close"))
    ended = [f for f in named(obs.received, "end", cs.channel) if error_condition(f.performative) is not None]
    ctx.record(bool(ended), expected=f"end on channel {cs.channel} with an error (such as {UNATTACHED})",
               observed=ended[0].summary()[:160] if ended else client_closed(obs))
    p.finish()
