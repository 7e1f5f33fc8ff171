"""2.7.3 Attach (and 2.7.2 Begin, handle-max): the client's attach answering a link the server
begins as receiver.

The node may begin a link itself; "the session endpoint will still create a link endpoint and
issue an attach" (2.6.3) even when it creates no terminus. Our attach takes the role receiver,
so the client's answering attach has the role sender, and of initial-delivery-count: "This MUST
NOT be null if role is sender" (2.7.3/15). Its handle is one of the client's output handles:
"The handle MUST NOT be used for other open links" (2.7.3/2) -- not the handle of the receiving
link the client already has open; "it is RECOMMENDED that implementations always assign the
lowest available handle" (2.7.3/4): handle 1, its link being on 0; and with our begin's
handle-max at 1, "A peer MUST NOT attempt to attach a link using a handle value outside the range
that its partner can handle" (2.7.2/3): 1 is the only handle it has left. A client that does not
answer our attach is skipped here (amqp10/2.6.3/client-refuses-unsolicited-link judges that).
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._client import QUICK, await_sender, open_conversation

NAME = "amqpspec-node-receives"
HANDLE = 7


def _answer(ctx: Context, responder: dict[str, Any] | None = None) -> tuple[Any, Any, int]:
    """Begins a receiving link of ours on the client's session (it has its own receiving link open);
    returns the conversation, the client's answering attach and the handle of its open link."""
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6, responder=responder)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    answers: list[Any] = []

    def keep(frame: Any) -> bool | None:
        if str(frame.performative.name) == NAME:
            answers.append(frame)
            return False
        return None

    p.responder.on("attach", keep)
    p.peer.send(AMQPFrame(cs.ours.channel, spec.Attach(name=NAME, handle=HANDLE, role=spec.Role.RECEIVER,
                                                     source=spec.Source(), target=spec.Target(address="amqpspec-in"))))
    p.serve(QUICK * 1.5, stop=lambda f: performative_name(f) == "attach" and bool(answers))
    p.responder.overrides.pop("attach", None)
    if not answers:
        p.serve(0.3)
        p.finish(0.5)
        raise Skip("the client did not answer our attach (see amqp10/2.6.3/client-refuses-unsolicited-link)")
    return p, answers[0], int(snd.remote_handle or 0)


def _end(p: Any) -> None:
    p.responder.preload("amqpspec-q", ["after the node's link"])
    for s in p.responder.senders():
        p.responder.pump(s)
    p.serve()
    p.finish()


@case("amqp10/2.7.3/client-answering-sender-initial-delivery-count", role="client",
      title="the client's attach answering our receiving link (its role: sender) carries initial-delivery-count",
      clauses=("amqp10:2.7.3/15",))
def answering_sender_idc(ctx: Context) -> None:
    p, answer, _ = _answer(ctx)
    a = answer.performative
    if bool(a.role):
        _end(p)
        raise Skip(f"the client answered with role receiver: {answer.summary()[:100]}")
    ctx.record(a.initial_delivery_count is not None, expected="initial-delivery-count set (role sender)",
               observed=answer.summary()[:200])
    _end(p)


@case("amqp10/2.7.3/client-answering-attach-handle-free", role="client",
      title="the client's attach answering our link uses a handle other than that of its receiving link still open",
      clauses=("amqp10:2.7.3/2",))
def answering_handle_free(ctx: Context) -> None:
    p, answer, open_handle = _answer(ctx)
    h = int(answer.performative.handle)
    ctx.record(h != open_handle, expected=f"a handle other than {open_handle} (its open receiving link)",
               observed=answer.summary()[:200])
    _end(p)


@case("amqp10/2.7.3/client-answering-attach-lowest-handle", role="client",
      title="the client's attach answering our link takes the lowest handle not in use (1, its receiving link being on 0)",
      clauses=("amqp10:2.7.3/4",))
def answering_lowest_handle(ctx: Context) -> None:
    p, answer, open_handle = _answer(ctx)
    lowest = 1 if open_handle == 0 else 0
    ctx.record(int(answer.performative.handle) == lowest, expected=f"handle {lowest}", observed=answer.summary()[:200])
    _end(p)


@case("amqp10/2.7.2/client-answering-attach-within-handle-max", role="client",
      title="with our begin's handle-max 1, the client's attach answering our link uses a handle no larger than 1",
      clauses=("amqp10:2.7.2/3",))
def answering_within_handle_max(ctx: Context) -> None:
    p, answer, _ = _answer(ctx, {"begin_fields": {"handle_max": 1}})
    ctx.record(int(answer.performative.handle) <= 1, expected="a handle of at most 1", observed=answer.summary()[:200])
    _end(p)
