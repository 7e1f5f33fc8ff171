"""Stateful fuzzing of an AMQP 0-9-1 broker: a hypothesis RuleBasedStateMachine over one connection.

Each example opens one connection through the raw peer (``amqpspec.peer.amqp091.Peer``, so
every frame is in the transcript, SASL masked) and runs a sequence of rules: open and close
channels, declare queues, publish (bodies from empty to several frames, properties drawn
from the codec-derived strategies), consume and cancel, get, ack (valid, unknown and
repeated tags), reject / nack, qos, recover, transactions, channel.flow, and *interleave*
(contents for several channels, frame by frame, in one write). Everything the broker sends
goes to :class:`~amqpspec.fuzz.model091.Model091`, which knows what the spec allows; a
violation found there fails the example and hypothesis shrinks it to a minimal sequence.

``frame-max`` is negotiated down to 4096 octets (frame-min-size), so that ordinary bodies of
a few KiB travel as several body frames: content reassembly is exercised on both sides.

Run it with :func:`amqpspec.fuzz.model_runner.run_stateful` (``protocol="0-9-1"``), or as
the fuzz target ``stateful-0-9-1``.
"""
from __future__ import annotations

import copy
import time
import uuid
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from amqpspec.peer.amqp091 import Peer
from amqpspec.peer.base import Closed, PeerError
from amqpspec.wire.amqp091 import (
    RABBITMQ, SPEC, BodyFrame, Dialect, FieldTable, HeaderFrame, HeartbeatFrame, MalformedFrame, MethodFrame,
    RawFrame, describe, spec,
)
from amqpspec.wire.amqp091.frames import FRAME_OVERHEAD

from .model import load_strategies
from .model091 import Model091, _props
from .model_runner import RunConfig
from .stateful_base import StatefulMachine, round_robin

TARGET = "stateful-0-9-1"
PROTOCOL = "0-9-1"
FRAME_MAX = 4096            # frame-min-size (4.2.3): small, so bodies of a few KiB span frames
CHANNELS = 4                # channel numbers the rules use (reused after close)
PAUSE = 0.02                # how long the "pause" rule lets asynchronous deliveries arrive
EXAMPLE_BUDGET = 120.0      # hard deadline of one example's connection
PICK = st.integers(0, 255)  # an index into whatever exists when the rule runs
#: type codes that mean the same in the spec grammar and in RabbitMQ/Qpid (errata): tables
#: made of them are valid under either reading, so a broker must accept them whichever it uses
COMMON = Dialect("common", {c: k for c, k in SPEC.codes.items() if RABBITMQ.codes.get(c) == k})
#: field names as 4.2.5.5/1 allows them: a letter, '$' or '#', then those, digits or underlines (<= 128)
FIELD_NAME = r"[A-Za-z$#][A-Za-z0-9$#_]{0,20}"
#: header names RabbitMQ interprets (sender-selected distribution: BCC is removed, CC routes)
RESERVED_HEADERS = frozenset({"CC", "BCC"})


def _body(msg_id: str, size: int) -> bytes:
    seed = (msg_id + ":").encode()
    return (seed * (size // len(seed) + 1))[:size]


def _property_strategy() -> st.SearchStrategy[Any] | None:
    """BasicProperties from the codec-derived strategies, minus what brokers may refuse by policy.

    user-id is checked against the login by RabbitMQ (documented), expiration must be a
    number of milliseconds there; both are left out or kept well-formed. message-id is ours.
    """
    strat = load_strategies(PROTOCOL)
    if strat is None:
        return None
    names = st.from_regex(FIELD_NAME, fullmatch=True).filter(lambda n: n not in RESERVED_HEADERS)
    fields = {
        "message_id": st.none(),
        "user_id": st.none(),
        "expiration": st.sampled_from(["600000", "3600000"]),
        "delivery_mode": st.sampled_from([1, 2]),      # label: non-persistent (1) or persistent (2)
        "priority": st.integers(0, 9),                 # label: message priority, 0 to 9
        "headers": strat.field_table(COMMON, names=names, max_leaves=6, max_size=4),
    }
    return strat.properties(spec.BasicProperties, COMMON, fields=fields)


def _split(channel: int, body: bytes, frame_max: int) -> list[BodyFrame]:
    room = frame_max - FRAME_OVERHEAD
    return [BodyFrame(channel, body[i:i + room]) for i in range(0, len(body), room)]


def build_machine(cfg: RunConfig) -> type[RuleBasedStateMachine]:
    """A machine class bound to one run (target, budget, known signatures)."""
    prop_strategy = _property_strategy() if cfg.fuzz_properties else None
    body_sizes = st.one_of(
        st.integers(0, 64),
        st.sampled_from([FRAME_MAX - FRAME_OVERHEAD - 1, FRAME_MAX - FRAME_OVERHEAD, FRAME_MAX - FRAME_OVERHEAD + 1,
                         2 * (FRAME_MAX - FRAME_OVERHEAD)]),
        st.integers(0, 3 * FRAME_MAX),
    )
    token = uuid.uuid4().hex[:8]
    publication = st.fixed_dictionaries({
        "queue": PICK, "routable": st.integers(0, 9), "size": body_sizes,
        # one publication in four carries drawn properties (drawing them is the costly part)
        "props": st.one_of(st.none(), st.none(), st.none(), prop_strategy) if prop_strategy is not None else st.none(),
        "mandatory": st.booleans(),
    })

    class Stateful091(StatefulMachine):
        PROTOCOL, TARGET = PROTOCOL, TARGET

        def __init__(self) -> None:
            super().__init__(cfg, Model091())
            self.partial: dict[int, list[Any]] = {}
            self.queue_names: list[str] = []
            self.last_clauses: tuple[str, ...] = ()   # of the last publication built
            if self.expired:
                return
            cfg.examples_run += 1
            self._connect()

        # -------------------------------------------------------------- connection and I/O
        def _connect(self) -> None:
            try:
                peer = Peer.connect(cfg.target, self.transcript, time.monotonic() + EXAMPLE_BUDGET)
                self.peer = peer
                peer.handshake(frame_max=FRAME_MAX, timeout=cfg.reply_timeout)
                if peer.broker_info().product.lower().startswith("rabbitmq"):
                    peer.set_dialect(RABBITMQ)
            except (PeerError, OSError) as exc:
                self.dead = True
                self._lost(f"a fresh connection failed: {exc}", handshake=True)

        def _encode(self, frame: Any) -> bytes:
            return frame.encode(self.peer.dialect)

        def _describe(self, frame: Any) -> str:
            return describe(frame)

        def _next_deadline(self, default: float) -> float:
            return _next_deadline(self.model, default)

        def _framing_violation(self, text: str) -> tuple[tuple[str, ...], str] | None:
            if "frame-end" in text:
                return ("amqp091:4.2.3/1",), f"the broker sent a frame with a bad frame-end: {text}"
            if "announces" in text:
                return ("amqp091:4.2.3/6",), f"the broker sent a frame larger than the negotiated frame-max: {text}"
            return None

        def _send_close(self) -> None:
            self._step("close_connection()")
            self.model.sent_connection_close(time.monotonic())
            self._write([MethodFrame(0, spec.ConnectionClose(200, "amqpspec done", 0, 0))])

        def _dispatch(self, item: Any) -> None:
            now = time.monotonic()
            m = self.model
            if isinstance(item, Closed):
                m.on_socket_closed(item.how)
                self.dead = True
                return
            if isinstance(item, HeartbeatFrame):
                return
            if isinstance(item, MethodFrame):
                name, ch = item.method.NAME, item.channel
                if ch in self.partial:
                    cfg.anomalies[f"{name} interrupted a content on channel {ch}"] += 1
                    del self.partial[ch]
                if item.method.CONTENT:
                    self.partial[ch] = [item.method, None, bytearray()]
                    return
                if name == "channel.close":
                    self.peer.send(MethodFrame(ch, spec.ChannelCloseOk()))  # type: ignore[union-attr]
                elif name == "connection.close" and ch == 0:
                    self.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))  # type: ignore[union-attr]
                    self.dead = True
                m.on_method(ch, name, item.method, now)
                return
            if isinstance(item, HeaderFrame):
                part = self.partial.get(item.channel)
                if part is None or part[1] is not None:
                    cfg.anomalies["content header without a content method"] += 1
                    return
                part[1] = item
                if item.body_size == 0:
                    self._content_done(item.channel)
                return
            if isinstance(item, BodyFrame):
                part = self.partial.get(item.channel)
                if part is None or part[1] is None:
                    cfg.anomalies["content body without a content header"] += 1
                    return
                part[2] += item.data
                if len(part[2]) >= part[1].body_size:
                    self._content_done(item.channel)
                return
            if isinstance(item, (MalformedFrame, RawFrame)):
                cfg.anomalies[f"undecodable frame from the broker: {describe(item)[:120]}"] += 1
                return
            cfg.anomalies[f"unexpected item {type(item).__name__}"] += 1

        def _content_done(self, ch: int) -> None:
            method, header, body = self.partial.pop(ch)
            if len(body) != header.body_size:
                cfg.anomalies[f"content of {len(body)} octets announced as {header.body_size}"] += 1
            self.model.on_content(ch, method.NAME, method, header.properties, bytes(body), time.monotonic())

        def _probe(self, ch: int) -> list[Any]:
            """The passive declare that flushes a channel (see Model091.sent_sync_probe)."""
            self.model.sent_sync_probe(ch, time.monotonic())
            return [MethodFrame(ch, spec.ExchangeDeclare(exchange="amq.direct", type="direct", passive=True))]

        def _open(self) -> list[int]:
            return self.model.open_channels()

        def _next_id(self, what: str) -> str:
            self.counter += 1
            return f"{what}-{token}-{cfg.examples_run}-{self.counter}"

        # -------------------------------------------------------------- rules
        # Every rule is always enabled and draws the same shape of arguments whatever the
        # broker did: the broker is not deterministic (timing decides which deliveries are
        # outstanding), and hypothesis requires the same choices to draw the same way. A
        # choice among things that exist now is an index taken modulo their number; a rule
        # with nothing to act on does nothing.
        @initialize()
        def first_channel_and_queue(self) -> None:
            """Every example starts with channel 1 open and one queue, so no rule starts idle."""
            self.open_channel(1)
            self.declare_queue(0)

        @rule(n=st.integers(1, CHANNELS))
        def open_channel(self, n: int) -> None:
            if not self._live() or self.model.ch(n).state != "closed":
                return
            self._step(f"open_channel({n})")
            self.model.sent_channel_open(n, time.monotonic())
            self._write([MethodFrame(n, spec.ChannelOpen())])
            self._settle()

        @rule(pick=PICK)
        def close_channel(self, pick: int) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None:
                return
            self._step(f"close_channel({ch})")
            self.model.sent_channel_close(ch, time.monotonic())
            self._write([MethodFrame(ch, spec.ChannelClose(200, "bye", 0, 0))])
            self._settle()

        @rule(pick=PICK)
        def declare_queue(self, pick: int) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None:
                return
            name = self._next_id("amqpspec-sf")
            self._step(f"declare_queue({ch}, {name!r})")
            self.model.sent_queue_declare(ch, name, time.monotonic())
            self._write([MethodFrame(ch, spec.QueueDeclare(queue=name, exclusive=True))])
            self._settle()

        def _publication(self, pub: dict[str, Any], ch: int) -> tuple[list[Any], str]:
            queues = sorted(self.model.queues)
            routable = bool(queues) and pub["routable"] > 0
            routed = self._pick(queues, pub["queue"]) if routable else "amqpspec-nowhere-" + token
            size = pub["size"]
            fancy = pub["props"] is not None
            msg_id = self._next_id("m")
            props = copy.copy(pub["props"]) if fancy else spec.BasicProperties()
            props.message_id = msg_id
            mandatory = pub["mandatory"] and not routable
            body = _body(msg_id, size)
            clauses: tuple[str, ...] = () if fancy else ("amqp091:basic.publish.exchange/default-exchange",)
            if clauses and size > FRAME_MAX - FRAME_OVERHEAD:
                clauses += ("amqp091:4.2.6.2/1", "amqp091:2.3.5.2/1")
            self.model.sent_publish(ch, msg_id, routed, body, _props(props), clauses)
            frames: list[Any] = [MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=routed, mandatory=mandatory)),
                                 HeaderFrame(ch, 60, len(body), props)]
            frames += _split(ch, body, FRAME_MAX)
            self.last_clauses = clauses
            return frames, f"{msg_id}->{routed[-12:]} {size}B{' props' if fancy else ''}{' mandatory' if mandatory else ''}"

        @rule(pick=PICK, pub=publication)
        def publish(self, pick: int, pub: dict[str, Any]) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None:
                return
            frames, what = self._publication(pub, ch)
            self._step(f"publish({ch}, {what})")
            self._write(frames + self._probe(ch), f"publish on channel {ch}")
            self._settle()

        @rule(n=st.integers(2, 4), picks=st.lists(PICK, min_size=4, max_size=4),
              pubs=st.lists(publication, min_size=4, max_size=4))
        def interleave(self, n: int, picks: list[int], pubs: list[dict[str, Any]]) -> None:
            """Contents for several channels, frame by frame alternately, in one write (4.3)."""
            opened = self._open() if self._live() else []
            chans: list[int] = []
            for p in picks:
                left = [c for c in opened if c not in chans]
                if left and len(chans) < n:
                    chans.append(self._pick(left, p))
            if len(chans) < 2:
                return
            streams, what = [], []
            plain = True   # drawn properties may be refused for what they hold: then no clause applies
            for ch, pub in zip(chans, pubs):
                frames, text = self._publication(pub, ch)
                plain = plain and bool(self.last_clauses)
                streams.append(frames)
                what.append(f"{ch}:{text}")
            merged = round_robin(streams)
            self._step(f"interleave({', '.join(what)})")
            for ch in chans:
                self.model.sent_async(ch, "after-interleave", ("amqp091:4.2.6.2/1",) if plain else ())
                merged += self._probe(ch)
            self._write(merged, f"{len(chans)} contents interleaved frame by frame")
            self._settle()

        @rule(pick=PICK, qpick=PICK, no_ack=st.booleans())
        def consume(self, pick: int, qpick: int, no_ack: bool) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            queue = self._pick(sorted(self.model.queues), qpick)
            if ch is None or queue is None:
                return
            tag = self._next_id("c")
            self._step(f"consume({ch}, {queue[-12:]}, no_ack={no_ack})")
            self.model.sent_consume(ch, tag, queue, no_ack, time.monotonic())
            self._write([MethodFrame(ch, spec.BasicConsume(queue=queue, consumer_tag=tag, no_ack=no_ack))])
            self._settle()

        def _consumers(self) -> list[tuple[int, str]]:
            return sorted((n, t) for n, c in self.model.channels.items() if c.state == "open"
                          for t, k in c.consumers.items() if k.state == "active")

        @rule(pick=PICK)
        def cancel(self, pick: int) -> None:
            found = self._pick(self._consumers(), pick) if self._live() else None
            if found is None:
                return
            ch, tag = found
            self._step(f"cancel({ch}, {tag})")
            self.model.sent_cancel(ch, tag, time.monotonic())
            self._write([MethodFrame(ch, spec.BasicCancel(consumer_tag=tag))])
            self._settle()

        @rule(pick=PICK, qpick=PICK, no_ack=st.booleans())
        def get(self, pick: int, qpick: int, no_ack: bool) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            queue = self._pick(sorted(self.model.queues), qpick)
            if ch is None or queue is None:
                return
            self._step(f"get({ch}, {queue[-12:]}, no_ack={no_ack})")
            self.model.sent_get(ch, queue, no_ack, time.monotonic())
            self._write([MethodFrame(ch, spec.BasicGet(queue=queue, no_ack=no_ack))])
            self._settle()

        @rule(pick=PICK, kind=st.sampled_from(["valid", "multiple", "all", "unknown", "unknown-multiple", "twice"]),
              tpick=PICK, beyond=st.integers(1, 1000))
        def ack(self, pick: int, kind: str, tpick: int, beyond: int) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None:
                return
            c = self.model.ch(ch)
            live = sorted(c.unacked)
            acked = sorted(c.tags_seen - set(c.unacked) - set(c.tx_acks))
            if kind in ("valid", "multiple") and live:
                tag, multiple = self._pick(live, tpick), kind == "multiple"
            elif kind == "all":
                tag, multiple = 0, True
            elif kind == "twice" and acked:
                tag, multiple = self._pick(acked, tpick), False
            else:
                tag, multiple = c.max_tag + beyond, kind == "unknown-multiple"
            valid = self.model.ack_is_valid(ch, tag, multiple)
            self._step(f"ack({ch}, tag={tag}, multiple={multiple}{'' if valid else ', invalid'})")
            self.model.sent_ack(ch, tag, multiple, time.monotonic())
            # a synchronous probe behind it: an exception comes before its answer and is blamed right
            self._write([MethodFrame(ch, spec.BasicAck(delivery_tag=tag, multiple=multiple))] + self._probe(ch))
            self._settle()

        def _unacked(self) -> list[tuple[int, int]]:
            return sorted((n, t) for n, c in self.model.channels.items() if c.state == "open" and c.tx == "none"
                          for t in c.unacked)

        @rule(pick=PICK, requeue=st.booleans(), nack=st.booleans(), multiple=st.booleans())
        def reject(self, pick: int, requeue: bool, nack: bool, multiple: bool) -> None:
            found = self._pick(self._unacked(), pick) if self._live() else None
            if found is None:
                return
            ch, tag = found
            nack = nack and "basic.nack" not in self.model.unsupported and cfg.capability("basic.nack")
            multiple = multiple and nack
            self._step(f"{'nack' if nack else 'reject'}({ch}, tag={tag}, requeue={requeue}"
                       f"{', multiple' if multiple else ''})")
            self.model.sent_reject(ch, tag, multiple, requeue)
            self.model.sent_async(ch, "after-reject", ("amqp091:basic/10",))
            method = spec.BasicNack(delivery_tag=tag, multiple=multiple, requeue=requeue) if nack \
                else spec.BasicReject(delivery_tag=tag, requeue=requeue)
            self._write([MethodFrame(ch, method)] + self._probe(ch))
            self._settle()

        @rule(pick=PICK, prefetch=st.integers(0, 3))
        def qos(self, pick: int, prefetch: int) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None or "basic.qos" in self.model.unsupported:
                return
            self._step(f"qos({ch}, prefetch_count={prefetch})")
            self.model.sent_qos(ch, prefetch, time.monotonic())
            self._write([MethodFrame(ch, spec.BasicQos(prefetch_count=prefetch))])
            self._settle()

        @rule(pick=PICK)
        def recover(self, pick: int) -> None:
            chans = [n for n in self._open() if self.model.ch(n).tx == "none"] if self._live() else []
            ch = self._pick(chans, pick)
            if ch is None or "basic.recover" in self.model.unsupported:
                return
            self._step(f"recover({ch})")
            self.model.sent_recover(ch, time.monotonic())
            self._write([MethodFrame(ch, spec.BasicRecover(requeue=True))])
            self._settle()

        @rule(pick=PICK, what=st.sampled_from(["select", "commit", "rollback"]))
        def tx(self, pick: int, what: str) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None or "tx.select" in self.model.unsupported:
                return
            c = self.model.ch(ch)
            now = time.monotonic()
            if what == "select":
                if c.tx != "none":
                    return
                self._step(f"tx_select({ch})")
                self.model.sent_tx_select(ch, now)
                method: Any = spec.TxSelect()
            elif what == "commit":
                invalid = c.tx != "on"
                self._step(f"tx_commit({ch}{', not transacted' if invalid else ''})")
                self.model.sent_tx_commit(ch, now)
                if invalid:
                    self.model.sent_async(ch, "after-tx-commit-not-transacted")
                    self._write([MethodFrame(ch, spec.TxCommit())] + self._probe(ch))
                    self._settle()
                    return
                method = spec.TxCommit()
            else:
                if c.tx != "on":
                    return
                self._step(f"tx_rollback({ch})")
                self.model.sent_tx_rollback(ch, now)
                method = spec.TxRollback()
            self._write([MethodFrame(ch, method)])
            self._settle()

        @rule(pick=PICK)
        def flow(self, pick: int) -> None:
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None or "channel.flow" in self.model.unsupported:
                return
            self._step(f"flow({ch}, active=True)")
            self.model.sent_flow(ch, time.monotonic())
            self._write([MethodFrame(ch, spec.ChannelFlow(active=True))])
            self._settle()

        @rule(pick=PICK)
        def sync(self, pick: int) -> None:
            """A synchronous no-op (passive declare of amq.direct), then a short pause for deliveries."""
            ch = self._pick(self._open(), pick) if self._live() else None
            if ch is None:
                return
            self._step(f"sync({ch})")
            self._write(self._probe(ch))
            self._settle()
            if not self.dead:
                self._drain(PAUSE)

    return Stateful091


def _next_deadline(model: Model091, default: float) -> float:
    times = [c.pending[0].deadline for c in model.channels.values() if c.pending]
    times += [c.expect.deadline for c in model.channels.values() if c.expect is not None]
    return min(times, default=default)


__all__ = ["build_machine", "TARGET", "PROTOCOL", "FieldTable"]
