"""Upstreams and clients for the recording proxy's bounds (issue 11, item 7).

The upstream (a :class:`tests.support.hostile.HostileServer` behaviour) swallows whatever a
client sends and echoes only heartbeat frames, so one connection can push a flood through the
proxy while another measures round trips through it. The client side sends well-formed
0-9-1 frames, so the proxy decodes and records all of it, as it would a real bulk publisher.
"""
from __future__ import annotations

import socket
import struct
import threading
import time

HEADER = b"AMQP\x00\x00\x09\x01"
HEARTBEAT = struct.pack(">BHI", 8, 0, 0) + b"\xce"
BODY_SIZE = 128 << 10


def body_frame(size: int = BODY_SIZE) -> bytes:
    """A content-body frame on channel 1 (the bulk of any publisher's octets)."""
    return struct.pack(">BHI", 3, 1, size) + b"\x5a" * size + b"\xce"


class Counter:
    """Octets the upstream received, over all connections."""

    def __init__(self) -> None:
        self.octets = 0
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.octets += n


def sink_echoing_heartbeats(counter: Counter):
    """Reads everything; sends back each heartbeat frame it finds at a frame boundary."""
    def behaviour(conn: socket.socket) -> None:
        conn.settimeout(60)
        buf = b""
        head = b""
        try:
            while len(head) < 8:
                chunk = conn.recv(8 - len(head))
                if not chunk:
                    return
                head += chunk
            counter.add(8)
            while True:
                chunk = conn.recv(1 << 20)
                if not chunk:
                    return
                counter.add(len(chunk))
                buf += chunk
                at = 0
                while len(buf) - at >= 7:
                    ftype, _channel, size = struct.unpack_from(">BHI", buf, at)
                    if len(buf) - at < 8 + size:
                        break
                    if ftype == 8:
                        conn.sendall(buf[at:at + 8 + size])
                    at += 8 + size
                buf = buf[at:]
        except OSError:
            pass
    return behaviour


def flood(port: int, total: int, frame: bytes | None = None) -> int:
    """Sends the 0-9-1 header, then body frames until ``total`` octets; returns what was sent."""
    frame = frame or body_frame()
    batch = frame * 8
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(HEADER)
        while sent < total:
            s.sendall(batch)
            sent += len(batch)
        s.shutdown(socket.SHUT_WR)
        s.settimeout(30)
        try:
            while s.recv(65536):
                pass
        except OSError:
            pass
    return sent + len(HEADER)


def round_trips(port: int, seconds: float, stop: threading.Event | None = None) -> list[float]:
    """Heartbeats sent one at a time through the proxy, each awaited: their round-trip times."""
    times = []
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(HEADER)
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (stop is not None and stop.is_set()):
            t0 = time.monotonic()
            s.sendall(HEARTBEAT)
            got = b""
            while len(got) < len(HEARTBEAT):
                chunk = s.recv(len(HEARTBEAT) - len(got))
                if not chunk:
                    return times
                got += chunk
            times.append(time.monotonic() - t0)
            time.sleep(0.01)
    return times
