"""Oracles: how the fuzzer tells an allowed reaction from a problem.

Per example (:func:`classify`), against the expectation computed from the octets sent:

* ``decode-error-by-broker``: the broker's own octets do not decode (a frame-end other than
  0xCE, a frame over the limit we negotiated, a payload our bounded decoder refuses in every
  reading of the field-table codes);
* ``hang``: a reaction is due and nothing came before the deadline -- no close, and the probes
  sent after the stimulus unanswered;
* ``reset-without-close``: the socket ended where a close method (0-9-1 connection.close, 1.0
  close) or, for a protocol header, a header was required;
* ``wrong-code``: any other reaction the spec does not allow: another reply code or error
  condition, a close method where a silent close is required, carrying on where an exception
  is required, or the reverse.

Across examples: ``liveness`` (a fresh, well-behaved client is no longer served, checked after
every example with :func:`amqpspec.brokerops.problem`), ``memory`` (:class:`MemoryMonitor`) and
``control-loss`` (:mod:`amqpspec.fuzz.control`).
"""
from __future__ import annotations

import ipaddress
import os
import time
from dataclasses import dataclass, field
from typing import Any

from amqpspec.target import Target
from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp10 import frames as f10

from .expectation import Expectation, close_code, close_method
from .management_api import ManagementAPI, ManagementError, mem_used

VIOLATIONS = ("hang", "reset-without-close", "wrong-code", "liveness", "memory", "control-loss", "invariant",
              "decode-error-by-broker")
FRAME_END_CLAUSE = {"0-9-1": ("amqp091:4.2.3/1",), "1.0": ()}
FRAME_SIZE_CLAUSE = {"0-9-1": ("amqp091:4.2.3/6",), "1.0": ("amqp10:2.7.1/4",)}


@dataclass
class Verdict:
    """The oracle's word on one example: ``violation`` is None when the reaction is allowed."""

    violation: str | None
    code: int | None = None
    condition: str | None = None
    clauses: tuple[str, ...] = ()
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.violation is None


ALLOWED = Verdict(None)


def broker_output_problem(obs: Any, protocol: str) -> tuple[str, tuple[str, ...]] | None:
    """Why the broker's own octets do not decode, with the clauses they break, or None."""
    if obs.framing_error:
        text = str(obs.framing_error)
        if "frame-end" in text:
            return text, FRAME_END_CLAUSE[protocol]
        if "more than" in text:
            return text, FRAME_SIZE_CLAUSE[protocol]
        return text, ()
    for item in obs.received:
        if protocol == "0-9-1" and isinstance(item, f091.MalformedFrame):
            if not _decodes_in_some_dialect(item) and not _beyond_our_limits(item.error):
                return item.error, ()
        if protocol == "1.0" and isinstance(item, f10.MalformedFrame):
            return item.error, ()
    return None


def _beyond_our_limits(error: str) -> bool:
    """Refused only by a bound of our decoder, not by the spec: 0-9-1 sets no limit on how deep
    tables nest (4.2.5.5), so a broker echoing a deep table (basic.return) sends valid octets."""
    return "nested deeper than" in error


def _decodes_in_some_dialect(item: Any) -> bool:
    from amqpspec.wire.amqp091.table import DIALECTS

    for dialect in {id(d): d for d in DIALECTS.values()}.values():
        if not isinstance(f091.decode_frame(item.type, item.channel, item.data, dialect), f091.MalformedFrame):
            return True
    return False


def classify(exp: Expectation, obs: Any, protocol: str) -> Verdict:
    """Whether the observed reaction is one the expectation allows; if not, which kind of
    violation it is (see the module docstring)."""
    problem = None if exp.foreign else broker_output_problem(obs, protocol)
    if problem is not None:
        return Verdict("decode-error-by-broker", clauses=problem[1], reason=f"the broker sent octets that do not decode: "
                                                                            f"{problem[0]}")
    if exp.verifier.accepts(obs):
        return ALLOWED
    code, condition = close_code(obs)
    expected = exp.describe()
    observed = obs.describe()
    method = close_method(obs)
    if method is not None:
        return Verdict("wrong-code", code, condition, exp.clauses, f"expected {expected}; observed {observed}")
    if obs.closed:
        kind = "reset-without-close" if exp.wants_close_method else "wrong-code"
        return Verdict(kind, code, condition, exp.clauses, f"expected {expected}; observed {observed}")
    due = bool(exp.awaits) or getattr(obs, "probes_sent", False)
    if not obs.probe_ok and not exp.may_wait and not (exp.silent_required and obs.frames()) \
            and (due or not obs.frames()):
        return Verdict("hang", None, None, exp.clauses,
                       f"expected {expected}; nothing decisive within {obs.elapsed:.1f}s: {observed}")
    return Verdict("wrong-code", code, condition, exp.clauses, f"expected {expected}; observed {observed}")


# ---------------------------------------------------------------------------- memory

def is_local_host(host: str) -> bool:
    """The broker runs on this machine as far as its address tells: ``localhost``, a loopback
    address (all of 127.0.0.0/8, ::1), or the unspecified address (which connects locally)."""
    if host.lower() == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as fh:
                next(fh)
                for line in fh:
                    parts = line.split()
                    if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(parts[9])
        except OSError:
            continue
    return inodes


def find_local_pid(port: int) -> int | None:
    """The pid of the local process listening on ``port`` (from /proc), or None."""
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    wanted = {f"socket:[{i}]" for i in inodes}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fd_dir = f"/proc/{entry}/fd"
        try:
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(f"{fd_dir}/{fd}") in wanted:
                        return int(entry)
                except OSError:
                    continue
        except OSError:
            continue
    return None


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def management_memory(api: ManagementAPI, timeout: float = 1.0) -> int | None:
    """The broker's own memory figure from the management API the user named, or None."""
    try:
        return mem_used(api, timeout)
    except ManagementError:
        return None


@dataclass
class MemoryMonitor:
    """The broker's memory over a campaign: from the management API when the user names one
    (``management``; read at most every ``api_interval`` seconds), else the local process's RSS
    when the broker listens on this machine (cheap enough to read after every example), else not
    measured. The API is never guessed from the broker's address: it gets credentials.

    Growth beyond ``limit`` octets over the baseline is a finding; the baseline then moves up,
    so one leak is reported once, not after every example that follows it."""

    target: Target
    limit: int = 512 << 20
    management: ManagementAPI | None = None
    api_interval: float = 2.0
    source: str = "not measured"
    pid: int | None = None
    baseline: int | None = None
    last: int | None = None
    peak: int | None = None
    _last_read: float = field(default=0.0, repr=False)

    def start(self) -> None:
        self.pid = None
        value: int | None = None
        if self.management is not None:
            self.management.register()   # a worker process has its own scrubber
            try:
                value = mem_used(self.management)
                self.source = self.management.describe()
                self._last_read = time.monotonic()
            except ManagementError as exc:
                self.source = f"not measured ({self.management.describe()}: {exc})"
        else:
            self.pid = find_local_pid(self.target.port) if is_local_host(self.target.host) else None
            value = rss_bytes(self.pid) if self.pid is not None else None
            if value is not None:
                self.source = f"RSS of local pid {self.pid}"
            else:
                self.pid = None
                self.source = "not measured"
        self.baseline = self.last = self.peak = value

    def read(self, force: bool = False) -> int | None:
        if self.pid is not None:
            value = rss_bytes(self.pid)
            if value is None:  # the process went away (restart): find the new one
                self.pid = find_local_pid(self.target.port)
                value = rss_bytes(self.pid) if self.pid is not None else None
            return value
        if self.management is not None and not self.source.startswith("not measured"):
            now = time.monotonic()
            if not force and now - self._last_read < self.api_interval:
                return None
            self._last_read = now
            return management_memory(self.management)
        return None

    def rebase(self) -> None:
        """After a restart: a new process, a new baseline."""
        self.start()

    def check(self) -> str:
        """Empty, or a description of growth past the limit (then the baseline moves up)."""
        value = self.read()
        if value is None or self.baseline is None:
            return ""
        self.last = value
        self.peak = max(self.peak or 0, value)
        grown = value - self.baseline
        if grown > self.limit:
            text = (f"broker memory grew by {grown >> 20} MiB (from {self.baseline >> 20} to {value >> 20} MiB, "
                    f"{self.source}), over the {self.limit >> 20} MiB limit")
            self.baseline = value
            return text
        return ""

    def describe(self) -> str:
        if self.baseline is None:
            return f"memory: {self.source}"
        return (f"memory: {self.source}, baseline {self.baseline >> 20} MiB, last {(self.last or 0) >> 20} MiB, "
                f"peak {(self.peak or 0) >> 20} MiB")


__all__ = ["VIOLATIONS", "Verdict", "classify", "broker_output_problem", "MemoryMonitor", "find_local_pid",
           "rss_bytes", "management_memory", "is_local_host"]
