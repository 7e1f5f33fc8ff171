"""Settlements a broker batches as it likes, compared as sets instead of frame by frame.

A broker may settle many deliveries in one frame or one by one, depending on timing: AMQP
1.0 dispositions cover a range ``first..last`` (transport 2.7.6), and 0-9-1 publisher
confirms acknowledge everything up to a tag with ``multiple`` (a RabbitMQ extension). A
replay cannot expect the same frames, only the same outcome for every delivery. So these
frames are expanded into (delivery id, outcome) pairs per connection, channel and kind,
and a replay compares those: a delivery the live broker settles differently, or that the
recording never saw settled, is a divergence at once; one the recording settled and the live
broker never does is reported at the end.

Expansion is bounded (:data:`MAX_EXPAND` ids per frame): a hostile range is compared as
an ordinary frame instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amqpspec.capture.codec import PROTOCOL_091
from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10

MAX_EXPAND = 100_000


@dataclass(frozen=True)
class Settlement:
    key: str                   # "confirm" (0-9-1), "disposition by receiver" / "by sender" (1.0)
    ids: tuple[int, ...]
    outcome: str               # comparable text: "ack", "nack", "settled=True state=accepted()"


@dataclass
class Ledger:
    """One side's settlements on one connection: (lane, key) -> delivery id -> outcomes."""

    protocol: str
    seen: dict[tuple[int, str], dict[int, set[str]]] = field(default_factory=dict)

    def expand(self, lane: int, item: Any) -> Settlement | None:
        """The settlement ``item`` stands for (recorded in the ledger), or None when it is none."""
        found = self._expand(lane, item)
        if found is not None:
            book = self.seen.setdefault((lane, found.key), {})
            for i in found.ids:
                book.setdefault(i, set()).add(found.outcome)
        return found

    def _expand(self, lane: int, item: Any) -> Settlement | None:
        if self.protocol == PROTOCOL_091:
            if not (isinstance(item, f091.MethodFrame) and item.method.NAME in ("basic.ack", "basic.nack")):
                return None
            tag = int(item.method.delivery_tag)
            outcome = "ack" if item.method.NAME == "basic.ack" else f"nack(requeue={item.method.requeue})"
            if not item.method.multiple:
                return Settlement("confirm", (tag,), outcome)
            if tag <= 0 or tag > MAX_EXPAND:
                return None
            book = self.seen.get((lane, "confirm"), {})
            return Settlement("confirm", tuple(i for i in range(1, tag + 1) if i not in book), outcome)
        if not (isinstance(item, f10.AMQPFrame) and isinstance(item.performative, spec10.Disposition)):
            return None
        d = item.performative
        try:
            first = int(d.first)
            last = first if d.last is None else int(d.last)
        except (TypeError, ValueError):
            return None
        if last < first or last - first >= MAX_EXPAND:
            return None
        role = "receiver" if d.role else "sender"
        state = d.state.summary() if hasattr(d.state, "summary") else repr(d.state)
        return Settlement(f"disposition by {role}", tuple(range(first, last + 1)), f"settled={bool(d.settled)} state={state}")
