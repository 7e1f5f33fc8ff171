"""A fake management HTTP API on 127.0.0.x: records every request it gets, then answers the way
a test tells it (the nodes, a redirect elsewhere, an endless or slow answer).

It stands in for a broker's management listener, or for the third party a hostile one
redirects to: a test reads :attr:`FakeManagement.requests` to see who got which headers.
"""
from __future__ import annotations

import http.server
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

Answer = Callable[[http.server.BaseHTTPRequestHandler], None]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]


def nodes(mem_used: int = 123 << 20) -> Answer:
    """RabbitMQ's /api/nodes, one node."""
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        body = json.dumps([{"name": "rabbit@fake", "mem_used": mem_used}]).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
    return answer


def redirect(location: str, status: int = 302) -> Answer:
    def answer(h: http.server.BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Location", location)
        h.send_header("Content-Length", "0")
        h.end_headers()
    return answer


def endless(h: http.server.BaseHTTPRequestHandler) -> None:
    """200, then octets without end (no length): the reader must stop on its own."""
    h.send_response(200)
    h.end_headers()
    chunk = b"[" * 65536
    try:
        for _ in range(1000):
            h.wfile.write(chunk)
    except OSError:
        pass


def dribble(h: http.server.BaseHTTPRequestHandler) -> None:
    """200, then one octet every 0.2 s for a minute: each read is quick, the whole answer is not."""
    h.send_response(200)
    h.end_headers()
    try:
        for _ in range(300):
            h.wfile.write(b" ")
            h.wfile.flush()
            time.sleep(0.2)
    except OSError:
        pass


@dataclass
class FakeManagement:
    answer: Answer = field(default_factory=nodes)
    host: str = "127.0.0.1"
    port: int = 0
    requests: list[Seen] = field(default_factory=list)
    server: Any = None

    def __enter__(self) -> "FakeManagement":
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                fake.requests.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}))
                fake.answer(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer((self.host, self.port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"
