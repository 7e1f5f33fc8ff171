"""The hostile-broker generators (fuzz --as-server): seeded, and every frame either decodes with
our own codec or is labelled with what is wrong with it; every required reaction cites clauses
of the catalog."""
from __future__ import annotations

import pytest

from amqpspec import clauses
from amqpspec.fuzz import server_strategies091 as s091
from amqpspec.fuzz import server_strategies10 as s10
from amqpspec.fuzz.draw import Drawer
from amqpspec.fuzz.server_example import Expect, placed
from amqpspec.wire.amqp091 import FrameReader as Reader091
from amqpspec.wire.amqp091 import SPEC
from amqpspec.wire.amqp091.frames import MalformedFrame as Malformed091
from amqpspec.wire.amqp091.frames import RawFrame as Raw091
from amqpspec.wire.amqp10 import AMQPFrame
from amqpspec.wire.amqp10 import FrameReader as Reader10

N = 120
_CACHE: dict[tuple[str, int], list] = {}  # type: ignore[type-arg]
WHERE = s10.Where(channel=0, remote_channel=3, handle=2, delivery_id=5, client_max_frame=65536, client_channel_max=100)


def _draw(gen, seed: int, n: int) -> list:  # type: ignore[no-untyped-def]
    """Drawn once per module run: drawing 0-9-1 tables and methods costs tens of ms each."""
    key = (gen.PROTOCOL, seed)
    if len(_CACHE.get(key, ())) < n:
        d = Drawer(gen.examples(), seed)
        _CACHE[key] = [d.draw()[0] for _ in range(n)]
    return _CACHE[key][:n]


def _fresh(gen, seed: int, n: int) -> list:  # type: ignore[no-untyped-def]
    d = Drawer(gen.examples(), seed)
    return [d.draw()[0] for _ in range(n)]


def _octets091(example) -> list[bytes]:  # type: ignore[no-untyped-def]
    return [placed(i.frame, 1, "ctag-1").encode() for i in example.items]


def _octets10(example) -> list[bytes]:  # type: ignore[no-untyped-def]
    return [data for i in example.items for data, _ in s10.build(i.frame, WHERE)]


@pytest.mark.parametrize("gen,octets", [(s091, _octets091), (s10, _octets10)], ids=["0-9-1", "1.0"])
def test_same_seed_same_examples(gen, octets) -> None:  # type: ignore[no-untyped-def]
    a, b = _draw(gen, 11, 40), [d for d in _fresh(gen, 11, 40)]
    assert [e.describe() for e in a] == [e.describe() for e in b]
    assert [octets(e) for e in a] == [octets(e) for e in b]
    c = _draw(gen, 12, 40)
    assert [octets(e) for e in a] != [octets(e) for e in c]


def _decodes091(data: bytes) -> bool:
    r = Reader091(16 << 20, SPEC, False)
    r.feed(data)
    try:
        item = r.next()
    except Exception:  # noqa: BLE001 - any refusal of the decoder is "does not decode"
        return False
    return item is not None and not isinstance(item, (Malformed091, Raw091)) and not r.pending


def _decodes10(data: bytes) -> bool:
    r = Reader10(16 << 20, False)
    r.feed(data)
    try:
        item = r.next()
    except Exception:  # noqa: BLE001
        return False
    return isinstance(item, AMQPFrame) and item.performative is not None and not r.pending


def test_091_frames_decode_or_are_labelled() -> None:
    kinds = set()
    for ex in _draw(s091, 3, N):
        kinds.add(ex.kind)
        assert ex.workload in s091.POINTS[ex.point], ex.describe()
        for item in ex.items:
            data = placed(item.frame, 1, "ctag-1").encode()
            if item.malformed is None:
                assert _decodes091(data), f"unlabelled frame does not decode: {ex.describe()} {item.frame}"
            else:
                assert isinstance(item.malformed, str) and item.malformed
    assert kinds == set(s091.KINDS)


def test_10_frames_decode_or_are_labelled() -> None:
    kinds = set()
    for ex in _draw(s10, 3, N):
        kinds.add(ex.kind)
        assert ex.workload in s10.POINTS[ex.point], ex.describe()
        for item in ex.items:
            for data, summary in s10.build(item.frame, WHERE):
                if item.malformed is None:
                    assert _decodes10(data), f"unlabelled frame does not decode: {ex.describe()} {summary}"
    assert kinds == set(s10.KINDS)


def test_malformed_labels_mean_something() -> None:
    """A labelled bad frame-end really has another end octet; a labelled bad type, another type."""
    for ex in _draw(s091, 3, N):
        for item in ex.items:
            data = placed(item.frame, 1, "ctag-1").encode()
            if ex.kind == "bad-frame-end":
                assert data[-1] != 0xCE
            if ex.kind == "bad-frame-type":
                assert data[0] not in (1, 2, 3, 8)


@pytest.mark.parametrize("gen", [s091, s10], ids=["0-9-1", "1.0"])
def test_required_reactions_cite_known_clauses(gen) -> None:  # type: ignore[no-untyped-def]
    seen = 0
    for ex in _draw(gen, 3, N):
        if ex.expect is None:
            continue
        seen += 1
        assert ex.expect.clauses
        for cid in ex.expect.clauses:
            assert clauses.get(cid).id == cid
        assert Expect.from_json(ex.expect.to_json()) == ex.expect
    assert seen > 20


def test_oversize_really_oversizes() -> None:
    small = s10.Where(client_max_frame=1000)
    ex = next(e for e in _draw(s10, 3, N) if e.kind == "oversized-frame")
    (data, _), = s10.build(ex.items[0].frame, small)
    assert len(data) > 1000
