"""2.6.5 Link errors: what follows a link error, from the client's side.

"When an error occurs at a link endpoint, the endpoint MUST be detached with appropriate error
information ... The link endpoint MUST then be destroyed. If any input (other than a detach)
related to the endpoint either via the input handle or delivery-ids be received, the session
MUST be terminated with an errant-link session-error. Since the link endpoint has been
destroyed, the peer cannot reattach, and MUST resume the link in order to restore
communication. In order to disambiguate the resume request from a pipelined re-attach the
resuming attach performative MUST contain a non-null value for its unsettled field. Receipt of
a pipelined attach MUST result in the session being terminated with an errant-link
session-error." (2.6.5/2-6).

The client's link error is the one the message-size case provokes: a message over the
max-message-size its receiving link announced. We do not answer its detach, then send either a
transfer on the link or a re-attach of it with no unsettled map (a pipelined attach, not a
resume): either way the client ends the session (or closes the connection) with
amqp:session:errant-link. A client that announces no limit, or never detaches with an error,
gives these cases no starting point (skipped).

Its detach carries the error, and of the error field of detach: "The value of the field SHOULD
contain details on the cause of the error" (2.7.7/1): a description or an info map, more than
the bare condition.

The other way round, our endpoint fails: we detach the client's receiving link with an error
(not closing it). The client need not come back; if it attaches the link again, that attach
is a resume, with a non-null unsettled map.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._client import QUICK, await_sender, describe_frames, error, named, open_conversation
from ._detach import limited_receiver, serve_until_detach

ERRANT = "amqp:session:errant-link"


def _client_link_error(ctx: Context) -> tuple[Any, Any, Any]:
    """The client's receiving link detached by the client with an error, its detach unanswered;
    returns the conversation, our sender and the client's detach (skips when the error cannot be
    provoked)."""
    p, snd, limit = limited_receiver(ctx, 2, "no link error to provoke")
    cs = p.responder.session()
    assert cs is not None
    p.responder.on("detach", lambda f: False)   # its detach stays unanswered: the link is not ours to close
    snd.send("z" * (limit + 100))
    obs, detaches = serve_until_detach(p, cs.channel, int(snd.remote_handle or 0))
    p.responder.overrides.pop("detach", None)
    if not detaches or error_condition(detaches[0].performative) is None:
        p.serve()
        p.finish()
        raise Skip(f"the client did not detach the link with an error ({describe_frames(obs.received)})")
    return p, snd, detaches[0]


def _judge_errant(ctx: Context, p: Any) -> None:
    after = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("end", "close"))
    ends = [f for f in after.received if performative_name(f) in ("end", "close")]
    ok = bool(ends) and str(error_condition(ends[0].performative)) == ERRANT
    ctx.record(ok, expected=f"end (or close) with {ERRANT}", observed=describe_frames(after.received) + f"; {after.end}")
    p.serve()
    p.finish()


@case("amqp10/2.6.5/client-ends-session-on-input-after-link-error", role="client",
      title="a transfer on a link the client detached with an error makes it end the session with amqp:session:errant-link",
      clauses=("amqp10:2.6.5/2", "amqp10:2.6.5/3"))
def errant_link(ctx: Context) -> None:
    p, snd, _ = _client_link_error(ctx)
    snd.send("after the link error")
    _judge_errant(ctx, p)


@case("amqp10/2.6.5/client-ends-session-on-pipelined-reattach", role="client",
      title="a re-attach without an unsettled map of a link the client detached with an error makes it end the session with amqp:session:errant-link",
      clauses=("amqp10:2.6.5/6",))
def pipelined_reattach(ctx: Context) -> None:
    p, snd, _ = _client_link_error(ctx)
    attach = snd.remote
    p.peer.send(AMQPFrame(snd.session.channel, spec.Attach(
        name=snd.name, handle=p.peer.free_handle(snd.session.channel), role=snd.role, source=attach.source,
        target=attach.target, initial_delivery_count=snd.delivery_count, unsettled=None)))
    _judge_errant(ctx, p)


@case("amqp10/2.6.5/client-resumes-after-partner-link-error", role="client", timeout=12.0,
      title="after we detach its receiving link with an error, a new attach of that link by the client carries a non-null unsettled map (a resume)",
      clauses=("amqp10:2.6.5/4", "amqp10:2.6.5/5"))
def resumes_after_link_error(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=8)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    name = snd.name
    p.responder.attach_fields = {"unsettled": {}}   # our answer to a resume states our (empty) unsettled map
    p.responder.detach_link(snd, closed=False, error=error("amqp:internal-error", "amqpspec fails the link endpoint"))
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "attach" and str(f.performative.name) == name)
    again = [f for f in named(obs.received, "attach", cs.channel) if str(f.performative.name) == name]
    if not again:
        p.serve(0.5)
        p.finish(0.5)
        raise Skip(f"the client did not attach the link again within {QUICK:.0f} s (it need not)")
    unsettled = again[0].performative.unsettled
    ctx.record(unsettled is not None, expected="the new attach carries an unsettled map (a resume, not a re-attach)",
               observed=again[0].summary()[:200])
    p.responder.preload("amqpspec-q", ["after the resume"])
    for sender in p.responder.senders():
        p.responder.pump(sender)
    p.serve()
    p.finish()


@case("amqp10/2.7.7/client-link-error-has-details", role="client",
      title="the error of the client's detach on a link error has details (a description or info), not the condition alone",
      clauses=("amqp10:2.7.7/1",))
def link_error_details(ctx: Context) -> None:
    p, snd, detach = _client_link_error(ctx)
    err = detach.performative.error
    ctx.record(bool(err.description) or bool(err.info), expected="a description or an info map in the error",
               observed=detach.summary()[:200])
    p.peer.send(snd.detach_frame(closed=True))   # the answer we held back
    p.serve()
    p.finish()
