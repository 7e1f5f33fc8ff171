"""The ``seeded`` AMQP 0-9-1 target: recorded client sessions, mutated.

With ``amqpspec fuzz --seeds PATH`` the frames real clients sent after their handshake
(see :mod:`amqpspec.fuzz.seeds`) become stimuli: a seed as it is, or with a few mutations --
a frame dropped, repeated, swapped with the next, cut short, one octet changed, moved to
another channel, or a codec-drawn frame put in. Every example is judged like any other 0-9-1
target: the spec-derived expectation of the octets actually sent (``expect091``) from a
connection opened by the fuzzer, then the probes.

Names are made the campaign's own before anything is sent: every exchange, queue and routing
key a seed names gets the campaign's prefix, so replaying an application's session never
touches that application's queues (and what a stimulus declared is deleted after its batch).
"""
from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp091 import FrameReader, MethodFrame, describe, encode
from amqpspec.wire.amqp091.frames import FRAME_HEADER_SIZE

from . import strategies091 as S
from .seeds import Corpus, Seed
from .stimulus import RawItem, Stimulus
from .targets import Env, FuzzTarget, register
from .targets091 import _runner

NAME_DOMAINS = ("exchange-name", "queue-name")
NAME_FIELDS = ("routing_key",)       # with the default exchange a routing key names a queue
MUTATIONS = ("drop", "repeat", "swap", "cut", "octet", "channel", "insert")
MAX_MUTATIONS = 3
_CORPORA: dict[tuple[str, ...], Corpus] = {}


def corpus(env: Env) -> Corpus | None:
    """The campaign's seeds (loaded once per process; None when no --seeds was given)."""
    if not env.seeds:
        return None
    key = tuple(env.seeds)
    if key not in _CORPORA:
        from .seeds import load

        _CORPORA[key] = load(list(key), "0-9-1")
    return _CORPORA[key]


def _own(value: Any, prefix: str) -> Any:
    if not isinstance(value, str) or not value or value.startswith(("amq.", prefix)):
        return value
    return f"{prefix}-{value}"[:255]


def rename(item: RawItem, prefix: str) -> RawItem:
    """The frame with every exchange, queue and routing key made the campaign's own; frames
    that are not well-formed method frames go as they are (they name nothing usable)."""
    reader = FrameReader(max_payload=len(item.data) + 16, expect_protocol_header=False)
    reader.feed(item.data)
    try:
        frames = list(reader)
    except Exception:  # noqa: BLE001 - malformed recorded octets are sent unchanged
        return item
    if len(frames) != 1 or not isinstance(frames[0], MethodFrame):
        return item
    method = frames[0].method
    changed = False
    for f in getattr(method, "FIELDS", ()):
        if f.domain in NAME_DOMAINS or f.attr in NAME_FIELDS:
            old = getattr(method, f.attr)
            new = _own(old, prefix)
            if new != old:
                setattr(method, f.attr, new)
                changed = True
    if not changed:
        return item
    frame = MethodFrame(frames[0].channel, method)
    return RawItem(encode(frame), describe(frame))


def _raw(data: bytes, note: str) -> RawItem:
    reader = FrameReader(max_payload=len(data) + 16, expect_protocol_header=False)
    reader.feed(data)
    try:
        frames = list(reader)
        text = describe(frames[0]) if len(frames) == 1 else ""
    except Exception:  # noqa: BLE001 - a mutated frame need not decode
        text = ""
    return RawItem(data, f"{note}: {text or f'{len(data)} octets'}")


def _mutate(items: list[RawItem], op: str, draw: Any, env: Env) -> list[RawItem]:
    if not items:
        return items
    i = draw(st.integers(0, len(items) - 1), label="frame")
    frame = items[i].data
    if op == "drop":
        return items[:i] + items[i + 1:]
    if op == "repeat":
        return items[:i + 1] + items[i:]
    if op == "swap" and i + 1 < len(items):
        return items[:i] + [items[i + 1], items[i]] + items[i + 2:]
    if op == "cut":  # the stream ends inside this frame: the broker waits for the rest or gives up
        k = draw(st.integers(1, max(1, len(frame) - 1)), label="octets kept")
        return items[:i] + [_raw(frame[:k], "cut")]
    if op == "octet":
        j = draw(st.integers(0, len(frame) - 1), label="position")
        v = draw(st.integers(0, 255).filter(lambda b: b != frame[j]), label="octet")
        return items[:i] + [_raw(frame[:j] + bytes((v,)) + frame[j + 1:], f"octet {j} := {v}")] + items[i + 1:]
    if op == "channel" and len(frame) >= FRAME_HEADER_SIZE:
        ch = draw(S.channels(), label="channel")
        return items[:i] + [_raw(frame[:1] + ch.to_bytes(2, "big") + frame[3:], f"channel := {ch}")] + items[i + 1:]
    if op == "insert":
        new = draw(S.frames(env.dialect, max_body=256), label="inserted")
        return items[:i] + [_raw(encode(new, env.dialect), "inserted")] + items[i:]
    return items


def stimuli(env: Env) -> SearchStrategy[Stimulus]:
    c = corpus(env)
    if c is None:
        return st.nothing()
    prefix = env.name("s")

    @st.composite
    def build(draw: Any) -> Stimulus:
        seed: Seed = draw(st.sampled_from(c.seeds), label="seed")
        items = [rename(x, prefix) for x in seed.frames]
        ops = draw(st.lists(st.sampled_from(MUTATIONS), max_size=MAX_MUTATIONS), label="mutations")
        for op in ops:
            items = _mutate(items, op, draw, env) or items   # a stimulus always sends something
        return Stimulus("0-9-1", tuple(items))

    return build()


def _needs(env: Env) -> str:
    return "" if env.seeds else "no seeds: give --seeds PATH (recordings of `amqpspec record`, findings, pcaps)"


register(FuzzTarget("seeded", "0-9-1", "after-open",
                    "recorded client sessions (--seeds PATH) after their handshake, as they are or mutated: frames "
                    "dropped, repeated, swapped, cut, an octet or channel changed, codec-drawn frames put in",
                    stimuli, _runner("after-open"), needs=_needs))
