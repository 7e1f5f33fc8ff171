"""The ``seeded`` targets (one per protocol): recorded client sessions, mutated.

With ``amqpspec fuzz --seeds PATH`` the frames real clients sent after their handshake
(see :mod:`amqpspec.fuzz.seeds`) become stimuli: a seed as it is, or with a few mutations --
a frame dropped, repeated, swapped with the next, cut short, one octet changed, moved to
another channel, or a codec-drawn frame put in. Every example is judged like any other target
of its protocol: the spec-derived expectation of the octets actually sent (``expect091`` /
``expect10``) from a connection opened by the fuzzer, then the probes.

Names are made the campaign's own before anything is sent, so replaying an application's
session never touches that application's nodes: in 0-9-1 every exchange, queue and routing key
a seed names gets the campaign's prefix (and what a stimulus declared is deleted after its
batch); in 1.0 every name in an attach's source and target address does -- each path segment
of a RabbitMQ-style address (``/queue/NAME``, ``/exchange/X/KEY``), the keywords and ``amq.*``
names kept -- and the queues those addresses make are deleted over 0-9-1 where the broker
speaks it.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.capture.cleanup import SUITE_PREFIX, attached_queues
from amqpspec.capture.codec import decode_one
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import FrameReader, MethodFrame, describe, encode
from amqpspec.wire.amqp091.frames import FRAME_HEADER_SIZE
from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

from . import strategies091 as S
from . import strategies10 as S10
from .seeds import Corpus, Seed
from .stimulus import RawItem, Stimulus
from .targets import Env, FuzzTarget, register
from .targets091 import _runner
from .targets10 import _runner as _runner10

NAME_DOMAINS = ("exchange-name", "queue-name")
NAME_FIELDS = ("routing_key",)       # with the default exchange a routing key names a queue
MUTATIONS = ("drop", "repeat", "swap", "cut", "octet", "channel", "insert")
MAX_MUTATIONS = 3
ADDRESS_KEYWORDS = frozenset(("queue", "queues", "exchange", "exchanges", "topic", "amq", "key"))
CHANNEL_EDGES_10 = (255, 256, 32767, 32768, 65535)
_CORPORA: dict[tuple[str, tuple[str, ...]], Corpus] = {}


def corpus(env: Env) -> Corpus | None:
    """The campaign's seeds (loaded once per process; None when no --seeds was given)."""
    if not env.seeds:
        return None
    key = (env.protocol, tuple(env.seeds))
    if key not in _CORPORA:
        from .seeds import load

        _CORPORA[key] = load(list(key[1]), env.protocol)
    return _CORPORA[key]


def _own(value: Any, prefix: str) -> Any:
    if not isinstance(value, str) or not value or value.startswith(("amq.", prefix)):
        return value
    return f"{prefix}-{value}"[:255]


def own_address(value: Any, prefix: str) -> Any:
    """A 1.0 node address made the campaign's own: a plain name gets the prefix, and so does
    every segment of a path address that is not one of its keywords or an ``amq.`` name."""
    if not isinstance(value, str) or not value:
        return value
    if not value.startswith("/"):
        return _own(value, prefix)
    return "/".join(p if not p or p in ADDRESS_KEYWORDS else _own(p, prefix) for p in value.split("/"))


def rename10(item: RawItem, prefix: str) -> RawItem:
    """The frame with the addresses of an attach's source and target made the campaign's own;
    every other frame goes as recorded."""
    frame = decode_one("1.0", item.data)
    if not (isinstance(frame, AMQPFrame) and isinstance(frame.performative, spec10.Attach)):
        return item
    attach = frame.performative
    ends = {}
    for attr in ("source", "target"):
        end = getattr(attach, attr)
        address = getattr(end, "address", None)
        if isinstance(address, str) and own_address(address, prefix) != address:
            ends[attr] = end.replace(address=own_address(address, prefix))
    if not ends:
        return item
    frame = dataclasses.replace(frame, performative=attach.replace(**ends))
    return RawItem(frame.encode(), frame.summary())


def rename(item: RawItem, prefix: str, protocol: str = "0-9-1") -> RawItem:
    """The frame with every exchange, queue and routing key (1.0: node address) made the
    campaign's own; frames that are not well-formed method frames go as they are (they name
    nothing usable)."""
    if protocol == "1.0":
        return rename10(item, prefix)
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


def _raw(data: bytes, note: str, protocol: str = "0-9-1") -> RawItem:
    if protocol == "1.0":
        frame = decode_one("1.0", data)
        text = frame.summary() if frame is not None else ""
        return RawItem(data, f"{note}: {text or f'{len(data)} octets'}")
    reader = FrameReader(max_payload=len(data) + 16, expect_protocol_header=False)
    reader.feed(data)
    try:
        frames = list(reader)
        text = describe(frames[0]) if len(frames) == 1 else ""
    except Exception:  # noqa: BLE001 - a mutated frame need not decode
        text = ""
    return RawItem(data, f"{note}: {text or f'{len(data)} octets'}")


def _channel_at(protocol: str) -> int:
    """Where the channel's two octets sit in a frame header (0-9-1: after TYPE; 1.0: after DOFF, TYPE)."""
    return 1 if protocol == "0-9-1" else 6


def _channels(protocol: str) -> SearchStrategy[int]:
    return S.channels() if protocol == "0-9-1" else st.one_of(st.integers(0, 8), st.sampled_from(CHANNEL_EDGES_10))


def _inserted(draw: Any, env: Env) -> bytes:
    if env.protocol == "1.0":
        return draw(S10.frames(), label="inserted").encode()
    return encode(draw(S.frames(env.dialect, max_body=256), label="inserted"), env.dialect)


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
        return items[:i] + [_raw(frame[:k], "cut", env.protocol)]
    if op == "octet":
        j = draw(st.integers(0, len(frame) - 1), label="position")
        v = draw(st.integers(0, 255).filter(lambda b: b != frame[j]), label="octet")
        changed = frame[:j] + bytes((v,)) + frame[j + 1:]
        return items[:i] + [_raw(changed, f"octet {j} := {v}", env.protocol)] + items[i + 1:]
    at = _channel_at(env.protocol)
    if op == "channel" and len(frame) >= max(FRAME_HEADER_SIZE, at + 2):
        ch = draw(_channels(env.protocol), label="channel")
        changed = frame[:at] + ch.to_bytes(2, "big") + frame[at + 2:]
        return items[:i] + [_raw(changed, f"channel := {ch}", env.protocol)] + items[i + 1:]
    if op == "insert":
        return items[:i] + [_raw(_inserted(draw, env), "inserted", env.protocol)] + items[i:]
    return items


def stimuli(env: Env) -> SearchStrategy[Stimulus]:
    c = corpus(env)
    if c is None:
        return st.nothing()
    prefix = env.name("s")

    @st.composite
    def build(draw: Any) -> Stimulus:
        seed: Seed = draw(st.sampled_from(c.seeds), label="seed")
        items = [rename(x, prefix, env.protocol) for x in seed.frames]
        ops = draw(st.lists(st.sampled_from(MUTATIONS), max_size=MAX_MUTATIONS), label="mutations")
        for op in ops:
            items = _mutate(items, op, draw, env) or items   # a stimulus always sends something
        return Stimulus(env.protocol, tuple(items))

    return build()


def _needs(env: Env) -> str:
    return "" if env.seeds else "no seeds: give --seeds PATH (recordings of `amqpspec record`, findings, pcaps)"


def _near_suite_name(name: str) -> bool:
    """A name the campaign made: its prefix, or its prefix with one octet changed by a mutation."""
    head = name[:len(SUITE_PREFIX)]
    return len(head) == len(SUITE_PREFIX) and sum(x != y for x, y in zip(head, SUITE_PREFIX)) <= 1


def made_queues(stimulus: Stimulus) -> list[str]:
    """The queues the stimulus's attaches may have made (RabbitMQ makes one for ``/queue/NAME``):
    names the renaming gave the campaign's prefix, and the near misses an octet mutation made
    of them, so that a mutated seed leaves no queue behind either."""
    out: list[str] = []
    for item in stimulus.items:
        frame = decode_one("1.0", item.data) if isinstance(item, RawItem) else item
        out += [name for name in attached_queues(frame) if _near_suite_name(name)]
    return list(dict.fromkeys(out))


def _runner_10() -> Any:
    """The 1.0 runner from ``open``, with the queues the stimulus's attaches made to delete afterwards."""
    run_open = _runner10("open")

    def run(env: Env, stimulus: Stimulus, transcript: Transcript) -> Any:
        exp, obs, octets, cleanup = run_open(env, stimulus, transcript)
        return exp, obs, octets, cleanup + [("queue", q) for q in made_queues(stimulus)]
    return run


_DESCRIPTION = ("recorded client sessions (--seeds PATH) after their handshake, as they are or mutated: frames "
                "dropped, repeated, swapped, cut, an octet or channel changed, codec-drawn frames put in")
register(FuzzTarget("seeded", "0-9-1", "after-open", _DESCRIPTION, stimuli, _runner("after-open"), needs=_needs))
register(FuzzTarget("seeded", "1.0", "open", _DESCRIPTION + "; attach addresses made the campaign's own",
                    stimuli, _runner_10(), needs=_needs))
