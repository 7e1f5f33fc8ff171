"""fuzz.mutate10: a valid base frame and a few packed mutations (no broker)."""
from __future__ import annotations

from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from amqpspec.fuzz import mutate10 as M
from amqpspec.fuzz import strategies10 as S
from amqpspec.wire.amqp10 import AMQPFrame, RawFrame, spec
from amqpspec.wire.amqp10.types import UInt

BASE = AMQPFrame(1, spec.Begin(next_outgoing_id=UInt(0), incoming_window=UInt(2048), outgoing_window=UInt(2048)))


def _shape() -> M.Shape:
    return M.shape(spec.Begin, (1, 2, 0xFFFF), {"handle_max": st.just(UInt(7))}, [S.malformed_composite(spec.Begin)])


def _packed(kind: int, where: int, which: int) -> int:
    k = M._KIND_TABLE.index(kind)
    return (k * 256 + where) * M.POOL_SIZE + which


def test_a_pool_value_is_a_function_of_its_index() -> None:
    p, q = M.pool(S.primitive("uint")), M.Pool(S.primitive("uint"))
    assert [p[i] for i in range(20)] == [q[i] for i in range(20)]
    assert M.pool(S.primitive("uint")) is p   # one pool per strategy object


def test_no_mutation_is_the_base_and_each_kind_changes_what_it_says() -> None:
    sh = _shape()
    assert M.apply(BASE, [], sh) == BASE
    handle_max = [f.attr for f in spec.Begin.FIELDS].index("handle_max")
    assert M.apply(BASE, [_packed(M.VALID, handle_max, 3)], sh).performative.handle_max == 7
    assert M.apply(BASE, [_packed(M.ABSENT, 0, 0)], sh).performative.remote_channel is None
    assert M.apply(BASE, [_packed(M.CHANNEL, 0, 2)], sh).channel == 0xFFFF
    cut = M.apply(BASE, [_packed(M.TRUNCATE, 0, M.POOL_SIZE // 2)], sh)
    assert isinstance(cut, RawFrame) and 0 < len(cut.data) < len(BASE.encode_body())
    assert M.apply(BASE, [_packed(M.HEADER, 2, 0)], sh).frame_type == S.UNDEFINED_FRAME_TYPES[0]
    assert M.apply(BASE, [_packed(M.HEADER, 0, 0)], sh).size == 0
    replaced = M.apply(BASE, [_packed(M.REPLACE, 0, 5)], sh)
    assert replaced.performative is not BASE.performative


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(M.frames((lambda i: BASE,), lambda f: _shape()))
def test_every_mutated_frame_encodes(frame: object) -> None:
    assert frame.encode()  # type: ignore[attr-defined]


def test_shrinking_ends_at_the_fewest_and_simplest_mutations() -> None:
    """A frame with a header rewritten shrinks to one mutation, of that kind."""
    frames = M.frames((lambda i: BASE,), lambda f: _shape())
    got = find(frames, lambda f: f.frame_type is not None,
               settings=settings(database=None, max_examples=2000, suppress_health_check=list(HealthCheck)))
    assert got.frame_type == S.UNDEFINED_FRAME_TYPES[0] and got.size is None and got.channel == 1
