"""What the two stateful machines share: violations, their signatures, and finding records.

A *violation* is the model's verdict that the broker did something the specification text
forbids, with the clause ids that say so. It is data first (the model collects them while
frames arrive, and unit tests inspect them) and becomes an exception only at the machine's
invariant, so that hypothesis can shrink the example that produced it.

The *signature* is what makes two violations "the same finding" across examples and runs:
protocol, fuzz target, kind of violation, reply code / error condition, and the protocol
state in which it happened. The finding record follows the shared FINDINGS FORMAT (one JSON
file per signature, ``<signature_id>.json``), stored by the one writer of finding files,
:class:`amqpspec.fuzz.findings.FindingStore`, which the campaign runner uses too.
"""
from __future__ import annotations

import datetime as _dt
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from amqpspec.result import clean_record

from .findings import FindingStore, signature_id

FINDING_SCHEMA = 1
#: the violation kinds of the FINDINGS FORMAT
KINDS = ("hang", "reset-without-close", "wrong-code", "liveness", "memory", "control-loss", "invariant",
         "decode-error-by-broker")

OnFinding = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Violation:
    """The broker broke a rule of the spec; ``clauses`` are the ids of the rules it broke."""

    kind: str                    # one of KINDS
    state: str                   # protocol state / step, e.g. "after-ack-unknown-tag"
    clauses: tuple[str, ...]
    message: str                 # one line: what the spec requires, what the broker did
    code: int | None = None      # 0-9-1 reply code involved, if any
    condition: str | None = None  # 1.0 error condition involved, if any

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown violation kind {self.kind!r}")

    def signature(self, protocol: str, target: str) -> dict[str, Any]:
        return {"protocol": protocol, "target": target, "violation": self.kind, "code": self.code,
                "condition": self.condition, "state": self.state}


class ViolationError(AssertionError):
    """Raised by a machine's invariant; hypothesis shrinks the example that raised it."""

    def __init__(self, violation: Violation, evidence: dict[str, Any] | None = None) -> None:
        self.violation = violation
        self.evidence = evidence or {}
        super().__init__(f"{violation.kind} at {violation.state}: {violation.message} "
                         f"[{', '.join(violation.clauses) or 'no clause'}]")


_ERROR_TYPES: dict[str, type[ViolationError]] = {}


def error_type(sig_id: str) -> type[ViolationError]:
    """A ViolationError subclass per signature.

    Hypothesis tells bugs apart by exception type and raising line; one class per signature
    makes it shrink each distinct finding on its own instead of sliding from one to another.
    """
    cls = _ERROR_TYPES.get(sig_id)
    if cls is None:
        cls = type(f"Violation_{sig_id}", (ViolationError,), {"__module__": __name__})
        _ERROR_TYPES[sig_id] = cls
    return cls


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")


@dataclass
class FindingDraft:
    """Everything a machine knows about one occurrence, before it becomes a record."""

    violation: Violation
    transcript: list[dict[str, Any]]
    input_hex: str
    input_summary: str
    steps: list[str] = field(default_factory=list)


def finding_record(draft: FindingDraft, *, protocol: str, target: str, broker: dict[str, str], target_url: str,
                   seed: int, run_id: str, replay: str, count: int = 1, first_seen: str | None = None,
                   last_seen: str | None = None) -> dict[str, Any]:
    """A finding in the shared FINDINGS FORMAT, scrubbed of registered secrets."""
    sig = draft.violation.signature(protocol, target)
    stamp = now_iso()
    record = {
        "schema": FINDING_SCHEMA,
        "kind": "finding",
        "signature": sig,
        "signature_id": signature_id(sig),
        "broker": dict(broker),
        "target_url": target_url,
        "seed": seed,
        "first_seen": first_seen or stamp,
        "last_seen": last_seen or stamp,
        "count": count,
        "clauses": list(draft.violation.clauses),
        "input": {"hex": draft.input_hex, "summary": draft.input_summary},
        "transcript": draft.transcript,
        "replay": "",          # `amqpspec replay <file> <URL>`: set where the record is stored
        "rerun": replay,       # the stateful run that found it, same seed and budget
        "run_id": run_id,
        "message": draft.violation.message,
    }
    return clean_record(record)


def replay_command(target_url: str, protocol: str, target: str, seed: int, examples: int | None,
                   cafile: str | None = None, insecure: bool = False) -> str:
    """The command that re-runs the stateful run that found it (same seed, same budget): a finding's
    ``rerun``; its ``replay`` re-sends the recorded octets (``amqpspec replay``)."""
    args = ["amqpspec", "fuzz", target_url, "--protocol", protocol, "--target", target, "--seed", str(seed)]
    if examples is not None:
        args += ["--examples", str(examples)]
    if cafile:
        args += ["--cafile", cafile]
    if insecure:
        args.append("--insecure")
    return shlex.join(args)


def merge_into_directory(directory: str | os.PathLike[str], record: dict[str, Any]) -> Path:
    """Writes or merges a finding into ``<directory>/<signature_id>.json`` through the findings
    store (atomic, under its lock). A finding already on disk keeps its first_seen; its count
    grows, last_seen moves on, and a shorter input (a later, better shrunk example) replaces
    the stored input and transcript."""
    store = FindingStore(directory)
    stored, _ = store.record(record, shorter_input_wins=True)
    return store.path(stored["signature_id"])


def load_strategies(protocol: str) -> ModuleType:
    """The hypothesis strategies derived from the codec: the one grammar of the wire values,
    shared with the codec's round-trip tests (which import them from here, never the reverse)."""
    if protocol == "0-9-1":
        from . import strategies091 as module
    else:
        from . import strategies10 as module
    return module
