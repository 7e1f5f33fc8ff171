"""2.8.18 Link error redirect, from the client's side: the hostname it names where it follows.

A detach carrying amqp:link:redirect says "The address provided cannot be resolved to a terminus
at the current container. The info map MAY contain the following information to allow the
client to locate the attach to the terminus" (2.8.18/1): hostname, network-host, port, address.
Of hostname: "This is the value that SHOULD be supplied in the hostname field of the open frame,
and during SASL and TLS negotiation (if used)" (2.8.18/2). We detach the client's receiving link
with a redirect to a second listener of ours (a port the client was never given) and a hostname
no other part of the conversation uses. Following a link redirect is not required: a client
that does not connect there is skipped; one that does names that hostname in its open (and in
its sasl-init when it authenticates).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.client.session import client_target
from amqpspec.peer.base import DeadlineExceeded, PeerError
from amqpspec.peer.server091 import Listener
from amqpspec.peer.server10 import ServerPeer10
from amqpspec.peer.server10_responder import Responder10
from amqpspec.wire.amqp10 import Symbol, UShort, spec

from ._client import QUICK, await_sender, open_conversation

HOSTNAME = "amqpspec-link-redirected.example"
FOLLOW = 3.0   # seconds the client has to connect where the redirect points


@case("amqp10/2.8.18/client-link-redirect-hostname", role="client", timeout=12.0,
      title="following a link redirect to another address, the client's open there names the info map's hostname",
      clauses=("amqp10:2.8.18/2",))
def link_redirect_hostname(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1, timeout=7)
    _, snd = await_sender(p)
    listener = client_target(ctx).listener
    assert listener is not None
    other = ctx.adopt(Listener(str(listener.host), 0))
    p.responder.detach_link(snd, closed=True, error=spec.Error(
        condition=Symbol("amqp:link:redirect"), description="amqpspec moved the node",
        info={Symbol("hostname"): HOSTNAME, Symbol("network-host"): str(other.host), Symbol("port"): UShort(other.port),
              Symbol("address"): "amqpspec-q"}))
    p.serve(0.3)
    try:
        conn, addr = other.accept_socket(max(0.1, min(FOLLOW, ctx.remaining() - 3)))
    except (DeadlineExceeded, PeerError):
        p.serve(0.2)
        p.finish(0.5)
        raise Skip(f"the client did not follow the link redirect within {FOLLOW:g} s (it need not)") from None
    again = ctx.adopt(ServerPeer10.on_socket(conn, addr, ctx.transcript, ctx.deadline))
    try:
        opened = again.handshake(timeout=QUICK)
    except PeerError as exc:
        p.finish(0.5)
        raise Skip(f"the client connected where the redirect points but did not open there ({exc})") from None
    named = {"open": None if opened.client_open is None or opened.client_open.hostname is None
             else str(opened.client_open.hostname)}
    if opened.mechanism is not None:
        named["sasl-init"] = opened.sasl_hostname
    wrong = {k: v for k, v in named.items() if v != HOSTNAME}
    ctx.record(not wrong, expected=f"hostname {HOSTNAME!r} in open (and sasl-init)",
               observed=", ".join(f"{k} hostname {v!r}" for k, v in named.items()))
    again.serve(min(1.0, max(0.1, ctx.remaining() - 2)), Responder10(again))
    p.finish(0.5)
