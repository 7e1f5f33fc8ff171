"""The AMQP 1.0 half of the hostile-broker oracle: the reaction a clause requires, judged on
what the client sent after the hostile frames (see :mod:`fuzz.server_oracles` for the order of
the oracles and :mod:`fuzz.server_strategies10` for the clauses)."""
from __future__ import annotations

from typing import Any

from amqpspec.peer.amqp10 import Observation, error_condition
from amqpspec.verify import Verifier
from amqpspec.verify10 import ConnectionError

from .oracles import Verdict
from .server_example import Expect


class EndOrClose(Verifier):
    """end carrying one of ``conditions``, or a close carrying it (the client ended everything)."""

    def __init__(self, *conditions: str) -> None:
        self.conditions = conditions

    def accepts(self, obs: Any) -> bool:
        return any(error_condition(f.performative) in self.conditions
                   for f in obs.performatives("end") + obs.performatives("close"))

    def describe(self) -> str:
        return f"end (or close) with error {' or '.join(self.conditions)}"


class AnswersWith(Verifier):
    """The client writes ``name`` (with or without an error)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def accepts(self, obs: Any) -> bool:
        return bool(obs.performatives(self.name))

    def describe(self) -> str:
        return f"a {self.name} from the client"


def verifier_10(expect: Expect) -> Verifier:
    if expect.kind == "close-condition" and expect.scope == "end":
        return EndOrClose(*expect.conditions)
    if expect.kind == "close-condition":
        return ConnectionError(*expect.conditions)
    if expect.kind == "answers":
        return AnswersWith(expect.scope or "close")
    raise ValueError(f"no 1.0 verifier for {expect.kind!r}")


def reaction_10(obs: Observation) -> str:
    """A coarse name of what the client did, for the signature."""
    for name in ("close", "end", "detach"):
        found = obs.performatives(name)
        if found:
            cond = error_condition(found[0].performative)
            return f"{name} {cond}" if cond else f"{name} without error"
    if obs.framing_error:
        return "undecodable"
    if obs.closed:
        return "socket closed after other frames" if obs.frames() else "socket closed"
    return "carried on" if obs.frames() else "silent, connection open"


def judge10(run: Any, expect: Expect) -> Verdict:
    verifier = verifier_10(expect)
    if verifier.accepts(run.after):
        return Verdict(None)
    observed = run.after.describe().replace("by broker", "by the client")
    return Verdict("wrong-code", condition=reaction_10(run.after), clauses=tuple(expect.clauses),
                   reason=f"after {expect.why}: expected {verifier.describe()}; observed {observed}")


def observation10(received: list[Any], end: str, framing_error: str | None) -> Observation:
    return Observation(received=received, end=end, framing_error=framing_error)


__all__ = ["judge10", "verifier_10", "reaction_10", "observation10", "EndOrClose", "AnswersWith"]
