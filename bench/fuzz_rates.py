"""Fuzzing speed against a real broker: amqpspec campaigns, a bare socket loop, boofuzz.

    python -m bench.fuzz_rates [URL] [--seconds 20] [--jobs 1 2] [--skip-boofuzz]
    python -m bench.fuzz_rates URL --protocol 1.0 [--seconds 20] [--targets NAME ...] [--repeat 3]

Rows (executions per second, higher is better):

* ``bare handshake``: a plain Python socket loop doing full handshake + close cycles
  (header, start-ok, tune-ok, open, close) -- the ceiling for a fresh-connection target;
* ``bare channel-error``: on one connection, channel.open, a passive queue.declare of a
  missing queue, channel.close 404, close-ok -- the ceiling for an in-connection target;
* ``amqpspec <target> jobs N``: a whole campaign (``Campaign``, as ``amqpspec fuzz`` runs it)
  of ``protocol-header`` (fresh connections) and ``channel-error`` (the same declare frame as a
  template target, in-connection), with every oracle on: close code, hang, reset, liveness,
  memory, the control pair;
* ``boofuzz channel-error``: boofuzz driving the same declare frame template (queue name and
  flags fuzzed), the handshake and channel.open done by a pre-send callback on each of its
  connections. boofuzz runs headless: no web UI (``web_port=None``), its case database in a
  temporary directory, no console logger.

Each row runs for ``--seconds``; the per-job rate of a campaign is the rate divided by jobs.

With ``--protocol 1.0`` (AMQP 1.0: RabbitMQ's plugin, the Qpid Proton example broker):

* ``bare open+begin+attach+detach``: a plain socket loop, each cycle on a fresh connection
  (SASL PLAIN where the URL has credentials, header, open, begin, attach, detach, close) -- the
  ceiling for a target that starts on a fresh connection;
* ``bare begin+end`` and ``bare attach+detach``: on one open connection (session), a session
  begun and ended, or a sending link attached and detached -- the ceilings of ``begin`` and
  ``attach``, whose every example sets up and tears down one session or link;
* ``bare transfer+disposition``: on one attached sending link, an unsettled transfer and the
  broker's disposition for it -- the ceiling for the targets that run on an open link;
* ``amqpspec <target>``: a whole campaign of that target (jobs 1, every oracle and the control
  pair on), *warm*: a first run of the same length fills a findings directory, the measured one
  runs on it (new signatures are shrunk, for up to 5 s each, and a campaign that starts from
  nothing spends its first minutes shrinking). Its rate is given as a ratio to the bare loop of
  the same kind, measured in the same run (``x bare``): on a shared machine the absolute rates
  move with the load, the ratio much less. ``--repeat N`` gives min and median of N. With
  ``--restart-command`` every measured row (the bare loops, each target) starts on a freshly
  restarted broker.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import socket
import struct
import sys
import tempfile
import time
from typing import Any, Callable

from amqpspec.peer.amqp091 import client_properties, sasl_plain
from amqpspec.target import Target
from amqpspec.wire.amqp091 import PROTOCOL_HEADER, MethodFrame, spec

DEFAULT_URL = "amqp://guest:guest@127.0.0.1:5672/"
MISSING = "amqpspec-bench-missing-queue"


# ---------------------------------------------------------------------------- bare loops

class _Conn:
    """A minimal AMQP 0-9-1 client on a plain socket: reads whole frames, nothing else."""

    def __init__(self, target: Target) -> None:
        self.sock = socket.create_connection((target.host, target.port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def frame(self) -> tuple[int, int, bytes]:
        while True:
            if len(self.buf) >= 7:
                ftype, ch, size = struct.unpack_from(">BHI", self.buf)
                if len(self.buf) >= size + 8:
                    payload = self.buf[7:7 + size]
                    self.buf = self.buf[size + 8:]
                    return ftype, ch, payload
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed")
            self.buf += data

    def method(self) -> tuple[int, tuple[int, int]]:
        while True:
            ftype, ch, payload = self.frame()
            if ftype == 1:
                return ch, struct.unpack_from(">HH", payload)

    def close(self) -> None:
        self.sock.close()


def _handshake(target: Target) -> _Conn:
    c = _Conn(target)
    c.sock.sendall(PROTOCOL_HEADER)
    c.method()  # start
    c.sock.sendall(MethodFrame(0, spec.ConnectionStartOk(client_properties(), "PLAIN", sasl_plain(
        target.username, target.password.reveal()), "en_US")).encode())
    c.method()  # tune
    c.sock.sendall(MethodFrame(0, spec.ConnectionTuneOk(2047, 131072, 0)).encode()
                   + MethodFrame(0, spec.ConnectionOpen(target.vhost)).encode())
    c.method()  # open-ok
    return c


def bare_handshake(target: Target, seconds: float) -> float:
    close = MethodFrame(0, spec.ConnectionClose(200, "bye", 0, 0)).encode()
    n, stop = 0, time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < stop:
        c = _handshake(target)
        c.sock.sendall(close)
        c.method()  # close-ok
        c.close()
        n += 1
    return n / (time.monotonic() - t0)


def bare_channel_error(target: Target, seconds: float) -> float:
    c = _handshake(target)
    opening = MethodFrame(1, spec.ChannelOpen()).encode()
    declare = MethodFrame(1, spec.QueueDeclare(queue=MISSING, passive=True)).encode()
    close_ok = MethodFrame(1, spec.ChannelCloseOk()).encode()
    n, stop = 0, time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < stop:
        c.sock.sendall(opening)
        c.method()  # open-ok
        c.sock.sendall(declare)
        ch, (cls, meth) = c.method()
        if (cls, meth) != (20, 40):
            raise RuntimeError(f"expected channel.close 404, got method {cls}.{meth}: is {MISSING} declared?")
        c.sock.sendall(close_ok)
        n += 1
    c.close()
    return n / (time.monotonic() - t0)


# ---------------------------------------------------------------------------- bare loops, AMQP 1.0

#: descriptor codes of the performatives and SASL frames a bare 1.0 loop reads
_OPEN, _BEGIN, _ATTACH, _FLOW, _TRANSFER, _DISPOSITION, _DETACH, _END, _CLOSE = range(0x10, 0x19)
_SASL_MECHANISMS, _SASL_OUTCOME = 0x40, 0x44
BENCH_ADDRESS_10 = "amqpspec-bench-10"


class _Conn10:
    """A minimal AMQP 1.0 client on a plain socket: reads whole frames and their descriptor code."""

    def __init__(self, target: Target) -> None:
        self.sock = socket.create_connection((target.host, target.port), timeout=5)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _fill(self, n: int) -> None:
        while len(self.buf) < n:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("closed")
            self.buf += data

    def header(self) -> bytes:
        self._fill(8)
        head, self.buf = self.buf[:8], self.buf[8:]
        return head

    def frame(self) -> int:
        """The descriptor code of the next frame's body (-1 for an empty frame)."""
        while True:
            self._fill(4)
            size = struct.unpack_from(">I", self.buf)[0]
            self._fill(size)
            doff = self.buf[4]
            body = self.buf[doff * 4:size]
            self.buf = self.buf[size:]
            if len(body) >= 3 and body[0] == 0 and body[1] == 0x53:
                return body[2]
            if not body:
                continue
            return -2

    def until(self, code: int) -> None:
        while (got := self.frame()) != code:
            if got == _CLOSE:
                raise RuntimeError("the broker closed the connection")

    def close(self) -> None:
        self.sock.close()


def _open10(target: Target) -> _Conn10:
    from amqpspec.wire.amqp10 import AMQPFrame, SASLFrame, spec as spec10
    from amqpspec.wire.amqp10.frames import AMQP_HEADER, SASL_HEADER
    from amqpspec.wire.amqp10.types import Symbol

    c = _Conn10(target)
    if target.credentials_given:
        c.sock.sendall(SASL_HEADER)
        c.header()
        c.until(_SASL_MECHANISMS)
        response = b"\x00" + target.username.encode() + b"\x00" + target.password.reveal().encode()
        c.sock.sendall(SASLFrame(spec10.SaslInit(mechanism=Symbol("PLAIN"), initial_response=response)).encode())
        c.until(_SASL_OUTCOME)
    c.sock.sendall(AMQP_HEADER + AMQPFrame(0, spec10.Open(container_id="amqpspec-bench")).encode())
    c.header()
    c.until(_OPEN)
    return c


def _begin10() -> Any:
    """The begin performative of every bare 1.0 loop."""
    from amqpspec.wire.amqp10 import spec as spec10

    return spec10.Begin(next_outgoing_id=0, incoming_window=65535, outgoing_window=65535)


def _link_frames10(name: str) -> tuple[bytes, bytes, bytes]:
    """(begin, attach of a sending link, its detach) on channel 0, handle 0."""
    from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

    begin = AMQPFrame(0, _begin10()).encode()
    attach = AMQPFrame(0, spec10.Attach(name=name, handle=0, role=spec10.Role.SENDER, source=spec10.Source(),
                                        target=spec10.Target(address=BENCH_ADDRESS_10),
                                        initial_delivery_count=0)).encode()
    detach = AMQPFrame(0, spec10.Detach(handle=0, closed=True)).encode()
    return begin, attach, detach


def bare_link_cycle(target: Target, seconds: float) -> float:
    """Cycles per second of: connect, (SASL), open, begin, attach, detach, close -- each step
    waiting for the broker's answer, each cycle on a fresh connection."""
    from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

    begin, attach, detach = _link_frames10("amqpspec-bench-cycle")
    close = AMQPFrame(0, spec10.Close()).encode()
    n, stop = 0, time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < stop:
        c = _open10(target)
        c.sock.sendall(begin + attach)
        c.until(_BEGIN)
        c.until(_ATTACH)
        c.sock.sendall(detach)
        c.until(_DETACH)
        c.sock.sendall(close)
        c.until(_CLOSE)
        c.close()
        n += 1
    return n / (time.monotonic() - t0)


def bare_session_cycle(target: Target, seconds: float) -> float:
    """Cycles per second of begin and end on one open connection, each waiting for the broker's
    answer -- the ceiling of the ``begin`` target (a session set up and ended per example)."""
    from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

    c = _open10(target)
    # RabbitMQ 3.10's plugin leaves an end unanswered now and then (after 100-5,000 cycles, on
    # channel 0 or on a new channel each time alike): the row is then NaN (``_bare``)
    frames = [(AMQPFrame(0, _begin10()).encode(), AMQPFrame(0, spec10.End()).encode())]
    return _exchanges(c, frames, (_BEGIN, _END), seconds)


def _exchanges(c: "_Conn10", frames: list[tuple[bytes, bytes]], answers: tuple[int, int], seconds: float) -> float:
    """Cycles per second of: send ``frames[n][0]``, await ``answers[0]``, send ``frames[n][1]``,
    await ``answers[1]`` (``n`` going round ``frames``); closes ``c``."""
    n, stop = 0, time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < stop:
        first, second = frames[n % len(frames)]
        c.sock.sendall(first)
        c.until(answers[0])
        c.sock.sendall(second)
        c.until(answers[1])
        n += 1
    rate = n / (time.monotonic() - t0)
    c.close()
    return rate


def bare_attach_cycle(target: Target, seconds: float) -> float:
    """Cycles per second of attach and detach of a sending link on one open session, each
    waiting for the broker's answer -- the ceiling of the ``attach`` target (a link attached and
    detached per example)."""
    c = _open10(target)
    begin, attach, detach = _link_frames10("amqpspec-bench-attach")
    c.sock.sendall(begin)
    c.until(_BEGIN)
    return _exchanges(c, [(attach, detach)], (_ATTACH, _DETACH), seconds)


def bare_transfer(target: Target, seconds: float) -> float:
    """Cycles per second of an unsettled transfer and the broker's disposition for it, on one
    attached sending link (a delivery-tag and delivery-id each, a 16-octet message)."""
    from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

    c = _open10(target)
    begin, attach, detach = _link_frames10("amqpspec-bench-transfer")
    c.sock.sendall(begin + attach)
    c.until(_BEGIN)
    c.until(_ATTACH)
    c.until(_FLOW)  # the credit grant
    payload = bytes.fromhex("005375a010") + b"amqpspec-bench-1"
    n, stop = 0, time.monotonic() + seconds
    t0 = time.monotonic()
    while time.monotonic() < stop:
        c.sock.sendall(AMQPFrame(0, spec10.Transfer(handle=0, delivery_id=n, delivery_tag=n.to_bytes(4, "big"),
                                                    message_format=0, settled=False), payload).encode())
        c.until(_DISPOSITION)
        n += 1
    rate = n / (time.monotonic() - t0)
    c.sock.sendall(detach)
    c.close()
    return rate


# ---------------------------------------------------------------------------- amqpspec campaigns

def campaign_rate(url: str, target_name: str, jobs: int, seconds: float, slots: int | None = None) -> tuple[float, str]:
    """Executions/s of a whole campaign (all oracles and the control pair on), and a note."""
    from amqpspec.brokerops import probe

    from amqpspec.fuzz.campaign import Campaign, Config

    target = Target.parse(url)
    broker = probe(target, "0-9-1")
    with tempfile.TemporaryDirectory(prefix="amqpspec-bench-findings-") as findings:
        cfg = Config(url=url, protocol="0-9-1", targets=[target_name], broker=broker, seed=1, jobs=jobs,
                     duration=seconds, shrink_time=5.0)
        if slots is not None:
            cfg.slots = slots
        t0 = time.monotonic()
        stats = Campaign(cfg, findings).run()
        elapsed = time.monotonic() - t0
    note = f"{len(stats.findings)} finding(s)" + (f", {stats.setup_failures} setup failures" if stats.setup_failures else "")
    return stats.execs / elapsed, note


def campaign_rate_10(url: str, target_name: str, seconds: float, findings: str,
                     restart_command: str | None = None) -> tuple[float, str]:
    """Executions/s of a whole AMQP 1.0 campaign of one target (jobs 1, all oracles and the
    control pair on), on the findings directory ``findings`` (warm when filled before)."""
    from amqpspec.brokerops import probe

    from amqpspec.fuzz.campaign import Campaign, Config

    target = Target.parse(url)
    broker = probe(target, "1.0")
    cfg = Config(url=url, protocol="1.0", targets=[target_name], broker=broker, seed=int(time.time()), jobs=1,
                 duration=seconds, shrink_time=5.0, restart_command=restart_command)
    t0 = time.monotonic()
    stats = Campaign(cfg, findings).run()
    elapsed = time.monotonic() - t0
    note = f"{len(stats.findings)} finding(s), {len(stats.new)} new" + \
        (f", {stats.setup_failures} setup failures" if stats.setup_failures else "") + \
        (f", {stats.restarts} restarts" if stats.restarts else "")
    return stats.execs / elapsed, note


def _bare(loop: Callable[[Target, float], float], target: Target, seconds: float) -> float:
    """A bare loop's rate, or NaN where the broker did not play along (the Proton example broker,
    once a ``flow-disposition`` campaign has wedged it, grants no new sending link credit until
    it is restarted: bench/README.md, stop 24): the campaigns' rates are still measured."""
    try:
        return loop(target, seconds)
    except OSError as exc:
        print(f"  bare loop {loop.__name__} failed: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return float("nan")


def _fresh_broker(command: str | None, target: Target) -> None:
    """With a restart command, every measured row starts on a freshly started broker: the Proton
    example broker slows as campaigns leave messages and nodes in it (bare attach+detach from
    1,600 to 550 cycles/s after a warm-up pass of every target), and a ratio of two rows
    measured in different states of it says nothing."""
    if command:
        from amqpspec import brokerops

        note = brokerops.restart(command, target, "1.0")
        if not note.ok:
            print(f"  {note}", file=sys.stderr, flush=True)


#: which bare loop a 1.0 target's rate is compared with: the loop doing the broker-side work one
#: example of the target asks for (a fresh connection, a session, a link, a delivery); targets
#: not named here run on an open link and compare with transfer+disposition
BARE_OF_10 = {"protocol-header": "fresh", "sasl-init": "fresh", "open": "fresh",
              "begin": "session", "attach": "attach"}
BARE_LOOPS_10: dict[str, tuple[str, Callable[[Target, float], float]]] = {
    "fresh": ("bare open+begin+attach+detach", bare_link_cycle),
    "session": ("bare begin+end", bare_session_cycle),
    "attach": ("bare attach+detach", bare_attach_cycle),
    "link": ("bare transfer+disposition", bare_transfer),
}


def main_10(args: Any) -> int:
    target = Target.parse(args.url)
    from amqpspec.fuzz import targets as fuzz_targets

    names = args.targets or [t.name for t in fuzz_targets.for_protocol("1.0")
                             if not getattr(t, "stateful", False) and t.name != "seeded"]
    if not target.credentials_given:
        names = [n for n in names if n != "sasl-init"]
    runs: dict[str, list[tuple[float, float, str]]] = {}   # name -> (rate, bare, note) per repeat
    bares: dict[str, list[float]] = {kind: [] for kind in BARE_LOOPS_10}
    with contextlib.nullcontext(args.findings) if args.findings else \
            tempfile.TemporaryDirectory(prefix="amqpspec-bench-findings-") as findings:
        for name in names:   # the warm-up runs: each target's findings found (and shrunk) once
            print(f"warming up {name} ...", file=sys.stderr, flush=True)
            campaign_rate_10(args.url, name, args.seconds, findings, args.restart_command)
        for _ in range(args.repeat):
            _fresh_broker(args.restart_command, target)
            now = {kind: _bare(loop, target, args.seconds) for kind, (_, loop) in BARE_LOOPS_10.items()}
            for kind, rate in now.items():
                bares[kind].append(rate)
            for name in names:
                print(f"measuring {name} ...", file=sys.stderr, flush=True)
                _fresh_broker(args.restart_command, target)
                rate, note = campaign_rate_10(args.url, name, args.seconds, findings, args.restart_command)
                print(f"  {name}: {rate:.1f}/s ({note})", file=sys.stderr, flush=True)
                runs.setdefault(name, []).append((rate, now[BARE_OF_10.get(name, "link")], note))
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    print(f"\n{'what':<40} {'min':>8} {'median':>8} {'x bare (min, median)':>22}  note")
    for kind, (label, _) in BARE_LOOPS_10.items():
        print(f"{label:<40} {min(bares[kind]):>8.1f} {med(bares[kind]):>8.1f}")
    for name, rows in runs.items():
        rates = [r for r, _, _ in rows]
        ratios = [r / b for r, b, _ in rows if b]
        kind = BARE_OF_10.get(name, "link")
        print(f"{'amqpspec ' + name + ' (' + kind + ')':<40} {min(rates):>8.1f} {med(rates):>8.1f} "
              f"{min(ratios):>10.2f} {med(ratios):>10.2f}  {rows[-1][2]}")
    return 0


# ---------------------------------------------------------------------------- boofuzz

def boofuzz_rate(target: Target, seconds: float) -> tuple[float, str]:
    """boofuzz on the channel-error frame template, for ``seconds`` (its cases per second)."""
    try:
        import boofuzz as bf
    except ImportError:
        return 0.0, "boofuzz not installed (pip install -e '.[bench]')"
    handshake_frames = _handshake_bytes(target)
    opening = MethodFrame(1, spec.ChannelOpen()).encode()

    def pre_send(target_: Any, fuzz_data_logger: Any, session: Any, sock: Any, *args: Any, **kw: Any) -> None:
        # boofuzz opens a new connection per case: bring it to channel-open, as amqpspec's start state
        for data in handshake_frames:
            target_.send(data)
            target_.recv(65536)
        target_.send(opening)
        target_.recv(65536)

    bf.s_initialize("channel-error")
    bf.s_byte(1, name="type", fuzzable=False)
    bf.s_word(1, name="channel", endian=bf.BIG_ENDIAN, fuzzable=False)
    bf.s_size("payload", length=4, endian=bf.BIG_ENDIAN, name="size", fuzzable=False)
    if bf.s_block_start("payload"):
        bf.s_word(50, name="class", endian=bf.BIG_ENDIAN, fuzzable=False)
        bf.s_word(10, name="method", endian=bf.BIG_ENDIAN, fuzzable=False)
        bf.s_word(0, name="reserved-1", endian=bf.BIG_ENDIAN)
        bf.s_size("queue", length=1, name="queue-length", fuzzable=False)
        if bf.s_block_start("queue"):
            bf.s_string(MISSING, name="queue-name", max_len=255)
        bf.s_block_end("queue")
        bf.s_byte(0x01, name="flags")
        bf.s_dword(0, name="arguments", endian=bf.BIG_ENDIAN, fuzzable=False)
    bf.s_block_end("payload")
    bf.s_byte(0xCE, name="frame-end", fuzzable=False)

    done = {"n": 0}
    stop = time.monotonic() + seconds

    def counted(*args: Any, **kw: Any) -> None:
        done["n"] += 1
        if time.monotonic() > stop:
            raise KeyboardInterrupt  # boofuzz logs and ignores ordinary exceptions from callbacks

    with tempfile.TemporaryDirectory(prefix="amqpspec-bench-boofuzz-") as tmp:
        conn = bf.TCPSocketConnection(target.host, target.port, recv_timeout=1.0)
        session = bf.Session(target=bf.Target(connection=conn), web_port=None, fuzz_loggers=[],
                             db_filename=os.path.join(tmp, "boofuzz.db"), sleep_time=0, receive_data_after_fuzz=True,
                             pre_send_callbacks=[pre_send], post_test_case_callbacks=[counted])
        session.connect(bf.s_get("channel-error"))
        t0 = time.monotonic()
        try:
            session.fuzz()
        except (KeyboardInterrupt, _Enough):
            pass
        elapsed = time.monotonic() - t0
    return done["n"] / elapsed, "headless (web_port=None), fresh connection + handshake per case"


class _Enough(Exception):
    """Ends boofuzz' run when the time is up."""


def _handshake_bytes(target: Target) -> list[bytes]:
    return [PROTOCOL_HEADER,
            MethodFrame(0, spec.ConnectionStartOk(client_properties(), "PLAIN",
                                                  sasl_plain(target.username, target.password.reveal()), "en_US")).encode(),
            MethodFrame(0, spec.ConnectionTuneOk(2047, 131072, 0)).encode() + MethodFrame(0, spec.ConnectionOpen(target.vhost)).encode()]


# ---------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.fuzz_rates", description=__doc__.split("\n")[0])
    ap.add_argument("url", nargs="?", default=DEFAULT_URL)
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each measurement (default 20)")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--slots", type=int, nargs="+", default=[0],
                    help="examples in flight per worker (0: the campaign's default; 1: one after another)")
    ap.add_argument("--skip-boofuzz", action="store_true")
    ap.add_argument("--protocol", choices=("0-9-1", "1.0"), default="0-9-1")
    ap.add_argument("--targets", nargs="*", default=[], help="1.0: the targets to measure (default: all)")
    ap.add_argument("--repeat", type=int, default=1, help="1.0: measurements per row (min and median shown)")
    ap.add_argument("--restart-command", default=None,
                    help="1.0: restarts the broker when a campaign crashes it, and before every measured row")
    ap.add_argument("--findings", default=None, metavar="DIR",
                    help="1.0: the findings directory, kept (default: a temporary one); one filled by earlier runs "
                         "makes the measured runs warm past the few minutes it takes to meet every common signature")
    args = ap.parse_args(argv)
    if args.protocol == "1.0":
        return main_10(args)
    target = Target.parse(args.url)
    rows: list[tuple[str, float, int, str]] = []

    def row(name: str, fn: Callable[[], Any], jobs: int = 1) -> None:
        print(f"measuring {name} ...", file=sys.stderr, flush=True)
        out = fn()
        rate, note = out if isinstance(out, tuple) else (out, "")
        rows.append((name, rate, jobs, note))

    row("bare handshake+close loop", lambda: bare_handshake(target, args.seconds))
    row("bare channel-error loop", lambda: bare_channel_error(target, args.seconds))
    from amqpspec.fuzz.campaign import SLOTS

    for name in ("protocol-header", "channel-error"):
        for jobs in args.jobs:
            for slots in [k or SLOTS for k in args.slots]:
                row(f"amqpspec {name} jobs {jobs} slots {slots}",
                    lambda n=name, j=jobs, k=slots: campaign_rate(args.url, n, j, args.seconds, k), jobs)
    if not args.skip_boofuzz:
        row("boofuzz channel-error template", lambda: boofuzz_rate(target, args.seconds))
    boo = next((r[1] for r in rows if r[0].startswith("boofuzz")), 0.0)
    print(f"\n{'what':<44} {'exec/s':>9} {'per job':>9} {'x boofuzz':>10}  note")
    for name, rate, jobs, note in rows:
        ratio = f"{rate / boo:.1f}x" if boo and name.startswith("amqpspec") else ""
        print(f"{name:<44} {rate:>9.1f} {rate / jobs:>9.1f} {ratio:>10}  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
