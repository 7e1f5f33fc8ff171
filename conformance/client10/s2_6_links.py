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
answers our closing detach with its own (the prose has no keyword: informational).
A link the server begins: "if the application chooses not to create a terminus, the session
endpoint will still create a link endpoint and issue an attach indicating that the link
endpoint has no associated local terminus. In this case, the session endpoint MUST
immediately detach the newly created link endpoint" (2.6.3/2). Such an attach on a handle
already in use "MUST be responded to with an immediate close carrying a handle-in-use
session-error" (2.7.3/3); one with a handle above the client's handle-max makes it "close the
connection with the framing-error error-code" (2.7.2/4).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.verify10 import ConnectionError as CloseWith
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._client import QUICK, await_receiver, await_sender, check, client_closed, describe_frames, error, named, \
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



@case("amqp10/2.6.6/client-answers-closing-detach-of-sender", role="client",
      title="the server's closing detach of the client's sending link (before any credit) is answered with a closing detach",
      guideline=DETACH_ANSWERED)
def answers_detach_sender(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, timeout=6, responder={"credit": 0})
    _, rcv = await_receiver(p)
    theirs = rcv.remote_handle
    p.responder.detach_link(rcv, closed=True, error=error("amqp:resource-deleted", "amqpspec deletes the node"))
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "close", "end"))
    answered = [f for f in named(obs.received, "detach") if int(f.performative.handle) == theirs]
    ok = bool(answered) and bool(answered[0].performative.closed)
    ctx.record(ok, expected=f"detach of handle {theirs} with closed=true", observed=client_closed(obs))
    p.serve()
    p.finish()


def _unsolicited(p, handle: int, name: str = "amqpspec-unsolicited"):  # type: ignore[no-untyped-def]
    """An attach the node begins on the client's session: a sending link of ours from a node the
    client never asked for; the client's answer is kept, not taken for an attach of its own."""
    cs = p.responder.session()
    answers: list = []  # type: ignore[type-arg]

    def keep(frame) -> bool | None:  # type: ignore[no-untyped-def]
        if str(frame.performative.name) == name:
            answers.append(frame)
            return False
        return None

    p.responder.on("attach", keep)
    p.peer.send(AMQPFrame(cs.ours.channel, spec.Attach(name=name, handle=handle, role=spec.Role.SENDER,
                                                     source=spec.Source(address="amqpspec-extra"),
                                                     target=spec.Target(), initial_delivery_count=0)))
    return cs, answers


@case("amqp10/2.6.3/client-refuses-unsolicited-link", role="client",
      title="a link the server attaches unasked is answered with an attach, and detached at once if the client made no terminus",
      clauses=("amqp10:2.6.3/2",))
def unsolicited_link(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    await_sender(p)
    cs, answers = _unsolicited(p, handle=7)
    obs = p.serve(QUICK * 1.5, stop=lambda f: performative_name(f) == "detach" and answers
                  and int(f.performative.handle) == int(answers[0].performative.handle))
    if not answers:
        ctx.record(False, expected="an attach answering ours (2.6.3: the session endpoint creates a link endpoint)",
                   observed=client_closed(obs))
    else:
        a = answers[0].performative
        no_terminus = a.target is None
        detached = [f for f in named(obs.received, "detach") if int(f.performative.handle) == int(a.handle)]
        ctx.record(not no_terminus or bool(detached),
                   expected="a detach right after an attach without a local terminus",
                   observed=f"{answers[0].summary()[:120]}; " + (detached[0].summary() if detached else "no detach"))
    p.responder.overrides.pop("attach", None)
    p.responder.preload("amqpspec-q", ["after the unsolicited link"])
    for s in p.responder.senders():
        p.responder.pump(s)
    p.serve()
    p.finish()


@case("amqp10/2.7.3/client-closes-on-handle-in-use", role="client",
      title="an attach from the server on a handle already in use makes the client close with handle-in-use",
      clauses=("amqp10:2.7.3/3",))
def handle_in_use(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    _unsolicited(p, handle=snd.handle, name="amqpspec-same-handle")
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("close", "end"))
    errs = [f for f in obs.received if performative_name(f) in ("close", "end") and f.performative.error is not None]
    cond = str(errs[0].performative.error.condition) if errs else None
    ctx.record(cond == "amqp:session:handle-in-use",
               expected="close (or end) carrying amqp:session:handle-in-use", observed=client_closed(obs))
    p.finish()


@case("amqp10/2.7.2/client-closes-on-handle-beyond-max", role="client",
      title="an attach from the server with a handle above the client's handle-max makes it close with framing-error",
      clauses=("amqp10:2.7.2/4",))
def handle_beyond(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    await_sender(p)
    cs = p.responder.session()
    hmax = cs.begin.handle_max if cs is not None else None
    if hmax is None or int(hmax) >= 0xFFFFFFFF:
        p.finish(0.2)
        raise Skip("the client's handle-max is the largest handle: none lies beyond it")
    _unsolicited(p, handle=int(hmax) + 1, name="amqpspec-beyond")
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) == "close")
    check(ctx, obs, CloseWith("amqp:connection:framing-error"))
    p.finish()
