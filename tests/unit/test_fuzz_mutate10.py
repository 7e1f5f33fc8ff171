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


# ---------------------------------------------------------------------------- pools shared by slots

def _env(worker: int, run_id: str = "0123456789abcdef" * 2) -> "Env":
    from amqpspec.fuzz.targets import Env
    from amqpspec.target import Target

    return Env(Target.parse("amqp://guest:guest@127.0.0.1:5672/"), "1.0", run_id=run_id, worker=worker)


def test_a_keyed_pool_is_one_per_key_and_a_view_maps_its_values() -> None:
    key = ("test", "keyed")
    p = M.pool(st.integers(0, 1000), key)
    assert M.pool(st.integers(0, 1000), key) is p        # another strategy object, the same key: the same pool
    assert M.pool(st.integers(0, 1000)) is not p
    v = M.View(p, lambda x: x + 1)
    assert [v[i] for i in range(10)] == [p[i] + 1 for i in range(10)]


def _draws(name: str, env: "Env", n: int) -> list[bytes]:
    from amqpspec.fuzz import draw, targets

    targets._load()
    d = draw.Drawer(targets.get(name, "1.0").strategy(env), 4321)
    return [d.draw()[0].octets() for _ in range(n)]


def test_slots_share_the_link_targets_pools_and_each_sees_its_own_names() -> None:
    """Each slot (and campaign) builds its strategies with names of its own; their pools are
    drawn once, with canonical names, and each slot sees them with its names -- the stimulus
    its choices give is the one the strategy gives with those names, since names take no
    choices: two slots' stimuli from one seed differ only by their name prefixes, and no
    stimulus carries the canonical names."""
    from amqpspec.fuzz import targets10

    a, b = _env(3), _env(7, run_id="fedcba9876543210" * 2)   # names of one length: octets map one to one
    before = len(M._KEYED)
    for name in ("attach", "open", "transfer", "flow-disposition"):
        one, two = _draws(name, a, 150), _draws(name, b, 150)
        pa, pb = a.name("").encode(), b.name("").encode()
        canon = targets10._canonical(a).name("").encode()
        assert [x.replace(pa, pb) for x in one] == two, name
        assert not any(canon in x for x in one + two), name
        if name == "attach":
            assert sum(pa in x for x in one) > 30   # names are drawn, and they are the slot's
    grown = len(M._KEYED)
    for worker in range(4, 8):            # more slots: no more pools
        for name in ("attach", "open", "transfer", "flow-disposition"):
            _draws(name, _env(worker), 5)
    assert len(M._KEYED) == grown and grown > before


class _Fixed(M._Kept):
    def __init__(self, values: list[object]) -> None:
        super().__init__()
        self.values = dict(enumerate(values))


def test_a_value_that_does_not_fit_is_skipped_and_the_answer_kept_per_field() -> None:
    """Whether a pool value fits a field is asked of the codec once, then kept: a refused value
    is skipped as before, a fitting one applied without encoding the frame again."""
    handle_max = [f.attr for f in spec.Begin.FIELDS].index("handle_max")
    values = _Fixed([UInt(9), 1 << 40])   # a plain int past a uint: the codec refuses it
    sh = M.Shape(spec.Begin, {"handle_max": values}, [], (1,))
    for _ in range(2):
        assert M.apply(BASE, [_packed(M.VALID, handle_max, 0)], sh).performative.handle_max == 9
        assert M.apply(BASE, [_packed(M.VALID, handle_max, 1)], sh) == BASE
    assert values.fits == {(spec.Begin, "handle_max", 0): True, (spec.Begin, "handle_max", 1): False}


def test_a_refusal_by_a_body_that_never_encodes_is_not_kept() -> None:
    """A frame whose body cannot encode at all refuses every value: that says nothing about the value."""
    handle_max = [f.attr for f in spec.Begin.FIELDS].index("handle_max")
    broken = AMQPFrame(1, BASE.performative.replace(next_outgoing_id=1 << 40))
    values = _Fixed([UInt(9)])
    sh = M.Shape(spec.Begin, {"handle_max": values}, [], (1,))
    assert M.apply(broken, [_packed(M.VALID, handle_max, 0)], sh) == broken
    assert values.fits == {}
    assert M.apply(BASE, [_packed(M.VALID, handle_max, 0)], sh).performative.handle_max == 9
