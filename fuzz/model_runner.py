"""Runs a stateful machine against a broker within a budget, and turns failures into findings.

Hypothesis stops generating once an example fails and then shrinks it. A campaign wants
more than the first bug, so the run goes in *rounds*: each round is one hypothesis run
(seeded from the campaign seed and the round number) of at most ``CHUNK`` examples; the
signatures it reports become *known*, and in later rounds a known violation ends its example
quietly (it is counted, not shrunk again), so hypothesis keeps looking for new ones.
Every loop is bounded: by the number of examples and by the wall-clock budget; once the
budget is spent, examples do nothing, so a shrink in progress ends at once.

``on_finding`` receives each record of the shared FINDINGS FORMAT as soon as it is known
(a killed campaign keeps what it found), and at the end of the run once more for every
signature seen again since; ``count`` in a record is the number of new hits since the
previous record of the same signature, so a consumer merges by adding (see
:func:`amqpspec.fuzz.model.merge_into_directory`).
"""
from __future__ import annotations

import collections
import hashlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from hypothesis import HealthCheck, Phase, Verbosity, seed as hypothesis_seed, settings
from hypothesis.stateful import run_state_machine_as_test

from amqpspec import brokerops
from amqpspec.errors import UsageError
from amqpspec.target import Target

from .model import FindingDraft, OnFinding, ViolationError, finding_record, merge_into_directory, now_iso, \
    replay_command, signature_id

CHUNK = 50                  # examples per hypothesis run (round)
DEFAULT_STEPS = 25          # rules per example
LIVENESS_TIMEOUT = 3.0
PROTOCOLS = ("0-9-1", "1.0")
TARGET_NAMES = {"0-9-1": "stateful-0-9-1", "1.0": "stateful-1.0"}


@dataclass
class RunConfig:
    """One stateful run: where, how long, and what was seen so far (shared by all examples)."""

    target: Target
    protocol: str
    target_name: str
    seed: int
    run_id: str
    examples: int | None = None
    duration: float | None = None
    steps: int = DEFAULT_STEPS
    reply_timeout: float = 5.0
    fuzz_properties: bool = True
    started: float = field(default_factory=time.monotonic)
    examples_run: int = 0
    steps_run: int = 0
    rounds: int = 0
    known: set[str] = field(default_factory=set)          # reported in an earlier round
    counts: dict[str, int] = field(default_factory=dict)  # hits per signature in this run
    reported_counts: dict[str, int] = field(default_factory=dict)
    drafts: dict[str, FindingDraft] = field(default_factory=dict)
    first_seen: dict[str, str] = field(default_factory=dict)
    last_seen: dict[str, str] = field(default_factory=dict)
    found_at: dict[str, int] = field(default_factory=dict)  # examples run when first seen
    anomalies: collections.Counter[str] = field(default_factory=collections.Counter)
    nodes: list[str] = field(default_factory=list)   # 1.0 node names the examples used (deleted at the end)
    on_example: Callable[[], None] | None = None     # told after every example (campaign progress)

    def example_done(self) -> None:
        if self.on_example is not None:
            self.on_example()
    broker_dead: str | None = None
    liveness_check: Callable[[], str] | None = None
    restart: Callable[[], bool] | None = None

    @property
    def deadline(self) -> float:
        return self.started + self.duration if self.duration is not None else float("inf")

    def expired(self) -> bool:
        """No more work: budget spent, example count reached, or the broker is down."""
        if self.broker_dead is not None:
            return True
        if self.examples is not None and self.examples_run >= self.examples:
            return True
        return time.monotonic() >= self.deadline

    def saw(self, sid: str, draft: FindingDraft) -> bool:
        """Counts one hit; True the first time this signature is seen in the run."""
        first = sid not in self.counts
        self.counts[sid] = self.counts.get(sid, 0) + 1
        stamp = now_iso()
        self.last_seen[sid] = stamp
        if first:
            self.first_seen[sid] = stamp
            self.drafts[sid] = draft
            self.found_at[sid] = self.examples_run
        return first

    def check_alive(self) -> str:
        """After an example (or a lost connection): '' while a fresh client is served, else the problem.

        A broker that stopped serving is a finding of the example that just ran, whether or not
        the restart hook brings it back; without a working restart the run ends (broker_dead).
        """
        if self.liveness_check is None or self.broker_dead is not None:
            return ""
        problem = self.liveness_check()
        if not problem:
            return ""
        if self.restart is not None and self.restart() and not self.liveness_check():
            self.anomalies["broker restarted after it stopped serving"] += 1
        else:
            self.broker_dead = problem
        return problem

    def capability(self, name: str) -> bool:
        return bool(self.target.broker.capabilities.get(name))

    def absorb_anomalies(self, items: Iterable[str]) -> None:
        for a in items:
            self.anomalies[a[:160]] += 1


@dataclass
class StatefulReport:
    """What a run did, for the campaign's summary."""

    protocol: str
    target: str
    examples: int
    steps: int
    rounds: int
    elapsed_s: float
    findings: list[dict[str, Any]]
    anomalies: dict[str, int]
    broker_dead: str | None
    stopped: str          # why the run ended: "examples", "duration", "broker-dead"

    @property
    def signatures(self) -> list[str]:
        return [f["signature_id"] for f in self.findings]


def derive_seed(seed: int, round_no: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{round_no}".encode()).digest()[:8], "big")


def _violation_errors(exc: BaseException) -> list[ViolationError]:
    """Every ViolationError in an exception (hypothesis groups several bugs, or a flaky one)."""
    if isinstance(exc, ViolationError):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        out: list[ViolationError] = []
        for inner in exc.exceptions:
            out += _violation_errors(inner)
        return out
    if exc.__cause__ is not None:
        return _violation_errors(exc.__cause__)
    return []


def run_stateful(
    target_url: str | Target,
    protocol: str,
    *,
    examples: int | None = None,
    duration: float | None = None,
    seed: int = 0,
    on_finding: OnFinding | None = None,
    findings_dir: str | None = None,
    steps: int = DEFAULT_STEPS,
    run_id: str | None = None,
    reply_timeout: float = 5.0,
    restart: Callable[[], bool] | None = None,
    fuzz_properties: bool = True,
    cafile: str | None = None,
    insecure: bool = False,
    known: Iterable[str] = (),
    on_example: Callable[[], None] | None = None,
) -> StatefulReport:
    """Runs the stateful machine of ``protocol`` ("0-9-1" or "1.0") against a broker.

    Stops after ``examples`` examples or ``duration`` seconds, whichever comes first (one of
    them is required). Findings go to ``on_finding`` and/or are merged into ``findings_dir``.
    A broker that cannot be reached raises :class:`amqpspec.errors.ConnectError` (one line).
    Signatures in ``known`` (e.g. already in the findings directory) are counted, not shrunk
    again; ``on_example`` is called after every example.
    """
    if protocol not in PROTOCOLS:
        raise UsageError(f"unknown protocol {protocol!r}: use 0-9-1 or 1.0")
    if examples is None and duration is None:
        raise UsageError("a stateful run needs a bound: examples or duration")
    if (examples is not None and examples < 1) or (duration is not None and duration <= 0):
        raise UsageError("examples must be >= 1 and duration > 0")
    target = target_url if isinstance(target_url, Target) else Target.parse(target_url, cafile=cafile,
                                                                             insecure=insecure)
    target.broker = brokerops.probe(target, protocol)
    cfg = RunConfig(target, protocol, TARGET_NAMES[protocol], seed, run_id or uuid.uuid4().hex, examples, duration,
                    steps, reply_timeout, fuzz_properties, restart=restart, on_example=on_example)
    cfg.known.update(known)
    if protocol == "0-9-1":
        from .stateful091 import build_machine
    else:
        from .stateful10 import build_machine  # type: ignore[assignment]
    cfg.liveness_check = lambda: brokerops.problem(target, protocol, LIVENESS_TIMEOUT)
    machine = build_machine(cfg)
    sinks: list[OnFinding] = [s for s in (on_finding,) if s is not None]
    if findings_dir is not None:
        sinks.append(lambda rec: merge_into_directory(findings_dir, rec))
    findings: dict[str, dict[str, Any]] = {}

    def emit(sid: str, draft: FindingDraft | None = None) -> None:
        delta = cfg.counts.get(sid, 0) - cfg.reported_counts.get(sid, 0)
        if sid in findings and delta <= 0:
            return
        d = draft or cfg.drafts[sid]
        rec = finding_record(d, protocol=protocol, target=cfg.target_name, broker=target.broker.identity(),
                             target_url=target.url(), seed=seed, run_id=cfg.run_id,
                             replay=replay_command(target.url(), protocol, cfg.target_name, seed,
                                                   max(cfg.found_at.get(sid, 0), 1) if examples is None
                                                   else examples, cafile, insecure),
                             count=max(delta, 1), first_seen=cfg.first_seen.get(sid), last_seen=cfg.last_seen.get(sid))
        cfg.reported_counts[sid] = cfg.counts.get(sid, 0)
        if sid not in findings:
            findings[sid] = rec
        else:
            findings[sid]["count"] += rec["count"]
            findings[sid]["last_seen"] = rec["last_seen"]
        for sink in sinks:
            sink(rec)

    while not cfg.expired():
        left = CHUNK if examples is None else min(CHUNK, examples - cfg.examples_run)
        conf = settings(max_examples=max(left, 1), stateful_step_count=steps, deadline=None, database=None,
                        suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
                        report_multiple_bugs=True, print_blob=False, verbosity=Verbosity.quiet, derandomize=False)
        factory = hypothesis_seed(derive_seed(seed, cfg.rounds))(lambda: machine())
        before = cfg.examples_run
        cfg.rounds += 1
        try:
            run_state_machine_as_test(factory, settings=conf)
        except Exception as exc:  # noqa: BLE001 -- only violations are expected; anything else is re-raised
            errors = _violation_errors(exc)
            if not errors:
                raise
            for err in errors:
                key = signature_id(err.violation.signature(protocol, cfg.target_name))
                draft = err.evidence.get("draft")
                if key not in cfg.counts:  # raised only during a replay: count it now
                    cfg.saw(key, draft)
                emit(key, draft)
                cfg.known.add(key)
        # signatures seen this round but not reported by hypothesis (e.g. not reproducible)
        for key in list(cfg.counts):
            if key not in findings:
                emit(key)
                cfg.known.add(key)
        if cfg.examples_run == before and not cfg.expired():
            break  # hypothesis ran nothing new (e.g. it exhausted the search space)
    for key in list(cfg.counts):
        emit(key)
    if cfg.nodes and cfg.broker_dead is None:
        note = _delete_nodes(target, cfg.nodes)
        if note:
            cfg.anomalies[note[:160]] += 1
    elapsed = time.monotonic() - cfg.started
    if cfg.broker_dead is not None:
        stopped = "broker-dead"
    elif examples is not None and cfg.examples_run >= examples:
        stopped = "examples"
    else:
        stopped = "duration"
    return StatefulReport(protocol, cfg.target_name, cfg.examples_run, cfg.steps_run, cfg.rounds, round(elapsed, 3),
                          list(findings.values()), dict(cfg.anomalies), cfg.broker_dead, stopped)


def _delete_nodes(target: Target, nodes: list[str]) -> str:
    """Deletes the queues behind the 1.0 nodes the examples used, where the broker also speaks
    0-9-1 (RabbitMQ creates a queue per address and keeps it); '' when done or not needed."""
    if not brokerops.can_delete(target, "1.0"):
        return ""
    problem = brokerops.delete(target, nodes, budget=30.0)
    return f"cleanup incomplete: {problem}" if problem else ""
