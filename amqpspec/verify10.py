"""Verifiers for AMQP 1.0 observations: the set of valid outcomes a case accepts.

Errors in 1.0 are carried by close (connection), end (session) and detach (link) with an
``error`` whose ``condition`` is a symbol such as ``amqp:invalid-field``. The verifiers
accept one of a set of conditions (any condition when none is given), like the 0-9-1 ones
accept a set of reply codes; ``AnyOf`` and ``|`` from :mod:`amqpspec.verify` combine them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from amqpspec.peer.amqp10 import Observation, error_condition
from amqpspec.verify import AnyOf, Verifier
from amqpspec.wire.amqp10 import ProtocolHeader

__all__ = ["AnyOf", "ConnectionError", "SessionError", "LinkError", "SilentClose", "AnyClose", "HeaderThenClose",
           "Replies", "StaysOpen", "conditions_text"]


def conditions_text(conditions: Iterable[str]) -> str:
    conditions = list(conditions)
    return " or ".join(conditions) if conditions else "any error condition"


class _ErrorPerformative(Verifier):
    performative = ""
    what = ""

    def __init__(self, *conditions: str, channel: int | None = None, require_error: bool = True) -> None:
        self.conditions = tuple(conditions)
        self.channel = channel
        self.require_error = require_error

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        for f in obs.performatives(self.performative, self.channel):
            cond = error_condition(f.performative)  # type: ignore[union-attr]
            if cond is None:
                if not self.require_error:
                    return True
                continue
            if not self.conditions or cond in self.conditions:
                return True
        return False

    def describe(self) -> str:
        where = f" on channel {self.channel}" if self.channel is not None else ""
        if not self.require_error and not self.conditions:
            return f"{self.performative}{where}"
        return f"{self.performative}{where} with error {conditions_text(self.conditions)}"


class ConnectionError(_ErrorPerformative):  # noqa: A001 - the spec's name for it
    """The broker closes the connection: close carrying an error with one of ``conditions``."""

    performative = "close"


class SessionError(_ErrorPerformative):
    """The broker ends the session: end carrying an error with one of ``conditions``."""

    performative = "end"


class LinkError(_ErrorPerformative):
    """The broker detaches the link: detach carrying an error with one of ``conditions``."""

    performative = "detach"


class SilentClose(Verifier):
    """The socket is closed without any further data."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return obs.closed and not obs.received and obs.framing_error is None

    def describe(self) -> str:
        return "socket closed without any further data"


class AnyClose(Verifier):
    """The connection ends: close (with or without error) or the socket closed."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return obs.close is not None or obs.closed

    def describe(self) -> str:
        return "the connection is closed (close, or the socket closed)"


@dataclass
class HeaderThenClose(Verifier):
    """A valid protocol header (of ``protocol_id`` when given), then the socket closed, nothing else."""

    protocol_id: int | None = None

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        frames = obs.frames()
        if not obs.closed or len(frames) != 1 or not isinstance(frames[0], ProtocolHeader):
            return False
        return frames[0].well_formed and (self.protocol_id is None or frames[0].protocol_id == self.protocol_id)

    def describe(self) -> str:
        which = f" (protocol id {self.protocol_id})" if self.protocol_id is not None else ""
        return f"a valid protocol header{which}, then the socket closed"


@dataclass
class Replies(Verifier):
    """The broker answers with the named performative (on ``channel`` when given), without closing."""

    name: str
    channel: int | None = None
    expects_close = False

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return bool(obs.performatives(self.name, self.channel)) and (self.name == "close" or obs.close is None)

    def describe(self) -> str:
        where = f" on channel {self.channel}" if self.channel is not None else ""
        return f"{self.name}{where}"


class StaysOpen(Verifier):
    """No error anywhere: the connection keeps serving (liveness probe answered)."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        errors = [f for f in obs.performatives() if error_condition(getattr(f, "performative", None))]
        return bool(obs.probe_ok) and obs.close is None and not errors and not obs.closed

    def describe(self) -> str:
        return "no error: the connection stays open and keeps serving requests"
