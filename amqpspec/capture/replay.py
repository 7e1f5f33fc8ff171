"""Replaying a transcript: the client's side re-sent to a broker, its answers compared with the record.

The client's octets go out as recorded, with three exceptions, all re-encoded with the codecs:
the SASL response (masked in every transcript) carries the replay URL's credentials; a name
the broker generated in the recording is replaced by the one it generates now; and with a
URL that names a virtual host, connection.open asks for that one.

Timing (``--timing``): ``fast`` sends the next client frame as soon as the broker's answers
that preceded it in the recording have arrived (or a short wait passed: a missing answer is
reported at the end, where it is certain); ``original`` keeps the recorded gaps between
client sends, each capped, and still sends nothing before the answers the client had received
when it sent (it may use a name one of them carried). Either way every wait is bounded, by ``answer_timeout``, by the
recorded gaps and by the replay's overall deadline, and what the broker sends is read by one
bounded reader thread per connection: a broker that floods, lies about sizes or goes silent
ends the replay with a divergence, never a hang.

The first difference ends the replay (:class:`Divergence`); see :mod:`amqpspec.capture.compare`
for what counts as a difference.
"""
from __future__ import annotations

import functools
import queue
import socket
import ssl
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.capture.codec import (
    PROTOCOL_091,
    SaslState,
    StreamDecoder,
    Unit,
    decode_one,
    substitute_credentials,
)
from amqpspec.capture.compare import CONNECTION_LANE, Comparator, Frame, is_heartbeat, lane_label, lane_of, name_of
from amqpspec.capture.settle import Ledger
from amqpspec.capture.transcripts import TranscriptFile, close_event, incomplete
from amqpspec.errors import ConnectError, UsageError
from amqpspec.target import Target
from amqpspec.wire.amqp091 import frames as f091

READ_SIZE = 65536
MAX_LIVE_BYTES = 16 << 20      # per connection, plus 4x what the recording received: a flood stops being read
TIMINGS = ("fast", "original")
DRAIN_CHUNKS = 16    # chunks taken in past a wait's end (what had already arrived)
COALESCE_S = 0.002   # client sends this close together, with no answer between, go out in one write (fast timing)


@dataclass
class ReplayOptions:
    timing: str = "fast"
    answer_timeout: float = 2.0    # the wait for answers that do not come, before moving on
    max_gap: float = 10.0          # the longest recorded gap honoured (original timing, and end waits)
    deadline: float = 120.0        # the whole replay
    connect_timeout: float = 10.0
    ignore: list[str] = field(default_factory=list)   # more FRAME.FIELD to leave out of the comparison
    strict: bool = False           # differences in racy counts (compare.SOFT_091) diverge too
    cleanup: bool | None = None    # delete what the client declares, before and after; None: for the suite's own


@dataclass
class Divergence:
    """The first point where the live broker did not answer as recorded."""

    conn: int
    reason: str                    # one line
    recorded: Frame | None = None
    live: Unit | None = None
    details: list[str] = field(default_factory=list)
    at: float = 0.0                # seconds into the replay

    def lines(self) -> list[str]:
        out = [f"DIVERGENCE on connection {self.conn}: {self.reason}"]
        lane = self.recorded.lane if self.recorded is not None else None
        where = f" ({lane_label(lane)}, frame #{self.recorded.index + 1} on it)" \
            if lane is not None and lane != CONNECTION_LANE and self.recorded is not None \
            and self.recorded.index >= 0 else ""
        out.append(f"  recorded{where}: {self.recorded.summary if self.recorded else 'nothing'}")
        out.append(f"  live:     {self.live.summary if self.live else 'nothing'}")
        out += [f"    {d}" for d in self.details]
        if self.recorded is not None and self.recorded.unit.raw:
            out.append(f"  recorded octets: {_hex(self.recorded.unit.raw)}")
        if self.live is not None and self.live.raw:
            out.append(f"  live octets:     {_hex(self.live.raw)}")
        return out


def _hex(data: bytes, limit: int = 96) -> str:
    return data[:limit].hex() + (f"... ({len(data)} octets)" if len(data) > limit else "")


@dataclass
class Report:
    divergence: Divergence | None
    compared: int = 0
    connections: int = 0
    notes: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)   # what was sent and received, decoded (for -v)
    elapsed: float = 0.0

    @property
    def same(self) -> bool:
        return self.divergence is None


# ---------------------------------------------------------------------------- the plan

@dataclass
class Step:
    kind: str            # "connect", "send", "shutdown"
    conn: int
    t: float
    index: int           # position in the transcript
    raw: bytes = b""
    summary: str = ""
    redacted: bool = False
    refused: bool = False  # a login the recording shows refused: its masked response is sent as is


@dataclass
class Expected:
    """What the recording says one connection receives."""

    frames: list[tuple[int, Frame]] = field(default_factory=list)     # (entry index, frame) compared in order
    weights: list[tuple[int, int, float]] = field(default_factory=list)  # (entry index, weight, t) of all units
    settled: dict[tuple[int, str, int], tuple[int, Frame]] = field(default_factory=dict)  # (lane, key, id) -> first
    lanes: dict[int, list[Frame]] = field(default_factory=lambda: defaultdict(list))
    broker_close: tuple[str, int] | None = None                          # (how, entry index)
    client_close: int | None = None                                      # entry index
    last_index: int = -1                                                 # last entry of the connection
    cutoff: int | None = None                                            # first entry that is incomplete
    ledger: Any = None                                                   # the recorded settlements (settle.Ledger)

    def before(self, index: int) -> int:
        """How much the recording had received before entry ``index`` (a frame weighs 1, a settlement its ids)."""
        return sum(w for i, w, _ in self.weights if i < index)

    def owed(self) -> int:
        return self.before(self.cutoff) if self.cutoff is not None else sum(w for _, w, _ in self.weights)

    @property
    def last_t(self) -> float:
        return self.weights[-1][2] if self.weights else 0.0


def plan(tf: TranscriptFile) -> tuple[list[Step], dict[int, Expected]]:
    """Client steps in recorded order, and per connection the answers the recording holds."""
    protocol = tf.protocol
    steps: list[Step] = []
    expected: dict[int, Expected] = {}
    connected: set[int] = set()
    for i, e in enumerate(tf.entries):
        conn = int(e.get("conn", 0))
        t = float(e.get("t", 0.0))
        exp = expected.setdefault(conn, Expected())
        d = e.get("dir")
        if d == "event":
            summary = str(e.get("summary", ""))
            ce = close_event(e)
            if summary.startswith("connected to") and conn not in connected:
                steps.append(Step("connect", conn, t, i))
                connected.add(conn)
            elif ce is not None and ce[0] == "broker" and exp.broker_close is None:
                exp.broker_close = (ce[1], i)
            elif ce is not None and ce[0] == "client" and exp.client_close is None:
                steps.append(Step("shutdown", conn, t, i))
                exp.client_close = i
            if incomplete([e]) and exp.cutoff is None:
                exp.cutoff = i
            continue
        if d not in ("send", "recv"):
            continue
        exp.last_index = i
        if incomplete([e]):
            if d == "send":
                raise UsageError(f"the transcript kept only a prefix of a frame sent at t={t:.3f} (connection {conn}): "
                                 "it cannot be replayed past that point")
            if exp.cutoff is None:
                exp.cutoff = i
        if d == "send":
            if conn not in connected:
                steps.append(Step("connect", conn, t, i))
                connected.add(conn)
            steps.append(Step("send", conn, t, i, bytes.fromhex(e.get("hex") or ""), str(e.get("summary", "")),
                              bool(e.get("redacted"))))
    for conn, exp in expected.items():
        dec = StreamDecoder(protocol, client=False)
        pending: list[tuple[int, float, Unit]] = []
        for i, e in enumerate(tf.entries):
            if e.get("dir") != "recv" or int(e.get("conn", 0)) != conn:
                continue
            pending += [(i, float(e.get("t", 0.0)), u) for u in dec.feed(bytes.fromhex(e.get("hex") or ""))]
        if pending:
            last_i, last_t, _ = pending[-1]
            pending += [(last_i, last_t, u) for u in dec.flush()]
        ledger = Ledger(protocol)
        for i, t, u in pending:
            if is_heartbeat(protocol, u.item):
                continue
            lane = lane_of(protocol, u.item)
            settlement = ledger.expand(lane, u.item)
            if settlement is not None:
                fr = Frame(conn, lane, -1, t, u)
                for sid in settlement.ids:
                    exp.settled.setdefault((lane, settlement.key, sid), (i, fr))
                exp.weights.append((i, len(settlement.ids), t))
                continue
            fr = Frame(conn, lane, len(exp.lanes[lane]), t, u)
            exp.lanes[lane].append(fr)
            exp.frames.append((i, fr))
            exp.weights.append((i, 1, t))
        exp.ledger = ledger
    for step in steps:
        if step.redacted:
            step.refused = _login_refused(protocol, step, expected[step.conn])
    return steps, {c: e for c, e in expected.items() if any(s.conn == c for s in steps)}


def _login_refused(protocol: str, step: Step, exp: Expected) -> bool:
    """Whether the recording shows the broker refusing the credentials this frame carried.

    A case that sends a wrong password on purpose must send a wrong one again: the masked
    response (asterisks) is one. Any other login gets the replay URL's credentials.
    """
    answer = next((fr for i, fr in exp.frames if i > step.index), None)
    item = answer.unit.item if answer is not None else None
    if protocol == PROTOCOL_091:
        return not (isinstance(item, f091.MethodFrame) and item.method.NAME in ("connection.tune", "connection.secure"))
    body = getattr(item, "body", None)
    name = getattr(body, "NAME", None)
    if name == "sasl-challenge":
        return False
    return not (name == "sasl-outcome" and int(getattr(body, "code", 1) or 0) == 0)


# ---------------------------------------------------------------------------- live connections

class LiveConn:
    """One connection to the broker: a socket and a bounded reader thread feeding a shared queue."""

    def __init__(self, conn: int, sock: socket.socket, events: "queue.Queue[tuple[int, float, Any]]",
                 max_bytes: int = MAX_LIVE_BYTES) -> None:
        self.conn = conn
        self.max_bytes = max_bytes
        self.sock = sock
        self.events = events
        self.stop = threading.Event()
        self.closed: str | None = None         # "fin", "rst", "tls-error", "flood" when the broker side ended
        self.closed_at: float | None = None
        self.shut_write = False
        self.half_close_skipped = False   # TLS: the client's FIN could not be reproduced
        self.received = 0
        self.thread = threading.Thread(target=self._read, name=f"replay-c{conn}", daemon=True)
        self.thread.start()

    def _read(self) -> None:
        total = 0
        while not self.stop.is_set():
            try:
                self.sock.settimeout(0.2)
                data = self.sock.recv(READ_SIZE)
            except (socket.timeout, TimeoutError, ssl.SSLWantReadError):
                continue
            except ssl.SSLError as exc:
                self.events.put((self.conn, time.monotonic(), ("closed", f"tls-error: {exc.reason or exc}")))
                return
            except OSError as exc:
                if self.stop.is_set():
                    return
                self.events.put((self.conn, time.monotonic(), ("closed", f"rst: {exc.strerror or exc}")))
                return
            if not data:
                self.events.put((self.conn, time.monotonic(), ("closed", "fin")))
                return
            total += len(data)
            self.events.put((self.conn, time.monotonic(), data))
            if total > self.max_bytes:
                self.events.put((self.conn, time.monotonic(), ("closed", f"flood: more than {self.max_bytes} octets")))
                return

    def send(self, data: bytes, timeout: float) -> str | None:
        """None when sent, else why not (the broker closed: recorded, not raised)."""
        try:
            self.sock.settimeout(max(timeout, 0.05))
            self.sock.sendall(data)
            return None
        except (OSError, ssl.SSLError) as exc:
            return f"{type(exc).__name__}: {exc}"

    def shutdown_write(self) -> None:
        self.shut_write = True
        try:
            if isinstance(self.sock, ssl.SSLSocket):
                self.half_close_skipped = True  # a TLS half-close is not portable: the replay just stops sending
                return
            self.sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.stop.set()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
        self.thread.join(timeout=1.0)


# ---------------------------------------------------------------------------- the replay

class Replayer:
    """Runs one replay; :meth:`run` returns a :class:`Report` and never raises for broker behaviour."""

    def __init__(self, tf: TranscriptFile, target: Target, options: ReplayOptions | None = None,
                 on_line: Callable[[str], None] | None = None, vhost_override: bool = False) -> None:
        if tf.protocol not in ("0-9-1", "1.0"):
            raise UsageError(f"unknown protocol {tf.protocol!r} in the transcript")
        self.tf = tf
        self.protocol = tf.protocol
        self.target = target
        self.opts = options or ReplayOptions()
        if self.opts.timing not in TIMINGS:
            raise UsageError(f"--timing must be one of {', '.join(TIMINGS)}")
        self.on_line = on_line
        self.vhost_override = vhost_override
        self.steps, self.expected = plan(tf)
        if not any(s.kind == "send" for s in self.steps):
            raise UsageError("the transcript holds nothing the client sent: nothing to replay")
        self.cmp = Comparator(self.protocol, ignore=set(self.opts.ignore), strict=self.opts.strict)
        self.events: queue.Queue[tuple[int, float, Any]] = queue.Queue()
        self.live: dict[int, LiveConn] = {}
        self.decoders: dict[int, StreamDecoder] = {}
        self.send_decoders: dict[int, StreamDecoder] = {}
        self.sasl: dict[int, SaslState] = defaultdict(SaslState)
        self.got: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))   # conn -> lane -> count
        self.got_total: dict[int, int] = defaultdict(int)
        self.ledgers: dict[int, Ledger] = {}
        self.stepped_at: dict[int, float] = {}   # conn -> when its last step was carried out
        self.live_tune: dict[int, Any] = {}      # conn -> the live connection.tune
        self.progress: dict[int, int] = defaultdict(lambda: -1)   # conn -> last entry index replayed
        self.report = Report(None, connections=len(self.expected))
        self.own: Any = None                                     # cleanup.Declared: the suite's own names
        self.others: Any = None                                  # ... the other names the file declares
        self.absent_before: tuple[set[str], set[str]] = (set(), set())
        self.declares: dict[tuple[int, int], list[Any]] = defaultdict(list)   # (conn, channel) -> declared names
        self.generated: list[str] = []                           # queue names the broker made for the replay
        self.start = 0.0
        self.deadline = 0.0

    # -- output ------------------------------------------------------------------------------
    def _log(self, conn: int, arrow: str, text: str) -> None:
        line = f"{time.monotonic() - self.start:8.3f} c{conn} {arrow} {text}"
        self.report.log.append(line)
        if self.on_line is not None:
            self.on_line(line)

    def _note(self, text: str) -> None:
        if text not in self.report.notes:
            self.report.notes.append(text)

    # -- main loop ---------------------------------------------------------------------------
    def run(self) -> Report:
        framed = {c for c in self.tf.connections()}
        driven = sorted({int(e.get("conn", 0)) for e in self.tf.entries if e.get("dir") == "event"} - framed - {0})
        if driven:
            self._note(f"connection(s) {', '.join(map(str, driven))} of the recording have events but no frames (a client "
                       "library drove them): they are not replayed, and what depended on them may diverge")
        why = incomplete(self.tf.entries)
        if why:
            self._note(f"the transcript is incomplete ({why}): answers past that point are not compared")
        self._cleanup_before()
        self.start = time.monotonic()
        self.deadline = self.start + self.opts.deadline
        try:
            self._run_steps()
            if self.report.divergence is None:
                self._finish()
        finally:
            for lc in self.live.values():
                lc.close()
            self.report.elapsed = time.monotonic() - self.start
            self._cleanup_after()
            for soft in self.cmp.soft[:5]:
                self._note(f"differs, not compared: {soft}")
            if len(self.cmp.soft) > 5:
                self._note(f"{len(self.cmp.soft) - 5} more such count differences")
        return self.report

    # -- cleanup (see amqpspec.capture.cleanup for what may be deleted) -----------------------
    def _cleanup_before(self) -> None:
        """Deletes the suite's own names the file declares, and asks which of its other names
        exist: those that do not, and exist after the replay, are the replay's to delete."""
        from amqpspec import brokerops
        from amqpspec.capture import cleanup

        wanted = self.opts.cleanup
        if wanted is None:
            wanted = self.tf.source.startswith(("result", "finding"))
        names = cleanup.declared(self.tf) if wanted else None
        if not names or not brokerops.can_delete(self.target, self.protocol):
            return
        self.own, self.others = cleanup.split(names)
        problem = brokerops.delete(self.target, self.own.queues, self.own.exchanges)
        if problem:
            self._note(f"could not delete the suite's queues/exchanges before the replay: {problem}")
        if self.others:
            gone_q, gone_x, problem = brokerops.absent(self.target, self.others.queues, self.others.exchanges)
            self.absent_before = (gone_q, gone_x)
            if problem:
                self._note(f"could not tell which of the recorded client's queues/exchanges exist: {problem} "
                           "(those not known to be new are kept)")

    def _cleanup_after(self) -> None:
        from amqpspec import brokerops
        from amqpspec.capture import cleanup

        if self.own is None:
            return
        problems = [brokerops.delete(self.target, self.own.queues, self.own.exchanges)]
        new = cleanup.created(self.others, *self.absent_before, self.generated)
        if new:
            problems.append(brokerops.delete(self.target, new.queues, new.exchanges, if_unused=True, if_empty=True))
        problem = "; ".join(p for p in problems if p)
        if problem:
            self._note(f"could not delete the queues/exchanges of the replay after it: {problem}")
        kept = [q for q in self.others.queues if q not in new.queues] + \
            [x for x in self.others.exchanges if x not in new.exchanges]
        self._note(f"cleanup: the suite's own {len(self.own.queues)} queue(s) and {len(self.own.exchanges)} "
                   f"exchange(s) deleted before and after the replay; {len(new.queues)} queue(s) and "
                   f"{len(new.exchanges)} exchange(s) the replay created deleted if unused and empty"
                   + (f"; {len(kept)} other name(s) the recorded client declares kept (they existed before the replay "
                      "or could not be checked)" if kept else "") + " (--no-cleanup deletes nothing)")

    def _track_generated(self, conn: int, item: Any, sent: bool) -> None:
        """Queues the broker names for the replay: a queue.declare-ok answering a declare with no
        name, matched on its channel (0-9-1 answers a channel's synchronous methods in order)."""
        if self.protocol != PROTOCOL_091 or not isinstance(item, f091.MethodFrame):
            return
        key, m = (conn, item.channel), item.method
        if sent and m.NAME == "queue.declare" and not getattr(m, "no_wait", False):
            self.declares[key].append(m.queue)
        elif not sent and m.NAME == "queue.declare-ok" and self.declares[key]:
            if self.declares[key].pop(0) == "" and isinstance(m.queue, str) and m.queue:
                self.generated.append(m.queue)
        elif m.NAME in ("channel.close", "channel.close-ok", "channel.open-ok"):
            self.declares[key].clear()  # a refused declare is answered by the close, not a declare-ok

    def _run_steps(self) -> None:
        prev_t: float | None = None
        prev_at = self.start
        i = 0
        while i < len(self.steps):
            step = self.steps[i]
            group = self._group(i)
            i += len(group)
            if self.report.divergence is not None:
                return
            gap = 0.0 if prev_t is None else max(0.0, step.t - prev_t)
            if self.opts.timing == "original":
                self._pump_until(prev_at + min(gap, self.opts.max_gap))
                # and never before the answers the client had when it sent: it may use what they
                # carry (a generated queue name in a reply-to), which a slower broker sends later
                self._pump_until(time.monotonic() + self.opts.answer_timeout,
                                 functools.partial(self._answers_in, step.index))
            else:
                bound = self.opts.answer_timeout + min(1.5 * gap, self.opts.max_gap)
                self._pump_until(time.monotonic() + bound, functools.partial(self._answers_in, step.index))
            if self.report.divergence is not None:
                return
            if time.monotonic() >= self.deadline:
                self._diverge(step.conn, "the replay's deadline passed before the client's side was all sent")
                return
            if len(group) > 1:
                self._send_group(group)
            else:
                self._do(step)
            prev_t, prev_at = group[-1].t, time.monotonic()
            self.progress[step.conn] = group[-1].index
            self.stepped_at[step.conn] = prev_at
            self._pump_until(time.monotonic())  # take in what is already there

    def _group(self, i: int) -> list[Step]:
        """Sends that the recording shows back to back (fast timing): written together, as the client did.

        A broker may answer differently when two frames arrive in one segment than when they
        arrive a few milliseconds apart (an end answered before a close arrives, or not).
        """
        first = self.steps[i]
        group = [first]
        if self.opts.timing != "fast" or first.kind != "send":
            return group
        for nxt in self.steps[i + 1:]:
            prev = group[-1]
            if nxt.kind != "send" or nxt.conn != first.conn or nxt.t - prev.t > COALESCE_S or nxt.redacted:
                break
            if any(exp.before(nxt.index) != exp.before(first.index) for exp in self.expected.values()):
                break
            group.append(nxt)
        return group

    def _send_group(self, group: list[Step]) -> None:
        lc = self.live.get(group[0].conn)
        if lc is None:
            self._connect(group[0])
            lc = self.live.get(group[0].conn)
            if lc is None:
                return
        parts = []
        for step in group:
            data, shown = self._prepare(step)
            self._log(step.conn, "->", shown)
            parts.append(data)
        if lc.shut_write or lc.closed is not None and lc.closed != "fin":
            self._log(group[0].conn, "**", "not sent: the connection is closed")
            return
        failed = lc.send(b"".join(parts), max(0.05, self.deadline - time.monotonic()))
        if failed:
            self._log(group[0].conn, "**", f"send failed: {failed}")

    def _answers_in(self, index: int) -> bool:
        """Every connection has received what the recording had received before entry ``index``."""
        for conn, exp in self.expected.items():
            if conn not in self.live:
                continue
            want = exp.before(index if exp.cutoff is None else min(index, exp.cutoff))
            if self.got_total[conn] < want and self.live[conn].closed is None:
                return False
        return True

    def _do(self, step: Step) -> None:
        if step.kind == "connect":
            self._connect(step)
            return
        lc = self.live.get(step.conn)
        if lc is None:
            self._connect(step)
            lc = self.live.get(step.conn)
            if lc is None:
                return
        if step.kind == "shutdown":
            self._log(step.conn, "**", "client closes its side (FIN), as recorded")
            lc.shutdown_write()
            return
        data, shown = self._prepare(step)
        if lc.shut_write or lc.closed is not None and lc.closed != "fin":
            self._log(step.conn, "->", f"{shown} [not sent: the connection is closed]")
            return
        self._log(step.conn, "->", shown)
        failed = lc.send(data, max(0.05, self.deadline - time.monotonic()))
        if failed:
            self._log(step.conn, "**", f"send failed: {failed}")

    def _prepare(self, step: Step) -> tuple[bytes, str]:
        """The octets to send for a recorded client entry, and how to show them (never a secret)."""
        data = step.raw
        shown = step.summary
        if step.redacted:
            data, note = substitute_credentials(self.protocol, data, self.target.username,
                                                self.target.password.reveal(), self.sasl[step.conn], step.refused,
                                                anonymous=not self.target.credentials_given)
            self._note(note)
        else:
            data = self._tune_ok(step.conn, self._vhost(self.cmp.rewrite(self.protocol, data)))
            if data != step.raw:
                shown = self._describe_sent(data) or shown
        self._track_sent(step.conn, data)
        return data, shown

    def _describe_sent(self, data: bytes) -> str | None:
        item = decode_one(self.protocol, data, client=True)
        return None if item is None else f"{item.summary()} [changed for the live broker]"

    def _vhost(self, data: bytes) -> bytes:
        """With a URL naming a virtual host, connection.open asks for it."""
        if not self.vhost_override or self.protocol != PROTOCOL_091:
            return data
        item = decode_one(self.protocol, data, client=True)
        if isinstance(item, f091.MethodFrame) and item.method.NAME == "connection.open" \
                and item.method.virtual_host != self.target.vhost:
            self._note(f"connection.open asks for virtual host {self.target.vhost!r} (replay URL) instead of "
                       f"{item.method.virtual_host!r}")
            from dataclasses import replace

            return replace(item, method=item.method.replace(virtual_host=self.target.vhost)).encode()
        return data

    def _tune_ok(self, conn: int, data: bytes) -> bytes:
        """connection.tune-ok answers the live connection.tune the way the recorded one answered the recorded tune.

        A client that took the broker's proposal takes the live one; one that asked for less keeps
        asking for less (within the live limit); a value above the proposal -- a case testing the
        broker's limits -- is sent as recorded.
        """
        if self.protocol != PROTOCOL_091 or conn not in self.live_tune:
            return data
        item = decode_one(self.protocol, data, client=True)
        if not (isinstance(item, f091.MethodFrame) and item.method.NAME == "connection.tune-ok"):
            return data
        exp = self.expected.get(conn)
        recorded = next((fr.unit.item.method for _, fr in exp.frames if isinstance(fr.unit.item, f091.MethodFrame)
                         and fr.unit.item.method.NAME == "connection.tune"), None) if exp else None
        if recorded is None:
            return data
        live = self.live_tune[conn]
        changes: dict[str, int] = {}
        for attr in ("channel_max", "frame_max", "heartbeat"):
            rec_prop, rec_ok, live_prop = getattr(recorded, attr), getattr(item.method, attr), getattr(live, attr)
            if not all(isinstance(v, int) for v in (rec_prop, rec_ok, live_prop)):
                continue
            if rec_ok == rec_prop:
                new = live_prop
            elif 0 < rec_ok and (rec_prop == 0 or rec_ok < rec_prop):
                new = rec_ok if live_prop == 0 or rec_ok <= live_prop else live_prop
            else:
                continue
            if new != rec_ok:
                changes[attr] = new
        if not changes:
            return data
        self._note("connection.tune-ok follows the live connection.tune as the recorded one followed the recorded tune: "
                   + ", ".join(f"{k.replace('_', '-')} {v} (recorded {getattr(item.method, k)})" for k, v in changes.items()))
        from dataclasses import replace

        return replace(item, method=item.method.replace(**changes)).encode()

    def _track_sent(self, conn: int, data: bytes) -> None:
        dec = self.send_decoders.setdefault(conn, StreamDecoder(self.protocol, client=True))
        for u in dec.feed(data):
            if u.item is not None:
                self.cmp.sent(conn, u.item)
                self._track_generated(conn, u.item, sent=True)

    def _connect(self, step: Step) -> None:
        left = max(0.1, min(self.opts.connect_timeout, self.deadline - time.monotonic()))
        try:
            sock = self.target.open_socket(timeout=left)
        except (OSError, ssl.SSLError) as exc:
            reason = f"cannot connect to {self.target.host}:{self.target.port}: {getattr(exc, 'strerror', None) or exc}"
            if not self.live:
                raise ConnectError(reason) from None
            self._diverge(step.conn, f"the recording opened connection {step.conn}; live: {reason}")
            return
        recorded = sum(len(e.get("hex") or "") // 2 for e in self.tf.entries
                       if e.get("dir") == "recv" and int(e.get("conn", 0)) == step.conn)
        self.live[step.conn] = LiveConn(step.conn, sock, self.events, MAX_LIVE_BYTES + 4 * recorded)
        self.decoders[step.conn] = StreamDecoder(self.protocol, client=False)
        self._log(step.conn, "**", f"connected to {self.target.host}:{self.target.port}{' (TLS)' if self.target.tls else ''}")

    # -- receiving ---------------------------------------------------------------------------
    def _pump_until(self, until: float, done: Callable[[], bool] | None = None) -> None:
        """Takes in what the broker sends until ``until`` (or ``done``); past it, at most a few chunks more."""
        until = min(until, self.deadline)
        late = 0
        while self.report.divergence is None:
            if done is not None and done():
                return
            left = until - time.monotonic()
            try:
                if left > 0:
                    conn, at, what = self.events.get(timeout=min(left, 0.05))
                else:
                    late += 1
                    if late > DRAIN_CHUNKS:
                        return  # a flood must not keep the replay here
                    conn, at, what = self.events.get_nowait()
            except queue.Empty:
                if left <= 0:
                    return
                continue
            self._take(conn, at, what)

    def _take(self, conn: int, at: float, what: Any) -> None:
        lc = self.live.get(conn)
        if lc is None:
            return
        if isinstance(what, tuple):
            for u in self.decoders[conn].flush():
                self._compare(conn, u)
                if self.report.divergence is not None:
                    return
            lc.closed, lc.closed_at = what[1], at
            self._log(conn, "**", f"socket closed by the broker ({what[1]})")
            self._check_close(conn)
            return
        for u in self.decoders[conn].feed(what):
            self._compare(conn, u)
            if self.report.divergence is not None:
                return

    def _compare(self, conn: int, u: Unit) -> None:
        if is_heartbeat(self.protocol, u.item):
            return
        self._log(conn, "<-", u.summary)
        self._track_generated(conn, u.item, sent=False)
        if isinstance(u.item, f091.MethodFrame) and u.item.method.NAME == "connection.tune":
            self.live_tune[conn] = u.item.method
        exp = self.expected.get(conn)
        lane = lane_of(self.protocol, u.item)
        settlement = self.ledgers.setdefault(conn, Ledger(self.protocol)).expand(lane, u.item)
        if settlement is not None:
            self.got_total[conn] += len(settlement.ids)
            if exp is not None:
                self._compare_settlement(conn, exp, lane, settlement, u)
            return
        i = self.got[conn][lane]
        self.got[conn][lane] += 1
        self.got_total[conn] += 1
        if exp is None:
            return
        recorded = exp.lanes.get(lane, [])
        if exp.cutoff is not None:
            uncertain = [fr for idx, fr in exp.frames if idx >= exp.cutoff]
            if i >= len(recorded) or recorded[i] in uncertain:
                return  # past the recorded part: nothing to compare with
        if i >= len(recorded) and self._after_recording(conn, exp):
            self._note(f"connection {conn}: frames the broker sent after the recording ended are not compared "
                       f"(the first: {u.summary[:100]})")
            return
        if i >= len(recorded):
            where = lane_label(lane)
            what = f"undecodable octets ({u.summary[:160]})" if u.item is None else "a frame"
            self._diverge(conn, f"the broker sent {what} on {where} that the recording does not have", None, u)
            return
        self.report.compared += 1
        diffs = self.cmp.differences(conn, recorded[i].unit, u)
        if diffs:
            rname, lname = name_of(recorded[i].unit.item), name_of(u.item)
            reason = f"{lname} differs from the recorded one" if rname == lname \
                else f"the broker sent {lname} where the recording has {rname}"
            self._diverge(conn, reason, recorded[i], u, diffs)

    def _compare_settlement(self, conn: int, exp: Expected, lane: int, settlement: Any, u: Unit) -> None:
        book = exp.ledger.seen.get((lane, settlement.key), {}) if exp.ledger is not None else {}
        for sid in settlement.ids:
            first = exp.settled.get((lane, settlement.key, sid))
            if first is not None and exp.cutoff is not None and first[0] >= exp.cutoff:
                continue
            if sid not in book:
                if exp.cutoff is not None:
                    continue
                self._diverge(conn, f"the broker settled delivery {sid} ({settlement.key}: {settlement.outcome}), "
                                    "which the recording never shows settled", None, u)
                return
            if settlement.outcome not in book[sid]:
                self.report.compared += 1
                self._diverge(conn, f"delivery {sid} settled differently ({settlement.key})", first[1] if first else None,
                              u, [f"recorded: {' or '.join(sorted(book[sid]))}", f"live: {settlement.outcome}"])
                return
        self.report.compared += 1

    def _after_recording(self, conn: int, exp: Expected) -> bool:
        """The recording ended with this connection open and the replay has sent all of it: what the
        broker sends now is what the recorded client did not stay to read."""
        if exp.broker_close is not None or exp.client_close is not None:
            return False
        last_send = max((s.index for s in self.steps if s.conn == conn), default=-1)
        return self.progress[conn] >= last_send

    def _check_close(self, conn: int) -> None:
        """A broker that closes where the recording shows none, before the recording ended, diverges."""
        exp = self.expected.get(conn)
        if exp is None or exp.broker_close is not None or exp.cutoff is not None:
            return
        lc = self.live[conn]
        if exp.client_close is not None and lc.shut_write:
            return  # the client ended the connection, as recorded: the broker closing then is expected
        all_sent = self.progress[conn] >= max((s.index for s in self.steps if s.conn == conn), default=-1)
        all_received = self.got_total[conn] >= exp.owed()
        if all_sent and all_received:
            return  # the recording ended with the connection open: what came after was not recorded
        self._diverge(conn, f"the broker closed the socket ({lc.closed}) where the recording shows the connection open")

    def _finish(self) -> None:
        """After the last send: wait for the answers and socket closes still owed, then judge."""
        now = time.monotonic()
        until = now + self.opts.answer_timeout
        for conn, exp in self.expected.items():
            # what the recording shows after this connection's last step, as long again (and a half) from ours
            last = max((s for s in self.steps if s.conn == conn), key=lambda s: s.index, default=None)
            owed_t = exp.last_t
            if exp.broker_close is not None:
                owed_t = max(owed_t, float(self.tf.entries[exp.broker_close[1]].get("t", 0.0)))
            if last is not None and owed_t > last.t:
                at = self.stepped_at.get(conn, now)
                until = max(until, at + min(1.5 * (owed_t - last.t), self.opts.max_gap) + self.opts.answer_timeout)
        wait = until - now
        self._pump_until(until, self._all_done)
        if self.report.divergence is not None:
            return
        # answers owed: the earliest recorded one that did not come
        missing: list[Frame] = []
        for conn, exp in self.expected.items():
            if conn not in self.live:
                continue
            for lane, frames in exp.lanes.items():
                n = self.got[conn][lane]
                for fr in frames[n:]:
                    idx = next(i for i, f in exp.frames if f is fr)
                    if exp.cutoff is None or idx < exp.cutoff:
                        missing.append(fr)
                        break
            live_book = self.ledgers.get(conn, Ledger(self.protocol)).seen
            for (lane, key, sid), (idx, fr) in sorted(exp.settled.items(), key=lambda kv: kv[1][0]):
                if (exp.cutoff is None or idx < exp.cutoff) and sid not in live_book.get((lane, key), {}):
                    missing.append(Frame(fr.conn, fr.lane, fr.index, fr.t,
                                         Unit(fr.unit.raw, fr.unit.item, f"{fr.unit.summary} [delivery {sid}]")))
                    break
        if missing:
            first = min(missing, key=lambda fr: fr.t)
            lc = self.live[first.conn]
            state = f"the broker closed the socket ({lc.closed})" if lc.closed else "the connection is still open"
            live = Unit(b"", None, f"nothing; socket closed by the broker ({lc.closed})") if lc.closed else None
            self._diverge(first.conn, f"a recorded answer never came ({state}; waited up to {wait:.1f}s)", first, live)
            return
        for conn, exp in self.expected.items():
            owner = self.live.get(conn)
            if owner is None or exp.broker_close is None or exp.cutoff is not None:
                continue
            lc = owner
            if lc.closed is None and lc.half_close_skipped and exp.client_close is not None \
                    and exp.client_close < exp.broker_close[1]:
                self._note(f"connection {conn}: the recorded client closed its side first, which a replay over TLS "
                           "cannot do; the broker's close that followed is not compared")
                continue
            if lc.closed is None:
                fr = Frame(conn, -1, 0, 0.0, Unit(b"", None, f"socket closed by the broker ({exp.broker_close[0]})"))
                self._diverge(conn, f"the recording shows the broker closing the socket ({exp.broker_close[0]}); "
                                    f"live it was still open after {wait:.1f}s", fr, None)
                return
            if lc.closed.split(":")[0] != exp.broker_close[0]:
                self._note(f"connection {conn}: closed by the broker with {lc.closed.split(':')[0]}, recorded "
                           f"{exp.broker_close[0]} (not compared: FIN or RST after a close races with unread data)")

    def _all_done(self) -> bool:
        for conn, exp in self.expected.items():
            lc = self.live.get(conn)
            if lc is None:
                continue
            owed = exp.owed()
            if self.got_total[conn] < owed and lc.closed is None:
                return False
            if exp.broker_close is not None and exp.cutoff is None and lc.closed is None \
                    and not (lc.half_close_skipped and exp.client_close is not None
                             and exp.client_close < exp.broker_close[1]):
                return False
        return True

    def _diverge(self, conn: int, reason: str, recorded: Frame | None = None, live: Unit | None = None,
                 details: list[str] | None = None) -> None:
        if self.report.divergence is None:
            self.report.divergence = Divergence(conn, reason, recorded, live, details or [],
                                                time.monotonic() - self.start)


def replay(tf: TranscriptFile, target: Target, options: ReplayOptions | None = None,
           on_line: Callable[[str], None] | None = None, vhost_override: bool = False) -> Report:
    return Replayer(tf, target, options, on_line, vhost_override).run()
