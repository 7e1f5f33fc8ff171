"""RabbitMQ extension: publisher confirms (confirm.select, server-sent basic.ack).

Tested when the broker lists ``publisher_confirms`` in its capabilities. The rules come
from the confirm class of RabbitMQ's extended 0-9-1 XML: every message received after
confirm.select is acknowledged (all-messages-acknowledged), only after all the queues it
was routed to handled it (all-queues), and an unroutable mandatory message only after its
basic.return (unroutable-messages). The class doc adds, without keywords: sequence numbers
start at 1 with the first confirm.select and the server confirms by basic.ack "referring to
these sequence numbers"; and confirm.select says "The client can only use this method on a
non-transactional channel".

time-guarantees ("Applications SHOULD NOT make assumptions" about how soon) binds
applications; the cases here wait a bounded time for acks all the same (REACTION_WINDOW).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Peer
from amqpspec.peer.base import Closed
from amqpspec.verify import ChannelException, ConnectionException, Replies
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._common import QUICK_WINDOW, REACTION_WINDOW
from ._model import Message, bind, declare_exchange, declare_queue, message_count, publish, read_content, unique
from ._replies import answer
from ._tx import tx_select

CONFIRMS = ("publisher_confirms",)
ALL_ACKED = "rabbitmq091:confirm/all-messages-acknowledged"
ALL_QUEUES = "rabbitmq091:confirm/all-queues"
UNROUTABLE = "rabbitmq091:confirm/unroutable-messages"
SEQUENCE = ("Published messages are assigned ascending sequence numbers, starting at 1 with the first "
            "Confirm.Select method. The server confirms messages by sending Basic.Ack methods referring to these "
            "sequence numbers.")
SELECT_DOC = ("This method sets the channel to use publisher acknowledgements. The client can only use this method "
              "on a non-transactional channel.")
SELECT_OK_DOC = ("This method confirms to the client that the channel was successfully set to use publisher "
                 "acknowledgements.")
NO_WAIT = ("If set, the server will not respond to the method. The client should not wait for a reply method. If "
           "the server could not complete the method it will raise a channel or connection exception.")


@dataclass
class Confirms:
    """What came back on a confirm-mode channel for sequence numbers 1..expected."""

    expected: int
    acked: set[int] = field(default_factory=set)
    nacked: set[int] = field(default_factory=set)
    events: list[str] = field(default_factory=list)      # in arrival order: "ack 3", "nack 2+", "return", ...
    returns: list[Message] = field(default_factory=list)
    bad_tags: list[int] = field(default_factory=list)    # tags outside 1..expected (0 only with multiple)
    closed: str = ""

    @property
    def outstanding(self) -> set[int]:
        return set(range(1, self.expected + 1)) - self.acked - self.nacked

    def describe(self) -> str:
        text = ", ".join(self.events) or "no confirm"
        if self.outstanding:
            text += f"; unconfirmed: {sorted(self.outstanding)}"
        return text + (f"; {self.closed}" if self.closed else "")


def collect(peer: Peer, ch: int, expected: int, first: int = 1, window: float = REACTION_WINDOW) -> Confirms:
    """Reads basic.ack / basic.nack (and basic.return with its content) on ``ch`` until
    sequence numbers ``first``..``expected`` are all confirmed, a close, or the window ends."""
    got = Confirms(expected)
    got.acked.update(range(1, first))
    until = time.monotonic() + window
    while got.outstanding:
        left = until - time.monotonic()
        item = peer.recv(left) if left > 0 else None
        if item is None or isinstance(item, Closed):
            got.closed = "connection closed" if isinstance(item, Closed) else ""
            break
        if not isinstance(item, MethodFrame):
            continue
        name = item.method.NAME
        if name in ("channel.close", "connection.close"):
            got.closed = item.summary() if hasattr(item, "summary") else name
            got.events.append(f"{name} {item.method.reply_code}")  # type: ignore[attr-defined]
            break
        if item.channel != ch:
            continue
        if name == "basic.return":
            got.returns.append(read_content(peer, item))
            got.events.append("return")
        elif name in ("basic.ack", "basic.nack"):
            tag, multiple = item.method.delivery_tag, bool(item.method.multiple)  # type: ignore[attr-defined]
            if multiple:
                covered = {t for t in got.outstanding if tag == 0 or t <= tag}
            else:
                covered = {tag}
            if not (1 <= tag <= expected or (tag == 0 and multiple)):
                got.bad_tags.append(tag)
            (got.acked if name == "basic.ack" else got.nacked).update(covered)
            got.events.append(f"{name.split('.')[1]} {tag}{'+' if multiple else ''}")
        else:
            got.events.append(name)
    return got


def confirm_channel(ctx: Context, peer: Peer, nowait: bool = False) -> int:
    """A channel in confirm mode (select-ok awaited unless ``nowait``); skips when refused."""
    ch = peer.open_channel()
    if nowait:
        peer.send(MethodFrame(ch, spec.ConfirmSelect(True)))
        return ch
    obs = answer(peer, ch, spec.ConfirmSelect(False), "confirm.select-ok")
    if not obs.methods("confirm.select-ok", ch):
        ctx.skip(f"confirm.select was not answered with select-ok ({obs.describe()}); "
                 "see amqp091/rabbitmq.confirm.select/select-ok")
    return ch


def record_all_acked(ctx: Context, got: Confirms, what: str = "every message is acknowledged") -> bool:
    ok = not got.outstanding and not got.nacked and not got.closed
    return ctx.record(ok, expected=f"basic.ack for sequence numbers 1..{got.expected}", observed=got.describe(),
                      what=what, clauses=(ALL_ACKED,))


# ---------------------------------------------------------------------------------- confirm.select
@case("amqp091/rabbitmq.confirm.select/select-ok", title="confirm.select is answered with confirm.select-ok",
      requires=CONFIRMS, guideline=f"{SELECT_DOC} / {SELECT_OK_DOC}")
def select_ok(ctx: Context) -> None:
    """Sends confirm.select (nowait=0) on a new, non-transactional channel of a broker that
    offers publisher_confirms: the answer is confirm.select-ok."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(answer(peer, ch, spec.ConfirmSelect(False), "confirm.select-ok"),
              Replies("confirm.select-ok", channel=ch))


@case("amqp091/rabbitmq.confirm.select/nowait", title="confirm.select with nowait gets no reply and confirm mode is on",
      requires=CONFIRMS, clauses=(ALL_ACKED,))
def select_nowait(ctx: Context) -> None:
    """Sends confirm.select with nowait=1, publishes one message to a queue, then a synchronous
    method on the channel. No confirm.select-ok may come (no-wait: "the server will not respond"),
    and the message, received after the channel was put into confirm mode, is acknowledged."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer, nowait=True)
    queue = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", queue, b"confirm me")
    got = collect(peer, ch, 1)
    select_oks = [e for e in got.events if e == "confirm.select-ok"]
    record_all_acked(ctx, got, what="the message published after confirm.select(nowait) is acknowledged")
    _no_select_ok(ctx, peer, ch, select_oks)


def _no_select_ok(ctx: Context, peer: Peer, ch: int, seen: list[str]) -> None:
    """Checks, up to a synchronous reply on ``ch``, that no confirm.select-ok arrived."""
    peer.send(MethodFrame(ch, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True)))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame) and item.channel == ch
                       and item.method.NAME in ("exchange.declare-ok", "channel.close"))
    oks = obs.methods("confirm.select-ok", ch)
    ctx.record(not oks and not seen and bool(obs.methods("exchange.declare-ok", ch)),
               expected="no confirm.select-ok, and the channel goes on", observed=obs.describe(),
               what="confirm.select with nowait is not answered", guideline=NO_WAIT)


@case("amqp091/rabbitmq.confirm.select/select-twice-keeps-numbering",
      title="a second confirm.select gets select-ok and does not restart the sequence numbers",
      requires=CONFIRMS, guideline=SEQUENCE)
def select_twice(ctx: Context) -> None:
    """confirm.select, one publish (acked as 1), confirm.select again (select-ok), one more
    publish: numbering starts at 1 "with the first Confirm.Select", so the second message is
    confirmed as 2."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer)
    queue = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", queue, b"one")
    first = collect(peer, ch, 1)
    if not record_all_acked(ctx, first, what="the first message is acknowledged as 1"):
        return
    obs = answer(peer, ch, spec.ConfirmSelect(False), "confirm.select-ok")
    if not ctx.check(obs, Replies("confirm.select-ok", channel=ch), what="the second confirm.select gets select-ok",
                     guideline=SELECT_OK_DOC):
        return
    publish(peer, ch, "", queue, b"two")
    second = collect(peer, ch, 2, first=2)
    ctx.record(second.acked >= {2} and not second.bad_tags and not second.closed,
               expected="basic.ack with delivery-tag 2", observed=second.describe(),
               what="the sequence goes on after the second select")


@case("amqp091/rabbitmq.confirm.select/on-transacted-channel",
      title="confirm.select on a transacted channel is refused with a channel exception",
      requires=CONFIRMS, guideline=SELECT_DOC)
def select_on_tx(ctx: Context) -> None:
    """tx.select (select-ok), then confirm.select on the same channel. The client "can only use
    this method on a non-transactional channel": the server does not put the channel in both
    modes, and no code being named, any channel exception passes (or a connection exception)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    tx_select(ctx, peer, ch)
    obs = answer(peer, ch, spec.ConfirmSelect(False), "confirm.select-ok", window=QUICK_WINDOW)
    ctx.check(obs, ChannelException(channel=ch) | ConnectionException())


@case("amqp091/rabbitmq.confirm.select/tx-select-on-confirm-channel",
      title="tx.select on a channel in confirm mode is refused (informational)",
      requires=CONFIRMS, guideline=SELECT_DOC)
def tx_on_confirm(ctx: Context) -> None:
    """confirm.select (select-ok), then tx.select on the same channel. The XML forbids only the
    other order (confirm.select on a transactional channel); a channel in both modes would
    contradict it all the same, so a refusal (any channel or connection exception) is expected,
    and anything else is recorded as informational."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer)
    obs = answer(peer, ch, spec.TxSelect(), "tx.select-ok", window=QUICK_WINDOW)
    ctx.check(obs, ChannelException(channel=ch) | ConnectionException())


# ---------------------------------------------------------------------------------- acknowledgements
@case("amqp091/rabbitmq.confirm/every-message-acked",
      title="every message published in confirm mode is acknowledged, by sequence numbers 1..n",
      requires=CONFIRMS, clauses=(ALL_ACKED,))
def every_message_acked(ctx: Context) -> None:
    """confirm.select, then five messages to a queue: basic.ack (single or multiple) must cover
    sequence numbers 1..5, and no ack may refer to a number that was not assigned (the class
    doc: numbers start at 1 with the first confirm.select)."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer)
    queue = declare_queue(ctx, peer, ch)
    for i in range(5):
        publish(peer, ch, "", queue, b"m%d" % i)
    got = collect(peer, ch, 5)
    record_all_acked(ctx, got)
    ctx.record(not got.bad_tags, expected="every basic.ack refers to a sequence number in 1..5",
               observed=got.describe() + (f"; tags outside 1..5: {got.bad_tags}" if got.bad_tags else ""),
               what="acks refer to the sequence numbers of the published messages", guideline=SEQUENCE)


@case("amqp091/rabbitmq.confirm/acked-after-all-queues",
      title="a message routed to two queues is acknowledged only once both queues hold it",
      requires=CONFIRMS, clauses=(ALL_QUEUES,))
def acked_after_all_queues(ctx: Context) -> None:
    """A fanout exchange bound to two queues; in confirm mode one message is published to it.
    When its basic.ack arrives, both queues must already hold it: a passive queue.declare of
    each, sent after the ack, reports message-count 1."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer)
    exchange = declare_exchange(ctx, peer, ch, "fanout")
    queues = [declare_queue(ctx, peer, ch), declare_queue(ctx, peer, ch)]
    for q in queues:
        bind(peer, ch, q, exchange)
    publish(peer, ch, exchange, "", b"to both")
    got = collect(peer, ch, 1)
    if not record_all_acked(ctx, got, what="the message is acknowledged"):
        return
    other = ctx.connect()
    och = other.open_channel()
    counts = [message_count(other, och, q)[0] for q in queues]
    ctx.record(counts == [1, 1], expected="message-count 1 in both queues once the ack has arrived",
               observed=f"message-counts {counts}")


@case("amqp091/rabbitmq.confirm/unroutable-mandatory-return-first",
      title="an unroutable mandatory message gets basic.return, then basic.ack",
      requires=CONFIRMS, clauses=(UNROUTABLE, ALL_ACKED))
def unroutable_mandatory(ctx: Context) -> None:
    """confirm.select, then a mandatory publish to amq.direct with a routing key no queue is
    bound with. The message is acknowledged (all-messages-acknowledged), and only after the
    basic.return that gives it back (unroutable-messages)."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer)
    publish(peer, ch, "amq.direct", unique(ctx, "nowhere"), b"unroutable", mandatory=True)
    got = collect(peer, ch, 1)
    record_all_acked(ctx, got, what="the unroutable mandatory message is acknowledged")
    order = [e for e in got.events if e == "return" or e.startswith("ack")]
    ctx.record(bool(order) and order[0] == "return" and any(e.startswith("ack") for e in order[1:]),
               expected="basic.return, then basic.ack", observed=got.describe(),
               what="the ack comes after the basic.return", clauses=(UNROUTABLE,))


@case("amqp091/rabbitmq.confirm/unroutable-acked",
      title="an unroutable message without mandatory is acknowledged",
      requires=CONFIRMS, clauses=(ALL_ACKED,))
def unroutable_acked(ctx: Context) -> None:
    """confirm.select, then a publish (mandatory=0) to amq.direct with a routing key no queue is
    bound with: the message goes nowhere, and is acknowledged all the same."""
    peer = ctx.connect()
    ch = confirm_channel(ctx, peer)
    publish(peer, ch, "amq.direct", unique(ctx, "nowhere"), b"dropped")
    got = collect(peer, ch, 1)
    record_all_acked(ctx, got)


__all__ = ["collect", "confirm_channel", "Confirms"]
