"""Fuzz targets by name: where each starts, what it sends, and how an example is judged.

A target is three things: the state a fresh connection is brought to before the stimulus
(``start``: a step of the opening handshake, an open channel or session, an attached link),
a hypothesis strategy for the stimulus (built from ``strategies091``/``strategies10`` and what
the broker announced), and -- shared by all targets of a protocol -- the spec-derived
expectation of the octets actually sent (``expect091``/``expect10``). Running an example
gives an :class:`Example`: the expectation, what the broker did, the oracle's verdict and the
two-way transcript.

The target definitions live in ``targets091`` and ``targets10``; importing this module
registers them all. Replaying a finding (:func:`replay`) goes through the same code path: the
target's start state, then the recorded input octets.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis.strategies import SearchStrategy

from amqpspec.errors import UsageError
from amqpspec.target import BrokerInfo, Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import RABBITMQ, SPEC, Dialect

from .expectation import Expectation
from .oracles import Verdict, classify
from .stimulus import Stimulus, split_recorded

PROTOCOLS = ("0-9-1", "1.0")
_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*$")  # dots: protocol versions (stateful-1.0)


@dataclass
class Env:
    """What the strategies and runs of a campaign know: the broker and our own choices."""

    target: Target
    protocol: str
    broker: BrokerInfo = field(default_factory=BrokerInfo)
    run_id: str = "0" * 32
    worker: int = 0
    window: float = 2.0                    # deadline of one reaction (longer silence: a hang)
    seeds: tuple[str, ...] = ()            # --seeds: recorded sessions for the ``seeded`` target
    #: silence this long makes a provisional hang (``obs.quick``), confirmed with ``window`` on a
    #: fresh connection unless already known (campaign generation only; None: ``window`` always)
    hang_window: float | None = None

    @property
    def dialect(self) -> Dialect:
        """How field tables are written: RabbitMQ's reading for RabbitMQ, the spec's otherwise."""
        return RABBITMQ if "rabbitmq" in self.broker.product.lower() else SPEC

    @property
    def credentials_length(self) -> int:
        return 2 + len(self.target.username.encode()) + len(self.target.password.reveal().encode())

    def name(self, kind: str) -> str:
        """A node name of this campaign and worker: never anyone else's queue or exchange."""
        return f"amqpspec-fuzz-{self.run_id[:8]}-{self.worker}-{kind}"


@dataclass
class Example:
    """One example's evidence and verdict."""

    target: str
    stimulus: Stimulus
    octets: bytes                     # the input as recorded (credentials masked)
    expectation: Expectation
    observation: Any
    verdict: Verdict
    transcript: Transcript
    cleanup: list[tuple[str, str]] = field(default_factory=list)

    @property
    def state(self) -> str:
        return self.expectation.state


Runner = Callable[[Env, Stimulus, Transcript], tuple[Expectation, Any, bytes, list[tuple[str, str]]]]


@dataclass(frozen=True)
class FuzzTarget:
    name: str
    protocol: str
    start: str
    description: str
    build: Callable[[Env], SearchStrategy[Stimulus]]
    runner: Runner
    needs: Callable[[Env], str] = lambda env: ""   # why the broker cannot take this target ('' = it can)

    def strategy(self, env: Env) -> SearchStrategy[Stimulus]:
        return self.build(env)

    def run(self, env: Env, stimulus: Stimulus, transcript: Transcript | None = None) -> Example:
        """One example on a fresh connection (raises ``SetupFailed`` when the start state is not reached)."""
        transcript = transcript or Transcript()
        exp, obs, octets, cleanup = self.runner(env, stimulus, transcript)
        return Example(self.name, stimulus, octets, exp, obs, classify(exp, obs, self.protocol), transcript, cleanup)


#: (protocol, name) -> target: both protocols have a protocol-header, a frame-header ...
REGISTRY: dict[tuple[str, str], FuzzTarget] = {}


def register(target: FuzzTarget) -> FuzzTarget:
    if not _NAME_RE.match(target.name):
        raise ValueError(f"bad fuzz target name {target.name!r}")
    key = (target.protocol, target.name)
    if key in REGISTRY and REGISTRY[key] is not target:
        raise ValueError(f"fuzz target {target.name} registered twice for AMQP {target.protocol}")
    REGISTRY[key] = target
    return target


def _load() -> None:
    from . import targets091, targets10, targets_seeded, targets_stateful, template091  # noqa: F401 - registration


def for_protocol(protocol: str) -> list[FuzzTarget]:
    _load()
    return [t for t in REGISTRY.values() if t.protocol == protocol]


def get(name: str, protocol: str | None = None) -> FuzzTarget:
    _load()
    found = [t for (p, n), t in REGISTRY.items() if n == name and (protocol is None or p == protocol)]
    t = found[0] if found else None
    if t is None:
        known = ", ".join(x.name for x in REGISTRY.values() if protocol is None or x.protocol == protocol)
        raise UsageError(f"unknown fuzz target {name!r}{f' for AMQP {protocol}' if protocol else ''}; known: {known}")
    return t


def select(protocol: str, names: tuple[str, ...] | list[str]) -> list[FuzzTarget]:
    """The named targets (all of the protocol when none is named), in registry order."""
    if not names:
        return for_protocol(protocol)
    chosen = [get(n, protocol) for n in dict.fromkeys(names)]
    return chosen


# ---------------------------------------------------------------------------- replay

def recorded_stimulus(protocol: str, target_name: str, data: bytes) -> Stimulus:
    """The recorded input as a stimulus that sends exactly those octets, frame by frame."""
    start = get(target_name, protocol).start
    return Stimulus(protocol, tuple(split_recorded(protocol, data, header_first=start == "fresh")))


def replay(finding: dict[str, Any], target: Target, *, window: float = 2.0, broker: BrokerInfo | None = None) -> Example:
    """Runs a finding's input again against ``target`` and judges it like the campaign did.

    The connection is brought to the finding's target's start state, then the recorded input
    octets are sent -- where they hold the masked SASL response (asterisks of its length), the
    target's real one goes on the wire and the transcript keeps the asterisks -- and the
    reaction is judged against the same expectation. Liveness and memory are the caller's to
    check afterwards."""
    sig = finding["signature"]
    protocol, name = sig["protocol"], sig["target"]
    t = get(name, protocol)
    data = bytes.fromhex(finding["input"]["hex"])
    env = Env(target, protocol, broker or BrokerInfo(), window=window)
    stimulus = recorded_stimulus(protocol, name, data)
    example = t.run(env, stimulus)
    example.octets = data
    return example


__all__ = ["Env", "Example", "FuzzTarget", "REGISTRY", "register", "for_protocol", "get", "select", "replay",
           "recorded_stimulus", "PROTOCOLS"]
