"""Fuzzing speed against a real broker: amqpspec campaigns, a bare socket loop, boofuzz.

    python -m bench.fuzz_rates [URL] [--seconds 20] [--jobs 1 2] [--skip-boofuzz]

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
"""
from __future__ import annotations

import argparse
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
    args = ap.parse_args(argv)
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
