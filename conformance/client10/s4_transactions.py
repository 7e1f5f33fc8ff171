"""4 Transactions, from the client's side: the client as transactional controller.

The ``tx`` workload attaches a control link to our coordinator, declares, sends ``count``
messages in the transaction and discharges it; our responder answers as a transactional
resource (a declared outcome with a fresh txn-id, accepted for the discharge of a live
transaction). What binds the controller, and what the wire shows of it:

- 4.2/2: the declare "MUST NOT be sent settled as the sender is REQUIRED to receive and interpret
  the outcome of the declare" -- the transfer carrying it has settled unset or false.
- 4.2/7: controllers "SHOULD establish a control link that allows the rejected outcome" -- the
  source of the client's attach to the coordinator lists amqp:rejected:list among its outcomes.
  Of a source without outcomes, 3.5.3 says "the default-outcome will be assumed for all message
  transfers (if the default-outcome is not set, and no outcomes are provided, then the accepted
  outcome MUST be supported by the source)": such a link allows rejected only when its
  default-outcome is rejected; with neither, accepted is all it promises.
- 4.4.1/1: a transfer the controller associates with the transaction carries a
  transactional-state with "the appropriate transaction identifier": the txn-id we declared.
- 4.4.1/2: a delivery split over several transfer frames: "all frames MUST be explicitly
  associated with the same transaction" -- every frame, continuation frames too, carries it
  (we announce max-frame-size 512 and ask for a body that does not fit one frame).
- 4.5.2/2: global-id "MUST NOT be set if the coordinator does not have the
  distributed-transactions capability": our coordinator announces none.
- 4.4.4/7: "The controller SHOULD settle any outstanding unsettled deliveries in a timely fashion
  after the transaction has discharged": we tell the transactional outcome of each message
  without settling it, accept the discharge, and look for the client's settlement before it
  closes (a delivery the client had settled earlier is not outstanding).

Not here: 4.4.3/2 and 4.4.4/9 bind a controller that acquires (receives) in a transaction, which
the tx workload does not do.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.server10_responder import allows_rejected
from amqpspec.peer.session10 import Receiver, covers
from amqpspec.wire.amqp10 import Symbol, spec

from ._client import Play, describe_frames, named, open_conversation, unmet

SPLIT_FRAME_SIZE = 512          # MIN-MAX-FRAME-SIZE: a 2000-character body needs several frames
SPLIT_BODY = "t" * 2000


def _coordinator(p: Play) -> Receiver | None:
    return next((lk for lk in p.responder.ever(Receiver) if lk.fields.get("coordinator")), None)


def _control(p: Play, kind: type) -> list[Any]:
    """The deliveries the client sent to our coordinator holding a ``kind`` (Declare or Discharge)."""
    return [d for d, request in p.responder.txn_requests if isinstance(request, kind)]


def _declared(p: Play, obs: Any) -> bytes:
    """The txn-id we gave the client's first declare (the case errs when it never declared)."""
    live = list(p.responder.transactions)
    if not live:
        unmet("a declare from the client on a coordinator link", obs)
    return live[0]


def _txn_transfers(p: Play, obs: Any) -> list[Any]:
    """Every transfer frame the client sent on a link other than the coordinator."""
    coordinator = _coordinator(p)
    ctl = None if coordinator is None or coordinator.remote is None else int(coordinator.remote.handle)
    return [f for f in named(obs.received, "transfer") if ctl is None or int(f.performative.handle) != ctl]


def _names(state: Any, txn_id: bytes) -> bool:
    return isinstance(state, spec.TransactionalState) and isinstance(state.txn_id, (bytes, bytearray)) \
        and bytes(state.txn_id) == txn_id


@case("amqp10/4.2/client-declare-unsettled", role="client",
      title="the client sends its declare unsettled (it must receive and interpret the outcome)",
      clauses=("amqp10:4.2/2",))
def declare_unsettled(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", count=1)
    obs = p.serve()
    declares = _control(p, spec.Declare)
    if not declares:
        unmet("a declare from the client on a coordinator link", obs)
    settled = [d for d in declares if d.transfer.settled]
    ctx.record(not settled, expected="each declare transfer with settled unset or false",
               observed=f"{len(settled)} of {len(declares)} declare(s) sent settled" if settled
               else f"{len(declares)} declare(s), unsettled")
    p.finish()


@case("amqp10/4.2/client-control-link-allows-rejected", role="client",
      title="the client's control link to the coordinator lists the rejected outcome in its source",
      clauses=("amqp10:4.2/7",))
def control_link_allows_rejected(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", count=1)
    obs = p.serve()
    coordinator = _coordinator(p)
    if coordinator is None or coordinator.remote is None:
        unmet("an attach from the client to a coordinator", obs)
    source = coordinator.remote.source
    outcomes = getattr(source, "outcomes", None)
    listed = [str(o) for o in (outcomes if isinstance(outcomes, (list, tuple)) else [outcomes] if outcomes else [])]
    default = getattr(source, "default_outcome", None)
    ctx.record(allows_rejected(coordinator), expected="source outcomes naming amqp:rejected:list (or none, with default-outcome rejected)",
               observed=f"source outcomes {listed or 'absent'}, default-outcome {default or 'absent'}")
    p.finish()


@case("amqp10/4.4.1/client-transfers-carry-txn-id", role="client",
      title="each message the client sends in its transaction carries a transactional-state with the txn-id declared",
      clauses=("amqp10:4.4.1/1",))
def transfers_carry_txn_id(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", count=2)
    obs = p.serve()
    txn_id = _declared(p, obs)
    transfers = [f for f in _txn_transfers(p, obs) if f.performative.delivery_id is not None]
    if not transfers:
        unmet("a transfer from the client after its declare", obs)
    wrong = [f for f in transfers if not _names(f.performative.state, txn_id)]
    ctx.record(not wrong, expected=f"transactional-state with txn-id {txn_id!r} on each",
               observed=describe_frames(wrong) if wrong else f"{len(transfers)} transfer(s) in the transaction")
    p.finish()


@case("amqp10/4.4.1/client-split-delivery-one-transaction", role="client",
      title="every frame of a transactional delivery split over several transfer frames names the transaction",
      clauses=("amqp10:4.4.1/2",))
def split_delivery(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", handshake=dict(max_frame_size=SPLIT_FRAME_SIZE), count=1, body=SPLIT_BODY)
    obs = p.serve()
    txn_id = _declared(p, obs)
    frames = _txn_transfers(p, obs)
    if len(frames) < 2:
        unmet(f"a delivery split over several transfer frames (max-frame-size {SPLIT_FRAME_SIZE})", obs)
    if not any(_names(f.performative.state, txn_id) for f in frames):
        unmet("a transfer associated with the transaction", obs)
    wrong = [f for f in frames if not _names(f.performative.state, txn_id)]
    ctx.record(not wrong, expected=f"transactional-state with txn-id {txn_id!r} on all {len(frames)} frames",
               observed=f"{len(wrong)} of {len(frames)} frames without it: {describe_frames(wrong, 3)}" if wrong
               else f"all {len(frames)} frames carry it")
    p.finish()


@case("amqp10/4.5.2/client-no-global-id", role="client",
      title="the client's declare carries no global-id: our coordinator has no distributed-transactions capability",
      clauses=("amqp10:4.5.2/2",))
def no_global_id(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", count=1, responder=dict(
        coordinator_capabilities=[Symbol("amqp:local-transactions")]))
    obs = p.serve()
    declares = [(d, r) for d, r in p.responder.txn_requests if isinstance(r, spec.Declare)]
    if not declares:
        unmet("a declare from the client on a coordinator link", obs)
    wrong = [r for _, r in declares if r.global_id is not None]
    ctx.record(not wrong, expected="declare without global-id",
               observed=f"global-id {wrong[0].global_id!r}" if wrong else f"{len(declares)} declare(s) without it")
    p.finish()


@case("amqp10/4.4.4/client-settles-after-discharge", role="client",
      title="deliveries of the transaction left unsettled by us are settled by the client once it is discharged",
      clauses=("amqp10:4.4.4/7",))
def settles_after_discharge(ctx: Context) -> None:
    p = open_conversation(ctx, "tx", count=2, responder=dict(settle_transactional=False))
    obs = p.serve()
    txn_id = _declared(p, obs)
    discharged = [d for d, r in p.responder.txn_requests if isinstance(r, spec.Discharge)]
    if p.responder.transactions.get(txn_id) != "committed" or not discharged:
        unmet("the client's discharge of its transaction, accepted", obs)
    ids = [int(f.performative.delivery_id) for f in _txn_transfers(p, obs)
           if f.performative.delivery_id is not None and not f.performative.settled]
    settling = [f.performative for f in named(obs.received, "disposition")
                if not bool(f.performative.role) and f.performative.settled]
    outstanding = [i for i in ids if not any(covers(d, i) for d in settling)]
    ctx.record(not outstanding, expected="each delivery of the transaction settled by the client",
               observed=f"delivery-id(s) {outstanding} never settled" if outstanding
               else f"{len(ids)} delivery(ies) settled")
    p.finish()

