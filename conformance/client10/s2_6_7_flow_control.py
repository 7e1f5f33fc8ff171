"""2.6.7 Flow control, from the client's side (2.7.4 Flow).

As sender the client keeps link-credit by the formula "link-credit(snd) := delivery-count(rcv)
+ link-credit(rcv) - delivery-count(snd)" (2.6.7/3) and "If the link-credit is less than or
equal to zero ... a sender MUST NOT send more messages" (2.6.7/9): granted 1, it sends one;
when the broker withdraws the credit it has left (a flow with link-credit 0), it stops.
"If the sender's drain flag is set and there are no available messages, the sender MUST
advance its delivery-count until link-credit is zero, and send its updated flow state to
the receiver" (2.6.7/11). As receiver, its flows carry the sender's delivery-count: "this
field MUST be set to the last known value of the corresponding sending endpoint" (2.7.4/5) --
our attach starts it at 1000, not 0; and "In the event that the receiving link endpoint has not
yet seen the initial attach frame from the sender this field MUST NOT be set" (2.7.4/6): a
flow the client pipelines before our attach carries none. Any other value breaks one of the
two (which one depends on when the client read our attach: both are cited). Started at
2^32 - 1 the count wraps (delivery-count is a sequence-no, RFC-1982 serial arithmetic). Asked to echo, "the receiver SHOULD send its state at
the earliest convenient opportunity" (2.7.4/10).
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.peer.session10 import Sender
from amqpspec.peer.amqp10 import performative_name
from amqpspec.peer.session10 import seq_add, seq_diff

from ._client import (QUICK, at_most_one_delivery, await_receiver, await_sender, describe_frames, drained_to, named,
                      open_conversation, uncredited_sender, unmet)

START = 1000   # our sending links' initial-delivery-count in the receiver cases


def _link_flows(obs, cs_channel: int, handle: int) -> list:  # type: ignore[no-untyped-def, type-arg]
    return [f for f in named(obs.received, "flow", cs_channel) if f.performative.handle is not None
            and int(f.performative.handle) == handle]


@case("amqp10/2.6.7/client-sender-respects-credit", role="client",
      title="granted link-credit 1 (and no more for 2 s), the client sends one transfer of its 3 messages",
      clauses=("amqp10:2.6.7/9",))
def respects_credit(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=3, timeout=8, responder={"credit": 1, "replenish": False})
    _, rcv = await_receiver(p)
    at_most_one_delivery(ctx, p, rcv, "at most 1 delivery on credit 1", show_all=True)


@case("amqp10/2.6.7/client-sender-stops-on-withdrawn-credit", role="client", timeout=12.0,
      title="credit withdrawn by a flow with link-credit 0 (the session window reopened in the same flow): the client sends nothing more until new credit",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def withdrawn_credit(ctx: Context) -> None:
    # a session window of 1 holds the client after its first transfer, so that nothing can be in
    # flight when the credit is withdrawn; the flow that withdraws it reopens the window: from
    # then on only the link-credit (0) stops the client
    p, rcv, cs = _held_after_first(ctx, {"credit": 5, "settle_deliveries": False},
                                   " (it sent more: see amqp10/2.5.6/client-window-of-one)")
    rcv.grant(0)   # withdrawn: delivery-count(rcv) + 0 - delivery-count(snd) = 0; the window is open again
    d = rcv.received[0]
    if not d.transfer.settled:
        p.peer.send(rcv.disposition_frame(int(d.transfer.delivery_id), settled=True))
    before = len(rcv.received)
    obs = p.serve(2.0)
    more = len(rcv.received) - before
    ctx.record(more == 0, expected="no delivery after the flow with link-credit 0",
               observed=f"{more} more delivery(ies): {describe_frames(named(obs.received, 'transfer'))}")
    p.responder.settle_deliveries = p.responder.replenish = p.responder.open_window = True
    for late in rcv.received[before:]:
        if not late.transfer.settled:
            p.peer.send(rcv.disposition_frame(int(late.transfer.delivery_id), settled=True))
    rcv.grant(5)
    p.serve()
    p.finish()


@case("amqp10/2.6.7/client-sender-answers-drain", role="client", timeout=12.0,
      title="asked to drain with credit left and nothing more to send, the client advances delivery-count and says so in a flow",
      clauses=("amqp10:2.6.7/11",))
def answers_drain(ctx: Context) -> None:
    p, rcv = uncredited_sender(ctx, 1)
    cs = p.responder.session()
    assert cs is not None
    rcv.grant(5, drain=True)
    limit = seq_add(rcv.delivery_count, 5)
    obs = p.serve(QUICK * 2, stop=drained_to(limit))
    flows = [f for f in _link_flows(obs, cs.channel, int(rcv.remote_handle or 0))
             if f.performative.delivery_count is not None and seq_diff(int(f.performative.delivery_count), limit) >= 0]
    ok = bool(flows) and not (flows[0].performative.link_credit or 0)
    ctx.record(ok, expected=f"a flow for the link with delivery-count {limit} (all credit used) and link-credit 0",
               observed=describe_frames(named(obs.received, "flow") + named(obs.received, "transfer"))
               + f"; {obs.end}")
    p.serve()
    p.finish()


def _receiver_delivery_count(ctx: Context, start: int) -> Any:
    p = open_conversation(ctx, "receive", count=2, credit=1,
                          responder={"attach_fields": {"initial_delivery_count": start}})
    p.responder.preload("amqpspec-q", ["one", "two"])
    obs = p.serve()
    snd = next(iter(p.responder.ever(Sender)), None)
    if snd is None:
        unmet("a receiving link from the client", obs)
    cs = p.responder.session()
    assert cs is not None
    flows = _link_flows(obs, cs.channel, int(snd.remote_handle or 0))
    sent = len(snd.ids)
    wrong = [f for f in flows if f.performative.delivery_count is not None
             and not 0 <= seq_diff(int(f.performative.delivery_count), start) <= sent]
    last = seq_add(start, sent)
    ctx.record(not wrong, expected=f"delivery-count from {start} to {last} (serial), or absent (before our attach)",
               observed=describe_frames(wrong) if wrong else f"{len(flows)} flow(s), each with a known delivery-count")
    p.finish()
    return snd


@case("amqp10/2.7.4/client-receiver-delivery-count", role="client",
      title="the client's flows for its receiving link carry the sender's delivery-count (started at 1000), or none before our attach",
      clauses=("amqp10:2.7.4/5", "amqp10:2.7.4/6"))
def receiver_delivery_count(ctx: Context) -> None:
    _receiver_delivery_count(ctx, START)


@case("amqp10/2.7.4/client-receiver-delivery-count-wraps", role="client",
      title="started at 4294967295, the sender's delivery-count in the client's flows wraps to 0 and 1 (RFC-1982), never 4294967296",
      clauses=("amqp10:2.7.4/5", "amqp10:2.7.4/6"))
def receiver_delivery_count_wraps(ctx: Context) -> None:
    snd = _receiver_delivery_count(ctx, 0xFFFFFFFF)
    # with link-credit 1 the second message needs a flow sent after the wrap: a client that
    # cannot count past 2^32 - 1 never sends it
    ctx.record(len(snd.ids) >= 2, what="the client grants credit again after its count wrapped",
               expected="a second delivery (the client's flow after the first one carried the wrapped count)",
               observed=f"{len(snd.ids)} delivery(ies) sent; client flows: "
                        f"{describe_frames(snd.session.frames('flow', snd.remote_handle))}")


@case("amqp10/2.7.4/client-answers-echo", role="client",
      title="a flow with echo=true for the client's receiving link is answered with the client's flow state",
      clauses=("amqp10:2.7.4/10",))
def answers_echo(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=6)
    _, snd = await_sender(p)
    cs = p.responder.session()
    assert cs is not None
    handle = int(snd.remote_handle or 0)
    p.peer.send(cs.ours.flow_frame(snd.handle, delivery_count=snd.delivery_count, link_credit=snd.link_credit,
                                   available=0, echo=True))
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "flow" and f.performative.handle is not None
                  and int(f.performative.handle) == handle)
    got = _link_flows(obs, cs.channel, handle)
    ctx.record(bool(got), expected="a flow for the link from the client", observed=describe_frames(obs.received))
    p.responder.preload("amqpspec-q", ["after echo"])
    p.responder.pump(snd)
    p.serve()
    p.finish()


@case("amqp10/2.6.7/client-sender-credit-without-delivery-count", role="client", timeout=12.0,
      title="a flow granting link-credit 1 without delivery-count, after the client's first transfer, leaves it no credit (counted from its first delivery-count)",
      clauses=("amqp10:2.6.7/4", "amqp10:2.6.7/9"))
def credit_without_delivery_count(ctx: Context) -> None:
    # as in the withdrawn-credit case, a session window of 1 holds the client after its first
    # transfer; then a flow without delivery-count grants 1: delivery-count(rcv) is taken as the
    # sender's first (initial-delivery-count), so its link-credit is init + 1 - (init + 1) = 0
    _credit_after_first(ctx, None)


@case("amqp10/2.6.7/client-sender-credit-from-stale-delivery-count", role="client", timeout=12.0,
      title="a flow granting link-credit 1 with the delivery-count the sender had before its first transfer leaves it no credit",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_from_stale_delivery_count(ctx: Context) -> None:
    # the receiver's delivery-count lags one delivery behind (a flow it wrote before the transfer
    # arrived): link-credit(snd) = init + 1 - (init + 1) = 0, not the 1 written in the flow
    _credit_after_first(ctx, "initial")


def _held_after_first(ctx: Context, responder: dict[str, Any], more_note: str) -> tuple[Any, Any, Any]:
    """A sending client held after its first transfer by a session incoming-window of 1, our
    window then opened again (locally: the next flow carries it); returns the conversation, our
    receiver and the session. ``more_note`` ends the unmet text when the client sent more."""
    p = open_conversation(ctx, "send", count=3, timeout=9,
                          responder={"replenish": False, **responder,
                                     "begin_fields": {"incoming_window": 1}, "open_window": False})
    _, rcv = await_receiver(p)
    first = p.serve(QUICK * 1.5, stop=lambda _: len(rcv.received) >= 1)
    if not rcv.received:
        unmet("a first delivery from the client", first)
    p.serve(0.3)
    if len(rcv.received) > 1:
        unmet("the client held by a session incoming-window of 1" + more_note, first)
    cs = p.responder.session()
    assert cs is not None
    cs.ours.incoming_window = 100
    return p, rcv, cs


def _credit_after_first(ctx: Context, delivery_count: str | None) -> None:
    p, rcv, cs = _held_after_first(ctx, {"credit": 1}, "")
    stale = None if delivery_count is None else int(rcv.init)
    p.peer.send(cs.ours.flow_frame(rcv.handle, delivery_count=stale, link_credit=1))
    before = len(rcv.received)
    obs = p.serve(2.0)
    more = len(rcv.received) - before
    init = int(rcv.init)
    ctx.record(more == 0, expected=f"no transfer: credit = {init} (the receiver's delivery-count: "
               f"{'unspecified, so the initial one' if stale is None else 'as written'}) + 1 - {init + 1} = 0",
               observed=f"{more} more delivery(ies): {describe_frames(named(obs.received, 'transfer'))}")
    p.responder.replenish = p.responder.open_window = True
    p.responder.credit = 5
    rcv.grant(5)
    p.serve()
    p.finish()


@case("amqp10/2.7.4/client-sender-flow-delivery-count", role="client",
      title="the client's sending link answers an echo with a flow carrying its current delivery-count",
      clauses=("amqp10:2.7.4/4",))
def sender_flow_delivery_count(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=2, timeout=6, responder={"credit": 1, "replenish": False})
    _, rcv = await_receiver(p)
    got = p.serve(QUICK, stop=lambda _: len(rcv.received) >= 1)
    if not rcv.received:
        unmet("a first delivery from the client", got)
    cs = p.responder.session()
    assert cs is not None
    handle = int(rcv.remote_handle or 0)
    p.peer.send(cs.ours.flow_frame(rcv.handle, delivery_count=rcv.delivery_count, link_credit=0, echo=True))
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "flow" and f.performative.handle is not None
                  and int(f.performative.handle) == handle)
    flows = _link_flows(obs, cs.channel, handle)
    if not flows:
        p.responder.replenish = True
        rcv.grant(5)
        p.serve()
        p.finish()
        raise Skip("the client's sender did not answer the echo (see amqp10/2.7.4/client-answers-echo)")
    expected = seq_add(rcv.init, len(rcv.received))
    dc = flows[0].performative.delivery_count
    ctx.record(dc is not None and int(dc) == expected, expected=f"delivery-count {expected}",
               observed=flows[0].summary()[:200])
    p.responder.replenish = True
    rcv.grant(5)
    p.serve()
    p.finish()
