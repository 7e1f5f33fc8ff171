"""2.6.12 Transferring messages, 2.6.14 Message splitting, 2.7.5 Transfer: the client as receiver and sender.

As receiver on a link whose rcv-settle-mode is first: "this indicates that the receiver MUST
settle the delivery once it has arrived without waiting for the sender to settle first"
(2.7.5/13) -- an accepted message is settled in the client's disposition. An aborted
delivery: "the receiver MUST discard the message data that was transferred prior to the
abort" (2.6.14/5) -- the application sees the next message, never the aborted one. As
sender: "Each delivery MUST be identified by a delivery-tag" (2.6.12/1), "The delivery-id
MUST be supplied on the first transfer of a multi-transfer delivery" (2.7.5/3), and "The
delivery-tag MUST be unique amongst all deliveries that could be considered unsettled by
either end of the link" (2.6.12/2): we hold our settlement back, so that each delivery
stays unsettled while the client sends the next.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.session10 import Receiver, Sender
from amqpspec.peer.session10 import covers

from ._aborted import abort_then_second
from ._client import QUICK, await_receiver, await_sender, client_closed, describe_frames, named, \
    open_conversation, unmet


@case("amqp10/2.7.5/client-receiver-settles-first", role="client",
      title="on a link with rcv-settle-mode first the client settles each accepted delivery itself",
      clauses=("amqp10:2.7.5/13",))
def settles_first(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=2, credit=5, ack=True,
                          responder={"attach_fields": {"rcv_settle_mode": 0}})
    p.responder.preload("amqpspec-q", ["one", "two"])
    obs = p.serve()
    snd = next(iter(p.responder.ever(Sender)), None)
    if snd is None or not snd.ids:
        unmet("deliveries to the client", obs)
    cs = p.responder.session()
    assert cs is not None and snd is not None
    settled = [f.performative for f in named(obs.received, "disposition") if f.performative.settled]
    unsettled = [did for did in snd.ids if not any(covers(d, did) for d in settled)]
    ctx.record(not unsettled, expected=f"a settled disposition for each of deliveries {snd.ids}",
               observed=f"not settled by the client: {unsettled}" if unsettled else
               describe_frames(named(obs.received, "disposition")))
    p.finish()


@case("amqp10/2.6.14/client-discards-aborted-delivery", role="client",
      title="a delivery aborted after its first frame is not given to the application; the next message is",
      clauses=("amqp10:2.6.14/5",))
def discards_aborted(ctx: Context) -> None:
    got, obs = abort_then_second(ctx, more=False)
    ok = bool(got) and got[0] == "second"
    ctx.record(ok, expected="the application's first message is 'second' (the aborted one discarded)",
               observed=f"delivered {got[:2]}; {client_closed(obs)}")


@case("amqp10/2.6.12/client-sender-delivery-tags", role="client",
      title="every delivery the client sends has a delivery-tag and a delivery-id on its first transfer",
      clauses=("amqp10:2.6.12/1", "amqp10:2.7.5/3"))
def tags_and_ids(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=3)
    obs = p.serve()
    rcv = next(iter(p.responder.ever(Receiver)), None)
    if rcv is None or not rcv.received:
        unmet("deliveries from the client", obs)
    assert rcv is not None
    wrong = [d.transfer for d in rcv.received if d.transfer.delivery_tag is None or d.transfer.delivery_id is None]
    ctx.record(not wrong, expected="delivery-tag and delivery-id on each delivery's first transfer",
               observed=f"{len(wrong)} without: {wrong[:2]}" if wrong else f"{len(rcv.received)} deliveries, each with both")
    p.finish()


@case("amqp10/2.6.12/client-unique-delivery-tags", role="client", timeout=12.0,
      title="while its deliveries stay unsettled (we hold settlement back) the client never reuses a delivery-tag",
      clauses=("amqp10:2.6.12/2",))
def unique_tags(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=3, timeout=9, responder={"settle_deliveries": False, "credit": 10})
    _, rcv = await_receiver(p)
    obs = p.serve(2.0)
    tags = [bytes(d.transfer.delivery_tag or b"") for d in rcv.received]
    dup = sorted({t for t in tags if tags.count(t) > 1})
    ctx.record(not dup, expected="distinct delivery-tags among the unsettled deliveries",
               observed=f"repeated tag(s) {dup[:3]} among {len(tags)}" if dup else
               f"{len(tags)} unsettled delivery(ies), tags distinct; {describe_frames(named(obs.received, 'transfer'))}")
    p.responder.settle_deliveries = True
    for d in rcv.received:
        if not d.transfer.settled:
            p.peer.send(rcv.disposition_frame(int(d.transfer.delivery_id), settled=True))
    p.serve()
    p.finish()


__all__ = ["QUICK"]


@case("amqp10/2.7.5/client-multi-frame-transfers", role="client",
      title="with max-frame-size 512 each 2000-octet delivery starts with delivery-id, delivery-tag and message-format, and deliveries do not interleave",
      clauses=("amqp10:2.7.5/3", "amqp10:2.7.5/5", "amqp10:2.7.5/6", "amqp10:2.6.14/3"))
def multi_frame(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=2, body="f" * 2000, handshake={"max_frame_size": 512})
    obs = p.serve()
    transfers = [f.performative for f in named(obs.received, "transfer")]
    if len(transfers) < 3:
        unmet("a delivery split over several transfers", obs)
    problems: list[str] = []
    current = None   # the first transfer of the delivery under way
    for t in transfers:
        if current is None:
            current = t
            missing = [n for n, v in (("delivery-id", t.delivery_id), ("delivery-tag", t.delivery_tag),
                                      ("message-format", t.message_format)) if v is None]
            if missing:
                problems.append(f"first transfer without {', '.join(missing)}")
        elif t.delivery_id is not None and current.delivery_id is not None and int(t.delivery_id) != int(current.delivery_id):
            problems.append(f"delivery {t.delivery_id} began before delivery {current.delivery_id} ended (interleaved)")
        if not t.more or t.aborted:
            current = None
    ctx.record(not problems, expected="every delivery's first transfer complete, one delivery at a time",
               observed="; ".join(problems[:3]) or f"{len(transfers)} transfers, all as the rules ask")
    p.finish()


@case("amqp10/2.7.5/client-unset-settled-is-unsettled", role="client",
      title="a delivery whose transfer leaves settled unset is unsettled: the accepting client settles it in a disposition",
      clauses=("amqp10:2.7.5/7",))
def unset_settled(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, ack=True,
                          responder={"attach_fields": {"rcv_settle_mode": 0}})
    _, snd = await_sender(p)
    did = snd.send("unset settled flag", settled=None)
    obs = p.serve()
    settled = [f for f in named(obs.received, "disposition") if covers(f.performative, did)]
    ctx.record(bool(settled), expected=f"a disposition from the client covering delivery {did}",
               observed=describe_frames(named(obs.received, "disposition")) if settled else client_closed(obs))
