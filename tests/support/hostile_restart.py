"""A fake 0-9-1 broker that forgets, across a "restart", what the durability clauses say it must keep.

It serves the few methods the restart cases use (declares, bind, publish, basic.get, the queue's
message-count) over :func:`tests.support.fake091.serve`, and a restart is the restart command
touching a file: the next connection finds the broker restarted, having lost what ``forgets``
names -- its queues, its bindings or its messages. It stands in for no broker in a conformance
verdict: it shows that each restart case fails when the broker loses what its clause protects.
Content frames are not read (``serve`` skips them), so a basic.publish counts one message and
basic.get only ever answers get-empty: enough for a broker whose messages are lost.
"""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

from amqpspec.wire.amqp091 import MethodFrame, spec
from tests.support.fake091 import serve, serving


@dataclass
class Forgetful:
    restart_file: Path
    forgets: str                                  # "queues", "bindings" or "messages"
    queues: dict[str, int] = field(default_factory=dict)          # name -> message count
    exchanges: set[str] = field(default_factory=set)
    bindings: set[tuple[str, str, str]] = field(default_factory=set)  # (exchange, key, queue)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def behaviour(self, conn: socket.socket) -> None:
        with self.lock:
            if self.restart_file.exists():  # the restart command ran: lose what this broker loses
                self.restart_file.unlink()
                if self.forgets == "queues":
                    self.queues.clear()
                elif self.forgets == "bindings":
                    self.bindings.clear()
                else:
                    self.queues = dict.fromkeys(self.queues, 0)
        serve(conn, {"product": "forgetful fake"}, self.answer)

    def answer(self, frame: MethodFrame) -> tuple[list[bytes], bool]:
        m, ch = frame.method, frame.channel
        with self.lock:
            if m.NAME == "queue.declare":
                if m.passive and m.queue not in self.queues:
                    return [MethodFrame(ch, spec.ChannelClose(404, "NOT_FOUND", 50, 10)).encode()], False
                count = self.queues.setdefault(m.queue, 0)
                return [MethodFrame(ch, spec.QueueDeclareOk(m.queue, count, 0)).encode()], False
            if m.NAME == "exchange.declare":
                if not m.exchange.startswith("amq."):
                    self.exchanges.add(m.exchange)
                return [MethodFrame(ch, spec.ExchangeDeclareOk()).encode()], False
            if m.NAME == "queue.bind":
                self.bindings.add((m.exchange, m.routing_key, m.queue))
                return [MethodFrame(ch, spec.QueueBindOk()).encode()], False
            if m.NAME == "basic.publish":
                targets = [m.routing_key] if not m.exchange else [q for x, k, q in self.bindings
                                                                  if (x, k) == (m.exchange, m.routing_key)]
                for q in targets:
                    if q in self.queues:
                        self.queues[q] += 1
                return [], False
            if m.NAME == "basic.get":
                return [MethodFrame(ch, spec.BasicGetEmpty()).encode()], False
        return serving(frame)
