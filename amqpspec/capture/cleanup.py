"""Removing what a replayed conversation declares, so that a replay can be repeated.

A conformance case runs against names it made up, and the runner deletes them after it; the
recording therefore starts from a broker that does not have them. Replaying it again and
again must start from the same place, so for transcripts that come from the suite (result
records, findings) the replay deletes the queues and exchanges the recorded client declared,
before and after it runs -- over AMQP 0-9-1, on a connection of its own, with bounded waits.

AMQP 1.0 has no standard way to delete a node; the suite's 1.0 cases use queues it names
``amqpspec-...`` and its runner deletes over 0-9-1, so the replay does the same for the
addresses such names appear in (``NAME``, ``/queue/NAME``, ``/amq/queue/NAME``), when the
broker also speaks 0-9-1.

Recordings of real clients (``record``, pcaps) are left alone unless asked
(``--cleanup``): their queues may be an application's own.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from amqpspec.capture.codec import PROTOCOL_091, StreamDecoder
from amqpspec.capture.transcripts import TranscriptFile
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10

SUITE_PREFIX = "amqpspec-"   # names the suite's cases make up (see amqpspec.case)
QUEUE_ADDRESS_PREFIXES = ("/amq/queue/", "/queue/", "")
REPLY_TIMEOUT = 2.0
BUDGET = 10.0


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


def delete(target: Target, names: Declared) -> str | None:
    """Deletes the names over 0-9-1; None when done, else why not (never raises)."""
    from amqpspec.peer.amqp091 import Peer
    from amqpspec.peer.base import PeerError

    if not names:
        return None
    try:
        peer = Peer.connect(target, Transcript(), time.monotonic() + BUDGET)
    except (PeerError, OSError) as exc:
        return str(exc)
    try:
        peer.handshake(timeout=REPLY_TIMEOUT)
        ch = peer.open_channel(timeout=REPLY_TIMEOUT)
        from amqpspec.wire.amqp091 import spec

        work = [spec.QueueDelete(queue=q) for q in names.queues] + \
               [spec.ExchangeDelete(exchange=x) for x in names.exchanges]
        for method in work:
            peer.send(f091.MethodFrame(ch, method))
            reply = peer.recv(REPLY_TIMEOUT)
            if isinstance(reply, f091.MethodFrame) and reply.method.NAME == "channel.close":
                peer.send(f091.MethodFrame(ch, spec.ChannelCloseOk()))
                ch = peer.open_channel(timeout=REPLY_TIMEOUT)
        return None
    except (PeerError, OSError) as exc:
        return str(exc)
    finally:
        peer.close()
