"""A deliberately broken TCP server, to prove the suite survives hostile brokers.

It is not a broker and never stands in for one in a conformance verdict: it only
misbehaves (never answers, lies about frame sizes, floods heartbeats, resets
mid-frame) so tests can check that every case still ends by its deadline.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Callable

Behaviour = Callable[[socket.socket], None]


def silent(conn: socket.socket) -> None:
    """Accepts, reads, never answers."""
    conn.settimeout(30)
    try:
        while conn.recv(4096):
            pass
    except OSError:
        pass


def huge_frame(conn: socket.socket) -> None:
    """Announces a 4 GiB method frame, then dribbles."""
    conn.recv(8)
    conn.sendall(struct.pack(">BHI", 1, 0, 0xFFFFFFFF) + b"\x00\x0a\x00\x0a")
    time.sleep(30)


def heartbeat_flood(conn: socket.socket) -> None:
    """Sends heartbeat frames as fast as it can, forever."""
    conn.recv(8)
    beat = struct.pack(">BHI", 8, 0, 0) + b"\xce"
    chunk = beat * 4096
    try:
        while True:
            conn.sendall(chunk)
    except OSError:
        pass


def reset_mid_frame(conn: socket.socket) -> None:
    """Sends half a frame, then resets the connection (RST)."""
    conn.recv(8)
    conn.sendall(struct.pack(">BHI", 1, 0, 100) + b"\x00\x0a")
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()


def garbage_stream(conn: socket.socket) -> None:
    """Answers with endless bytes that are not AMQP."""
    conn.recv(8)
    try:
        while True:
            conn.sendall(b"\xff" * 65536)
    except OSError:
        pass


def slow_header_refusal(conn: socket.socket) -> None:
    """Refuses any header the way 4.2.2 says (its own header, then the socket closed), but
    slowly: the header after 0.45 s, the close 0.2 s later -- a broker busy restarting."""
    conn.recv(8)
    time.sleep(0.45)
    conn.sendall(b"AMQP\x00\x00\x09\x01")
    time.sleep(0.2)


class HostileServer:
    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            self.behaviour(conn)
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def __enter__(self) -> "HostileServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.sock.close()

    @property
    def url(self) -> str:
        return f"amqp://guest:guest@127.0.0.1:{self.port}/"


def amqp10_flood(conn: socket.socket) -> None:
    """Answers the AMQP 1.0 header, then floods empty frames (heartbeats) forever."""
    conn.recv(8)
    conn.sendall(b"AMQP\x00\x01\x00\x00")
    empty = struct.pack(">IBBH", 8, 2, 0, 0)
    chunk = empty * 8192
    try:
        while True:
            conn.sendall(chunk)
    except OSError:
        pass


def amqp10_huge_frame(conn: socket.socket) -> None:
    """Answers the AMQP 1.0 header, then announces a 4 GiB frame."""
    conn.recv(8)
    conn.sendall(b"AMQP\x00\x01\x00\x00" + struct.pack(">IBBH", 0xFFFFFFF0, 2, 0, 0))
    time.sleep(30)
