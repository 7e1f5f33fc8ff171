"""2.8.16 Connection error redirect, from the client's side.

A close carrying amqp:connection:redirect tells the client "the container is no longer
available on the current connection", and "The peer SHOULD attempt reconnection to the
container using the details provided in the info map" (2.8.16/1): network-host and port name
where to connect, hostname names the container's host -- "This is the value that SHOULD be
supplied in the hostname field of the open frame, and during the SASL and TLS negotiation
(if used)" (2.8.16/2). The playing broker redirects to a second listener of its own (a port
the client was never given, so a connection there follows the redirect, it is no retry of
the first address), with a hostname no other part of the conversation uses.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.client.session import client_target
from amqpspec.clauses import Level
from amqpspec.peer.base import DeadlineExceeded, PeerError
from amqpspec.peer.server091 import Listener
from amqpspec.peer.server10 import ServerPeer10
from amqpspec.peer.server10_responder import Responder10
from amqpspec.wire.amqp10 import Symbol, UShort

from ._client import QUICK, client_closed, open_conversation

HOSTNAME = "amqpspec-redirected.example"
FOLLOW = 3.0   # seconds the client has to connect where the redirect points


def _redirect(ctx: Context) -> tuple[Any, ServerPeer10 | None, str]:
    """Redirects the idle client; returns the play, the server peer of the connection it made
    to the redirect's address (None when none came) and what became of the first connection."""
    p = open_conversation(ctx, "idle", timeout=7)
    listener = client_target(ctx).listener
    assert listener is not None
    other = ctx.adopt(Listener(str(listener.host), 0))
    p.serve(0.3)
    p.peer.close_connection("amqp:connection:redirect", "amqpspec moved the container",
                            info={Symbol("hostname"): HOSTNAME, Symbol("network-host"): str(other.host),
                                  Symbol("port"): UShort(other.port)})
    first = p.serve(QUICK, stop=lambda f: getattr(getattr(f, "performative", None), "NAME", "") == "close")
    try:
        conn, addr = other.accept_socket(max(0.1, min(FOLLOW, ctx.remaining() - 3)))
    except (DeadlineExceeded, PeerError):
        return p, None, client_closed(first)
    again = ServerPeer10.on_socket(conn, addr, ctx.transcript, ctx.deadline)
    ctx.adopt(again)
    return p, again, client_closed(first)


def _finish(ctx: Context, p: Any, again: ServerPeer10 | None) -> None:
    if again is not None and again.stage == "open":
        responder = Responder10(again)
        again.serve(0.3, responder)
        again.close_connection()
        again.serve(min(1.0, max(0.1, ctx.remaining() - 1.5)), responder)
    p.finish(0.5)


@case("amqp10/2.8.16/client-follows-redirect", role="client", timeout=12.0,
      title="closed with amqp:connection:redirect, the client connects to the network-host and port the info map names",
      clauses=("amqp10:2.8.16/1",))
def follows_redirect(ctx: Context) -> None:
    p, again, first = _redirect(ctx)
    if again is not None:
        try:
            again.handshake(timeout=QUICK)
        except PeerError:
            pass   # it came: whether it opens well is other cases' business
    ctx.record(again is not None, expected=f"a connection to the redirect's address within {FOLLOW:g} s",
               observed=("the client connected there" if again is not None else
                         f"no connection there within {FOLLOW:g} s of our close") + f"; first: {first}",
               guideline="The peer SHOULD attempt reconnection to the container using the details provided in the "
                         "info map.", level=Level.SHOULD)
    _finish(ctx, p, again)


@case("amqp10/2.8.16/client-redirect-hostname", role="client", timeout=12.0,
      title="following a redirect, the client names the info map's hostname in its open (and its sasl-init)",
      clauses=("amqp10:2.8.16/2",))
def redirect_hostname(ctx: Context) -> None:
    p, again, first = _redirect(ctx)
    if again is None:
        p.finish(0.2)
        raise Skip(f"the client did not follow the redirect (first connection: {first})")
    n = again.handshake(timeout=QUICK)
    opened = None if n.client_open is None or n.client_open.hostname is None else str(n.client_open.hostname)
    sasl_used = n.mechanism is not None
    ok = opened == HOSTNAME and (not sasl_used or n.sasl_hostname == HOSTNAME)
    ctx.record(ok, expected=f"open hostname {HOSTNAME!r}" + (" and sasl-init hostname the same" if sasl_used else ""),
               observed=f"open hostname {opened!r}" + (f", sasl-init hostname {n.sasl_hostname!r}" if sasl_used else ""),
               guideline="This is the value that SHOULD be supplied in the hostname field of the open frame, and "
                         "during the SASL and TLS negotiation (if used).", level=Level.SHOULD)
    _finish(ctx, p, again)
