"""Spec 2.7.5 Transfer (transport): settlement modes, continuation frames, aborts, resumes.

As receiver the broker settles as soon as a delivery arrives in rcv-settle-mode first, and not
before our settlement in mode second; a continuation transfer whose delivery-id, delivery-tag
or message-format differs from its first frame's is an error, and so is rcv-settle-mode
second on a link negotiated first; an aborted transfer's payload is ignored and its ``more``
flag too; a resumed delivery the broker never had is ignored.

Whether a delivery reached the node is seen from a fresh connection: a marker message is put
behind it and the node read until the marker.
"""
from __future__ import annotations

from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import Sender, Session, begin, fetch, message_octets, publish
from amqpspec.verify10 import ConnectionError, LinkError, SessionError
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._common import WAIT, address, link_name, tag, token
from ._links import await_answer, fresh_sender, outcome_for, settled_outcome, texts
from ._sessions import ends, ends_or_attach, marker_link

G_RCV_SECOND_ON_FIRST = "If the negotiated link value is first, then it is illegal to set this field to second."
G_ID_DIFFERS = ("It is an error if the delivery-id on a continuation transfer differs from the delivery-id on the first "
                "transfer of a delivery.")
G_TAG_DIFFERS = ("It is an error if the delivery-tag on a continuation transfer differs from the delivery-tag on the "
                 "first transfer of a delivery.")
G_FORMAT_DIFFERS = ("It is an error if the message-format on a continuation transfer differs from the message-format "
                    "on the first transfer of a delivery.")


def _rcv_mode(link: Sender) -> int:
    value = link.remote.rcv_settle_mode
    return 0 if value is None else int(value)


def _rcv_name(link: Sender) -> str:
    value = link.remote.rcv_settle_mode
    return "unset (first)" if value is None else {0: "first", 1: "second"}.get(int(value), str(value))


def _any_error(s: Session) -> Any:
    return LinkError(channel=s.remote) | SessionError(channel=s.remote) | ConnectionError()


def _is_error(ctx: Context, wrong: Callable[[Session, Sender], list[AMQPFrame]], guideline: str,
              **link_fields: Any) -> None:
    """Sends the frames ``wrong`` builds on a sending link, then an attach marker on the session: the broker
    must report an error of some scope (link, session or connection) before it answers the marker."""
    s = begin(ctx.connect())
    link = fresh_sender(ctx, s, address(ctx), **link_fields)
    s.peer.send(*wrong(s, link))
    mark = marker_link(ctx, s)
    stop = ends_or_attach(s, mark)
    obs = s.peer.observe(WAIT, stop=lambda f: stop(f) or (performative_name(f) == "detach" and f.channel == s.remote
                                                          and f.performative.error is not None))
    ctx.check(obs, _any_error(s), level=Level.SHOULD, guideline=guideline)  # a ceiling: a definition weighs less


# ============================================================================ settlement of the receiver
@case("amqp10/2.7.5/rcv-settle-mode-first", title="in rcv-settle-mode first the broker settles a delivery once it arrived",
      clauses=("amqp10:2.7.3/6", "amqp10:2.7.5/13"))
def rcv_settle_mode_first(ctx: Context) -> None:
    """Attaches a sending link asking rcv-settle-mode first -- the default, which every receiver supports --
    and sends one unsettled message. Passes when the broker's attach says first (or leaves it unset; 2.7.3
    SHOULD: the receiver respects the mode the sender asks for) and the broker, as receiver, settles the
    delivery without waiting for us: a disposition covering it with settled=true (2.7.5, MUST)."""
    s = begin(ctx.connect())
    link = fresh_sender(ctx, s, address(ctx), rcv_settle_mode=spec.ReceiverSettleMode.FIRST)
    ctx.record(_rcv_mode(link) == 0, expected="rcv-settle-mode first (or unset) in the broker's attach",
               observed=f"rcv-settle-mode {_rcv_name(link)}", what="the mode asked for is honoured",
               clauses=("amqp10:2.7.3/6",))
    if _rcv_mode(link) != 0:
        return
    delivery_id = link.send(token(ctx))
    obs = s.peer.observe(WAIT, stop=settled_outcome(s, delivery_id))
    got = outcome_for(obs, s.remote, delivery_id)
    ctx.record(any(bool(d.settled) for d in got), expected=f"a settled disposition covering delivery-id {delivery_id}",
               observed=obs.describe(), what="the broker settles first", clauses=("amqp10:2.7.5/13",))


@case("amqp10/2.7.5/rcv-settle-mode-second", title="in rcv-settle-mode second the broker does not settle before we do",
      clauses=("amqp10:2.7.5/14",))
def rcv_settle_mode_second(ctx: Context) -> None:
    """Attaches a sending link asking rcv-settle-mode second and sends one unsettled message. When the broker's
    attach says second: passes when its dispositions for the delivery are not settled (it MUST NOT settle
    before our settled disposition), which we then send. Skipped when the broker refuses the link or
    answers with mode first (it need not support second)."""
    s = begin(ctx.connect())
    name = link_name(ctx, "second")
    link = s.sender(address(ctx), name=name, rcv_settle_mode=spec.ReceiverSettleMode.SECOND, wait=False)
    ans = await_answer(s, name)
    if not ans.attached:
        ctx.skip(f"the broker did not attach the link in rcv-settle-mode second: {ans.describe()}")
    if _rcv_mode(link) != 1:
        ctx.skip(f"the broker's attach has rcv-settle-mode {_rcv_name(link)}: it does not support second")
    delivery_id = link.send(token(ctx))
    stop_end = ends(s)
    obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (performative_name(f) == "disposition" and f.channel == s.remote))
    got = outcome_for(obs, s.remote, delivery_id)
    ctx.record(bool(got) and not any(bool(d.settled) for d in got),
               expected=f"a disposition for delivery-id {delivery_id} with settled=false", observed=obs.describe())
    s.peer.send(AMQPFrame(s.ch, spec.Disposition(role=spec.Role.SENDER, first=delivery_id, settled=True,
                                                 state=got[0].state if got else None)))


@case("amqp10/2.7.5/second-on-first-link", title="rcv-settle-mode second on a transfer of a link negotiated first is an error",
      guideline=G_RCV_SECOND_ON_FIRST)
def second_on_first_link(ctx: Context) -> None:
    """On a sending link attached with rcv-settle-mode first, sends a transfer with rcv-settle-mode second.
    Passes when the broker reports an error: a detach of the link, an end of the session or a close,
    each with an error."""
    def wrong(s: Session, link: Sender) -> list[AMQPFrame]:
        if _rcv_mode(link) != 0:
            ctx.skip(f"the broker's attach has rcv-settle-mode {_rcv_name(link)}, not first")
        return link.transfer_frames(token(ctx), settled=None, tag=tag(ctx),
                                    rcv_settle_mode=spec.ReceiverSettleMode.SECOND)
    _is_error(ctx, wrong, G_RCV_SECOND_ON_FIRST, rcv_settle_mode=spec.ReceiverSettleMode.FIRST)


# ============================================================================ continuation transfers
def _two_frames(ctx: Context, second: Callable[[Sender, int, bytes], spec.Transfer]
                ) -> Callable[[Session, Sender], list[AMQPFrame]]:
    """A delivery in two transfer frames, the second one's transfer built by ``second(link, delivery-id, tag)``
    (the frames are the case's own: the session counts two transfer ids for them)."""
    def build(s: Session, link: Sender) -> list[AMQPFrame]:
        did = s.take_delivery_id(2)
        data = message_octets(token(ctx, "split"))
        t1 = tag(ctx)
        return [AMQPFrame(s.ch, spec.Transfer(handle=link.handle, delivery_id=did, delivery_tag=t1, message_format=0,
                                              more=True), data[:6]),
                AMQPFrame(s.ch, second(link, did, t1), data[6:])]
    return build


@case("amqp10/2.7.5/continuation-delivery-id-differs", title="a continuation transfer with another delivery-id is an error",
      guideline=G_ID_DIFFERS)
def continuation_delivery_id_differs(ctx: Context) -> None:
    """Sends a delivery in two transfer frames, the second carrying a delivery-id 7 higher than the first's.
    Passes when the broker reports an error: a detach of the link, an end of the session or a close."""
    _is_error(ctx, _two_frames(ctx, lambda link, did, t1: spec.Transfer(handle=link.handle, delivery_id=did + 7)),
              G_ID_DIFFERS)


@case("amqp10/2.7.5/continuation-delivery-tag-differs", title="a continuation transfer with another delivery-tag is an error",
      guideline=G_TAG_DIFFERS)
def continuation_delivery_tag_differs(ctx: Context) -> None:
    """Sends a delivery in two transfer frames, the second carrying another delivery-tag. Passes when the broker
    reports an error: a detach of the link, an end of the session or a close."""
    _is_error(ctx, _two_frames(ctx, lambda link, did, t1: spec.Transfer(handle=link.handle, delivery_tag=tag(ctx))),
              G_TAG_DIFFERS)


@case("amqp10/2.7.5/continuation-message-format-differs", title="a continuation transfer with another message-format is an error",
      guideline=G_FORMAT_DIFFERS)
def continuation_message_format_differs(ctx: Context) -> None:
    """Sends a delivery in two transfer frames, the first with message-format 0, the second with 1. Passes
    when the broker reports an error: a detach of the link, an end of the session or a close."""
    _is_error(ctx, _two_frames(ctx, lambda link, did, t1: spec.Transfer(handle=link.handle, message_format=1)),
              G_FORMAT_DIFFERS)


# ============================================================================ aborted and resumed deliveries
def _ignored(ctx: Context, what: str, **transfer: Any) -> None:
    """Sends a whole message in one transfer carrying the ``transfer`` fields, waits until the broker answered
    a marker link (it has read the transfer), then puts a marker message into the node from another
    connection. Passes when the node's first message is the marker."""
    addr = address(ctx)
    s = begin(ctx.connect())
    link = fresh_sender(ctx, s, addr)
    ignored = token(ctx, what)
    s.peer.send(*link.transfer_frames(ignored, settled=None, tag=tag(ctx), **transfer))
    s.peer.observe(WAIT, stop=ends_or_attach(s, marker_link(ctx, s)))
    marker = token(ctx, "marker")
    publish(ctx, addr, marker)
    got = texts(fetch(ctx, addr, until=marker))
    ctx.record(got[:1] == [marker], expected=f"the marker {marker!r} first, no {ignored!r}", observed=f"read back: {got}")


@case("amqp10/2.7.5/aborted-payload-ignored", title="the payload of a transfer marked aborted is ignored",
      clauses=("amqp10:2.7.5/20", "amqp10:2.6.14/5"))
def aborted_payload_ignored(ctx: Context) -> None:
    """Sends a whole message in one transfer with aborted=true, then a marker message from another connection.
    Passes when the node's first message is the marker: the aborted payload MUST be ignored."""
    _ignored(ctx, "aborted", aborted=True)


@case("amqp10/2.7.5/aborted-overrides-more", title="a transfer with aborted and more set ends the delivery; the next one is new",
      clauses=("amqp10:2.7.5/11", "amqp10:2.6.14/5"))
def aborted_overrides_more(ctx: Context) -> None:
    """Sends a delivery's first frame (more=true), then its last frame with aborted=true and more=true (the
    aborted flag takes precedence), then on the same link a new, whole delivery M. Passes when nothing of
    the aborted delivery reaches the node (2.6.14, MUST) and M arrives as a message of its own, unchanged
    (2.7.5: the receiver SHOULD ignore more on an aborted transfer)."""
    addr = address(ctx)
    s = begin(ctx.connect())
    link = fresh_sender(ctx, s, addr)
    aborted = token(ctx, "aborted")
    data = message_octets(aborted)
    s.peer.send(AMQPFrame(s.ch, spec.Transfer(handle=link.handle, delivery_id=s.take_delivery_id(2),
                                              delivery_tag=tag(ctx), message_format=0, more=True), data[:8]),
                AMQPFrame(s.ch, spec.Transfer(handle=link.handle, aborted=True, more=True), data[8:]))
    after = token(ctx, "next")
    last = link.send(after, tag=tag(ctx))
    s.peer.observe(WAIT, stop=settled_outcome(s, last))
    got = fetch(ctx, addr, until=after, timeout=1.5)
    leaked = [r for r in got if aborted.encode() in r.payload]
    ctx.record(not leaked, expected=f"no message holding data of the aborted delivery {aborted!r}",
               observed=f"read back: {texts(got)}", what="the aborted data is discarded", clauses=("amqp10:2.6.14/5",))
    ctx.record(texts(got).count(after) == 1, expected=f"the message {after!r}, whole and on its own",
               observed=f"read back: {texts(got)}", what="the next transfer starts a new delivery",
               clauses=("amqp10:2.7.5/11",))


@case("amqp10/2.7.5/resume-unknown-delivery", title="a resumed delivery the broker never had is ignored",
      clauses=("amqp10:2.7.5/15", "amqp10:2.6.13/2"))
def resume_unknown_delivery(ctx: Context) -> None:
    """On a new sending link (no unsettled map exchanged) sends a whole message in a transfer with resume=true
    and a tag the broker never saw, then a marker message from another connection. Passes when the node's
    first message is the marker: a resumed delivery not in the receiver's unsettled map MUST be ignored."""
    _ignored(ctx, "resumed", resume=True)


@case("amqp10/2.7.5/unset-settled-is-unsettled",
      title="a multi-frame delivery whose frames all leave settled unset is unsettled: the broker settles it",
      clauses=("amqp10:2.7.5/7", "amqp10:2.7.5/8"))
def unset_settled_is_unsettled(ctx: Context) -> None:
    """Sends a delivery of three transfer frames (max 512 octets a frame) none of which carries the
    settled field. Unset on the first frame it MUST be taken as false, and on the later frames too
    since no preceding frame was sent settled: the delivery is unsettled, so the broker (in either
    receiver settle mode) answers it with a disposition; a broker that took it as settled sends
    none. (The other half of 2.7.5/8 -- unset after a settled frame means settled -- has nothing the
    broker must send, so it is not checked.)"""
    s = begin(ctx.connect())
    snd = fresh_sender(ctx, s)
    if snd.wait_credit(WAIT) <= 0:
        ctx.skip(f"the broker granted no credit (its flows: {snd.flows() or 'none'})")
    frames = snd.transfer_frames(token(ctx, "unset").encode().ljust(1200, b"."), settled=None, max_frame_size=512)
    frames = [AMQPFrame(f.channel, f.performative.replace(settled=None), f.payload) for f in frames]
    s.send_together(frames)
    got = snd.wait_outcomes(WAIT)
    did = snd.ids[-1]
    ctx.record(did in got, expected=f"a disposition for the delivery of {len(frames)} frames without settled "
                                    "(it is unsettled)",
               observed=f"disposition state {got[did]}" if did in got else "no disposition for it",)
