"""2.5 Sessions and 2.7.2 Begin, from the client's side.

A client's begin starts a session it initiates: "The remote-channel field of a begin frame
MUST be empty for a locally initiated session" (2.5.1/2, 2.7.2/1); "it is RECOMMENDED that
implementations always assign the lowest available unused channel number" (2.5.1/1).
Session flow control binds the client as sender: the remote-incoming-window "MUST be
decremented after every transfer frame is sent, and recomputed when informed of the remote
session endpoint state" (2.5.6/2) -- with our begin's incoming-window 0 it has nothing to
spend until our flow opens the window. Ending: "When a session is explicitly ended, an end
frame is sent to announce the disassociation of the endpoint from its outgoing channel"
(2.5.2): the client answers our end with its own; a frame about a link that is not attached
makes it end the session with unattached-handle (2.7.4/2), after which "It MUST then proceed to
discard all incoming frames from the remote endpoint until receiving the remote endpoint's
corresponding end frame" (2.5.4/2) -- the session's DISCARDING state: "any incoming frames on
the session MUST be silently discarded until the peer's end frame is received" (2.5.5/6).
The two endpoints of a session have their own outgoing channels: "The partner will therefore
allocate an unused outgoing channel for the remotely initiated session" (2.5.1) -- ours need
not be the client's number, and the client works the session all the same (0.2/1).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import Receiver
from amqpspec.verify10 import SessionError

from ._client import QUICK, await_sender, check, client_closed, describe_frames, error, error_frames, named, \
    open_conversation, unmet
from amqpspec.wire.amqp10 import AMQPFrame, spec

END_ANSWERED = ("When a session is explicitly ended, an end frame is sent to announce the disassociation of the "
                "endpoint from its outgoing channel, and to carry error information when relevant.")


@case("amqp10/2.5.1/client-begin-without-remote-channel", role="client",
      title="the begin of a session the client initiates carries no remote-channel",
      clauses=("amqp10:2.5.1/2", "amqp10:2.7.2/1"))
def begin_without_remote_channel(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    begins = named(obs.received, "begin")
    if not begins:
        unmet("a begin from the client", obs)
    wrong = [f for f in begins if f.performative.remote_channel is not None]
    ctx.record(not wrong, expected="remote-channel absent in every begin the client initiates",
               observed=describe_frames(wrong) if wrong else f"{len(begins)} begin(s) without remote-channel")
    p.finish()


@case("amqp10/2.5.1/client-lowest-channel", role="client",
      title="the client's first session uses channel 0, the lowest unused",
      clauses=("amqp10:2.5.1/1",))
def lowest_channel(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    begins = named(obs.received, "begin")
    if not begins:
        unmet("a begin from the client", obs)
    ctx.record(begins[0].channel == 0, expected="the first begin on channel 0", observed=begins[0].summary()[:120])
    p.finish()


@case("amqp10/2.5.6/client-waits-for-incoming-window", role="client",
      title="with the server's incoming-window 0 the client sends no transfer until a flow opens the window",
      clauses=("amqp10:2.5.6/2",))
def waits_for_window(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, responder={"begin_fields": {"incoming_window": 0}})
    early = p.serve(QUICK * 1.5)
    sent = named(early.received, "transfer")
    cs = p.responder.session()
    if cs is None or not p.responder.ever(Receiver):
        unmet("a sending link from the client", early)
    # open the window: the client may send now
    cs.ours.incoming_window = 100
    p.peer.send(cs.ours.flow_frame())
    late = p.serve()
    ctx.record(not sent, expected="no transfer while our incoming-window is 0",
               observed=describe_frames(sent) if sent else
               f"none; after our flow opened the window: {len(named(late.received, 'transfer'))} transfer(s)")
    p.finish()


@case("amqp10/2.5.2/client-answers-end", role="client",
      title="the server's end of the client's session is answered with the client's end",
      guideline=END_ANSWERED)
def answers_end(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    p.responder.end_session(cs, error("amqp:internal-error", "amqpspec ends the session"))
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("end", "close"))
    ends = named(obs.received, "end", cs.channel)
    ctx.record(bool(ends), expected=f"end on the client's channel {cs.channel}", observed=client_closed(obs))
    p.serve()
    p.finish()


@case("amqp10/2.7.4/client-ends-session-on-unattached-handle", role="client",
      title="a flow naming a handle no link is attached to makes the client end the session with unattached-handle",
      clauses=("amqp10:2.7.4/2",))
def unattached_handle(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    p.peer.send(cs.ours.flow_frame(handle=77, delivery_count=0, link_credit=0))
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("end", "close"))
    check(ctx, obs, _SessionOrConnection())
    p.finish()


class _SessionOrConnection(SessionError):
    """end with unattached-handle; a close carrying it is as good (the client ended everything)."""

    def __init__(self) -> None:
        super().__init__("amqp:session:unattached-handle")

    def accepts(self, obs) -> bool:  # type: ignore[no-untyped-def, override]
        from amqpspec.peer.amqp10 import error_condition
        return super().accepts(obs) or any(error_condition(f.performative) == "amqp:session:unattached-handle"
                                           for f in obs.performatives("close"))

    def describe(self) -> str:
        return "end (or close) with error amqp:session:unattached-handle"


__all__ = ["AMQPFrame", "spec"]


@case("amqp10/2.5.6/client-window-of-one", role="client", timeout=12.0,
      title="with the server's incoming-window 1 the client sends one transfer, then waits for the flow that reopens it",
      clauses=("amqp10:2.5.6/2",))
def window_of_one(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=3, timeout=9,
                          responder={"begin_fields": {"incoming_window": 1}, "open_window": False})
    first = p.serve(QUICK * 1.5)
    cs = p.responder.session()
    if cs is None or not p.responder.ever(Receiver):
        unmet("a sending link from the client", first)
    assert cs is not None
    rounds = [len(named(first.received, "transfer"))]
    for _ in range(2):
        p.peer.send(cs.ours.flow_frame())   # one more transfer frame welcome
        rounds.append(len(named(p.serve(1.0).received, "transfer")))
    ctx.record(all(n <= 1 for n in rounds), expected="at most 1 transfer per opening of a window of 1",
               observed=f"transfers between our flows: {rounds}")
    cs.ours.incoming_window = 100
    p.responder.open_window = True
    p.peer.send(cs.ours.flow_frame())
    p.serve()
    p.finish()


@case("amqp10/2.5.4/client-discards-after-its-end", role="client",
      title="after ending a session with an error, the client answers nothing on it (an echo flow, a detach) until the server's end",
      clauses=("amqp10:2.5.4/2", "amqp10:2.5.5/6"))
def discards_after_its_end(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    p.responder.on("end", lambda f: False)   # its end is not answered yet: we keep talking on the session
    p.peer.send(cs.ours.flow_frame(handle=77, delivery_count=0, link_credit=0))
    first = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("end", "close"))
    ends = [f for f in named(first.received, "end", cs.channel) if f.performative.error is not None]
    if not ends:
        p.finish(0.2)
        raise Skip("the client did not end the session with an error (see the unattached-handle case)")
    p.peer.send(cs.ours.flow_frame(snd.handle, delivery_count=snd.delivery_count, link_credit=snd.link_credit,
                                   echo=True), snd.detach_frame(closed=True))
    obs = p.serve(1.0)
    answered = [f for f in obs.received if getattr(f, "channel", None) == cs.channel
                and performative_name(f) not in (None, "end")]
    ctx.record(not answered, expected="nothing on the ended session until our end",
               observed=describe_frames(answered) if answered else "nothing")
    p.peer.send(cs.ours.end_frame())
    p.responder.overrides.pop("end", None)
    p.serve()
    p.finish()


@case("amqp10/2.5.1/client-answers-server-begin-with-remote-channel", role="client",
      title="a begin the client sends to answer a session the server began names the server's channel in remote-channel",
      clauses=("amqp10:2.5.1/2", "amqp10:2.7.2/2"))
def answers_server_begin(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    await_sender(p)
    ours = p.responder.free_channel()
    answers: list = []  # type: ignore[type-arg]

    def keep(frame) -> bool:  # type: ignore[no-untyped-def]
        answers.append(frame)
        return False

    p.responder.on("begin", keep)
    p.peer.send(AMQPFrame(ours, spec.Begin(next_outgoing_id=0, incoming_window=10, outgoing_window=10)))
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) in ("begin", "close"))
    p.responder.overrides.pop("begin", None)
    if not answers:
        p.responder.preload("amqpspec-q", ["after our begin"])
        for s in p.responder.senders():
            p.responder.pump(s)
        p.serve()
        p.finish()
        raise Skip("the client did not answer the session the server began")
    got = answers[0].performative.remote_channel
    ctx.record(got is not None and int(got) == ours, expected=f"remote-channel {ours}",
               observed=answers[0].summary()[:160] + f"; {client_closed(obs)}")
    p.peer.send(AMQPFrame(ours, spec.End()))
    p.responder.preload("amqpspec-q", ["after our begin"])
    for s in p.responder.senders():
        p.responder.pump(s)
    p.serve()
    p.finish()


SERVER_CHANNEL = 7   # the channel our end of the client's session uses (the client's is 0 as a rule)


@case("amqp10/2.5.1/client-session-on-asymmetric-channels", role="client",
      title="the server answers the client's begin on its channel 7 (remote-channel naming the client's): the client's send workload runs on that session",
      clauses=("amqp10:0.2/1",),
      guideline="The partner will therefore allocate an unused outgoing channel for the remotely initiated session "
                "and indicate this by sending its own begin setting the remote-channel field to the incoming channel "
                "of the remotely initiated session.")
def asymmetric_channels(ctx: Context) -> None:
    # each endpoint of a session has its own outgoing channel (2.5.1): the client sends on its
    # channel and reads ours, whatever number we chose -- frames "process[ed] ... in accordance
    # with the ... semantics" (0.2/1) of the begin's remote-channel
    p = open_conversation(ctx, "send", count=1, timeout=4)
    if p.peer.negotiated.channel_max < SERVER_CHANNEL:
        p.finish(0.2)
        raise Skip(f"the client's channel-max ({p.peer.negotiated.channel_max}) leaves no channel {SERVER_CHANNEL}")
    p.responder.free_channel = lambda: SERVER_CHANNEL   # type: ignore[method-assign]  # our begin goes there
    obs = p.serve()
    begins = named(obs.received, "begin")
    if not begins:
        unmet("a begin from the client", obs)
    sent = named(obs.received, "transfer")
    wrong = [f for f in obs.received if getattr(f, "channel", 0) == SERVER_CHANNEL and begins[0].channel != SERVER_CHANNEL]
    ctx.record(bool(sent) and not error_frames(obs.received) and not wrong,
               expected=f"the message sent on the client's channel {begins[0].channel}, no error",
               observed=f"{len(sent)} transfer(s)" + (f", {len(wrong)} frame(s) on our channel {SERVER_CHANNEL}"
                                                       if wrong else "") + f"; {client_closed(obs)}")
    p.finish()
