"""Spec 2.7.3 Attach (transport): the fields of the broker's attach and what they commit it to.

The broker's attach should take the lowest free handle; a sending broker should honour the
snd-settle-mode a receiver asks for and then settle (or not) every delivery accordingly; its
initial-delivery-count is never null; an incomplete unsettled map from us forbids it new
deliveries; a receiver's max-message-size bounds what is sent to it, and a message larger
than the broker's own limit is a message-size-exceeded link error. (Handles already in use
are checked by amqp10/2.5.4/handle-in-use.)
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.peer.session10 import begin, publish
from amqpspec.verify10 import LinkError
from amqpspec.wire.amqp10 import Message, show, spec

from ._common import WAIT, address, link_name, tag, token
from ._links import await_answer, link_error_detach, provoke_link_error
from ._sessions import ends

G_MAX_MESSAGE_SIZE = ("max-message-size: This field indicates the maximum message size supported by the link endpoint. "
                      "Any attempt to deliver a message larger than this results in a message-size-exceeded link-error.")
G_SIZE_CONDITION = ("Any attempt to deliver a message larger than this results in a message-size-exceeded link-error. / "
                    "amqp:link:message-size-exceeded: The peer sent a larger message than is supported on the link.")
MODE_NAMES = {0: "unsettled", 1: "settled", 2: "mixed"}


def _mode(value: Any, default: int) -> int:
    return default if value is None else int(value)


def _transfers(obs: Any, s: Any, handle: int | None) -> list[Any]:
    return [f for f in obs.performatives("transfer", s.remote) if handle is None or int(f.performative.handle) == handle]


@case("amqp10/2.7.3/lowest-handle", title="the broker's attach takes the lowest available handle",
      clauses=("amqp10:2.7.3/4",))
def lowest_handle(ctx: Context) -> None:
    """On a new session attaches a sending link with our handle 7. Passes when the broker's attach uses
    handle 0, the lowest it has available (RECOMMENDED), rather than e.g. copying ours."""
    s = begin(ctx.connect())
    link = s.sender(address(ctx), name=link_name(ctx, "snd"), handle=7)
    ctx.record(link.remote_handle == 0, expected="handle 0 in the broker's attach",
               observed=f"handle {link.remote_handle} (ours: 7)")


def _snd_settle_mode(ctx: Context, wanted: int) -> None:
    addr = address(ctx)
    publish(ctx, addr, token(ctx, "a"), token(ctx, "b"))
    s = begin(ctx.connect())
    asked = spec.SenderSettleMode.SETTLED if wanted == 1 else spec.SenderSettleMode.UNSETTLED
    link = s.receiver(addr, name=link_name(ctx, "rcv"), snd_settle_mode=asked)
    mode = _mode(link.remote.snd_settle_mode, 2)
    ctx.record(mode == wanted, expected=f"snd-settle-mode {MODE_NAMES[wanted]} in the broker's attach",
               observed=f"snd-settle-mode {MODE_NAMES.get(mode, mode)}", what="the broker honours the mode asked for",
               clauses=("amqp10:2.7.3/5",))
    if mode != wanted:
        return
    link.grant(2)
    done = {"n": 0}

    def stop(f: Any) -> bool:
        if performative_name(f) == "transfer" and not f.performative.more:
            done["n"] += 1
        return ends(s)(f) or done["n"] >= 2

    obs = s.peer.observe(WAIT, stop=stop)
    frames = [f.performative for f in _transfers(obs, s, link.remote_handle)]
    if wanted == 1:
        ok = bool(frames) and all(any(bool(t.settled) for t in d) for d in _deliveries(frames))
        expected, clause = "settled=true on (at least one frame of) every delivery", "amqp10:2.7.5/9"
    else:
        ok = bool(frames) and all(not t.settled for t in frames if not t.aborted)
        expected, clause = "settled false or unset on every transfer frame", "amqp10:2.7.5/10"
    ctx.record(ok, expected=expected, observed=obs.describe(), what="settled flag of the deliveries",
               clauses=(clause,))


def _deliveries(frames: list[Any]) -> list[list[Any]]:
    """Transfer frames of one link grouped by delivery (they are contiguous on a link, 2.6.14)."""
    out: list[list[Any]] = [[]]
    for f in frames:
        out[-1].append(f)
        if not f.more:
            out.append([])
    return [d for d in out if d]


@case("amqp10/2.7.3/snd-settle-mode-settled", title="a sender asked for snd-settle-mode settled sends every delivery settled",
      clauses=("amqp10:2.7.3/5", "amqp10:2.7.5/9"))
def snd_settle_mode_settled(ctx: Context) -> None:
    """Puts two messages in a node and attaches a receiving link asking snd-settle-mode settled. Passes when
    the broker's attach says settled (2.7.3 SHOULD: the sender respects the mode the receiver asks for, when
    it supports it) and, when it does, each delivery it sends has settled=true (2.7.5, MUST)."""
    _snd_settle_mode(ctx, 1)


@case("amqp10/2.7.3/snd-settle-mode-unsettled", title="a sender asked for snd-settle-mode unsettled sends no delivery settled",
      clauses=("amqp10:2.7.3/5", "amqp10:2.7.5/10"))
def snd_settle_mode_unsettled(ctx: Context) -> None:
    """Puts two messages in a node and attaches a receiving link asking snd-settle-mode unsettled. Passes when
    the broker's attach says unsettled (2.7.3 SHOULD) and, when it does, no transfer frame it sends has
    settled=true (2.7.5, MUST)."""
    _snd_settle_mode(ctx, 0)


@case("amqp10/2.7.3/initial-delivery-count", title="the broker's attach as sender carries an initial-delivery-count",
      clauses=("amqp10:2.7.3/15",))
def initial_delivery_count(ctx: Context) -> None:
    """Attaches a receiving link. Passes when the broker's attach (role sender) has initial-delivery-count
    set: it MUST NOT be null when the role is sender."""
    s = begin(ctx.connect())
    link = s.receiver(address(ctx), name=link_name(ctx, "rcv"))
    value = link.remote.initial_delivery_count
    ctx.record(value is not None and not bool(link.remote.role), expected="role sender, initial-delivery-count set",
               observed=f"role {'receiver' if link.remote.role else 'sender'}, initial-delivery-count {show(value)}")


@case("amqp10/2.7.3/incomplete-unsettled", title="after our incomplete unsettled map the broker sends no new delivery",
      clauses=("amqp10:2.7.3/13",))
def incomplete_unsettled(ctx: Context) -> None:
    """Puts a message in a node, then attaches a receiving link with unsettled {<unknown tag>: accepted} and
    incomplete-unsettled=true, and grants credit 5. Passes when the broker sends no transfer on the link
    without resume=true (it may refuse the link instead); fails when it delivers the message as a new
    delivery."""
    addr = address(ctx)
    publish(ctx, addr, token(ctx))
    s = begin(ctx.connect())
    name = link_name(ctx, "incomplete")
    link = s.receiver(addr, name=name, wait=False, unsettled={tag(ctx): spec.Accepted()}, incomplete_unsettled=True)
    ans = await_answer(s, name)
    obs = ans.obs
    if ans.attached:
        link.grant(5)
        more = s.peer.observe(1.5, stop=lambda f: ends(s)(f) or performative_name(f) == "detach")
        obs.received += more.received
        obs.end = more.end
    new = [f for f in _transfers(obs, s, None) if not f.performative.resume]
    if not ans.attached:
        ctx.note(f"the broker did not attach the link: {ans.describe()}")
    ctx.record(not new, expected="no transfer without resume=true", observed=obs.describe())


@case("amqp10/2.7.3/receiver-max-message-size", title="the broker sends no message larger than our max-message-size",
      guideline=G_MAX_MESSAGE_SIZE)
def receiver_max_message_size(ctx: Context) -> None:
    """Puts a 3000-octet message in a node, then attaches a receiving link with max-message-size 1000 and
    grants credit. Passes when the broker does not deliver the message on the link (it may hold it back,
    or detach); fails when a delivery of more than 1000 octets arrives."""
    addr = address(ctx)
    publish(ctx, addr, Message(body=b"z" * 3000))
    s = begin(ctx.connect())
    link = s.receiver(addr, name=link_name(ctx, "rcv"), credit=5, max_message_size=1000)
    obs = s.peer.observe(WAIT, stop=lambda f: ends(s)(f) or performative_name(f) == "detach" or (
        performative_name(f) == "transfer" and not f.performative.more))
    size = sum(len(bytes(f.payload)) for f in _transfers(obs, s, link.remote_handle))
    ctx.record(size <= 1000, expected="no delivery larger than 1000 octets on the link",
               observed=f"{size} octets delivered; {obs.describe()}")


@case("amqp10/2.7.3/max-message-size-exceeded", title="a message larger than the broker's max-message-size is a link error",
      clauses=("amqp10:2.6.5/1", "amqp10:2.7.7/1"))
def max_message_size_exceeded(ctx: Context) -> None:
    """Attaches a sending link and, when the broker's attach announces a max-message-size, sends a message
    larger than it. Passes when the broker detaches the link with an error (a link error, 2.6.5 MUST), with
    details on its cause (2.7.7 SHOULD); a guideline check expects amqp:link:message-size-exceeded. Skipped
    when the broker announces no max-message-size."""
    s = begin(ctx.connect())
    link, obs = provoke_link_error(ctx, s)
    ctx.check(obs, LinkError(channel=s.remote), what="the link is detached with an error", clauses=("amqp10:2.6.5/1",))
    err = link_error_detach(obs, s, link)
    if err is None:
        return
    ctx.record(error_condition(err) == str(spec.LinkError.MESSAGE_SIZE_EXCEEDED),
               expected="amqp:link:message-size-exceeded", observed=show(err.error), what="error condition",
               guideline=G_SIZE_CONDITION)
    details = err.error.description or err.error.info
    ctx.record(bool(details), expected="a description (or info) of the cause in the error",
               observed=show(err.error), what="error details", clauses=("amqp10:2.7.7/1",))
