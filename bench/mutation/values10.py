"""Values inside decoded AMQP 1.0 structures: where they are, and a copy with one changed.

The "payload", "deep" and "unset" mutations (:mod:`.message10`, :mod:`.fields10`) change one
value somewhere inside a decoded performative or message section: a path names it (a field of
a composite, a map value or key, a list / array element, the value of a described or restricted
type), :func:`replace` copies every container on the way with its remembered constructors, so
that encoding the copy gives the original octets but for the changed value.

:func:`leaves` lists the scalar values (integers, flags, strings, binaries, uuids) under a list
of roots, round-robin over the roots (the first leaf of each, then the second of each...) so that
the first few variants reach every root. A composite field left out counts at its XML default
(e.g. a header's delivery-count 0: a broker that wrote it wrong would have written it), after
the present ones. Map entries give their value, then their key (a changed key keeps its place,
so a case that checks the keys or their order sees it).
"""
from __future__ import annotations

import dataclasses
import random
import uuid
from typing import Any, Iterator

from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10
from amqpspec.wire.amqp10 import types as t10
from amqpspec.wire.amqp10.composite import Composite, Restricted


def rewritable_frame(raw: bytes, kind: type = Composite) -> f10.AMQPFrame | None:
    """The AMQP frame in ``raw`` when its performative is a ``kind`` and the frame re-encodes to
    exactly ``raw`` (only then can a changed copy differ from the broker's octets in one value)."""
    if len(raw) < 8 or raw[:4] == b"AMQP":
        return None
    try:
        frame = f10.decode_frame(raw)
        if not isinstance(frame, f10.AMQPFrame) or not isinstance(frame.performative, kind):
            return None
        if frame.encode() != raw:
            return None
    except Exception:  # noqa: BLE001 -- not one well-formed frame: not rewritable
        return None
    return frame


#: a path step: how to reach a value inside its container, and how to put a changed one back
Step = tuple[str, Any]   # ("field", attr) | ("value", None) | ("key", k) | ("mapkey", k) | ("index", i) | ("described", None)
Path = tuple[Step, ...]

MAX_LEAVES_PER_ROOT = 64  # a big map or sequence: its first values are enough to show a case notices


# ============================================================================ leaves

def _is_leaf(value: Any) -> bool:
    if isinstance(value, (bool, int, uuid.UUID)):
        return True
    if isinstance(value, t10.Char):  # one code point: a flipped octet may stop being one
        return False
    return isinstance(value, (str, bytes)) and len(value) > 0


def _walk(value: Any, path: Path, depth: int = 0) -> Iterator[Path]:
    """Paths of the leaves under ``value``: present values first, then (composites) absent
    fields that have a default."""
    if depth > 8:
        return
    if _is_leaf(value):
        yield path
        return
    if isinstance(value, Composite):
        absent = []
        for f in value.FIELDS:
            v = getattr(value, f.attr)
            if v is None:
                if f.default is not None and _is_leaf(f.default):
                    absent.append(path + (("field", f.attr),))
                continue
            yield from _walk(v, path + (("field", f.attr),), depth + 1)
        yield from absent
    elif isinstance(value, Restricted):
        yield from _walk(value.value, path + (("value", None),), depth + 1)
    elif isinstance(value, t10.Map):
        if value.duplicates:  # written from its received pairs: not changed in place
            return
        for k, v in value.items():
            yield from _walk(v, path + (("key", k),), depth + 1)
            if _is_leaf(k):
                yield path + (("mapkey", k),)
    elif isinstance(value, list):  # List and Array
        for i, v in enumerate(value):
            yield from _walk(v, path + (("index", i),), depth + 1)
    elif isinstance(value, t10.Described):
        yield from _walk(value.value, path + (("described", None),), depth + 1)


def leaves(roots: list[Any]) -> list[Path]:
    """Every leaf's path, round-robin over the roots (each path starts with its root's index)."""
    return round_robin([_walk(r, (("index", i),)) for i, r in enumerate(roots)])


def round_robin(walks: list[Iterator[Path]]) -> list[Path]:
    """The first path of each walk, then the second of each... (at most MAX_LEAVES_PER_ROOT each)."""
    per: list[list[Path]] = []
    for walk in walks:
        got: list[Path] = []
        for p in walk:
            got.append(p)
            if len(got) >= MAX_LEAVES_PER_ROOT:
                break
        per.append(got)
    out: list[Path] = []
    for rank in range(max((len(p) for p in per), default=0)):
        out += [p[rank] for p in per if rank < len(p)]
    return out


def get(root: Any, path: Path) -> Any:
    v = root
    for kind, arg in path:
        v = _child(v, kind, arg)
    return v


def _child(v: Any, kind: str, arg: Any) -> Any:
    if kind == "field":
        got = getattr(v, arg)
        return v.field(arg).default if got is None else got
    if kind == "value":
        return v.value
    if kind in ("key", "index"):
        return v[arg]
    if kind == "mapkey":
        return arg
    return v.value  # described


def replace(root: Any, path: Path, new: Any) -> Any:
    """A copy of ``root`` with the value at ``path`` replaced; every container on the way is
    copied with its remembered constructors, nothing is changed in place."""
    if not path:
        return new
    (kind, arg), rest = path[0], path[1:]
    inner = replace(_child(root, kind, arg), rest, new)
    if kind == "field":
        return root.replace(**{arg: inner})
    if kind == "value":
        return root.replace(inner)
    if kind == "described":
        return dataclasses.replace(root, value=inner)
    if kind == "mapkey":
        return _with_key(root, arg, inner)
    return _with_item(root, arg, inner)


def _with_item(container: Any, key: Any, value: Any) -> Any:
    if isinstance(container, t10.Map):
        out = t10.Map(container)
        out.codes, out.code = dict(container.codes), container.code
        out[key] = value
        return out
    items = list(container)
    items[key] = value
    if isinstance(container, t10.Array):
        return t10.Array(items, type=container.type, descriptor=container.descriptor, element=container.element,
                         code=container.code, descriptor_code=container.descriptor_code)
    if isinstance(container, t10.List):
        return t10.List(items, codes=list(container.codes), code=container.code)
    return type(container)(items)


def _with_key(container: t10.Map, old: Any, new: Any) -> t10.Map:
    """The map with key ``old`` renamed ``new`` in its place (its value and constructors kept)."""
    if new in container:
        raise ValueError(f"the changed key {new!r} is already in the map")
    out = t10.Map()
    for k, v in container.items():
        out[new if k is old or (k == old and type(k) is type(old)) else k] = v
    out.codes = {(new if k == old else k): c for k, c in container.codes.items()}
    out.code = container.code
    return out


def flipped(value: Any, rng: random.Random) -> Any:
    """``value`` with one bit changed: a flag negated, one of an integer's low eight bits (a count
    or id stays plausible; the type and so the encoding family are kept), a uuid's low bit, the
    lowest bit of one octet of a string or binary."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        new = int(value) ^ (1 << rng.randrange(8))
        if type(value) is not int:
            try:
                return type(value)(new)
            except (ValueError, OverflowError):  # a signed type at its edge: the lowest bit instead
                return type(value)(int(value) ^ 1)
        return new
    if isinstance(value, uuid.UUID):
        return type(value)(int=value.int ^ (1 << rng.randrange(8)))
    data = value.encode("utf-8", t10.SURROGATE) if isinstance(value, str) else bytes(value)
    i = rng.randrange(len(data))
    data = data[:i] + bytes((data[i] ^ 1,)) + data[i + 1:]
    if isinstance(value, str):
        text = data.decode("utf-8", t10.SURROGATE)
        return text if type(value) is str else type(value)(text)
    return data


def describe_path(roots: list[Any], path: Path) -> str:
    """``message-annotations[x-opt-a]``, ``header.delivery-count``, ``data``..."""
    head = roots[path[0][1]]
    out = str(getattr(head, "NAME", type(head).__name__))
    v = head
    for kind, arg in path[1:]:
        if kind == "field":
            out += f".{v.field(arg).name}"
        elif kind in ("key", "index") and not isinstance(v, (spec10.Data, spec10.AmqpValue)):
            out += f"[{arg}]"
        elif kind == "mapkey":
            out += f" key {arg!r}"
        v = _child(v, kind, arg)
    return out


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
