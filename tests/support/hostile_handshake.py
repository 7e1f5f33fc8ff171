"""Fake brokers for the suite's own work on a broker (amqpspec.brokerops): handshakes that stall,
flood or hang up at one step, and a scriptable 0-9-1 broker that records the deletes it gets.

Not brokers: each misbehaves in one way, so a test can show that the suite says what happened
(a refused login only when the broker refused it) and that deletion survives closes.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

from amqpspec.wire.amqp091 import FrameReader, MethodFrame, ProtocolHeader, spec
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10
from amqpspec.wire.amqp10.types import Symbol

HEARTBEAT = struct.pack(">BHI", 8, 0, 0) + b"\xce"


def _start() -> bytes:
    props = {"product": "FakeBroker", "version": "0", "capabilities": {}}
    return MethodFrame(0, spec.ConnectionStart(0, 9, props, b"PLAIN", b"en_US")).encode()


def _frames(conn: socket.socket) -> Iterator[object]:
    """What the client sends, decoded, until it hangs up."""
    reader = FrameReader()
    conn.settimeout(30)
    while True:
        try:
            data = conn.recv(65536)
        except OSError:
            return
        if not data:
            return
        reader.feed(data)
        yield from reader


def _until(conn: socket.socket, name: str) -> bool:
    """Reads until the client's ``name`` (a method) or a protocol header; False when it hung up."""
    for item in _frames(conn):
        if isinstance(item, ProtocolHeader) and name == "header":
            return True
        if isinstance(item, MethodFrame) and item.method.NAME == name:
            return True
    return False


def start_then_silent(conn: socket.socket) -> None:
    """A valid connection.start, then nothing: start-ok is never answered."""
    if _until(conn, "header"):
        conn.sendall(_start())
        for _ in _frames(conn):
            pass


def start_then_heartbeat_flood(conn: socket.socket) -> None:
    """A valid connection.start; after start-ok only heartbeat frames, as fast as it can."""
    if _until(conn, "header"):
        conn.sendall(_start())
        if _until(conn, "connection.start-ok"):
            chunk = HEARTBEAT * 4096
            try:
                while True:
                    conn.sendall(chunk)
            except OSError:
                pass


def start_then_hang_up(conn: socket.socket) -> None:
    """A valid connection.start; the socket closed right after start-ok (how some brokers refuse a login)."""
    if _until(conn, "header"):
        conn.sendall(_start())
        _until(conn, "connection.start-ok")


def start_then_refuse(conn: socket.socket) -> None:
    """A valid connection.start; start-ok answered by connection.close 403."""
    if _until(conn, "header"):
        conn.sendall(_start())
        if _until(conn, "connection.start-ok"):
            refusal = spec.ConnectionClose(403, "ACCESS_REFUSED - Login was refused", 10, 11)
            conn.sendall(MethodFrame(0, refusal).encode())
            time.sleep(0.5)


def _sasl_greeting(conn: socket.socket) -> bool:
    """The SASL header exchange and sasl-mechanisms (PLAIN); True when the client then sent sasl-init."""
    head = conn.recv(8)
    if not head:
        return False
    conn.sendall(f10.ProtocolHeader.sasl().encode())
    conn.sendall(f10.frame(spec10.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN")])).encode())
    conn.settimeout(30)
    return bool(conn.recv(65536))


def sasl_init_then_silent(conn: socket.socket) -> None:
    """AMQP 1.0: mechanisms offered, sasl-init never answered."""
    if _sasl_greeting(conn):
        try:
            while conn.recv(65536):
                pass
        except OSError:
            pass


def sasl_init_then_hang_up(conn: socket.socket) -> None:
    """AMQP 1.0: the socket closed right after sasl-init, with no sasl-outcome."""
    _sasl_greeting(conn)


# ---------------------------------------------------------------------------- a broker to delete on

@dataclass
class DeleteLog:
    """What the scriptable broker received: (connection number, method name, queue or exchange
    name, if-unused, if-empty), in order; and how many connections it served."""

    calls: list[tuple[int, str, str, bool, bool]] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def names(self, method: str | None = None) -> list[str]:
        return [c[2] for c in self.calls if method is None or c[1] == method]


# what the scriptable broker does with one delete or declare: "ok", "close-channel" (406/404),
# "close-connection" (541), "hang-up" (socket closed), "silent" (no answer)
Reaction = Callable[[str, str], str]


def deleting_broker(log: DeleteLog, react: Reaction,
                    existing: frozenset[str] = frozenset()) -> Callable[[socket.socket], None]:
    """A 0-9-1 broker that completes handshakes and channel opens, logs every queue/exchange delete
    and declare, and answers each as ``react(method name, name)`` says. A passive declare of a
    name not in ``existing`` is answered 404, as a broker does for a name that does not exist; a
    queue.declare with no name gets a name made up, ``amq.gen-fake-...``."""

    def serve(conn: socket.socket) -> None:
        with log.lock:
            log.connections += 1
            number = log.connections
        for item in _frames(conn):
            if isinstance(item, ProtocolHeader):
                conn.sendall(_start())
                continue
            if not isinstance(item, MethodFrame):
                continue
            m, ch = item.method, item.channel
            name = m.NAME
            if name == "connection.start-ok":
                conn.sendall(MethodFrame(0, spec.ConnectionTune(2047, 131072, 0)).encode())
            elif name == "connection.open":
                conn.sendall(MethodFrame(0, spec.ConnectionOpenOk()).encode())
            elif name == "channel.open":
                conn.sendall(MethodFrame(ch, spec.ChannelOpenOk()).encode())
            elif name == "connection.close":
                conn.sendall(MethodFrame(0, spec.ConnectionCloseOk()).encode())
                return
            elif name in ("queue.delete", "exchange.delete", "queue.declare", "exchange.declare"):
                target = m.queue if name.startswith("queue") else m.exchange
                with log.lock:
                    log.calls.append((number, name, target, bool(getattr(m, "if_unused", False)),
                                      bool(getattr(m, "if_empty", False))))
                how = react(name, target)
                if name.endswith("declare") and m.passive and how == "ok" and target not in existing:
                    how = "not-found"
                if name == "queue.declare" and not target:
                    target = f"amq.gen-fake-{number}-{len(log.calls)}"  # a name the broker makes up
                if how == "hang-up":
                    return
                if how == "close-connection":
                    conn.sendall(MethodFrame(0, spec.ConnectionClose(541, "INTERNAL_ERROR", m.CLASS_ID,
                                                                     m.METHOD_ID)).encode())
                    continue
                if how in ("close-channel", "not-found"):
                    code = 404 if how == "not-found" else 406
                    conn.sendall(MethodFrame(ch, spec.ChannelClose(code, "NOT_FOUND" if code == 404 else
                                                                   "PRECONDITION_FAILED", m.CLASS_ID,
                                                                   m.METHOD_ID)).encode())
                    continue
                if how == "silent":
                    continue
                ok = {"queue.delete": spec.QueueDeleteOk(0), "exchange.delete": spec.ExchangeDeleteOk(),
                      "queue.declare": spec.QueueDeclareOk(target, 0, 0),
                      "exchange.declare": spec.ExchangeDeclareOk()}[name]
                conn.sendall(MethodFrame(ch, ok).encode())

    return serve


__all__ = ["DeleteLog", "deleting_broker", "sasl_init_then_hang_up", "sasl_init_then_silent",
           "start_then_hang_up", "start_then_heartbeat_flood", "start_then_refuse", "start_then_silent"]
