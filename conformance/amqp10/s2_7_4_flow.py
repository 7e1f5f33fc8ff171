"""Spec 2.7.4 Flow (transport performatives): the fields of the flow performative.

A flow carries session state (next-incoming-id, windows) and, with a handle, link state:
the sender's delivery-count and available, the receiver's link-credit and drain. echo asks
the partner to send its state. The broker's own flows are checked here: next-incoming-id is
set once it has our begin; delivery-count is its current value on a link where it sends and
our last known value on a link where it receives; a flow without handle carries no link
field; a flow naming a handle that is not attached ends the session with unattached-handle.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import QUIET, Receiver, Session, begin, seq_add
from amqpspec.verify10 import SessionError
from amqpspec.wire.amqp10 import AMQPFrame

from ._common import REACTION_WINDOW, WAIT, address, link_name
from ._flow import bodies, filled

LINK_FIELDS = ("delivery_count", "link_credit", "available", "drain", "echo", "properties")


def _flow_frames(s: Session, since: int = 0) -> list[AMQPFrame]:
    return s.frames("flow", None, since)


def _sender_flow_problems(rcv: Receiver) -> list[str]:
    """Each broker flow on a link where it sends must carry its current delivery-count: its initial one
    plus the transfers it sent on the link before that flow (frames of a session arrive in order)."""
    problems = []
    sent = 0
    for f in rcv.s.log:
        if f.channel != rcv.s.remote or getattr(f.performative, "handle", None) is None or \
                int(f.performative.handle) != rcv.remote_handle:
            continue
        name = performative_name(f)
        if name == "transfer":
            if not f.performative.more:
                sent += 1
        elif name == "flow":
            want = seq_add(rcv.init, sent)
            got = f.performative.delivery_count
            if got is None or int(got) != want:
                problems.append(f"flow after {sent} transfer(s) has delivery-count {got}, expected {want}")
    return problems


@case("amqp10/2.7.4/echo-on-receiving-link", title="echo on a link where the broker sends is answered with its flow state",
      clauses=("amqp10:2.7.4/10", "amqp10:2.7.4/4", "amqp10:2.7.4/13", "amqp10:2.6.7/3", "amqp10:2.6.7/5"))
def echo_on_receiving_link(ctx: Context) -> None:
    """A queue holds 3 messages; we grant link-credit 5, receive the 3, then send a flow with the current
    delivery-count, link-credit 2 and echo=true. The broker SHOULD send its state: passes when a flow for
    the link arrives. Further checks on the broker's flows for the link: delivery-count is its current
    value (initial + transfers before the flow, MUST), the answer's link-credit is 2 (the formula and the
    decrement rule, MUST), and none sets echo (SHOULD, or echo loops)."""
    s, rcv, _ = filled(ctx, 3)
    rcv.grant(5)
    rcv.wait(3)
    s.quiet(0.3)
    mark = len(s.log)
    rcv.grant(2, echo=True)
    s.read(WAIT, until=lambda f: performative_name(f) == "flow" and f.channel == s.remote
           and f.performative.handle is not None and int(f.performative.handle) == rcv.remote_handle)
    answers = [f.performative for f in s.frames("flow", rcv.remote_handle, mark)]
    ctx.record(bool(answers), expected="a flow for the link after our echo",
               observed=f"{answers or 'none'}; ended: {s.ended or 'no'}", clauses=("amqp10:2.7.4/10",))
    problems = _sender_flow_problems(rcv)
    flows = rcv.flows()
    if flows:
        ctx.record(not problems, expected="every broker flow on the link carries its current delivery-count",
                   observed="; ".join(problems) or f"{len(flows)} flow(s), all correct",
                   what="the sender's flow carries its current delivery-count", clauses=("amqp10:2.7.4/4",))
        ctx.record(not any(f.echo for f in flows), expected="no broker flow sets echo",
                   observed=f"{[f.echo for f in flows]}", what="answers to echo do not ask for an echo",
                   clauses=("amqp10:2.7.4/13",))
    if answers:
        n = len(rcv.deliveries())
        credit = answers[0].link_credit
        ctx.record(credit is not None and int(credit) == 2 and n == 3,
                   expected="the answer shows link-credit 2 (delivery-count(rcv) + 2 - delivery-count(snd), no "
                            "transfer since)",
                   observed=f"{answers[0]}; {n} transfer(s) in all",
                   what="the sender's link-credit follows the receiver's flow",
                   clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/5"))


@case("amqp10/2.7.4/echo-on-sending-link",
      title="echo on a link where the broker receives is answered with our last delivery-count",
      clauses=("amqp10:2.7.4/10", "amqp10:2.7.4/5", "amqp10:2.6.7/4"))
def echo_on_sending_link(ctx: Context) -> None:
    """We attach a sending link with a random initial-delivery-count, send 2 messages within the broker's
    credit, then a flow with our delivery-count, our link-credit and echo=true. Passes when the broker
    answers with a flow for the link (SHOULD). MUST-level: every broker flow on the link carries
    delivery-count, our last known value (initial + 0..2), its first one exactly our initial value and
    the answer initial + 2."""
    s = begin(ctx.connect(), timeout=5.0)
    init = ctx.rng.randrange(1, 1 << 31)
    snd = s.sender(address(ctx), name=link_name(ctx, "snd"), initial_delivery_count=init)
    snd.send_within_credit(bodies(ctx, 2))
    snd.wait_outcomes()
    mark = len(s.log)
    s.flow(snd.handle, delivery_count=snd.delivery_count, link_credit=max(0, snd.credit()), echo=True)
    s.read(WAIT, until=lambda f: performative_name(f) == "flow" and f.channel == s.remote
           and f.performative.handle is not None and int(f.performative.handle) == snd.remote_handle)
    answers = [f.performative for f in s.frames("flow", snd.remote_handle, mark)]
    ctx.record(bool(answers), expected="a flow for the link after our echo",
               observed=f"{answers or 'none'}; ended: {s.ended or 'no'}", clauses=("amqp10:2.7.4/10",))
    flows = snd.flows()
    before = len(flows) - len(answers)
    problems = []
    for i, f in enumerate(flows):
        dc = None if f.delivery_count is None else int(f.delivery_count)
        allowed = {init} if i == 0 else {seq_add(init, k) for k in range(3)}
        if i >= before:
            allowed = {seq_add(init, 2)}
        if dc not in allowed:
            problems.append(f"flow #{i + 1} has delivery-count {dc}, expected {sorted(allowed)}")
    ctx.record(bool(flows) and not problems,
               expected=f"broker flows carry delivery-count {init} first, {seq_add(init, 2)} after our echo",
               observed="; ".join(problems) or (f"{len(flows)} flow(s), all correct" if flows else "no flow at all"),
               what="the receiver's flow carries the sender's last delivery-count",
               clauses=("amqp10:2.7.4/5", "amqp10:2.6.7/4"))


@case("amqp10/2.7.4/echo-session", title="echo without handle is answered with a flow; a flow without handle has no link fields",
      clauses=("amqp10:2.7.4/10", "amqp10:2.7.4/11", "amqp10:2.7.4/3", "amqp10:2.7.4/7", "amqp10:2.7.4/8",
               "amqp10:2.7.4/9", "amqp10:2.7.4/14"))
def echo_session(ctx: Context) -> None:
    """We send a flow without handle with echo=true. The broker SHOULD send its (session) state: passes
    when a flow arrives (with or without a handle, 2.7.4/11). Any broker flow without handle MUST NOT
    carry delivery-count, link-credit, available, drain, echo or properties (MUST NOT, separate check)."""
    s = begin(ctx.connect(), timeout=5.0)
    s.sender(address(ctx), name=link_name(ctx, "snd"))
    s.quiet(0.3)
    mark = len(s.log)
    s.flow(echo=True)
    s.read(WAIT, until=lambda f: performative_name(f) == "flow" and f.channel == s.remote)
    answers = _flow_frames(s, mark)
    ctx.record(bool(answers), expected="a flow after our session echo",
               observed=f"{[f.performative for f in answers] or 'none'}; ended: {s.ended or 'no'}",
               clauses=("amqp10:2.7.4/10", "amqp10:2.7.4/11"))
    bare = [f.performative for f in _flow_frames(s) if f.performative.handle is None]
    if bare:
        wrong = [f for f in bare if any(getattr(f, a) is not None for a in LINK_FIELDS)]
        ctx.record(not wrong, expected="flows without handle carry no link field", observed=f"{wrong or bare}",
                   what="a flow without handle carries no link state",
                   clauses=("amqp10:2.7.4/3", "amqp10:2.7.4/7", "amqp10:2.7.4/8", "amqp10:2.7.4/9",
                            "amqp10:2.7.4/14"))


@case("amqp10/2.7.4/next-incoming-id-set", title="the broker's flows carry next-incoming-id once it has our begin",
      clauses=("amqp10:2.7.4/1",))
def next_incoming_id_set(ctx: Context) -> None:
    """We begin a session and attach a sending link; the broker grants credit with a flow (and we ask for
    one more with echo=true). next-incoming-id MUST be set once the peer has received the begin: passes
    when every broker flow on the session carries it."""
    s = begin(ctx.connect(), timeout=5.0)
    snd = s.sender(address(ctx), name=link_name(ctx, "snd"))
    snd.wait_credit()
    s.flow(snd.handle, delivery_count=snd.delivery_count, link_credit=max(0, snd.credit()), echo=True)
    s.quiet(0.5)
    flows = [f.performative for f in _flow_frames(s)]
    if not flows:
        ctx.skip("the broker sent no flow at all")
    missing = [f for f in flows if f.next_incoming_id is None]
    ctx.record(not missing, expected="next-incoming-id set in every flow", observed=f"{missing or flows}")


@case("amqp10/2.7.4/unattached-handle", title="a flow naming a handle with no attached link ends the session with unattached-handle",
      clauses=("amqp10:2.7.4/2",))
def unattached_handle(ctx: Context) -> None:
    """On a session without links we send a flow for handle 7 (link-credit 1, echo). The recipient MUST
    end the session with the unattached-handle session error: passes on end with
    amqp:session:unattached-handle on that channel."""
    s = begin(ctx.connect(), timeout=5.0)
    s.flow(7, delivery_count=0, link_credit=1, echo=True)
    obs = s.peer.observe(REACTION_WINDOW, stop=lambda f: performative_name(f) in ("end", "close"))
    ctx.check(obs, SessionError("amqp:session:unattached-handle", channel=s.remote))


@case("amqp10/2.7.4/detached-handle", title="a flow for a link after it was detached ends the session with unattached-handle",
      clauses=("amqp10:2.7.4/2",))
def detached_handle(ctx: Context) -> None:
    """We attach a receiving link, detach it (closed=true) and wait for the broker's detach, then send a
    flow for its handle. Passes on end with amqp:session:unattached-handle on that channel."""
    s = begin(ctx.connect(), timeout=5.0)
    rcv = s.receiver(address(ctx), name=link_name(ctx, "rcv"))
    rcv.detach(closed=True, wait=True)
    s.flow(rcv.handle, delivery_count=rcv.init, link_credit=1, echo=True)
    obs = s.peer.observe(REACTION_WINDOW, stop=lambda f: performative_name(f) in ("end", "close"))
    ctx.check(obs, SessionError("amqp:session:unattached-handle", channel=s.remote))


@case("amqp10/2.7.4/available", title="the broker's available counts the messages awaiting credit",
      guideline="The number of messages awaiting credit at the link sender endpoint.")
def available(ctx: Context) -> None:
    """A queue holds 7 messages and has no other consumer; we grant link-credit 2 with echo=true, receive 2,
    then send link-credit 0 with echo=true. Each broker flow on the link that sets available should give
    7 minus the transfers sent before it. Setting the field at all is optional: a broker that never sets
    it is recorded (informational); a wrong value is a warning."""
    s, rcv, _ = filled(ctx, 7)
    rcv.grant(2, echo=True)
    rcv.wait(2)
    s.quiet(0.3)
    rcv.grant(0, echo=True)
    s.quiet(QUIET)
    sent = 0
    seen: list[tuple[int, int]] = []
    for f in s.log:
        if f.channel != s.remote or getattr(f.performative, "handle", None) is None or \
                int(f.performative.handle) != rcv.remote_handle:
            continue
        if performative_name(f) == "transfer" and not f.performative.more:
            sent += 1
        elif performative_name(f) == "flow" and f.performative.available is not None:
            seen.append((int(f.performative.available), 7 - sent))
    ctx.record(bool(seen), expected="flows for the link set available", observed=f"broker flows: {rcv.flows() or 'none'}")
    if seen:
        wrong = [(got, want) for got, want in seen if got != want]
        ctx.record(not wrong, expected="available = messages still in the queue when the flow was sent",
                   observed=", ".join(f"available {g} (expected {w})" for g, w in seen),
                   what="available gives the number of messages awaiting credit", clauses=(), guideline="The number of messages awaiting credit at the link sender endpoint.")


@case("amqp10/2.7.4/drain-flag-from-sender", title="the broker's flows show the receiver's last drain value",
      guideline="The sender's value is always the last known value indicated by the receiver.")
def drain_flag_from_sender(ctx: Context) -> None:
    """A queue holds 4 messages; we grant link-credit 2 (drain false) with echo=true and receive 2. Every
    broker flow on the link that carries drain should show false, the receiver's last value (a sender
    flow with drain=true would announce a drain nobody asked for)."""
    s, rcv, _ = filled(ctx, 4)
    rcv.grant(2, drain=False, echo=True)
    rcv.wait(2)
    s.quiet(0.5)
    flows = rcv.flows()
    if not flows:
        ctx.skip("the broker sent no flow for the link (echo unanswered): nothing to check")
    wrong = [f for f in flows if f.drain]
    ctx.record(not wrong, expected="drain false (or absent) in the broker's flows", observed=f"{flows}")

