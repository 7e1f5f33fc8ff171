"""Spec 2.6.7 Flow Control (transport): link-credit, delivery-count, drain, available.

The receiver sets link-credit, it does not add to it: the sender keeps
``link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)``,
so two flows of 5 sent before any transfer arrives allow 5 transfers, not 10, and a flow
carrying an old delivery-count allows only what is left once the transfers in flight are
counted. delivery-count is an RFC-1982 serial number: it wraps at 2^32. A sender with zero
credit stops; with drain set and nothing left to send it advances delivery-count until the
credit is used up and says so in a flow.

The broker is the sender when we receive from a queue (we fill it first, on a sending link
whose transfers the broker settles), and the receiver when we send to one: then its flows
must carry our delivery-count (2.7.4), also across the wrap.

Sessions and links that count are the framework's (amqpspec.peer.session10); queues are filled
by its ``publish``; the names the 2.7.4, 3.2 and 3.4 modules share with this one are in _flow.
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import UnexpectedReply, performative_name
from amqpspec.peer.base import DeadlineExceeded
from amqpspec.peer.session10 import SEQ, Receiver, SetupError, begin, publish, seq_add
from amqpspec.wire.amqp10 import Message, spec

from ._common import WAIT, address, link_name
from ._flow import ROUNDS, bodies, body_of, describe_frames, filled, filled_links

TRANSFER_LIMIT_EXCEEDED = str(spec.LinkError.TRANSFER_LIMIT_EXCEEDED)

def _count_note(ctx: Context, rcv: Receiver, expected: int) -> None:
    got = len(rcv.deliveries())
    if got < expected:
        ctx.note(f"the broker sent {got} of the {expected} messages the credit allowed (sending fewer is not a "
                 "violation of the clauses checked)")


# ============================================================================ cases


@case("amqp10/2.6.7/credit-is-set-not-added", title="two flows of link-credit 5 allow 5 transfers, not 10",
      clauses=("amqp10:2.6.7/2", "amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_is_set_not_added(ctx: Context) -> None:
    """On each of ROUNDS links (one session, one queue of 10 messages per link) we send two flows, both
    with the broker's initial delivery-count and link-credit 5, back to back (all in one write). link-credit(snd) :=
    delivery-count(rcv) + link-credit(rcv) - delivery-count(snd): passes when at most 5 transfers arrive on
    every link. (Repeated because a broker that adds the credits may do so only when the second flow
    overtakes its own deliveries.)"""
    s, links = filled_links(ctx, ROUNDS, 10)
    s.send_together([f for rcv in links for f in (rcv.grant_frame(5, delivery_count=rcv.init),
                                                   rcv.grant_frame(5, delivery_count=rcv.init))])
    for rcv in links:
        rcv.wait(5)
    s.quiet()
    counts = [len(rcv.deliveries()) for rcv in links]
    ctx.record(all(n <= 5 for n in counts), expected="at most 5 transfers per link (credit is set to 5 twice, not "
               "added up to 10)", observed=f"transfers per link after two flows of link-credit 5: {counts}")
    for rcv in links:
        _count_note(ctx, rcv, 5)


@case("amqp10/2.6.7/no-credit-no-transfer", title="without link-credit the broker sends no message",
      clauses=("amqp10:2.6.7/9",))
def no_credit_no_transfer(ctx: Context) -> None:
    """A queue holds 3 messages; we attach a receiving link and grant nothing (link-credit starts at zero),
    then send a flow with link-credit 0. Passes when no transfer arrives; a flow with link-credit 1
    afterwards checks that the messages were there to be sent."""
    s, rcv, _ = filled(ctx, 3)
    s.quiet()
    before = len(rcv.transfers())
    rcv.grant(0)
    s.quiet()
    zero = len(rcv.transfers())
    ctx.record(zero == 0, expected="no transfer while link-credit is zero",
               observed=f"{before} transfer(s) before any flow, {zero - before} after a flow with link-credit 0")
    rcv.grant(1)
    if not rcv.wait(1):
        ctx.note("no message arrived even with link-credit 1: the absence of transfers proves less")


@case("amqp10/2.6.7/sender-stops-at-zero-credit", title="the broker sends as many messages as the credit, then stops",
      clauses=("amqp10:2.6.7/5", "amqp10:2.6.7/9"))
def sender_stops_at_zero_credit(ctx: Context) -> None:
    """A queue holds 10 messages; we grant link-credit 3. Each transfer uses one credit; at zero the sender
    MUST NOT send more: passes when at most 3 transfers arrive."""
    s, rcv, _ = filled(ctx, 10)
    rcv.grant(3)
    rcv.wait(3)
    s.quiet()
    got = len(rcv.deliveries())
    ctx.record(got <= 3, expected="at most 3 transfers for link-credit 3", observed=f"{got} transfer(s)")
    _count_note(ctx, rcv, 3)


@case("amqp10/2.6.7/credit-formula-current-delivery-count",
      title="a flow with the current delivery-count allows exactly its link-credit more",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_formula_current(ctx: Context) -> None:
    """A queue holds 10 messages; we grant 3, receive 3, then send a flow with delivery-count = initial + 3
    and link-credit 4. By the formula the sender's credit becomes 4: passes when at most 4 more arrive
    (at most 7 in all)."""
    s, rcv, _ = filled(ctx, 10)
    rcv.grant(3)
    first = len(rcv.wait(3))
    s.quiet(0.3)
    if first != 3:
        raise SetupError(f"expected 3 messages for link-credit 3 before the second flow, got {first}")
    rcv.grant(4)
    rcv.wait(7)
    s.quiet()
    more = len(rcv.deliveries()) - 3
    ctx.record(more <= 4, expected="at most 4 more transfers (link-credit 4 with the current delivery-count)",
               observed=f"{more} more transfer(s) after the flow (delivery-count {rcv.init + 3}, link-credit 4)")
    _count_note(ctx, rcv, 7)


@case("amqp10/2.6.7/credit-formula-in-flight",
      title="a flow with an older delivery-count counts the transfers already sent against its credit",
      clauses=("amqp10:2.6.7/2", "amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_formula_in_flight(ctx: Context) -> None:
    """A queue holds 10 messages; we grant 4 and receive 4, then send a flow with the *initial*
    delivery-count (as if written before those transfers arrived) and link-credit 6. The sender computes
    initial + 6 - (initial + 4) = 2: passes when at most 2 more transfers arrive (6 in all, not 10)."""
    s, rcv, _ = filled(ctx, 10)
    rcv.grant(4)
    first = len(rcv.wait(4))
    s.quiet(0.3)
    if first != 4:
        raise SetupError(f"expected 4 messages for link-credit 4 before the second flow, got {first}")
    rcv.grant(6, delivery_count=rcv.init)
    rcv.wait(6)
    s.quiet()
    more = len(rcv.deliveries()) - 4
    ctx.record(more <= 2, expected="at most 2 more transfers: delivery-count(rcv) + link-credit(rcv) - "
               "delivery-count(snd) = 6 - 4",
               observed=f"{more} more transfer(s) after the flow (delivery-count {rcv.init}, link-credit 6)")
    _count_note(ctx, rcv, 6)


@case("amqp10/2.6.7/unknown-delivery-count-assumes-initial",
      title="a flow without delivery-count is counted from the sender's initial delivery-count",
      clauses=("amqp10:2.6.7/4", "amqp10:2.6.7/9"))
def unknown_delivery_count(ctx: Context) -> None:
    """A queue holds 10 messages; we send the attach of a receiving link and, before the broker's attach
    can arrive, a flow with no delivery-count (2.7.4: it MUST NOT be set before the sender's attach is
    seen) and link-credit 3. The sender MUST take delivery-count(rcv) as its initial delivery-count:
    passes when the link is attached and at most 3 transfers arrive."""
    addr = address(ctx)
    publish(ctx, addr, *bodies(ctx, 10))
    s = begin(ctx.connect(), timeout=5.0)
    rcv = s.receiver(addr, name=link_name(ctx, "rcv"), wait=False)
    s.flow(rcv.handle, delivery_count=None, link_credit=3)
    try:
        rcv.await_attach(WAIT)
    except (UnexpectedReply, DeadlineExceeded):
        pass
    if rcv.remote is None:
        raise SetupError(f"the broker did not attach link {rcv.name}: {describe_frames(s.log)}")
    rcv.wait(3)
    s.quiet()
    got = len(rcv.deliveries())
    errors = s.error_frames()
    ctx.record(got <= 3 and not errors, expected="the link serves at most 3 transfers (credit counted from the "
               "initial delivery-count), no error",
               observed=f"{got} transfer(s); errors: {describe_frames(errors)}")
    _count_note(ctx, rcv, 3)


def _drain_flow(rcv: Receiver, target: int) -> Any:
    for f in rcv.flows():
        if f.delivery_count is not None and int(f.delivery_count) == target and int(f.link_credit or 0) == 0:
            return f
    return None


@case("amqp10/2.6.7/drain-uses-up-credit",
      title="drain with more credit than messages: the broker advances delivery-count to use the credit and sends a flow",
      clauses=("amqp10:2.6.7/11", "amqp10:2.6.7/8"))
def drain_uses_up_credit(ctx: Context) -> None:
    """A queue holds 2 messages; we grant link-credit 10 with drain=true. After the 2 transfers there are
    no available messages: the sender MUST advance delivery-count until link-credit is zero and send its
    flow state. Passes when a flow with delivery-count = initial + 10 and link-credit 0 arrives (and at
    most 2 transfers). A separate SHOULD-level check: that flow carries drain=true (the sender's drain is
    the receiver's last value)."""
    s, rcv, _ = filled(ctx, 2)
    rcv.grant(10, drain=True)
    target = seq_add(rcv.init, 10)
    stop = time.monotonic() + WAIT
    while _drain_flow(rcv, target) is None and s.ended is None and time.monotonic() < stop:
        s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "flow")
    s.quiet(0.3)
    flow = _drain_flow(rcv, target)
    got = len(rcv.deliveries())
    ctx.record(flow is not None and got <= 2,
               expected=f"at most 2 transfers, then a flow with delivery-count {target} and link-credit 0",
               observed=f"{got} transfer(s); flows: {rcv.flows() or 'none'}; ended: {s.ended or 'no'}")
    if flow is not None:
        ctx.record(bool(flow.drain), expected="the sender's flow carries drain=true",
                   observed=f"{flow}", what="the drain flag of the sender's flow is the receiver's last value",
                   clauses=(), guideline="The sender's value is always the last known value indicated by the receiver.")


@case("amqp10/2.6.7/drain-empty-source",
      title="drain on an empty queue: the broker consumes the credit at once and sends a flow",
      clauses=("amqp10:2.6.7/11",))
def drain_empty_source(ctx: Context) -> None:
    """A queue received one message that we consumed and accepted, so it exists and is empty; on a new
    receiving link we grant link-credit 5 with drain=true. Passes when no transfer arrives and a flow with
    delivery-count = initial + 5 and link-credit 0 does."""
    s, first, addr = filled(ctx, 1)
    first.grant(1)
    got = first.wait(1)
    if not got:
        raise SetupError("the one message put in the queue was not delivered")
    first.settle(got[0], spec.Accepted())
    rcv = s.receiver(addr, name=link_name(ctx, "rcv"))
    rcv.grant(5, drain=True)
    target = seq_add(rcv.init, 5)
    stop = time.monotonic() + WAIT
    while _drain_flow(rcv, target) is None and s.ended is None and time.monotonic() < stop:
        s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "flow")
    flow = _drain_flow(rcv, target)
    ctx.record(flow is not None and not rcv.transfers(),
               expected=f"no transfer, a flow with delivery-count {target} and link-credit 0",
               observed=f"{len(rcv.transfers())} transfer(s); flows: {rcv.flows() or 'none'}; ended: {s.ended or 'no'}")


@case("amqp10/2.6.7/stop-with-zero-credit", title="after link-credit 0 and the broker's flow, no more transfers arrive",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def stop_with_zero_credit(ctx: Context) -> None:
    """Figure 2.46 (stopping incoming messages), on each of ROUNDS links (one queue of 30 messages per link):
    we grant 30 and at once send a flow with the initial delivery-count, link-credit 0 and echo=true.
    Transfers sent before the broker read the second flow may still arrive; once its flow state is
    updated the sender has no credit: passes when, on every link, no transfer arrives after a broker flow
    showing link-credit 0, and none once the link has been quiet. (Answering echo is checked in 2.7.4.)"""
    s, links = filled_links(ctx, ROUNDS, 30)
    s.send_together([f for rcv in links for f in (rcv.grant_frame(30),
                                                   rcv.grant_frame(0, delivery_count=rcv.init, echo=True))])
    s.quiet()
    quiet_at = [len(rcv.transfers()) for rcv in links]
    for rcv in links:
        rcv.grant(0, echo=True)
    s.quiet()
    late = [len(rcv.transfers()) - q for rcv, q in zip(links, quiet_at)]
    after_zero = [_after_zero_credit(rcv) for rcv in links]
    ctx.record(not any(after_zero) and not any(late),
               expected="on every link no transfer after the broker's flow with link-credit 0, none after a quiet "
                        "period",
               observed=f"per link: transfers before quiet {quiet_at}, after {late}, after a broker flow with "
                        f"link-credit 0 {after_zero}; broker flows on the first link: {links[0].flows() or 'none'}")


def _after_zero_credit(rcv: Receiver) -> int:
    """Transfers on the link that follow a broker flow on it showing link-credit 0."""
    count = 0
    seen_zero = False
    for f in rcv.s.log:
        if f.channel != rcv.s.remote or getattr(f.performative, "handle", None) is None or \
                int(f.performative.handle) != rcv.remote_handle:
            continue
        name = performative_name(f)
        if name == "flow" and f.performative.link_credit is not None and int(f.performative.link_credit) == 0:
            seen_zero = True
        elif name == "transfer" and seen_zero:
            count += 1
    return count


@case("amqp10/2.6.7/transfer-beyond-credit",
      title="a transfer beyond the broker's credit is handled or refused with transfer-limit-exceeded",
      clauses=("amqp10:2.6.7/10",))
def transfer_beyond_credit(ctx: Context) -> None:
    """We attach a sending link, read the broker's link-credit C and send C+1 unsettled transfers in one socket
    write, so the broker reads the excess one before it can grant more (the excess violates our side of 2.6.7).

    The clause cited speaks of credit the receiver reduced while transfers were in flight, which only the
    receiver (here the broker) can cause; for transfers beyond its credit it is the one text that says what a
    receiver does: "handle the excess messages normally or detach the link with a transfer-limit-exceeded
    error code". The case holds the broker to those two reactions at the clause's level (MAY: a failure is
    informational). Handled normally: no error, and the excess delivery gets an outcome like the others (when
    the broker settles any of them). Fails when the broker does something else -- ends the session or closes
    the connection over the excess transfer, detaches with another error, or settles the deliveries within
    credit and silently drops the excess one (tests/unit/test_transfer_beyond_credit.py shows each against a
    scripted broker). A check of the error's definition (informational: that text has no keyword) requires
    that an error, if any, is a detach with amqp:link:transfer-limit-exceeded. Skipped when C+1 transfers would also exceed the broker's session
    incoming-window, or C exceeds 1000."""
    s = begin(ctx.connect(), timeout=5.0)
    snd = s.sender(address(ctx), name=link_name(ctx, "snd"))
    credit = snd.wait_credit()
    window = int(s.begin.incoming_window or 0)
    if credit <= 0:
        ctx.skip("the broker granted no link-credit")
    if credit > 1000 or credit + 1 > window:
        ctx.skip(f"the broker grants link-credit {credit} (session incoming-window {window}): sending {credit + 1} "
                 "transfers would cost too much or also exceed the session window")
    s.send_together([f for i in range(credit + 1) for f in snd.frames_for(Message(body=f"x{i}".encode()))])
    s.quiet(1.0)
    errors = s.error_frames()
    outcomes = snd.outcomes()
    excess = snd.ids[-1]
    reaction = f"errors: {describe_frames(errors)}" if errors else \
        f"no error; {len(outcomes)} of {credit + 1} deliveries settled by the broker" + \
        ("" if excess in outcomes or not outcomes else f", not the excess one (delivery-id {excess})")
    limit_detach = bool(errors) and all(
        performative_name(f) == "detach" and int(f.performative.handle) == snd.remote_handle
        and str(f.performative.error.condition) == TRANSFER_LIMIT_EXCEEDED for f in errors)
    handled = not errors and (excess in outcomes or not outcomes)
    ctx.record(handled or limit_detach,
               expected="the excess transfer handled normally (an outcome like the others, no error), or the link "
                        "detached with transfer-limit-exceeded",
               observed=f"link-credit was {credit}; {reaction}")
    ok = all(performative_name(f) == "detach" and str(f.performative.error.condition) == TRANSFER_LIMIT_EXCEEDED
             for f in errors)
    ctx.record(ok, expected="no error, or a detach with amqp:link:transfer-limit-exceeded",
               observed=reaction, what="an error for exceeding link-credit is transfer-limit-exceeded",
               clauses=(), guideline="The peer sent more message transfers than currently allowed on the link.")


@case("amqp10/2.6.7/delivery-count-wrap-broker-receiving",
      title="messages sent with a delivery-count crossing 2^32 arrive, and the broker's flows follow the wrap",
      clauses=("amqp10:2.7.4/5",))
def delivery_count_wrap(ctx: Context) -> None:
    """We attach a sending link with initial-delivery-count 2^32-3 and send 5 messages within the broker's
    credit (our delivery-count goes 4294967293 ... 4294967295, 0, 1, 2), then a flow with echo=true.
    Checks: every flow of the broker on the link carries delivery-count, the last known value of ours,
    i.e. initial + k (mod 2^32) for the k transfers it had received, and after the echo it is 2 (MUST);
    a SHOULD-level check that the link stays usable and the 5 messages arrive in order at a receiver."""
    s = begin(ctx.connect(), timeout=5.0)
    addr = address(ctx)
    init = SEQ - 3
    snd = s.sender(addr, name=link_name(ctx, "snd"), initial_delivery_count=init)
    msgs = bodies(ctx, 5)
    problem = ""
    mark = None
    try:
        snd.send_within_credit(msgs)
        snd.wait_outcomes(2 * WAIT)
        mark = len(s.log)
        s.flow(snd.handle, delivery_count=snd.delivery_count, link_credit=max(0, snd.credit()), echo=True)
        s.quiet(0.5)
    except SetupError as exc:
        problem = str(exc)
    flows = snd.flows()
    allowed = {seq_add(init, k) for k in range(6)}
    bad = [f for f in flows if f.delivery_count is None or int(f.delivery_count) not in allowed]
    final = seq_add(init, 5)
    if mark is not None:  # flows written after our echo follow all 5 transfers
        bad += [f.performative for f in s.frames("flow", snd.remote_handle, mark)
                if f.performative.delivery_count is None or int(f.performative.delivery_count) != final]
    ctx.record(bool(flows) and not bad,
               expected=f"every broker flow on the link carries delivery-count in {sorted(allowed)}, "
                        f"{final} after the echo",
               observed=f"broker flows: {flows or 'none'}" + (f"; {problem}" if problem else ""))
    rcv = s.receiver(addr, name=link_name(ctx, "rcv"))
    rcv.grant(10)
    rcv.wait(5)
    s.quiet(0.3)
    got = [body_of(d) for d in rcv.deliveries()]
    want = [m.body for m in msgs]
    ctx.record(got == want and not s.error_frames(), expected="the 5 messages arrive, in order, without error",
               observed=f"received bodies {got}; outcomes {snd.outcomes()}; errors {describe_frames(s.error_frames())}",
               what="a delivery-count that wraps at 2^32 does not disturb the link", clauses=(), guideline="While the value itself is conceptually unbounded, it is encoded as a 32-bit integer that "
                         "wraps around and compares according to RFC-1982 [RFC1982] serial number arithmetic.")
