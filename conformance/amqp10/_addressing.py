"""Termini and deliveries for the case modules (3.5, 4, 1, 0.2): attaching to a source or target and
reading the broker's answer, posting a message and waiting for its outcome, collecting arrivals.

Sessions and links are the framework's (amqpspec.peer.session10): ``attach_link``, ``sender_to``,
``receiver_from``, ``transfer``, ``await_disposition``, ``transfer_outcome``, ``read_until``,
``with_token`` and ``describe_arrivals`` take its Session, Sender and Receiver. The functions
taking a peer, a channel and a handle are the older spelling of the same, kept for case
modules not yet written against the layer.
"""
from __future__ import annotations

import time
import uuid
from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation, Peer, error_condition, performative_name
from amqpspec.peer.base import Closed
from amqpspec.peer.session10 import Delivery, Link, Receiver, Sender, Session, seq_add, session_of
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, describe, spec
from amqpspec.wire.amqp10.composite import show

from ._common import WAIT, link_of

ABSENT_WINDOW = 0.5     # how long a message that must not (re)appear is watched for, after a sentinel

__all__ = ["ABSENT_WINDOW", "Arrivals", "accept", "as_values", "attach_answer", "attach_link", "await_disposition",
           "deliver", "describe_arrivals", "describe_frame", "disposition_for", "link_name", "open_receiver",
           "open_sender", "post", "read_until", "receiver_from", "refusal", "sender_to", "token", "transfer",
           "transfer_outcome", "with_token"]


def link_name(ctx: Context, what: str) -> str:
    return f"{ctx.name(what)}-{uuid.uuid4().hex[:6]}"


def token(ctx: Context, what: str) -> bytes:
    """Octets unique to this case and run, to find a message again among others."""
    return f"{what}-{ctx.rng.getrandbits(48):012x}".encode()


def describe_frame(item: Any) -> str:
    return describe(item)


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


def attach_answer(peer: Peer, ch: int, name: str, *, role: bool, source: Any, target: Any,
                  window: float = WAIT, **attach: Any) -> tuple[int, Any, Observation]:
    """attach_link in the (peer, channel) spelling: returns our handle, the broker's attach (or None)
    and the observation."""
    link, obs = attach_link(session_of(peer, ch), name, role=role, source=source, target=target, window=window,
                            **attach)
    return link.handle, link.remote, obs


def refusal(obs: Observation, attach: Any) -> str | None:
    """Why the link did not come up (None when the broker attached without ending anything)."""
    ending = [f for f in obs.frames() if performative_name(f) in ("close", "end")]
    if ending:
        return f"the broker answered with {describe_frame(ending[0])}"
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


def open_sender(ctx: Context, peer: Peer, ch: int, addr: str) -> int:
    """sender_to in the (peer, channel) spelling: returns our handle."""
    return sender_to(ctx, session_of(peer, ch), addr).handle


def open_receiver(ctx: Context, peer: Peer, ch: int, source: Any, what: str = "rcv") -> tuple[int, Any]:
    """receiver_from in the (peer, channel) spelling: returns our handle and the broker's attach."""
    link = receiver_from(ctx, session_of(peer, ch), source, what)
    return link.handle, link.remote


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


def post(peer: Peer, ch: int, handle: int, message: Message | bytes, *, state: Any = None, settled: bool = False,
         tag: bytes | None = None, more: bool = False) -> int:
    """transfer in the (peer, channel, handle) spelling."""
    link: Sender = link_of(peer, ch, handle, spec.Role.SENDER)  # type: ignore[assignment]
    return transfer(link, message, state=state, settled=settled, tag=tag, more=more)


def disposition_for(peer: Peer, ch: int, delivery_id: int, *, timeout: float = WAIT) -> tuple[Any, list[Any]]:
    """await_disposition in the (peer, channel) spelling."""
    return await_disposition(session_of(peer, ch), delivery_id, timeout=timeout)


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


def deliver(peer: Peer, ch: int, handle: int, message: Message | bytes) -> Any:
    """transfer_outcome in the (peer, channel, handle) spelling."""
    link: Sender = link_of(peer, ch, handle, spec.Role.SENDER)  # type: ignore[assignment]
    return transfer_outcome(link, message)


def accept(peer: Peer, ch: int, delivery_id: int, state: Any = None, *, settled: bool = True) -> None:
    peer.send(AMQPFrame(ch, spec.Disposition(role=spec.Role.RECEIVER, first=delivery_id, settled=settled,
                                             state=spec.Accepted() if state is None else state)))


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
    return "; ".join([f"{got} deliveries"] + [describe_frame(f) for f in s.error_frames()])


class Arrivals:
    """Deliveries arriving on one session: payloads joined over transfer frames, by handle."""

    def __init__(self, peer: Peer, ch: int) -> None:
        self.peer = peer
        self.ch = ch
        self.session = session_of(peer, ch)
        self.got: list[tuple[int, spec.Transfer, bytes]] = []    # (handle, first transfer, payload)
        self.others: list[Any] = []
        self._partial: dict[int, tuple[spec.Transfer, bytearray]] = {}

    def until(self, done: Any, timeout: float = WAIT) -> bool:
        """Reads frames until ``done(self)`` is true (True) or ``timeout`` passes / the link or session ends."""
        stop = time.monotonic() + timeout
        while not done(self):
            left = stop - time.monotonic()
            if left <= 0:
                return False
            item = self.peer.recv(left)
            if item is None or isinstance(item, Closed):
                return done(self)
            if isinstance(item, EmptyFrame):
                continue
            name = performative_name(item)
            if name == "transfer" and item.channel == self.session.remote:  # type: ignore[union-attr]
                t = item.performative  # type: ignore[union-attr]
                h = int(t.handle)
                first, data = self._partial.get(h, (t, bytearray()))
                data += bytes(item.payload)  # type: ignore[union-attr]
                if t.more:
                    self._partial[h] = (first, data)
                    continue
                self._partial.pop(h, None)
                if not t.aborted:
                    self.got.append((h, first, bytes(data)))
                continue
            self.others.append(item)
            if name == "close" or (name in ("end", "detach") and error_condition(item.performative)):  # type: ignore[union-attr]
                return done(self)
        return True

    def with_token(self, token: bytes, handle: int | None = None) -> list[tuple[int, spec.Transfer, bytes]]:
        """Deliveries whose payload holds ``token``; ``handle`` (ours) keeps those of that link, whose
        transfers carry the broker's handle."""
        link = None if handle is None else self.session.links.get(handle)
        theirs = handle if link is None or link.remote_handle is None else link.remote_handle
        return [g for g in self.got if token in g[2] and (theirs is None or g[0] == theirs)]

    def errors(self) -> list[Any]:
        return [f for f in self.others if performative_name(f) == "close"
                or (performative_name(f) in ("end", "detach") and error_condition(f.performative))]

    def describe(self) -> str:
        parts = [f"{len(self.got)} deliveries"]
        parts += [describe_frame(f) for f in self.errors()]
        return "; ".join(parts)
