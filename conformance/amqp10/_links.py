"""Links for the case modules (2.6): attaching by role, the answer to an attach, putting messages
into a node and fetching them back, and the stop predicates the link cases observe with.

Sessions and links are the framework's (amqpspec.peer.session10); ``Sess`` and ``Link`` are its
Session and Link under the names the case modules use.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation, Peer, performative_name
from amqpspec.peer.session10 import Delivery, Link, Session, fetch, publish
from amqpspec.peer.session10 import begin as begin_session
from amqpspec.wire.amqp10 import AMQPFrame, Message, spec

from ._common import REACTION_WINDOW, WAIT, address, link_name, next_delivery_id, tag, token  # noqa: F401

SENDER = spec.Role.SENDER
RECEIVER = spec.Role.RECEIVER
MAX_PROVOKED_SIZE = 4 << 20     # largest max-message-size we exceed on purpose to provoke a link error

Sess = Session

__all__ = ["SENDER", "RECEIVER", "Sess", "Link", "Answer", "attach", "await_answer", "begin", "covers", "detach",
           "ends", "ends_or_attach", "fetch", "fresh_sender_marker", "link_error_detach", "link_name",
           "next_delivery_id", "outcome_for", "payload", "provoke_link_error", "put", "receiving", "sending",
           "session", "settled_outcome", "tag", "text_of", "texts", "token"]


def payload(text: str) -> bytes:
    return Message(body=text).encode()


def text_of(r: Delivery) -> str:
    return r.text()


def texts(got: list[Delivery]) -> list[str]:
    return [r.text() for r in got]


def begin(peer: Peer) -> Session:
    return begin_session(peer, timeout=WAIT)


def session(ctx: Context, **handshake: Any) -> Session:
    """A new connection of the case with one session."""
    return begin(ctx.connect(**handshake))


def attach(s: Session, name: str, role: bool, *, source: Any, target: Any, handle: int | None = None,
           wait: bool = True, **fields: Any) -> Link:
    """Attaches a link in ``role`` with these termini (initial-delivery-count 0 for a sender unless
    given); with ``wait``, waits for the broker's attach of the same name on its channel of the session."""
    make = s.sender if role is SENDER else s.receiver
    return make(name=name, source=source, target=target, handle=handle, wait=wait, **fields)


def sending(ctx: Context, s: Session, addr: str | None = None, *, name: str | None = None, wait: bool = True,
            **fields: Any) -> Link:
    """A sending link to ``addr`` (a fresh node by default)."""
    return s.sender(addr or address(ctx), name=name or link_name(ctx, "snd"), wait=wait, **fields)


def receiving(ctx: Context, s: Session, addr: str, *, name: str | None = None, credit: int | None = None,
              wait: bool = True, **fields: Any) -> Link:
    """A receiving link from ``addr``; grants ``credit`` when given."""
    return s.receiver(addr, name=name or link_name(ctx, "rcv"), credit=credit, wait=wait, **fields)


def detach(link: Link, *, closed: bool | None = True, error: Any = None) -> None:
    link.detach(closed=closed, error=error)


def put(ctx: Context, addr: str, *bodies: str | Message | bytes) -> None:
    """The node at ``addr`` holds ``bodies`` when this returns (framework ``publish``)."""
    publish(ctx, addr, *bodies)


def covers(disposition: Any, delivery_id: int) -> bool:
    first = int(disposition.first)
    last = first if disposition.last is None else int(disposition.last)
    return first <= delivery_id <= last


def outcome_for(obs: Observation, channel: int, delivery_id: int) -> list[Any]:
    """The broker's dispositions on ``channel`` that cover ``delivery_id``, in order."""
    return [f.performative for f in obs.performatives("disposition", channel) if covers(f.performative, delivery_id)]


def ends(s: Session) -> Callable[[Any], bool]:
    """Stop predicate: the session ends or the connection closes."""
    return lambda f: performative_name(f) == "close" or (performative_name(f) == "end" and f.channel == s.remote)


def settled_outcome(s: Session, delivery_id: int) -> Callable[[Any], bool]:
    """Stop predicate: a settled disposition covering ``delivery_id``, or the session's end."""
    stop = ends(s)
    return lambda f: stop(f) or (performative_name(f) == "disposition" and f.channel == s.remote
                                 and bool(f.performative.settled) and covers(f.performative, delivery_id))


def ends_or_attach(s: Session, name: str) -> Callable[[Any], bool]:
    """Stop predicate: the session ends, the connection closes, or the broker attaches ``name``."""
    stop = ends(s)
    return lambda f: stop(f) or (performative_name(f) == "attach" and str(f.performative.name) == name)


@dataclass
class Answer:
    """What the broker sent in answer to our attach of a link."""

    obs: Observation
    attach: Any = None     # its attach of the link
    detach: Any = None     # its detach of the link (after its attach)
    s: Session | None = None

    @property
    def terminus(self) -> Any:
        """The broker's local terminus: its target when it receives, its source when it sends."""
        if self.attach is None:
            return None
        return self.attach.target if bool(self.attach.role) else self.attach.source

    @property
    def attached(self) -> bool:
        """The broker attached the link to a terminus (and did not detach it)."""
        return self.attach is not None and self.terminus is not None and self.detach is None and not self.failed

    @property
    def refused(self) -> bool:
        """The refusal of 2.6.3: an attach with a null terminus, then a detach of the link."""
        return self.attach is not None and self.terminus is None and self.detach is not None

    @property
    def failed(self) -> bool:
        """The session ended or the connection closed instead."""
        s = self.s
        return self.obs.close is not None or self.obs.closed or \
            bool(s is not None and self.obs.performatives("end", s.remote))

    def describe(self) -> str:
        return self.obs.describe()


def await_answer(s: Session, name: str, window: float = WAIT, *, wait_detach: bool = False) -> Answer:
    """Observes the answer to our attach of ``name``: the broker's attach and, when it carries no terminus
    (or with ``wait_detach``), its detach of the link; or the session's end, or a close."""
    ans = Answer(Observation(), s=s)
    stop_end = ends(s)

    def stop(item: Any) -> bool:
        if stop_end(item):
            return True
        if not isinstance(item, AMQPFrame) or item.channel != s.remote:
            return False
        got = performative_name(item)
        if got == "attach" and str(item.performative.name) == name and ans.attach is None:
            ans.attach = item.performative
            return ans.terminus is not None and not wait_detach
        if got == "detach" and (ans.attach is None or int(item.performative.handle) == int(ans.attach.handle)):
            ans.detach = item.performative
            return True
        return False

    ans.obs = s.peer.observe(window, stop=stop)
    return ans


def fresh_sender_marker(ctx: Context, s: Session) -> str:
    """Attaches a fresh sending link on ``s`` without waiting: its answer shows the session went on."""
    name = link_name(ctx, "marker")
    s.sender(address(ctx, "mark"), name=name, wait=False)
    return name


def provoke_link_error(ctx: Context, s: Session) -> tuple[Link, Observation]:
    """The one link error the text makes a broker raise on demand: a message larger than the max-message-size
    of its attach (2.7.3: message-size-exceeded). Attaches a sending link and, when the broker's attach
    announces a max-message-size, sends a message one data section larger than it; returns the link and the
    observation up to the broker's detach (or end/close). Skips when the broker announces no limit."""
    link = sending(ctx, s)
    limit = int(link.remote.max_message_size or 0)
    if not limit:
        ctx.skip("the broker announces no max-message-size on its receiving link endpoint: no link error can be "
                 "provoked by a message that is too large")
    if limit > MAX_PROVOKED_SIZE:
        ctx.skip(f"the broker's max-message-size is {limit} octets: too large to exceed in a conformance case")
    s.peer.observe(0.2)  # its flow (credit) first
    link.send(Message(body=b"x" * limit))  # type: ignore[attr-defined]
    stop_end = ends(s)
    obs = s.peer.observe(REACTION_WINDOW, stop=lambda f: stop_end(f) or (
        performative_name(f) == "detach" and f.channel == s.remote and int(f.performative.handle) == link.remote_handle))
    return link, obs


def link_error_detach(obs: Observation, s: Session, link: Link) -> Any:
    for f in obs.performatives("detach", s.remote):
        if int(f.performative.handle) == link.remote_handle and f.performative.error is not None:
            return f.performative
    return None
