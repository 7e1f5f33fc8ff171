"""Spec 2.6.12 Transferring A Message and 2.6.14 Transferring Large Messages (transport).

A delivery is identified by a delivery-tag unique among the unsettled ones of its link; the
receiver tells the sender the outcome with a disposition. A message too large for one frame
goes as several transfer frames with ``more`` set on all but the last; deliveries on one link
are never interleaved (they may be across links); and a delivery can be aborted, after which
the receiver discards what it got of it.

Whether an aborted or malformed delivery reached the node is seen from a fresh connection:
a marker message is put behind it and the node is read until the marker; what comes before
the marker is what the broker kept.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.peer.session10 import begin, fetch, message_octets, publish
from amqpspec.wire.amqp10 import AMQPFrame, Message, spec

from ._common import WAIT, address, link_name, tag, token
from ._links import outcome_for, settled_outcome, texts
from ._sessions import ends, ends_or_attach, marker_link

OUTCOMES = (spec.Accepted, spec.Rejected, spec.Released, spec.Modified)
SMALL_FRAME = 512               # spec.MIN_MAX_FRAME_SIZE: every peer accepts frames this large

G_OUTCOME = ("Once the receiving application has finished processing the message, it indicates to the link endpoint "
             "a terminal delivery state that reflects the outcome of the application processing (successful or "
             "otherwise) and thus the outcome which the receiver wishes to occur at the sender. This state is "
             "communicated back to the sender via the disposition frame.")
G_FRAGMENTS = ("Message data is carried as the payload in frames containing the transfer performative. Messages can "
               "be fragmented across several transfer frames as indicated by the more flag of the transfer performative.")


def no_error(obs: Any, s: Any) -> bool:
    """Nothing in the observation ends the session, closes the connection or detaches a link with an error."""
    bad = [f for f in obs.performatives(None, s.remote) if performative_name(f) in ("end", "detach")
           and (performative_name(f) == "end" or error_condition(f.performative))]
    return not bad and obs.close is None and not obs.closed


# ============================================================================ 2.6.12
@case("amqp10/2.6.12/outcome-disposition", title="an unsettled transfer is answered with a disposition carrying its outcome",
      clauses=("amqp10:2.7.6/1",), level=Level.SHOULD, guideline=G_OUTCOME)
def outcome_disposition(ctx: Context) -> None:
    """Sends one unsettled message on a sending link. Passes when the broker sends a disposition covering its
    delivery-id with a terminal state (accepted, rejected, released or modified; guideline), and every
    disposition it sends on the session has role=receiver: it is about deliveries of links on which the
    broker receives (2.7.6, MUST)."""
    s = begin(ctx.connect())
    link = s.sender(address(ctx), name=link_name(ctx, "snd"))
    delivery_id = link.send(token(ctx))
    stop_end = ends(s)
    obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (
        performative_name(f) == "disposition" and f.channel == s.remote and f.performative.state is not None
        and isinstance(f.performative.state, OUTCOMES)))
    states = [d.state for d in outcome_for(obs, s.remote, delivery_id)]
    ctx.record(any(isinstance(st, OUTCOMES) for st in states),
               expected=f"a disposition covering delivery-id {delivery_id} with an outcome", observed=obs.describe(),
               what="the outcome comes back", guideline=G_OUTCOME)
    dispositions = [f.performative for f in obs.performatives("disposition", s.remote)]
    if dispositions:
        ctx.record(all(bool(d.role) is spec.Role.RECEIVER for d in dispositions),
                   expected="role=receiver on the broker's dispositions (its links here only receive)",
                   observed=obs.describe(), what="role of the dispositions", clauses=("amqp10:2.7.6/1",))


@case("amqp10/2.6.12/delivery-tags", title="the broker's deliveries carry delivery-tags unique among the unsettled ones",
      clauses=("amqp10:2.6.12/1", "amqp10:2.6.12/2"))
def delivery_tags(ctx: Context) -> None:
    """Puts three messages in a node and receives them on one link without settling any. Passes when each
    delivery carries a delivery-tag (2.6.12/1) and the tags of the deliveries unsettled together are all
    different (2.6.12/2)."""
    addr = address(ctx)
    publish(ctx, addr, *(token(ctx, f"m{i}") for i in range(3)))
    s = begin(ctx.connect())
    got = s.receiver(addr, name=link_name(ctx, "rcv"), credit=3).receive(3)
    tags = [r.transfer.delivery_tag for r in got]
    shown = ", ".join(f"id {r.transfer.delivery_id}: tag {None if t is None else bytes(t).hex()} "
                      f"settled={r.transfer.settled}" for r, t in zip(got, tags))
    ctx.record(len(got) == 3 and all(t is not None for t in tags), expected="3 deliveries, each with a delivery-tag",
               observed=shown or "no delivery", what="each delivery has a tag", clauses=("amqp10:2.6.12/1",))
    unsettled = [bytes(r.transfer.delivery_tag) for r in got if r.transfer.delivery_tag is not None and not r.transfer.settled]
    ctx.record(len(set(unsettled)) == len(unsettled), expected="distinct tags among the unsettled deliveries",
               observed=shown or "no delivery", what="tags are unique", clauses=("amqp10:2.6.12/2",))


@case("amqp10/2.6.12/mixed-settlement", title="a settled and an unsettled transfer on a mixed link are both delivered",
      clauses=("amqp10:2.8.2/1",))
def mixed_settlement(ctx: Context) -> None:
    """On a sending link in mode mixed (the default) sends one message settled (at-most-once) and one
    unsettled. Passes when both reach the node (read back on a fresh link) -- the sender may mix them."""
    addr = address(ctx)
    s = begin(ctx.connect())
    link = s.sender(addr, name=link_name(ctx, "snd"), snd_settle_mode=spec.SenderSettleMode.MIXED)
    first, second = token(ctx, "settled"), token(ctx, "unsettled")
    link.send(first, settled=True)
    last = link.send(second)
    s.peer.observe(WAIT, stop=settled_outcome(s, last))
    got = texts(fetch(ctx, addr, until=second, count=3))
    ctx.record(got == [first, second], expected=f"the node holds {first!r} then {second!r}", observed=f"read back: {got}")


# ============================================================================ 2.6.14
# weighs as a MAY: the three MAY clauses it cites decide (splitting a message is a sender's
# permission), G_FRAGMENTS has no keyword
@case("amqp10/2.6.14/multi-frame-to-broker", title="a message sent in several transfer frames is received whole",
      clauses=("amqp10:2.6.14/1", "amqp10:2.7.5/2", "amqp10:2.7.5/4"), guideline=G_FRAGMENTS)
def multi_frame_to_broker(ctx: Context) -> None:
    """Sends a 3000-octet message as transfer frames of at most 512 octets: more=true on all but the last,
    the continuation frames carrying only the handle (delivery-id and tag omitted, as 2.7.5 allows). Passes
    when the node then holds exactly that message."""
    addr = address(ctx)
    s = begin(ctx.connect())
    link = s.sender(addr, name=link_name(ctx, "snd"))
    piece = token(ctx, "big") + "-"
    body = piece * (3000 // len(piece) + 1)
    last = link.send(body, max_frame_size=SMALL_FRAME)
    s.peer.observe(WAIT, stop=settled_outcome(s, last))
    got = texts(fetch(ctx, addr, until=body, count=2, timeout=1.0))
    ctx.record(got == [body], expected=f"one message of {len(body)} characters, unchanged",
               observed=f"read back: {[t[:40] + ('...' if len(t) > 40 else '') + f' ({len(t)} chars)' for t in got]}",
               clauses=("amqp10:2.6.14/1", "amqp10:2.7.5/2", "amqp10:2.7.5/4"), guideline=G_FRAGMENTS)


@case("amqp10/2.6.14/multi-frame-from-broker", title="large deliveries come split, identified on the first frame, not interleaved",
      clauses=("amqp10:2.7.5/3", "amqp10:2.7.5/5", "amqp10:2.7.5/6", "amqp10:2.6.14/3"))
def multi_frame_from_broker(ctx: Context) -> None:
    """Puts two 2000-octet messages in a node and receives them on a connection whose max-frame-size is 512.
    Passes when the first transfer of each delivery carries delivery-id, delivery-tag and message-format
    (2.7.5, MUST); the frames of one delivery come one after the other, continuation frames repeating no
    other delivery-id or tag (2.6.14: not interleaved on a link); and the frames join into the two
    messages sent (guideline)."""
    addr = address(ctx)
    bodies = [(token(ctx, f"m{i}") + "-") * 100 for i in range(2)]
    publish(ctx, addr, *(Message(body=b.encode()) for b in bodies))
    s = begin(ctx.connect(max_frame_size=SMALL_FRAME))
    link = s.receiver(addr, name=link_name(ctx, "rcv"), credit=2)
    done = {"n": 0}

    def stop(f: Any) -> bool:
        if ends(s)(f):
            return True
        if performative_name(f) == "transfer" and f.channel == s.remote and not f.performative.more:
            done["n"] += 1
        return done["n"] >= 2

    obs = s.peer.observe(WAIT * 2, stop=stop)
    frames = [f for f in obs.performatives("transfer", s.remote) if int(f.performative.handle) == link.remote_handle]
    firsts: list[Any] = []
    interleaved: list[str] = []
    joined: list[bytes] = []
    current: Any = None
    for f in frames:
        t = f.performative
        if current is None:
            current = t
            firsts.append(t)
            joined.append(b"")
        else:
            if t.delivery_id is not None and t.delivery_id != current.delivery_id:
                interleaved.append(f"delivery-id {t.delivery_id} inside delivery {current.delivery_id}")
            if t.delivery_tag is not None and t.delivery_tag != current.delivery_tag:
                interleaved.append(f"delivery-tag {bytes(t.delivery_tag).hex()} inside delivery {current.delivery_id}")
        joined[-1] += bytes(f.payload)
        if not t.more or t.aborted:
            current = None
    ids_ok = bool(firsts) and all(t.delivery_id is not None and t.delivery_tag is not None and t.message_format is not None
                                  for t in firsts)
    ctx.record(ids_ok, expected="delivery-id, delivery-tag and message-format on the first transfer of each delivery",
               observed=obs.describe(), what="first transfer identifies the delivery",
               clauses=("amqp10:2.7.5/3", "amqp10:2.7.5/5", "amqp10:2.7.5/6"))
    ctx.record(not interleaved, expected="the frames of each delivery contiguous on the link",
               observed="; ".join(interleaved) or obs.describe(), what="no interleaving on one link",
               clauses=("amqp10:2.6.14/3",))
    got = []
    for data in joined:
        try:
            body = Message.decode(data).body
            got.append(bytes(body.value).decode() if isinstance(body, spec.Data) else repr(body))
        except Exception as exc:  # noqa: BLE001 - a broken message is the observation
            got.append(f"<undecodable: {exc}>")
    ctx.record(got == bodies and len(frames) > 2,
               expected="2 deliveries in more than one frame each, joining into the messages sent",
               observed=f"{len(frames)} transfer frames; {len(joined)} deliveries; same as sent: "
                        f"{[g == b for g, b in zip(got, bodies)]}; {obs.describe()}",
               what="frames join into the messages", guideline=G_FRAGMENTS)


@case("amqp10/2.6.14/aborted-discarded", title="the data of an aborted delivery is discarded",
      clauses=("amqp10:2.6.14/4", "amqp10:2.6.14/5"))
def aborted_discarded(ctx: Context) -> None:
    """Sends the first frame of a message (more=true, half its payload), then a transfer with aborted=true and
    no payload; then a marker message from another connection. Passes when the node's first message is the
    marker: the partial data was discarded (2.6.14/5, MUST). A separate check (2.6.14/4, MAY: a sender may
    abort) expects the abort to be taken without an error."""
    addr = address(ctx)
    s = begin(ctx.connect())
    link = s.sender(addr, name=link_name(ctx, "snd"))
    data = message_octets(token(ctx, "aborted"))
    did = s.take_delivery_id(frames=2)   # the two frames below: the delivery's first, then its abort
    s.peer.send(AMQPFrame(s.ch, spec.Transfer(handle=link.handle, delivery_id=did, delivery_tag=tag(ctx),
                                              message_format=0, more=True), data[: len(data) // 2]),
                AMQPFrame(s.ch, spec.Transfer(handle=link.handle, aborted=True)))
    mark = marker_link(ctx, s)
    obs = s.peer.observe(WAIT, stop=ends_or_attach(s, mark))
    ctx.record(no_error(obs, s), expected="no end, close or link error", observed=obs.describe(),
               what="an aborted delivery is taken without error", clauses=("amqp10:2.6.14/4",))
    marker = token(ctx, "marker")
    publish(ctx, addr, marker)
    got = texts(fetch(ctx, addr, until=marker))
    ctx.record(got[:1] == [marker], expected=f"the marker {marker!r} first: nothing of the aborted delivery",
               observed=f"read back: {got}", what="the aborted data is discarded", clauses=("amqp10:2.6.14/5",))


@case("amqp10/2.6.14/interleaved-across-links", title="multi-frame deliveries interleaved across two links are both received whole",
      clauses=("amqp10:2.6.14/2",))
def interleaved_across_links(ctx: Context) -> None:
    """Sends two 1500-octet messages on two sending links of one session, each in frames of at most 512
    octets, alternating the frames of the two deliveries (2.6.14 allows interleaving across links).
    Passes when each node then holds its message unchanged."""
    s = begin(ctx.connect())
    addrs = [address(ctx), address(ctx)]
    links = [s.sender(a, name=link_name(ctx, "snd")) for a in addrs]
    bodies = [(token(ctx, f"m{i}") + "-") * 60 for i in range(2)]
    per_link = [link.transfer_frames(body, tag=tag(ctx), max_frame_size=SMALL_FRAME)
                for link, body in zip(links, bodies)]
    order = [f for pair in zip(*per_link) for f in pair]
    longest = max(per_link, key=len)
    order += longest[len(min(per_link, key=len)):]
    s.peer.send(*order)
    s.peer.observe(WAIT, stop=settled_outcome(s, links[1].ids[-1]))
    for i, (addr, body) in enumerate(zip(addrs, bodies)):
        got = texts(fetch(ctx, addr, until=body, count=2, timeout=1.0))
        ctx.record(got == [body], expected=f"node {i + 1} holds its {len(body)}-character message unchanged",
                   observed=f"read back: {[g[:30] + '...' for g in got]} ({[len(g) for g in got]} characters)",
                   what=f"link {i + 1}")
