"""What the TLS client cases share: the client launched with an amqps:// URL, met by a TLS
server whose certificate it was never given a reason to trust.

The certificate is the local throw-away identity of :mod:`amqpspec.brokers.tls` (a CA of our
own signs it; SANs localhost and 127.0.0.1). No driver is given that CA, so a client that
validates the certificate (5.2/3) refuses it during the handshake -- after its ClientHello,
which is where its server name indication (5.2/2) shows. The TLS octets are not decoded
into the transcript: what happened is recorded as events.
"""
from __future__ import annotations

import os
import socket
import ssl
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amqpspec.brokers.errors import BrokerError
from amqpspec.brokers.tls import TLSFiles, ensure_server_identity
from amqpspec.case import Context, Skip
from amqpspec.client.drivers import DriverOutcome, DriverProcess
from amqpspec.client.session import client_target
from amqpspec.peer.base import DeadlineExceeded, PeerError
from amqpspec.peer.server091 import Listener

from ._client import QUICK

EXIT_USAGE = 2   # the driver contract's exit code for arguments it does not take
IDENTITY_DIR = Path(tempfile.gettempdir()) / f"amqpspec-client-tls-{os.getuid()}"
_identity_lock = threading.Lock()   # cases run side by side: one of them makes the files


@dataclass
class TLSMeeting:
    """How the client's TLS handshake with the playing broker went."""

    hello: bool = False                  # its ClientHello reached us (the SNI callback ran)
    server_name: str | None = None       # the name its SNI carried (None: no SNI)
    refused: str | None = None           # why the handshake did not complete (None: it completed)
    sent: bytes = b""                    # what it sent over a completed TLS session
    closed: bool = False                 # it closed a completed session without sending
    driver: DriverProcess | None = None

    def describe(self) -> str:
        if self.refused is not None:
            return f"the TLS handshake did not complete ({self.refused})"
        if self.sent:
            return f"the handshake completed and the client sent {self.sent[:8]!r} over it"
        return "the handshake completed, then the client closed" if self.closed else \
            f"the handshake completed; the client stayed silent, the session open, for {QUICK:g} s"

    def finish(self, ctx: Context) -> DriverOutcome:
        out = self.driver.wait(max(0.1, min(1.0, ctx.remaining() - 0.3))) if self.driver else DriverOutcome()
        ctx.note(out.summary())
        return out


def identity() -> TLSFiles:
    with _identity_lock:
        try:
            return ensure_server_identity(IDENTITY_DIR)
        except BrokerError as exc:
            raise PeerError(f"no TLS identity for the playing broker: {exc}") from None


def _accept(ctx: Context, listener: Listener, driver: DriverProcess) -> socket.socket:
    """The client's connection; a driver that ends first without connecting either does not
    take an amqps:// URL (a usage error, exit 2, or unsupported: the case is skipped) or failed."""
    while True:
        try:
            conn, _ = listener.accept_socket(0.25)
            return conn
        except DeadlineExceeded:
            pass
        if not driver.running():
            out = driver.wait(0.2)
            last = out.stderr_tail.strip().splitlines()[-1:] or [out.summary()]
            if out.returncode == EXIT_USAGE or out.unsupported:
                raise Skip(f"the driver does not take an amqps:// URL ({last[0][:160]})")
            raise PeerError(f"the client never connected ({out.summary()})")
        if ctx.remaining() < 2:   # a driver may start slowly: it has all the case's time but 2 s
            raise PeerError(f"the client never connected ({driver.wait(0.2).summary()})")


def meet(ctx: Context, workload: str, *, hostname: str | None = None, **options: Any) -> TLSMeeting:
    """Launches the client with ``amqps://`` (at ``hostname`` instead of the listener's address
    when given) and plays the server's side of its TLS handshake."""
    target = client_target(ctx)
    if target.serve_mode or target.driver is None or target.listener is None:
        raise Skip("the TLS cases launch the client with an amqps:// URL: run with amqpspec client --driver")
    files = identity()
    listener = ctx.adopt(Listener(str(target.listener.host), 0))
    url = target.client_url(listener).replace("amqp://", "amqps://", 1)
    if hostname is not None:
        url = url.replace(f"@{listener.host}:", f"@{hostname}:", 1)
    options.setdefault("timeout", max(1, int(ctx.remaining() - 3)))
    met = TLSMeeting()
    ctx.transcript.event(f"launching driver {target.driver.name}: workload {workload} over amqps://"
                         + (f" (host {hostname})" if hostname else ""))
    met.driver = ctx.adopt(target.driver.launch(url, workload, options))
    conn = _accept(ctx, listener, met.driver)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(files.certfile), str(files.keyfile))

    def hello(_sock: Any, name: str | None, _ctx: Any) -> None:
        met.hello, met.server_name = True, name

    context.sni_callback = hello
    conn.settimeout(max(0.1, min(QUICK * 2, ctx.remaining() - 1.5)))
    tls = context.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
    try:
        tls.do_handshake()
    except ssl.SSLError as exc:
        met.refused = exc.reason or str(exc)
    except (socket.timeout, TimeoutError):
        met.refused = "no handshake within the time allowed"
    except OSError as exc:
        met.refused = f"connection closed in the handshake ({exc.strerror or exc})"
    if met.refused is None:
        tls.settimeout(QUICK)
        try:
            met.sent = tls.recv(64)
            met.closed = not met.sent
        except (socket.timeout, TimeoutError):
            pass
        except (ssl.SSLError, OSError):
            met.closed = True
    ctx.transcript.event(f"TLS: client hello {'with SNI ' + repr(met.server_name) if met.server_name else 'without SNI'}"
                         if met.hello else "TLS: no client hello seen")
    ctx.transcript.event("TLS: " + met.describe())
    try:
        tls.close()
    except OSError:
        pass
    return met
