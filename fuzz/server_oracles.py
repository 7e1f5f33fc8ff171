"""Oracles of the hostile-broker campaign: how a client library's reaction becomes a finding.

In order (the first that applies names the finding):

* ``crash`` -- the driver process ended in a way the driver contract (docs/drivers.md) calls a
  crash: killed by a signal, an exit status other than 0 (done), 1 after an ``error`` event (a
  library error the driver caught) or 3 (unsupported), or an exception nobody caught in a thread
  or asyncio task (``DriverOutcome.crashed``). A library that refuses hostile input with an
  exception its application can catch is not a crash, even if it also logs the traceback.
* ``memory`` -- the driver's processes grew past ``--rss-limit`` (resident set size, sampled
  while the example runs, summed over the driver's session).
* ``hang`` -- the driver was still running at the example's deadline and was killed. The
  driver is given ``timeout=3`` and the example 8 s: the contract asks a driver to give up
  with an ``error`` event once one wait passed its ``timeout``, so a driver still running at
  the deadline waited well past two of them (or its library blocked where the driver could
  not arm a deadline -- a gap of that driver, reported all the same, since its users block too).
* ``wrong-code`` -- the example's frames call for a reaction a clause requires (see
  ``server_strategies091`` / ``server_strategies10``) and the client did something else:
  another code, a close where a silent close is required, or carrying on.

The verdict reuses :class:`fuzz.oracles.Verdict`, so signatures and finding files are those of
the broker-side campaign.
"""
from __future__ import annotations

import os
import re
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amqpspec.client.drivers import DriverOutcome
from amqpspec.verify import ConnectionException, SilentClose, Verifier

from .oracles import Verdict
from .server_example import Expect

ALLOWED = Verdict(None)
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Fault|Panic|panic))\b")
_GO_PANIC = re.compile(r"^panic: (.{0,60})")


@dataclass
class Run:
    """What one example (or its replay) produced, as the oracles read it."""

    outcome: DriverOutcome
    after: Any                   # an Observation (0-9-1) or Observation10 (1.0) of what the client
    #                              sent after the first hostile frame, and how its socket ended
    injected: bool               # the hostile frames went out (the conversation reached the point)
    frame_max: int = 0           # what the client settled (0-9-1 tune-ok) or announced (1.0 open); 0: no limit
    channel_max: int = 65535     # 1.0: the channel-max of the client's open
    rss_peak: int = 0            # octets
    notes: list[str] = field(default_factory=list)
    inject_entry: int = -1       # index of the first hostile frame in the transcript's entries


def crash_condition(out: DriverOutcome) -> str:
    """A stable name for how the driver crashed: ``SIGSEGV``, an exception class, ``exit 70``."""
    rc = out.returncode
    if rc is not None and rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    lines = [ln.strip() for ln in out.stderr_tail.splitlines() if ln.strip()]
    for ln in reversed(lines):
        m = _GO_PANIC.match(ln)
        if m:
            return "panic"
        m = _EXC_LINE.match(ln)
        if m:
            return m.group(1).rsplit(".", 1)[-1]
    for ln in lines:  # Node.js prints the error class a few lines into the trace
        m = re.search(r"\b([A-Z]\w*(?:Error|Exception))\b", ln)
        if m:
            return m.group(1)
    return f"exit {rc}"


class CloseOk(Verifier):
    """The client answers a close with close-ok (0-9-1 2.3.7/2): connection.close-ok on channel
    0, or channel.close-ok on the closed channel; whatever else it sends afterwards."""

    expects_close = False

    def __init__(self, channel: int) -> None:
        self.channel = channel
        self.method = "connection.close-ok" if channel == 0 else "channel.close-ok"

    def accepts(self, obs: Any) -> bool:
        return bool(obs.methods(self.method, self.channel))

    def describe(self) -> str:
        return f"{self.method} on channel {self.channel}"


def verifier_091(expect: Expect) -> Verifier:
    if expect.kind == "silent-close":
        return SilentClose()
    if expect.kind == "connection-exception":
        return ConnectionException(*expect.codes)
    if expect.kind == "close-ok":
        return CloseOk(expect.channel or 0)
    raise ValueError(f"no 0-9-1 verifier for {expect.kind!r}")


def applies(expect: Expect | None, run: Run) -> bool:
    """Whether the example's required reaction stands for this run."""
    if expect is None or not run.injected:
        return False
    if expect.frame_max_under and not 0 < run.frame_max < expect.frame_max_under:
        return False
    if expect.channel_max_under and not run.channel_max < expect.channel_max_under:
        return False
    return True


def reaction_091(obs: Any) -> tuple[int | None, str]:
    """(close code, a coarse name of the reaction) for the signature: coarse, so that one
    defect found with many drawn values stays one finding."""
    close = obs.connection_close
    if close is not None:
        return int(close.reply_code), "connection.close"
    ch = obs.channel_close()
    if ch is not None:
        return int(ch.reply_code), "channel.close"
    if obs.framing_error:
        return None, "undecodable"
    frames = obs.frames()
    if obs.closed:
        return None, "socket closed after other frames" if frames else "socket closed"
    return None, "carried on" if frames else "silent, connection open"


def judge(run: Run, expect: Expect | None, rss_limit: int, protocol: str = "0-9-1") -> Verdict:
    out = run.outcome
    if out.crashed:
        return Verdict("crash", code=out.returncode, condition=crash_condition(out), reason=out.summary())
    if rss_limit and run.rss_peak > rss_limit:
        return Verdict("memory", reason=f"driver RSS {run.rss_peak >> 20} MB over the limit {rss_limit >> 20} MB")
    if out.killed:
        return Verdict("hang", reason="the driver was still running at the example's deadline: " + out.summary())
    if not applies(expect, run):
        return ALLOWED
    assert expect is not None
    if protocol == "1.0":
        from .server_oracles10 import judge10

        return judge10(run, expect)
    verifier = verifier_091(expect)
    if verifier.accepts(run.after):
        return ALLOWED
    code, what = reaction_091(run.after)
    return Verdict("wrong-code", code=code, condition=what, clauses=tuple(expect.clauses),
                   reason=f"after {expect.why}: expected {verifier.describe()}; observed "
                          f"{run.after.describe().replace('by broker', 'by the client')}")


class RssWatch:
    """Peak resident set size of a driver: its process and every process of its session (the
    driver runs in a session of its own, so an interpreter a script started counts too),
    sampled by a thread of its own every ``every`` seconds while the example runs (the
    conversation may block in one long read) and by :meth:`sample` at the serve loop's steps."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        self.pid = pid
        self.peak = 0
        self.every = every
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "RssWatch":
        self._thread = threading.Thread(target=self._loop, daemon=True, name="driver-rss")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def sample(self) -> int:
        total = 0
        for pid in self._members():
            total += _rss(pid)
        self.peak = max(self.peak, total)
        return total

    def _members(self) -> list[int]:
        found = [self.pid]
        try:
            names = os.listdir("/proc")
        except OSError:
            return found
        for name in names:
            if not name.isdigit() or int(name) == self.pid:
                continue
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[-1].split()
            if len(fields) > 3 and fields[3] == str(self.pid):   # session id
                found.append(int(name))
        return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


__all__ = ["Run", "judge", "crash_condition", "RssWatch", "CloseOk", "verifier_091", "applies", "reaction_091"]
