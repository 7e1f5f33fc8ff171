"""Runs cases: one fresh connection set per case, a hard deadline each, cleanup after.

Each case runs in its own thread. The runner waits for it until its deadline (plus a
short grace); a case still running then has its sockets shut down, which ends any
blocking read at once, and is reported as ``error``. Results are handed to the
callbacks (reporters, the JSON-lines writer) as soon as each case ends.
"""
from __future__ import annotations

import datetime as _dt
import json
import shlex
import subprocess
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec import liveness
from amqpspec.case import CaseSpec, Context, Skip, case_seed
from amqpspec.errors import ConnectError
from amqpspec.peer.amqp091 import Peer, UnexpectedReply
from amqpspec.peer.base import DeadlineExceeded, PeerError
from amqpspec.profiles import Profile
from amqpspec.result import Result, Verdict, clean_record, worst
from amqpspec.secrets import SCRUBBER
from amqpspec.target import BrokerInfo, Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader, spec

GRACE_S = 1.0          # beyond a case's deadline before its sockets are shut down
CLEANUP_BUDGET_S = 5.0
CLEANUP_REPLY_S = 0.5
LIVENESS_TIMEOUT_S = 3.0


@dataclass
class RunOptions:
    jobs: int = 1
    timeout: float | None = None       # overrides every case's own deadline
    seed: int = 0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    protocol: str = "0-9-1"
    liveness: bool = True              # probe the broker with a fresh connection after every case
    profile: Profile | None = None      # the broker's documented deviations
    restart_command: str | None = None  # shell command that restarts a broker that stopped serving
    restart_wait: float = 60.0          # how long to wait for it to serve again after the restart


def probe_broker(target: Target, timeout: float = 10.0, protocol: str = "0-9-1") -> BrokerInfo:
    """Connects and authenticates once, to check reachability and learn the broker's identity."""
    if protocol == "1.0":
        return _probe_broker_10(target, timeout)
    peer = _connect(target, timeout)
    try:
        peer.handshake()
        return peer.broker_info()
    except UnexpectedReply as exc:
        if peer.negotiated.start is None:
            raise ConnectError(f"{target.url()} does not speak AMQP 0-9-1: it answered {_got(exc)}") from None
        raise ConnectError(_handshake_failure(target, exc)) from None
    except DeadlineExceeded:
        raise ConnectError(f"{target.url()} did not complete the handshake within {timeout:.0f}s") from None
    finally:
        peer.close()


def _probe_broker_10(target: Target, timeout: float) -> BrokerInfo:
    from amqpspec.peer import amqp10

    try:
        peer = amqp10.Peer.connect(target, Transcript(), time.monotonic() + timeout)
    except PeerError as exc:
        raise ConnectError(f"{exc} ({target.url()})") from None
    try:
        peer.handshake()
        return peer.broker_info()
    except amqp10.UnexpectedReply as exc:
        got = exc.got
        if isinstance(got, amqp10.SASLFrame) and getattr(got.body, "NAME", "") == "sasl-outcome":
            raise ConnectError(f"login refused for user {target.username!r} at {target.url()} "
                               f"(sasl-outcome {got.body.summary()})") from None
        if peer.stage == "new" and not isinstance(got, amqp10.ProtocolHeader):
            raise ConnectError(f"{target.url()} does not speak AMQP 1.0: it answered {exc}") from None
        raise ConnectError(f"AMQP 1.0 handshake with {target.url()} failed: {exc}") from None
    except DeadlineExceeded:
        raise ConnectError(f"{target.url()} did not complete the handshake within {timeout:.0f}s") from None
    finally:
        peer.close()


def _connect(target: Target, timeout: float) -> Peer:
    """A raw connection for the suite's own use; failure is the user's one-line error."""
    try:
        return Peer.connect(target, Transcript(), time.monotonic() + timeout)
    except PeerError as exc:
        raise ConnectError(f"{exc} ({target.url()})") from None


def _got(exc: UnexpectedReply) -> str:
    got = exc.got
    return "no answer" if got is None else (got.summary() if hasattr(got, "summary") else repr(got))


def _handshake_failure(target: Target, exc: UnexpectedReply) -> str:
    got = exc.got
    if isinstance(got, MethodFrame) and got.method.NAME == "connection.close":
        code, text = got.method.reply_code, got.method.reply_text  # type: ignore[attr-defined]
        if code in (403,):
            return f"login refused for user {target.username!r} at {target.url()}: {code} {text}"
        if code == 402 or (code == 530 and "vhost" in str(text).lower()):
            return f"virtual host {target.vhost!r} refused at {target.url()}: {code} {text}"
        return f"broker closed the handshake at {target.url()}: {code} {text}"
    if "connection.tune" in exc.wanted:
        return f"login refused for user {target.username!r} at {target.url()} (broker closed the connection after start-ok)"
    return f"handshake with {target.url()} failed: expected {exc.wanted}, got {_got(exc)}"


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
        self._091: bool | None = None         # whether the broker also speaks 0-9-1 (for cleanup of 1.0 runs)

    def run(self) -> list[Result]:
        results: list[Result] = []

        def one(c: CaseSpec) -> None:
            self.on_start(c.id)
            r = self.run_case(c)
            with self._lock:
                results.append(r)
                self.on_result(r)

        if self.options.jobs <= 1:
            for c in self.cases:
                one(c)
        else:
            with ThreadPoolExecutor(max_workers=self.options.jobs, thread_name_prefix="case") as pool:
                for fut in [pool.submit(one, c) for c in self.cases]:
                    fut.result()
        return results

    # ------------------------------------------------------------------ one case
    def run_case(self, c: CaseSpec) -> Result:
        started_at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds")
        t0 = time.monotonic()
        timeout = self.options.timeout or c.timeout
        ctx = Context(c, self.target, t0 + timeout, case_seed(self.options.seed, c.id), self.options.run_id)
        outcome: dict[str, BaseException | None] = {"exc": None}
        missing = [f for f in c.requires if f not in self.target.features()]
        if self._dead_since is not None and self.options.liveness:
            with self._restarting:  # a restart in progress ends before this case decides anything
                pass
            dead = self._liveness(attempts=1) if self._dead_since is not None else ""
            if dead:  # do not run, and do not blame this case for an earlier crash
                reason = f"not run: the broker has not served new connections since case {self._dead_since} ({dead})"
                return self._result(c, ctx, Verdict.ERROR, reason, time.monotonic() - t0, started_at)
            self._dead_since = None  # it came back (restarted)

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
        if not missing and self.options.liveness:
            dead = self._liveness()
            if dead:
                ctx.note(f"liveness probe after the case: {dead}")
                with self._lock:
                    first = self._dead_since is None
                    if first:
                        if self.options.restart_command:
                            self._restarting.acquire()  # before anyone can see _dead_since set
                        self._dead_since = c.id
                if first:
                    # whatever the case observed, a broker that stops serving is not a valid reaction
                    verdict, reason = Verdict.FAILED, f"the broker stopped serving new connections after this case: {dead}"
                    if self.options.restart_command:
                        try:
                            ctx.note(self._restart())
                        finally:
                            self._restarting.release()
                else:  # with --jobs, another case running at the same time may have caused it
                    verdict, reason = Verdict.ERROR, f"the broker stopped serving new connections (first seen after {self._dead_since})"
        return self._result(c, ctx, verdict, reason, time.monotonic() - t0, started_at)

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
        cmd = self.options.restart_command or ""
        try:
            done = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=self.options.restart_wait,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return f"restart command {cmd!r} did not finish within {self.options.restart_wait:.0f}s"
        if done.returncode != 0:
            return f"restart command {cmd!r} exited {done.returncode}: {(done.stderr or done.stdout).strip()[-300:]}"
        until = time.monotonic() + self.options.restart_wait
        while time.monotonic() < until:
            if not self._liveness(attempts=1):
                with self._lock:
                    self._dead_since = None
                return f"broker restarted with {cmd!r}; the run went on"
            time.sleep(0.5)
        return f"restart command {cmd!r} ran, but the broker did not serve again within {self.options.restart_wait:.0f}s"

    def _liveness(self, attempts: int = 2) -> str:
        """Empty when the broker still serves a fresh client; else what went wrong.

        Run after every case: a broker that crashed on a malformed frame also "closed the
        connection", and without this check a crash would pass as a correct close. The probe
        goes as deep as ordinary work -- handshake, channel, a queue declare -- because a
        broker can also deadlock while still accepting connections.
        """
        problem = ""
        for attempt in range(attempts):
            problem = self._probe_once()
            if not problem:
                return ""
            if attempt + 1 < attempts:
                time.sleep(0.3 * (attempt + 1))
        return problem

    def _probe_once(self) -> str:
        return liveness.problem(self.target, self.options.protocol, LIVENESS_TIMEOUT_S)

    def _speaks_091(self) -> bool:
        if self._091 is None:
            try:
                self._091 = detect_protocol(self.target, timeout=3.0) == "0-9-1"
            except ConnectError:
                self._091 = False
        return self._091

    def _cleanup(self, ctx: Context) -> None:
        """Deletes what the case declared, on a fresh connection, whatever the case did.

        Queues are deleted over AMQP 0-9-1 (AMQP 1.0 has no standard way to delete a node);
        a 1.0 run against a broker that does not also speak 0-9-1 has nothing to clean up with.
        """
        if self.options.protocol == "1.0" and not self._speaks_091():
            return
        transcript = Transcript()
        try:
            peer = Peer.connect(self.target, transcript, time.monotonic() + CLEANUP_BUDGET_S)
            peer.handshake()
            ch = peer.open_channel()
            for kind, name in ctx.cleanup:
                method = spec.QueueDelete(queue=name) if kind == "queue" else spec.ExchangeDelete(exchange=name)
                peer.send(MethodFrame(ch, method))
                reply = peer.recv(CLEANUP_REPLY_S)  # a broker that never answers deletes must not stall the run
                if isinstance(reply, MethodFrame) and reply.method.NAME == "channel.close":
                    peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
                    ch = peer.open_channel()
            peer.close()
        except (PeerError, OSError) as exc:
            ctx.note(f"cleanup incomplete: {exc}")

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


def detect_protocol(target: Target, timeout: float = 5.0) -> str:
    """Which AMQP the broker speaks: sends the 0-9-1 header and reads the answer."""
    peer = _connect(target, timeout)
    try:
        peer.send(ProtocolHeader())
        first = peer.recv(timeout)
    finally:
        peer.abort()
    if isinstance(first, MethodFrame) and first.method.NAME == "connection.start":
        return "0-9-1"
    if isinstance(first, ProtocolHeader) and first.well_formed and first.data[5:8] == b"\x01\x00\x00":
        return "1.0"
    shown = "nothing" if first is None else (first.summary() if hasattr(first, "summary") else repr(first))
    raise ConnectError(f"cannot tell which AMQP {target.url()} speaks: it answered {shown}; use --protocol")
