"""2.6 Links and 2.7.3 Attach, from the client's side.

A client's attach: "it is RECOMMENDED that implementations always assign the lowest
available handle" (2.7.3/4), never one past the handle-max the server's begin set ("A peer
MUST NOT attempt to attach a link using a handle value outside the range that its partner
can handle", 2.7.2/3); a sender's initial-delivery-count "MUST NOT be null if role is
sender" (2.7.3/15); "The unsettled map MUST NOT contain null valued keys" (2.7.3/11).
"a peer MUST take responsibility for verifying that the remote terminus meets its
requirements" (2.6.3/6): a node that answers a sending link with a null target has not
created the terminus the client asked for, and the client must not send into it. Closing:
"A peer closes a link by sending the detach frame with the handle for the specified link,
and the closed flag set to true. The partner will destroy the corresponding link endpoint,
and reply with its own detach frame with the closed flag set to true." (2.6.6) -- the client
answers our closing detach with its own, and then sends nothing more about that handle.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name

from ._client import QUICK, await_receiver, await_sender, client_closed, describe_frames, error, named, \
    open_conversation, unmet

DETACH_ANSWERED = ("The partner will destroy the corresponding link endpoint, and reply with its own detach frame "
                   "with the closed flag set to true.")


def _attaches(obs) -> list:  # type: ignore[no-untyped-def, type-arg]
    found = named(obs.received, "attach")
    if not found:
        unmet("an attach from the client", obs)
    return found


@case("amqp10/2.7.3/client-lowest-handle", role="client",
      title="the client's first link on a session uses handle 0, the lowest available",
      clauses=("amqp10:2.7.3/4",))
def lowest_handle(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    first = _attaches(obs)[0]
    ctx.record(int(first.performative.handle) == 0, expected="handle 0", observed=first.summary()[:140])
    p.finish()


@case("amqp10/2.7.2/client-respects-handle-max", role="client",
      title="with the server's handle-max 0 the client attaches with handle 0 only",
      clauses=("amqp10:2.7.2/3",))
def respects_handle_max(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, responder={"begin_fields": {"handle_max": 0}})
    obs = p.serve()
    wrong = [f for f in _attaches(obs) if int(f.performative.handle) > 0]
    ctx.record(not wrong, expected="no attach with a handle above 0",
               observed=describe_frames(wrong) if wrong else "every attach on handle 0")
    p.finish()


@case("amqp10/2.7.3/client-sender-initial-delivery-count", role="client",
      title="the client's sending link's attach carries initial-delivery-count",
      clauses=("amqp10:2.7.3/15",))
def initial_delivery_count(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    senders = [f for f in _attaches(obs) if not bool(f.performative.role)]
    if not senders:
        unmet("a sending link's attach from the client", obs)
    wrong = [f for f in senders if f.performative.initial_delivery_count is None]
    ctx.record(not wrong, expected="initial-delivery-count set", observed=senders[0].summary()[:160])
    p.finish()


@case("amqp10/2.7.3/client-unsettled-map-keys", role="client",
      title="no attach of the client carries an unsettled map with a null key",
      clauses=("amqp10:2.7.3/11",))
def unsettled_keys(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    bad = []
    for f in _attaches(obs):
        unsettled = f.performative.unsettled
        keys = list(unsettled.keys()) if hasattr(unsettled, "keys") else []
        if any(k is None for k in keys):
            bad.append(f)
    ctx.record(not bad, expected="no null key in any unsettled map",
               observed=describe_frames(bad) if bad else "no unsettled map with a null key")
    p.finish()


@case("amqp10/2.6.3/client-checks-terminus", role="client",
      title="answered with a null target (no terminus created), the client sends no transfer on that link",
      clauses=("amqp10:2.6.3/6",))
def checks_terminus(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, timeout=5, responder={"attach_fields": {"target": None}})
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "close", "end"))
    sent = named(obs.received, "transfer")
    if not named(obs.received, "attach"):
        unmet("an attach from the client", obs)
    ctx.record(not sent, expected="no transfer into a terminus the node did not create (a detach or close instead)",
               observed=describe_frames(sent) if sent else client_closed(obs))
    p.serve()
    p.finish()


@case("amqp10/2.6.6/client-answers-closing-detach", role="client",
      title="the server's closing detach of the client's receiving link is answered with a closing detach",
      guideline=DETACH_ANSWERED)
def answers_detach(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    theirs = snd.remote_handle
    p.responder.detach_link(snd, closed=True, error=error("amqp:resource-deleted", "amqpspec deletes the node"))
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "close", "end"))
    answered = [f for f in named(obs.received, "detach") if int(f.performative.handle) == theirs]
    ok = bool(answered) and bool(answered[0].performative.closed)
    ctx.record(ok, expected=f"detach of handle {theirs} with closed=true", observed=client_closed(obs))
    p.serve()
    p.finish()


__all__ = ["await_receiver"]
