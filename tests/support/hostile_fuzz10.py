"""A scripted AMQP 1.0 peer for the fuzz executor's tests: just enough of a broker to open a
connection, begin and end sessions, attach links and grant credit -- and, on cue, to fall
silent, the way the Qpid Proton example broker does on many malformed frames.

It is not a broker and never stands in for one in a conformance verdict: the tests that use
it check how the fuzzer reuses connections (how many the executor opens) and how long it
watches silence, which needs a peer whose behaviour is known exactly. Run it with
``hostile.HostileServer(behaviour)``; the URL carries no credentials there (``url_10``), so no
SASL layer is negotiated.
"""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.peer.amqp10 import performative_name
from amqpspec.wire.amqp10 import AMQPFrame, spec
from amqpspec.wire.amqp10.frames import AMQP_HEADER, decode_body


@dataclass
class Log:
    """What the peer saw, across its connections."""

    connections: int = 0
    performatives: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def url_10(port: int) -> str:
    return f"amqp://127.0.0.1:{port}/"


def _frames(conn: socket.socket) -> Any:
    """(channel, decoded item or None) per whole frame read; ends when the socket does."""
    buf = b""
    while True:
        while len(buf) < 4 or len(buf) < int.from_bytes(buf[:4], "big"):
            data = conn.recv(65536)
            if not data:
                return
            buf += data
        size = int.from_bytes(buf[:4], "big")
        if size < 8:
            return
        doff, ftype, channel = buf[4], buf[5], int.from_bytes(buf[6:8], "big")
        body = buf[doff * 4:size] if doff >= 2 else b""
        buf = buf[size:]
        yield channel, (decode_body(ftype, channel, body) if body else None)


def frames_after_header(conn: socket.socket, answer: bytes | None = None) -> Any:
    """Reads the client's 8-octet protocol header, answers ``answer`` (by default the header it
    read), then yields (channel, decoded item or None) per whole frame, as :func:`_frames`;
    nothing when the client hangs up before its header is whole."""
    conn.settimeout(30)
    head = b""
    while len(head) < 8:
        data = conn.recv(8 - len(head))
        if not data:
            return
        head += data
    conn.sendall(head if answer is None else answer)
    yield from _frames(conn)


def scripted_broker(log: Log, silent_when: Callable[[int, Any], bool] = lambda ch, item: False,
                    credit: int = 100) -> Callable[[socket.socket], None]:
    """A behaviour for ``HostileServer``: answers open, begin, attach (granting ``credit`` to our
    sending links; none at all when 0, as a wedged broker), detach, end and close like a broker;
    once ``silent_when(channel, item)`` holds for a frame (item None for an empty or undecodable
    one), answers nothing more."""
    def run(conn: socket.socket) -> None:
        with log.lock:
            log.connections += 1
        silent = False
        for channel, item in frames_after_header(conn, AMQP_HEADER):
            name = performative_name(item) if item is not None and not isinstance(item, Exception) else None
            with log.lock:
                log.performatives.append(name or "?")
            silent = silent or silent_when(channel, item)
            if silent:
                continue
            perf = getattr(item, "performative", None)
            out: list[AMQPFrame] = []
            if name == "open":
                out.append(AMQPFrame(0, spec.Open(container_id="amqpspec-scripted", max_frame_size=65536,
                                                  channel_max=255)))
            elif name == "begin" and perf.remote_channel is None:
                out.append(AMQPFrame(channel, spec.Begin(remote_channel=channel, next_outgoing_id=0, incoming_window=2048,
                                                         outgoing_window=2048, handle_max=65535)))
            elif name == "attach":
                ours = bool(perf.role)
                out.append(AMQPFrame(channel, spec.Attach(name=perf.name, handle=perf.handle, role=not ours,
                                                          source=perf.source, target=perf.target,
                                                          initial_delivery_count=0 if ours else None)))
                if not ours and credit:   # our sending link: credit
                    out.append(AMQPFrame(channel, spec.Flow(next_incoming_id=0, incoming_window=2048, next_outgoing_id=0,
                                                            outgoing_window=2048, handle=perf.handle, delivery_count=0,
                                                            link_credit=credit)))
            elif name == "detach":
                out.append(AMQPFrame(channel, spec.Detach(handle=perf.handle, closed=perf.closed)))
            elif name == "end":
                out.append(AMQPFrame(channel, spec.End()))
            elif name == "close":
                conn.sendall(AMQPFrame(0, spec.Close()).encode())
                return
            if out:
                conn.sendall(b"".join(f.encode() for f in out))
    return run


__all__ = ["Log", "scripted_broker", "url_10"]
