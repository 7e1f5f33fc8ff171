"""3.5.3 Source, filter: a filter in place that the client did not ask for.

"The receiving endpoint sets its desired filter, the sending endpoint sets the filter actually
in place (including any filters defaulted at the node). The receiving endpoint MUST check that
the filter in place meets its needs and take responsibility for detaching if it does not"
(3.5.3/9). The client attaches its receiving link with no filter (it needs every message at
the address); our source answers with a selector filter defaulted at the node, which admits a
part of them only: the client detaches the link (or ends the session or closes) within 4 s
rather than receive through a filter it never asked for. A client that asked for a filter of
its own is skipped (whether ours meets its needs is its application's judgement).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp10 import Described, Symbol

from ._client import open_conversation
from ._detach import await_receiving_attach, record_left

SELECTOR = "apache.org:selector-filter:string"
NODE_FILTER = {Symbol(SELECTOR): Described(Symbol(SELECTOR), "amqpspec = 'only some'")}


@case("amqp10/3.5.3/client-detaches-on-unasked-filter", role="client",
      title="its receiving link answered with a filter in place it did not ask for, the client detaches the link",
      clauses=("amqp10:3.5.3/9",))
def unasked_filter(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=8)

    def with_filter(frame):  # type: ignore[no-untyped-def]
        cs = p.responder.session(frame.channel)
        asked = frame.performative.source
        if cs is None or not bool(frame.performative.role) or asked is None:
            return None   # the default answer
        p.responder.answer_attach(cs, frame, source=asked.replace(filter=NODE_FILTER))
        return False

    p.responder.on("attach", with_filter)
    obs, attach = await_receiving_attach(p)
    if attach.performative.source is not None and attach.performative.source.filter:
        p.serve()
        p.finish(0.5)
        raise Skip("the client asked for a filter of its own")
    record_left(ctx, p, obs, attach)
