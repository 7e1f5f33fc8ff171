"""3.2.1 Header: a message without one, at the client as receiver.

"If the header section is omitted the receiver MUST assume the appropriate default values (or
the meaning implied by no value being set) for the fields within the header" (3.2.1/1): a
delivery-count of 0 -- the message was never delivered before. The driver contract reports it
as `redelivered` (docs/drivers.md: the header's delivery-count is above 0). We send a message
without a header, then one whose header counts 2 earlier attempts: the application is told the
first is not redelivered. A driver that does not report the second as redelivered does not
report the header at all: there is nothing to judge (skipped).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp10 import Message, spec

from ._client import await_sender, needs_driver, open_conversation, unmet


@case("amqp10/3.2.1/client-headerless-message-defaults", role="client",
      title="a message without a header reaches the application as never delivered before (delivery-count 0 by default)",
      clauses=("amqp10:3.2.1/1",))
def headerless_defaults(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=2, credit=5)
    _, snd = await_sender(p, credit=2)
    snd.send(Message(body="no header"))
    snd.send(Message(header=spec.Header(delivery_count=2), body="counted twice"))
    p.serve()
    events = {str(e.get("body", "")): e for e in needs_driver(p).named("delivered")}
    if "no header" not in events or "counted twice" not in events:
        unmet(f"both messages given to the application (got {sorted(events)})")
    if events["counted twice"].get("redelivered") is not True:
        raise Skip("the driver does not report the header's delivery-count (a message counted twice is not "
                   "redelivered to it)")
    flag = events["no header"].get("redelivered")
    ctx.record(flag is False, expected="redelivered false for the message without a header",
               observed=f"redelivered {flag!r} (and {events['counted twice'].get('redelivered')!r} for the counted one)")
