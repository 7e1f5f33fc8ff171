"""reports/html/split.py: pages rendered on two processes, never depending on the child."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from amqpspec.reports.html import split

pytestmark = pytest.mark.skipif(not split._can_fork(), reason="needs fork and two CPUs")


def _writer(folder: Path, child_action=None):
    parent = os.getpid()

    def render(item: int) -> None:
        if os.getpid() != parent and child_action is not None:
            child_action()
        (folder / f"{item}.txt").write_text(str(os.getpid()))
    return render, parent


def _pids(folder: Path, n: int) -> list[int]:
    return [int((folder / f"{i}.txt").read_text()) for i in range(n)]


def test_every_page_is_rendered_half_of_them_by_a_child(tmp_path: Path) -> None:
    render, parent = _writer(tmp_path)
    n = split.MIN_PAGES + 10
    assert split.render_all(list(range(n)), render) == n
    pids = _pids(tmp_path, n)
    assert all(p == parent for p in pids[0::2])
    assert all(p != parent for p in pids[1::2])


def test_few_pages_stay_in_this_process(tmp_path: Path) -> None:
    render, parent = _writer(tmp_path)
    n = split.MIN_PAGES - 1
    assert split.render_all(list(range(n)), render) == n
    assert set(_pids(tmp_path, n)) == {parent}


def test_a_failing_child_s_pages_are_rendered_by_the_parent(tmp_path: Path) -> None:
    def fail() -> None:
        raise RuntimeError("template error in the child")
    render, parent = _writer(tmp_path, fail)
    n = split.MIN_PAGES
    assert split.render_all(list(range(n)), render) == n
    assert set(_pids(tmp_path, n)) == {parent}


def test_a_hung_child_is_stopped_and_its_pages_rendered_here(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(split, "WAIT_BASE_S", 0.5)
    monkeypatch.setattr(split, "WAIT_PER_PAGE_S", 0.0)
    render, parent = _writer(tmp_path, lambda: time.sleep(3600))
    n = split.MIN_PAGES
    started = time.monotonic()
    assert split.render_all(list(range(n)), render) == n
    assert time.monotonic() - started < 30   # bounded: the wait, a kill, the pages again
    assert set(_pids(tmp_path, n)) == {parent}


def test_an_error_in_the_parent_stops_the_child(tmp_path: Path) -> None:
    parent = os.getpid()

    def render(item: int) -> None:
        if os.getpid() == parent and item == 4:
            raise ValueError("bad page")
        if os.getpid() != parent:
            time.sleep(3600)
    with pytest.raises(ValueError):
        split.render_all(list(range(split.MIN_PAGES)), render)
