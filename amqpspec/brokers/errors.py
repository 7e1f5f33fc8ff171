"""Exceptions of amqpspec.brokers, in their own module so every helper can raise them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


class BrokerError(RuntimeError):
    """A broker could not be installed, started, stopped or queried.

    The message is meant for a human at a terminal: it says what failed and what to do.
    """


class BrokerStartError(BrokerError):
    """A broker did not become ready; the message ends with the tail of its log."""

    def __init__(self, message: str, log_files: Sequence[Path] = ()) -> None:
        self.log_files = tuple(log_files)
        super().__init__(message)
