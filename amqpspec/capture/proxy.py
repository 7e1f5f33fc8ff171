"""A recording proxy: any real client's session with a broker, kept as a replayable transcript.

``amqpspec record --listen 127.0.0.1:PORT --upstream URL --out DIR`` accepts clients on a
loopback address, opens a connection to the broker for each (TCP, or TLS for amqps://), and
pipes the octets both ways unchanged. On the side it decodes both directions with the codecs
(0-9-1 or 1.0, told by the client's protocol header) and writes one transcript file per
client connection into DIR (format: :mod:`amqpspec.capture.transcripts`). While the
connection lasts its entries are appended to ``NAME.json.partial`` by a worker thread (at
least every ``--flush-interval`` seconds, so a crash loses little; the next ``record`` on the
directory turns a left-over spool into a transcript marked incomplete); when it ends the
transcript ``NAME.json`` is written whole, atomically (:mod:`amqpspec.capture.spool`).

Secrets: the proxy sees the client's credentials in clear. It forwards them untouched, but
what it writes holds the SASL response masked (asterisks, ``"redacted": true``), the
password found in a PLAIN response is registered with the scrubber for every summary, and
nothing it prints names them. It listens on loopback only: a proxy that relays credentials
must not be reachable from another machine.

Memory is bounded, whatever the clients send: nothing recorded stays in memory (it is on its
way to the spool: at most :data:`~amqpspec.capture.spool.FLUSH_AT` octets per connection
before the relay waits for the disk), a decoder holds at most one frame of ``max_frame``
octets per direction (larger frames stop the decoding; the octets still pass), and at most
``max_concurrent`` connections are relayed at once (more are closed at once, with a line
saying so). What a transcript keeps is bounded too: ``max_entries`` entries and ``max_bytes``
octets per connection; past ``max_bytes`` every frame is still relayed whole but recorded as
its first 64 octets with a note (``[only the first 64 of N octets kept]``), past
``max_entries`` frames are counted, not recorded.
"""
from __future__ import annotations

import asyncio
import datetime as _dt
import ipaddress
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from amqpspec.capture.codec import (
    StreamDecoder,
    mask,
    plain_password,
    protocol_of_header,
)
from amqpspec.capture.spool import Spool, recover
from amqpspec.capture.transcripts import now_iso
from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER
from amqpspec.target import Target
from amqpspec.transcript import KEPT_PREFIX, Entry

READ_SIZE = 65536
DEFAULT_MAX_ENTRIES = 100_000
DEFAULT_MAX_BYTES = 64 << 20
DEFAULT_MAX_FRAME = 4 << 20
DEFAULT_MAX_CONCURRENT = 32   # each may hold two decoder buffers of up to max_frame: ~256 MiB at worst
LOOPBACK_NAMES = ("localhost",)
MIN_SECRET = 4   # shorter passwords are masked in the SASL response only (replacing them elsewhere would mangle)


def parse_listen(text: str) -> tuple[str, int]:
    """HOST:PORT (``[::1]:PORT`` for IPv6) on a loopback address; port 0 picks a free one."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host:
        raise UsageError(f"--listen {text!r}: expected HOST:PORT, e.g. 127.0.0.1:5673")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    try:
        port = int(port_text)
    except ValueError:
        raise UsageError(f"--listen {text!r}: the port must be a number") from None
    if not 0 <= port <= 65535:
        raise UsageError(f"--listen {text!r}: the port must be 0..65535")
    if host.lower() not in LOOPBACK_NAMES:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            raise UsageError(f"--listen {host}: the proxy listens on a loopback address only (127.0.0.1, ::1, "
                             "localhost): it relays credentials in clear and must not be reachable from elsewhere")
    return host, port


@dataclass
class ProxyOptions:
    listen_host: str
    listen_port: int
    upstream: Target
    out_dir: Path
    flush_interval: float = 2.0
    max_entries: int = DEFAULT_MAX_ENTRIES
    max_bytes: int = DEFAULT_MAX_BYTES
    max_frame: int = DEFAULT_MAX_FRAME
    max_connections: int | None = None    # stop once this many client connections have ended (in all)
    max_concurrent: int = DEFAULT_MAX_CONCURRENT   # connections relayed at once; more are closed at once
    duration: float | None = None         # stop after this many seconds
    connect_timeout: float = 10.0


class Recording:
    """The transcript of one client connection, decoded as it passes and spooled to disk."""

    def __init__(self, seq: int, client: str, opts: ProxyOptions) -> None:
        self.seq = seq
        self.client = client
        self.opts = opts
        self.started = now_iso()
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%f")[:-3]
        self.path = opts.out_dir / f"{stamp}Z-c{seq:04d}.json"
        self.spool = Spool(self.path)
        self.spool.meta(upstream=opts.upstream.url(), started=self.started, client=client, complete=False)
        self.protocol: str | None = None
        self.head = b""
        self.held_server: list[bytes] = []
        self.decoders: dict[bool, StreamDecoder] = {}
        self.frames = 0
        self.entries = 0
        self.kept_bytes = 0
        self.elided = 0
        self.secrets: list[bytes] = []   # passwords seen in this connection's PLAIN responses
        self.t0 = time.monotonic()

    def _entry(self, direction: str, data: bytes, summary: str, redacted: bool = False) -> None:
        """One entry to the spool, within the bounds (the rules of :class:`amqpspec.transcript.Transcript`)."""
        if self.entries >= self.opts.max_entries:
            self.elided += 1
            return
        if self.kept_bytes + len(data) > self.opts.max_bytes:
            summary = f"{summary} [only the first {KEPT_PREFIX} of {len(data)} octets kept]"
            data = data[:KEPT_PREFIX]
        self.kept_bytes += len(data)
        self.entries += 1
        self.spool.add(Entry(time.monotonic() - self.t0, direction, bytes(data), summary, 1, redacted).to_json())

    def event(self, text: str) -> None:
        self._entry("event", b"", text)

    def data(self, from_client: bool, data: bytes) -> None:
        """Octets that just passed in one direction (already forwarded)."""
        if self.protocol is None:
            if not from_client:
                if sum(len(d) for d in self.held_server) < 65536:
                    self.held_server.append(data)
                return
            self.head += data
            if len(self.head) < 8:
                return
            self.protocol = protocol_of_header(self.head[:8])
            if self.protocol is None:
                self.protocol = "0-9-1"  # decoding will say what is wrong; the octets are kept
            self.spool.meta(protocol=self.protocol)
            self.decoders = {True: StreamDecoder(self.protocol, True, self.opts.max_frame),
                             False: StreamDecoder(self.protocol, False, self.opts.max_frame)}
            head, self.head = self.head, b""
            self._decode(True, head)
            for held in self.held_server:
                self._decode(False, held)
            self.held_server = []
            return
        self._decode(from_client, data)

    def _decode(self, from_client: bool, data: bytes) -> None:
        assert self.protocol is not None
        for u in self.decoders[from_client].feed(data):
            self._add(from_client, u.raw, u.item, u.summary)

    def _add(self, from_client: bool, raw: bytes, item: object, summary: str) -> None:
        assert self.protocol is not None
        redacted = False
        if from_client and item is not None:
            password = plain_password(self.protocol, item)
            if password:
                SCRUBBER.register(password)
                if len(password) >= MIN_SECRET and password.encode() not in self.secrets:
                    self.secrets.append(password.encode())
            masked = mask(self.protocol, raw, item)
            if masked is not None:
                raw, redacted = masked, True
        for secret in self.secrets:  # the password anywhere else (a client property...): same length, masked
            if secret in raw:
                raw, redacted = raw.replace(secret, b"*" * len(secret)), True
        if item is not None:
            self.frames += 1
        self._entry("send" if from_client else "recv", raw, SCRUBBER.scrub(summary), redacted)

    def ended(self, from_client: bool, how: str) -> None:
        if self.protocol is not None:
            for u in self.decoders[from_client].flush():
                self._add(from_client, u.raw, u.item, u.summary)
        self.event(f"client closed ({how})" if from_client else f"socket closed ({how})")

    async def finish(self) -> bool:
        """Writes the transcript file (atomically, off the event loop); False when the client
        never sent an octet: there is nothing to keep."""
        if self.protocol is None and not self.head:
            self.spool.discard()
            return False
        if self.protocol is None:  # fewer than 8 octets ever came: keep them, raw
            self.protocol = "0-9-1"
            self._entry("send", self.head, f"raw {len(self.head)} octets (no protocol header)")
            self.head = b""
        if self.elided:
            self.spool.add({"t": round(time.monotonic() - self.t0, 6), "dir": "event", "conn": 0, "hex": "",
                            "summary": f"{self.elided} further entries not recorded (limit {self.opts.max_entries})"})
        return await self.spool.finish(protocol=self.protocol, complete=True)


class Proxy:
    """The server: one :class:`Recording` and two pipes per client connection."""

    def __init__(self, opts: ProxyOptions, on_line: Callable[[str], None] = print) -> None:
        self.opts = opts
        self.on_line = on_line
        self.active: dict[int, Recording] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.finishing: set[asyncio.Task[None]] = set()
        self.seq = 0
        self.ended = 0
        self.refused = 0
        self.written: list[Path] = []
        self.stop_event: asyncio.Event | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.port = opts.listen_port
        self.ready = threading.Event()   # set once listening (``port`` is then the real one)

    async def serve(self) -> None:
        self.stop_event = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.opts.out_dir.mkdir(parents=True, exist_ok=True)
        for path in recover(self.opts.out_dir):
            self.on_line(f"recovered {path} (incomplete: an earlier proxy ended with its connection open)")
        try:
            server = await asyncio.start_server(self._client, self.opts.listen_host, self.opts.listen_port,
                                                reuse_address=True)
        except OSError as exc:
            raise UsageError(f"cannot listen on {self.opts.listen_host}:{self.opts.listen_port}: "
                             f"{exc.strerror or exc}") from None
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        host = f"[{self.opts.listen_host}]" if ":" in self.opts.listen_host else self.opts.listen_host
        self.on_line(f"listening on {host}:{self.port}, forwarding to {self.opts.upstream.url()}, "
                     f"transcripts in {self.opts.out_dir} (Ctrl-C stops)")
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, self.stop_event.set)
            except (NotImplementedError, RuntimeError):  # not the main thread (tests), or no signals
                pass
        flusher = asyncio.create_task(self._flush_loop())
        try:
            if self.opts.duration is not None:
                try:
                    await asyncio.wait_for(self.stop_event.wait(), self.opts.duration)
                except asyncio.TimeoutError:
                    pass
            else:
                await self.stop_event.wait()
        finally:
            server.close()
            flusher.cancel()
            for rec in list(self.active.values()):
                rec.event("recording stopped: the proxy was stopped with the connection open")
            for task in list(self.tasks):
                task.cancel()
            if self.tasks:
                await asyncio.gather(*self.tasks, return_exceptions=True)
            for rec in list(self.active.values()):
                await self._finish(rec)
            if self.finishing:
                await asyncio.gather(*self.finishing, return_exceptions=True)
            try:
                await asyncio.wait_for(server.wait_closed(), 2.0)
            except (asyncio.TimeoutError, Exception):
                pass
        refused = f"; {self.refused} connection(s) refused over --max-concurrent" if self.refused else ""
        self.on_line(f"stopped: {len(self.written)} transcript(s) written to {self.opts.out_dir}{refused}")

    def stop(self) -> None:
        """Stops serving; callable from any thread."""
        if self.stop_event is None or self.loop is None:
            return
        try:
            if asyncio.get_running_loop() is self.loop:
                self.stop_event.set()
                return
        except RuntimeError:
            pass
        try:
            self.loop.call_soon_threadsafe(self.stop_event.set)
        except RuntimeError:  # the loop already ended
            pass

    async def _flush_loop(self) -> None:
        """What open connections recorded goes to their spools at least this often (off the loop)."""
        while True:
            await asyncio.sleep(self.opts.flush_interval)
            for rec in list(self.active.values()):
                try:
                    await rec.spool.flush()
                except OSError as exc:
                    self.on_line(f"c{rec.seq}: cannot write {rec.spool.path}: {exc.strerror or exc}")

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        peer = writer.get_extra_info("peername") or ("?", 0)
        if len(self.active) >= self.opts.max_concurrent:
            self.refused += 1
            self.on_line(f"refused client {peer[0]}:{peer[1]}: {len(self.active)} connections already relayed "
                         f"(--max-concurrent {self.opts.max_concurrent}); closed unrecorded")
            writer.close()
            return
        self.seq += 1
        try:
            rec = Recording(self.seq, f"{peer[0]}:{peer[1]}", self.opts)
        except OSError as exc:
            self.on_line(f"c{self.seq}: cannot record ({exc.strerror or exc}); client connection closed")
            writer.close()
            return
        self.tasks.add(task)
        self.active[rec.seq] = rec
        up = self.opts.upstream
        try:
            try:
                ssl_ctx = up.ssl_context() if up.tls else None
                ureader, uwriter = await asyncio.wait_for(
                    asyncio.open_connection(up.host, up.port, ssl=ssl_ctx, server_hostname=up.host if ssl_ctx else None),
                    self.opts.connect_timeout)
            except (OSError, asyncio.TimeoutError) as exc:
                why = getattr(exc, "strerror", None) or exc or "timeout"
                self.on_line(f"c{rec.seq}: cannot connect to {up.host}:{up.port}: {why}; client connection closed")
                writer.close()
                return
            rec.event(f"connected to {up.host}:{up.port}{' (TLS)' if up.tls else ''}")
            self.on_line(f"c{rec.seq}: client {rec.client} connected")
            await asyncio.gather(self._pipe(reader, uwriter, rec, True), self._pipe(ureader, writer, rec, False))
            for w in (writer, uwriter):
                w.close()
        except asyncio.CancelledError:  # the proxy is stopping: end quietly (asyncio logs a re-raised cancel here)
            writer.close()
        finally:
            self.tasks.discard(task)
            if self.active.pop(rec.seq, None) is not None:
                # its own task: the file is made whole even if this one is cancelled meanwhile
                finishing = asyncio.create_task(self._finish(rec))
                self.finishing.add(finishing)
                finishing.add_done_callback(self.finishing.discard)
                self.ended += 1
                if self.opts.max_connections is not None and self.ended >= self.opts.max_connections:
                    self.stop()
                try:
                    await asyncio.shield(finishing)
                except asyncio.CancelledError:
                    pass

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter, rec: Recording, from_client: bool) -> None:
        how = "fin"
        try:
            while True:
                data = await src.read(READ_SIZE)
                if not data:
                    break
                dst.write(data)
                await dst.drain()  # back-pressure: a slow side slows the other, nothing piles up here
                rec.data(from_client, data)
                if rec.spool.full:
                    await rec.spool.flush()  # back-pressure from the disk too
        except (ConnectionResetError, BrokenPipeError) as exc:
            how = "rst"
            del exc
        except OSError:
            how = "rst"
        rec.ended(from_client, how)
        try:
            if how == "rst":
                dst.transport.abort()
            elif dst.can_write_eof():
                dst.write_eof()
            else:
                dst.close()
        except (OSError, RuntimeError):
            pass

    async def _finish(self, rec: Recording) -> None:
        self.active.pop(rec.seq, None)
        try:
            if await rec.finish():
                self.written.append(rec.path)
                self.on_line(f"c{rec.seq}: recorded {rec.path} ({rec.protocol}, {rec.frames} frames, "
                             f"{time.monotonic() - rec.t0:.1f}s)")
        except OSError as exc:
            self.on_line(f"c{rec.seq}: cannot write {rec.path}: {exc.strerror or exc}")


def run_proxy(opts: ProxyOptions, on_line: Callable[[str], None] = print) -> Proxy:
    """Serves until Ctrl-C/SIGTERM, the duration, or max_connections; returns the proxy (for its counts)."""
    proxy = Proxy(opts, on_line)
    try:
        asyncio.run(proxy.serve())
    except KeyboardInterrupt:  # a second Ctrl-C while stopping: what was written stays written
        pass
    return proxy
