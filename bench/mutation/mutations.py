"""Generic mutations of one frame the broker sent: what each kind does to the octets.

A :class:`Mutation` names a kind, the connection of the case (1 = the first it opened) and the
index of the broker's frame on it (0 = the first unit the broker sent: a protocol header or a
frame), plus a seed for the kinds that choose (which field, which bit, which code). The relay
(:mod:`bench.mutation.proxy`) asks :func:`action_for` what to do when that frame passes.

Kinds that rewrite the frame decode it with the product's codecs and encode it again
(every field of those codecs is overridable, so a changed reply code or a flipped bit in a
field is a one-line ``replace``); when the frame does not decode or does not re-encode to the
octets it came as, they flip a bit in its payload instead, so that they always change
something. "payload" changes one value inside the message a 1.0 transfer carries
(:mod:`bench.mutation.message10`); "deep" one value nested inside a 1.0 performative's field,
"unset" leaves out one field a 1.0 performative set (:mod:`bench.mutation.fields10`). The relay kinds (drop, dup, reorder, delay, withhold, fin,
rst) act on the stream.
"""
from __future__ import annotations

import random
import struct
from dataclasses import dataclass
from typing import Any

from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp091 import spec as spec091
from amqpspec.wire.amqp091.primitives import INT_BITS
from amqpspec.wire.amqp091.table import RABBITMQ, SPEC
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10
from amqpspec.wire.amqp10 import types as t10
from amqpspec.wire.amqp10.composite import Choices, Composite

from bench.mutation import fields10, message10

#: kinds that replace the frame's octets by others (computed by :func:`rewrite`)
REWRITE_KINDS = ("code", "flip", "flipall", "payload", "deep", "unset")
#: kinds the relay carries out on the stream
STREAM_KINDS = ("drop", "dup", "reorder", "delay", "withhold", "fin", "rst")
KINDS = REWRITE_KINDS + STREAM_KINDS

DELAY_S = 3.0            # "delay": the frame and everything after it arrive this much later
REORDER_WAIT_S = 1.0     # "reorder": how long a frame waits for the next one to swap with

_P091 = "0-9-1"
_P10 = "1.0"


@dataclass(frozen=True)
class Mutation:
    kind: str
    conn: int     # 1-based: the case's first connection is 1
    index: int    # 0-based index of the broker's unit (header or frame) on that connection
    seed: int = 0
    variant: int = 0  # "flip": which flippable field (in field order; past the last: one by the seed);
    # "payload": which value of the transfer's message (message10.leaves order); "deep", "unset": which
    # nested value / set field (fields10 order)
    # "flipall": "flip" of the same bit of the same field in every frame of sort ``sort`` (a method,
    # a performative) from ``index`` on, on the connection: a broker that is wrong every time, which
    # a case that asks again until the answer is right (a count that may lag) notices; by sort, not
    # by index, as the number of such answers may differ from run to run
    sort: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown mutation kind {self.kind!r} (one of {', '.join(KINDS)})")

    def describe(self) -> str:
        tail = f"/{self.variant}" if self.variant else ""
        return f"{self.kind} c{self.conn}#{self.index}{tail}"


# ============================================================================ rewrites

def rewrite(kind: str, raw: bytes, protocol: str, seed: int, variant: int = 0) -> tuple[bytes, str]:
    """The frame's new octets and a note saying what changed ("code" or "flip")."""
    rng = random.Random(seed)
    if kind == "code":
        changed = change_code(raw, protocol, rng)
        if changed is not None:
            return changed
        return flip_payload_bit(raw, protocol, rng)
    if kind in ("flip", "flipall"):
        changed = flip_field(raw, protocol, rng, variant)
        if changed is not None:
            return changed
        return flip_payload_bit(raw, protocol, rng)
    if kind == "payload":
        changed = message10.flip_message(raw, rng, variant) if protocol == _P10 else None
        if changed is None and protocol == _P10:
            changed = message10.flip_payload_octet(raw, rng)  # a piece of a message: an octet of it
        if changed is not None:
            return changed
        return flip_payload_bit(raw, protocol, rng)
    if kind in ("deep", "unset"):
        changed = fields10.mutate(raw, kind, rng, variant) if protocol == _P10 else None
        if changed is not None:
            return changed
        return flip_payload_bit(raw, protocol, rng)
    raise ValueError(f"{kind} is not a rewriting mutation")


def sort_of(raw: bytes, protocol: str) -> str:
    """What kind of unit this is, for "flipall": the 0-9-1 method or frame kind, the 1.0
    performative or SASL frame name; "" for headers and what does not decode."""
    if protocol == _P091:
        got = _decode091(raw)
        if got is None:
            return ""
        frame = got[0]
        return frame.method.NAME if isinstance(frame, f091.MethodFrame) else frame.kind
    frame10 = _decode10(raw)
    if frame10 is None:
        return ""
    return str(getattr(frame10.performative, "NAME", ""))


def closes(raw: bytes, protocol: str) -> bool:
    """Whether the frame carries a reply code or error condition that "code" can change:
    0-9-1 methods with a reply-code (connection.close, channel.close, basic.return); 1.0
    close, end and detach (an error is added when there is none)."""
    if protocol == _P091:
        got = _decode091(raw)
        return got is not None and isinstance(got[0], f091.MethodFrame) and hasattr(got[0].method, "reply_code")
    got10 = _decode10(raw)
    return got10 is not None and isinstance(got10.performative, (spec10.Close, spec10.End, spec10.Detach))


def change_code(raw: bytes, protocol: str, rng: random.Random) -> tuple[bytes, str] | None:
    if protocol == _P091:
        got = _decode091(raw)
        if got is None or not isinstance(got[0], f091.MethodFrame) or not hasattr(got[0].method, "reply_code"):
            return None
        frame, dialect = got
        old = frame.method.reply_code
        new = other_reply_code(old, rng)
        mutated = f091.MethodFrame(frame.channel, frame.method.replace(reply_code=new))
        return mutated.encode(dialect), f"{frame.method.NAME} reply-code {old} -> {new}"
    got10 = _decode10(raw)
    if got10 is None or not isinstance(got10.performative, (spec10.Close, spec10.End, spec10.Detach)):
        return None
    perf = got10.performative
    error = perf.error
    old_cond = error.condition if isinstance(error, spec10.Error) else None
    new_cond = other_condition(old_cond, perf, rng)
    new_error = error.replace(condition=new_cond) if isinstance(error, spec10.Error) else spec10.Error(condition=new_cond)
    mutated10 = f10.AMQPFrame(got10.channel, perf.replace(error=new_error), got10.payload, extended=got10.extended)
    return mutated10.encode(), f"{perf.NAME} error condition {old_cond or 'none'} -> {new_cond}"


def other_reply_code(old: int, rng: random.Random) -> int:
    """Another reply code of the spec's list: of the same severity (soft/hard) when there is
    one, so the answer stays plausible and only a case that checks the code can tell."""
    kind = spec091.REPLY_CODES.get(old, ("", ""))[1]
    same = [c for c, (_, k) in spec091.REPLY_CODES.items() if c != old and k == kind and c != spec091.REPLY_SUCCESS]
    pool = same or [c for c in spec091.REPLY_CODES if c not in (old, spec091.REPLY_SUCCESS)]
    return rng.choice(sorted(pool))


def _conditions(cls: type[Choices]) -> list[t10.Symbol]:
    return sorted(cls.NAMES, key=str)


def other_condition(old: Any, perf: Composite, rng: random.Random) -> t10.Symbol:
    """Another error condition, from the performative's own family first (link errors for a
    detach, session errors for an end, connection errors for a close), else amqp:*."""
    family = {spec10.Detach: spec10.LinkError, spec10.End: spec10.SessionError,
              spec10.Close: spec10.AmqpConnectionError}[type(perf)]
    pool = [c for c in _conditions(family) + _conditions(spec10.AmqpError) if c != old]
    return rng.choice(pool)


def flip_field(raw: bytes, protocol: str, rng: random.Random, variant: int = 0) -> tuple[bytes, str] | None:
    """One bit flipped in one decoded field (an integer, a flag, a string octet), re-encoded:
    the ``variant``-th flippable field, or one the seed picks when there are not that many."""
    if protocol == _P091:
        return _flip091(raw, rng, variant)
    return _flip10(raw, rng, variant)


def flippable_fields(raw: bytes, protocol: str) -> int:
    """How many fields "flip" can choose from in this frame (0: it flips a payload bit)."""
    return len(flippable_field_names(raw, protocol))


def flippable_field_names(raw: bytes, protocol: str) -> tuple[str, ...]:
    """The names of the fields "flip" chooses from, in variant order ("body-size" for a 0-9-1
    content header)."""
    if protocol == _P091:
        got = _decode091(raw)
        if got is None:
            return ()
        if isinstance(got[0], f091.MethodFrame):
            return tuple(f.name for f in _fields091(got[0].method))
        return ("body-size",) if isinstance(got[0], f091.HeaderFrame) else ()
    frame = _decode10(raw)
    if frame is None or not isinstance(frame.performative, Composite):
        return ()
    return tuple(f.name for f in _fields10(frame.performative))


def payload_values(raw: bytes, protocol: str) -> int:
    """How many values of a 1.0 transfer's message "payload" can choose from (0: none here)."""
    return message10.leaf_count(raw) if protocol == _P10 else 0


def nested_variants(raw: bytes, protocol: str) -> tuple[int, int]:
    """How many variants "deep" and "unset" have in this 1.0 frame ((0, 0): none, or 0-9-1)."""
    if protocol != _P10:
        return 0, 0
    return fields10.count(raw, "deep"), fields10.count(raw, "unset")


def _pick(fields: list[Any], rng: random.Random, variant: int) -> Any:
    return fields[variant] if variant < len(fields) else rng.choice(fields)


def _fields091(method: Any) -> list[Any]:
    return [f for f in getattr(method, "FIELDS", ()) if not f.reserved and f.type != "table"
            and _flippable(getattr(method, f.attr), f.type)]


def _fields10(perf: Composite) -> list[Any]:
    return [f for f in perf.FIELDS if _flippable10(getattr(perf, f.attr))]


def _flip091(raw: bytes, rng: random.Random, variant: int = 0) -> tuple[bytes, str] | None:
    got = _decode091(raw)
    if got is None:
        return None
    frame, dialect = got
    if isinstance(frame, f091.MethodFrame):
        method = frame.method
        fields = _fields091(method)
        if not fields:
            return None
        fld = _pick(fields, rng, variant)
        old = getattr(method, fld.attr)
        new = _flipped(old, INT_BITS.get(fld.type, 8), rng)
        mutated = f091.MethodFrame(frame.channel, method.replace(**{fld.attr: new}))
        return mutated.encode(dialect), f"{method.NAME}.{fld.name} {_short(old)} -> {_short(new)}"
    if isinstance(frame, f091.HeaderFrame):
        bit = rng.randrange(8)
        mutated_h = f091.HeaderFrame(frame.channel, frame.class_id, frame.body_size ^ (1 << bit), frame.properties,
                                     weight=frame.weight)
        return mutated_h.encode(dialect), f"content-header body-size {frame.body_size} -> {frame.body_size ^ (1 << bit)}"
    return None


def _flippable(value: Any, ftype: str) -> bool:
    if ftype == "bit" or ftype in INT_BITS:
        return isinstance(value, int)
    return isinstance(value, (str, bytes)) and len(value) > 0


def _flipped(value: Any, width: int, rng: random.Random) -> Any:
    """The value with one bit changed: a flag negated, an integer's low bit of its width (the
    low eight, so that a count or id stays plausible), a string's octet's lowest bit."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        flipped = int(value) ^ (1 << rng.randrange(min(width, 8)))
        return type(value)(flipped) if type(value) is not int else flipped
    data = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    i = rng.randrange(len(data))
    data = data[:i] + bytes((data[i] ^ 1,)) + data[i + 1:]
    if isinstance(value, str):
        return type(value)(data.decode("utf-8", "surrogateescape")) if type(value) is not str \
            else data.decode("utf-8", "surrogateescape")
    return data


def _flip10(raw: bytes, rng: random.Random, variant: int = 0) -> tuple[bytes, str] | None:
    frame = _decode10(raw)
    if frame is None or not isinstance(frame.performative, Composite):
        return None
    perf = frame.performative
    fields = _fields10(perf)
    if not fields:
        return None
    fld = _pick(fields, rng, variant)
    old = getattr(perf, fld.attr)
    new = _flipped(old, 8, rng)
    mutated = f10.AMQPFrame(frame.channel, perf.replace(**{fld.attr: new}), frame.payload, extended=frame.extended)
    return mutated.encode(), f"{perf.NAME}.{fld.name} {_short(old)} -> {_short(new)}"


def _flippable10(value: Any) -> bool:
    return isinstance(value, (bool, int)) or (isinstance(value, (str, bytes)) and len(value) > 0)


def flip_payload_bit(raw: bytes, protocol: str, rng: random.Random) -> tuple[bytes, str]:
    """One bit flipped anywhere in the frame's payload (never in its envelope, so the stream
    stays framed); a protocol header gets a bit flipped in its version octets."""
    if raw[:4] == b"AMQP" and len(raw) == 8:
        lo, hi = 4, 8
    elif protocol == _P091:
        lo, hi = 7, len(raw) - 1
    else:
        lo = (raw[4] * 4) if len(raw) > 4 else len(raw)
        hi = len(raw)
    if hi <= lo:  # nothing to flip but the envelope: an empty frame gets its type octet changed
        lo = 0 if protocol == _P091 else 5
        lo = min(lo, len(raw) - 1)
        hi = lo + 1
    i = rng.randrange(lo, hi)
    bit = rng.randrange(8)
    out = raw[:i] + bytes((raw[i] ^ (1 << bit),)) + raw[i + 1:]
    return out, f"octet {i} bit {bit} flipped"


# ============================================================================ decoding

def _decode091(raw: bytes) -> tuple[f091.Frame, Any] | None:
    """The frame and the field-table dialect that re-encodes it to exactly ``raw``."""
    if len(raw) < 8 or raw[:4] == b"AMQP":
        return None
    ftype, channel, size = struct.unpack_from(">BHI", raw, 0)
    payload = raw[7:7 + size]
    for dialect in (SPEC, RABBITMQ):
        frame = f091.decode_frame(ftype, channel, payload, dialect)
        if isinstance(frame, (f091.MalformedFrame, f091.RawFrame)):
            continue
        try:
            if frame.encode(dialect) == raw:
                return frame, dialect
        except Exception:  # noqa: BLE001 -- a value the codec cannot write back: not rewritable
            continue
    return None


def _decode10(raw: bytes) -> f10.AMQPFrame | None:
    if len(raw) < 8 or raw[:4] == b"AMQP":
        return None
    try:
        frame = f10.decode_frame(raw)
    except Exception:  # noqa: BLE001 -- not one well-formed frame: not rewritable
        return None
    if not isinstance(frame, f10.AMQPFrame):
        return None
    try:
        if frame.encode() != raw:
            return None
    except Exception:  # noqa: BLE001
        return None
    return frame


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
