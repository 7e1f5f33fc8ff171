"""Runs cases through the mutating proxy and decides, per case, whether some mutation flipped it.

Each worker owns one :class:`~bench.mutation.proxy.MutatingProxy` and takes cases one at a
time: the case runs unmutated (the proxy only logs what the broker sent), then under the
mutations :func:`bench.mutation.plan.plan` picks from that log, until one flips the verdict.
Cases run through the framework (``Runner`` with a one-case list, ``jobs=1``), with the target
pointing at the proxy and liveness probing off: a probe after a mutated case would only
measure the proxy.

Flipped: the unmutated run gave ``passed`` and a mutated run gave ``failed``, ``warning`` or
``informational`` (the verdict the case's clauses weigh a failed check at). A change to
``error`` only ("the suite could not decide") is kept apart: it shows the case notices the
mutation, not that it can fail. A case that did not pass unmutated (failed, warning, or
informational: a check of a MAY or guideline text that did not pass) has shown that it can
come out not passed without any mutation.
"""
from __future__ import annotations

import copy
import dataclasses
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec import brokerops
from amqpspec.case import CaseSpec, Context
from amqpspec.errors import AmqpspecError
from amqpspec.result import Result, Verdict
from amqpspec.runner import RunOptions, Runner
from amqpspec.target import Target

from bench.mutation.mutations import Mutation
from bench.mutation.plan import plan
from bench.mutation.proxy import ConnLog, MutatingProxy

FLIPPED = "flipped"
FLIPPED_TO_ERROR = "flipped-to-error-only"
FAILS_UNMUTATED = "fails-unmutated"
SKIPPED = "skipped-unmutated"
ERROR_UNMUTATED = "error-unmutated"
NOT_FLIPPED = "not-flipped"
STATUSES = (FLIPPED, FAILS_UNMUTATED, FLIPPED_TO_ERROR, NOT_FLIPPED, SKIPPED, ERROR_UNMUTATED)
#: statuses that show the case able to fail
SHOWN = (FLIPPED, FAILS_UNMUTATED)

#: why no mutation flipped a case that ran and passed (classified from what the mutations did)
WHY = {
    "nothing-received": "received nothing from the broker before its last check: it judges only what the suite "
                        "sends or does, so no mutation of the broker's frames reaches it",
    "insensitive": "passed under every mutation of every frame it received before its last check (the plan was "
                   "exhausted): its verdict does not depend on what the broker sends",
    "accepts-silence": "passed with the judged frame dropped or withheld: it checks that something does not "
                       "happen (an absence, an upper bound), and the generic mutations remove or disturb frames "
                       "but add none the broker did not send (a duplicate at most)",
    "accepts-close": "passed with the connection cut (RST/FIN) where it judges: it accepts a closed connection "
                     "as one of its outcomes",
    "tolerant": "accepted every mutated answer tried (other codes, flipped fields, lost, late, reordered, "
                "duplicated frames)",
}
FLIP_VERDICTS = (Verdict.FAILED, Verdict.WARNING, Verdict.INFORMATIONAL)
RUN_ATTEMPTS = 3  # a run spoiled by a broker restart is done again, at most this many times in all


@dataclass
class Tried:
    mutation: Mutation
    applied: list[str]
    verdict: str
    reason: str


@dataclass
class Outcome:
    case: str
    baseline: str
    baseline_reason: str
    status: str = NOT_FLIPPED
    by: Tried | None = None             # the mutation that flipped it (or changed it to error)
    why: str = ""                       # for NOT_FLIPPED: a key of WHY
    tried: list[Tried] = field(default_factory=list)
    frames: int = 0                     # units the broker sent before the last check (unmutated)
    exhausted: bool = False             # every mutation the plan had for its frames was tried
    seconds: float = 0.0
    broker: str = ""                    # the broker it was judged against (set when lists are merged)
    carried: dict[str, Any] | None = None  # its entry in a merged earlier list, when that one is kept
    also: str = ""                      # merged lists: what the other broker's pass said of a case neither showed
    restarts: int = 0                   # runs done again because the broker stopped serving during them


class Keeper:
    """Restarts a broker that stops serving (``--restart-command``) and tells each run whether
    one happened while it was going on: such a run is done again, since what it saw (a dead
    broker, a cut connection) says nothing about the mutation. Without a command it never
    restarts and every run counts.

    A generation counter, not just a probe after the run: with several workers, a broker that a
    case of worker A stopped also cut the connections of worker B's run, and by the time B
    probes, A may have restarted it.
    """

    def __init__(self, real: Target, protocol: str, command: str | None) -> None:
        self.real, self.protocol, self.command = real, protocol, command
        self.generation = 0
        self.notes: list[str] = []
        self._lock = threading.Lock()

    def after(self, started_in: int) -> bool:
        """Called after a run begun in generation ``started_in``: True when it must be done again."""
        if not self.command:
            return False
        with self._lock:
            if self.generation != started_in:
                return True
            if not brokerops.problem(self.real, self.protocol, attempts=2):
                return False
            note = brokerops.restart(self.command, self.real, self.protocol)
            self.notes.append(str(note))
            self.generation += 1
            if not note.ok:
                raise SystemExit(f"the broker stopped serving and did not come back: {note}")
            return True


class _Runner(Runner):
    """The product's runner, told when the case's cleanup starts: its connections are no
    longer the case's (the proxy stops counting and mutating)."""

    proxy: MutatingProxy

    def _cleanup(self, ctx: Context) -> None:
        self.proxy.case_ended()
        super()._cleanup(ctx)


def run_case_once(target: Target, case: CaseSpec, proxy: MutatingProxy, mutation: Mutation | None,
                  protocol: str, seed: int) -> Result:
    """One run of ``case`` through ``proxy`` armed with ``mutation``."""
    original = case.func

    def body(ctx: Context) -> None:
        record = ctx.record

        def recorded(*args: Any, **kwargs: Any) -> bool:
            proxy.checked()
            return record(*args, **kwargs)

        ctx.record = recorded  # type: ignore[method-assign]  # marks the frames a check may rest on
        try:
            original(ctx)
        finally:
            proxy.case_ended()

    proxy.arm(mutation)
    runner = _Runner(target, [dataclasses.replace(case, func=body)],
                     RunOptions(seed=seed, jobs=1, liveness=False, protocol=protocol))
    runner.proxy = proxy
    try:
        return runner.run()[0]
    finally:
        proxy.case_ended()


def _run_kept(keeper: Keeper | None, out_restarts: list[int], target: Target, case: CaseSpec, proxy: MutatingProxy,
              mutation: Mutation | None, protocol: str, seed: int) -> Result:
    """``run_case_once``, done again (up to twice) when the broker stopped serving while it ran: a
    crash that another worker's case caused spoils the runs beside it. A run that stops the broker
    three times in a row is kept as it came out."""
    for attempt in range(1, RUN_ATTEMPTS + 1):
        started = keeper.generation if keeper else 0
        r = run_case_once(target, case, proxy, mutation, protocol, seed)
        if keeper is None or not keeper.after(started) or attempt == RUN_ATTEMPTS:
            return r
        out_restarts[0] += 1
    return r


def judge_case(target: Target, case: CaseSpec, proxy: MutatingProxy, protocol: str, *, budget: int,
               seed: int, keeper: Keeper | None = None) -> Outcome:
    t0 = time.monotonic()
    restarts = [0]
    base = _run_kept(keeper, restarts, target, case, proxy, None, protocol, seed)
    log: list[ConnLog] = list(proxy.log)
    judged = proxy.judged_seq
    before = [r for c in log for r in c.received if judged is None or r.seq <= judged]
    out = Outcome(case.id, base.verdict.value, base.reason, frames=len(before))
    if base.verdict in (Verdict.FAILED, Verdict.WARNING, Verdict.INFORMATIONAL):
        out.status = FAILS_UNMUTATED  # informational: a check of a MAY or guideline text did not pass
    elif base.verdict is Verdict.SKIPPED:
        out.status = SKIPPED
    elif base.verdict is Verdict.ERROR:
        out.status = ERROR_UNMUTATED
    else:
        mutations = plan(case.id, log, budget, seed, judged_seq=judged)
        out.exhausted = len(mutations) < budget
        for m in mutations:
            r = _run_kept(keeper, restarts, target, case, proxy, m, protocol, seed)
            tried = Tried(m, proxy.applied(), r.verdict.value, r.reason)
            out.tried.append(tried)
            if r.verdict in FLIP_VERDICTS:
                out.status, out.by = FLIPPED, tried
                break
            if r.verdict is Verdict.ERROR and out.by is None:
                out.status, out.by = FLIPPED_TO_ERROR, tried
        if out.status == NOT_FLIPPED:
            out.why = classify(out)
    out.seconds = time.monotonic() - t0
    out.restarts = restarts[0]
    return out


def classify(out: Outcome) -> str:
    """Why no mutation flipped a case that passed: a key of :data:`WHY`."""
    if out.frames == 0 or not out.tried:
        return "nothing-received"
    passed = {t.mutation.kind for t in out.tried if t.verdict == out.baseline}
    if out.exhausted and all(t.verdict == out.baseline for t in out.tried):
        return "insensitive"
    if passed & {"withhold", "drop"}:
        return "accepts-silence"
    if passed & {"rst", "fin"}:
        return "accepts-close"
    return "tolerant"


def proxy_target(real: Target, port: int, broker: Any) -> Target:
    return dataclasses.replace(real, host="127.0.0.1", port=port, broker=broker)


def run_all(url: str, protocol: str, cases: list[CaseSpec], *, jobs: int, budget: int, seed: int,
            on_outcome: Callable[[Outcome], None] = lambda o: None, restart: str | None = None) -> list[Outcome]:
    """Every case judged, ``jobs`` at a time (one proxy each); with ``restart``, a broker that stops
    serving is restarted and the runs it spoiled are done again."""
    real = Target.parse(url)
    if real.tls:
        raise SystemExit("the mutating proxy reads the broker's frames: give an amqp:// URL, not amqps://")
    try:
        info = brokerops.probe(real, protocol)
    except AmqpspecError as exc:   # no broker there: one line, not a traceback
        raise SystemExit(f"bench.mutation: {exc}") from None
    keeper = Keeper(real, protocol, restart) if restart else None
    todo: queue.Queue[CaseSpec] = queue.Queue()
    for c in cases:
        todo.put(c)
    outcomes: list[Outcome] = []
    lock = threading.Lock()

    def worker() -> None:
        with MutatingProxy((real.host, real.port), protocol) as proxy:
            target = proxy_target(real, proxy.port, copy.deepcopy(info))
            while True:
                try:
                    c = todo.get_nowait()
                except queue.Empty:
                    return
                o = judge_case(target, c, proxy, protocol, budget=budget, seed=seed, keeper=keeper)
                with lock:
                    outcomes.append(o)
                    on_outcome(o)

    threads = [threading.Thread(target=worker, name=f"mutation-worker-{i}", daemon=True)
               for i in range(max(1, min(jobs, len(cases))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    order = {c.id: i for i, c in enumerate(cases)}
    return sorted(outcomes, key=lambda o: order[o.case])
