"""What the 0-9-1 and 1.0 stateful machines share: one connection per example, its I/O loop
(reading until a condition or a model deadline), judging violations, and the teardown that
closes the connection and asks whether the broker still serves a fresh client.

A protocol's machine (:mod:`.stateful091`, :mod:`.stateful10`) subclasses
:class:`StatefulMachine`, adds its rules and fills in the hooks marked below: how a frame is
encoded, how the model names its next deadline, which framing errors break a spec clause, how
the connection is closed, and which violations leave the connection usable.
"""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Callable

from hypothesis.stateful import RuleBasedStateMachine, invariant

from amqpspec.peer.base import PeerError
from amqpspec.transcript import Transcript

from .model import FindingDraft, Violation, error_type, signature_id

if TYPE_CHECKING:
    from .model_runner import RunConfig


def round_robin(streams: list[list[Any]]) -> list[Any]:
    """One item of each stream in turn until all are used up (the streams are emptied): the
    frames of several contents or deliveries interleaved frame by frame."""
    merged: list[Any] = []
    while any(streams):
        for s in streams:
            if s:
                merged.append(s.pop(0))
    return merged


class StatefulMachine(RuleBasedStateMachine):
    """Base of the stateful machines; never run by itself (it has no rules)."""

    PROTOCOL = ""
    TARGET = ""
    #: 1.0 trusts the liveness probe ``_lost`` made even when the broker passed it; 0-9-1 only
    #: when it failed, and probes again at teardown (kept as each machine was written)
    TRUST_PASSED_LOST_PROBE = False

    def __init__(self, cfg: RunConfig, model: Any) -> None:
        super().__init__()
        self.cfg = cfg
        self.model = model
        self.transcript = Transcript()
        self.steps: list[str] = []
        self.peer: Any = None
        self.reported = 0
        self.failure: tuple[str, Violation, FindingDraft] | None = None
        self.dead = False
        self.alive_checked = False
        self.counter = 0
        self.expired = cfg.expired()

    # ------------------------------------------------------------------ hooks
    def _encode(self, frame: Any) -> bytes:
        """The octets of one frame as this connection sends them."""
        raise NotImplementedError

    def _next_deadline(self, default: float) -> float:
        """The earliest time the model expects an answer by; ``default`` when none."""
        raise NotImplementedError

    def _stuck(self) -> bool:
        """After the model found a request overdue: whether the connection is to be given up."""
        return True

    def _framing_violation(self, text: str) -> tuple[tuple[str, ...], str] | None:
        """(clauses, message) when an undecodable stream breaks a spec clause; None otherwise."""
        raise NotImplementedError

    def _send_close(self) -> None:
        """Records the step, tells the model and sends the connection close."""
        raise NotImplementedError

    def _soft(self, v: Violation) -> bool:
        """Whether the connection stays predictable after ``v`` (traffic may go on)."""
        return False

    # ------------------------------------------------------------------ connection and I/O
    def _lost(self, why: str, handshake: bool = False) -> None:
        """The connection is gone or stuck: is the broker still serving anyone?"""
        problem = self.cfg.check_alive()
        if problem or self.TRUST_PASSED_LOST_PROBE:
            self.alive_checked = True
        if problem:
            self.model.violate("liveness", "handshake" if handshake else self._state(), (),
                               f"the broker stopped serving new connections ({problem}); before: {why}")
        elif handshake:
            self.cfg.anomalies[f"handshake failed once: {why}"[:160]] += 1

    def _state(self) -> str:
        return self.steps[-1].split("(")[0] if self.steps else "open"

    def _step(self, text: str) -> None:
        self.steps.append(text)
        self.cfg.steps_run += 1

    def _write(self, frames: list[Any], note: str | None = None) -> None:
        """All frames in one write (one transcript entry listing them when several)."""
        assert self.peer is not None
        if len(frames) == 1:
            self.peer.send(frames[0])
            return
        data = b"".join(self._encode(f) for f in frames)
        shown = " | ".join(self._describe(f) for f in frames[:12])
        more = f" | ... {len(frames) - 12} more" if len(frames) > 12 else ""
        self.peer.link.send_bytes(data, f"{note or f'{len(frames)} frames in one write'}: {shown}{more}")

    def _describe(self, frame: Any) -> str:
        raise NotImplementedError

    def _dispatch(self, item: Any) -> None:
        raise NotImplementedError

    def _pump(self, until: Callable[[], bool], timeout: float) -> bool:
        """Reads and dispatches until ``until()`` or ``timeout``; deadlines of the model apply."""
        peer = self.peer
        if peer is None:
            return False
        end = time.monotonic() + timeout
        while not until():
            if self.dead:
                return False
            now = time.monotonic()
            if self.model.overdue(now):
                if self._stuck():
                    self.dead = True
                    self._lost("a request was not answered in time")
                    return False
                continue
            left = min(end, self._next_deadline(end)) - now
            if left <= 0:
                if now >= end:
                    return False
                continue
            item = peer.recv(left)
            if item is None:
                if peer.framing_error is not None:
                    self._framing_error(peer.framing_error)
                    return False
                continue
            self._dispatch(item)
        return True

    def _framing_error(self, text: str) -> None:
        self.dead = True
        broken = self._framing_violation(text)
        if broken is not None:
            self.model.violate("invariant", self._state(), *broken)
        else:
            self.cfg.anomalies[f"undecodable stream from the broker: {text[:120]}"] += 1

    def _settle(self) -> None:
        """After a rule: wait until the broker owes nothing, then take what already arrived."""
        self._pump(lambda: not self.model.busy(), self.cfg.reply_timeout + 1.0)
        if self.peer is not None and not self.dead:
            self._drain(0.0)

    def _drain(self, window: float) -> None:
        """Dispatches whatever arrives within ``window`` seconds."""
        peer = self.peer
        assert peer is not None
        end = time.monotonic() + window
        while not self.dead:
            item = peer.recv(max(0.0, end - time.monotonic()))
            if item is None:
                if peer.framing_error is not None:
                    self._framing_error(peer.framing_error)
                return
            self._dispatch(item)

    def _live(self) -> bool:
        return not self.dead and not self.expired and self.model.connection == "open"

    def _pick(self, items: list[Any], index: int) -> Any:
        return items[index % len(items)] if items else None

    # ------------------------------------------------------------------ invariants
    @invariant()
    def broker_follows_the_spec(self) -> None:
        """Checks what the model concluded so far (see the protocol's model for the rules).

        A violation ends the example's traffic at once, but the example goes on drawing
        its remaining (now idle) steps and fails only in teardown: an example that stopped
        drawing early in one run and not in another (the broker's timing differs) would
        make hypothesis reject the machine as non-deterministic.
        """
        self._check()

    def _check(self) -> None:
        """New violations: count each; keep the first one not reported by an earlier round."""
        new = self.model.violations[self.reported:]
        if not new:
            return
        self.reported = len(self.model.violations)
        for v in new:
            sid = signature_id(v.signature(self.PROTOCOL, self.TARGET))
            draft = self._draft(v)
            self.cfg.saw(sid, draft)
            if self.failure is None and sid not in self.cfg.known:
                self.failure = (sid, v, draft)
        if not all(self._soft(v) for v in new):
            self._shutdown()  # the connection is in a state the model no longer predicts

    def _draft(self, v: Violation) -> FindingDraft:
        sent = b"".join(e.data for e in self.transcript.entries if e.dir == "send")
        return FindingDraft(v, self.transcript.to_json(), sent.hex(),
                            "; ".join(self.steps) or "connection only", list(self.steps))

    def _shutdown(self) -> None:
        self.dead = True
        if self.peer is not None:
            self.peer.abort()

    def teardown(self) -> None:
        cfg = self.cfg
        peer = self.peer
        if not self.expired:
            cfg.example_done()
        if peer is None:  # expired before it began, or the connection failed (_lost judged it)
            self._finish()
            return
        try:
            if self._live() and peer.link.closed is None:
                self._send_close()
                self._pump(lambda: self.model.connection == "closed", cfg.reply_timeout + 1.0)
        except (PeerError, OSError) as exc:
            cfg.anomalies[f"teardown: {exc}"[:120]] += 1
        finally:
            peer.abort()
        if not self.alive_checked and not any(v.kind == "liveness" for v in self.model.violations):
            # every example ends with a fresh client: a broker wedged by this example is its finding
            problem = cfg.check_alive()
            if problem:
                self.model.violate("liveness", "after-example", (),
                                   f"after this example the broker stopped serving a fresh client: {problem}")
        self._finish()

    def _finish(self) -> None:
        self.cfg.absorb_anomalies(self.model.anomalies)
        self._check()
        if self.failure is not None:
            sid, v, draft = self.failure
            raise error_type(sid)(v, {"draft": draft})


__all__ = ["StatefulMachine", "round_robin"]
