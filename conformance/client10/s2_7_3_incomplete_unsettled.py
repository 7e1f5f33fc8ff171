"""2.7.3 Attach: an incomplete unsettled map from the receiving node stops the client's new deliveries.

"On receipt of an incomplete unsettled map a sending endpoint MUST NOT send any new deliveries
(i.e. deliveries where resume is not set to true) to its partner" (2.7.3/13), and "if this flag
is set to true then the endpoints MUST detach and reattach at least once in order to send new
deliveries" (2.7.3/14). Our attach answering the client's sending link says
incomplete-unsettled=true (and grants credit): on that attachment the client sends no transfer
without resume=true. Whether it then gives up or detaches and reattaches (answered normally)
is its choice; transfers after its detach are not judged.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name

from ._client import await_receiver, describe_frames, open_conversation

WATCH = 2.0   # seconds with credit granted in which no new delivery may come


@case("amqp10/2.7.3/client-no-new-deliveries-on-incomplete-unsettled", role="client", timeout=10.0,
      title="answered with incomplete-unsettled=true and granted credit, the client sends no new delivery on that attachment",
      clauses=("amqp10:2.7.3/13", "amqp10:2.7.3/14"))
def incomplete_unsettled(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=2, timeout=8,
                          responder={"attach_fields": {"incomplete_unsettled": True, "unsettled": {}}})
    first, rcv = await_receiver(p)
    p.responder.attach_fields = {}   # a reattach is answered as usual
    handle = int(rcv.remote_handle or 0)
    cs = p.responder.session()
    channel = cs.channel if cs is not None else None   # the client's channel (ours may differ)
    obs = p.serve(WATCH)
    new = []
    for f in first.received + obs.received:
        if _on_link(f, handle, channel, "detach"):
            break   # the attachment is over: later transfers belong to a new one
        if _on_link(f, handle, channel, "transfer") and f.performative.delivery_id is not None \
                and not bool(f.performative.resume):
            new.append(f)
    ctx.record(not new, expected="no transfer with resume unset on the attachment answered incomplete-unsettled",
               observed=describe_frames(new) if new else "no new delivery")
    p.serve()
    p.finish()


def _on_link(f: Any, handle: int, channel: int | None, name: str) -> bool:
    return (performative_name(f) == name and (channel is None or f.channel == channel)
            and f.performative.handle is not None and int(f.performative.handle) == handle)
