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


def channel_error(env: Env) -> SearchStrategy[Stimulus]:
    prefix = env.name("q")
    tail = st.binary(max_size=24).map(lambda b: b.decode("utf-8", SURROGATE))
    names = st.one_of(tail.map(lambda s: f"{prefix}-{s}"), tail.map(lambda s: f"{prefix}-{s}"),
                      tail.map(lambda s: f"amq.{prefix}-{s}"), S.shortstr(255))
    passive = st.one_of(st.just(True), st.just(True), st.just(True), st.booleans())
    reserved = st.one_of(st.just(0), st.just(0), st.integers(0, 0xFFFF))
    frames = st.builds(lambda q, p, d, e, a, n, r: declare_frame(q, passive=p, durable=d, exclusive=e, auto_delete=a,
                                                                 no_wait=n, reserved_1=r),
                       names, passive, st.booleans(), st.booleans(), st.booleans(), st.booleans(), reserved)
    return frames.map(lambda f: Stimulus("0-9-1", (f,)))


register(FuzzTarget("channel-error", "0-9-1", "channel-open",
                    "passive queue.declare of a missing queue of this campaign (the rate benchmark's template): "
                    "name, reserved-1 and flags fuzzed, a channel exception 404 expected", channel_error,
                    _runner("channel-open")))

__all__ = ["declare_frame", "channel_error"]
