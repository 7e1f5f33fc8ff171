"""The "payload" mutation: one value inside the message a 1.0 transfer carries, changed.

A flip of a transfer's performative fields (handle, delivery-id, ...) mostly breaks the
delivery itself, so a case that judges the *message* (a header field, an annotation, the bare
message's octets) only ever sees a set-up failure. This module decodes the sections of a
transfer's payload (header, delivery-annotations, message-annotations, properties,
application-properties, data / amqp-sequence / amqp-value, footer) with the product's codec,
changes one leaf value -- one bit of an integer, a flag negated, the lowest bit of one octet
of a string or binary, one bit of a uuid -- and encodes the sections again. The decoder
remembers each constructor, so everything but the changed value comes back octet for octet.

Leaves are the scalar values reachable from the sections: a composite section's fields (a
header field the broker left out counts at its XML default, e.g. delivery-count 0: a broker
that wrote it wrong would have written it), map values (keys stay), list, array and described
values. They are ordered round-robin over the sections (the first leaf of each section, then
the second of each...), so that the first few variants reach every section the broker sent.

Only a transfer whose payload is a whole message re-encodes to the octets it came as; a
continuation of a multi-frame delivery (or anything else that does not decode) gets one bit
flipped in its payload octets instead (see :func:`flip_payload_octet`).
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
from amqpspec.wire.amqp10.message import Message, encode_sections

#: a path step: how to reach a value inside its container, and how to put a changed one back
Step = tuple[str, Any]   # ("field", attr) | ("value", None) | ("key", k) | ("index", i) | ("described", None)
Path = tuple[Step, ...]

MAX_LEAVES_PER_SECTION = 64  # a big map or sequence: its first values are enough to show a case notices


def transfer_of(raw: bytes) -> f10.AMQPFrame | None:
    """The frame as a transfer when it is one that re-encodes to exactly ``raw``."""
    if len(raw) < 8 or raw[:4] == b"AMQP":
        return None
    try:
        frame = f10.decode_frame(raw)
        if not isinstance(frame, f10.AMQPFrame) or not isinstance(frame.performative, spec10.Transfer):
            return None
        if frame.encode() != raw:
            return None
    except Exception:  # noqa: BLE001 -- not one well-formed frame: not rewritable
        return None
    return frame


def sections_of(payload: bytes) -> list[Any] | None:
    """The payload's sections as decoded, when they encode back to exactly ``payload``."""
    if not payload:
        return None
    try:
        received = Message.decode(payload).received or []
        if encode_sections(received) != payload:
            return None
    except Exception:  # noqa: BLE001 -- a partial message (more=true) or octets that are no message
        return None
    return received


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
    elif isinstance(value, list):  # List and Array
        for i, v in enumerate(value):
            yield from _walk(v, path + (("index", i),), depth + 1)
    elif isinstance(value, t10.Described):
        yield from _walk(value.value, path + (("described", None),), depth + 1)


def leaves(sections: list[Any]) -> list[Path]:
    """Every leaf's path, round-robin over the sections (each path starts with its section's index)."""
    per: list[list[Path]] = []
    for i, s in enumerate(sections):
        got: list[Path] = []
        for p in _walk(s, (("index", i),)):
            got.append(p)
            if len(got) >= MAX_LEAVES_PER_SECTION:
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


# ============================================================================ the mutation

def describe_path(sections: list[Any], path: Path) -> str:
    """``message-annotations[x-opt-a]``, ``header.delivery-count``, ``data``..."""
    head = sections[path[0][1]]
    out = str(getattr(head, "NAME", type(head).__name__))
    v = head
    for kind, arg in path[1:]:
        if kind == "field":
            out += f".{v.field(arg).name}"
        elif kind in ("key", "index") and not isinstance(v, (spec10.Data, spec10.AmqpValue)):
            out += f"[{arg}]"
        v = _child(v, kind, arg)
    return out


def leaf_count(raw: bytes) -> int:
    """How many values "payload" can choose from in this frame (0: not a whole-message transfer)."""
    frame = transfer_of(raw)
    if frame is None:
        return 0
    sections = sections_of(bytes(frame.payload))
    return len(leaves(sections)) if sections is not None else 0


def flip_message(raw: bytes, rng: random.Random, variant: int = 0) -> tuple[bytes, str] | None:
    """The transfer with the ``variant``-th leaf of its message changed (past the last: one the
    seed picks), or None when ``raw`` is not a transfer carrying a whole, re-encodable message."""
    frame = transfer_of(raw)
    if frame is None:
        return None
    sections = sections_of(bytes(frame.payload))
    if sections is None:
        return None
    paths = leaves(sections)
    if not paths:
        return None
    path = paths[variant] if variant < len(paths) else rng.choice(paths)
    root = t10.List(sections)
    old = get(root, path)
    new = flipped(old, rng)
    try:
        payload = encode_sections(replace(root, path, new))
    except Exception:  # noqa: BLE001 -- the changed value does not encode: flip an octet instead
        return None
    out = f10.AMQPFrame(frame.channel, frame.performative, payload, extended=frame.extended).encode()
    return out, f"transfer payload {describe_path(sections, path)} {_short(old)} -> {_short(new)}"


def flip_payload_octet(raw: bytes, rng: random.Random) -> tuple[bytes, str] | None:
    """One bit flipped in the payload octets of a transfer (after the performative), or None when
    ``raw`` is no transfer with a payload: a message that arrives in pieces still gets changed."""
    frame = transfer_of(raw)
    if frame is None or not frame.payload:
        return None
    n = len(bytes(frame.payload))
    lo = len(raw) - n
    i = rng.randrange(lo, len(raw))
    bit = rng.randrange(8)
    return raw[:i] + bytes((raw[i] ^ (1 << bit),)) + raw[i + 1:], f"transfer payload octet {i - lo} bit {bit} flipped"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
