"""The protocol-neutral part of a raw peer: one socket, deadlines, and how it ended.

Every blocking call is bounded by the case deadline, reads are bounded in size, and a
close is classified as FIN (orderly), RST (reset) or a TLS failure, so a broker that
lies, floods, resets mid-frame or never answers cannot hang or crash the suite.
"""
from __future__ import annotations

import errno
import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.errors import FrameError

READ_SIZE = 65536


class PeerError(Exception):
    """The suite could not carry out a step (not a verdict on the broker by itself)."""


class DeadlineExceeded(PeerError):
    """The case deadline passed while waiting."""


@dataclass
class Closed:
    """How the broker's side of the socket ended."""

    how: str           # "fin", "rst", "tls-error", "local" (we closed it)
    detail: str = ""
    at: float = 0.0    # monotonic time

    def summary(self) -> str:
        return f"socket closed ({self.how}{': ' + self.detail if self.detail else ''})"


class Link:
    """A socket to the broker with deadline-bounded I/O and a transcript."""

    def __init__(self, sock: socket.socket, transcript: Transcript, deadline: float) -> None:
        self.sock = sock
        self.transcript = transcript
        self.deadline = deadline
        self.conn = transcript.new_connection()
        self.closed: Closed | None = None
        self.send_failed: str | None = None
        self.head = b""  # the first octets received, to recognise non-AMQP answers (e.g. HTTP)
        self._lock = threading.Lock()

    @classmethod
    def open(cls, target: Target, transcript: Transcript, deadline: float) -> "Link":
        budget = deadline - time.monotonic()
        if budget <= 0:
            raise DeadlineExceeded("no time left to connect")
        try:
            sock = target.open_socket(timeout=min(budget, 10.0))
        except ssl.SSLError as exc:
            raise PeerError(f"TLS handshake with {target.host}:{target.port} failed: {exc.reason or exc}") from None
        except OSError as exc:
            raise PeerError(f"cannot connect to {target.host}:{target.port}: {exc.strerror or exc}") from None
        link = cls(sock, transcript, deadline)
        transcript.event(f"connected to {target.host}:{target.port}{' (TLS)' if target.tls else ''}", link.conn)
        return link

    def remaining(self, timeout: float | None = None) -> float:
        left = self.deadline - time.monotonic()
        return left if timeout is None else min(left, timeout)

    def send_bytes(self, data: bytes, summary: str, *, record: bytes | None = None, redacted: bool = False) -> bool:
        """Sends all octets; a broker that already closed is recorded, not raised."""
        self.transcript.add("send", data if record is None else record, summary, self.conn, redacted)
        if self.closed is not None and self.closed.how == "local":
            raise PeerError("send on a connection the suite already closed")
        try:
            self.sock.settimeout(max(self.remaining(5.0), 0.001))
            self.sock.sendall(data)
            return True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError) as exc:
            self.send_failed = f"{type(exc).__name__}: {exc}"
            self.transcript.event(f"send failed: {self.send_failed}", self.conn)
            return False

    def read_some(self, timeout: float) -> bytes | Closed | None:
        """Octets, a Closed (socket ended), or None when ``timeout`` passes first."""
        if self.closed is not None:
            return self.closed
        wait = self.remaining(timeout)
        if wait <= 0:
            return None
        try:
            self.sock.settimeout(wait)
            data = self.sock.recv(READ_SIZE)
        except (socket.timeout, TimeoutError):
            return None
        except ssl.SSLWantReadError:
            return None
        except ConnectionResetError as exc:
            return self._mark_closed("rst", str(exc))
        except ssl.SSLError as exc:
            return self._mark_closed("tls-error", str(exc.reason or exc))
        except OSError as exc:
            if exc.errno in (errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED):
                return self._mark_closed("rst", str(exc))
            if self.closed is not None:
                return self.closed
            return self._mark_closed("rst", f"{type(exc).__name__}: {exc}")
        if not data:
            return self._mark_closed("fin")
        if len(self.head) < 64:
            self.head += data[: 64 - len(self.head)]
        return data

    def _mark_closed(self, how: str, detail: str = "") -> Closed:
        if self.closed is None:
            self.closed = Closed(how, detail, time.monotonic())
            self.transcript.event(self.closed.summary(), self.conn)
        return self.closed

    def shutdown(self) -> None:
        """Closes our side; safe to call from another thread (the runner's hard deadline)."""
        with self._lock:
            if self.closed is None:
                self.closed = Closed("local", "closed by the suite", time.monotonic())
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                self.sock.close()
            except OSError:
                pass


class StreamPeer:
    """What the raw peers of both protocols share: a bounded reader over the link, items put
    back with :meth:`unread`, and the rules for a stream that ends mid-frame or stops decoding.

    A subclass sets ``link``, ``reader`` (a frame reader with ``feed``, ``next``, ``last_raw``,
    ``pending``, ``pending_bytes``), ``framing_error``, ``discarded`` and ``_queue``, and says
    how to describe an item and how to make a reader that starts afresh mid-connection.
    """

    link: Link
    reader: Any
    framing_error: str | None
    discarded: int
    _queue: deque[Any]

    def _describe(self, item: Any) -> str:
        raise NotImplementedError

    def _reader_after_end(self) -> Any:
        """A reader like the current one, expecting no protocol header (after a partial frame)."""
        raise NotImplementedError

    def unread(self, item: Any) -> None:
        """Puts a received item back: the next recv returns it first."""
        self._queue.appendleft(item)

    def send_slowly(self, data: bytes, chunk: int = 1, pause: float = 0.005) -> bool:
        """Sends octets in small pieces, so the broker sees them in separate TCP segments."""
        for i in range(0, len(data), chunk):
            piece = data[i:i + chunk]
            if not self.link.send_bytes(piece, f"raw {len(piece)} octets (piece {i // chunk + 1})"):
                return False
            time.sleep(pause)
        return True

    def recv(self, timeout: float = 5.0) -> Any:
        """The next frame/header, a Closed, or None when ``timeout`` (or the deadline) passes."""
        if self._queue:
            return self._queue.popleft()
        stop = time.monotonic() + max(0.0, self.link.remaining(timeout))
        while True:
            if self.framing_error is None:
                try:
                    item = self.reader.next()
                except FrameError as exc:
                    self.framing_error = str(exc)
                    self.link.transcript.event(f"undecodable stream from broker: {exc}", self.link.conn)
                    item = None
                if item is not None:
                    self.link.transcript.add("recv", self.reader.last_raw, self._describe(item), self.link.conn)
                    return item
            left = stop - time.monotonic()
            if left <= 0:
                # a socket the suite closed (the runner's hard deadline) says so even past the deadline:
                # a case that loops on recv must see the end, not an endless run of timeouts
                return self.link.closed if self.link.closed is not None and self.link.closed.how == "local" else None
            data = self.link.read_some(left)
            if data is None:
                return None
            if isinstance(data, Closed):
                if self.reader.pending and self.framing_error is None:
                    self.link.transcript.add("recv", self.reader.pending_bytes(),
                                             f"{self.reader.pending} octets of an incomplete frame", self.link.conn)
                    self.reader = self._reader_after_end()
                return data
            if self.framing_error is not None:
                if not self.discarded:  # keep the start as evidence, count the rest
                    self.link.transcript.add("recv", data, f"raw {len(data)} octets after undecodable data", self.link.conn)
                self.discarded += len(data)
                continue
            self.reader.feed(data)

    def _watch(self, obs: Any, started: float, until: float, on_item: Callable[[Any], bool]) -> Any:
        """Feeds what the broker sends to ``on_item`` (True: the observation is over) until
        ``until``, the socket's end, or a stream that stops decoding; sets ``obs.end``,
        ``obs.framing_error`` and ``obs.elapsed``."""
        while True:
            left = until - time.monotonic()
            if left <= 0:
                break
            item = self.recv(left)
            if item is None:
                if self.framing_error is not None and obs.framing_error is None:
                    obs.framing_error = self.framing_error
                    obs.end = "framing-error"
                    if not self.link.closed:
                        continue
                break
            if isinstance(item, Closed):
                obs.end = item.how if item.how != "local" else "fin"
                break
            if on_item(item):
                break
        return self._end_observation(obs, started)

    def _end_observation(self, obs: Any, started: float) -> Any:
        """Closes an observation: a stream that stopped decoding is its end unless something
        else ended it first; ``obs.elapsed`` counts from ``started``."""
        if self.framing_error is not None and obs.framing_error is None:
            obs.framing_error = self.framing_error
            if obs.end == "open":
                obs.end = "framing-error"
        obs.elapsed = time.monotonic() - started
        return obs
