"""The "payload" mutation: one value inside the message a 1.0 transfer carries, changed.

A flip of a transfer's performative fields (handle, delivery-id, ...) mostly breaks the
delivery itself, so a case that judges the *message* (a header field, an annotation, the bare
message's octets) only ever sees a set-up failure. This module decodes the sections of a
transfer's payload (header, delivery-annotations, message-annotations, properties,
application-properties, data / amqp-sequence / amqp-value, footer) with the product's codec,
changes one leaf value -- one bit of an integer, a flag negated, the lowest bit of one octet
of a string or binary, one bit of a uuid -- and encodes the sections again. The decoder
remembers each constructor, so everything but the changed value comes back octet for octet.

The values are :func:`bench.mutation.values10.leaves` of the sections: round-robin over them,
so that the first few variants reach every section the broker sent; a header field the broker
left out counts at its default (delivery-count 0).

Only a transfer whose payload is a whole message re-encodes to the octets it came as; a
continuation of a multi-frame delivery (or anything else that does not decode) gets one bit
flipped in its payload octets instead (see :func:`flip_payload_octet`).
"""
from __future__ import annotations

import random
from typing import Any

from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10
from amqpspec.wire.amqp10 import types as t10
from amqpspec.wire.amqp10.message import Message, encode_sections

from bench.mutation.values10 import describe_path, flipped, get, leaves, replace, rewritable_frame, short


def transfer_of(raw: bytes) -> f10.AMQPFrame | None:
    """The frame as a transfer when it is one that re-encodes to exactly ``raw``."""
    return rewritable_frame(raw, spec10.Transfer)


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


# ============================================================================ the mutation

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
    except Exception:  # noqa: BLE001 -- the changed value does not encode (or a changed key clashes)
        return None
    out = f10.AMQPFrame(frame.channel, frame.performative, payload, extended=frame.extended).encode()
    return out, f"transfer payload {describe_path(sections, path)} {short(old)} -> {short(new)}"


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

