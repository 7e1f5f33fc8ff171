"""What the spec lets a broker do with one stimulus, and the verifiers that say it.

An :class:`Expectation` is computed from the octets actually sent (``expect091`` and
``expect10`` read them the way a correct receiver must), never from what a strategy meant to
generate: a size that was meant to lie but happens to be right is judged as right. Its
``verifier`` accepts every reaction the spec allows, built from the suite's verifiers
(:mod:`amqpspec.verify`, :mod:`amqpspec.verify10`) plus the few fuzz-specific ones below.

``strict`` says whether a MUST of the spec decides the outcome. When the spec only suggests a
reaction (a reply code's meaning, a "should"), or when the stimulus leaves the broker with
choices we cannot follow, the expectation is not strict: any reaction passes, and only the
robustness oracles (hang, liveness, memory, control pair, undecodable output) apply.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amqpspec.verify import AnyOf, Verifier


def close_method(obs: Any) -> Any:
    """The connection-level close the broker sent (0-9-1 connection.close, 1.0 close), or None."""
    if hasattr(obs, "connection_close"):
        return obs.connection_close
    return obs.close


def close_code(obs: Any) -> tuple[int | None, str | None]:
    """(reply code, error condition) of the most important close/exception in an observation."""
    if hasattr(obs, "connection_close"):
        close = obs.connection_close or obs.channel_close()
        return (int(close.reply_code) if close is not None else None), None
    from amqpspec.peer.amqp10 import error_condition

    for name in ("close", "end", "detach"):
        found = obs.performatives(name)
        if found:
            return None, error_condition(found[0].performative)
    return None, None


class Anything(Verifier):
    """Whatever the broker does (robustness oracles only)."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        return True

    def describe(self) -> str:
        return "any reaction, or none (the spec names no reaction here)"


class Reacts(Verifier):
    """Any reaction at all: the connection closes (with or without a close method), or the
    broker answers what was sent after the stimulus. Only silence is refused."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        return bool(obs.closed or close_method(obs) is not None or obs.probe_ok)

    def describe(self) -> str:
        return "any reaction: a close, an exception, or an answer (the spec names none here)"


class NoCloseMethod(Verifier):
    """The socket closes without a connection-level close method; answers to frames sent
    before the faulty one may come first (when nothing came at all, SilentClose applies)."""

    def accepts(self, obs: Any) -> bool:
        return obs.closed and close_method(obs) is None and obs.framing_error is None

    def describe(self) -> str:
        return "the socket closed without a close method"


class GoesOn(Verifier):
    """No connection-level reaction: the broker keeps serving (what was sent after answered)."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        return bool(obs.probe_ok) and close_method(obs) is None and not obs.closed

    def describe(self) -> str:
        return "the broker goes on (no close; what follows is answered)"


class Waits(Verifier):
    """Nothing happens yet: the broker waits (for the rest of a frame, or pauses before
    closing a negotiation, spec 0-9-1 4.10.2)."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        return not obs.closed and close_method(obs) is None and not obs.frames()

    def describe(self) -> str:
        return "nothing yet (the broker may wait)"


@dataclass
class Expectation:
    """The allowed reactions to one stimulus and why."""

    verifier: Verifier
    clauses: tuple[str, ...] = ()
    state: str = ""
    why: str = ""
    strict: bool = True
    may_wait: bool = False               # silence until the deadline is allowed (not a hang)
    wants_close_method: bool = False     # a bare socket close is not enough (reset-without-close)
    awaits: tuple[tuple[str, int], ...] = ()   # (reply name, channel) that end the observation early
    silent_required: bool = False        # any frame from the broker decides (a violation)
    foreign: bool = False                # the broker may answer in another protocol
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return self.verifier.describe()


def anything(state: str, why: str, *, may_wait: bool = True, awaits: tuple[tuple[str, int], ...] = ()) -> Expectation:
    """A non-strict expectation: only the robustness oracles judge it."""
    return Expectation(Anything() if may_wait else Reacts(), (), state, why, strict=False, may_wait=may_wait,
                       awaits=awaits)


def either(*options: Verifier) -> Verifier:
    return options[0] if len(options) == 1 else AnyOf(*options)
