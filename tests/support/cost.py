"""The cost of a call counted in Python function calls and peak memory, not seconds.

Wall-clock bounds in unit tests fail on a loaded CI machine (a 0.5 s bound once took
0.82 s there); the number of Python calls a decoder makes is the same on every machine
and still tells a bounded decoder from one that walks 10,000 levels or 2**31 elements.
"""
from __future__ import annotations

import sys
import tracemalloc
from typing import Any, Callable

import pytest


def cost(fn: Callable[[], Any], raises: type[BaseException] | None = None) -> tuple[int, int, Any]:
    """(Python calls made, peak traced bytes, result or the exception ``raises`` names) of ``fn()``."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            calls += 1

    tracemalloc.start()
    sys.setprofile(count)
    try:
        if raises is None:
            outcome: Any = fn()
        else:
            with pytest.raises(raises) as info:
                fn()
            outcome = info.value
    finally:
        sys.setprofile(None)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return calls, peak, outcome
