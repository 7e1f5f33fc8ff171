"""Spec 3.4.6 Resuming Deliveries Using Delivery States (messaging), with 2.6.13 and 2.6.3.

The example of 3.4.6 pairs each state the receiver can hold for an unsettled delivery with what
the sender MUST then send; 2.6.13 sorts the tags of both unsettled maps into three categories.
Both directions are reachable black-box once the broker offers link recovery (``_recovery``):

* the broker as sender: we take deliveries unsettled from a durable source, suspend the link,
  and reattach listing one tag with a null state (the broker MUST resend the whole message with
  resume=true, flagged on the first frame of a multi-frame delivery), one as accepted (it MUST
  send a resuming transfer for the tag), one not at all (it MUST resend it as a new delivery,
  resume NOT set), and one tag it never sent (only the target holds it: it MUST be ignored);
* the broker as receiver: we send the first frames of a multi-frame delivery, suspend, reattach,
  and resume it from the start and from an offset inside what it holds: it MUST ignore the data it
  already received, so the message in the node is the one we sent.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.session10 import Delivery, SetupError, fetch
from amqpspec.wire.amqp10 import AMQPFrame, Message, UInt, ULong, spec
from amqpspec.wire.amqp10.composite import show

from ._common import WAIT, address, tag, token_octets
from ._recovery import (SMALL_FRAME, recoverable_sender, resume, small_session, suspend, their_map,
                        unsettled_deliveries)

TERMINAL = (spec.Accepted, spec.Rejected, spec.Released, spec.Modified)
BIG = 3000     # octets of a message body that spans several frames of SMALL_FRAME


def _by_tag(got: list[Delivery]) -> dict[bytes, list[Delivery]]:
    out: dict[bytes, list[Delivery]] = {}
    for d in got:
        if d.transfer.delivery_tag is not None:
            out.setdefault(bytes(d.transfer.delivery_tag), []).append(d)
    return out


def _brief(d: Delivery) -> str:
    t = d.transfer
    return (f"tag {bytes(t.delivery_tag or b'')!r} resume={bool(t.resume)} settled={bool(t.settled)} "
            f"state={show(t.state)} {len(d.payload)} octets in {d.frames} frame(s)")


@case("amqp10/3.4.6/broker-resumes-deliveries",
      title="on a resumed link the broker resends, resumes or restates each unsettled delivery by the receiver's state",
      clauses=("amqp10:2.6.3/3", "amqp10:2.7.3/7", "amqp10:2.6.13/3", "amqp10:2.6.13/4", "amqp10:2.6.13/7",
               "amqp10:2.7.5/16", "amqp10:2.7.5/17", "amqp10:3.4.6/1", "amqp10:3.4.6/9", "amqp10:3.4.6/2",
               "amqp10:3.4.6/5", "amqp10:3.4.6/6", "amqp10:3.4.6/11", "amqp10:3.4.6/12", "amqp10:3.4.6/15"),
      timeout=20.0)
def broker_resumes(ctx: Context) -> None:
    """Fills a node with three messages (the second of BIG octets), takes them unsettled on a link
    from a durable source (max-frame-size 512), suspends it, and reattaches with the unsettled map
    {second: null, third: accepted, unknown tag: null} -- the first left out. Checks the broker's
    attach lists its unsettled deliveries (or says the map is incomplete), then what it sends:
    the first resent whole with resume not set; the second resent whole with resume=true on its
    first frame; a resuming transfer for the third (its state, when terminal, the one its map
    gave); nothing for the unknown tag; resumes only for tags in its own map; no terminal state
    in its map for a delivery we never confirmed. Skipped where the broker offers no recovery."""
    addr = address(ctx, "resume")
    bodies = [token_octets(ctx, "first"), token_octets(ctx, "second").ljust(BIG, b"."), token_octets(ctx, "third")]
    s, rcv, got = unsettled_deliveries(ctx, addr, bodies)
    tags = [bytes(d.transfer.delivery_tag) for d in got]
    unknown = tag(ctx)
    suspend(ctx, rcv)
    mark = len(rcv.received)
    attach = resume(ctx, rcv, {tags[1]: None, tags[2]: spec.Accepted(), unknown: None})
    theirs = their_map(attach)
    complete = attach is not None and not attach.incomplete_unsettled
    ctx.record(attach is not None and (not complete or (theirs is not None and set(tags) <= set(theirs))),
               expected="the reattach lists the three deliveries it holds unsettled (or incomplete-unsettled=true)",
               observed=f"attach {show(attach)}", clauses=("amqp10:2.6.3/3",))
    if attach is None:
        return
    theirs = theirs or {}
    rcv.grant(5)
    s.quiet()
    after = rcv.received[mark:]
    seen = _by_tag(after)
    listing = "; ".join(_brief(d) for d in after) or "nothing"

    first = [d for d in after if d.payload == got[0].payload]
    resumed_first = [d for d in seen.get(tags[0], []) if d.transfer.resume]
    ctx.record(bool(first) and not any(d.transfer.resume for d in first) and not resumed_first,
               expected="the delivery the receiver forgot is resent whole, with resume not set",
               observed=listing, clauses=("amqp10:3.4.6/1", "amqp10:3.4.6/9", "amqp10:2.7.3/7"))
    second = seen.get(tags[1], [])
    ctx.record(any(d.transfer.resume and d.payload == got[1].payload for d in second),
               expected=f"the delivery both ends hold (receiver state null) resent whole under its tag, resume=true "
                        f"on its first frame ({len(got[1].payload)} octets in several frames)",
               observed=listing, clauses=("amqp10:2.6.13/4", "amqp10:2.6.13/7", "amqp10:3.4.6/5", "amqp10:3.4.6/6",
                                          "amqp10:2.7.5/17", "amqp10:2.7.3/7"))
    third = seen.get(tags[2], [])
    ctx.record(any(d.transfer.resume for d in third),
               expected="a resuming transfer (resume=true) for the delivery the receiver holds as accepted",
               observed=listing, clauses=("amqp10:3.4.6/2", "amqp10:2.7.3/7"))
    held = theirs.get(tags[2])
    if isinstance(held, TERMINAL):
        states = [d.transfer.state for d in third if d.transfer.state is not None]
        ctx.record(all(type(st) is type(held) for st in states),
                   expected=f"the terminal outcome of its map ({show(held)}) restated, never another",
                   observed=listing, clauses=("amqp10:3.4.6/11", "amqp10:3.4.6/15"))
    ctx.record(not any(isinstance(theirs.get(t), TERMINAL) for t in tags[:2]),
               expected="no terminal state in its map for deliveries the receiver never confirmed",
               observed=f"its map {show(attach.unsettled)}", clauses=("amqp10:3.4.6/12",))
    ctx.record(unknown not in seen, expected=f"nothing sent for the tag only the receiver listed ({unknown!r})",
               observed=listing, clauses=("amqp10:2.6.13/3",))
    strays = [d for d in after if d.transfer.resume and bytes(d.transfer.delivery_tag or b"") not in theirs]
    ctx.record(not strays, expected="resume=true only for tags in the broker's own unsettled map",
               observed="; ".join(_brief(d) for d in strays) or listing, clauses=("amqp10:2.7.5/16",))


def _cut(octets: bytes) -> list[bytes]:
    """Payload pieces that fit transfer frames of SMALL_FRAME octets."""
    size = SMALL_FRAME - 128
    return [octets[i:i + size] for i in range(0, len(octets), size)]


def _send(link: Any, chunks: list[bytes], delivery_tag: bytes, *, more: bool = False, **first: Any) -> None:
    """One delivery's transfer frames (the last with ``more`` when it is cut short), in one write;
    ``first`` adds fields to the first frame."""
    s = link.session
    did = s.take_delivery_id(len(chunks))
    frames = []
    for i, chunk in enumerate(chunks):
        head = dict(delivery_id=did, delivery_tag=delivery_tag, message_format=UInt(0), **first) if i == 0 else {}
        frames.append(AMQPFrame(s.channel, spec.Transfer(handle=link.handle, more=more or i < len(chunks) - 1, **head),
                                chunk))
    s.send_together(frames)


@case("amqp10/3.4.6/broker-ignores-data-it-holds",
      title="a delivery resumed to the broker from before the point it reached is stored without the repeated data",
      clauses=("amqp10:3.4.6/16", "amqp10:3.4.6/17", "amqp10:3.4.6/18", "amqp10:2.6.3/3"), timeout=20.0)
def broker_ignores_held_data(ctx: Context) -> None:
    """On two links to a durable target (one delivery in progress a link: deliveries on a link are
    not interleaved) sends the first two frames of a delivery of BIG octets (more=true), suspends
    both, reattaches listing the tag with a null state, and resumes: on the first link whole with
    state null (from the first byte), on the second from Received(section 0, offset 100), a point
    inside what the broker holds. The broker MUST ignore the data it already received: both
    messages read back from the node are the ones sent, octet for octet. Skipped where the broker
    offers no recovery."""
    addr = address(ctx, "resume-in")
    s = small_session(ctx)
    links = [recoverable_sender(ctx, s, addr) for _ in range(2)]
    if any(snd.wait_credit(WAIT) < 1 for snd in links):
        raise SetupError(f"the broker granted no credit ({[snd.credit for snd in links]})")
    messages = [Message(body=token_octets(ctx, f"part{i}").ljust(BIG, b"-")).encode() for i in range(2)]
    tags = [tag(ctx), tag(ctx)]
    for snd, octets, t in zip(links, messages, tags):
        _send(snd, _cut(octets)[:2], t, more=True)
    for snd in links:
        suspend(ctx, snd)
    attaches = [resume(ctx, snd, {t: None}) for snd, t in zip(links, tags)]
    maps = [their_map(a) for a in attaches]
    ctx.record(all(a is not None and (bool(a.incomplete_unsettled) or (m is not None and t in m))
                   for a, m, t in zip(attaches, maps, tags)),
               expected="each reattach lists the partial delivery it holds (or incomplete-unsettled=true)",
               observed="; ".join(f"attach {show(a)}" for a in attaches), clauses=("amqp10:2.6.3/3",))
    if any(a is None for a in attaches):
        return
    for snd in links:
        snd.wait_credit(WAIT)
    offset = 100
    _send(links[0], _cut(messages[0]), tags[0], resume=True)
    _send(links[1], _cut(messages[1][offset:]), tags[1], resume=True,
          state=spec.Received(section_number=UInt(0), section_offset=ULong(offset)))
    s.quiet()
    back = fetch(ctx, addr, count=2)
    payloads = [d.payload for d in back]
    observed = f"{len(back)} message(s) in the node, of {[len(p) for p in payloads]} octets (sent {BIG}+)"
    ctx.record(messages[0] in payloads,
               expected="the delivery resumed from the first byte stored as sent (the data already received ignored)",
               observed=observed, clauses=("amqp10:3.4.6/16",))
    ctx.record(messages[1] in payloads,
               expected=f"the delivery resumed at section 0 offset {offset} stored as sent (data up to the first "
                        "position not yet received ignored)",
               observed=observed, clauses=("amqp10:3.4.6/17", "amqp10:3.4.6/18"))
