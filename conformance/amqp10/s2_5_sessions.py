"""Spec 2.5 Sessions (transport): establishing, ending, errors, states and session flow control.

A session pairs one of our outgoing channels with one of the broker's. The broker's begin
names our channel in remote-channel (2.5.1); an end is answered by an end (2.5.2); a session
that cannot process input ends with an error and then discards what it receives until our
end (2.5.4); and the incoming-window counts transfer *frames*, not messages (2.5.6).

The broker answers on its own outgoing channel, which need not be the number we used, so
every expectation here names the broker's channel of the session (``Session.remote``).
Sessions are the framework's (amqpspec.peer.session10); where a case must know that the broker
has processed what it sent, it attaches a "marker" link (see _sessions).
"""
from __future__ import annotations

import uuid
from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import WINDOW, Observation, error_condition, performative_name
from amqpspec.peer.session10 import SEQ, Receiver, Sender, Session, begin, begin_frame, publish
from amqpspec.verify10 import ConnectionError, SessionError, StaysOpen
from amqpspec.wire.amqp10 import AMQPFrame, Message, describe, spec

from ._common import REACTION_WINDOW, WAIT, address, record_error_condition
from ._sessions import (
    UNATTACHED, UNMAPPED_TEXT, ends_or_attach, marker_link, named_attach, unattached_flow, unmapped_reaction,
)

UNATTACHED_TEXT = ("amqp:session:unattached-handle: A frame (other than attach) was received referencing a handle "
                   "which is not currently in use of an attached link.")
END_TEXT = ("When a session is explicitly ended, an end frame is sent to announce the disassociation of the "
            "endpoint from its outgoing channel, and to carry error information when relevant.")


# ---------------------------------------------------------------------------------------- 2.5
@case("amqp10/2.5/link-on-one-session-only", title="the same link is not attached on two sessions at once",
      clauses=("amqp10:2.5/1",))
def link_on_one_session_only(ctx: Context) -> None:
    """Attaches a sending link, then attaches the same link (same name, same role, same containers) on a
    second session of the connection. Passes when the broker detaches one of the two attachments (a
    refused second attach, or the first one detached as stolen); fails when both stay attached."""
    peer = ctx.connect()
    a, b = begin(peer), begin(peer)
    addr = address(ctx)
    name = f"link-{uuid.uuid4().hex[:8]}"
    a.sender(addr, name=name)
    b.sender(addr, name=name, wait=False)
    stop_marker = marker_link(ctx, b, handle=1)
    obs = peer.observe(REACTION_WINDOW, stop=lambda f: performative_name(f) in ("detach", "close", "end")
                       or named_attach(f, stop_marker))
    if any(named_attach(f, stop_marker) for f in obs.performatives("attach")):
        obs2 = peer.observe(0.5, stop=lambda f: performative_name(f) in ("detach", "close", "end"))
        obs.received += obs2.received
    detached = [f for f in obs.performatives("detach") if f.channel in (a.remote, b.remote)]
    ended = [f for f in obs.performatives("end") if f.channel in (a.remote, b.remote)]
    ok = bool(detached or ended or obs.close is not None or obs.closed)
    ctx.record(ok, expected="one of the two attachments of the link detached (or its session ended)",
               observed=obs.describe())


# ---------------------------------------------------------------------------------------- 2.5.1
@case("amqp10/2.5.1/remote-channel-names-our-channel",
      title="the broker's begin carries remote-channel set to the channel of our begin",
      clauses=("amqp10:2.5.1/2", "amqp10:2.7.2/2"))
def remote_channel_names_our_channel(ctx: Context) -> None:
    """Begins three sessions on channels chosen at random (within the broker's channel-max), in one
    batch. Passes when each is answered by exactly one begin whose remote-channel is that channel, on
    three distinct outgoing channels of the broker."""
    peer = ctx.connect()
    top = min(peer.opened.channel_max, 1000)
    ours = ctx.rng.sample(range(1, top + 1), 3) if top >= 3 else list(range(top + 1))
    for ch in ours:
        peer.reserve_channel(ch)
        peer.send(begin_frame(ch))
    got: list[AMQPFrame] = []

    def enough(item: Any) -> bool:
        if performative_name(item) == "begin":
            got.append(item)
        return len(got) >= len(ours)
    obs = peer.observe(WAIT, stop=enough)
    answered = sorted(int(f.performative.remote_channel) for f in got if f.performative.remote_channel is not None)
    ok = answered == sorted(ours) and len({f.channel for f in got}) == len(ours)
    ctx.record(ok, expected=f"one begin for each of channels {sorted(ours)}, remote-channel naming it, "
               f"on distinct channels", observed=obs.describe())


@case("amqp10/2.5.1/lowest-unused-channel", title="the broker assigns the lowest unused outgoing channel to a session",
      clauses=("amqp10:2.5.1/1",))
def lowest_unused_channel(ctx: Context) -> None:
    """Begins three sessions on channels chosen at random, ends the second, begins a fourth. Passes when
    the broker answers them on its channels 0, 1, 2, then 1 again (the lowest unused one each time)."""
    peer = ctx.connect()
    top = min(peer.opened.channel_max, 1000)
    if top < 4:
        ctx.skip(f"the broker's channel-max {top} leaves no room to choose channels")
    ours = ctx.rng.sample(range(4, top + 1), 3)
    sessions = [begin(peer, ch) for ch in ours]
    sessions[1].end()
    again = begin(peer, ctx.rng.choice([c for c in range(1, 4)]))
    used = [s.remote for s in sessions] + [again.remote]
    ctx.record(used == [0, 1, 2, 1], expected="broker channels 0, 1, 2, then 1 after the session on 1 ended",
               observed=f"broker channels {used} for our channels {ours + [again.ch]}")


@case("amqp10/2.5.1/outgoing-channel-within-our-channel-max",
      title="the broker uses no outgoing channel above the channel-max of our open",
      clauses=("amqp10:2.7.1/7",))
def outgoing_channel_within_our_channel_max(ctx: Context) -> None:
    """Opens with channel-max 1 and begins sessions on channels 0, 1 and 2 (2 is within the broker's range
    unless the broker, too, announced channel-max 1 or less). Passes when the broker sends nothing on a
    channel above 1: it answers two begins and may refuse the third in any way (a close -- a
    framing-error when 2 is outside its own range -- or no answer); fails on any frame on channel > 1."""
    peer = ctx.connect(channel_max=1)
    first = begin(peer, 0)
    begin(peer, 1)
    peer.send(begin_frame(2))
    name = marker_link(ctx, first, handle=0)
    high = lambda f: (isinstance(f, AMQPFrame) and f.channel > 1) or performative_name(f) == "close"  # noqa: E731
    obs = peer.observe(WAIT, stop=lambda f: high(f) or named_attach(f, name))
    if obs.end == "stopped" and not high(obs.received[-1]):
        obs.received += peer.observe(0.5, stop=high).received   # the third begin may be answered late
    above = [f for f in obs.frames() if isinstance(f, AMQPFrame) and f.channel > 1]
    ctx.record(not above, expected="no frame from the broker on a channel above 1",
               observed=obs.describe() + f" (begins answered before: on channel {first.remote} and another)")


# ---------------------------------------------------------------------------------------- 2.5.2
@case("amqp10/2.5.2/end-answered-with-end", title="an end is answered by an end on the broker's channel",
      guideline=END_TEXT)
def end_answered_with_end(ctx: Context) -> None:
    """Begins a session and ends it. Passes when the broker answers with an end on the channel it began
    the session on, without closing the connection."""
    peer = ctx.connect()
    s = begin(peer)
    peer.send(AMQPFrame(s.ch, spec.End()))
    obs = peer.observe(WAIT, stop=lambda f: performative_name(f) in ("end", "close"))
    ok = bool(obs.performatives("end", s.remote)) and obs.close is None and not obs.closed
    ctx.record(ok, expected=f"end on channel {s.remote}", observed=obs.describe())


@case("amqp10/2.5.2/end-with-error-answered", title="an end carrying an error is answered by an end",
      guideline=END_TEXT)
def end_with_error_answered(ctx: Context) -> None:
    """Begins a session and ends it with an error (amqp:internal-error). Passes when the broker answers
    with an end on its channel of the session (what it does with the connection afterwards is not
    checked here)."""
    peer = ctx.connect()
    s = begin(peer)
    peer.send(AMQPFrame(s.ch, spec.End(error=spec.Error(condition=spec.AmqpError.INTERNAL_ERROR,
                                                         description="amqpspec ends this session with an error"))))
    obs = peer.observe(WAIT, stop=lambda f: performative_name(f) in ("end", "close"))
    ctx.record(bool(obs.performatives("end", s.remote)), expected=f"end on channel {s.remote}",
               observed=obs.describe())


@case("amqp10/2.5.2/channel-reusable-after-end", title="after the end handshake the channel begins a new session",
      guideline="Sessions are established by creating a session endpoint, assigning it to an unused channel number, "
                "and sending a begin announcing the association of the session endpoint with the outgoing channel.")
def channel_reusable_after_end(ctx: Context) -> None:
    """Begins a session, attaches a link with handle 0, ends the session (end/end), begins a new session
    on the same channel and attaches another link with handle 0. Passes when the new begin and the new
    attach are answered (the old session and its handle are gone) and nothing ends with an error."""
    peer = ctx.connect()
    s = begin(peer)
    s.sender(address(ctx), name=f"first-{uuid.uuid4().hex[:8]}")
    s.end()
    again = begin(peer, s.ch, wait=False)   # a new session endpoint on the same channel, numbers afresh
    name = f"again-{uuid.uuid4().hex[:8]}"
    again.sender(address(ctx), name=name, handle=0, wait=False)
    obs = peer.observe(WAIT, stop=lambda f: named_attach(f, name) or performative_name(f) in ("close", "end"))
    began = [f for f in obs.performatives("begin") if f.performative.remote_channel == s.ch]
    attached = [f for f in obs.performatives("attach") if str(f.performative.name) == name]
    errors = [f for f in obs.performatives() if error_condition(getattr(f, "performative", None))]
    ok = bool(began) and bool(attached) and not errors and obs.close is None
    ctx.record(ok, expected=f"begin with remote-channel {s.ch}, then attach of {name}, no error",
               observed=obs.describe())


@case("amqp10/2.5.2/flow-after-end", title="a flow on a channel whose session has ended closes the connection",
      guideline=UNMAPPED_TEXT)
def flow_after_end(ctx: Context) -> None:
    """Begins and ends a session (end/end), then sends a flow on its channel, where no session exists any
    more. Passes when the broker closes the connection with an error; a guideline check prefers
    amqp:illegal-state or amqp:not-allowed."""
    peer = ctx.connect()
    s = begin(peer)
    s.end()
    unmapped_reaction(ctx, peer, s.flow_frame(next_incoming_id=0), "flow on an ended session")


# ---------------------------------------------------------------------------------------- 2.5.3
@case("amqp10/2.5.3/simultaneous-end", title="crossing ends finish the session without a further end",
      guideline="If this happens, it will appear to each peer as though their partner's spontaneously initiated "
                "end frame is actually an answer to the peers initial end frame.")
def simultaneous_end(ctx: Context) -> None:
    """Sends, in one batch, a flow for an unattached handle (which makes the broker end the session with
    an error) and our end, so the two ends cross. Passes when the broker sends exactly one end on the
    session's channel, keeps the connection open, and a new session begins on the same channel.
    Skipped when the broker does not end the session itself (nothing crosses then)."""
    peer = ctx.connect()
    s = begin(peer)
    peer.send(unattached_flow(s), s.end_frame())
    obs = peer.observe(REACTION_WINDOW, stop=ends_or_attach(s))
    ends = obs.performatives("end", s.remote)
    if obs.close is not None or obs.closed:
        ctx.skip(f"the broker closed the connection instead of ending the session: {obs.describe()}")
    if not ends or not error_condition(ends[0].performative):
        ctx.skip(f"the broker did not end the session with an error on its own: {obs.describe()}")
    peer.send(begin_frame(s.ch))
    after = peer.observe(WAIT, stop=lambda f: performative_name(f) in ("begin", "close"))
    extra = after.performatives("end", s.remote)
    began = [f for f in after.performatives("begin") if f.performative.remote_channel == s.ch]
    ok = not extra and bool(began) and after.close is None and not after.closed
    ctx.record(ok, expected=f"no second end on channel {s.remote}; a new begin on channel {s.ch} answered",
               observed=f"{obs.describe()} | then: {after.describe()}")


# ---------------------------------------------------------------------------------------- 2.5.4
@case("amqp10/2.5.4/handle-in-use", title="an attach on a handle in use ends the session with handle-in-use",
      clauses=("amqp10:2.7.3/3", "amqp10:2.5.4/1"))
def handle_in_use(ctx: Context) -> None:
    """Attaches a sending link on handle 0, then attaches a second link (another name) on handle 0 too.
    Passes when the broker ends the session, or closes the connection, with amqp:session:handle-in-use
    (2.7.3 says "an immediate close carrying a handle-in-use session-error"; 2.5.4 an END); fails when
    it attaches the second link."""
    peer = ctx.connect()
    s = begin(peer)
    first = s.sender(address(ctx), name=f"snd-{uuid.uuid4().hex[:8]}")
    name = f"second-{uuid.uuid4().hex[:8]}"
    s.sender(address(ctx), name=name, handle=first.handle, wait=False)
    obs = peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, name))
    cond = str(spec.SessionError.HANDLE_IN_USE)
    ctx.check(obs, SessionError(cond, channel=s.remote) | ConnectionError(cond))


def _unattached_frame(ctx: Context, frame: Callable[[Session], AMQPFrame], what: str) -> None:
    """A frame (other than attach) on an unattached handle: the session ends with an error (2.5.4, MUST),
    preferably amqp:session:unattached-handle (its definition, a guideline)."""
    peer = ctx.connect()
    s = begin(peer)
    peer.send(frame(s))
    name = marker_link(ctx, s, handle=0)
    obs = peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, name))
    ctx.check(obs, SessionError(channel=s.remote), what=f"{what}: the session ends with an error")
    record_error_condition(ctx, obs, "end", (str(spec.SessionError.UNATTACHED_HANDLE),), UNATTACHED_TEXT,
                           what=f"{what}: error condition", channel=s.remote)


@case("amqp10/2.5.4/unattached-handle-transfer", title="a transfer on an unattached handle ends the session with an error",
      clauses=("amqp10:2.5.4/1",))
def unattached_handle_transfer(ctx: Context) -> None:
    """Sends a transfer (a small message) on handle 7, which no link uses, then an attach marker. Passes
    when the broker ends the session with an error; a guideline check prefers
    amqp:session:unattached-handle. Closing the connection instead fails (2.5.4 says END)."""
    payload = Message(body="to nowhere").encode()
    _unattached_frame(ctx, lambda s: AMQPFrame(s.ch, spec.Transfer(handle=UNATTACHED, delivery_id=0, delivery_tag=b"t0",
                                                                   message_format=0, settled=True), payload),
                      "transfer on handle 7")


@case("amqp10/2.5.4/unattached-handle-detach", title="a detach of an unattached handle ends the session with an error",
      clauses=("amqp10:2.5.4/1",))
def unattached_handle_detach(ctx: Context) -> None:
    """Sends a detach (closed) of handle 7, which no link uses, then an attach marker. Passes when the
    broker ends the session with an error; a guideline check prefers amqp:session:unattached-handle.
    Answering with a detach of handle 7, or closing the connection, fails."""
    _unattached_frame(ctx, lambda s: AMQPFrame(s.ch, spec.Detach(handle=UNATTACHED, closed=True)), "detach of handle 7")


@case("amqp10/2.5.4/discard-until-end", title="after ending a session with an error the broker discards its input until our end",
      clauses=("amqp10:2.5.4/2", "amqp10:2.5.5/6"))
def discard_until_end(ctx: Context) -> None:
    """Provokes a session error (a flow for an unattached handle) and sends, behind it and again after the
    broker's end arrived, an attach and another such flow on the session. Passes when the broker sends
    nothing more on the session and no close (the frames are silently discarded), and, once our end is
    sent, answers a new begin on that channel. Skipped when the broker does not end the session."""
    peer = ctx.connect()
    s = begin(peer)
    addr = address(ctx)
    peer.send(unattached_flow(s))
    early = marker_link(ctx, s, handle=0)
    obs = peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, early))
    ends = obs.performatives("end", s.remote)
    if not ends or not error_condition(ends[0].performative):
        ctx.skip(f"the broker did not end the session with an error (see amqp10/2.7.4/unattached-handle): "
                 f"{obs.describe()}")
    late = f"late-{uuid.uuid4().hex[:8]}"
    peer.send(unattached_flow(s))
    s.sender(addr, name=late, handle=1, wait=False)
    after = peer.observe(REACTION_WINDOW, probe=True)
    leaked = [f for f in obs.frames() + after.frames()
              if isinstance(f, AMQPFrame) and f.channel == s.remote and f is not ends[0]]
    ok = not leaked and after.close is None and not after.closed and bool(after.probe_ok)
    ctx.record(ok, expected=f"nothing more on channel {s.remote} after its end (attach and flow discarded), "
               "no close, the connection serving other sessions",
               observed=f"{obs.describe()} | then: {after.describe()}", what="frames after the error end are discarded")
    peer.send(s.end_frame(), begin_frame(s.ch))
    last = peer.observe(WAIT, stop=lambda f: (performative_name(f) == "begin" and f.performative.remote_channel == s.ch)
                        or performative_name(f) == "close")
    began = [f for f in last.performatives("begin") if f.performative.remote_channel == s.ch]
    ctx.record(bool(began) and last.close is None, expected=f"our end stops the discarding: a begin on channel {s.ch} "
               "is answered", observed=last.describe(), what="discarding ends with our end", clauses=("amqp10:2.5.4/2",))


# ---------------------------------------------------------------------------------------- 2.5.5
@case("amqp10/2.5.5/frames-pipelined-after-begin", title="frames sent right behind a begin, before the broker's begin, are processed",
      clauses=("amqp10:2.5.5/1",))
def frames_pipelined_after_begin(ctx: Context) -> None:
    """Sends begin and an attach in one batch, before the broker's begin arrives (we are in BEGIN SENT,
    where an endpoint MAY send frames). Passes when the broker answers the begin and then the attach."""
    peer = ctx.connect()
    s = begin(peer, wait=False)
    name = f"early-{uuid.uuid4().hex[:8]}"
    s.sender(address(ctx), name=name, handle=0, wait=False)
    obs = peer.observe(WAIT, stop=lambda f: named_attach(f, name) or performative_name(f) in ("close", "end", "detach"))
    ok = bool(obs.performatives("begin")) and any(named_attach(f, name) for f in obs.performatives("attach")) \
        and obs.close is None and not obs.performatives("end")
    ctx.record(ok, expected=f"begin, then attach of {name}", observed=obs.describe())


@case("amqp10/2.5.5/attach-on-unbegun-channel", title="an attach on a channel with no session closes the connection",
      guideline=UNMAPPED_TEXT)
def attach_on_unbegun_channel(ctx: Context) -> None:
    """Begins a session on channel 0, then sends an attach on channel 1, where no session was begun.
    Passes when the broker closes the connection with an error; a guideline check prefers
    amqp:illegal-state or amqp:not-allowed."""
    peer = ctx.connect()
    s = begin(peer, 0)
    peer.reserve_channel(s.ch + 1)
    nowhere = Sender(Session(peer, s.ch + 1), f"nowhere-{uuid.uuid4().hex[:8]}", 0)   # a session never begun
    frame = nowhere.attach_frame(source=spec.Source(), target=spec.Target(address=address(ctx)))
    unmapped_reaction(ctx, peer, frame, "attach on channel 1")


# ---------------------------------------------------------------------------------------- 2.5.6
def _transfers(obs: Observation, channel: int) -> list[AMQPFrame]:
    return [f for f in obs.performatives("transfer", channel)]  # type: ignore[misc]


def _last_transfer(channel: int) -> Callable[[Any], bool]:
    return lambda f: (performative_name(f) == "transfer" and f.channel == channel and not f.performative.more) \
        or performative_name(f) in ("close", "end", "detach")


def _queue_large_message(ctx: Context, size: int) -> tuple[str, bytes]:
    """Puts one message with a body of ``size`` octets into a fresh node (framework ``publish``, on a
    connection of its own); returns the address and the body."""
    addr = address(ctx)
    body = bytes(ctx.rng.getrandbits(8) for _ in range(size))
    publish(ctx, addr, Message(body=body))
    return addr, body


def _same_body(data: bytes, body: bytes) -> bool:
    """The message received carries ``body`` (a broker may add header or annotation sections)."""
    try:
        return Message.decode(data).body == spec.Data(body)
    except Exception:  # noqa: BLE001 - an undecodable message is simply not the one sent
        return False


@case("amqp10/2.5.6/incoming-window-counts-frames",
      title="the broker sends no more transfer frames than our session incoming-window allows",
      clauses=("amqp10:2.5.6/2",))
def incoming_window_counts_frames(ctx: Context) -> None:
    """With max-frame-size 512, queues a message of 5000 octets, begins a session with incoming-window 2
    and grants link-credit 10. Passes when the broker sends at most 2 transfer frames (the window counts
    frames, not messages) and, once a session flow widens the window, the rest of the message, complete
    and intact."""
    peer = ctx.connect(max_frame_size=512)
    addr, payload = _queue_large_message(ctx, 5000)
    s = begin(peer, incoming_window=2)
    rcv = s.receiver(addr, name=f"rcv-{uuid.uuid4().hex[:8]}")
    rcv.grant(10)
    held = peer.observe(1.5, stop=_last_transfer(s.remote))
    first = _transfers(held, s.remote)
    ctx.record(len(first) <= 2, expected="at most 2 transfer frames while the incoming-window is 2",
               observed=f"{len(first)} transfer frame(s) of the 5000-octet message: {held.describe()}",
               what="transfer frames within the incoming-window")
    s.incoming_window = WINDOW
    peer.send(s.flow_frame(next_incoming_id=(s.remote_next_outgoing_id + len(first)) % SEQ))
    rest = peer.observe(REACTION_WINDOW, stop=_last_transfer(s.remote)) if not first or first[-1].performative.more \
        else Observation()
    frames = first + _transfers(rest, s.remote)
    data = b"".join(bytes(f.payload) for f in frames)
    complete = bool(frames) and not frames[-1].performative.more
    ctx.record(complete and _same_body(data, payload), expected=f"the whole message (a body of {len(payload)} octets)"
               " once the window is widened", observed=f"{len(frames)} transfer frame(s), {len(data)} octets, "
               f"{'complete' if complete else 'incomplete'}; {rest.describe()}",
               what="the widened window lets the rest through")


def _session_state(ctx: Context, s: Session, empty: Receiver, next_outgoing_id: int, received: int) -> spec.Flow:
    """The broker's session state, read from a flow it sends now: we drain a receiving link of an empty
    node, asking for an echo too, so the broker has to answer (2.6.7). The last flow of the session
    within the wait is returned; skips when none comes."""
    peer, attach = s.peer, empty.remote
    peer.send(empty.grant_frame(5, delivery_count=int(attach.initial_delivery_count or 0), drain=True, echo=True,
                                next_incoming_id=(s.remote_next_outgoing_id + received) % SEQ,
                                next_outgoing_id=next_outgoing_id))
    obs = peer.observe(WAIT, stop=lambda f: (performative_name(f) == "flow" and f.channel == s.remote
                                             and _for_handle(attach)(f)) or performative_name(f) in ("close", "end"))
    flows = obs.performatives("flow", s.remote)
    if not flows:
        ctx.skip(f"the broker sent no flow to read its session state from (it answered neither drain nor echo): "
                 f"{obs.describe()}")
    return flows[-1].performative  # type: ignore[union-attr]


def _for_handle(attach: spec.Attach) -> Callable[[Any], bool]:
    """Matches a flow about the link the broker attached with ``attach`` (its own handle)."""
    return lambda f: f.performative.handle is not None and int(f.performative.handle) == int(attach.handle)


@case("amqp10/2.5.6/next-outgoing-id-counts-frames",
      title="the broker's next-outgoing-id advances by one per transfer frame, not per message",
      guideline="The session endpoint assigns each outgoing transfer frame an implicit transfer-id from a session "
                "scoped sequence.")
def next_outgoing_id_counts_frames(ctx: Context) -> None:
    """With max-frame-size 512, receives one message of 3000 octets (several transfer frames), then drains
    an empty receiving link on the same session so the broker must send a flow. Passes when that flow's
    next-outgoing-id is the one of the broker's begin plus the number of transfer frames received."""
    peer = ctx.connect(max_frame_size=512)
    addr, payload = _queue_large_message(ctx, 3000)
    s = begin(peer)
    empty = s.receiver(address(ctx), name=f"rcv-{uuid.uuid4().hex[:8]}")
    rcv = s.receiver(addr, name=f"rcv-{uuid.uuid4().hex[:8]}")
    rcv.grant(1)
    obs = peer.observe(REACTION_WINDOW, stop=_last_transfer(s.remote))
    frames = _transfers(obs, s.remote)
    if not frames or frames[-1].performative.more:
        ctx.skip(f"the message did not arrive: {obs.describe()}")
    flow = _session_state(ctx, s, empty, 0, len(frames))
    want = (s.remote_next_outgoing_id + len(frames)) % SEQ
    got = int(flow.next_outgoing_id)
    ctx.record(got == want, expected=f"next-outgoing-id {want} (begin's {s.remote_next_outgoing_id} + "
               f"{len(frames)} transfer frames)", observed=describe(AMQPFrame(s.remote, flow)))


@case("amqp10/2.5.6/next-incoming-id-follows-our-transfers",
      title="the broker's next-incoming-id follows our transfer frames, across the serial-number wrap",
      clauses=("amqp10:2.5.6/7", "amqp10:2.5.6/6"))
def next_incoming_id_follows_our_transfers(ctx: Context) -> None:
    """Begins a session with next-outgoing-id 2^32-2, sends one message in 4 transfer frames (transfer-ids
    2^32-2, 2^32-1, 0, 1), then drains an empty receiving link on the same session, our flow carrying
    next-outgoing-id 2. Passes when the broker's flow in answer carries next-incoming-id 2."""
    peer = ctx.connect()
    start = SEQ - 2
    s = begin(peer, next_outgoing_id=start)
    empty = s.receiver(address(ctx), name=f"rcv-{uuid.uuid4().hex[:8]}")
    snd = s.sender(address(ctx), name=f"snd-{uuid.uuid4().hex[:8]}")
    snd.wait_credit(WAIT)
    body = bytes(ctx.rng.getrandbits(8) for _ in range(1200))
    frames = snd.transfer_frames(Message(body=body), settled=True, tag=b"wrap", delivery_id=start, max_frame_size=400)
    peer.send(*frames)
    next_id = (start + len(frames)) % SEQ
    flow = _session_state(ctx, s, empty, next_id, 0)
    got = flow.next_incoming_id
    ctx.record(got is not None and int(got) == next_id,
               expected=f"next-incoming-id {next_id} after {len(frames)} transfer frames from {start}",
               observed=describe(AMQPFrame(s.remote, flow)))


@case("amqp10/2.5.6/exceeding-incoming-window",
      title="a transfer frame beyond the broker's incoming-window is refused with window-violation",
      timeout=40.0,
      guideline="amqp:session:window-violation: The peer violated incoming window for the session.")
def exceeding_incoming_window(ctx: Context) -> None:
    """Sends transfer frames of one message (one octet each) until the broker's incoming-window, as last
    announced in its begin or flows, is used up, waits for the broker to widen it, and when it does not,
    sends one frame more. Passes when the broker ends the session with amqp:session:window-violation, or
    accepts the frame without any error (the text obliges the sender, not the receiver). An error while
    we are still within the window the broker announced is a failure of the same (guideline) level: the
    window defines what it "can currently receive". Skipped when the window is too large to use up."""
    peer = ctx.connect()
    s = begin(peer)
    window = int(s.begin.incoming_window)
    if window > 100_000:
        ctx.skip(f"the broker's incoming-window {window} is too large to use up in a case")
    h = s.sender(address(ctx), name=f"snd-{uuid.uuid4().hex[:8]}").handle
    peer.await_frame("flow", channel=s.remote, match=lambda f: f.performative.handle is not None, timeout=WAIT)
    payload = Message(body=b"w" * (window + 64)).encode()
    first = spec.Transfer(handle=h, delivery_id=0, delivery_tag=b"big", message_format=0, settled=True, more=True)
    sent = 0
    limit = window          # the last transfer-id + 1 the broker allows (our ids start at 0)
    chunk = 256

    def frame(i: int) -> AMQPFrame:
        perf = first if i == 0 else spec.Transfer(handle=h, more=True)
        return AMQPFrame(s.ch, perf, payload[i:i + 1])
    rounds = 0
    while rounds < 20:
        while sent < limit:
            n = min(chunk, limit - sent)
            peer.send(b"".join(frame(sent + i).encode() for i in range(n)))
            sent += n
        quiet = peer.observe(0.5, stop=lambda f: performative_name(f) in ("close", "end"))
        errors = [f for f in quiet.performatives() if error_condition(f.performative)] + \
            ([quiet] if quiet.closed else [])
        if errors:
            ctx.record(False, expected=f"transfer frames within the incoming-window accepted (up to transfer-id "
                       f"{limit - 1}, as last announced)", observed=f"after {sent} frames: {quiet.describe()}",
                       what="frames within the announced incoming-window", guideline="The incoming-window defines the maximum number of incoming transfer frames that the "
                                 "endpoint can currently receive.")
            return
        flows = [f.performative for f in quiet.performatives("flow", s.remote)]
        new_limit = max([limit] + [int(f.next_incoming_id or 0) + int(f.incoming_window) for f in flows])
        if new_limit == limit:
            break
        limit = new_limit
        rounds += 1
    else:
        ctx.skip(f"the broker kept widening its incoming-window ({sent} frames sent)")
    peer.send(frame(sent))
    name = marker_link(ctx, s, handle=h + 1)
    obs = peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, name))
    ctx.check(obs, SessionError(str(spec.SessionError.WINDOW_VIOLATION), channel=s.remote) | StaysOpenOrAttached(name),
              what=f"transfer frame {sent + 1} with an incoming-window of {limit}")


class StaysOpenOrAttached(StaysOpen):
    """The session goes on: the marker attach is answered, with no error anywhere."""

    def __init__(self, name: str) -> None:
        self.name = name

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        errors = [f for f in obs.performatives() if error_condition(getattr(f, "performative", None))]
        return any(named_attach(f, self.name) for f in obs.performatives("attach")) and not errors and not obs.closed

    def describe(self) -> str:
        return "no error: the frame accepted, the session going on"
