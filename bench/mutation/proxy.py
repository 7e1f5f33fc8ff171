"""A perturbing relay between the suite and a correct broker (test tooling, never product).

One :class:`MutatingProxy` listens on a free loopback port and relays every client
connection to the upstream broker. The client's octets pass unchanged; the broker's are cut
into units (protocol headers and frames, with the product's stream decoder) and each unit
passes unchanged -- unless the proxy is armed with a :class:`~bench.mutation.mutations.Mutation`
whose connection and index it is, then the mutation happens to it.

Connections are numbered in the order they are accepted while the proxy is *counting* (from
:meth:`arm` until :meth:`case_ended`): 1 is the case's first connection. What each counted
connection received is logged (:attr:`log`), which is what the planner chooses frames from.
Connections accepted after :meth:`case_ended` (the runner's cleanup) pass unchanged and are
not logged, and no new mutation starts then: what happens after the case's verdict cannot
change it.
"""
from __future__ import annotations

import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from amqpspec.capture.codec import StreamDecoder

from bench.mutation.mutations import DELAY_S, REORDER_WAIT_S, Mutation, closes, flippable_field_names, nested_variants, \
    payload_values, rewrite, sort_of

READ_SIZE = 65536


@dataclass
class Received:
    """One unit the broker sent on a counted connection, before the case ended."""

    index: int
    seq: int          # arrival order across the case's connections
    summary: str
    closes: bool      # carries a reply code / error condition ("code" applies)
    size: int
    fields: int = 0   # fields "flip" can choose from (variants worth trying)
    sort: str = ""    # method / performative name ("flipall" follows it)
    field_names: tuple[str, ...] = ()  # the fields "flip" chooses from, in variant order
    values: int = 0   # 1.0 transfer: values of its message "payload" chooses from
    deep: int = 0     # 1.0: values nested in the performative's fields ("deep")
    unset: int = 0    # 1.0: fields set, at any depth, that "unset" can leave out


@dataclass
class ConnLog:
    number: int
    received: list[Received] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)   # what the armed mutation did here


class MutatingProxy:
    def __init__(self, upstream: tuple[str, int], protocol: str, *, delay_s: float = DELAY_S,
                 reorder_wait_s: float = REORDER_WAIT_S) -> None:
        self.upstream = upstream
        self.protocol = protocol
        self.delay_s = delay_s
        self.reorder_wait_s = reorder_wait_s
        self._lock = threading.Lock()
        self._mutation: Mutation | None = None
        self._counting = False
        self.log: list[ConnLog] = []
        self.judged_seq: int | None = None   # arrival number of the last unit before the case's last check
        self._seq = 0
        self._relays: list[_Relay] = []
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(64)
        self.port: int = self._server.getsockname()[1]
        self._closed = False
        self._acceptor = threading.Thread(target=self._accept_loop, name=f"mutation-proxy-{self.port}", daemon=True)
        self._acceptor.start()

    # ------------------------------------------------------------------ control
    def arm(self, mutation: Mutation | None) -> None:
        """Starts a case: connections are counted from 1 again, ``mutation`` (None: relay
        everything unchanged) applies to the one it names."""
        with self._lock:
            self._mutation = mutation
            self._counting = True
            self.log = []
            self.judged_seq = None

    def checked(self) -> None:
        """The case recorded a check: what the broker sent until now may have decided it."""
        with self._lock:
            if self._counting:
                self.judged_seq = self._seq

    def case_ended(self) -> None:
        """The case's body returned: later connections and frames are not the case's."""
        with self._lock:
            self._counting = False

    def applied(self) -> list[str]:
        with self._lock:
            return [a for c in self.log for a in c.applied]

    def close(self) -> None:
        self._closed = True
        try:
            self._server.close()
        except OSError:
            pass
        with self._lock:
            relays = list(self._relays)
        for r in relays:
            r.abort()

    def __enter__(self) -> "MutatingProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ relaying
    def _accept_loop(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            with self._lock:
                log = None
                mutation = None
                if self._counting:
                    log = ConnLog(len(self.log) + 1)
                    self.log.append(log)
                    if self._mutation is not None and self._mutation.conn == log.number:
                        mutation = self._mutation
                self._relays = [r for r in self._relays if not r.done]
            relay = _Relay(self, client, log, mutation)
            with self._lock:
                self._relays.append(relay)
            relay.start()

    def next_seq(self) -> int:
        with self._lock:
            self._seq += 1
            return self._seq

    def counting(self) -> bool:
        with self._lock:
            return self._counting


class _Relay:
    """One client connection: client -> broker unchanged, broker -> client unit by unit."""

    def __init__(self, proxy: MutatingProxy, client: socket.socket, log: ConnLog | None,
                 mutation: Mutation | None) -> None:
        self.proxy = proxy
        self.client = client
        self.log = log
        self.mutation = mutation
        self.upstream: socket.socket | None = None
        self.done = False
        self._index = 0
        self._withholding = False
        self._cut = False                                 # fin/rst done: nothing more to the client
        self._delay_until = 0.0
        self._queue: deque[tuple[float, bytes]] = deque()  # delayed output, in order
        self._swap: tuple[float, bytes] | None = None     # reorder: a unit waiting for the next
        self._decoder = StreamDecoder(proxy.protocol, client=False)

    def start(self) -> None:
        threading.Thread(target=self._run, name="mutation-relay", daemon=True).start()

    def abort(self) -> None:
        for s in (self.client, self.upstream):
            if s is not None:
                _close(s)

    def _run(self) -> None:
        try:
            self.upstream = socket.create_connection(self.proxy.upstream, timeout=10)
            self.upstream.settimeout(None)
            self.upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            _reset(self.client)
            self.done = True
            return
        up = threading.Thread(target=self._client_to_broker, name="mutation-relay-up", daemon=True)
        up.start()
        try:
            self._broker_to_client()
        finally:
            up.join()  # until the client leaves (withholding: it never hears that the broker did)
            _close(self.client)
            _close(self.upstream)
            self.done = True

    def _client_to_broker(self) -> None:
        assert self.upstream is not None
        while True:
            try:
                data = self.client.recv(READ_SIZE)
            except OSError:  # the client reset: so does the relay
                _reset(self.upstream)
                return
            if not data:
                _shutdown(self.upstream)
                return
            if self._cut:
                continue  # the "broker" is gone for this client: what it sends goes nowhere
            try:
                self.upstream.sendall(data)
            except OSError:
                return

    def _broker_to_client(self) -> None:
        assert self.upstream is not None
        while True:
            wait = self._next_due()
            try:
                self.upstream.settimeout(None if wait is None else max(0.0, wait - time.monotonic()))
                data = self.upstream.recv(READ_SIZE)
            except socket.timeout:
                self._release_due()
                continue
            except OSError:  # the broker reset: pass it on, after whatever is held
                self._drain_held()
                if not self._withholding:
                    _reset(self.client)
                return
            if not data:
                for unit in self._decoder.flush():
                    self._unit(unit.raw, unit.summary)
                self._drain_held()
                if not self._withholding and not self._cut:  # withholding: not even the close
                    _shutdown(self.client)
                return
            for unit in self._decoder.feed(data):
                self._unit(unit.raw, unit.summary)
            self._release_due()
            if self._cut:
                _close(self.upstream)
                return

    # ------------------------------------------------------------------ one unit
    def _unit(self, raw: bytes, summary: str) -> None:
        index = self._index
        self._index += 1
        counted = self.log is not None and self.proxy.counting()
        if counted and self.log is not None:
            protocol = self.proxy.protocol
            names = flippable_field_names(raw, protocol)
            self.log.received.append(Received(index, self.proxy.next_seq(), summary, closes(raw, protocol), len(raw),
                                              len(names), sort_of(raw, protocol), names,
                                              payload_values(raw, protocol), *nested_variants(raw, protocol)))
        m = self.mutation
        if m is not None and m.kind == "flipall":
            if counted and index >= m.index and not self._cut and sort_of(raw, self.proxy.protocol) == m.sort:
                new, note = rewrite(m.kind, raw, self.proxy.protocol, m.seed, m.variant)
                self._out(new)
                with self.proxy._lock:
                    self.log.applied.append(f"{m.describe()} at #{index}: {note}")  # type: ignore[union-attr]
            else:
                self._out(raw)
            return
        if m is None or m.index != index or not counted or self._cut:
            self._out(raw)
            return
        note = self._apply(m, raw)
        if self.log is not None:
            with self.proxy._lock:
                self.log.applied.append(f"{m.describe()}: {note}")

    def _apply(self, m: Mutation, raw: bytes) -> str:
        kind = m.kind
        if kind in ("code", "flip", "payload", "deep", "unset"):
            new, note = rewrite(kind, raw, self.proxy.protocol, m.seed, m.variant)
            self._out(new)
            return note
        if kind == "drop":
            return f"dropped {len(raw)} octets"
        if kind == "dup":
            self._out(raw)
            self._out(raw)
            return "sent twice"
        if kind == "reorder":
            self._swap = (time.monotonic() + self.proxy.reorder_wait_s, raw)
            return "held for the next unit"
        if kind == "delay":
            self._delay_until = time.monotonic() + self.proxy.delay_s
            self._out(raw)
            return f"this and what follows {self.proxy.delay_s:g}s late"
        if kind == "withhold":
            self._withholding = True
            return "this and everything after withheld"
        if kind == "fin":
            self._drain_held()
            self._cut = True
            _shutdown(self.client)
            return "client's socket shut down (FIN) instead"
        if kind == "rst":
            self._drain_held()
            self._cut = True
            _reset(self.client)
            return "client's socket reset (RST) instead"
        raise AssertionError(kind)

    def _out(self, raw: bytes) -> None:
        if self._withholding or self._cut:
            return
        if self._swap is not None:  # the unit after a reorder goes first
            _, held = self._swap
            self._swap = None
            self._out(raw)
            self._out(held)
            return
        now = time.monotonic()
        if self._queue or now < self._delay_until:
            self._queue.append((max(self._delay_until, now), raw))
            return
        self._send(raw)

    def _send(self, raw: bytes) -> None:
        try:
            self.client.sendall(raw)
        except OSError:
            pass

    def _next_due(self) -> float | None:
        dues = [t for t, _ in list(self._queue)[:1]]
        if self._swap is not None:
            dues.append(self._swap[0])
        return min(dues) if dues else None

    def _release_due(self) -> None:
        now = time.monotonic()
        if self._swap is not None and self._swap[0] <= now:
            _, held = self._swap
            self._swap = None
            self._out(held)
        while self._queue and self._queue[0][0] <= time.monotonic():
            self._send(self._queue.popleft()[1])

    def _drain_held(self) -> None:
        """Everything held goes out, at its time (the stream is ending)."""
        if self._swap is not None:
            _, held = self._swap
            self._swap = None
            self._out(held)
        while self._queue:
            due, raw = self._queue.popleft()
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            self._send(raw)

def _shutdown(s: socket.socket) -> None:
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _reset(s: socket.socket) -> None:
    """Closes with an RST (linger 0); a thread blocked reading it wakes up (SHUT_RD sends nothing)."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.shutdown(socket.SHUT_RD)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass


def _close(s: socket.socket) -> None:
    """Closes, waking a thread blocked reading it (a bare close does not, on Linux)."""
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        s.close()
    except OSError:
        pass
