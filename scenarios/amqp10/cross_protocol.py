"""Cross-protocol messaging: AMQP 0-9-1 (pika) on one side, AMQP 1.0 (python-qpid-proton) on the other.

Only where the broker speaks both on the target's port (detected by sending the 0-9-1 protocol
header and looking for connection.start; the cases skip otherwise). Neither specification says
how a message crosses from one protocol to the other: the expectations are the broker's own
documentation -- RabbitMQ's AMQP 1.0 plugin, whose mapping is the one quoted -- and are checked as
guidelines (a warning when not met):

- a 1.0 message with a single data section becomes a 0-9-1 message with just those bytes, and
  vice versa;
- message-id, correlation-id, content-type, content-encoding, priority, durable/delivery-mode and
  creation-time/timestamp map onto each other. The two timestamps use different units (0-9-1: a
  POSIX time_t, seconds; 1.0: milliseconds since the epoch, 1.6.17), so a mapping keeps the instant.

The queue is declared over 0-9-1 and reached over 1.0 with the ``queue`` address convention
(RabbitMQ: ``/queue/NAME``).
"""
from __future__ import annotations

import uuid
from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level

from ..amqp091 import _pika as pk
from ._proton import WAIT, Scenario, message, run, shown, speaks_amqp091

try:
    from proton import ulong
except ImportError:  # the cases skip without proton (see _proton.run)
    ulong = int  # type: ignore[assignment,misc]

SECTION = "amqp10/scenario.cross-protocol"
README = "[RabbitMQ AMQP 1.0 plugin README, Interoperability with AMQP 0-9-1]"
BODY_DOC = ("The way we deal with this is that an AMQP 1.0 message with a single data section will be transcoded to an "
            f"AMQP 0-9-1 message with just the bytes from that section, and vice versa. {README}")
MAP_DOC = ("The headers and properties map as follows: AMQP 1.0 Header durable <---> delivery-mode [1], priority <---> "
           "priority; Properties message-id <---> message-id, correlation-id <---> correlation-id, content-type <---> "
           "content-type, content-encoding <---> content-encoding, creation-time <---> timestamp. [1] durable is true "
           f"if and only if delivery-mode is 2. {README}")
EPOCH_S = 1_700_000_000          # a whole second, so both units can represent it exactly
BODY = bytes(range(256))         # every byte value, 0x00 and 0xff included


def _needs_both(ctx: Context) -> None:
    if pk.pika is None:
        ctx.skip("pika is not installed: the cross-protocol scenarios need it for the AMQP 0-9-1 side")
    if not speaks_amqp091(ctx):
        ctx.skip("the broker does not speak AMQP 0-9-1 on this port (no connection.start in answer to the 0-9-1 "
                 "protocol header): nothing to cross to")


def _both(ctx: Context, body: Callable[[Scenario, "pk.Scenario"], None]) -> None:
    _needs_both(ctx)

    def inner(sc: Scenario) -> None:
        with pk.Scenario(ctx) as psc:
            try:
                body(sc, psc)
            except pk.StopScenario as stop:
                ctx.note(f"the scenario stopped after the failed step: {stop}")

    run(ctx, inner)


def _diffs(pairs: list[tuple[str, Any, Any]]) -> list[str]:
    return [f"{name}: expected {want!r}, got {got!r}" for name, want, got in pairs if want != got]


@case(f"{SECTION}/amqp091-to-amqp10",
      title="a message published with AMQP 0-9-1 reaches an AMQP 1.0 receiver with body and properties kept",
      level=Level.SHOULD, guideline=MAP_DOC, timeout=12.0)
def amqp091_to_amqp10(ctx: Context) -> None:
    """pika declares a queue and publishes to it a 256-byte body (every byte value) with message-id,
    correlation-id, content-type, content-encoding, priority 7, delivery-mode 2 and a timestamp; a
    proton receiver takes it from the queue. Passes when the 1.0 message has one data section with
    exactly those bytes, the mapped properties (durable true, priority 7, the ids, content type and
    encoding), and a creation-time naming the same instant as the timestamp."""

    def body(sc: Scenario, psc: "pk.Scenario") -> None:
        publisher = psc.client("amqp091-publisher")
        ch = publisher.channel()
        queue = publisher.declare_queue(ch, ctx.name(f"x{uuid.uuid4().hex[:6]}")).queue
        token = sc.token()
        props = pk.props(message_id=f"m-{token}", correlation_id=f"c-{token}", content_type="application/octet-stream",
                         content_encoding="gzip", priority=7, delivery_mode=2, timestamp=EPOCH_S)
        publisher.publish(ch, "", queue, BODY, properties=props)
        publisher.fence(ch)
        address = sc.addressing.address("queue", queue)
        sc.step(f"an AMQP 1.0 receiver takes the message from {address!r}")
        rcv = sc.client("amqp10-receiver").receiver(address, credit=1)
        sc.pump(lambda: bool(rcv.inbox), WAIT)
        if not rcv.inbox:
            sc.check(False, "the AMQP 1.0 receiver gets the message", expected="one transfer",
                     observed=f"nothing within {WAIT:g}s", level=Level.SHOULD, guideline=BODY_DOC)
            return
        m = rcv.inbox[0].message
        got = rcv.inbox[0].body
        sc.check(isinstance(got, bytes) and got == BODY and m.inferred,
                 "the body arrives as one data section with exactly the published bytes",
                 expected=f"data section of {len(BODY)} bytes", observed=f"{type(got).__name__} {str(got)[:60]}"
                 + ("" if m.inferred else " (not a data section)"), level=Level.SHOULD, guideline=BODY_DOC)
        diffs = _diffs([("message-id", f"m-{token}", m.id), ("correlation-id", f"c-{token}", m.correlation_id),
                        ("content-type", "application/octet-stream", str(m.content_type)),
                        ("content-encoding", "gzip", str(m.content_encoding)), ("priority", 7, m.priority),
                        ("durable", True, m.durable)])
        sc.check(not diffs, "ids, content type and encoding, priority and durability are mapped",
                 expected="the mapped values", observed="; ".join(diffs) or "all mapped")
        created_ms = int(round((m.creation_time or 0) * 1000))
        sc.check(created_ms == EPOCH_S * 1000, "creation-time names the instant of the 0-9-1 timestamp",
                 expected=f"creation-time {EPOCH_S * 1000} ms (timestamp {EPOCH_S} s)",
                 observed=f"creation-time {created_ms} ms")
        rcv.accept(rcv.inbox[0])

    _both(ctx, body)


@case(f"{SECTION}/amqp10-to-amqp091",
      title="a message sent with AMQP 1.0 reaches an AMQP 0-9-1 consumer with body and properties kept",
      level=Level.SHOULD, guideline=MAP_DOC, timeout=12.0)
def amqp10_to_amqp091(ctx: Context) -> None:
    """pika declares a queue; a proton sender sends to it a message with one data section (every
    byte value), message-id, correlation-id, content-type, content-encoding, priority 3, durable
    and a creation-time; pika then consumes the queue. Passes when the 0-9-1 body is exactly those
    bytes, the properties are mapped (delivery-mode 2, priority 3, ids, content type and encoding)
    and the timestamp names the same instant as the creation-time."""

    def body(sc: Scenario, psc: "pk.Scenario") -> None:
        consumer = psc.client("amqp091-consumer")
        ch = consumer.channel()
        queue = consumer.declare_queue(ch, ctx.name(f"x{uuid.uuid4().hex[:6]}")).queue
        address = sc.addressing.address("queue", queue)
        token = sc.token()
        out = sc.client("amqp10-sender").sender(address)
        outcome = out.send(message(BODY, id=f"m-{token}", correlation_id=f"c-{token}",
                                   content_type="application/octet-stream", content_encoding="gzip", priority=3,
                                   durable=True, creation_time=float(EPOCH_S)))
        if outcome != "accepted":
            ctx.note(f"the broker answered {outcome} to the AMQP 1.0 transfer")
        consumer.consume(ch, queue, auto_ack=True)
        psc.pump(lambda: bool(consumer.inbox), WAIT)
        if not consumer.inbox:
            sc.check(False, "the AMQP 0-9-1 consumer gets the message", expected="one basic.deliver",
                     observed=f"nothing within {WAIT:g}s", level=Level.SHOULD, guideline=BODY_DOC)
            return
        d = consumer.inbox[0]
        sc.check(d.body == BODY, "the 0-9-1 body is exactly the bytes of the data section",
                 expected=f"{len(BODY)} bytes as sent", observed=f"{len(d.body)} bytes {d.body[:24]!r}",
                 level=Level.SHOULD, guideline=BODY_DOC)
        p = d.properties
        diffs = _diffs([("message-id", f"m-{token}", p.message_id), ("correlation-id", f"c-{token}", p.correlation_id),
                        ("content-type", "application/octet-stream", p.content_type),
                        ("content-encoding", "gzip", p.content_encoding), ("priority", 3, p.priority),
                        ("delivery-mode", 2, p.delivery_mode)])
        sc.check(not diffs, "ids, content type and encoding, priority and durability are mapped",
                 expected="the mapped values", observed="; ".join(diffs) or "all mapped")
        sc.check(p.timestamp == EPOCH_S, "the 0-9-1 timestamp names the instant of the creation-time",
                 expected=f"timestamp {EPOCH_S} s (creation-time {EPOCH_S * 1000} ms)",
                 observed=f"timestamp {p.timestamp}")

    _both(ctx, body)


@case(f"{SECTION}/non-string-ids",
      title="AMQP 1.0 messages with uuid, binary and ulong ids reach an AMQP 0-9-1 consumer",
      level=Level.SHOULD, guideline=BODY_DOC, timeout=12.0)
def non_string_ids(ctx: Context) -> None:
    """A proton sender sends two messages with one data section each: message-id a uuid and
    correlation-id a ulong, then message-id binary and correlation-id a uuid (all message-id types
    of 3.2.11-3.2.14); pika then consumes the queue. Passes when both bodies reach the 0-9-1
    consumer (a single-data-section message is transcoded to its bytes) and its connection stays
    open; how the ids are rendered in 0-9-1's short strings is only noted."""

    def body(sc: Scenario, psc: "pk.Scenario") -> None:
        consumer = psc.client("amqp091-consumer")
        ch = consumer.channel()
        queue = consumer.declare_queue(ch, ctx.name(f"x{uuid.uuid4().hex[:6]}")).queue
        address = sc.addressing.address("queue", queue)
        token = sc.token()
        out = sc.client("amqp10-sender").sender(address)
        bodies = [f"uuid id {token}".encode(), f"binary id {token}".encode()]
        ids = [(uuid.UUID(int=sc.ctx.rng.getrandbits(128)), ulong(sc.ctx.rng.getrandbits(63))),
               (bytes.fromhex(token), uuid.UUID(int=sc.ctx.rng.getrandbits(128)))]
        for payload, (mid, cid) in zip(bodies, ids):
            out.send(message(payload, id=mid, correlation_id=cid))
        notes = len(ctx.notes)
        refusal = pk.refused(lambda: consumer.consume(ch, queue, auto_ack=True))
        if refusal is None:
            psc.pump(lambda: len(consumer.inbox) >= len(bodies), WAIT)
        got = [d.body for d in consumer.inbox]
        lost = refusal.observed if refusal else "; ".join(ctx.notes[notes:]) if not consumer.is_open else ""
        sc.check(sorted(got) == sorted(bodies) and consumer.is_open and refusal is None,
                 "both messages reach the 0-9-1 consumer, whose connection stays open",
                 expected=f"{len(bodies)} deliveries with the data bytes",
                 observed=f"{shown(got)}" + (f"; the consumer's connection was closed ({lost})" if lost else ""))
        for d in consumer.inbox:
            ctx.note(f"0-9-1 rendering: message-id={d.properties.message_id!r} "
                     f"correlation-id={d.properties.correlation_id!r}")

    _both(ctx, body)
