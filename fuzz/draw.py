"""Drawing stimuli fast from a hypothesis strategy, and shrinking one of them with hypothesis.

Running every example through ``@given`` costs some 1-2 ms of engine work per example (the
example tree, the database, health checks) -- more than a whole AMQP handshake against a local
broker. So generation draws each stimulus straight from the strategy on a fresh choice
sequence seeded from the batch seed (the same primitives hypothesis' own generation uses), and
keeps that example's choices. Only when an example shows a new signature does hypothesis run:
its reuse phase replays the recorded choices (served by :class:`SeededDatabase`) and its shrink
phase shrinks them, exactly as if ``@given`` had found the example itself.

This uses two internals of hypothesis (``ConjectureData`` and ``BuildContext``), checked once
by :func:`available`; where they changed, the campaign falls back to ``@given`` generation.
"""
from __future__ import annotations

import random
from typing import Any

from hypothesis.database import InMemoryExampleDatabase

MAX_CHOICES = 20_000     # one stimulus never needs more; overruns are redrawn
REDRAWS = 50             # consecutive invalid draws (filters, overruns) before giving up


class DrawFailed(Exception):
    """The strategy gave no valid stimulus in REDRAWS attempts (a defect of the target)."""


def _internals() -> tuple[Any, Any, Any] | None:
    try:
        from hypothesis.control import BuildContext
        from hypothesis.database import choices_to_bytes
        from hypothesis.internal.conjecture.data import ConjectureData
    except ImportError:
        return None
    return ConjectureData, BuildContext, choices_to_bytes


def available() -> bool:
    """Whether direct drawing works with the installed hypothesis (one trial draw)."""
    try:
        from hypothesis import strategies as st

        Drawer(st.integers(0, 3), 0).draw()
        return True
    except Exception:  # noqa: BLE001 - any change of the internals: use @given instead
        return False


class Drawer:
    """Seeded stream of (value, choices) from one strategy."""

    def __init__(self, strategy: Any, seed: int) -> None:
        parts = _internals()
        if parts is None:
            raise DrawFailed("this hypothesis version has no ConjectureData/BuildContext")
        self._data_cls, self._context, self._to_bytes = parts
        self.strategy = strategy
        self.random = random.Random(seed)

    def draw(self) -> tuple[Any, bytes]:
        """The next value and its choice sequence (as hypothesis' database stores it)."""
        from hypothesis.errors import StopTest

        for _ in range(REDRAWS):
            data = self._data_cls(random=self.random, max_choices=MAX_CHOICES)
            try:
                with self._context(data, is_final=False, wrapped_test=_noop):
                    value = data.draw(self.strategy)
            except StopTest:  # overrun or a filter that found nothing: draw again
                continue
            return value, self._to_bytes(tuple(data.choices))
        raise DrawFailed(f"no valid example in {REDRAWS} draws")


def _noop() -> None:
    return None


class SeededDatabase(InMemoryExampleDatabase):
    """An in-memory example database whose every secondary corpus starts with one recorded
    example, so a ``@given`` test with ``Phase.reuse`` replays it and then shrinks it (an
    example of the primary corpus would be taken as already shrunk)."""

    def __init__(self, choices: bytes) -> None:
        super().__init__()
        self._choices = choices
        self._seeded: set[bytes] = set()

    def fetch(self, key: bytes) -> Any:
        if key.endswith(b".secondary") and key not in self._seeded:
            self._seeded.add(key)
            self.save(key, self._choices)
        return super().fetch(key)


__all__ = ["Drawer", "DrawFailed", "SeededDatabase", "available"]
