"""A template target for AMQP 0-9-1: ``channel-error``, one passive queue.declare frame.

The frame is the channel-error cycle of the rate benchmark (``bench/fuzz_rates.py``): on the
open stimulus channel, a passive queue.declare of a queue of this campaign that does not exist,
which a broker MUST refuse with a channel exception 404 (queue.declare ``passive``). The fuzzed
parts are the ones a template fuzzer such as boofuzz mutates in the same frame: the queue name
(any octets up to the short-string limit, mostly names of this campaign), the reserved-1 short,
the five flag bits. The arguments table stays empty, so the frame is otherwise well-formed:
a cheap target whose reactions are mostly channel errors, which is what makes it a good
in-connection rate benchmark -- and a real target (name rules, flags the spec says a passive
declare ignores, 'amq.' names).
"""
from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp091 import MethodFrame, spec

from . import strategies091 as S
from .exec091 import STIMULUS_CHANNEL
from .stimulus import Stimulus
from .targets import Env, FuzzTarget, register
from .targets091 import _runner

SURROGATE = "surrogateescape"


def declare_frame(queue: str, *, passive: bool = True, durable: bool = False, exclusive: bool = False,
                  auto_delete: bool = False, no_wait: bool = False, reserved_1: int = 0) -> MethodFrame:
    """The template frame (also what the benchmark's bare loop and boofuzz send)."""
    return MethodFrame(STIMULUS_CHANNEL, spec.QueueDeclare(reserved_1=reserved_1, queue=queue, passive=passive,
                                                           durable=durable, exclusive=exclusive,
                                                           auto_delete=auto_delete, no_wait=no_wait, arguments={}))


# One integer carries the five flag bits and the reserved-1 short, and one the kind of name:
# a draw of three primitives instead of a dozen nested choices (a draw costs ~70 us instead of
# ~350 us, which at the rates this target runs is a third of the CPU of an example).
PASSIVE_BITS = 0b111          # passive unless all three are 0: 7 draws in 8 ask for the 404
FLAG_SHIFT = 3                # then durable, exclusive, auto-delete, no-wait
RESERVED_SHIFT = 7            # then 2 bits: reserved-1 is 0 unless both are set; then its 16 bits
NAME_KINDS = 16               # 0: any octets; 1: ours with invalid UTF-8 after the prefix; 2: amq.ours;
                              # 3..15: ours, valid UTF-8 (invalid UTF-8 makes RabbitMQ close the
                              # connection with 501: worth meeting, not in half the examples)
OWN_TAIL = 24                 # octets after the campaign prefix


def _name(kind: int, raw: bytes, prefix: str) -> str:
    if kind == 0:
        return raw.decode("utf-8", SURROGATE)
    tail = raw[:OWN_TAIL]
    if kind == 1:
        return f"{prefix}-{tail.decode('utf-8', SURROGATE)}"
    if kind == 2:
        return f"amq.{prefix}-{tail.decode('latin-1')}"
    return f"{prefix}-{tail.decode('latin-1')}"


def _frame(bits: int, kind: int, raw: bytes, prefix: str) -> MethodFrame:
    flag = [bool(bits >> (FLAG_SHIFT + i) & 1) for i in range(4)]
    reserved = bits >> (RESERVED_SHIFT + 2) & 0xFFFF if bits >> RESERVED_SHIFT & 0b11 == 0b11 else 0
    return declare_frame(_name(kind, raw, prefix), passive=bits & PASSIVE_BITS != 0, durable=flag[0],
                         exclusive=flag[1], auto_delete=flag[2], no_wait=flag[3], reserved_1=reserved)


def channel_error(env: Env) -> SearchStrategy[Stimulus]:
    prefix = env.name("q")
    return st.builds(lambda b, k, r: Stimulus("0-9-1", (_frame(b, k, r, prefix),)),
                     st.integers(0, (1 << (RESERVED_SHIFT + 2 + 16)) - 1), st.integers(0, NAME_KINDS - 1),
                     st.binary(max_size=S.SHORTSTR_MAX))


register(FuzzTarget("channel-error", "0-9-1", "channel-open",
                    "passive queue.declare of a missing queue of this campaign (the rate benchmark's template): "
                    "name, reserved-1 and flags fuzzed, a channel exception 404 expected", channel_error,
                    _runner("channel-open")))

__all__ = ["declare_frame", "channel_error"]
