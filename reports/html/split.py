"""Rendering many similar pages on two cores: a forked child takes every other page.

Why: the case pages (one per case, hundreds per run) are most of the HTML report's time, all
of it Python holding the GIL; by the time they are rendered the JVM is idle, so a second
process is the only way to use the second core. The child is a fork: it shares the parent's
compiled templates and data without pickling anything.

Safety: a fork of a process with threads (the JVM gateway, the record prefetch, the pcap
worker's handlers) can inherit a lock held by a thread the child does not have. The parent
therefore waits a bounded time; a child that is late, fails or is killed is stopped and its
pages rendered again by the parent, whole (a page is written in one call, so a page the child
left half-written is replaced). The report never depends on the child.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
from typing import Callable, Sequence, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

MIN_PAGES = 40            # below this a fork costs more than it saves
WAIT_BASE_S = 30.0        # how long the parent waits for the child beyond its own half
WAIT_PER_PAGE_S = 0.25


def _can_fork() -> bool:
    return (os.cpu_count() or 1) > 1 and "fork" in multiprocessing.get_all_start_methods()


def render_all(items: Sequence[T], render: Callable[[T], None]) -> int:
    """Calls ``render`` once for every item, half of them in a forked child when that helps;
    returns how many items were rendered (all of them, unless ``render`` raises in the parent)."""
    if len(items) < MIN_PAGES or not _can_fork():
        for item in items:
            render(item)
        return len(items)
    mine, theirs = list(items[0::2]), list(items[1::2])
    child = _start(theirs, render)
    if child is None:
        mine = list(items)
        theirs = []
    try:
        for item in mine:
            render(item)
    except BaseException:
        if child is not None:
            _stop(child)
        raise
    if child is not None:
        child.join(WAIT_BASE_S + WAIT_PER_PAGE_S * len(theirs))
        if child.exitcode != 0:
            why = "did not finish in time" if child.exitcode is None else f"exited with {child.exitcode}"
            log.warning("page renderer child %s: its %d pages are rendered here", why, len(theirs))
            _stop(child)
            for item in theirs:
                render(item)
    return len(items)


def _start(items: list[T], render: Callable[[T], None]) -> "multiprocessing.process.BaseProcess | None":
    try:
        process = multiprocessing.get_context("fork").Process(
            target=_child, args=(items, render), name="amqpspec-pages", daemon=True)
        process.start()
        return process
    except (OSError, ValueError) as exc:   # no fork here after all, or no memory for one
        log.warning("pages rendered in one process: cannot fork: %s", exc)
        return None


def _child(items: list[T], render: Callable[[T], None]) -> None:
    code = 0
    try:
        for item in items:
            render(item)
    except BaseException:   # any failure: the parent renders these pages itself
        code = 1
    # no interpreter shutdown in a fork: atexit handlers and buffered streams are the parent's
    os._exit(code)


def _stop(process: "multiprocessing.process.BaseProcess") -> None:
    if process.is_alive():
        process.kill()
    process.join(5)
