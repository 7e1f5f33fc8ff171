"""Queues looked up, emptied, and the not-found cases every queue method shares (0-9-1 helper module).

``lookup`` asks a passive queue.declare whether a queue exists and leaves a usable channel even
when the answer closed the one it used. ``no_queue_name_case`` and ``missing_queue_case`` register
the same two cases for each method that names a queue (queue.bind, queue.unbind, queue.purge,
queue.delete): the queue and bindings modules both call them, with the method and its rule.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer, UnexpectedReply
from amqpspec.verify import ChannelException, ConnectionException
from amqpspec.wire.amqp091 import spec
from amqpspec.wire.amqp091.base import Method

from ._common import QUICK_WINDOW, with_channel
from ._model import Message, get, unique
from ._replies import attempt, reopen


def reply_of(obs: Observation, name: str, ch: int) -> Any:
    found = obs.methods(name, ch)
    return found[0].method if found else None


@dataclass
class Lookup:
    """What a passive queue.declare said about a queue."""

    ok: Any              # the queue.declare-ok, or None
    code: int | None     # reply code of the channel.close when refused
    channel: int         # a usable channel afterwards (a refusal closed the one used)
    observed: str

    @property
    def exists(self) -> bool:
        return self.ok is not None

    @property
    def gone(self) -> bool:
        return self.code == 404


def lookup(peer: Peer, ch: int, name: str) -> Lookup:
    """Passive queue.declare of ``name`` on ``ch``; a refusal is answered and a new channel opened."""
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, passive=True), QUICK_WINDOW)
    ok = reply_of(obs, "queue.declare-ok", ch)
    close = obs.channel_close(ch)
    if ok is None and close is None:
        raise UnexpectedReply("queue.declare-ok or channel.close", None, obs)
    return Lookup(ok, close.reply_code if close is not None else None, reopen(peer, obs, ch), obs.describe())


def drain(peer: Peer, ch: int, queue: str, limit: int = 64) -> list[Message]:
    """basic.get (no-ack) until get-empty: everything ready in the queue."""
    got: list[Message] = []
    while len(got) < limit:
        msg = get(peer, ch, queue)
        if msg is None:
            break
        got.append(msg)
    return got


# Where a queue name is missing (no queue declared on the channel): the rules' on-failure is
# not-found; the queue-name domain says 502 "channel exception", errata 18 a connection exception.
NO_QUEUE_NAME = ChannelException(404, 502) | ConnectionException(502)


def no_queue_name_case(method_name: str, make: Callable[[], Method], clause: str) -> None:
    slug = method_name.split(".")[1]

    def run(ctx: Context) -> None:
        peer, ch = with_channel(ctx)
        obs = attempt(peer, ch, make())
        verifier = NO_QUEUE_NAME if method_name != "queue.unbind" else NO_QUEUE_NAME | ConnectionException()
        ctx.check(obs, verifier)

    run.__name__ = f"{slug}_queue_known"
    run.__doc__ = (f"Opens a channel and, without declaring any queue on it, sends {method_name} with an empty queue "
                   "name. The rule's on-failure is not-found (channel.close 404); the queue-name domain says "
                   "502 (syntax error), a channel exception there and a connection exception per errata 18: "
                   "channel.close 404 or 502, or connection.close 502 pass"
                   + (" (and any connection exception, queue.unbind/01)." if method_name == "queue.unbind" else "."))
    clauses = (clause, "amqp091:queue.unbind/01") if method_name == "queue.unbind" else (clause,)
    case(f"amqp091/{method_name}.queue/queue-known",
         title=f"{method_name} with an empty queue name and no queue declared on the channel is refused (404/502)",
         clauses=clauses)(run)


def missing_queue_case(method_name: str, make: Callable[[str], Method], clause: str) -> None:
    slug = method_name.split(".")[1]

    def run(ctx: Context) -> None:
        peer, ch = with_channel(ctx)
        name = unique(ctx, "missing")
        ctx.will_delete("queue", name)  # in case the broker creates it
        obs = attempt(peer, ch, make(name))
        if method_name == "queue.unbind":
            ctx.check(obs, ChannelException(404, channel=ch) | ConnectionException())
        else:
            ctx.check(obs, ChannelException(404, channel=ch))

    run.__name__ = f"{slug}_must_exist"
    extra = (" A connection exception also passes: \"If a unbind fails, the server MUST raise a connection "
             "exception\" (queue.unbind/01)." if method_name == "queue.unbind" else "")
    run.__doc__ = (f"Sends {method_name} naming a queue that was never declared. The rule's on-failure is "
                   f"not-found: channel.close 404 passes.{extra}")
    clauses = (clause, "amqp091:queue.unbind/01") if method_name == "queue.unbind" else (clause,)
    outcome = ("is refused (404, or a connection exception)" if method_name == "queue.unbind"
               else "is channel exception 404")
    case(f"amqp091/{method_name}.queue/must-exist",
         title=f"{method_name} of a queue that does not exist {outcome}", clauses=clauses)(run)
