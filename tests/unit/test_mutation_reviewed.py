"""bench/mutation/reviewed.py names cases of the catalog: a renamed or removed case must not leave a
reading behind that no list can show."""
from __future__ import annotations

from amqpspec.case import discover
from bench.mutation.reviewed import REVIEWED


def test_every_reviewed_case_exists() -> None:
    known = {c.id for protocol in ("0-9-1", "1.0") for c in discover(protocol)}
    assert sorted(set(REVIEWED) - known) == []
    assert all(text.startswith("right: ") for text in REVIEWED.values())
