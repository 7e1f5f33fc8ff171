"""One example of the hostile-broker campaign: what the playing broker sends wrong, where, and
what the specification requires of the client in return.

Shared by both protocols' generators (``server_strategies091``, ``server_strategies10``),
their executors and the oracle (``server_oracles``). An :class:`Expect` is stored in the
finding (``server`` key), so ``replay --driver`` judges the replayed reaction with the same
verdict as the campaign did.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Item:
    """One frame the broker sends; ``malformed`` says what is wrong with it (None: well formed)."""

    frame: Any
    malformed: str | None = None


@dataclass(frozen=True)
class Expect:
    """The client's reaction a clause requires.

    ``kind``: ``silent-close`` (socket closed, nothing more sent), ``connection-exception``
    (0-9-1 connection.close with one of ``codes``), ``close-ok`` (0-9-1 close-ok on
    ``channel``), ``close-condition`` (1.0: a close -- or with ``scope`` end/detach, that
    performative -- carrying one of ``conditions``), ``answers`` (1.0: the performative named in
    ``scope`` comes back). ``frame_max_under``: the expectation stands only when the client
    negotiated a frame-max below this size (the oversized-frame rule needs a limit to pass);
    ``channel_max_under``: only when the client's channel-max is below this (a channel beyond it
    must exist).
    """

    kind: str
    codes: tuple[int, ...] = ()
    clauses: tuple[str, ...] = ()
    why: str = ""
    channel: int | None = None
    conditions: tuple[str, ...] = ()
    scope: str = ""
    frame_max_under: int = 0
    channel_max_under: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "codes": list(self.codes), "clauses": list(self.clauses), "why": self.why,
                "channel": self.channel, "conditions": list(self.conditions), "scope": self.scope,
                "frame_max_under": self.frame_max_under, "channel_max_under": self.channel_max_under}

    @classmethod
    def from_json(cls, data: Any) -> "Expect | None":
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            return None
        channel = data.get("channel")
        return cls(str(data["kind"]), tuple(int(c) for c in data.get("codes") or () if isinstance(c, int)),
                   tuple(str(c) for c in data.get("clauses") or ()), str(data.get("why") or ""),
                   channel if isinstance(channel, int) else None,
                   tuple(str(c) for c in data.get("conditions") or ()), str(data.get("scope") or ""),
                   int(data.get("frame_max_under") or 0), int(data.get("channel_max_under") or 0))


@dataclass(frozen=True)
class Example:
    protocol: str
    kind: str
    workload: str
    point: str                     # where the items are sent (see the executors' POINTS)
    items: tuple[Item, ...]
    tune: tuple[int, int, int] | None = None    # 0-9-1: channel-max, frame-max, heartbeat proposed
    heartbeats: bool = True        # the broker keeps the negotiated heartbeat / idle-timeout
    expect: Expect | None = None
    note: str = ""                 # the variant of the kind, for people
    options: tuple[tuple[str, Any], ...] = field(default=())   # extra driver options

    def malformations(self) -> list[str]:
        return [i.malformed for i in self.items if i.malformed]

    def describe(self) -> str:
        what = "; ".join(i.malformed for i in self.items if i.malformed) or \
            f"{len(self.items)} well-formed frame(s)"
        return f"{self.kind}{' (' + self.note + ')' if self.note else ''} at {self.point} " \
               f"[workload {self.workload}]: {what}"


def placed(frame: Any, channel: int, consumer_tag: str | None = None, delivery_tag: int | None = None) -> Any:
    """A generated 0-9-1 frame moved to the client's channel (channel 0 stays 0: a connection
    frame, or a frame put there on purpose), with the client's consumer tag in a deliver or
    cancel."""
    changes: dict[str, Any] = {}
    if getattr(frame, "channel", 0) == 1:
        changes["channel"] = channel
    method = getattr(frame, "method", None)
    if method is not None and consumer_tag is not None and hasattr(method, "consumer_tag") \
            and method.NAME in ("basic.deliver", "basic.cancel") and not method.consumer_tag:
        changes["method"] = method.replace(consumer_tag=consumer_tag)
    return replace(frame, **changes) if changes else frame


__all__ = ["Item", "Expect", "Example", "placed"]
