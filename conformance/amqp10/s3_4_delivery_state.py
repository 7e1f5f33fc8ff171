"""Spec 3.4 Delivery State (messaging): the outcomes accepted, rejected, released, modified.

We receive a message from a queue (unsettled), apply an outcome with a settled disposition and
look at what the node does with the message: released makes it available again, unchanged
(its header delivery-count MUST NOT grow); modified with delivery-failed MUST increment it,
with undeliverable-here it MUST NOT come back to the same link, and its message-annotations
SHOULD be merged in; rejected and accepted retire it. The broker's own delivery states are
checked too: the outcome it gives our transfers, and that a sender never uses the received
state outside a resumed delivery.
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import QUIET, Delivery, Receiver, Session, SetupError, begin
from amqpspec.wire.amqp10 import Message, Symbol, spec

from ._common import WAIT, address, link_name
from ._flow import bodies, body_of, filled

G_RELEASED = ("At the source the released outcome means that the message is no longer acquired by the receiver, "
              "and has been made available for (re-)delivery to the same or other targets receiving from the node.")
G_MODIFIED = ("At the source the modified outcome means that the message is no longer acquired by the receiver, "
              "and has been made available for (re-)delivery to the same or other targets receiving from the node.")
G_REJECTED = ("At the target, the rejected outcome is used to indicate that an incoming message is invalid and "
              "therefore unprocessable.")
G_ACCEPTED_SOURCE = "At the source the accepted state means that the message has been retired from the node"
G_ACCEPTED_TARGET = ("At the target, the accepted outcome is used to indicate that an incoming message has been "
                     "successfully processed")


def _offered(ctx: Context, rcv: Receiver, outcome: str) -> None:
    """Skips when the broker's source lists the outcomes it supports and ``outcome`` is not one (3.5.3)."""
    source = getattr(rcv.remote, "source", None)
    offered = [str(o) for o in (getattr(source, "outcomes", None) or [])]
    if offered and f"amqp:{outcome}:list" not in offered:
        ctx.skip(f"the broker's source offers only {', '.join(offered)}: the {outcome} outcome cannot be chosen "
                 "on this link (3.5.3 outcomes)")


def _first(ctx: Context, message: Message | None = None,
           outcome: str | None = None) -> tuple[Session, Receiver, str, Delivery]:
    """A queue holding one message, a receiving link A that got it (unsettled), and the queue's address."""
    s, rcv, addr = filled(ctx, 1, [message or Message(body=f"one-{ctx.rng.randrange(1 << 30)}".encode())])
    if outcome:
        _offered(ctx, rcv, outcome)
    rcv.grant(1)
    got = rcv.wait(1)
    if not got:
        raise SetupError(f"the message put in {addr} was not delivered for link-credit 1")
    return s, rcv, addr, got[0]


def _again(s: Session, a: Receiver, addr: str, *, other: bool = True,
           timeout: float = WAIT) -> tuple[str, Delivery] | None:
    """After an outcome on link A: credit 1 more on A and (``other``) a second link B with credit 1; the
    first redelivery on either, as ("A"|"B", delivery), or None."""
    seen = len(a.deliveries())
    a.grant(1)
    b = None
    if other:
        b = s.receiver(addr, name=f"{a.name}-b", credit=1)
    stop = time.monotonic() + timeout
    while s.ended is None and time.monotonic() < stop:
        if len(a.deliveries()) > seen:
            return "A", a.deliveries()[seen]
        if b is not None and b.deliveries():
            return "B", b.deliveries()[0]
        s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "transfer")
    if len(a.deliveries()) > seen:
        return "A", a.deliveries()[seen]
    if b is not None and b.deliveries():
        return "B", b.deliveries()[0]
    return None


def _count(delivery: Delivery) -> int:
    header = delivery.message().header
    value = None if header is None else header.delivery_count
    return 0 if value is None else int(value)


def _annotations(delivery: Delivery) -> dict[str, Any]:
    ma = delivery.message().message_annotations
    value = getattr(ma, "value", None) or {}
    return {str(k): v for k, v in value.items()}


@case("amqp10/3.4/released-redelivered-unchanged",
      title="a released message is delivered again with its delivery-count unchanged",
      clauses=("amqp10:3.4.4/1",))
def released_redelivered(ctx: Context) -> None:
    """We receive a message (no header: delivery-count 0) on link A and settle it released; then grant A
    one more credit and attach link B with credit 1. The message SHOULD come back on A or B (the text of
    released); when it does, its header delivery-count MUST still be 0."""
    s, a, addr, d = _first(ctx, outcome="released")
    a.settle(d, spec.Released())
    again = _again(s, a, addr)
    ctx.record(again is not None and body_of(again[1]) == body_of(d),
               expected="the same message delivered again, on A or B",
               observed="nothing within the wait" if again is None else
               f"on {again[0]}: {again[1].message().summary()}",
               what="a released message is available for redelivery", clauses=(), guideline=G_RELEASED)
    if again is not None:
        ctx.record(_count(again[1]) == 0, expected="header delivery-count 0 (absent) as before",
                   observed=f"delivery-count {_count(again[1])}: {again[1].message().summary()}")


@case("amqp10/3.4/modified-delivery-failed-increments-count",
      title="modified with delivery-failed increments the header delivery-count each time",
      clauses=("amqp10:3.4.5/3",))
def modified_delivery_failed(ctx: Context) -> None:
    """We receive a message (no header: delivery-count 0), settle it modified(delivery-failed=true) and get
    it again (A with one more credit, or a new link B); then once more. It SHOULD come back (text of
    modified); each time it does, its header delivery-count MUST be one more: 1, then 2."""
    s, a, addr, d = _first(ctx, outcome="modified")
    counts: list[int] = []
    current = d
    for _ in range(2):
        a.settle(current, spec.Modified(delivery_failed=True))  # delivery-ids are per session: A or B alike
        again = _again(s, a, addr, other=not counts)
        if again is None:
            break
        current = again[1]
        counts.append(_count(current))
    ctx.record(len(counts) == 2, expected="the message delivered again after each modified outcome",
               observed=f"{len(counts)} redelivery(ies)", what="a modified message is available for redelivery",
               clauses=(), guideline=G_MODIFIED)
    if counts:
        ctx.record(counts == [1, 2][:len(counts)], expected="header delivery-count 1, then 2",
                   observed=f"delivery-counts {counts}")


@case("amqp10/3.4/modified-undeliverable-here",
      title="modified with undeliverable-here is not delivered again to the same link",
      clauses=("amqp10:3.4.5/4",))
def modified_undeliverable_here(ctx: Context) -> None:
    """We receive a message on link A and settle it modified(undeliverable-here=true), then grant A one
    more credit and wait: the message MUST NOT be redelivered to A. (Afterwards a link B with credit is
    attached; whether B gets it is noted.)"""
    s, a, addr, d = _first(ctx, outcome="modified")
    a.settle(d, spec.Modified(undeliverable_here=True))
    again = _again(s, a, addr, other=False, timeout=1.5)
    ctx.record(again is None, expected="no redelivery on link A",
               observed="nothing on A" if again is None else f"redelivered on A: {again[1].message().summary()}")
    b = s.receiver(addr, name=link_name(ctx, "rcv"), credit=1)
    got = b.wait(1, timeout=1.0)
    ctx.note(f"a second link B {'received' if got else 'did not receive'} the message")


@case("amqp10/3.4/modified-message-annotations",
      title="modified with message-annotations changes the message's annotations at the node",
      clauses=("amqp10:3.4.5/2",))
def modified_message_annotations(ctx: Context) -> None:
    """We send a message with message-annotations {x-opt-amqpspec-a: "orig", x-opt-amqpspec-b: "keep"},
    receive it and settle it modified(message-annotations={x-opt-amqpspec-a: "new", x-opt-amqpspec-c:
    "added"}). The message SHOULD be modified in the specified ways: when it comes back, a is "new", b
    "keep" and c "added"."""
    msg = Message(message_annotations=spec.MessageAnnotations({Symbol("x-opt-amqpspec-a"): "orig",
                                                               Symbol("x-opt-amqpspec-b"): "keep"}),
                  body=f"ann-{ctx.rng.randrange(1 << 30)}".encode())
    s, a, addr, d = _first(ctx, msg, outcome="modified")
    a.settle(d, spec.Modified(message_annotations={Symbol("x-opt-amqpspec-a"): "new",
                                                   Symbol("x-opt-amqpspec-c"): "added"}))
    again = _again(s, a, addr)
    if again is None:
        ctx.record(False, expected="the message delivered again", observed="nothing within the wait",
                   what="a modified message is available for redelivery", clauses=(), guideline=G_MODIFIED)
        return
    ann = _annotations(again[1])
    want = {"x-opt-amqpspec-a": "new", "x-opt-amqpspec-b": "keep", "x-opt-amqpspec-c": "added"}
    ok = all(str(ann.get(k)) == v for k, v in want.items())
    ctx.record(ok, expected=f"message-annotations include {want}", observed=f"{ann}")


@case("amqp10/3.4/rejected-not-redelivered", title="a rejected message is not delivered again",
      guideline=G_REJECTED)
def rejected_not_redelivered(ctx: Context) -> None:
    """We receive a message on link A and settle it rejected (with an error: amqp:decode-error), then grant
    A one more credit and attach link B with credit 1. An invalid, unprocessable message should not be
    handed out again: passes when no redelivery arrives and the session raises no error."""
    s, a, addr, d = _first(ctx, outcome="rejected")
    a.settle(d, spec.Rejected(error=spec.Error(condition=Symbol("amqp:decode-error"),
                                               description="amqpspec: rejected on purpose")))
    again = _again(s, a, addr, timeout=1.5)
    errors = s.error_frames()
    ctx.record(again is None and not errors, expected="no redelivery, no error",
               observed=("no redelivery" if again is None else f"redelivered on {again[0]}: "
                         f"{again[1].message().summary()}") + (f"; errors {errors}" if errors else ""))


@case("amqp10/3.4/accepted-retired", title="an accepted message is retired from the queue",
      guideline=G_ACCEPTED_SOURCE)
def accepted_retired(ctx: Context) -> None:
    """We receive a message on link A and settle it accepted, then grant A one more credit and attach link
    B with credit 1: passes when the message does not come back."""
    s, a, addr, d = _first(ctx)
    a.settle(d, spec.Accepted())
    again = _again(s, a, addr, timeout=1.5)
    ctx.record(again is None, expected="no redelivery",
               observed="no redelivery" if again is None else f"redelivered on {again[0]}: {again[1].message().summary()}")


@case("amqp10/3.4/broker-accepts-transfer", title="the broker gives our unsettled transfer to a queue the accepted outcome",
      guideline=G_ACCEPTED_TARGET)
def broker_accepts_transfer(ctx: Context) -> None:
    """We send 3 unsettled messages to a queue. Storing a message in a queue is processing it
    successfully: passes when the broker's dispositions (role receiver) give each delivery the accepted
    state."""
    s = begin(ctx.connect())
    snd = s.sender(address(ctx), name=link_name(ctx, "snd"))
    snd.send_within_credit(bodies(ctx, 3))
    got = snd.wait_outcomes()
    names = {did: getattr(st, "NAME", None) for did, st in got.items()}
    ok = len(got) == 3 and all(n == "accepted" for n in names.values())
    ctx.record(ok, expected="disposition accepted for deliveries " + ", ".join(map(str, snd.ids)),
               observed=f"{names or 'no disposition'}")


@case("amqp10/3.4/no-received-state-from-sender",
      title="the broker as sender never puts the received state on transfers or dispositions",
      clauses=("amqp10:3.4.1/1", "amqp10:3.4.3/1"))
def no_received_state(ctx: Context) -> None:
    """A queue holds 2 small messages and one of 150 000 octets (several transfer frames); we receive them
    and leave them unsettled for a moment, then settle them. Passes when no transfer and no disposition
    of the broker (role sender) carries the received state (not a resumed delivery). A second check
    (SHOULD NOT) looks for a rejected state the source reached on its own."""
    big = Message(body=bytes(ctx.rng.randrange(256) for _ in range(150_000)))
    s, rcv, _ = filled(ctx, 3, [Message(body=b"small-1"), big, Message(body=b"small-2")])
    rcv.grant(3)
    got = rcv.wait(3, timeout=2 * WAIT)
    s.quiet(QUIET)
    if len(got) < 3:
        raise SetupError(f"only {len(got)} of 3 messages delivered")
    states = [f.performative.state for f in rcv.transfers() if f.performative.state is not None]
    states += [f.performative.state for f in s.frames("disposition") if not f.performative.role]
    received = [st for st in states if getattr(st, "NAME", None) == "received"]
    ctx.record(not received, expected="no received state", observed=f"states used by the broker: {states or 'none'}",
               clauses=("amqp10:3.4.1/1",))
    rejected = [st for st in states if getattr(st, "NAME", None) == "rejected"]
    ctx.record(not rejected, expected="no rejected state we did not ask for", observed=f"{states or 'none'}",
               what="the source does not reach the rejected state on its own", clauses=("amqp10:3.4.3/1",))
    for d in got:
        rcv.settle(d, spec.Accepted())

