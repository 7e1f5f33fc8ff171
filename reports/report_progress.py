"""How ``amqpspec report`` shows its stages: a rich spinner on a terminal, plain lines otherwise.

On a terminal the current stage spins with its label (and the latest step inside it, such as
the HTML page being written) and each finished stage stays as one line with its time. Piped
(CI logs, ``bench/report_time.py``), each finished stage is one ``stage: LABEL: 1.23s`` line
and nothing is redrawn. Both go to stderr: stdout keeps the summary a script may read.
"""
from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape


class StageDisplay:
    """A ``progress.StageListener`` for the CLI, plus ``note`` for the lines said along the way."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True, highlight=False)
        self.live = self.console.is_terminal and not self.console.is_dumb_terminal
        self._status: Any = None
        self._label = ""

    def started(self, label: str) -> None:
        self._label = label
        if self.live:
            self._status = self.console.status(f"{escape(label)} ...")
            self._status.start()

    def finished(self, label: str, seconds: float) -> None:
        self._stop()
        if self.live:
            self.console.print(f"[green]✓[/] {escape(label)} [dim]{seconds:.1f}s[/]")
        else:
            self.console.print(f"stage: {label}: {seconds:.2f}s", markup=False, soft_wrap=True)

    def note(self, text: str) -> None:
        """A line from inside a stage (what is being read, the page being written)."""
        if self._status is not None:
            self._status.update(f"{escape(self._label)}: {escape(text)}")
        else:
            self.console.print(text, markup=False, soft_wrap=True)

    def close(self) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None
