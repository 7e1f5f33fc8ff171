"""Progress of a campaign: a live line on a terminal, plain periodic lines otherwise.

Notes, findings and summaries quote the broker (reply-texts, error conditions, product names):
every line goes out through :func:`amqpspec.sanitize.safe_line`, which escapes control
characters and scrubs secrets, so a broker can neither write into the terminal nor make it
show the password.
"""
from __future__ import annotations

import time
from typing import Any, TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from amqpspec.sanitize import safe_line

from .findings import Signature

PLAIN_EVERY_S = 5.0
LIVE_EVERY_S = 0.25


def _elapsed(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Shows executions per second, unique findings and the last finding while a campaign runs;
    each new finding and each note (restarts, fuzzer notes) gets a line of its own."""

    def __init__(self, console: Console | None = None, *, live: bool | None = None, stream: TextIO | None = None) -> None:
        self.console = console or Console(highlight=False, file=stream, soft_wrap=True)
        self.live_mode = self.console.is_terminal if live is None else live
        self._live: Live | None = None
        self._last = 0.0

    def start(self, header: str) -> None:
        self.console.print(header, markup=False, highlight=False)
        if self.live_mode:
            self._live = Live(Text("starting..."), console=self.console, refresh_per_second=4, transient=True)
            self._live.start()

    def line(self, stats: Any) -> str:
        dt = time.monotonic() - stats.started
        found = len(stats.findings)
        new = len(stats.new)
        last = f"  last: {stats.last}" if stats.last else ""
        return safe_line(f"{_elapsed(dt)}  {stats.execs} execs ({stats.rate():.1f}/s)  findings: {found} unique"
                         f" ({new} new){last}")

    def __call__(self, kind: str, stats: Any, data: Any) -> None:
        if kind == "finding":
            record, new = data
            sig = Signature(**record["signature"])
            mark = "NEW" if new else "again"
            self._print(f"  {mark} finding {record['signature_id']}: {sig.describe()}  "
                        f"[{', '.join(record['clauses']) or 'robustness'}]")
        elif kind == "note":
            self._print(f"  note: {data}")
        now = time.monotonic()
        if self._live is not None:
            if now - self._last >= LIVE_EVERY_S:
                self._last = now
                self._live.update(Text(self.line(stats)))
        elif now - self._last >= PLAIN_EVERY_S:
            self._last = now
            self.console.print(self.line(stats), markup=False, highlight=False)

    def _print(self, text: str) -> None:
        text = safe_line(text)
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False)
        else:
            self.console.print(text, markup=False, highlight=False)

    def finish(self, stats: Any, summary: list[str]) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        self.console.print(self.line(stats), markup=False, highlight=False)
        for text in summary:
            self.console.print(safe_line(text), markup=False, highlight=False)
