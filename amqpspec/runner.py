"""Runs cases: one fresh connection set per case, a hard deadline each, cleanup after.

Each case runs in its own thread. The runner waits for it until its deadline (plus a
short grace); a case still running then has its sockets shut down, which ends any
blocking read at once, and is reported as ``error``. Results are handed to the
callbacks (reporters, the JSON-lines writer) as soon as each case ends.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import shlex
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec import brokerops, defaults
from amqpspec.case import CaseSpec, Context, Skip, case_seed
from amqpspec.peer.amqp091 import UnexpectedReply
from amqpspec.peer.base import PeerError
from amqpspec.profiles import Profile
from amqpspec.result import Result, Verdict, clean_record, worst
from amqpspec.sanitize import cap
from amqpspec.target import Target

GRACE_S = 1.0          # beyond a case's deadline before its sockets are shut down
#: while the broker does not serve and no --restart-command is given, whether it came back is
#: asked at most this often; the cases in between are reported as not run at once. A probe of a
#: deadlocked broker costs its whole timeout, and asking before every case made a dead broker
#: cost seconds per remaining case (520 s for 336 cases against a deadlocked garagemq).
RECOVERY_CHECK_EVERY_S = 5.0


DEFAULT_JOBS = defaults.JOBS


@dataclass
class RunOptions:
    jobs: int = DEFAULT_JOBS
    timeout: float | None = None       # overrides every case's own deadline
    seed: int = 0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    protocol: str = "0-9-1"
    liveness: bool = True              # probe the broker with a fresh connection after every case
    profile: Profile | None = None      # the broker's documented deviations
    restart_command: str | None = None  # shell command that restarts a broker that stopped serving
    restart_wait: float = 60.0          # how long to wait for it to serve again after the restart


class Runner:
    def __init__(
        self,
        target: Target,
        cases: list[CaseSpec],
        options: RunOptions,
        on_result: Callable[[Result], None] = lambda r: None,
        on_start: Callable[[str], None] = lambda cid: None,
    ) -> None:
        self.target = target
        self.cases = cases
        self.options = options
        self.on_result = on_result
        self.on_start = on_start
        self._lock = threading.Lock()
        self._dead_since: str | None = None  # the case after which the broker stopped serving
        self._restarting = threading.Lock()  # held while --restart-command runs; other workers wait
        self._recovery = threading.Lock()    # one recovery probe at a time
        self._dead_problem = ""              # what the last probe of a dead broker said
        self._next_recovery_check = 0.0      # monotonic time of the next recovery probe

    def run(self) -> list[Result]:
        results: list[Result] = []

        def emit(r: Result) -> None:
            with self._lock:
                results.append(r)
                self.on_result(r)

        if self.options.jobs <= 1:
            for c in self.cases:
                self.on_start(c.id)
                emit(self.run_case(c))
        else:
            self._run_parallel(emit)
        return results

    # ------------------------------------------------------------------ parallel cases
    def _run_parallel(self, emit: Callable[[Result], None]) -> None:
        """Runs the cases ``jobs`` at a time, with the verdicts a serial run gives.

        Cases beside each other cannot change each other's verdicts by their frames (each has
        its own connections and names), but a broker that stops serving can be stopped by any
        case that was running. So when a case's liveness probe fails, no new case starts; the
        cases still running finish, and every case that was running then is a suspect, held
        back and sorted out alone (:meth:`_sort_out`) before the run goes on in parallel.

        Exclusive cases (a restart of the broker) would stop the cases beside them: they run
        after the others, one at a time, with serial semantics. So do the cases that could not
        be decided beside others (an error: most often an answer that missed its deadline
        while the broker served many connections at once): their verdict is the one they get
        alone, with a note saying why they ran again.
        """
        pending = collections.deque(c for c in self.cases if not c.exclusive)
        cond = threading.Condition()
        suspects: list[tuple[CaseSpec, Result, str]] = []
        undecided: list[tuple[CaseSpec, Result]] = []
        state = {"in_flight": 0, "crash": False}

        def worker() -> None:
            while True:
                with cond:
                    while state["crash"]:
                        cond.wait()
                    if not pending:
                        return
                    c = pending.popleft()
                    state["in_flight"] += 1
                self.on_start(c.id)
                try:
                    result, dead = self._run_case(c, defer_blame=True)
                finally:
                    with cond:
                        state["in_flight"] -= 1
                        cond.notify_all()
                with cond:
                    if dead or state["crash"]:
                        suspects.append((c, result, dead))
                        state["crash"] = True
                        cond.notify_all()
                        continue
                    if result.verdict is Verdict.ERROR and self._dead_since is None:
                        undecided.append((c, result))
                        continue
                emit(result)

        threads = [threading.Thread(target=worker, name=f"case-worker-{i}", daemon=True)
                   for i in range(min(self.options.jobs, max(1, len(self.cases))))]
        for t in threads:
            t.start()
        while True:
            with cond:
                while not (state["crash"] and state["in_flight"] == 0) and any(t.is_alive() for t in threads):
                    cond.wait(0.2)
                if not state["crash"]:
                    break  # every worker ended: no case left
                held = list(suspects)
                suspects.clear()
            self._sort_out(held, emit)
            with cond:
                state["crash"] = False
                cond.notify_all()
        for t in threads:
            t.join()
        for c, first in undecided:
            self.on_start(c.id)
            r = self.run_case(c)
            r.evidence.setdefault("notes", []).append(
                f"run again alone: beside other cases it could not be decided ({cap(first.reason)})")
            emit(scrub(r))
        for c in self.cases:
            if c.exclusive:
                self.on_start(c.id)
                emit(self.run_case(c))

    def _sort_out(self, suspects: list[tuple[CaseSpec, Result, str]], emit: Callable[[Result], None]) -> None:
        """The broker stopped serving while the ``suspects`` ran side by side. Once it serves again
        (restarted by --restart-command, or of itself), each suspect runs again alone, as in a
        serial run -- the one that stops the broker is blamed and the others keep their own
        verdicts. A broker that stays down blames the first case that saw it, and the others
        could not be decided, as in a serial run that met a dead broker."""
        detector = next(i for i, (_, _, dead) in enumerate(suspects) if dead)
        dead = suspects[detector][2]
        again = ""
        if self.options.restart_command:
            note = brokerops.restart(self.options.restart_command, self.target, self.options.protocol,
                                     self.options.restart_wait)
            again = note if note.ok else ""
        elif not self._liveness(attempts=1):
            again = "the broker served again without a restart"
        if again:
            for c, _, _ in suspects:
                self.on_start(c.id)
                r = self.run_case(c)
                r.evidence.setdefault("notes", []).append(
                    f"run again alone: the broker stopped serving while this case ran beside others "
                    f"({cap(dead)}); {again}")
                emit(scrub(r))
            return
        with self._lock:
            self._dead_since = suspects[detector][0].id
            self._dead_problem = dead
            self._next_recovery_check = time.monotonic() + RECOVERY_CHECK_EVERY_S
        for i, (c, r, _) in enumerate(suspects):
            if i == detector:
                why = f"the broker stopped serving new connections after this case: {dead}"
                emit(self._reverdict(r, Verdict.FAILED, why))
            else:
                why = f"the broker stopped serving new connections (first seen after {self._dead_since})"
                emit(self._reverdict(r, Verdict.ERROR, why))

    def _reverdict(self, r: Result, verdict: Verdict, reason: str) -> Result:
        """The record with the verdict a stopped broker gives it (the profile asked again)."""
        r = dataclasses.replace(r, verdict=verdict, reason=reason, deviation=None)
        if self.options.profile is not None:
            self.options.profile.apply(r)
        return scrub(r)

    # ------------------------------------------------------------------ one case
    def run_case(self, c: CaseSpec) -> Result:
        """Runs one case (serial semantics: a broker it stops is blamed on it, and restarted)."""
        return self._run_case(c)[0]

    def _run_case(self, c: CaseSpec, *, defer_blame: bool = False) -> tuple[Result, str]:
        """The case's result, and what the liveness probe after it found wrong ('' when the broker
        still serves). With ``defer_blame`` a failed probe blames nobody and restarts nothing:
        the caller sorts out which of the cases running side by side stopped the broker."""
        started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
        t0 = time.monotonic()
        timeout = self.options.timeout or c.timeout
        ctx = Context(c, self.target, t0 + timeout, case_seed(self.options.seed, c.id), self.options.run_id,
                      restart_command=self.options.restart_command, restart_wait=self.options.restart_wait)
        outcome: dict[str, BaseException | None] = {"exc": None}
        missing = [f for f in c.requires if f not in self.target.features()]
        if self._dead_since is not None and self.options.liveness:
            with self._restarting:  # a restart in progress ends before this case decides anything
                pass
            dead_since = self._dead_since
            dead = self._still_dead()
            if dead:  # do not run, and do not blame this case for an earlier crash
                reason = f"not run: the broker has not served new connections since case {dead_since} ({dead})"
                return self._result(c, ctx, Verdict.ERROR, reason, time.monotonic() - t0, started_at), ""

        def body() -> None:
            try:
                c.func(ctx)
            except BaseException as exc:  # reported as the case's verdict, never re-raised
                outcome["exc"] = exc

        timed_out = False
        if not missing:
            worker = threading.Thread(target=body, name=f"case {c.id}", daemon=True)
            worker.start()
            worker.join(timeout + GRACE_S)
            if worker.is_alive():
                timed_out = True
                ctx.abort()
                worker.join(2.0)
        for peer in list(ctx.peers):
            peer.close(timeout=0.5)
        if ctx.cleanup:
            self._cleanup(ctx)
        verdict, reason = self._verdict(ctx, outcome["exc"], missing, timed_out, timeout)
        reason = reason.removeprefix(f"{c.title}: ")
        dead = ""
        if not missing and self.options.liveness:
            dead = self._liveness()
            if dead:
                ctx.note(f"liveness probe after the case: {dead}")
            if dead and not defer_blame:
                with self._lock:
                    first = self._dead_since is None
                    if first:
                        if self.options.restart_command:
                            self._restarting.acquire()  # before anyone can see _dead_since set
                        self._dead_problem = dead
                        self._next_recovery_check = time.monotonic() + RECOVERY_CHECK_EVERY_S
                        self._dead_since = c.id
                if first:
                    # whatever the case observed, a broker that stops serving is not a valid reaction
                    verdict, reason = Verdict.FAILED, f"the broker stopped serving new connections after this case: {dead}"
                    if self.options.restart_command:
                        try:
                            ctx.note(self._restart())
                        finally:
                            self._restarting.release()
                else:  # another case before it stopped the broker
                    verdict, reason = Verdict.ERROR, f"the broker stopped serving new connections (first seen after {self._dead_since})"
        return self._result(c, ctx, verdict, reason, time.monotonic() - t0, started_at), dead

    def _verdict(self, ctx: Context, exc: BaseException | None, missing: list[str],
                 timed_out: bool, timeout: float) -> tuple[Verdict, str]:
        if missing:
            return Verdict.SKIPPED, f"broker does not offer {', '.join(missing)}"
        if isinstance(exc, Skip):
            return Verdict.SKIPPED, str(exc)
        decided = worst(ch.verdict for ch in ctx.checks) if ctx.checks else None
        failing = _worst_check(ctx)
        if timed_out or exc is not None:
            why = (f"did not finish within its {timeout:g}s deadline" if timed_out
                   else _describe_exception(exc))
            if decided in (Verdict.FAILED, Verdict.WARNING):
                ctx.note(f"after the failing check the case could not continue: {why}")
                return decided, _reason(failing)
            return Verdict.ERROR, why
        if decided is None:
            return Verdict.ERROR, "the case made no check (a defect in the case)"
        return decided, _reason(failing) if failing else ""

    def _restart(self) -> str:
        """Runs --restart-command and waits until the broker serves again; returns a note."""
        note = brokerops.restart(self.options.restart_command or "", self.target, self.options.protocol,
                                 self.options.restart_wait)
        if note.ok:
            with self._lock:
                self._dead_since = None
        return note

    def _still_dead(self) -> str:
        """Empty when the broker serves again (then the run goes on); else why not. Probed at
        most every RECOVERY_CHECK_EVERY_S, by one worker at a time: in between, the last probe's
        answer stands, so the rest of a run against a dead broker ends within seconds."""
        with self._recovery:
            if self._dead_since is None:
                return ""
            if time.monotonic() < self._next_recovery_check:
                return self._dead_problem
            problem = self._liveness(attempts=1)
            self._next_recovery_check = time.monotonic() + RECOVERY_CHECK_EVERY_S
            with self._lock:
                if problem:
                    self._dead_problem = problem
                else:
                    self._dead_since = None  # it came back (restarted by someone)
            return problem

    def _liveness(self, attempts: int = 2) -> str:
        """Empty when the broker still serves a fresh client; else what went wrong. Asked after
        every case (see :func:`amqpspec.brokerops.problem`)."""
        return brokerops.problem(self.target, self.options.protocol, attempts=attempts)

    def _cleanup(self, ctx: Context) -> None:
        """Deletes what the case declared, on a fresh connection, whatever the case did.

        Over AMQP 0-9-1 (AMQP 1.0 has no standard way to delete a node): a 1.0 run against a
        broker that does not also speak 0-9-1 has nothing to clean up with.
        """
        if not brokerops.can_delete(self.target, self.options.protocol):
            return
        problem = brokerops.delete_pairs(self.target, ctx.cleanup)
        if problem:
            ctx.note(f"cleanup incomplete: {problem}")

    def _result(self, c: CaseSpec, ctx: Context, verdict: Verdict, reason: str, duration: float, started_at: str) -> Result:
        failing = _worst_check(ctx)
        shown = failing or (ctx.checks[-1] if ctx.checks else None)
        evidence = {
            "expected": shown.expected if shown else "",
            "observed": shown.observed if shown else "",
            "checks": [vars(ch).copy() for ch in ctx.checks],
            "notes": ctx.notes,
            "description": c.description,
        }
        if c.guideline:
            evidence["guideline"] = c.guideline
        result = Result(
            case=c.id, title=c.title, section=c.section, section_title=c.section_title,
            clauses=list(c.clauses), protocol=c.protocol, verdict=verdict, reason=reason,
            close=ctx.close, target=self.target.url(), broker=self.target.broker.identity(),
            duration_s=round(duration, 4), seed=self.options.seed, evidence=evidence,
            transcript=ctx.transcript.to_json(), replay=self.replay_command(c), run_id=self.options.run_id,
            started_at=started_at,
        )
        if self.options.profile is not None:
            self.options.profile.apply(result)
        return scrub(result)

    def replay_command(self, c: CaseSpec) -> str:
        args = ["amqpspec", "run", self.target.url(), "--protocol", c.protocol, "--case", c.id,
                "--seed", str(self.options.seed), "-v"]
        if self.target.cafile:
            args += ["--cafile", self.target.cafile]
        if self.target.insecure:
            args.append("--insecure")
        return shlex.join(args)


def _worst_check(ctx: Context) -> Any:
    """The most severe check that did not pass (the first of equals): the case's headline."""
    failing = [ch for ch in ctx.checks if ch.verdict is not Verdict.PASSED]
    return max(failing, key=lambda ch: ch.verdict.severity) if failing else None


def _reason(check: object) -> str:
    if check is None:
        return ""
    return f"{check.description}: expected {check.expected}; observed {check.observed}"  # type: ignore[attr-defined]


def _describe_exception(exc: BaseException | None) -> str:
    if isinstance(exc, UnexpectedReply):
        return f"could not complete a step: {exc}"
    if isinstance(exc, (PeerError, OSError)):
        return f"could not complete: {exc}"
    return f"the case raised {type(exc).__name__}: {exc}"


def scrub(result: Result) -> Result:
    """The record as it may leave the suite: any registered secret removed from every string
    (keys too), and every string valid Unicode (a broker's undecodable octets become visible
    escapes), so no writer or reporter can fail on broker text (see :func:`clean_record`).

    Strings are cleaned one by one, not as one JSON text: a secret holding a quote or a
    backslash would be escaped in JSON and slip past a textual replace."""
    data = result.to_json()
    cleaned = clean_record(data)
    return result if cleaned == data else Result.from_json(cleaned)
