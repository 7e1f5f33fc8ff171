"""What every AMQP 1.0 case module shares: waits, unique names, and the (peer, channel) helpers.

Sessions and links are the framework's (amqpspec.peer.session10); the functions taking a
peer and a channel below are the older spelling of the same layer, kept for the case
modules not yet written against Session / Sender / Receiver: each finds the layer's session
of that channel (``session_of``) and its link of that handle, so counters stay right however
a case mixes them. Addresses are plain unique names, which both RabbitMQ's 1.0 plugin (as a
queue name) and the Qpid Proton example broker accept; they are registered for deletion.
"""
from __future__ import annotations

import uuid
from typing import Any

from amqpspec.case import Context
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, Peer, error_condition, performative_name
from amqpspec.peer.base import Closed
from amqpspec.peer.session10 import Delivery, Receiver, Sender, Session, begin, session_of
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, spec

WAIT = 3.0               # seconds for something a correct broker sends at once
REACTION_WINDOW = 5.0    # for a reaction that must come (a close after an error)

STATE_ERRORS = (str(spec.AmqpError.ILLEGAL_STATE), str(spec.AmqpError.NOT_ALLOWED))
STATE_ERROR_TEXT = ("amqp:illegal-state: The peer sent a frame that is not permitted in the current state. / "
                    "amqp:not-allowed: The peer tried to use a frame in a manner that is inconsistent with the "
                    "semantics defined in the specification.")

Received = Delivery      # the name the case modules use for a delivery received


# ---------------------------------------------------------------------------------------- names
def address(ctx: Context, what: str = "q") -> str:
    """A node address unique to this case and run, registered for cleanup."""
    name = ctx.name(f"{what}{ctx.rng.getrandbits(24):06x}")
    ctx.will_delete("queue", name)
    return name


def link_name(ctx: Context, what: str = "link") -> str:
    """A link name unique to this case and run (link names identify links across connections, 2.6.1)."""
    return ctx.name(f"{what}-{ctx.rng.getrandbits(32):08x}")


def token(ctx: Context, what: str = "msg") -> str:
    """A message body unique to this case and run, to recognise the message when it comes back."""
    return f"{ctx.name(what)}-{ctx.rng.getrandbits(40):010x}"


def tag(ctx: Context) -> bytes:
    """A delivery-tag (8 random octets from the case's seeded generator)."""
    return ctx.rng.getrandbits(64).to_bytes(8, "big")


# ---------------------------------------------------------------------------------------- checks
def record_error_condition(ctx: Context, obs: Observation, performative: str, conditions: tuple[str, ...], text: str,
                           *, what: str, channel: int | None = None) -> None:
    """The guideline check of an error condition the error definitions suggest, made only when a
    ``performative`` (close, end, detach) with an error came: its absence is another check's failure."""
    errors = [error_condition(f.performative) for f in obs.performatives(performative, channel)
              if error_condition(f.performative)]
    if not errors:
        return
    ctx.record(errors[0] in conditions, expected=f"{performative} with error {' or '.join(conditions)}",
               observed=obs.describe(), what=what, level=Level.SHOULD, guideline=text)


# ---------------------------------------------------------------------------------------- (peer, channel) spelling
def session(ctx: Context, **handshake: Any) -> tuple[Peer, int]:
    """An open connection with one session; returns the peer and the session's channel."""
    s = begin(ctx.connect(**handshake), timeout=5.0)
    return s.peer, s.channel


def sender(peer: Peer, ch: int, addr: str, *, name: str | None = None, settled: bool = False,
           timeout: float = WAIT) -> tuple[int, spec.Attach]:
    """Attaches a sending link to ``addr``; ``settled`` asks for sender-settle-mode settled."""
    mode = spec.SenderSettleMode.SETTLED if settled else None
    link = session_of(peer, ch).sender(addr, name=name or f"snd-{uuid.uuid4().hex[:8]}", snd_settle_mode=mode,
                                       timeout=timeout)
    return link.handle, link.remote


def receiver(peer: Peer, ch: int, addr: str, *, name: str | None = None, credit: int | None = 10,
             timeout: float = WAIT, **source_fields: Any) -> tuple[int, spec.Attach]:
    """Attaches a receiving link from ``addr`` and (unless credit is None) grants credit."""
    link = session_of(peer, ch).receiver(name=name or f"rcv-{uuid.uuid4().hex[:8]}",
                                         source=spec.Source(address=addr, **source_fields), timeout=timeout)
    if credit is not None:
        link.grant(credit)
    return link.handle, link.remote


def link_of(peer: Peer, ch: int, handle: int, role: bool) -> Sender | Receiver:
    """The layer's link on ``handle``; a stand-in for one the case attached with a raw frame."""
    s = session_of(peer, ch)
    link = s.links.get(handle)
    if link is None or link.role is not role:
        link = Sender(s, "", handle) if role is spec.Role.SENDER else Receiver(s, "", handle)
    return link  # type: ignore[return-value]


class _Received(dict):
    """received_count[handle] = n sets the delivery-count of our receiving link ``handle``."""

    def __init__(self, s: Session) -> None:
        super().__init__()
        self.s = s

    def __setitem__(self, handle: int, count: int) -> None:
        super().__setitem__(handle, count)
        link = self.s.links.get(handle)
        if isinstance(link, Receiver):
            link.delivery_count = count


class Counters:
    """The session's numbers under the names the case modules used (transfer ids, delivery ids)."""

    def __init__(self, s: Session) -> None:
        self.s = s
        self.received_count = _Received(s)

    @property
    def next_outgoing_id(self) -> int:
        return self.s.next_outgoing_id

    @next_outgoing_id.setter
    def next_outgoing_id(self, value: int) -> None:
        self.s.next_outgoing_id = value

    @property
    def next_delivery_id(self) -> int:
        return self.s.next_delivery_id


def counters(peer: Peer, ch: int) -> Counters:
    return Counters(session_of(peer, ch))


def grant(peer: Peer, ch: int, handle: int, credit: int, *, drain: bool | None = None, echo: bool | None = None,
          delivery_count: int | None = None) -> None:
    """flow granting ``credit`` on a receiving link (link-credit is set, not added: 2.6.7)."""
    link_of(peer, ch, handle, spec.Role.RECEIVER).grant(credit, drain=drain, echo=echo,  # type: ignore[union-attr]
                                                        delivery_count=delivery_count)


def send_message(peer: Peer, ch: int, handle: int, message: Message | bytes | str, *, settled: bool = False,
                 tag: bytes | None = None, max_frame_size: int | None = None) -> int:
    """A transfer (split over several frames when larger than the frame size); returns its delivery-id."""
    link = link_of(peer, ch, handle, spec.Role.SENDER)
    return link.send(message, settled=settled, tag=tag, max_frame_size=max_frame_size)  # type: ignore[union-attr]


def next_delivery_id(peer: Peer, ch: int) -> int:
    """Takes the next delivery-id of our session (and one transfer-id) for a transfer the case builds itself."""
    return session_of(peer, ch).take_delivery_id()


def receive(peer: Peer, count: int, timeout: float = WAIT, *, others: list | None = None) -> list[Delivery]:
    """Collects up to ``count`` complete deliveries on any link (multi-frame transfers joined); other
    frames go to ``others`` when given. Stops early at a close, end or detach, or after ``timeout``
    without a frame."""
    got: list[Delivery] = []
    partial: dict[tuple[int, Any], tuple[spec.Transfer, bytearray, int]] = {}
    while len(got) < count:
        item = peer.recv(timeout)
        if item is None or isinstance(item, Closed):
            break
        if isinstance(item, EmptyFrame):
            continue
        name = performative_name(item)
        if name == "transfer":
            t = item.performative  # type: ignore[union-attr]
            key = (item.channel, t.handle)  # type: ignore[union-attr]
            first, data, n = partial.get(key, (t, bytearray(), 0))
            data += bytes(item.payload)  # type: ignore[union-attr]
            if t.more:
                partial[key] = (first, data, n + 1)
                continue
            partial.pop(key, None)
            if not t.aborted:
                got.append(Delivery(first, bytes(data), n + 1))
            continue
        if others is not None:
            others.append(item)
        if name in ("close", "end", "detach"):
            break
    return got


def settle(peer: Peer, ch: int, first: int, last: int | None = None, state: Any = None, *, role: bool = True) -> None:
    """disposition settling deliveries ``first``..``last`` (as receiver by default) with ``state``."""
    peer.send(AMQPFrame(ch, spec.Disposition(role=role, first=first, last=last, settled=True,
                                             state=state if state is not None else spec.Accepted())))
