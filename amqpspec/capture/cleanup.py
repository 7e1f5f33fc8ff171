"""Which queues and exchanges a replay may delete, so that it can be repeated without harming anyone.

A conformance case runs against names it made up (``amqpspec-...``, see :mod:`amqpspec.case`)
and the runner deletes them after it; a recording therefore starts from a broker that does not
have them, and a replay deletes the suite's own names before and after it runs.

Any other name a file declares may be someone else's -- a crafted finding that declares
``orders`` must not delete the application's queue ``orders``. Such a name is deleted only when
the replay itself created it: the broker said it did not exist before the replay (a passive
declare answered 404), or the broker generated it for the replay (a declare-ok answering a
declare with no name). Even then it goes with if-unused and if-empty, and ``amq.`` names and the
default exchange are never deleted.

AMQP 1.0 has no standard way to delete a node; the suite's 1.0 cases use queues it names
``amqpspec-...`` and its runner deletes over 0-9-1, so the replay does the same for the
addresses such names appear in (``NAME``, ``/queue/NAME``, ``/amq/queue/NAME``), when the
broker also speaks 0-9-1. The deleting itself is :func:`amqpspec.brokerops.delete`.

Recordings of real clients (``record``, pcaps) are left alone unless asked (``--cleanup``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from amqpspec.capture.codec import PROTOCOL_091, StreamDecoder
from amqpspec.capture.transcripts import TranscriptFile
from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10

SUITE_PREFIX = "amqpspec-"   # names the suite's cases make up (see amqpspec.case)
QUEUE_ADDRESS_PREFIXES = ("/amq/queue/", "/queue/", "")


@dataclass
class Declared:
    queues: list[str] = field(default_factory=list)
    exchanges: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.queues or self.exchanges)


def declared(tf: TranscriptFile) -> Declared:
    """Queues and exchanges the client declared (not passively) under a name of its own choice."""
    out = Declared()
    decoders: dict[int, StreamDecoder] = {}
    for e in tf.entries:
        if e.get("dir") != "send":
            continue
        dec = decoders.setdefault(int(e.get("conn", 0)), StreamDecoder(tf.protocol, client=True))
        for u in dec.feed(bytes.fromhex(e.get("hex") or "")):
            item = u.item
            if tf.protocol != PROTOCOL_091:
                _attached(item, out)
                continue
            if not isinstance(item, f091.MethodFrame):
                continue
            m = item.method
            if m.NAME == "queue.declare" and not m.passive and isinstance(m.queue, str) and m.queue \
                    and not m.queue.startswith("amq.") and m.queue not in out.queues:
                out.queues.append(m.queue)
            elif m.NAME == "exchange.declare" and not m.passive and isinstance(m.exchange, str) and m.exchange \
                    and not m.exchange.startswith("amq.") and m.exchange not in out.exchanges:
                out.exchanges.append(m.exchange)
    return out


def attached_queues(item: object) -> list[str]:
    """The queue names in the addresses of a 1.0 attach (``NAME``, ``/queue/NAME``,
    ``/amq/queue/NAME``), whoever named them; nothing for any other item."""
    if not (isinstance(item, f10.AMQPFrame) and isinstance(item.performative, spec10.Attach)):
        return []
    out = []
    for end in (item.performative.source, item.performative.target):
        address = getattr(end, "address", None)
        if not isinstance(address, str):
            continue
        for prefix in QUEUE_ADDRESS_PREFIXES:
            name = address[len(prefix):] if address.startswith(prefix) else None
            if name and "/" not in name:
                out.append(name)
                break
    return out


def _attached(item: object, out: Declared) -> None:
    """Queues named by the suite in the addresses of a 1.0 attach."""
    for name in attached_queues(item):
        if name.startswith(SUITE_PREFIX) and name not in out.queues:
            out.queues.append(name)


def suite_owned(name: str) -> bool:
    """A name the suite's own cases make up."""
    return name.startswith(SUITE_PREFIX)


def split(names: Declared) -> tuple[Declared, Declared]:
    """The suite's own names (deleted before and after a replay, unconditionally) and the others
    (deleted only if the replay created them)."""
    own = Declared([q for q in names.queues if suite_owned(q)], [x for x in names.exchanges if suite_owned(x)])
    others = Declared([q for q in names.queues if not suite_owned(q) and not q.startswith("amq.")],
                      [x for x in names.exchanges if not suite_owned(x) and not x.startswith("amq.")])
    return own, others


def created(others: Declared, absent_queues: Iterable[str], absent_exchanges: Iterable[str],
            generated: Iterable[str] = ()) -> Declared:
    """Of the names that are not the suite's own, those the replay created: declared by it and
    absent before it ran (only a clear 404 counts: a name whose existence is unknown is kept),
    and the queues the broker named for it."""
    gone_q, gone_x = set(absent_queues), set(absent_exchanges)
    queues = [q for q in others.queues if q in gone_q]
    queues += [q for q in dict.fromkeys(generated) if q and q not in queues]
    return Declared(queues, [x for x in others.exchanges if x in gone_x])
