"""Suspending and resuming links (2.6.3, 2.6.13, 3.4.6), shared by the resumption sections.

Link recovery is optional in practice: a broker offers it by answering a terminus that asks for
durable unsettled-state with that durability (3.5.5) and an expiry-policy other than link-detach
(3.5.6), and by answering a non-closing detach with a non-closing detach (2.6.6: a detach with
closed=false suspends the link). A broker that refuses such a terminus, answers it with less
durability, or closes the link instead, keeps no unsettled state to resume: the cases skip with
that reason. Where it does offer recovery, what it must then do is the text's, and checked.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context
from amqpspec.peer.amqp10 import error_condition
from amqpspec.peer.base import PeerError
from amqpspec.peer.session10 import Delivery, Link, Receiver, Sender, Session, SetupError, begin, publish
from amqpspec.wire.amqp10 import Message, describe, spec
from amqpspec.wire.amqp10.composite import show

from ._common import WAIT, link_name

SMALL_FRAME = 512   # our max-frame-size: a message of a few kilobytes spans several transfer frames
DURABLE = spec.TerminusDurability.UNSETTLED_STATE
NEVER = spec.TerminusExpiryPolicy.NEVER


def small_session(ctx: Context) -> Session:
    """A session on a connection whose max-frame-size is SMALL_FRAME."""
    return begin(ctx.connect(max_frame_size=SMALL_FRAME))


def durable_source(address: str) -> spec.Source:
    return spec.Source(address=address, durable=DURABLE, expiry_policy=NEVER)


def durable_target(address: str) -> spec.Target:
    return spec.Target(address=address, durable=DURABLE, expiry_policy=NEVER)


def recoverable_receiver(ctx: Context, s: Session, address: str) -> Receiver:
    """A receiving link whose source asks for durable unsettled-state; skips unless the broker's
    source offers it."""
    try:
        link = s.receiver(name=link_name(ctx, "resume"), source=durable_source(address))
    except PeerError as exc:
        ctx.skip(f"the broker refused a source with durable unsettled-state: {exc}")
    offers(ctx, link, link.remote.source if link.remote is not None else None)
    return link


def recoverable_sender(ctx: Context, s: Session, address: str) -> Sender:
    """A sending link whose target asks for durable unsettled-state; skips unless the broker's target
    offers it."""
    try:
        link = s.sender(name=link_name(ctx, "resume"), target=durable_target(address))
    except PeerError as exc:
        ctx.skip(f"the broker refused a target with durable unsettled-state: {exc}")
    offers(ctx, link, link.remote.target if link.remote is not None else None)
    return link


def unsettled_deliveries(ctx: Context, address: str, bodies: list[bytes],
                         take: int | None = None) -> tuple[Session, Receiver, list[Delivery]]:
    """Fills ``address`` with ``bodies`` and takes the first ``take`` (default: all), unsettled, on a
    recoverable receiving link of a small-frame session (the state a resumption starts from); skips
    where the broker offers no recovery or sends them settled."""
    count = len(bodies) if take is None else take
    publish(ctx, address, *[Message(body=b) for b in bodies])
    s = small_session(ctx)
    rcv = recoverable_receiver(ctx, s, address)
    rcv.grant(count)
    got = rcv.wait(count)
    if len(got) < count:
        raise SetupError(f"{len(got)} of {count} messages came from {address}")
    if any(d.transfer.settled for d in got):
        ctx.skip("the broker sent the deliveries settled: nothing is left to resume")
    return s, rcv, got


def offers(ctx: Context, link: Link, terminus: Any) -> None:
    """Skips unless the broker's terminus keeps unsettled state across a suspension."""
    if terminus is None:
        ctx.skip(f"the broker attached without a terminus (attach {show(link.remote)})")
    durable = int(terminus.durable or 0)
    expiry = str(terminus.expiry_policy or spec.TerminusExpiryPolicy.SESSION_END)
    if durable < int(DURABLE) or expiry == str(spec.TerminusExpiryPolicy.LINK_DETACH):
        ctx.skip(f"the broker keeps no unsettled state for the link (its terminus: durable "
                 f"{spec.TerminusDurability.NAMES.get(terminus.durable, durable)}, expiry-policy {expiry})")


def suspend(ctx: Context, link: Link) -> Any:
    """Detaches with closed=false; skips unless the broker answers with a non-closing detach."""
    try:
        theirs = link.detach(closed=False, wait=True, timeout=WAIT)
    except PeerError as exc:
        ctx.skip(f"the broker did not answer a non-closing detach with a detach: {exc}")
    if theirs.closed or theirs.error is not None:
        ctx.skip(f"the broker closed the link instead of suspending it: {show(theirs)}")
    return theirs


def resume(ctx: Context, link: Link, unsettled: dict[bytes, Any], *, incomplete: bool = False) -> Any:
    """Re-attaches the suspended ``link`` with our unsettled map; the broker's attach (or None).
    Skips when the broker refuses it with amqp:not-implemented (it says it has no link recovery)."""
    try:
        return link.attach(unsettled=unsettled, incomplete_unsettled=incomplete or None)
    except PeerError as exc:
        ended = link.session.ended
        perf = getattr(ended, "performative", None)
        if perf is not None and error_condition(perf) == str(spec.AmqpError.NOT_IMPLEMENTED):
            ctx.skip(f"the broker does not implement link recovery: {describe(ended)}")
        if str(spec.AmqpError.NOT_IMPLEMENTED) in str(exc):
            ctx.skip(f"the broker does not implement link recovery: {exc}")
        return None


def their_map(attach: Any) -> dict[bytes, Any] | None:
    """The unsettled map of the broker's attach, keyed by delivery-tag octets (None: absent)."""
    if attach is None or attach.unsettled is None:
        return None
    return {bytes(k): v for k, v in dict(attach.unsettled).items()}


def shown(frames: list[Any]) -> str:
    return "; ".join(describe(f) for f in frames[-8:]) or "nothing"
