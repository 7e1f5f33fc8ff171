"""4.2.2 Protocol header and connection.start: how the client opens a connection.

"The client MUST start a new connection by sending a protocol header" (4.2.2/1): the first
eight octets are ``AMQP`` 0 0 9 1. connection.start carries the server's version; "If the
client cannot handle the protocol version suggested by the server it MUST close the socket
connection without sending any further data" (connection.start/client-support) -- amqpspec
proposes 7-7, which no 0-9-1 client handles. A server that does not speak the client's
version answers with its own protocol header and closes (4.2.2/3); "The client MAY detect
the server protocol version by ... reconnecting with a lower version" (4.2.2/5): whether it
does is recorded, a MAY.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case
from amqpspec.client.session import client_target, play
from amqpspec.peer.base import DeadlineExceeded
from amqpspec.peer.server091 import protocol_header_ok
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader, spec

from ._client import closes_silently_on


@case("amqp091/4.2.2/client-sends-protocol-header", role="client",
      title="the client starts its connection with the AMQP 0-9-1 protocol header",
      clauses=("amqp091:4.2.2/1",))
def sends_header(ctx: Context) -> None:
    p = play(ctx, "connect")
    first = p.peer.recv(5.0)
    ok = isinstance(first, ProtocolHeader) and protocol_header_ok(first)
    ctx.record(ok, expected="the eight octets AMQP 0 0 9 1 first on the socket",
               observed=first.summary() if hasattr(first, "summary") else repr(first))
    p.finish(0.5)


@case("amqp091/connection.start/client-refuses-unknown-version", role="client",
      title="a connection.start proposing a version the client cannot handle makes it close the socket silently",
      clauses=("amqp091:connection.start/client-support",))
def refuses_unknown_version(ctx: Context) -> None:
    closes_silently_on(ctx, "header",
                       MethodFrame(0, spec.ConnectionStart(7, 7, {"product": "amqpspec"}, b"PLAIN", b"en_US")))


@case("amqp091/4.2.2/client-retries-lower-version", role="client",
      title="told the server's protocol version by a protocol header, the client may reconnect with it",
      clauses=("amqp091:4.2.2/5",))
def retries_lower_version(ctx: Context) -> None:
    p = play(ctx, "connect")
    p.handshake(upto="header")
    p.peer.send(ProtocolHeader.of(0, 9, 0))  # a 0-9-0 server (no lower version a 0-9-1 client knows)
    p.peer.abort()
    again = None
    try:
        listener = p.listener or client_target(ctx).listener
        assert listener is not None
        again = listener.accept(ctx.transcript, min(ctx.deadline, time.monotonic() + 3.0))
        ctx.adopt(again)
    except DeadlineExceeded:
        pass
    ctx.record(again is not None, expected="a new connection (the MAY of 4.2.2/5)",
               observed="the client connected again" if again is not None else "no new connection within 3 s")
    p.finish(0.5)
