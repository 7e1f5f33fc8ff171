"""Spec 2.7.6 Disposition (transport): ranges of deliveries, outcomes, settlement, detached links.

A disposition names the deliveries first..last (last defaults to first) and applies its state
to each; it may name deliveries of a link that is no longer attached, and as long as that
link was not closed or detached with an error the state must still be applied. In the
exactly-once pattern (rcv-settle-mode second) the sender settles once the receiver reached a
terminal state, and the receiver settles last.

The range cases use the released outcome, which makes a message available again (3.4.4):
what a second receiver then gets shows which deliveries the disposition reached. The
semantics of the outcomes themselves are checked in section 3.4.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.peer.session10 import Delivery, Receiver, Session, begin, fetch, publish
from amqpspec.wire.amqp10 import spec

from ._common import WAIT, address, link_name, token
from ._links import await_answer, texts
from ._sessions import ends, ends_or_attach, marker_link


G_RANGE = ("first: Identifies the lower bound of delivery-ids for the deliveries in this set. / last: Identifies the "
           "upper bound of delivery-ids for the deliveries in this set. If not set, this is taken to be the same as "
           "first.")
G_STATE = ("The disposition frame is used to inform the remote peer of local changes in the state of deliveries. / "
           "state: Communicates the state of all the deliveries referenced by this disposition.")
G_EXACTLY_ONCE = ("As one might guess, the scenario presented initially where the sending application settles when the "
                  "receiver reaches a terminal state, and the receiving application settles when the sender settles, "
                  "results in an exactly-once guarantee.")
OUTCOME_SYMBOLS = {spec.Accepted: "amqp:accepted:list", spec.Rejected: "amqp:rejected:list",
                   spec.Released: "amqp:released:list", spec.Modified: "amqp:modified:list"}


def offered(link: Receiver, outcome: type) -> bool:
    """Whether the broker's source lets us choose ``outcome`` (an absent outcomes list allows all, 3.5.3)."""
    source = getattr(link.remote, "source", None)
    listed = [str(o) for o in (getattr(source, "outcomes", None) or [])]
    return not listed or OUTCOME_SYMBOLS[outcome] in listed


def held(ctx: Context, n: int) -> tuple[str, list[str], Session, Receiver, list[Delivery]]:
    """A node with ``n`` messages, all received unsettled on one link (credit ``n``) of a new connection."""
    addr = address(ctx)
    bodies = [token(ctx, f"m{i}") for i in range(n)]
    publish(ctx, addr, *bodies)
    s = begin(ctx.connect())
    link = s.receiver(addr, name=link_name(ctx, "rcv"), credit=n)
    got = link.receive(n)
    if texts(got) != bodies:
        ctx.skip(f"the node did not deliver the {n} messages put in it, in order: got {texts(got)}")
    if any(bool(r.transfer.settled) for r in got):
        ctx.skip("the broker sent the deliveries settled: there is nothing left to settle")
    return addr, bodies, s, link, got


def _released_range(ctx: Context, n: int, first: int, last: int | None) -> None:
    addr, bodies, s, link, got = held(ctx, n)
    if not offered(link, spec.Released):
        ctx.skip("the broker's source does not offer the released outcome")
    ids = [int(r.transfer.delivery_id) for r in got]
    link.release(ids[first], None if last is None else ids[last])
    s.peer.observe(WAIT, stop=ends_or_attach(s, marker_link(ctx, s)))
    inside = bodies[first:(first if last is None else last) + 1]
    outside = [b for b in bodies if b not in inside]
    again = texts(fetch(ctx, addr, count=n + 1, timeout=1.0))  # our first link still holds the others
    rng = f"first={ids[first]}" + ("" if last is None else f", last={ids[last]}")
    ctx.record(not any(b in again for b in outside),
               expected=f"none of {outside} released by disposition({rng})", observed=f"a second link got: {again}",
               what="deliveries outside the range untouched")
    if not any(b in again for b in inside):
        ctx.note(f"none of the released messages {inside} was delivered again (released semantics, see the 3.4 "
                 "cases): whether the disposition reached all of its range is not observable here")
        return
    ctx.record(all(b in again for b in inside),
               expected=f"all of {inside} released by disposition({rng}), so delivered to a second link",
               observed=f"a second link got: {again}", what="deliveries inside the range released")


@case("amqp10/2.7.6/range", title="a disposition applies to the deliveries first..last and no others",
      guideline=G_RANGE)
def disposition_range(ctx: Context) -> None:
    """Receives four messages unsettled, then settles the 2nd and 3rd with one disposition (first, last) in
    state released. Passes when a second link then gets exactly those two: the 1st and 4th, still held by
    the first link, are not released; the 2nd and 3rd are (checked when the broker delivers released messages
    again at all). Skipped when the source does not offer released."""
    _released_range(ctx, 4, 1, 2)


@case("amqp10/2.7.6/last-defaults-to-first", title="a disposition without last applies to the delivery first only",
      guideline=G_RANGE)
def last_defaults_to_first(ctx: Context) -> None:
    """Receives three messages unsettled, then sends disposition(first=<2nd>, no last, settled, released).
    Passes when a second link then gets only the 2nd message: the 1st and 3rd stay with the first link.
    Skipped when the source does not offer released."""
    _released_range(ctx, 3, 1, None)


@case("amqp10/2.7.6/each-outcome", title="dispositions with each outcome offered are taken without error",
      guideline=G_STATE)
def each_outcome(ctx: Context) -> None:
    """Receives four messages unsettled and settles each with its own disposition: accepted, rejected,
    released, modified (the outcomes the broker's source does not list are left out); then attaches a
    marker link on the session. Passes when the broker answers the marker without detaching a link, ending
    the session or closing the connection."""
    _, _, s, link, got = held(ctx, 4)
    used = []
    for r, outcome in zip(got, OUTCOME_SYMBOLS):
        if not offered(link, outcome):
            ctx.note(f"the broker's source does not offer {OUTCOME_SYMBOLS[outcome]}: not used")
            continue
        used.append(outcome.NAME)
        link.settle(r, outcome())
    mark = marker_link(ctx, s)
    obs = s.peer.observe(WAIT, stop=lambda f: ends_or_attach(s, mark)(f) or (
        performative_name(f) == "detach" and f.channel == s.remote))
    errors = [f for f in obs.performatives(None, s.remote) if performative_name(f) in ("end", "detach")]
    answered = any(str(f.performative.name) == mark for f in obs.performatives("attach", s.remote))
    ctx.record(answered and not errors and obs.close is None,
               expected=f"dispositions {', '.join(used)} taken: the marker attach answered, nothing detached or ended",
               observed=obs.describe())


@case("amqp10/2.7.6/exactly-once", title="in rcv-settle-mode second the broker settles after our terminal state",
      guideline=G_EXACTLY_ONCE)
def exactly_once(ctx: Context) -> None:
    """Puts a message in a node and receives it on a link whose rcv-settle-mode is second (ours, as receiver,
    is the mode in use), then sends disposition(accepted, settled=false). Passes when the broker (sender)
    then settles the delivery: a disposition with role=sender and settled=true covering it. Skipped when
    the broker refuses the link."""
    addr = address(ctx)
    publish(ctx, addr, token(ctx))
    s = begin(ctx.connect())
    name = link_name(ctx, "second")
    link = s.receiver(addr, name=name, rcv_settle_mode=spec.ReceiverSettleMode.SECOND, wait=False)
    ans = await_answer(s, name)
    if not ans.attached:
        ctx.skip(f"the broker did not attach a receiving link in rcv-settle-mode second: {ans.describe()}")
    link.grant(1)
    got = link.receive(1)
    if not got or bool(got[0].transfer.settled):
        ctx.skip(f"no unsettled delivery came: {[r.transfer for r in got]}")
    did = int(got[0].transfer.delivery_id)
    link.settle(did, spec.Accepted(), settled=False)
    stop_end = ends(s)
    obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (
        performative_name(f) == "disposition" and f.channel == s.remote and bool(f.performative.settled)))
    settled = [f.performative for f in obs.performatives("disposition", s.remote)
               if bool(f.performative.settled) and not bool(f.performative.role)
               and int(f.performative.first) <= did <= int(f.performative.last if f.performative.last is not None
                                                           else f.performative.first)]
    ctx.record(bool(settled), expected=f"disposition(role=sender, settled=true) covering delivery-id {did}",
               observed=obs.describe())
    link.accept(did)


@case("amqp10/2.7.6/after-detach", title="a disposition for a delivery of a link detached without error is applied",
      clauses=("amqp10:2.7.6/2", "amqp10:2.7.6/3"))
def after_detach(ctx: Context) -> None:
    """Receives a message unsettled, detaches the link (closed=false, no error), then sends
    disposition(accepted, settled) for the delivery and closes the connection; puts a marker message.
    Passes when the session stays (no error) and a new link's first message is the marker: the accepted
    state was applied, the message not made available again. Skipped when the broker answers the detach
    by closing the link or with an error (the delivery is then no longer live)."""
    addr, bodies, s, link, got = held(ctx, 1)
    link.detach(closed=False)
    stop_end = ends(s)
    obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (performative_name(f) == "detach" and f.channel == s.remote))
    theirs = [f.performative for f in obs.performatives("detach", s.remote)]
    if obs.performatives("end", s.remote) or any(bool(d.closed) or error_condition(d) for d in theirs):
        ctx.skip(f"the broker closed the link or detached it with an error: {obs.describe()}")
    link.accept(got[0])
    mark = marker_link(ctx, s)
    after = s.peer.observe(WAIT, stop=ends_or_attach(s, mark))
    ctx.record(not after.performatives("end", s.remote) and after.close is None,
               expected="the disposition taken without error (the marker attach answered)", observed=after.describe(),
               what="a disposition may name a delivery of a detached link", clauses=("amqp10:2.7.6/2",))
    s.peer.close()
    marker = token(ctx, "marker")
    publish(ctx, addr, marker)
    again = texts(fetch(ctx, addr, until=marker))
    ctx.record(again[:1] == [marker], expected=f"the marker {marker!r} first: {bodies[0]!r} was accepted",
               observed=f"read back: {again}", what="the state is applied", clauses=("amqp10:2.7.6/3",))
