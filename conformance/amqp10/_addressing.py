"""Termini and deliveries for the case modules (3.5, 4, 0.2): attaching to a source or target and
reading the broker's answer, posting a message and waiting for its outcome, collecting arrivals.

Every function takes the framework's Session, Sender or Receiver (amqpspec.peer.session10).
"""
from __future__ import annotations

import uuid
from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation, error_condition, performative_name
from amqpspec.peer.base import Closed
from amqpspec.peer.session10 import Delivery, Link, Receiver, Sender, Session, seq_add
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, describe, spec
from amqpspec.wire.amqp10.composite import show

from ._common import WAIT, link_name

ABSENT_WINDOW = 0.5     # how long a message that must not (re)appear is watched for, after a sentinel


def attach_link(s: Session, name: str, *, role: bool, source: Any, target: Any, window: float = WAIT,
                **attach: Any) -> tuple[Link, Observation]:
    """Sends an attach and collects frames until the broker's attach of that name, an end or a close.

    Returns the link (its ``remote`` is the broker's attach, None when none came) and the
    observation; other frames that arrive meanwhile (the broker's flow) stay in the observation.
    """
    make = s.sender if role is spec.Role.SENDER else s.receiver
    link = make(name=name, source=source, target=target, wait=False, **attach)

    def answered(item: Any) -> bool:
        got = performative_name(item)
        if got == "attach" and str(item.performative.name) == name:
            return True
        return got == "close" or (got == "end" and item.channel == s.remote)

    obs = s.peer.observe(window, stop=answered)
    found = [f for f in obs.performatives("attach", s.remote) if str(f.performative.name) == name]  # type: ignore[union-attr]
    if found and link.remote is None:
        link.take_attach(found[0].performative)  # type: ignore[union-attr]
    return link, obs


def refusal(obs: Observation, attach: Any) -> str | None:
    """Why the link did not come up (None when the broker attached without ending anything)."""
    ending = [f for f in obs.frames() if performative_name(f) in ("close", "end")]
    if ending:
        return f"the broker answered with {describe(ending[0])}"
    if attach is None:
        return f"the broker did not attach the link ({obs.describe()})"
    return None


def as_values(value: Any) -> list[Any]:
    """A multiple field as a list: null and the empty array are no value (types 1.4), a single value is one."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def sender_to(ctx: Context, s: Session, addr: str) -> Sender:
    """A sending link to ``addr``; skips the case when the broker does not attach it."""
    link, obs = attach_link(s, link_name(ctx, "snd"), role=spec.Role.SENDER, source=spec.Source(),
                            target=spec.Target(address=addr))
    why = refusal(obs, link.remote)
    if why is not None or link.remote.target is None:
        ctx.skip(f"cannot set up a sending link to a fresh node: {why or 'the broker attached with a null target'}")
    return link  # type: ignore[return-value]


def receiver_from(ctx: Context, s: Session, source: Any, what: str = "rcv") -> Receiver:
    """A receiving link with this source, without credit; skips the case when the broker refuses it (the
    broker's attach is the link's ``remote``)."""
    link, obs = attach_link(s, link_name(ctx, what), role=spec.Role.RECEIVER, source=source, target=spec.Target())
    why = refusal(obs, link.remote)
    if why is not None or link.remote.source is None:
        ctx.skip(f"the broker did not attach a receiving link from {show(source)}: "
                 f"{why or 'it attached with a null source'}")
    return link  # type: ignore[return-value]


def transfer(link: Sender, message: Message | bytes, *, state: Any = None, settled: bool = False,
             tag: bytes | None = None, more: bool = False) -> int:
    """One delivery on ``link`` (octets become a single data section); returns its delivery-id.

    ``state`` goes on every transfer frame of the delivery (a transactional-state: 4.4.1 wants
    all of them associated with the transaction); ``more`` sends only a first frame announcing
    more to come, and the rest never follows.
    """
    s = link.session
    frames = link.transfer_frames(message, settled=settled or None, tag=tag or uuid.uuid4().bytes[:8], state=state)
    if more:   # only the first half of the first frame goes out: one transfer frame counted
        s.next_outgoing_id = seq_add(s.next_outgoing_id, 1 - len(frames))
        first = frames[0]
        payload = b"".join(bytes(f.payload) for f in frames)
        frames = [AMQPFrame(s.channel, first.performative.replace(more=True), payload[: max(1, len(payload) // 2)])]
    s.peer.send(*frames)
    return link.ids[-1]


def await_disposition(s: Session, delivery_id: int, *, timeout: float = WAIT) -> tuple[Any, list[Any]]:
    """Waits for the broker's disposition (as receiver) on ``s`` covering ``delivery_id``.

    Returns (the disposition or None, every other frame read meanwhile); stops at an end,
    close or detach with an error, which are among the other frames.
    """
    peer, remote = s.peer, s.remote
    others: list[Any] = []
    while True:
        item = peer.recv(timeout)
        if item is None or isinstance(item, Closed):
            return None, others
        if isinstance(item, EmptyFrame):
            continue
        name = performative_name(item)
        if name == "disposition" and item.channel == remote:  # type: ignore[union-attr]
            d = item.performative  # type: ignore[union-attr]
            first = int(d.first)
            last = int(d.last) if d.last is not None else first
            if d.role is spec.Role.RECEIVER and first <= delivery_id <= last:
                return d, others
        others.append(item)
        if name == "close" or (name in ("end", "detach") and error_condition(item.performative)):  # type: ignore[union-attr]
            return None, others


def transfer_outcome(link: Sender, message: Message | bytes) -> Any:
    """Posts a message unsettled on ``link`` and waits for the broker's outcome (the state of its
    disposition). Frames read meanwhile (a transfer on a receiving link ...) are put back for the next
    reader (the layer has counted them already)."""
    s = link.session
    d, others = await_disposition(s, transfer(link, message))
    for item in reversed(others):
        s.peer.unread(item)
    return None if d is None else d.state


def read_until(s: Session, done: Callable[[], Any], timeout: float = WAIT) -> bool:
    """Reads the session's frames (the layer joins the deliveries of its receiving links) until ``done()``
    is true (True), ``timeout`` passes, or the session ends (an end, a close, a detach with an error) --
    then ``done()`` decides."""
    if not done():
        s.read(timeout, until=lambda _frame: bool(done()))
    return bool(done())


def with_token(link: Receiver, token: bytes) -> list[Delivery]:
    """The deliveries received on ``link`` whose payload holds ``token``."""
    return [d for d in link.deliveries() if token in d.payload]


def describe_arrivals(s: Session) -> str:
    """What the session's receiving links got, and the errors (close, end, detach) the broker sent."""
    got = sum(len(link.received) for link in s.links.values() if isinstance(link, Receiver))
    return "; ".join([f"{got} deliveries"] + [describe(f) for f in s.error_frames()])
