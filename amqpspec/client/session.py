"""What a client-role case works with: the client under test, one connection per case.

The runner's ``Target`` is, in the client role, the client under test: a
:class:`ClientTarget` names the listening peer, the driver that launches the library (or
none, in the serve mode, where the client connects by itself) and the library's identity,
which results carry where broker results carry the broker's. A case calls :func:`play`
with the workload it needs; it gets a :class:`Play`: the accepted connection (a
:class:`~amqpspec.peer.server091.ServerPeer`), the broker-side :class:`Responder`, and
the driver process, all under the runner's care (closed after the case, killed at its
hard deadline).
"""
from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from amqpspec.case import Context, Skip
from amqpspec.client.drivers import DriverOutcome, DriverProcess, DriverSpec
from amqpspec.peer.amqp091 import Observation
from amqpspec.peer.base import DeadlineExceeded, PeerError
from amqpspec.peer.server091 import ClientNegotiated, Listener, ServerPeer
from amqpspec.peer.server091_responder import Responder
from amqpspec.secrets import SCRUBBER, Secret
from amqpspec.target import BrokerInfo, Target

EVENTS_IN_TRANSCRIPT = 50
DRIVER_EXIT_WAIT_S = 1.5   # after the conversation: how long the driver has to print its last events (then killed)


@dataclass
class ClientTarget(Target):
    """The client under test, reached through a listening peer."""

    listener: Listener | None = None
    driver: DriverSpec | None = None
    library_version: str = ""
    #: serve mode: connections the serve loop accepted, each taken by the next case
    pending: deque[tuple[Any, Any]] = field(default_factory=deque)
    serve_mode: bool = False
    #: each case listens on a port of its own (chosen by the system) on the listener's host:
    #: cases can then run side by side, each client reaching only its own case
    per_case_listen: bool = False

    @classmethod
    def create(cls, listener: Listener, driver: DriverSpec | None, library_version: str = "",
               protocol: str = "0-9-1") -> "ClientTarget":
        # a fresh password per run: the driver is given it in the URL, no output ever shows it
        # (the serve mode gives no URL: its clients bring credentials of their own, taken as they come)
        password = secrets.token_urlsafe(12)
        if driver is not None:
            SCRUBBER.register(password)
        target = cls("amqp", str(listener.host), listener.port, "/", "amqpspec", Secret(password),
                     listener=listener, driver=driver, library_version=library_version, serve_mode=driver is None)
        target.broker = BrokerInfo(product=(driver.library or driver.name) if driver else "external client",
                                   version=library_version, platform=driver.language if driver else "",
                                   protocol=protocol)
        return target

    def client_url(self, listener: Listener | None = None) -> str:
        listener = listener or self.listener
        assert listener is not None
        return listener.url(self.username, self.password.reveal(), self.vhost)

    def features(self) -> set[str]:
        return set()


def client_target(ctx: Context) -> ClientTarget:
    if not isinstance(ctx.target, ClientTarget):
        raise Skip("a client case runs under `amqpspec client` or `amqpspec serve`, which play the broker")
    return ctx.target


@dataclass
class Play:
    """One case's conversation with the client under test."""

    ctx: Context
    peer: ServerPeer
    responder: Responder
    driver: DriverProcess | None
    workload: str
    options: dict[str, Any]
    outcome: DriverOutcome | None = None
    listener: Listener | None = None   # where this case's client connects (e.g. to connect again)

    def handshake(self, **kwargs: Any) -> ClientNegotiated:
        kwargs.setdefault("timeout", max(0.5, min(5.0, self.ctx.remaining() - 0.5)))
        return self.peer.handshake(**kwargs)

    def serve(self, window: float | None = None, **kwargs: Any) -> Observation:
        """Answers the client as a broker would until the closing handshake, ``stop``, or the
        window (default: the case's time left, less a margin to judge)."""
        left = self.ctx.remaining() - 1.0
        return self.peer.serve(max(0.1, left if window is None else min(window, left)), self.responder, **kwargs)

    def finish(self, timeout: float = DRIVER_EXIT_WAIT_S) -> DriverOutcome:
        """Waits (bounded) for the driver to end; its events go to the transcript, its ending
        to the notes. In the serve mode there is no driver: an empty outcome."""
        if self.outcome is not None:
            return self.outcome
        if self.driver is None:
            self.outcome = DriverOutcome()
            return self.outcome
        out = self.driver.wait(max(0.1, min(timeout, self.ctx.remaining() - 0.3)))
        for e in out.events[:EVENTS_IN_TRANSCRIPT]:
            self.ctx.transcript.event("driver event: " + ", ".join(f"{k}={v}" for k, v in e.items()))
        self.ctx.note(out.summary())
        self.outcome = out
        return out


def play(ctx: Context, workload: str, **options: Any) -> Play:
    """Launches the client under test with ``workload`` (``options`` as key=value arguments of
    the driver contract) and accepts its connection. The driver's own ``timeout`` defaults to
    a little less than the case has, so that a well-behaved library ends by itself."""
    target = client_target(ctx)
    assert target.listener is not None
    options.setdefault("timeout", max(1, int(ctx.remaining() - 3)))
    proc: DriverProcess | None = None
    listener = target.listener
    peer_class, responder_class = server_role(target.broker.protocol)
    if target.serve_mode:
        if not target.pending:
            raise PeerError("no client connection is waiting for this case")
        conn, addr = target.pending.popleft()
        peer = peer_class.on_socket(conn, addr, ctx.transcript, ctx.deadline)
    else:
        assert target.driver is not None
        if target.per_case_listen:
            listener = ctx.adopt(Listener(str(target.listener.host), 0))
        else:
            listener = target.listener
            listener.drain()
        ctx.transcript.event(f"launching driver {target.driver.name}: workload {workload} "
                             + " ".join(f"{k}={v}" for k, v in options.items()))
        proc = ctx.adopt(target.driver.launch(target.client_url(listener), workload, options))
        try:
            conn, addr = listener.accept_socket(_left(ctx))
            peer = peer_class.on_socket(conn, addr, ctx.transcript, ctx.deadline)
        except DeadlineExceeded:
            out = proc.wait(0.2)
            if out.unsupported:
                raise Skip(f"the driver does not support the {workload} workload") from None
            raise PeerError(f"the client never connected ({out.summary()})") from None
    ctx.adopt(peer)
    return Play(ctx, peer, responder_class(peer), proc, workload, options, listener=listener)


def server_role(protocol: str) -> tuple[Any, Any]:
    """The server peer and responder classes that play the broker of ``protocol``."""
    if protocol == "1.0":
        from amqpspec.peer.server10 import ServerPeer10
        from amqpspec.peer.server10_responder import Responder10

        return ServerPeer10, Responder10
    return ServerPeer, Responder


def _left(ctx: Context) -> float:
    left = ctx.deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("no time left to wait for the client's connection")
    return left


class ServeQueue:
    """Connections accepted by the serve mode's loop, handed to cases one by one."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.stop = threading.Event()

    def next(self, poll: float = 0.5) -> tuple[Any, Any] | None:
        """The next connection; None when stopped."""
        while not self.stop.is_set():
            try:
                return self.listener.accept_socket(poll)
            except DeadlineExceeded:
                continue
        return None


def wait_until(ctx: Context, seconds: float) -> float:
    """Sleeps up to ``seconds`` within the case deadline; returns the time slept."""
    t = max(0.0, min(seconds, ctx.remaining() - 0.5))
    time.sleep(t)
    return t
