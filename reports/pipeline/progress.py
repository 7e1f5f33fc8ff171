"""The pipeline's stages as a user sees them: a label when one starts, its time when it ends.

The job names its stages and times them here (``JobResult.timings`` comes from this); how they
are shown is the caller's: ``amqpspec report`` draws them with rich on a terminal and prints
one ``stage: LABEL: 1.23s`` line each otherwise (CI logs, ``bench/report_time.py``).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator, Protocol


class StageListener(Protocol):
    def started(self, label: str) -> None: ...

    def finished(self, label: str, seconds: float) -> None: ...


class Stages:
    """Times named stages; ``timings`` maps each stage's key to its seconds (rounded to 10 ms)."""

    def __init__(self, listener: StageListener | None = None) -> None:
        self.listener = listener
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, key: str, label: str) -> Iterator[None]:
        if self.listener is not None:
            self.listener.started(label)
        t0 = time.monotonic()
        yield   # an exception propagates: the stage did not finish, nothing is shown for it
        seconds = time.monotonic() - t0
        self.timings[key] = round(self.timings.get(key, 0.0) + seconds, 2)
        if self.listener is not None:
            self.listener.finished(label, seconds)
