"""Verifiers: reusable checks that accept a *set* of valid outcomes.

The spec often allows more than one correct reaction, and sometimes two sentences of
it name different reply codes for the same situation (e.g. 501 in 4.2.7 and 503 in
4.2.3 for a heartbeat on a non-zero channel). A verifier states exactly which outcomes
pass, so a case reads like the clause it checks, and its description becomes the
"expected" line of the evidence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from amqpspec.peer.amqp091 import Observation
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader, spec


def code_name(code: int) -> str:
    name = spec.REPLY_CODES.get(code, ("",))[0]
    return f"{code} ({name})" if name else str(code)


def codes_text(codes: Iterable[int]) -> str:
    codes = list(codes)
    return " or ".join(code_name(c) for c in codes) if codes else "any reply code"


class Verifier:
    """An acceptable outcome. ``codes`` are the reply codes it involves (close verdict)."""

    codes: tuple[int, ...] = ()
    expects_close: bool = True

    def accepts(self, obs: Observation) -> bool:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def __or__(self, other: "Verifier") -> "AnyOf":
        return AnyOf(self, other)


@dataclass
class ConnectionException(Verifier):
    """The broker signals a connection exception: connection.close with one of ``codes``."""

    codes: tuple[int, ...] = ()

    def __init__(self, *codes: int) -> None:
        self.codes = tuple(codes)

    def accepts(self, obs: Observation) -> bool:
        close = obs.connection_close
        return close is not None and (not self.codes or close.reply_code in self.codes)

    def describe(self) -> str:
        return f"connection.close with reply-code {codes_text(self.codes)}"


@dataclass
class ChannelException(Verifier):
    """The broker closes the channel with channel.close carrying one of ``codes``."""

    codes: tuple[int, ...] = ()
    channel: int | None = None

    def __init__(self, *codes: int, channel: int | None = None) -> None:
        self.codes = tuple(codes)
        self.channel = channel

    def accepts(self, obs: Observation) -> bool:
        close = obs.channel_close(self.channel)
        return close is not None and (not self.codes or close.reply_code in self.codes)

    def describe(self) -> str:
        where = f" on channel {self.channel}" if self.channel is not None else ""
        return f"channel.close{where} with reply-code {codes_text(self.codes)}"


class SilentClose(Verifier):
    """The socket is closed without any further data (no close method, no frame at all)."""

    def accepts(self, obs: Observation) -> bool:
        return obs.closed and not obs.received and obs.framing_error is None

    def describe(self) -> str:
        return "socket closed without any further data"


class AnyClose(Verifier):
    """The connection ends: connection.close (any code) or the socket closed."""

    def accepts(self, obs: Observation) -> bool:
        return obs.connection_close is not None or obs.closed

    def describe(self) -> str:
        return "the connection is closed (connection.close or socket close)"


@dataclass
class HeaderThenClose(Verifier):
    """A valid protocol header, then the socket closed (spec 4.2.2), nothing else.

    ``at_most`` (protocol-id, major, minor, revision) additionally requires the version
    offered to be lower than or equal to the one requested (connection.start server-support).
    """

    at_most: tuple[int, int, int, int] | None = None

    def accepts(self, obs: Observation) -> bool:
        frames = obs.frames()
        if not obs.closed or len(frames) != 1 or not isinstance(frames[0], ProtocolHeader):
            return False
        header = frames[0]
        if not header.well_formed:
            return False
        return self.at_most is None or tuple(header.version or ()) <= self.at_most

    def describe(self) -> str:
        limit = f" for a version <= {'-'.join(map(str, self.at_most))}" if self.at_most else ""
        return f"a valid protocol header{limit}, then the socket closed"


@dataclass
class Replies(Verifier):
    """The broker answers with the named method (on ``channel`` when given)."""

    method: str
    channel: int | None = None
    expects_close = False

    def accepts(self, obs: Observation) -> bool:
        return bool(obs.methods(self.method, self.channel)) and obs.connection_close is None

    def describe(self) -> str:
        where = f" on channel {self.channel}" if self.channel is not None else ""
        return f"{self.method}{where}"


class StaysOpen(Verifier):
    """No exception: the connection keeps serving requests (liveness probe answered)."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:
        return bool(obs.probe_ok) and obs.connection_close is None and obs.channel_close() is None and not obs.closed

    def describe(self) -> str:
        return "no exception: the connection stays open and keeps serving requests"


@dataclass
class AnyOf(Verifier):
    options: tuple[Verifier, ...]

    def __init__(self, *options: Verifier) -> None:
        self.options = tuple(options)
        self.codes = tuple(c for o in options for c in o.codes)
        self.expects_close = any(o.expects_close for o in options)

    def accepts(self, obs: Observation) -> bool:
        return any(o.accepts(obs) for o in self.options)

    def describe(self) -> str:
        return " or ".join(o.describe() for o in self.options)

    def __or__(self, other: Verifier) -> "AnyOf":
        return AnyOf(*self.options, other)


def first_method(obs: Observation) -> MethodFrame | None:
    methods = obs.methods()
    return methods[0] if methods else None
