"""The "deep" and "unset" mutations: one field of a 1.0 performative, below the top or left out.

"flip" changes a top-level scalar field of a performative (attach.handle, flow.drain ...). What
lies inside a field -- a terminus of an attach (its address, outcomes, filter), an error of a
detach / end / close (condition, description, info), the state of a disposition, a properties
map -- it cannot reach, and no bit flip can take a value away. So:

* "deep": one bit of one value nested inside a field (:func:`bench.mutation.values10.leaves`
  of each non-scalar field, round-robin over the fields), re-encoded;
* "unset": one field that the broker set, at any depth, left out (null): a broker that omits
  what it must send (next-incoming-id of a flow, the description of an error). The fields that
  only tie a frame to its link or session (:data:`SETUP_FIELDS`) are not left out: a missing
  handle loses the frame, which only makes a case fail at set-up.

Both decode the frame with the product's codec and apply only when it re-encodes to the octets
it came as (else the caller flips a payload bit).
"""
from __future__ import annotations

import random
from typing import Any, Iterator

from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import types as t10
from amqpspec.wire.amqp10.composite import Composite, Restricted

from bench.mutation.values10 import Path, _walk, describe_path, flipped, get, replace, rewritable_frame, round_robin, short

#: (performative, field) pairs that tie a frame to its link or session
SETUP_FIELDS = frozenset({("transfer", "handle"), ("attach", "name"), ("begin", "remote-channel")})


def performative_of(raw: bytes) -> f10.AMQPFrame | None:
    """The frame when it is an AMQP frame with a composite performative that re-encodes to ``raw``."""
    return rewritable_frame(raw)


def deep_paths(perf: Composite) -> list[Path]:
    """The values nested inside the performative's non-scalar fields, round-robin over the fields."""
    walks = []
    for f in perf.FIELDS:
        v = getattr(perf, f.attr)
        if v is None or _scalar(v):
            continue
        walks.append(_walk(v, (("index", 0), ("field", f.attr))))
    return round_robin(walks)


def unset_paths(perf: Composite) -> list[Path]:
    """The fields set at any depth (each top-level field, then those inside it), round-robin over
    the top-level fields; set-up fields left out."""
    walks = []
    for f in perf.FIELDS:
        v = getattr(perf, f.attr)
        if v is None or (perf.NAME, f.name) in SETUP_FIELDS:
            continue
        walks.append(_set_fields(v, (("index", 0), ("field", f.attr))))
    return round_robin(walks)


def _scalar(value: Any) -> bool:
    return not isinstance(value, (Composite, Restricted, t10.Map, list, t10.Described))


def _set_fields(value: Any, path: Path, depth: int = 0) -> Iterator[Path]:
    yield path
    if depth > 6:
        return
    if isinstance(value, Composite):
        for f in value.FIELDS:
            v = getattr(value, f.attr)
            if v is not None:
                yield from _set_fields(v, path + (("field", f.attr),), depth + 1)
    elif isinstance(value, Restricted) and isinstance(value.value, (Composite, t10.Map, list)):
        yield from _nested(value.value, path + (("value", None),), depth)
    elif isinstance(value, (t10.Map, list, t10.Described)):
        yield from _nested(value, path, depth)


def _nested(value: Any, path: Path, depth: int) -> Iterator[Path]:
    """Composites inside a map, list or described value: their set fields (the entries themselves stay)."""
    if isinstance(value, t10.Map) and not value.duplicates:
        items: list[tuple[str, Any]] = [("key", k) for k in value]
    elif isinstance(value, list):
        items = [("index", i) for i in range(len(value))]
    elif isinstance(value, t10.Described):
        items = [("described", None)]
    else:
        return
    for kind, arg in items:
        child = path + ((kind, arg),)
        v = get(value, ((kind, arg),))
        if isinstance(v, Composite):
            for f in v.FIELDS:
                if getattr(v, f.attr) is not None:
                    yield from _set_fields(getattr(v, f.attr), child + (("field", f.attr),), depth + 1)
        elif isinstance(v, (t10.Map, list, t10.Described)):
            yield from _nested(v, child, depth + 1)


def count(raw: bytes, kind: str) -> int:
    """How many variants ``kind`` ("deep" or "unset") has in this frame (0: none)."""
    frame = performative_of(raw)
    if frame is None:
        return 0
    return len(_paths(frame.performative, kind))


def _paths(perf: Composite, kind: str) -> list[Path]:
    return deep_paths(perf) if kind == "deep" else unset_paths(perf)


def mutate(raw: bytes, kind: str, rng: random.Random, variant: int = 0) -> tuple[bytes, str] | None:
    """The frame with the ``variant``-th path of ``kind`` changed (past the last: one the seed
    picks), or None when there is none (or the change does not encode)."""
    frame = performative_of(raw)
    if frame is None:
        return None
    perf = frame.performative
    paths = _paths(perf, kind)
    if not paths:
        return None
    path = paths[variant] if variant < len(paths) else rng.choice(paths)
    root = t10.List([perf])
    old = get(root, path)
    new = flipped(old, rng) if kind == "deep" else None
    try:
        changed = replace(root, path, new)[0]
        out = f10.AMQPFrame(frame.channel, changed, frame.payload, extended=frame.extended).encode()
    except Exception:  # noqa: BLE001 -- the changed value does not encode
        return None
    what = describe_path([perf], path)
    if kind == "deep":
        return out, f"{what} {short(old)} -> {short(new)}"
    return out, f"{what} {short(old)} left out"
