"""Links for the case modules (2.6, 2.7.3-2.7.6): the answer to an attach, the broker's dispositions of a
delivery, and the one link error a broker can be made to raise.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation, performative_name
from amqpspec.peer.session10 import Delivery, Link, Sender, Session, covers
from amqpspec.wire.amqp10 import AMQPFrame, Message

from ._common import REACTION_WINDOW, WAIT, address, link_name
from ._sessions import ends

MAX_PROVOKED_SIZE = 4 << 20     # largest max-message-size we exceed on purpose to provoke a link error


def fresh_sender(ctx: Context, s: Session, addr: str | None = None, **fields: Any) -> Sender:
    """A sending link on ``s`` to ``addr`` (a fresh node by default), waiting for the broker's attach;
    ``fields`` are attach fields."""
    addr = addr or address(ctx)
    return s.sender(addr, name=link_name(ctx, "snd"), **fields)


def texts(got: list[Delivery]) -> list[str]:
    return [r.text() for r in got]


def outcome_for(obs: Observation, channel: int, delivery_id: int) -> list[Any]:
    """The broker's dispositions on ``channel`` that cover ``delivery_id``, in order."""
    return [f.performative for f in obs.performatives("disposition", channel) if covers(f.performative, delivery_id)]


def settled_outcome(s: Session, delivery_id: int) -> Callable[[Any], bool]:
    """Stop predicate: a settled disposition covering ``delivery_id``, or the session's end."""
    stop = ends(s)
    return lambda f: stop(f) or (performative_name(f) == "disposition" and f.channel == s.remote
                                 and bool(f.performative.settled) and covers(f.performative, delivery_id))


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


def provoke_link_error(ctx: Context, s: Session) -> tuple[Link, Observation]:
    """The one link error the text makes a broker raise on demand: a message larger than the max-message-size
    of its attach (2.7.3: message-size-exceeded). Attaches a sending link and, when the broker's attach
    announces a max-message-size, sends a message one data section larger than it; returns the link and the
    observation up to the broker's detach (or end/close). Skips when the broker announces no limit."""
    link = fresh_sender(ctx, s)
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
