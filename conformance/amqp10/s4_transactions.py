"""Part 4 Transactions: the broker as transactional resource (declare, discharge, transactional work).

Every case first establishes a control link: a sending link whose target is a coordinator
with capability amqp:local-transactions (4.2, figure 4.1). Part 4 is optional -- 0.2 says a
conformant implementation SHOULD be able to act as a transactional resource or controller
"but MAY be unable to operate in either" -- so a broker that refuses the control link (an
attach with a null or ordinary target, a detach, an end or a close) skips the transaction
cases with that reason; whether it answers the attach per Part 2 is the 0.2 case
``coordinator-attach-answered``.

What the broker must do, as the text puts it: convey a failed declare or discharge as a
transaction-error, by rejecting the message when the control link's source offers the
rejected outcome and by detaching the control link otherwise (4.2, 4.3); always complete a
rollback (4.3); tell the controller the provisional outcome of a transactional posting, in
a transactional-state with the right txn-id, before a successful discharge (4.4.1, 4.4.4);
terminate the control link with transaction-rollback when a partial delivery is pending at
discharge (4.4.1); detach with not-implemented when it cannot acquire transactionally
(4.4.3); apply the source's default outcome to a delivery whose transactional retirement
was rolled back after the controller settled it (4.4.4). Sentences without a keyword (a
transactional posting is invisible until the commit, a rollback makes it vanish, closing the
control link rolls back) are checked at SHOULD level with the text as guideline.
"""
from __future__ import annotations

from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import WINDOW, error_condition, performative_name
from amqpspec.peer.session10 import Receiver, Sender, Session, begin, publish
from amqpspec.wire.amqp10 import Message, Symbol, describe, spec
from amqpspec.wire.amqp10.composite import show

from ._addressing import (
    ABSENT_WINDOW, attach_link, await_disposition, describe_arrivals, read_until, receiver_from, refusal, sender_to,
    transfer, transfer_outcome, with_token,
)
from ._common import MIN_MAX_FRAME_SIZE, WAIT, address, link_name, token_octets

LOCAL = Symbol("amqp:local-transactions")
DISTRIBUTED = "amqp:distributed-transactions"
ACCEPTED = Symbol("amqp:accepted:list")
REJECTED = Symbol("amqp:rejected:list")
TRANSACTION_ERRORS = tuple(spec.TransactionError.values())   # amqp:transaction:unknown-id, rollback, timeout
UNKNOWN_ID = "amqp:transaction:unknown-id"
ROLLBACK = "amqp:transaction:rollback"
NOT_IMPLEMENTED = "amqp:not-implemented"
TERMINAL = ("accepted", "rejected", "released", "modified")
REACTION = 3.0

POSTING_DOC = ("The effect of transactional posting is that the message does not become available at the destination "
               "node within the transactional resource until after the transaction has been successfully discharged.")
ROLLBACK_DOC = "If the transaction is rolled back then the delivery is not made available."
CONTROL_CLOSE_DOC = ("If the control link is closed while there exist non-discharged transactions it created, then all "
                     "such transactions are immediately rolled back, and attempts to perform further transactional work "
                     "on them will lead to failure.")
RETIRE_COMMIT_DOC = "Upon a successful discharge the outcome is applied."
UNKNOWN_ID_DOC = "amqp:transaction:unknown-id: The specified txn-id does not exist."


class Control:
    """A control link to the broker's coordinator: a sending link whose target is the coordinator."""

    def __init__(self, link: Sender) -> None:
        self.link = link
        self.s = link.session

    @property
    def capabilities(self) -> list[str]:
        caps = getattr(self.link.remote.target, "capabilities", None)
        if caps is None:
            return []
        return [str(c) for c in (caps if isinstance(caps, (list, tuple)) else [caps])]

    def send(self, body: Any, *, settled: bool = False, message: Message | None = None) -> int:
        return transfer(self.link, message or Message(body=spec.AmqpValue(body)), settled=settled)

    def request(self, body: Any, **kw: Any) -> tuple[Any, list[Any]]:
        """Sends a declare/discharge and waits for its outcome: (disposition state or None, other frames)."""
        d, others = await_disposition(self.s, self.send(body, **kw), timeout=REACTION)
        return (None if d is None else d.state), others

    def detach_error(self, others: list[Any]) -> Any:
        """The broker's detach of this control link, its end or close, among ``others`` (or None)."""
        for f in others:
            name = performative_name(f)
            if name == "close" or (name == "end" and f.channel == self.s.remote):
                return f
            if name == "detach" and f.channel == self.s.remote and int(f.performative.handle) == self.link.remote_handle:
                return f
        return None


def controller(ctx: Context, s: Session, *, rejected: bool = True) -> Control:
    """Attaches a control link (source offering accepted, and rejected unless told otherwise);
    skips the case when the broker does not act as a transactional resource."""
    outcomes = [ACCEPTED, REJECTED] if rejected else [ACCEPTED]
    link, obs = attach_link(s, link_name(ctx, "txn-ctl"), role=spec.Role.SENDER,
                            source=spec.Source(outcomes=outcomes), target=spec.Coordinator(capabilities=[LOCAL]))
    why = refusal(obs, link.remote)
    if why is None and not isinstance(link.remote.target, spec.Coordinator):
        why = f"the broker attached with target {show(link.remote.target)}, not a coordinator"
    if why is not None:
        ctx.skip(f"the broker does not act as a transactional resource: {why}")
    control = Control(link)  # type: ignore[arg-type]   (a sending link: attach_link made it for that role)
    if control.link.wait_credit(WAIT) <= 0:
        ctx.skip(f"the coordinator granted no credit to the control link (its flows: {control.link.flows() or 'none'})")
    return control


def declared(ctx: Context, control: Control) -> bytes:
    """Declares a transaction; skips the case when the broker does not answer with declared."""
    state, others = control.request(spec.Declare())
    if not isinstance(state, spec.Declared) or state.txn_id is None:
        ctx.skip(f"the coordinator did not declare a transaction: outcome {show(state)}; "
                 + "; ".join(describe(f) for f in others[-3:]))
    return bytes(state.txn_id)


def txn_state(txn: bytes, outcome: Any = None) -> spec.TransactionalState:
    return spec.TransactionalState(txn_id=txn, outcome=outcome)


def is_transaction_error(state: Any) -> bool:
    return isinstance(state, spec.Rejected) and error_condition(state) in TRANSACTION_ERRORS


# ============================================================================ 4.2 declaring

@case("amqp10/4.2/declare-answered", title="a declare is answered with declared, or rejected with a transaction-error",
      clauses=("amqp10:4.2/4", "amqp10:4.2/5"))
def declare_answered(ctx: Context) -> None:
    """Sends Declare() (amqp-value, unsettled) on a control link whose source offers rejected.
    Passes on the declared outcome carrying a txn-id, or on rejected carrying a
    transaction-error (a declare the coordinator could not perform); any other outcome, or
    none, fails."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    state, others = control.request(spec.Declare())
    ok = (isinstance(state, spec.Declared) and state.txn_id is not None and not state.problems) \
        or is_transaction_error(state)
    ctx.record(ok, expected="disposition with declared(txn-id), or rejected with a transaction-error "
                            f"({', '.join(TRANSACTION_ERRORS)})",
               observed=f"outcome {show(state)}" + ("; " + "; ".join(describe(f) for f in others[-3:])
                                                      if state is None else ""))
    if isinstance(state, spec.Declared) and isinstance(state.txn_id, bytes):
        ctx.record(len(state.txn_id) <= 32, what="the txn-id is a transaction-id", guideline="A transaction-id can be up to 32 octets of binary data.",
                   expected="binary of at most 32 octets", observed=f"txn-id {show(state.txn_id)}")


@case("amqp10/4.2/header-ignored", title="a declare message with a header section is still declared",
      clauses=("amqp10:4.2/1",))
def header_ignored(ctx: Context) -> None:
    """Sends the declare with a header (durable, priority 9, ttl 60000) and properties before the
    amqp-value body. Those sections should be ignored: the outcome is declared (or rejected
    with a transaction-error, when the coordinator cannot declare at all)."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    message = Message(header=spec.Header(durable=True, priority=9, ttl=60000),
                      properties=spec.Properties(message_id=ctx.name("declare")), body=spec.AmqpValue(spec.Declare()))
    d, others = await_disposition(s, control.send(None, message=message), timeout=REACTION)
    state = None if d is None else d.state
    ctx.record(isinstance(state, spec.Declared) or is_transaction_error(state),
               expected="declared (the header and properties sections ignored)",
               observed=f"outcome {show(state)}" + ("; " + "; ".join(describe(f) for f in others[-3:])
                                                      if state is None else ""))


@case("amqp10/4.2/settled-declare-detached", title="a declare sent settled makes the coordinator detach with illegal-state",
      clauses=("amqp10:4.2/3",))
def settled_declare(ctx: Context) -> None:
    """Sends Declare() pre-settled (which 4.2 forbids the controller). The coordinator should
    detach the control link with amqp:illegal-state."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    control.send(spec.Declare(), settled=True)
    obs = s.peer.observe(REACTION, stop=lambda f: performative_name(f) in ("detach", "end", "close"))
    got = control.detach_error(obs.frames())
    ok = got is not None and performative_name(got) == "detach" and error_condition(got.performative) == "amqp:illegal-state"
    ctx.record(ok, expected="detach of the control link with amqp:illegal-state", observed=obs.describe())


@case("amqp10/4.2/global-id-refused",
      title="a declare with a global-id to a local-only coordinator is rejected with a transaction-error",
      clauses=("amqp10:4.2/4", "amqp10:4.2/5", "amqp10:0.2/14"))
def global_id_refused(ctx: Context) -> None:
    """Skipped when the coordinator reports amqp:distributed-transactions. Otherwise sends
    Declare(global-id=<binary>), a declare it cannot perform as specified (4.5.2: global-id
    is only for a coordinator with distributed-transactions). The control link's source offers
    rejected, so the message must be rejected carrying a transaction-error."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    if DISTRIBUTED in control.capabilities:
        ctx.skip("the coordinator has the distributed-transactions capability")
    state, others = control.request(spec.Declare(global_id=ctx.name("global").encode()))
    ctx.record(is_transaction_error(state),
               expected=f"rejected carrying a transaction-error ({', '.join(TRANSACTION_ERRORS)})",
               observed=f"outcome {show(state)}" + ("; " + "; ".join(describe(f) for f in others[-3:])
                                                      if state is None else ""))


@case("amqp10/4.2/global-id-detach",
      title="without the rejected outcome, a declare the coordinator cannot perform detaches the control link",
      clauses=("amqp10:4.2/4", "amqp10:4.2/6", "amqp10:0.2/14"))
def global_id_detach(ctx: Context) -> None:
    """As global-id-refused, on a control link whose source offers only accepted: the coordinator
    cannot reject, so it must detach the control link with a detach carrying a
    transaction-error."""
    s = begin(ctx.connect())
    control = controller(ctx, s, rejected=False)
    if DISTRIBUTED in control.capabilities:
        ctx.skip("the coordinator has the distributed-transactions capability")
    state, others = control.request(spec.Declare(global_id=ctx.name("global").encode()))
    if state is None:
        others += s.peer.observe(0.2).frames()
    got = control.detach_error(others)
    ok = got is not None and performative_name(got) == "detach" and error_condition(got.performative) in TRANSACTION_ERRORS
    ctx.record(ok, expected=f"detach of the control link carrying a transaction-error ({', '.join(TRANSACTION_ERRORS)})",
               observed=f"outcome {show(state)}; " + ("; ".join(describe(f) for f in others[-3:]) or "nothing else"))


# ============================================================================ 4.3 discharging

@case("amqp10/4.3/unknown-id-rejected", title="a discharge of an unknown txn-id is rejected with a transaction-error",
      clauses=("amqp10:4.3/1", "amqp10:4.3/2"))
def unknown_id_rejected(ctx: Context) -> None:
    """Sends Discharge(txn-id=<8 random octets never declared>, fail=false) on a control link
    whose source offers rejected: the coordinator cannot complete it, so the message must be
    rejected carrying a transaction-error; a separate guideline check expects
    amqp:transaction:unknown-id."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    bogus = ctx.rng.getrandbits(64).to_bytes(8, "big")
    state, others = control.request(spec.Discharge(txn_id=bogus, fail=False))
    observed = f"outcome {show(state)}" + ("; " + "; ".join(describe(f) for f in others[-3:])
                                           if state is None else "")
    ctx.record(is_transaction_error(state),
               expected=f"rejected carrying a transaction-error ({', '.join(TRANSACTION_ERRORS)})", observed=observed)
    if isinstance(state, spec.Rejected):
        ctx.record(error_condition(state) == UNKNOWN_ID, what="the error names the unknown txn-id",
                   expected=f"rejected with {UNKNOWN_ID}", observed=observed, guideline=UNKNOWN_ID_DOC)


@case("amqp10/4.3/unknown-id-detach",
      title="without the rejected outcome, a failed discharge detaches the control link with a transaction-error",
      clauses=("amqp10:4.3/1", "amqp10:4.3/3"))
def unknown_id_detach(ctx: Context) -> None:
    """Control link whose source offers only accepted; sends Discharge(txn-id=<unknown>,
    fail=false). The coordinator cannot complete it and cannot reject, so it must detach the
    control link with a detach carrying a transaction-error."""
    s = begin(ctx.connect())
    control = controller(ctx, s, rejected=False)
    bogus = ctx.rng.getrandbits(64).to_bytes(8, "big")
    state, others = control.request(spec.Discharge(txn_id=bogus, fail=False))
    if state is None:
        others += s.peer.observe(0.2).frames()
    got = control.detach_error(others)
    ok = got is not None and performative_name(got) == "detach" and error_condition(got.performative) in TRANSACTION_ERRORS
    ctx.record(ok, expected=f"detach of the control link carrying a transaction-error ({', '.join(TRANSACTION_ERRORS)})",
               observed=f"outcome {show(state)}; " + ("; ".join(describe(f) for f in others[-3:]) or "nothing else"))


@case("amqp10/4.3/rollback-completes", title="a discharge with fail=true always completes",
      clauses=("amqp10:4.3/4",))
def rollback_completes(ctx: Context) -> None:
    """Declares a transaction, then sends Discharge(txn-id, fail=true): the coordinator must
    complete it, i.e. answer with the accepted outcome (figure 4.2), not reject it nor detach."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    txn = declared(ctx, control)
    state, others = control.request(spec.Discharge(txn_id=txn, fail=True))
    ctx.record(isinstance(state, spec.Accepted), expected="accepted",
               observed=f"outcome {show(state)}" + ("; " + "; ".join(describe(f) for f in others[-3:])
                                                      if state is None else ""))


# ============================================================================ 4.4.1 transactional posting

@case("amqp10/4.4.1/posting-outcome-before-commit",
      title="a transactional posting gets a transactional-state disposition before the commit completes",
      clauses=("amqp10:4.4.1/4", "amqp10:4.4.1/5", "amqp10:4.4.4/2", "amqp10:4.4.4/3"))
def posting_outcome(ctx: Context) -> None:
    """Declares a transaction, posts a message unsettled with state transactional-state(txn-id)
    on a link to a fresh node, then discharges with fail=false. Before the discharge is
    accepted the broker must have sent a disposition for the posting whose state is a
    transactional-state with the same txn-id and a terminal outcome. A rejected discharge
    (no successful commit) passes, with a note."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    txn = declared(ctx, control)
    snd = sender_to(ctx, s, address(ctx))
    posted = transfer(snd, token_octets(ctx, "posted"), state=txn_state(txn))
    state, others = control.request(spec.Discharge(txn_id=txn, fail=False))
    covering = [f.performative for f in others if performative_name(f) == "disposition" and f.channel == s.remote
                and f.performative.role is spec.Role.RECEIVER
                and int(f.performative.first) <= posted <= int(f.performative.last if f.performative.last is not None
                                                                else f.performative.first)]
    good = [d for d in covering if isinstance(d.state, spec.TransactionalState) and d.state.txn_id is not None
            and bytes(d.state.txn_id) == txn and getattr(d.state.outcome, "NAME", None) in TERMINAL]
    if not isinstance(state, spec.Accepted):
        ctx.note(f"the discharge was not accepted (outcome {show(state)}): no successful commit to check against")
    ok = bool(good) or not isinstance(state, spec.Accepted)
    ctx.record(ok, expected="before the discharge's accepted: disposition of the posting with "
                            f"transactional-state(txn-id={show(txn)}, a terminal outcome)",
               observed=f"discharge outcome {show(state)}; dispositions of the posting before it: "
                        + (", ".join(show(d.state) for d in covering) or "none"))


@case("amqp10/4.4.1/posting-visible-after-commit",
      title="a transactional posting is not available until the commit, and is after it",
      guideline=POSTING_DOC)
def posting_visible_after_commit(ctx: Context) -> None:
    """Declares a transaction and posts message A transactionally to a fresh node, then a
    sentinel without transaction; a receiving link gets the sentinel and must not get A. After
    Discharge(fail=false) is accepted, A must be delivered."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    txn = declared(ctx, control)
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    posted, sentinel = token_octets(ctx, "posted"), token_octets(ctx, "sentinel")
    transfer(snd, posted, state=txn_state(txn))
    transfer_outcome(snd, sentinel)
    rcv = receiver_from(ctx, s, spec.Source(address=addr))
    rcv.grant(10)
    read_until(s, lambda: with_token(rcv, sentinel) or s.error_frames())
    read_until(s, lambda: with_token(rcv, posted) or s.error_frames(), ABSENT_WINDOW)
    early = bool(with_token(rcv, posted))
    ctx.record(not early, what="not available before the commit", expected="the sentinel only",
               observed=f"posted message {'delivered' if early else 'not delivered'} before the discharge; "
                        f"{describe_arrivals(s)}")
    state, others = control.request(spec.Discharge(txn_id=txn, fail=False))   # transfers meanwhile: counted by the layer
    if not isinstance(state, spec.Accepted):
        ctx.skip(f"the commit was not accepted (outcome {show(state)})")
    read_until(s, lambda: with_token(rcv, posted) or s.error_frames())
    ctx.record(bool(with_token(rcv, posted)), what="available after the commit",
               expected="the posted message delivered after the discharge",
               observed=f"{len(with_token(rcv, posted))} delivery of the posted message; {describe_arrivals(s)}")


@case("amqp10/4.4.4/posting-rolled-back", title="a transactional posting rolled back is never made available",
      guideline=ROLLBACK_DOC)
def posting_rolled_back(ctx: Context) -> None:
    """Declares a transaction, posts message A transactionally to a fresh node, discharges with
    fail=true, then posts a sentinel without transaction: a receiving link gets the sentinel and
    must not get A."""
    def rollback(control: Control, txn: bytes) -> None:
        state, _ = control.request(spec.Discharge(txn_id=txn, fail=True))
        if not isinstance(state, spec.Accepted):
            ctx.note(f"the rollback was answered with {show(state)}")

    _posting_undone(ctx, rollback, "the rolled-back message")


def _posting_undone(ctx: Context, undo: Callable[[Control, bytes], None], what: str) -> None:
    """Declares a transaction, posts message A transactionally to a fresh node, ends the transaction
    with ``undo`` (a rollback of some kind), then posts a sentinel without transaction: a receiving
    link gets the sentinel and must not get A (``what`` names A in the observation)."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    txn = declared(ctx, control)
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    posted, sentinel = token_octets(ctx, "posted"), token_octets(ctx, "sentinel")
    transfer(snd, posted, state=txn_state(txn))
    undo(control, txn)
    transfer_outcome(snd, sentinel)
    rcv = receiver_from(ctx, s, spec.Source(address=addr))
    rcv.grant(10)
    read_until(s, lambda: with_token(rcv, sentinel) or s.error_frames())
    read_until(s, lambda: with_token(rcv, posted) or s.error_frames(), ABSENT_WINDOW)
    ctx.record(not with_token(rcv, posted), expected="the sentinel only",
               observed=f"{len(with_token(rcv, posted))} delivery of {what}; {describe_arrivals(s)}")


@case("amqp10/4.4.1/partial-delivery-discharge",
      title="a discharge with a partial transactional delivery pending terminates the control link with transaction-rollback",
      clauses=("amqp10:4.4.1/3",))
def partial_delivery_discharge(ctx: Context) -> None:
    """Declares a transaction, sends the first frame (more=true) of a transactional delivery to
    a fresh node and never the rest, then Discharge(fail=false): the control link must be
    terminated with amqp:transaction:rollback (a detach of the control link, or the end of its
    session or connection, carrying that condition)."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    txn = declared(ctx, control)
    snd = sender_to(ctx, s, address(ctx))
    transfer(snd, Message(body=token_octets(ctx, "partial") * 8), state=txn_state(txn), more=True)
    state, others = control.request(spec.Discharge(txn_id=txn, fail=False))
    others += s.peer.observe(0.5 if state is not None else 0.2,
                           stop=lambda f: performative_name(f) in ("detach", "end", "close")).frames()
    got = control.detach_error(others)
    ok = got is not None and error_condition(got.performative) == ROLLBACK
    ctx.record(ok, expected=f"the control link terminated with {ROLLBACK}",
               observed=f"discharge outcome {show(state)}; "
                        + ("; ".join(describe(f) for f in others[-3:]) or "nothing else"))


# ============================================================================ 4.4.2 / 4.4.3 retirement and acquisition

def _acquired(ctx: Context, s: Session, *, default_outcome: Any = None) -> tuple[str, Receiver, int, bytes]:
    """A fresh node holding one message, received (unsettled) on a receiving link.

    Returns the address, the link (the broker's source is in its ``remote``), the delivery-id and
    the message token.
    """
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    msg = token_octets(ctx, "retired")
    if not isinstance(transfer_outcome(snd, msg), spec.Accepted):
        ctx.skip("the broker did not accept the message posted to the node")
    rcv = receiver_from(ctx, s, spec.Source(address=addr, default_outcome=default_outcome))
    rcv.grant(1)
    if not read_until(s, lambda: with_token(rcv, msg)):
        ctx.skip(f"the message was not delivered: {describe_arrivals(s)}")
    return addr, rcv, int(with_token(rcv, msg)[0].transfer.delivery_id), msg


@case("amqp10/4.4.4/retirement-rollback-default-outcome",
      title="a settled transactional retirement rolled back gets the source's default outcome",
      clauses=("amqp10:4.4.4/8",))
def retirement_rollback(ctx: Context) -> None:
    """Receives a message (unsettled) on a link asking for default-outcome released; skipped
    unless the broker's source reports released or modified (not undeliverable-here). Declares
    a transaction, settles the delivery with transactional-state(txn-id, accepted), discharges
    with fail=true: the resource must apply the default outcome, so the message is delivered
    again on a second link."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    addr, rcv, delivery, msg = _acquired(ctx, s, default_outcome=spec.Released())
    default = rcv.remote.source.default_outcome
    if not (isinstance(default, spec.Released)
            or (isinstance(default, spec.Modified) and not default.undeliverable_here)):
        ctx.skip(f"the broker's source does not report a default outcome that makes the message available again "
                 f"(default-outcome={show(default)})")
    txn = declared(ctx, control)
    rcv.settle(delivery, txn_state(txn, spec.Accepted()), settled=True)
    state, _ = control.request(spec.Discharge(txn_id=txn, fail=True))
    other = receiver_from(ctx, s, spec.Source(address=addr), "second")
    other.grant(5)
    read_until(s, lambda: with_token(other, msg) or s.error_frames())
    ctx.record(bool(with_token(other, msg)),
               expected=f"default outcome {show(default)} applied: the message delivered again",
               observed=f"rollback outcome {show(state)}; {len(with_token(other, msg))} delivery on a "
                        f"second link; {describe_arrivals(s)}")


@case("amqp10/4.4.2/retirement-commit", title="a transactional retirement committed applies its outcome",
      guideline=RETIRE_COMMIT_DOC)
def retirement_commit(ctx: Context) -> None:
    """Receives a message (unsettled), declares a transaction, sends an unsettled disposition
    with transactional-state(txn-id, accepted), discharges with fail=false (skipped unless
    accepted), closes the link and posts a sentinel: a new link gets the sentinel and not the
    retired message."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    addr, rcv, delivery, msg = _acquired(ctx, s)
    txn = declared(ctx, control)
    rcv.settle(delivery, txn_state(txn, spec.Accepted()), settled=False)
    state, others = control.request(spec.Discharge(txn_id=txn, fail=False))
    if not isinstance(state, spec.Accepted):
        ctx.skip(f"the commit was not accepted (outcome {show(state)})")
    rcv.detach(closed=True)
    snd = sender_to(ctx, s, addr)
    sentinel = token_octets(ctx, "sentinel")
    transfer_outcome(snd, sentinel)
    other = receiver_from(ctx, s, spec.Source(address=addr), "second")
    other.grant(5)
    read_until(s, lambda: with_token(other, sentinel) or s.error_frames())
    read_until(s, lambda: with_token(other, msg) or s.error_frames(), ABSENT_WINDOW)
    ctx.record(not with_token(other, msg), expected="the sentinel only: the retired message is gone",
               observed=f"{len(with_token(other, msg))} delivery of the retired message; {describe_arrivals(s)}")


@case("amqp10/4.4.3/transactional-acquisition",
      title="a flow naming a txn-id gets transfers of that transaction, or a not-implemented detach",
      clauses=("amqp10:4.4.3/1", "amqp10:4.4/1"))
def transactional_acquisition(ctx: Context) -> None:
    """A fresh node holds one message; declares a transaction and grants credit on a receiving
    link with a flow whose properties carry {txn-id: <txn-id>}. Passes when the message arrives
    with state transactional-state(that txn-id), or the link is detached with
    amqp:not-implemented; a transfer not associated with the transaction fails."""
    s = begin(ctx.connect())
    control = controller(ctx, s)
    txn = declared(ctx, control)
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    msg = token_octets(ctx, "acquired")
    if not isinstance(transfer_outcome(snd, msg), spec.Accepted):
        ctx.skip("the broker did not accept the message posted to the node")
    rcv = receiver_from(ctx, s, spec.Source(address=addr))
    rcv.grant(1, properties={Symbol("txn-id"): txn})
    read_until(s, lambda: with_token(rcv, msg) or s.error_frames() or rcv.remote_detach is not None, REACTION)
    got = with_token(rcv, msg)
    detach = s.frames("detach", rcv.remote_handle)
    if got:
        st = got[0].transfer.state
        ok = isinstance(st, spec.TransactionalState) and st.txn_id is not None and bytes(st.txn_id) == txn
        observed = f"transfer with state {show(st)}"
    elif detach:
        ok = error_condition(detach[0].performative) == NOT_IMPLEMENTED
        observed = describe(detach[0])
    else:
        ok = False
        observed = f"neither a transfer nor a detach: {describe_arrivals(s)}"
    ctx.record(ok, expected=f"the message with transactional-state(txn-id={show(txn)}), or a detach with "
                            f"{NOT_IMPLEMENTED}", observed=observed)


def _acquiring(ctx: Context, s: Session, addr: str, txn: bytes, what: str) -> Receiver:
    """A receiving link from ``addr`` granted one credit with a flow naming ``txn`` (4.4.3); skips the
    case when the broker detaches it (no transactional acquisition: judged by
    ``transactional-acquisition``) or sends nothing."""
    rcv = receiver_from(ctx, s, spec.Source(address=addr), what)
    rcv.grant(1, properties={Symbol("txn-id"): txn})
    read_until(s, lambda: rcv.transfers() or s.error_frames() or rcv.remote_detach is not None, REACTION)
    if not rcv.transfers():
        ctx.skip(f"the broker does not acquire transactionally: {describe_arrivals(s)}")
    return rcv


def _in_txn(state: Any, txn: bytes) -> bool:
    return isinstance(state, spec.TransactionalState) and state.txn_id is not None and bytes(state.txn_id) == txn


@case("amqp10/4.4.2/retirement-other-transaction",
      title="an outcome in one transaction for a delivery acquired in another terminates the control link "
            "with transaction-rollback",
      clauses=("amqp10:4.4.2/1", "amqp10:4.4.2/2"))
def retirement_other_transaction(ctx: Context) -> None:
    """Declares two transactions T1 and T2, has a message transactionally acquired in T1 (a flow
    naming T1's txn-id; skipped where the broker does not acquire transactionally or the transfer
    is not associated with T1), then sends a disposition of that delivery with
    transactional-state(T2, accepted): "the delivery MUST NOT be associated with a different
    non-discharged transaction than the outcome. If this happens then the control link MUST be
    terminated with a transaction-rollback error." """
    s = begin(ctx.connect())
    control = controller(ctx, s)
    first, second = declared(ctx, control), declared(ctx, control)
    if first == second:
        ctx.skip(f"the coordinator declared the same txn-id twice ({show(first)})")
    addr = address(ctx)
    msg = token_octets(ctx, "acquired")
    publish(ctx, addr, msg)
    rcv = _acquiring(ctx, s, addr, first, "rcv")
    got = with_token(rcv, msg)
    if not got or not _in_txn(got[0].transfer.state, first):
        ctx.skip("the delivery is not associated with the transaction its flow named: "
                 + (f"state {show(got[0].transfer.state)}" if got else describe_arrivals(s)))
    rcv.settle(int(got[0].transfer.delivery_id), txn_state(second, spec.Accepted()), settled=False)
    obs = s.peer.observe(REACTION, stop=lambda f: control.detach_error([f]) is not None)
    ended = control.detach_error(obs.frames())
    ctx.record(ended is not None and error_condition(ended.performative) == ROLLBACK,
               expected=f"the control link terminated (detach, end or close) with {ROLLBACK}",
               observed=obs.describe())


@case("amqp10/4.4.3/discharge-mid-acquisition",
      title="a rollback while a transactionally acquired message is partly sent finishes or aborts it first, "
            "and the acquisition is undone",
      clauses=("amqp10:4.4.3/3", "amqp10:4.4.3/4"))
def discharge_mid_acquisition(ctx: Context) -> None:
    """Opens with max-frame-size 512 (the minimum) and a session incoming-window of 1, so a
    4 KiB message is sent in many transfer frames and the broker must stop after the first. A
    fresh node holds the message; a flow naming txn T acquires it; after its first transfer frame
    (more=true) comes, Discharge(T, fail=true) is sent, then the window is opened. The broker
    "MUST abort or complete sending the remainder of the message before completing the
    discharge" (4.4.3/4): the delivery's last frame (more=false, or aborted) comes before the
    discharge's accepted. And "the fate of the acquisition is fully decided by the discharge"
    (4.4.3/3): rolled back, the message is not acquired, so a second link gets it."""
    s = begin(ctx.connect(max_frame_size=MIN_MAX_FRAME_SIZE), incoming_window=1)
    control = controller(ctx, s)
    txn = declared(ctx, control)
    addr = address(ctx)
    msg = token_octets(ctx, "large")
    publish(ctx, addr, Message(body=msg * (4096 // len(msg) + 1)))
    rcv = _acquiring(ctx, s, addr, txn, "rcv")
    head = rcv.transfers()[0].performative
    if not head.more:
        ctx.skip(f"the delivery came whole in one transfer frame ({len(rcv.transfers())} frames): not mid-message")
    if not _in_txn(head.state, txn):
        ctx.skip(f"the delivery is not associated with the transaction its flow named: state {show(head.state)}")
    discharge = control.send(spec.Discharge(txn_id=txn, fail=True))
    s.incoming_window = WINDOW
    s.flow()
    d, others = await_disposition(s, discharge, timeout=REACTION)
    mine = [f.performative for f in others if performative_name(f) == "transfer" and f.channel == s.remote
            and int(f.performative.handle) == rcv.remote_handle]
    finished = [t for t in mine if t.aborted or not t.more]
    state = None if d is None else d.state
    ctx.record(isinstance(state, spec.Accepted) and bool(finished), what="the remainder sent or aborted first",
               expected="the delivery's last transfer frame (more=false) or an aborted one, then the discharge's "
                        "disposition with accepted",
               observed=f"{len(mine)} more transfer frames of the delivery before the discharge's outcome "
                        f"{show(state)}" + (f" (the last: more={finished[-1].more}, aborted={finished[-1].aborted})"
                                            if finished else "") + f"; {describe_arrivals(s)}")
    if not isinstance(state, spec.Accepted):
        return
    other = receiver_from(ctx, s, spec.Source(address=addr), "second")
    other.grant(1)
    read_until(s, lambda: with_token(other, msg) or s.error_frames())
    ctx.record(bool(with_token(other, msg)), what="the rolled-back acquisition is undone",
               expected="the message delivered again on a second link after the rollback",
               observed=f"{len(with_token(other, msg))} delivery on the second link; {describe_arrivals(s)}")


# ============================================================================ 4.1 the control link

@case("amqp10/4.1/control-link-close-rolls-back", title="closing the control link rolls back its transactions",
      guideline=CONTROL_CLOSE_DOC)
def control_close_rolls_back(ctx: Context) -> None:
    """Declares a transaction, posts message A transactionally to a fresh node, closes the
    control link (detach closed=true), then posts a sentinel: a receiving link gets the
    sentinel and must not get A."""
    _posting_undone(ctx, lambda control, _txn: control.link.detach(closed=True, wait=True),
                    "the message posted in the transaction")
