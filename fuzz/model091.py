"""A small model of an AMQP 0-9-1 broker, as seen by one client connection.

The stateful machine (``stateful091``) tells the model what it sends (``sent_*``) and feeds
it everything the broker sends (``on_method``, ``on_content``, ``on_socket_closed``); the
model answers what the broker must do next and records a :class:`Violation` whenever the
broker does something the spec text forbids. No sockets here: the unit tests drive the
model with hand-made events.

What is modelled, and the rule each check stands on:

* channels open / closing / closed, and the close handshake: nothing may arrive on a channel
  after its close handshake completed (2.3.7/1, 2.3.7/2);
* queues we declared (exclusive, unique names), messages we published to them (message-id
  property = our id, the body starts with it): every delivered or returned message is one we
  published, with body and properties unchanged (3.1.1/1, 3.1.1/2) and from the queue it was
  routed to (3.1.3.1/2);
* consumers and their tags: no delivery for a consumer before its consume-ok or after its
  cancel-ok (4.6/1);
* delivery tags per channel: never zero (domain.delivery-tag/non-zero), never two live
  deliveries with one tag (an ack must name exactly one delivered message:
  basic.ack.multiple/exists); an ack of a tag that was not delivered, or already
  acknowledged, is a channel exception 406 (basic.ack.multiple/exists, on-failure
  precondition-failed); tx.commit on a channel without tx.select likewise
  (tx.commit/transacted);
* prefetch: with basic.qos prefetch-count N in effect, never more than N unacknowledged
  consumer deliveries on the channel (basic.qos.prefetch-count/01; the spec's per-channel
  reading -- RabbitMQ documents a per-consumer one);
* basic.recover: messages resent after it carry redelivered (basic.recover/01);
* transactions: a publication abandoned by tx.rollback is not delivered on its channel after
  rollback-ok (4.6/1). (Delivery before commit-ok is not judged: 4.6 lists the methods whose
  effects it orders, and tx.commit is not among them; atomicity is only a SHOULD.)
* every synchronous request is answered before its deadline (hang), and the broker never
  drops the connection without the close handshake (2.3.7/1).

Where the broker refuses something the model expected to work, the refusal is a violation
only when a clause requires the operation to succeed (e.g. exclusive queues,
queue.declare.exclusive/types); 540 (not-implemented) marks the feature unsupported;
anything else is kept as an *anomaly*: reported in the run statistics, not as a finding.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from amqpspec.wire.amqp091 import to_plain
from .model import Violation

NOT_IMPLEMENTED = 540
FRAMING_CODES = (501, 502, 503, 505)   # frame-error, syntax-error, command-invalid, unexpected-frame
PRECONDITION_FAILED = 406
REPLY_TIMEOUT = 5.0         # seconds a synchronous request may wait for its answer
EXCEPTION_GRACE = 1.0       # after a sync probe overtook an expected channel exception

C_CLOSE = ("amqp091:2.3.7/1", "amqp091:2.3.7/2")
C_CONTENT = ("amqp091:3.1.1/1",)
C_PROPS = ("amqp091:3.1.1/2",)
C_ROUTE = ("amqp091:3.1.3.1/2", "amqp091:queue.declare/default-binding")
C_VISIBLE = ("amqp091:4.6/1",)
C_TAG_ZERO = ("amqp091:domain.delivery-tag/non-zero",)
C_ACK = ("amqp091:basic.ack.multiple/exists",)
C_PREFETCH = ("amqp091:basic.qos.prefetch-count/01",)
C_RECOVER = ("amqp091:basic.recover/01",)
C_COMMIT = ("amqp091:tx.commit/transacted",)
C_CLOSE_DISCARD = ("amqp091:channel.close/stability",)
C_REPLY = ("amqp091:2.3.7/2",)  # the only reply the text requires in so many words: close-ok


@dataclass
class Published:
    msg_id: str
    queue: str | None          # the queue it was routed to (None: unroutable)
    body: bytes
    props: dict[str, Any]      # the properties we set (plain values)
    channel: int
    tx: str = "none"           # "none", "pending" (in an open transaction), "committed", "rolled-back"


@dataclass
class Consumer:
    tag: str
    queue: str
    no_ack: bool
    state: str = "pending"     # pending (consume sent), active, cancelling, cancelled


@dataclass
class Unacked:
    msg_id: str | None
    via: str                   # "consume" or "get"
    consumer: str | None = None


@dataclass
class Request:
    name: str                  # the method we sent, e.g. "queue.declare"
    replies: tuple[str, ...]   # acceptable answers
    state: str                 # the rule that sent it, for signatures
    deadline: float
    arg: Any = None            # e.g. the queue name, the prefetch count
    clauses: tuple[str, ...] = ()  # clauses that make a refusal a violation
    probe: bool = False        # a no-op sent to flush the channel: a refusal is blamed on what came before


@dataclass
class Expectation:
    """A channel exception the spec requires the broker to raise."""

    codes: frozenset[int]
    state: str
    clauses: tuple[str, ...]
    deadline: float
    why: str


@dataclass
class Channel:
    number: int
    state: str = "closed"            # opening, open, closing (we sent close), closed
    closed_by: str | None = None     # "handshake" (close/close-ok done), "broker" (its close), "crossed" (both)
    consumers: dict[str, Consumer] = field(default_factory=dict)
    unacked: dict[int, Unacked] = field(default_factory=dict)
    tags_seen: set[int] = field(default_factory=set)
    max_tag: int = 0
    prefetch: int = 0
    tx: str = "none"                 # none, selecting, on
    tx_publishes: list[str] = field(default_factory=list)
    tx_acks: dict[int, Unacked] = field(default_factory=dict)
    must_redeliver: set[str] = field(default_factory=set)   # msg ids resent after basic.recover
    pending: deque[Request] = field(default_factory=deque)
    expect: Expectation | None = None
    last_async: tuple[str, tuple[str, ...]] = ("open", ())  # the last asynchronous method sent, its clauses

    def reset(self) -> None:
        keep = self.number
        self.__init__(keep)  # type: ignore[misc]


class Model091:
    """Expected broker state for one connection, and the violations seen so far."""

    def __init__(self, channel_max: int = 0) -> None:
        self.channels: dict[int, Channel] = {}
        self.queues: set[str] = set()
        self.published: dict[str, Published] = {}
        self.connection = "open"      # open, closing (we sent close), closed
        self.violations: list[Violation] = []
        self.anomalies: list[str] = []
        self.unsupported: set[str] = set()
        self.deliveries = 0
        self.channel_max = channel_max

    # ------------------------------------------------------------------ helpers
    def ch(self, number: int) -> Channel:
        c = self.channels.get(number)
        if c is None:
            c = self.channels[number] = Channel(number)
        return c

    def open_channels(self) -> list[int]:
        return sorted(n for n, c in self.channels.items() if c.state == "open")

    def violate(self, kind: str, state: str, clauses: tuple[str, ...], message: str, *, code: int | None = None,
                condition: str | None = None) -> Violation:
        v = Violation(kind, state, tuple(clauses), message, code, condition)
        self.violations.append(v)
        return v

    def _request(self, ch: int, name: str, replies: tuple[str, ...], state: str, now: float, arg: Any = None,
                 clauses: tuple[str, ...] = ()) -> Request:
        r = Request(name, replies, state, now + REPLY_TIMEOUT, arg, clauses)
        self.ch(ch).pending.append(r)
        return r

    def busy(self) -> bool:
        """Something is still owed by the broker (a reply or an exception)."""
        return any(c.pending or c.expect for c in self.channels.values())

    def owed(self, ch: int) -> bool:
        c = self.channels.get(ch)
        return bool(c and (c.pending or c.expect))

    # ------------------------------------------------------------------ what we send
    def sent_channel_open(self, ch: int, now: float) -> None:
        c = self.ch(ch)
        c.reset()
        c.state = "opening"
        self._request(ch, "channel.open", ("channel.open-ok",), "after-channel-open", now)

    def sent_channel_close(self, ch: int, now: float) -> None:
        c = self.ch(ch)
        c.state = "closing"
        self._request(ch, "channel.close", ("channel.close-ok",), "after-channel-close", now, clauses=C_REPLY)

    def sent_queue_declare(self, ch: int, queue: str, now: float, passive: bool = False) -> None:
        clauses = () if passive else ("amqp091:queue.declare.exclusive/types",)
        self._request(ch, "queue.declare", ("queue.declare-ok",), "after-queue-declare", now, queue, clauses)

    def sent_sync_probe(self, ch: int, now: float) -> None:
        """A passive declare of amq.direct (3.1.3.1: every broker has it) behind asynchronous methods.

        Its answer proves the broker processed everything before it on the channel; an
        exception that comes instead is blamed on the asynchronous method before it.
        """
        r = self._request(ch, "exchange.declare", ("exchange.declare-ok",), "after-sync", now,
                          clauses=("amqp091:3.1.3.1/1",))
        r.probe = True

    def sent_async(self, ch: int, state: str, clauses: tuple[str, ...] = ()) -> None:
        """An asynchronous method went out: a refusal of it is judged by ``clauses``."""
        self.ch(ch).last_async = (state, clauses)

    def sent_publish(self, ch: int, msg_id: str, routing_key: str, body: bytes, props: dict[str, Any],
                     clauses: tuple[str, ...] = ()) -> Published:
        c = self.ch(ch)
        c.last_async = ("after-publish", clauses)
        queue = routing_key if routing_key in self.queues else None
        p = Published(msg_id, queue, body, props, ch, "pending" if c.tx == "on" else "none")
        self.published[msg_id] = p
        if c.tx == "on":
            c.tx_publishes.append(msg_id)
        return p

    def sent_consume(self, ch: int, tag: str, queue: str, no_ack: bool, now: float) -> None:
        c = self.ch(ch)
        c.consumers[tag] = Consumer(tag, queue, no_ack)
        self._request(ch, "basic.consume", ("basic.consume-ok",), "after-consume", now, tag,
                      ("amqp091:basic/09",) if no_ack else ("amqp091:basic/10",))

    def sent_cancel(self, ch: int, tag: str, now: float) -> None:
        c = self.ch(ch)
        if tag in c.consumers:
            c.consumers[tag].state = "cancelling"
        self._request(ch, "basic.cancel", ("basic.cancel-ok",), "after-cancel", now, tag)

    def sent_get(self, ch: int, queue: str, no_ack: bool, now: float) -> None:
        self._request(ch, "basic.get", ("basic.get-ok", "basic.get-empty"), "after-get", now, (queue, no_ack))

    def sent_qos(self, ch: int, prefetch: int, now: float) -> None:
        self._request(ch, "basic.qos", ("basic.qos-ok",), "after-qos", now, prefetch)

    def sent_flow(self, ch: int, now: float) -> None:
        self._request(ch, "channel.flow", ("channel.flow-ok",), "after-flow", now)

    def sent_recover(self, ch: int, now: float) -> None:
        c = self.ch(ch)
        c.must_redeliver |= {u.msg_id for u in c.unacked.values() if u.msg_id}
        self._request(ch, "basic.recover", ("basic.recover-ok",), "after-recover", now)

    def sent_tx_select(self, ch: int, now: float) -> None:
        self.ch(ch).tx = "selecting"
        self._request(ch, "tx.select", ("tx.select-ok",), "after-tx-select", now)

    def sent_tx_commit(self, ch: int, now: float) -> None:
        c = self.ch(ch)
        if c.tx != "on":
            self.expect_exception(ch, {PRECONDITION_FAILED}, "after-tx-commit-not-transacted", C_COMMIT, now,
                                  "tx.commit on a channel that never sent tx.select is a channel exception 406")
            return
        self._request(ch, "tx.commit", ("tx.commit-ok",), "after-tx-commit", now)

    def sent_tx_rollback(self, ch: int, now: float) -> None:
        self._request(ch, "tx.rollback", ("tx.rollback-ok",), "after-tx-rollback", now)

    def ack_is_valid(self, ch: int, tag: int, multiple: bool) -> bool:
        """Whether basic.ack(tag, multiple) names delivered, unacknowledged messages (basic.ack.multiple/exists)."""
        c = self.ch(ch)
        if tag == 0:
            return multiple
        return tag in c.unacked

    def sent_ack(self, ch: int, tag: int, multiple: bool, now: float) -> bool:
        """Records an ack; an invalid one makes the model expect channel exception 406."""
        c = self.ch(ch)
        if not self.ack_is_valid(ch, tag, multiple):
            state = "after-ack-unknown-tag" if tag not in c.tags_seen else "after-ack-twice"
            self.expect_exception(ch, {PRECONDITION_FAILED}, state, C_ACK, now,
                                  f"basic.ack of delivery-tag {tag} (multiple={multiple}), which names no "
                                  "delivered, unacknowledged message, is a channel exception 406")
            return False
        c.last_async = ("after-ack", C_ACK)
        self._settle(c, tag, multiple, requeue=False, ack=True)
        return True

    def sent_reject(self, ch: int, tag: int, multiple: bool, requeue: bool) -> None:
        """basic.reject / basic.nack of valid tags only (the spec sets no rule for invalid ones)."""
        self._settle(self.ch(ch), tag, multiple, requeue=requeue, ack=False)

    def _settle(self, c: Channel, tag: int, multiple: bool, *, requeue: bool, ack: bool) -> None:
        tags = [t for t in c.unacked if (t <= tag or tag == 0)] if multiple else [tag]
        for t in tags:
            u = c.unacked.pop(t, None)
            if u is None:
                continue
            if ack and c.tx == "on":
                c.tx_acks[t] = u  # takes effect at commit, comes back at rollback

    def expect_exception(self, ch: int, codes: set[int], state: str, clauses: tuple[str, ...], now: float,
                         why: str) -> None:
        self.ch(ch).expect = Expectation(frozenset(codes), state, clauses, now + REPLY_TIMEOUT, why)

    def sent_connection_close(self, now: float) -> None:
        self.connection = "closing"
        self._request(0, "connection.close", ("connection.close-ok",), "after-connection-close", now,
                      clauses=C_REPLY)

    # ------------------------------------------------------------------ what the broker sends
    def on_method(self, ch: int, name: str, method: Any, now: float) -> None:
        """A method frame without content from the broker."""
        if ch == 0:
            self._on_connection_method(name, method, now)
            return
        c = self.ch(ch)
        if name == "channel.close":
            self._on_channel_close(c, method, now)
            return
        if c.state == "closed":
            if name == "channel.close-ok" and c.closed_by == "crossed":
                c.closed_by = "handshake"  # both sent close at once: each answers the other's (channel.close/stability)
                return
            self._after_close(c, f"{name} on channel {ch}", reply=name.endswith("-ok") or name == "basic.get-empty")
            return
        if name == "channel.close-ok":
            if c.state != "closing":
                self.anomalies.append(f"channel.close-ok on channel {ch}, which we did not close")
            self._answer(c, name, method)
            c.state, c.closed_by = "closed", "handshake"
            self._drop_channel(c)
            return
        if name == "basic.cancel":  # the broker cancels a consumer (queue deleted; RabbitMQ extension)
            tag = str(getattr(method, "consumer_tag", ""))
            if tag in c.consumers:
                c.consumers[tag].state = "cancelled"
            return
        if name in ("basic.ack", "basic.nack"):  # publisher confirms: not used by this machine
            self.anomalies.append(f"{name} from the broker on channel {ch} without confirm.select")
            return
        self._answer(c, name, method)

    def _answer(self, c: Channel, name: str, method: Any) -> None:
        if not c.pending:
            self.anomalies.append(f"unsolicited {name} on channel {c.number}")
            return
        req = c.pending[0]
        if name not in req.replies:
            self.anomalies.append(f"{name} on channel {c.number} while {req.name} awaited {'/'.join(req.replies)}")
            return
        c.pending.popleft()
        if name == "channel.open-ok":
            c.state = "open"
        elif name == "queue.declare-ok":
            queue = str(getattr(method, "queue", req.arg))
            if req.arg and queue != req.arg:
                self.anomalies.append(f"queue.declare-ok names {queue!r}, we declared {req.arg!r}")
            self.queues.add(req.arg or queue)
        elif name == "basic.consume-ok":
            tag = str(getattr(method, "consumer_tag", req.arg))
            cons = c.consumers.get(req.arg)
            if cons is not None and cons.state == "pending":
                cons.state = "active"
            if tag != req.arg:
                self.anomalies.append(f"consume-ok names consumer {tag!r}, we asked for {req.arg!r}")
        elif name == "basic.cancel-ok":
            cons = c.consumers.get(req.arg)
            if cons is not None:
                cons.state = "cancelled"
        elif name == "basic.qos-ok":
            c.prefetch = int(req.arg)
        elif name == "basic.recover-ok":
            c.unacked.clear()  # resent: the old tags are gone
        elif name == "tx.select-ok":
            c.tx = "on"
        elif name == "tx.commit-ok":
            for mid in c.tx_publishes:
                if mid in self.published:
                    self.published[mid].tx = "committed"
            c.tx_publishes.clear()
            c.tx_acks.clear()
        elif name == "tx.rollback-ok":
            for mid in c.tx_publishes:
                if mid in self.published:
                    self.published[mid].tx = "rolled-back"
            c.tx_publishes.clear()
            c.unacked.update(c.tx_acks)
            c.tx_acks.clear()

    def _on_channel_close(self, c: Channel, method: Any, now: float) -> None:
        code = int(getattr(method, "reply_code", 0) or 0)
        text = str(getattr(method, "reply_text", ""))
        exp = c.expect
        head = c.pending[0] if c.pending else None
        if head is not None and head.probe and c.last_async[0] != "open":
            head = None  # the probe only flushed the channel: blame the asynchronous method before it
        if c.state == "closed":
            self._after_close(c, f"channel.close {code} on channel {c.number}")
            return
        if exp is not None:
            if code not in exp.codes:
                self.violate("wrong-code", exp.state, exp.clauses,
                             f"{exp.why}; the broker closed channel {c.number} with {code} {text!r}", code=code)
        elif c.state == "closing":
            pass  # both sides closed at once: close-ok from us settles it
        elif head is not None and code == NOT_IMPLEMENTED:
            self.unsupported.add(head.name)
        elif head is not None and head.clauses:
            self.violate("wrong-code", head.state, head.clauses,
                         f"{head.name} on channel {c.number} refused with channel.close {code} {text!r}", code=code)
        elif head is None and c.last_async[1] and code != NOT_IMPLEMENTED:
            state, clauses = c.last_async
            self.violate("wrong-code", state, clauses,
                         f"channel {c.number} closed by the broker with {code} {text!r} after a valid "
                         f"{state.removeprefix('after-')}", code=code)
        else:
            what = head.name if head is not None else c.last_async[0].removeprefix("after-")
            self.anomalies.append(f"channel {c.number} closed by the broker after {what}: {code} {text}")
        # our close crossed theirs: their close-ok to ours is still owed, and due (channel.close/stability)
        c.closed_by = "crossed" if c.state == "closing" else "broker"
        c.state = "closed"
        self._drop_channel(c)

    def _drop_channel(self, c: Channel) -> None:
        """A closed channel: its consumers are gone, its unacked messages go back to their queues (4.5)."""
        for u in c.unacked.values():
            if u.msg_id in self.published:
                pass  # redelivery elsewhere is legitimate
        number = c.number
        state, closed_by = c.state, c.closed_by
        c.reset()
        c.state, c.closed_by = state, closed_by
        c.number = number

    def _on_connection_method(self, name: str, method: Any, now: float) -> None:
        if self.connection == "closed":
            self.violate("invariant", "after-connection-close", C_CLOSE,
                         f"{name} after the connection close handshake completed")
            return
        if name == "connection.close-ok":
            c = self.ch(0)
            if c.pending and c.pending[0].name == "connection.close":
                c.pending.popleft()
            self.connection = "closed"
            return
        if name == "connection.close":
            code = int(getattr(method, "reply_code", 0) or 0)
            text = str(getattr(method, "reply_text", ""))
            self._blame_connection_close(code, text)
            self.connection = "closed"
            for c in self.channels.values():
                c.pending.clear()
                c.expect = None
            return
        self.anomalies.append(f"{name} on channel 0")

    def _blame_connection_close(self, code: int, text: str) -> None:
        """A connection exception: which step caused it, and does a clause say that step was fine?

        An expected channel exception that came as a connection exception has the wrong code.
        Otherwise the culprit is the request awaiting its answer, or (behind a flushing probe)
        the last asynchronous method; a framing code (501/502/503/505) for input the model
        holds valid is a decode error by the broker.
        """
        if self.connection == "closing":
            return
        expecting = [c for c in self.channels.values() if c.expect is not None]
        if expecting:
            exp = expecting[0].expect
            assert exp is not None
            self.violate("wrong-code", exp.state, exp.clauses,
                         f"{exp.why}; the broker closed the whole connection with {code} {text!r}", code=code)
            return
        culprit: tuple[str, tuple[str, ...], str, bool] | None = None
        for c in sorted(self.channels.values(), key=lambda c: c.number):
            head = c.pending[0] if c.pending else None
            if head is not None and not head.probe:
                culprit = (head.state, head.clauses, head.name, False)
                break
            if head is not None and c.last_async[0] != "open":
                culprit = (c.last_async[0], c.last_async[1], c.last_async[0].removeprefix("after-"), True)
                break
        if culprit is None or code == NOT_IMPLEMENTED:
            self.anomalies.append(f"connection closed by the broker: {code} {text}")
            return
        state, clauses, what, is_async = culprit
        kind = "decode-error-by-broker" if code in FRAMING_CODES else "wrong-code"
        # an asynchronous method without clauses carried drawn content (e.g. properties whose
        # strings need not be UTF-8): refusing it, even as a framing error, breaks no rule
        if not clauses and (kind != "decode-error-by-broker" or is_async):
            self.anomalies.append(f"connection closed by the broker after {what}: {code} {text}")
            return
        self.violate(kind, state, clauses, f"{what} answered with connection.close {code} {text!r}", code=code)

    def _after_close(self, c: Channel, what: str, reply: bool = False) -> None:
        """Something arrived on a channel that is closed (or that the broker is closing).

        After the close/close-ok handshake the channel is closed for both parties (2.3.7).
        After the broker's own channel.close (our close-ok may still be in flight) the text
        forbids one thing only: answering a request, because a peer that sent close MUST
        discard every method it receives except close and close-ok (channel.close/stability).
        Anything else it sends in that window (a delivery already on its way) breaks no
        clause and is only noted.
        """
        if c.closed_by is None:
            self.anomalies.append(f"{what}: a channel that was never opened")
            return
        if c.closed_by == "handshake":
            self.violate("invariant", "after-channel-close", C_CLOSE, f"{what} after the close/close-ok handshake")
        elif reply:
            self.violate("invariant", "after-broker-channel-close", C_CLOSE_DISCARD,
                         f"{what} after the broker's own channel.close: a request that reached it after it sent "
                         "close was answered, not discarded")
        else:
            self.anomalies.append(f"{what} after the broker's channel.close")

    def on_content(self, ch: int, name: str, method: Any, props: Any, body: bytes, now: float) -> None:
        """basic.deliver, basic.get-ok or basic.return with its content, complete."""
        c = self.ch(ch)
        if c.state == "closed":
            self._after_close(c, f"{name} on channel {ch}", reply=name == "basic.get-ok")
            return
        self.deliveries += 1
        plain = _props(props)
        msg_id = plain.get("message_id")
        state = {"basic.deliver": "in-consume", "basic.get-ok": "after-get", "basic.return": "after-return"}[name]
        pub = self.published.get(str(msg_id)) if msg_id is not None else None
        if pub is None:
            self.violate("invariant", state, C_CONTENT,
                         f"{name} on channel {ch} carries a message we never published (message-id {msg_id!r}, "
                         f"{len(body)} octets: {body[:24]!r})")
        else:
            self._check_same(name, ch, state, pub, plain, body)
        if name == "basic.return":
            return
        tag = int(getattr(method, "delivery_tag", 0) or 0)
        if name == "basic.get-ok":
            head = c.pending[0] if c.pending else None
            if head is None or head.name != "basic.get":
                self.anomalies.append(f"basic.get-ok on channel {ch} without a basic.get")
                no_ack, queue = True, None
            else:
                c.pending.popleft()
                queue, no_ack = head.arg
            consumer = None
        else:
            ctag = str(getattr(method, "consumer_tag", ""))
            cons = c.consumers.get(ctag)
            if cons is None or cons.state == "pending":
                self.violate("invariant", "in-consume", C_VISIBLE,
                             f"basic.deliver on channel {ch} for consumer {ctag!r} "
                             f"{'before its consume-ok' if cons is not None else 'that does not exist on this channel'}")
                no_ack, queue = True, None
            else:
                if cons.state == "cancelled":
                    self.violate("invariant", "after-cancel", C_VISIBLE,
                                 f"basic.deliver on channel {ch} for consumer {ctag!r} after its cancel-ok")
                no_ack, queue = cons.no_ack, cons.queue
            consumer = ctag
        if pub is not None and queue is not None and pub.queue != queue:
            self.violate("invariant", state, C_ROUTE,
                         f"message {pub.msg_id} was published to queue {pub.queue!r} but came from {queue!r}")
        if pub is not None and pub.tx == "rolled-back" and pub.channel == ch:
            # rollback abandons the publications of the transaction (tx.rollback); once its
            # rollback-ok is on the channel, that effect must show (4.6/1)
            self.violate("invariant", "after-tx-rollback", C_VISIBLE,
                         f"message {pub.msg_id} was delivered on channel {ch} after its publication there was "
                         "rolled back (tx.rollback-ok)")
        if pub is not None and pub.msg_id in c.must_redeliver:
            if not getattr(method, "redelivered", False):
                self.violate("invariant", "after-recover", C_RECOVER,
                             f"message {pub.msg_id} resent on channel {ch} after basic.recover without the "
                             "redelivered flag")
            c.must_redeliver.discard(pub.msg_id)
        self._check_tag(c, tag, name, state)
        if not no_ack:
            if consumer is not None and c.prefetch:
                live = sum(1 for u in c.unacked.values() if u.via == "consume")
                if live >= c.prefetch:
                    self.violate("invariant", "in-consume", C_PREFETCH,
                                 f"basic.deliver on channel {ch} with {live} consumer deliveries unacknowledged and "
                                 f"basic.qos prefetch-count {c.prefetch}")
            c.unacked[tag] = Unacked(str(msg_id) if msg_id is not None else None,
                                     "consume" if consumer else "get", consumer)

    def _check_tag(self, c: Channel, tag: int, name: str, state: str) -> None:
        if tag == 0:
            self.violate("invariant", state, C_TAG_ZERO, f"{name} on channel {c.number} with delivery-tag 0")
        elif tag in c.unacked or tag in c.tx_acks:
            self.violate("invariant", state, C_ACK,
                         f"{name} on channel {c.number} reuses delivery-tag {tag}, still unacknowledged: one tag "
                         "would name two messages")
        c.tags_seen.add(tag)
        c.max_tag = max(c.max_tag, tag)

    def _check_same(self, name: str, ch: int, state: str, pub: Published, plain: dict[str, Any], body: bytes) -> None:
        if body != pub.body:
            where = next((i for i, (a, b) in enumerate(zip(body, pub.body)) if a != b), min(len(body), len(pub.body)))
            self.violate("invariant", state, C_CONTENT,
                         f"{name} on channel {ch}: body of message {pub.msg_id} changed ({len(pub.body)} octets "
                         f"published, {len(body)} delivered, first difference at octet {where})")
        for key, value in pub.props.items():
            got = plain.get(key)
            if key == "headers" and isinstance(value, dict):
                got = got if isinstance(got, dict) else {}
                missing = [k for k in value if k not in got or got[k] != value[k]]
                if missing:
                    k = missing[0]
                    self.violate("invariant", state, C_PROPS,
                                 f"{name} on channel {ch}: header {k!r} of message {pub.msg_id} was "
                                 f"{value[k]!r}, delivered {got.get(k, '<absent>')!r}")
                continue
            if got != value:
                self.violate("invariant", state, C_PROPS,
                             f"{name} on channel {ch}: property {key} of message {pub.msg_id} was {value!r}, "
                             f"delivered {got!r}")

    def on_socket_closed(self, how: str) -> None:
        """The TCP connection ended; without a completed close handshake it is a violation (2.3.7/1)."""
        if self.connection == "closed":
            return
        if self.connection == "closing":
            self.violate("reset-without-close", "after-connection-close", C_CLOSE,
                         f"the broker ended the socket ({how}) instead of answering connection.close with close-ok")
        else:
            self.violate("reset-without-close", "open", ("amqp091:2.3.7/1",),
                         f"the broker ended the socket ({how}) without the connection close handshake")
        self.connection = "closed"

    # ------------------------------------------------------------------ deadlines
    def overdue(self, now: float) -> list[Violation]:
        """Requests and required exceptions whose deadline passed: each a violation, then forgotten."""
        found = []
        for c in self.channels.values():
            if c.pending and c.pending[0].deadline <= now:
                r = c.pending.popleft()
                found.append(self.violate("hang", r.state, r.clauses if r.name.endswith(".close") else (),
                                          f"{r.name} on channel {c.number} not answered ({'/'.join(r.replies)}) "
                                          f"within {REPLY_TIMEOUT:g}s"))
            if c.expect is not None and c.expect.deadline <= now:
                e = c.expect
                c.expect = None
                found.append(self.violate("invariant", e.state, e.clauses,
                                          f"{e.why}; no channel exception within {REPLY_TIMEOUT:g}s"))
        return found

    def expectation_met(self, ch: int) -> bool:
        c = self.channels.get(ch)
        return c is None or c.expect is None or c.state == "closed"

    def settle_expectation(self, ch: int) -> None:
        """The expected exception came (the channel is closed): forget it."""
        c = self.channels.get(ch)
        if c is not None and c.state == "closed":
            c.expect = None


def _props(props: Any) -> dict[str, Any]:
    if props is None:
        return {}
    out = {}
    for f in props.FIELDS:
        v = getattr(props, f.attr)
        if v is not None:
            out[f.attr] = to_plain(v)
    return out
