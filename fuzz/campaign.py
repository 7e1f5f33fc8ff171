"""A fuzz campaign: workers drawing examples with hypothesis, oracles judging them, findings kept.

Each worker (a thread with ``--jobs 1``, else a process) takes its share of the targets and
runs them in *batches*. A batch is two hypothesis runs of one target:

1. generation (``Phase.generate``, seeded from the campaign seed, the target, the worker and the
   batch number) until the batch's examples are done or an example shows a *new* signature;
2. if one did, shrinking (``Phase.reuse`` + ``Phase.shrink``): the failing example is replayed
   from an in-memory example database and shrunk, an example counting as failing only when it
   shows that same signature, for at most ``--shrink-time`` seconds.

The smallest input seen with the signature becomes the finding. Signatures already known (in
the findings directory, or found earlier) only add to their count. New signatures met while
shrinking something else are kept and shrunk when generation meets them again (or written as
they are at the end). Every example runs on fresh connections, is followed by the liveness
probe (and the memory check), and after a broker crash the worker that caused it -- confirmed
by replaying its input alone -- restarts the broker with ``--restart-command`` while the other
workers wait.
"""
from __future__ import annotations

import dataclasses
import hashlib
from collections import deque
import multiprocessing
import queue as queue_mod
import threading
import time
import traceback
import uuid
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

from hypothesis import HealthCheck, Phase, Verbosity, given, seed as hyp_seed, settings
from hypothesis.database import InMemoryExampleDatabase
from hypothesis.errors import HypothesisWarning

from amqpspec import brokerops
from amqpspec.errors import UsageError
from amqpspec.target import BrokerInfo, Target

from . import draw
from .exec091 import POOL, Connections, SetupFailed
from .findings import FindingStore, Signature, make_finding, now_iso
from .management_api import ManagementAPI
from .oracles import MemoryMonitor, Verdict
from .stimulus import Stimulus
from .targets import Env, Example, FuzzTarget, get, select

BATCH = 100                 # examples per generation run in duration mode
LIVENESS_NO_CREDIT = "no-credit"   # a liveness signature's condition: served, but never let send again
LIVENESS_EVERY_S = 0.5      # a fresh-connection liveness probe at least this often (and after every batch)
MEMORY_EVERY_S = 0.25       # broker memory read at most this often
EVENTS_EVERY_S = 0.2        # execution counts sent to the campaign at most this often
# Hit counts of known findings are written to their files at most this often (and at the end):
# each write reads and rewrites a finding's JSON, transcript included, on the campaign's thread,
# which with --jobs 1 shares the GIL with the worker (at 2 s: some 8 % of it, bench/README.md).
HITS_EVERY_S = 15.0
HANG_TRIES = 2              # a hang not shown again by the example alone this often is dismissed
CONFIRM_MAX_S = 60.0        # after a crash: time spent finding which recent example caused it
CONFIRM_AGAIN_S = 5.0       # ... once that failed for the target: its crashes are cumulative, not one example's
SETUP_FAILURES_MAX = 5      # consecutive connection failures before the broker is checked
SLOTS = 64                  # examples in flight per worker (each slot: its own thread, connections, names)
GROW_AFTER_S = 0.01         # all slots busy and no result for this long: they wait on the broker...
GROW_CPU_SHARE = 0.85       # ...unless this process already uses this share of a core: then a slot more only adds switching
#: generation watches silence this long before a provisional hang (``Env.hang_window``): a new
#: hang is confirmed with the whole --timeout window on a fresh connection before it counts, a
#: known one is a hit (targets that honour it: the AMQP 1.0 ones)
QUICK_HANG_S = 0.3


class _Stop(BaseException):
    """Ends a hypothesis run at once (time up, stop requested); never a test failure."""


class _Internal(BaseException):
    """A defect of the fuzzer itself inside an example: ends the run, never a finding."""


class _SliceOver(BaseException):
    """The batch's share of the campaign time is used up (duration mode): on to the next target."""


class _Found(Exception):
    """An example showed the signature being looked for: hypothesis keeps (and shrinks) it."""


@dataclass
class Config:
    """Everything a worker needs (picklable: processes get a copy)."""

    url: str
    protocol: str
    targets: list[str]
    broker: BrokerInfo
    seed: int = 0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    jobs: int = 1
    duration: float | None = None
    examples: int | None = None
    window: float = 2.0
    shrink_time: float = 30.0
    restart_command: str | None = None
    restart_wait: float = 60.0
    memory_limit: int = 512 << 20
    known: list[str] = field(default_factory=list)
    cafile: str | None = None
    insecure: bool = False
    batch: int = BATCH
    started: float = field(default_factory=time.time)
    seeds: tuple[str, ...] = ()            # --seeds paths (the ``seeded`` target)
    slots: int = SLOTS                     # examples in flight per worker (1: one after another)
    management: ManagementAPI | None = None  # --management-url: the memory oracle's API (else local RSS)

    def target(self) -> Target:
        return Target.parse(self.url, cafile=self.cafile, insecure=self.insecure)

    def deadline(self) -> float | None:
        return None if self.duration is None else self.started + self.duration


@dataclass
class Shared:
    """Coordination between workers (and the campaign): stop, broker state, restarts."""

    stop: Any
    broker_ok: Any
    restart_lock: Any
    epoch: Any
    dead: Any

    @classmethod
    def create(cls, ctx: Any) -> "Shared":
        ok = ctx.Event()
        ok.set()
        return cls(ctx.Event(), ok, ctx.Lock(), ctx.Value("i", 0), ctx.Event())


def derive_seed(*parts: Any) -> int:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def split(total: int, parts: int) -> list[int]:
    """``total`` spread over ``parts`` as evenly as possible, the first ones taking the rest."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def slot_owner(worker: int, jobs: int, slot: int) -> int:
    """The number slot ``slot`` of worker ``worker`` puts in its entity names (``Env.worker``):
    slot 0 keeps the worker's own, and no two slots of any workers of the campaign share one."""
    return worker + jobs * slot


def plan(cfg: Config, worker: int) -> list[tuple[str, int | None]]:
    """(target, examples) this worker runs; examples None means: until the time is up."""
    if cfg.examples is None:
        n = len(cfg.targets)
        return [(cfg.targets[(worker + i) % n], None) for i in range(n)]
    per_target = split(cfg.examples, len(cfg.targets))
    mine = [(name, split(count, cfg.jobs)[worker]) for name, count in zip(cfg.targets, per_target)]
    return [(name, count) for name, count in mine if count > 0]


# ---------------------------------------------------------------------------- worker

@dataclass
class _Batch:
    """The state of one batch's two hypothesis runs."""

    mode: str = "generate"           # or "shrink"
    limit: int = 0                   # examples to generate
    generated: int = 0
    current: str | None = None       # signature id being shrunk
    best: tuple[Signature, Verdict, Example] | None = None
    shrink_until: float = 0.0
    slice_until: float | None = None
    found: BaseException | None = None
    reproduced: bool = False         # shrinking met the signature again (the example alone showed it)


class Worker:
    def __init__(self, cfg: Config, index: int, events: Any, shared: Shared) -> None:
        self.cfg = cfg
        self.index = index
        self.events = events
        self.shared = shared
        self.target = cfg.target()
        self.env = Env(self.target, cfg.protocol, cfg.broker, cfg.run_id, index, cfg.window, cfg.seeds,
                       hang_window=QUICK_HANG_S if QUICK_HANG_S < cfg.window else None)
        self.known: set[str] = set(cfg.known)
        self.pending: dict[str, tuple[Signature, Verdict, Example]] = {}
        self.unreproduced: dict[str, int] = {}   # hang signature -> tries that did not show it again
        self.dismissed: set[str] = set()          # ... given up on: never recorded, never shrunk again
        self.cleanup: list[tuple[str, str]] = []
        self.memory = MemoryMonitor(self.target, cfg.memory_limit, cfg.management)
        self.setup_failures = 0
        self.internal_errors: dict[str, int] = {}
        self.connections = Connections()
        # examples since the last good fresh-connection probe: the candidates when one fails
        self.suspects: deque[tuple[int, Example]] = deque(maxlen=4 * BATCH)   # (judged as number, example)
        self.judged = 0                       # examples judged so far (numbers the suspects)
        self.probes = _ProbeGate(self)
        self.next_probe = 0.0
        self.next_memory = 0.0
        self.next_flush = 0.0
        self.counts: dict[tuple[str, bool], list[int]] = {}
        self.reuse_only: dict[str, int] = {}
        # examples run in several slots at once; judging them (counts, suspects, probes, memory,
        # findings) is one at a time under this lock, so every oracle sees them in some order
        self.lock = threading.RLock()
        self.slots: _Slots | None = None
        self.inflight: dict[int, Stimulus] = {}   # slot -> stimulus running there (crash candidates)
        self.slot_strategies: dict[tuple[str, int], Any] = {}
        self.credit_node: str | None = None   # 1.0: the node the liveness probe asks credit of
        self.unblamed: set[str] = set()       # targets with a crash no example since the last probe caused alone

    # -- helpers -------------------------------------------------------------------------
    def emit(self, *event: Any) -> None:
        self.events.put(event)

    def time_up(self) -> bool:
        deadline = self.cfg.deadline()
        return self.shared.stop.is_set() or (deadline is not None and time.time() >= deadline)

    def wait_broker(self) -> None:
        while not self.shared.broker_ok.wait(0.5):
            if self.shared.stop.is_set():
                raise _Stop()

    # -- the loop --------------------------------------------------------------------------
    def run(self) -> None:
        POOL.set(self.connections)  # the worker's thread (or process) lends exec091 its idle connections
        try:
            self.memory.start()
            self.emit("memory", self.index, self.memory.describe())
            self._calibrate_credit()
            strategies: dict[str, Any] = {}
            work = plan(self.cfg, self.index)
            done = {name: 0 for name, _ in work}
            batches = {name: 0 for name, _ in work}
            active = [name for name, _ in work]
            budget = dict(work)
            while active and not self.time_up():
                for name in list(active):
                    if self.time_up():
                        break
                    ft = get(name, self.cfg.protocol)
                    stateful = getattr(ft, "stateful", False)  # a state machine draws its own examples
                    if name not in strategies and not stateful:
                        strategies[name] = ft.strategy(self.env)
                    want = budget[name]
                    if want is None:  # duration mode: a time slice per visit, shared among the targets left
                        left = (self.cfg.deadline() or time.time() + 60) - time.time()
                        n, slice_s = 1 << 20, max(1.0, min(20.0, left / len(active)))
                    else:
                        n, slice_s = want - done[name], None
                    seed = derive_seed(self.cfg.seed, name, self.index, batches[name])
                    if stateful:  # see targets_stateful: findings and progress come back as events
                        ran = ft.run_batch(self, None if want is None else n, slice_s, seed)  # type: ignore[attr-defined]
                    else:
                        ran = self.batch(ft, strategies[name], seed, n, slice_s)
                    batches[name] += 1
                    done[name] += ran
                    if (want is not None and done[name] >= want) or self.internal_errors.get(name, 0) >= 3 \
                            or (ran == 0 and batches[name] > 3 and done[name] == 0):
                        active.remove(name)
        except _Stop:
            pass
        finally:
            if self.slots is not None:
                self.slots.close()
            self.flush()
            self.connections.close()
            for sid, (sig, verdict, ex) in list(self.pending.items()):
                if sid not in self.known:  # met while shrinking something else, never again: as it is
                    self.report(sig, verdict, ex)
            if self.credit_node is not None:  # deleted at the end only: a node gone mid-run may refuse the probe
                self.cleanup.append(("queue", self.credit_node))
            if self.cleanup:
                self.clean()
            self.emit("done", self.index)

    def clean(self) -> None:
        if brokerops.can_delete(self.target, self.cfg.protocol):
            note = brokerops.delete_pairs(self.target, self.cleanup)
            if note:
                self.emit("note", f"cleanup incomplete: {note}")
        self.cleanup = []

    # -- counting, probing --------------------------------------------------------------------
    def count(self, name: str, shrinking: bool, reached: bool) -> None:
        """Counts an execution; the campaign hears of them in bunches (an event per example
        costs the campaign process more than a local broker's answer)."""
        with self.lock:
            c = self.counts.setdefault((name, shrinking), [0, 0])
            c[0 if reached else 1] += 1
            if time.monotonic() >= self.next_flush:
                self.flush()

    def flush(self) -> None:
        with self.lock:
            self.next_flush = time.monotonic() + EVENTS_EVERY_S
            for (name, shrinking), (reached, failed) in self.counts.items():
                self.emit("execs", self.index, name, shrinking, reached, failed)
            self.counts.clear()

    def _calibrate_credit(self) -> None:
        """AMQP 1.0: the liveness probe also asks for credit on a new sending link when the broker
        grants it at the start -- a broker that still answers open, begin and attach but never
        lets a client send again has stopped serving it as surely as one that crashed (the Qpid
        Proton example broker does this after one peer's flow). A broker that grants no credit
        there to begin with is probed without it, and the user is told."""
        if self.cfg.protocol != "1.0":
            return
        node = self.env.name("live")
        problem = brokerops.problem(self.target, "1.0", credit_node=node)
        if not problem:
            self.credit_node = node
        elif problem.startswith(brokerops.NO_CREDIT):
            self.emit("note", f"the liveness probe does not ask for credit: at the start {problem}")
        # else not serving at all: the first batch's probe says so

    def _problem(self) -> str:
        return brokerops.problem(self.target, self.cfg.protocol, credit_node=self.credit_node)

    def probe(self) -> str:
        """A fresh, well-behaved client's liveness probe; empty when the broker serves it."""
        problem = self._problem()
        self.next_probe = time.monotonic() + LIVENESS_EVERY_S
        return problem

    # -- one batch: generate, then shrink what is new ----------------------------------------
    def batch(self, ft: FuzzTarget, strategy: Any, seed: int, n: int, slice_s: float | None = None) -> int:
        """Up to ``n`` examples drawn from ``strategy`` (seeded by ``seed``), each new signature
        shrunk as it is met; ends with a fresh-connection liveness probe. Returns how many
        examples were generated.

        With ``slots`` > 1 the examples run several at a time, so that one the broker may leave
        unanswered (watched until its window ends) does not hold up the others. Slot ``s`` draws
        from its own strategy, built for names of its own (two examples in flight never meet on
        a queue or exchange name, as examples on fresh connections one after another would not),
        seeded from ``seed`` and ``s``. Each example is judged exactly as when run alone; a new
        signature stops the drawing, the examples in flight are judged, then each new one is
        shrunk (on fresh connections, one step at a time)."""
        if not draw.available():
            return self.batch_given(ft, strategy, seed, n, slice_s)
        k = max(1, min(self.cfg.slots, n))
        if k > 1 and self.slots is None:
            self.slots = _Slots(self, self.cfg.slots)
        # a slot's own strategy costs up to some 0.2 s to build and warm up (the codec-derived
        # targets): slots are added while all the others are busy and no result waits, so a
        # target whose examples come back quickly never pays for slots it cannot use
        strategies = [strategy]
        while len(strategies) < k and (ft.name, len(strategies)) in self.slot_strategies:
            strategies.append(self.slot_strategies[(ft.name, len(strategies))])
        drawers = [draw.Drawer(strategies[s], seed if s == 0 else derive_seed(seed, "slot", s))
                   for s in range(len(strategies))]
        until = None if slice_s is None else time.monotonic() + slice_s
        generated = dispatched = 0
        free = list(range(len(strategies) - 1, -1, -1))
        busy: dict[int, tuple[bytes]] = {}
        found: list[tuple[int, bytes, tuple[Signature, Verdict, Example]]] = []
        stop: BaseException | None = None
        try:
            while True:
                drawing = stop is None and not found and dispatched < n \
                    and (until is None or time.monotonic() <= until)
                if drawing and self.time_up():
                    stop, drawing = _Stop(), False
                if drawing and free:
                    s = free.pop()
                    try:
                        stimulus, choices = drawers[s].draw()
                    except Exception:  # noqa: BLE001 - our defect: end the batch, never a finding
                        stop = _Internal(traceback.format_exc(limit=6).strip().splitlines()[-1])
                        free.append(s)
                        continue
                    dispatched += 1
                    if k == 1:  # one slot: in this thread, as before
                        result = self._attempt(ft, stimulus)
                        free.append(s)
                    else:
                        busy[s] = (choices,)
                        self.slots.submit(s, ft, stimulus)  # type: ignore[union-attr]
                        continue
                elif drawing and len(strategies) < k and self.slots.idle(GROW_AFTER_S):  # type: ignore[union-attr]
                    s = len(strategies)
                    strategies.append(self._slot_strategy(ft, s))
                    drawers.append(draw.Drawer(strategies[s], derive_seed(seed, "slot", s)))
                    drawers[s].draw()  # the first draw warms the strategy up: part of its cost
                    drawers[s] = draw.Drawer(strategies[s], derive_seed(seed, "slot", s))
                    free.append(s)
                    continue
                elif busy:
                    s, result = self.slots.result()  # type: ignore[union-attr]
                    choices = busy.pop(s)[0]
                    free.append(s)
                elif found and stop is None:
                    for s, choices, outcome in found:  # in the order met; one may have become known meanwhile
                        if not self._seen(outcome[0].id):
                            self.shrink(ft, strategies[s], seed, choices, outcome)
                    found.clear()
                    continue
                else:
                    break
                kind, value = result
                if kind == "error":
                    stop = stop or value
                    continue
                generated += 1
                if value is None:
                    continue
                if self._seen(value[0].id):
                    continue
                found.append((s, choices, value))
            if found and self.shared.dead.is_set():
                # the broker is gone and no --restart-command brings it back: nothing can be shrunk
                # or confirmed any more, so what was met is kept as it was met, not lost
                for _s, _choices, outcome in found:
                    if outcome[0].id not in self.known:
                        self.report(*outcome)
                found.clear()
            if stop is not None:
                raise stop
        except _Internal as exc:
            self.internal_errors[ft.name] = self.internal_errors.get(ft.name, 0) + 1
            self.emit("note", f"fuzzer defect in target {ft.name} (not a finding): {exc}")
        finally:
            self.flush()
        if generated and self.suspects:
            self._probe_after(ft)
        return generated

    def _slot_strategy(self, ft: FuzzTarget, slot: int) -> Any:
        """Slot ``slot``'s strategy: names of its own (slot 0's are the worker's; ``jobs`` apart,
        so no other worker's slot has them either)."""
        key = (ft.name, slot)
        if key not in self.slot_strategies:
            self.slot_strategies[key] = ft.strategy(
                dataclasses.replace(self.env, worker=slot_owner(self.index, self.cfg.jobs, slot)))
        return self.slot_strategies[key]

    def _attempt(self, ft: FuzzTarget, stimulus: Stimulus, slot: int = 0) -> tuple[str, Any]:
        """("ok", outcome) or ("error", the exception that ends the batch)."""
        with self.lock:
            self.inflight[slot] = stimulus
        try:
            return "ok", self._run(ft, stimulus, shrinking=False, slot=slot)
        except (_Stop, _Found) as exc:
            return "error", exc
        except Exception:  # noqa: BLE001 - our defect: end the batch, never a finding
            return "error", _Internal(traceback.format_exc(limit=6).strip().splitlines()[-1])
        finally:
            with self.lock:
                self.inflight.pop(slot, None)

    def _probe_after(self, ft: FuzzTarget) -> None:
        """The batch's closing liveness probe (the examples since the last probe are the suspects)."""
        epoch = self.shared.epoch.value
        problem = self.probe()
        if not problem:
            self.suspects.clear()
            return
        blamed = self.broker_down(ft, self.suspects[-1][1], problem, epoch, confirm=True)
        if blamed is not None:
            self.report(*self._liveness(ft, blamed, problem))

    def shrink(self, ft: FuzzTarget, strategy: Any, seed: int, choices: bytes,
               outcome: tuple[Signature, Verdict, Example]) -> None:
        """Shrinks a new signature's example with hypothesis (its recorded choices replayed, then
        shrunk; every shrinking step on a fresh connection), then reports the smallest input."""
        state = _Batch(mode="shrink", current=outcome[0].id, best=outcome,
                       shrink_until=time.monotonic() + self.cfg.shrink_time)

        def body(stimulus: Stimulus) -> None:
            self.example(ft, stimulus, state)

        test = settings(database=draw.SeededDatabase(choices), deadline=None, derandomize=False,
                        report_multiple_bugs=False, suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                        print_blob=False, max_examples=100, phases=[Phase.reuse, Phase.shrink])(
            hyp_seed(seed)(given(strategy)(body)))
        if self.cfg.shrink_time > 0:
            self._hypothesis(test, ft)
        self._shrunk(ft, state)

    def _seen(self, sid: str) -> bool:
        """Whether a signature needs no shrinking: recorded (a hit is counted) or dismissed."""
        if sid in self.known:
            self.emit("hit", sid)
            return True
        return sid in self.dismissed

    def _shrunk(self, ft: FuzzTarget, state: "_Batch") -> None:
        """Reports what shrinking kept -- unless it is a hang that never came again while the
        example (and its shrunk forms) ran alone: silence past the window while the campaign's
        other examples loaded the broker says the broker was slow, not that it stopped
        answering. Such a signature is tried again when met again, and dismissed after
        HANG_TRIES failed tries (said in a note, counted)."""
        sig, verdict, ex = state.best  # type: ignore[misc]
        self.pending.pop(sig.id, None)
        if sig.violation == "hang" and self.cfg.shrink_time > 0 and not state.reproduced:
            tries = self.unreproduced.get(sig.id, 0) + 1
            self.unreproduced[sig.id] = tries
            if tries >= HANG_TRIES:
                self.dismissed.add(sig.id)
                self.emit("note", f"target {ft.name}: {sig.describe()} did not come again in {tries} tries with the "
                                  "example alone (the broker was slow under load, not silent): not recorded")
            return
        self.report(sig, verdict, ex)

    def batch_given(self, ft: FuzzTarget, strategy: Any, seed: int, n: int, slice_s: float | None = None) -> int:
        """The same batch with hypothesis' own generation (``@given``): the slower way, for
        hypothesis versions whose internals :mod:`draw` cannot use."""
        db = InMemoryExampleDatabase()
        state = _Batch(limit=n, slice_until=None if slice_s is None else time.monotonic() + slice_s)

        def body(stimulus: Stimulus) -> None:
            self.example(ft, stimulus, state)

        base = settings(database=db, deadline=None, derandomize=False, report_multiple_bugs=False,
                        suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
        generate = settings(base, max_examples=max(1, min(n, 1 << 20)), phases=[Phase.generate])(hyp_seed(seed)(given(strategy)(body)))
        self._hypothesis(generate, ft)
        self.flush()
        if state.current is not None and state.best is not None:
            for key in list(db.data):  # as a secondary example, the saved failure is shrunk, not trusted
                for value in list(db.fetch(key)):
                    if not key.endswith(b".secondary"):
                        db.move(key, key + b".secondary", value)
            state.mode = "shrink"
            state.found = None
            state.shrink_until = time.monotonic() + self.cfg.shrink_time
            shrink = settings(base, max_examples=100, phases=[Phase.reuse, Phase.shrink])(
                hyp_seed(seed)(given(strategy)(body)))
            self._hypothesis(shrink, ft)
            self._shrunk(ft, state)
        if state.generated and self.suspects:
            self._probe_after(ft)
        return state.generated

    def _hypothesis(self, test: Callable[[], None], ft: FuzzTarget) -> None:
        try:
            test()
        except (_Stop, _Found, _SliceOver):
            pass
        except _Internal as exc:
            self.internal_errors[ft.name] = self.internal_errors.get(ft.name, 0) + 1
            self.emit("note", f"fuzzer defect in target {ft.name} (not a finding): {exc}")
        except Exception as exc:  # noqa: BLE001 - hypothesis' own complaints (flaky, unsatisfiable...)
            if "Flaky" not in type(exc).__name__ and "Unsatisfiable" not in type(exc).__name__:
                self.emit("note", f"hypothesis ended a run of {ft.name}: {type(exc).__name__}: {str(exc)[:200]}")

    # -- one example -------------------------------------------------------------------------
    def example(self, ft: FuzzTarget, stimulus: Stimulus, state: _Batch) -> None:
        """One example inside a hypothesis run (shrinking, or ``@given`` generation)."""
        if self.time_up():
            raise _Stop()
        if state.mode == "generate":
            if state.found is not None:  # hypothesis replays the failure once to report it
                raise state.found
            if state.generated >= state.limit:
                return
            if state.slice_until is not None and time.monotonic() > state.slice_until:
                raise _SliceOver()
        elif time.monotonic() > state.shrink_until:
            return  # out of shrinking time: nothing fails any more, hypothesis keeps the best
        try:
            outcome = self._run(ft, stimulus, shrinking=state.mode == "shrink")
        except (_Stop, _Found):
            raise
        except Exception:  # noqa: BLE001 - our defect: end the run, never a finding
            raise _Internal(traceback.format_exc(limit=6).strip().splitlines()[-1]) from None
        if state.mode == "generate":
            state.generated += 1
        if outcome is None:
            return
        sig, verdict, ex = outcome
        sid = sig.id
        if sid in self.known:
            if state.mode == "generate":
                self.emit("hit", sid)
            return
        if state.mode == "generate":
            state.current, state.best = sid, outcome
            state.found = _Found(sid)
            raise state.found
        if sid == state.current:
            state.reproduced = True
            best = state.best[2] if state.best else None
            if best is None or (len(ex.octets), ex.octets) < (len(best.octets), best.octets):
                state.best = outcome
            raise _Found(sid)
        self.pending.setdefault(sid, outcome)

    def _fresh(self, ft: FuzzTarget, stimulus: Stimulus, quick: bool = False) -> Example:
        """The example on a fresh connection, whatever the pool holds, silence watched for the
        whole window (shrinking, confirming) -- or, ``quick``, only as long as a campaign's
        provisional hang (a crash candidate replayed only to see whether the broker survives it)."""
        token = POOL.set(None)
        try:
            return ft.run(dataclasses.replace(self.env, hang_window=QUICK_HANG_S if quick else None), stimulus)
        finally:
            POOL.reset(token)

    def _run(self, ft: FuzzTarget, stimulus: Stimulus, *, shrinking: bool,
             slot: int = 0) -> tuple[Signature, Verdict, Example] | None:
        """Runs and judges one example. Every example meets the same oracles: its own reaction
        (classify), and liveness of a fresh well-behaved client -- probed at once after an
        example whose reaction did not show the broker alive, one with a new signature, every
        shrinking step, and otherwise at least every LIVENESS_EVERY_S and after every batch, the
        examples in between (and those still in flight in other slots) being the suspects when a
        probe fails -- and memory. A violation seen on a reused connection counts only as the
        same example shows it on a fresh one. The example runs unlocked (other slots' examples
        run meanwhile); it is judged under the worker's lock. An example during which the broker
        was restarted is run again: its reaction says nothing about the example."""
        while True:
            self.wait_broker()
            epoch = self.shared.epoch.value
            try:
                ex = self._fresh(ft, stimulus) if shrinking else ft.run(self.env, stimulus)
            except SetupFailed as exc:
                with self.lock:
                    if self.shared.epoch.value != epoch:
                        continue
                    self._setup_failed(ft, shrinking, exc, epoch)
                    return None
            reused_sig: Signature | None = None
            quick = getattr(ex.observation, "quick", False)
            if not ex.verdict.ok and (getattr(ex.observation, "reused", False) or quick) \
                    and not self._hit_unconfirmed(ft, ex, quick):
                reused_sig = self._signature(ft, ex)
                try:
                    ex = self._fresh(ft, stimulus)
                except SetupFailed:
                    with self.lock:
                        if self.shared.epoch.value != epoch:
                            continue
                        self.setup_failures = 0
                        self.count(ft.name, shrinking, True)
                        return None
            with self.lock:
                if self.shared.epoch.value != epoch:
                    continue
                seq, due = self._admit(ft, ex, shrinking, reused_sig)
            # the probe runs outside the lock: one probe begun after several examples were
            # admitted speaks for all of them (slots waiting for a probe share the next one)
            problem, covers = self.probes.covering(seq) if due else ("", 0)
            with self.lock:
                if not problem and self.shared.epoch.value != epoch:
                    # the broker was restarted after this example began (another slot's crash):
                    # what it saw -- a reset as the broker died -- says nothing about it; run again
                    continue
                return self._judge(ft, ex, shrinking, epoch, slot, due, problem, covers)

    def _hit_unconfirmed(self, ft: FuzzTarget, ex: Example, quick: bool) -> bool:
        """Whether a violation seen on a reused connection (or in a quick window) is taken as a
        hit without running it again on a fresh one: a provisional hang whose signature is known,
        and -- for AMQP 1.0, where a fresh connection costs SASL, open, begin and two attaches and
        a campaign meets its known findings on every few examples -- any known signature. A hit
        only counts; what is recorded (a new signature) is always confirmed on a fresh
        connection first."""
        known = self._signature(ft, ex).id in self.known
        if quick and ex.verdict.violation == "hang":
            return known
        return known and self.cfg.protocol == "1.0"

    def _setup_failed(self, ft: FuzzTarget, shrinking: bool, exc: SetupFailed, epoch: int) -> None:
        self.setup_failures += 1
        self.count(ft.name, shrinking, False)
        if self.setup_failures >= SETUP_FAILURES_MAX:
            self.setup_failures = 0
            problem = self.probe()
            if problem:
                self.broker_down(None, None, problem, epoch, confirm=False)
            else:
                self.emit("note", f"target {ft.name}: its start state could not be reached: {exc}")

    def _admit(self, ft: FuzzTarget, ex: Example, shrinking: bool, reused_sig: Signature | None) -> tuple[int, bool]:
        """Counts an example that ran and makes it a suspect (under the worker's lock); returns
        its number and whether a liveness probe is due for it."""
        self.setup_failures = 0
        self.count(ft.name, shrinking, True)
        if reused_sig is not None and self._signature(ft, ex) != reused_sig:
            self._reuse_only(ft, reused_sig)
        self.cleanup.extend(ex.cleanup)
        if len(self.cleanup) > 200:
            self.clean()
        self.judged += 1
        self.suspects.append((self.judged, ex))
        due = shrinking or time.monotonic() >= self.next_probe or not _alive_shown(ex.observation) \
            or (not ex.verdict.ok and self._signature(ft, ex).id not in self.known)
        if due:  # the next probe is this one: no other slot starts a timed one meanwhile
            self.next_probe = time.monotonic() + LIVENESS_EVERY_S
        return self.judged, due

    def _judge(self, ft: FuzzTarget, ex: Example, shrinking: bool, epoch: int, slot: int, due: bool,
               problem: str, covers: int) -> tuple[Signature, Verdict, Example] | None:
        """The liveness, memory and reaction oracles' verdict over an admitted example, given the
        probe that covered it (examples numbered up to ``covers`` were admitted before it began)."""
        if problem:
            if self.shared.dead.is_set() or self.shared.epoch.value != epoch:
                return None  # another slot took the same failed probe (and blamed or restarted)
            blamed = self.broker_down(ft, ex, problem, epoch, confirm=not shrinking, slot=slot)
            if blamed is None:
                return None
            return self._liveness(ft, blamed, problem)
        if due:
            while self.suspects and self.suspects[0][0] <= covers:
                self.suspects.popleft()
        now = time.monotonic()
        if now >= self.next_memory:
            self.next_memory = now + MEMORY_EVERY_S
            grown = self.memory.check()
            if grown:
                ex.transcript.event(grown)
                memory = Verdict("memory", None, None, (), grown)
                self.report(Signature(self.cfg.protocol, ft.name, "memory", None, None, ex.state), memory, ex)
        if ex.verdict.ok:
            return None
        return self._signature(ft, ex), ex.verdict, ex

    def _signature(self, ft: FuzzTarget, ex: Example) -> Signature:
        v = ex.verdict
        return Signature(self.cfg.protocol, ft.name, v.violation or "", v.code, v.condition, ex.state, v.clauses)

    def _liveness_signature(self, ft: FuzzTarget, ex: Example, problem: str) -> Signature:
        """A broker that stopped granting credit is a finding of its own, not one with a crash of
        the same target and state (its condition says which)."""
        kind = LIVENESS_NO_CREDIT if problem.startswith(brokerops.NO_CREDIT) else None
        return Signature(self.cfg.protocol, ft.name, "liveness", None, kind, ex.state)

    def _liveness(self, ft: FuzzTarget, ex: Example, problem: str) -> tuple[Signature, Verdict, Example]:
        ex.transcript.event(f"liveness probe after this example: {problem}")
        verdict = Verdict("liveness", None, None, (), f"after this example the broker stopped serving a fresh, "
                                                     f"well-behaved client: {problem}")
        return self._liveness_signature(ft, ex, problem), verdict, ex

    def _reuse_only(self, ft: FuzzTarget, sig: Signature) -> None:
        """A violation on a reused connection that a fresh one did not show: not a finding (it
        would not replay); said once per target, counted."""
        n = self.reuse_only.get(ft.name, 0) + 1
        self.reuse_only[ft.name] = n
        if n == 1:
            self.emit("note", f"target {ft.name}: {sig.describe()} seen on a reused connection (or after a short "
                              "silence) but not when the example ran again on a fresh one with the whole window "
                              "(not recorded; only fresh-connection, whole-window results count)")

    def broker_down(self, ft: FuzzTarget | None, ex: Example | None, problem: str, epoch: int, *,
                    confirm: bool, slot: int | None = None) -> Example | None:
        """The broker stopped serving. Returns the example to blame, or None: it must have run
        after the last restart, and (unless ``confirm`` is off) kill the broker again when
        replayed alone -- the suspects since the last good probe are replayed newest first, then
        the examples still in flight in other slots; the replay that stops the broker is blamed,
        with its own fresh connection's transcript. Restarts the broker when a command is given."""
        suspects: list[Example | Stimulus] = [e for _, e in reversed(self.suspects) if e is not ex]
        judged = {id(e.stimulus) for e in suspects if isinstance(e, Example)} | ({id(ex.stimulus)} if ex else set())
        suspects += [st for s, st in sorted(self.inflight.items()) if s != slot and id(st) not in judged]
        candidates: list[Example | Stimulus] = ([ex] if ex is not None else []) + suspects
        self.suspects.clear()
        with self.shared.restart_lock:
            if self.shared.epoch.value != epoch:
                return None  # restarted meanwhile: someone else's crash
            self.shared.broker_ok.clear()
            try:
                if not self._problem():
                    return None  # it came back by itself
                if not self.cfg.restart_command:
                    self.shared.dead.set()
                    self.shared.stop.set()
                    self.emit("note", f"the broker stopped serving ({problem}) and there is no --restart-command: "
                                      "the campaign ends" + (f"; the last example is blamed, one of {len(candidates)} "
                                                             "since the last good probe" if len(candidates) > 1 else ""))
                    return ex if ft is not None else None
                self.emit("note", self._restart())
                if ft is None or ex is None:
                    return None
                if not confirm:
                    return ex
                if self.cfg.protocol == "1.0" and self._liveness_signature(ft, ex, problem).id in self.known:
                    # this target's crash is known: which example of the candidates did it only
                    # decides a hit, and each candidate replayed costs a restart more (the Proton
                    # example broker dies on about one transfer in ten)
                    return ex
                # a target whose crash no single example caused once (the Proton example broker
                # leaks a descriptor per connection dropped mid-frame and dies at 1,024) crashes
                # so again and again: its later blames try only the newest candidates
                give_up = time.monotonic() + (CONFIRM_AGAIN_S if ft.name in self.unblamed else CONFIRM_MAX_S)
                for cand in candidates:
                    if time.monotonic() > give_up:
                        break
                    replay: Example | None = None
                    try:
                        # a judged candidate is blamed as it ran, its replay only tells whether it
                        # stops the broker: no need to sit out the whole window of each silent one
                        # (a target the broker hangs on has hundreds of candidates, 2 s each)
                        replay = self._fresh(ft, cand.stimulus, quick=True) if isinstance(cand, Example) \
                            else self._fresh(ft, cand)
                    except SetupFailed:
                        pass
                    if self._problem():
                        self.emit("note", self._restart())
                        # the evidence is the replay that stopped the broker alone: its transcript
                        # begins with its own connection (the candidate may have run on a reused
                        # one, whose recording `amqpspec replay` cannot bring back to that state)
                        if replay is not None:
                            return replay
                        if isinstance(cand, Example):
                            return cand
                        continue  # its replay never reached the start state: no evidence to show
                if ft.name not in self.unblamed:
                    self.unblamed.add(ft.name)
                    self.emit("note", f"target {ft.name}: the broker stopped serving, but not when the "
                                      f"{len(candidates)} example(s) since the last good probe were replayed alone "
                                      f"(not recorded; its next such stops are blamed within {CONFIRM_AGAIN_S:g} s)")
                return None
            finally:
                if not self.shared.dead.is_set():
                    self.shared.broker_ok.set()

    def _restart(self) -> str:
        note = brokerops.restart(self.cfg.restart_command or "", self.target, self.cfg.protocol, self.cfg.restart_wait)
        with self.shared.epoch.get_lock():
            self.shared.epoch.value += 1
        self.memory.rebase()
        self.emit("restart", self.index, note)
        return note

    # -- findings ------------------------------------------------------------------------------
    def report(self, sig: Signature, verdict: Verdict, ex: Example) -> None:
        self.known.add(sig.id)
        record = make_finding(
            sig, broker=self.cfg.broker.identity(), target_url=self.target.url(), seed=self.cfg.seed,
            run_id=self.cfg.run_id, clauses=list(verdict.clauses), input_hex=ex.octets.hex(),
            input_summary=ex.stimulus.summary(), transcript=ex.transcript.to_json())
        last_t = record["transcript"][-1]["t"] if record["transcript"] else 0.0
        record["transcript"].append({"t": last_t, "dir": "event", "conn": 0, "hex": "",
                                     "summary": f"verdict: {verdict.violation}: {verdict.reason}"[:2000]})
        self.emit("finding", record)


class _ProbeGate:
    """Fresh-connection liveness probes shared among a worker's slots. A slot whose example was
    admitted as number ``n`` needs a probe begun after that; one running that began later serves
    it, as does one that finished; otherwise it starts the next (one probe at a time)."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker
        self.cond = threading.Condition()
        self.running: int | None = None     # admitted-count when the running probe began
        self.done = -1                      # the same for the last finished probe
        self.result = ""

    def covering(self, seq: int) -> tuple[str, int]:
        """(problem or '', the admitted-count the probe began at) of a probe begun after ``seq``."""
        with self.cond:
            while True:
                if self.done >= seq:
                    return self.result, self.done
                if self.running is None:
                    with self.worker.lock:
                        start = self.worker.judged
                    self.running = start
                    break
                self.cond.wait()
        problem = ""
        try:
            problem = self.worker.probe()
        finally:
            with self.cond:
                self.running = None
                self.done, self.result = start, problem
                self.cond.notify_all()
        return problem, start


class _Slots:
    """A worker's example slots: a thread each, with its own idle connections (``POOL``), taking
    one example at a time; results come back on one queue. The threads wait on sockets most of
    the time, so several of them overlap the broker's latency and the windows of examples the
    broker may leave unanswered."""

    def __init__(self, worker: Worker, k: int) -> None:
        self.worker = worker
        self.pools = [Connections() for _ in range(k)]
        self.inboxes: list[queue_mod.SimpleQueue[Any]] = [queue_mod.SimpleQueue() for _ in range(k)]
        self.results: queue_mod.SimpleQueue[tuple[int, tuple[str, Any]]] = queue_mod.SimpleQueue()
        self.early: list[tuple[int, tuple[str, Any]]] = []   # results taken while checking idle()
        self.sampled = (time.monotonic(), time.process_time())   # for the CPU share idle() watches
        self.share = 0.0
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True,
                                         name=f"fuzz-worker-{worker.index}-slot-{i}") for i in range(k)]
        for t in self.threads:
            t.start()

    def submit(self, slot: int, ft: FuzzTarget, stimulus: Stimulus) -> None:
        self.inboxes[slot].put((ft, stimulus))

    def result(self) -> tuple[int, tuple[str, Any]]:
        return self.early.pop(0) if self.early else self.results.get()

    def idle(self, wait: float) -> bool:
        """No result came within ``wait`` seconds while the process has CPU to spare: every slot
        waits on the broker, so one more would overlap that wait. When the interpreter is busy
        anyway (a cheap in-connection target), a thread more only adds switches of its lock:
        there 64 slots ran 20 % slower than 8."""
        if self.early:
            return False
        now, cpu = time.monotonic(), time.process_time()
        if now - self.sampled[0] >= 0.25:
            self.share = (cpu - self.sampled[1]) / (now - self.sampled[0])
            self.sampled = (now, cpu)
        if self.share >= GROW_CPU_SHARE:
            return False
        try:
            self.early.append(self.results.get(timeout=wait))
        except queue_mod.Empty:
            return True
        return False

    def _loop(self, slot: int) -> None:
        POOL.set(self.pools[slot])  # this thread's context only: the slot's connections
        while True:
            job = self.inboxes[slot].get()
            if job is None:  # each slot closes its own idle connections: politely, all at once
                self.pools[slot].close()
                return
            ft, stimulus = job
            try:
                result = self.worker._attempt(ft, stimulus, slot)
            except BaseException as exc:  # noqa: BLE001 - never lose a slot silently: the batch ends
                result = ("error", _Internal(f"slot {slot}: {type(exc).__name__}: {exc}"))
            self.results.put((slot, result))

    def close(self) -> None:
        """Ends the threads (no example is in flight between batches), which close their connections."""
        for box in self.inboxes:
            box.put(None)
        until = time.monotonic() + 10.0
        for t in self.threads:
            t.join(timeout=max(0.0, until - time.monotonic()))


def _alive_shown(obs: Any) -> bool:
    """Whether the broker answered anything after the stimulus (then it was alive for this
    connection; silence, a reset without a word or a failed setup call for a probe at once)."""
    frames = getattr(obs, "frames", None)
    return bool(getattr(obs, "probe_ok", False)) or (callable(frames) and bool(frames()))


def _worker_main(cfg: Config, index: int, events: Any, shared: Shared) -> None:
    """Entry point of a worker process (and of the worker thread with --jobs 1)."""
    try:
        Worker(cfg, index, events, shared).run()
    except BaseException as exc:  # noqa: BLE001 - reported to the campaign, which goes on
        events.put(("note", f"worker {index} failed: {type(exc).__name__}: {exc}"))
        events.put(("done", index))


# ---------------------------------------------------------------------------- the campaign

@dataclass
class Stats:
    started: float = field(default_factory=time.monotonic)
    execs: int = 0
    setup_failures: int = 0
    by_target: dict[str, int] = field(default_factory=dict)
    elapsed_by_target: dict[str, float] = field(default_factory=dict)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)   # sig id -> record (this campaign)
    new: set[str] = field(default_factory=set)
    hits: dict[str, int] = field(default_factory=dict)
    last: str = ""
    notes: list[str] = field(default_factory=list)
    restarts: int = 0
    memory: str = ""
    dead: bool = False

    def rate(self) -> float:
        dt = time.monotonic() - self.started
        return self.execs / dt if dt > 0 else 0.0


class Campaign:
    """Runs the workers and the control pair, keeps the findings directory, feeds a display."""

    def __init__(self, cfg: Config, findings_dir: str, on_event: Callable[[str, Stats, Any], None] | None = None,
                 control: bool = True) -> None:
        self.cfg = cfg
        self.store = FindingStore(findings_dir)
        self.stats = Stats()
        self.on_event = on_event or (lambda kind, stats, data: None)
        self.control_enabled = control
        self._pending_hits: dict[str, int] = {}
        self._last_flush = time.monotonic()

    def run(self) -> Stats:
        cfg = self.cfg
        for name in cfg.targets:
            get(name, cfg.protocol)
        cfg.known = sorted(self.store.known())
        ctx = multiprocessing.get_context("spawn")
        shared = Shared.create(ctx)
        events: Any = ctx.Queue()
        control = None
        if self.control_enabled:
            from .control import ControlPair

            control = ControlPair(cfg.target(), cfg.protocol, cfg, events, shared, window=cfg.window)
            control.start()
        workers: list[Any] = []
        if cfg.jobs <= 1:
            workers.append(threading.Thread(target=_worker_main, args=(cfg, 0, events, shared), daemon=True,
                                            name="fuzz-worker-0"))
        else:
            workers += [ctx.Process(target=_worker_main, args=(cfg, i, events, shared), daemon=True,
                                    name=f"fuzz-worker-{i}") for i in range(cfg.jobs)]
        for w in workers:
            w.start()
        running = len(workers)
        try:
            while running:
                try:
                    event = events.get(timeout=0.25)
                except queue_mod.Empty:
                    if not any(w.is_alive() for w in workers):
                        break
                    self._tick()
                    continue
                if event[0] == "done":
                    running -= 1
                self._handle(event)
                self._tick()
        except KeyboardInterrupt:
            shared.stop.set()
            self.stats.notes.append("interrupted: finishing the examples in flight")
            self.on_event("note", self.stats, "interrupted: finishing the examples in flight")
            self._drain(events, workers)
            raise
        finally:
            shared.stop.set()
            for w in workers:
                w.join(timeout=self.cfg.window + 15)
            if control is not None:
                for event in control.stop(drain=not shared.dead.is_set()):
                    self._handle(event)
            while True:
                try:
                    self._handle(events.get_nowait())
                except (queue_mod.Empty, OSError, ValueError):
                    break
            self._flush_hits()
            self.stats.dead = shared.dead.is_set()
        return self.stats

    def _drain(self, events: Any, workers: list[Any]) -> None:
        until = time.monotonic() + self.cfg.window + 10
        while any(w.is_alive() for w in workers) and time.monotonic() < until:
            try:
                self._handle(events.get(timeout=0.25))
            except queue_mod.Empty:
                pass

    def _tick(self) -> None:
        if time.monotonic() - self._last_flush > HITS_EVERY_S:
            self._flush_hits()
        self.on_event("tick", self.stats, None)

    def _flush_hits(self) -> None:
        self._last_flush = time.monotonic()
        for sid, n in list(self._pending_hits.items()):
            rec = self.store.hit(sid, n)
            if rec is not None:
                self.stats.findings[sid] = rec
        self._pending_hits.clear()

    def _handle(self, event: tuple[Any, ...]) -> None:
        kind = event[0]
        s = self.stats
        if kind == "execs":  # a worker's counts since its last report
            _, _worker, name, _shrinking, reached, failed = event
            s.execs += reached + failed
            s.by_target[name] = s.by_target.get(name, 0) + reached + failed
            s.setup_failures += failed
        elif kind == "exec":
            _, _worker, name, _shrinking, reached = event
            s.execs += 1
            s.by_target[name] = s.by_target.get(name, 0) + 1
            if not reached:
                s.setup_failures += 1
        elif kind == "hit":
            sid = event[1]
            s.hits[sid] = s.hits.get(sid, 0) + 1
            self._pending_hits[sid] = self._pending_hits.get(sid, 0) + 1
            if sid not in s.findings:
                rec = self.store.load(sid)
                if rec is not None:
                    s.findings[sid] = rec
        elif kind == "finding":
            record = event[1]
            stored, new = self.store.record(record)
            sid = stored["signature_id"]
            s.findings[sid] = stored
            if new:
                s.new.add(sid)
            s.hits[sid] = s.hits.get(sid, 0) + int(record.get("count", 1))
            s.last = Signature(**stored["signature"]).describe()
            self.on_event("finding", s, (stored, new))
        elif kind == "restart":
            s.restarts += 1
            self.on_event("note", s, event[2])
        elif kind == "memory":
            s.memory = event[2]
        elif kind == "note":
            s.notes.append(event[1])
            self.on_event("note", s, event[1])


# Shrinking runs the stimulus through @given, which writes the example's repr for its report; a
# stimulus of large frames (65 kB and more) makes hypothesis warn on the console in mid-campaign.
# The campaign never shows that repr (findings keep the octets), so the warning says nothing.
warnings.filterwarnings("ignore", message="Generating overly large repr", category=HypothesisWarning)


def resolve_targets(protocol: str, names: tuple[str, ...] | list[str], env: Env | None = None) -> list[str]:
    """The targets to run: the named ones (a named target this campaign cannot take is a usage
    error), else every target of the protocol that it can take (``FuzzTarget.needs``)."""
    chosen = select(protocol, names)
    if env is not None:
        for t in chosen:
            why = t.needs(env)
            if why and names:
                raise UsageError(f"fuzz target {t.name}: {why}")
        chosen = [t for t in chosen if not t.needs(env)]
    if not chosen:
        raise UsageError(f"no fuzz targets for AMQP {protocol}")
    return [t.name for t in chosen]


__all__ = ["Config", "Campaign", "Stats", "Worker", "Shared", "plan", "split", "derive_seed", "resolve_targets", "slot_owner",
           "now_iso"]
