"""Pre-settled RPC with a ttl, as the oslo.messaging AMQP 1.0 driver does it, driven by python-qpid-proton.

"Requests and responses for RPC will be sent pre-settled ... If a timeout is specified for the
request, this will be set as a ttl on the request" (oslo-specs juno/amqp10-driver-implementation).
What the AMQP text fixes for the broker on that path:

- a sending link whose negotiated snd-settle-mode is settled sends every delivery settled
  (2.7.5, MUST) -- the responder asks for settled deliveries, so where the broker agrees, the
  requests must come settled;
- the header's ttl: an expiration time computed on arrival; "Messages that live longer than
  their expiration time will be discarded (or dead lettered)" (3.2.1, no keyword: a guideline);
  an intermediary passing the message on SHOULD put the reduced ttl in its header (3.2.1);
- message-id, reply-to, to and correlation-id arrive unaltered (3.2.4, MUST).

The reply node is a dynamic node where the broker creates one (as the driver does); otherwise a
queue-like node of the requester's own (the driver proposal's note on RabbitMQ: "the lack of
support for the 'dynamic' flag on link source is the main issue ... which could be worked around").
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case

from ._common10 import PRESETTLED_TRANSFER, PROPERTIES_UNALTERED, REDUCED_TTL, TTL_DOC
from ._proton import (QUIET, WAIT, BrokerRefused, Client, Receiver, Scenario, ScenarioError, StepTimeout, message, run,
                      shown)

SECTION = "amqp10/scenario.presettled-rpc"
TTL_S = 30.0


def _reply_node(sc: Scenario) -> tuple[Client, Receiver, str]:
    """The requester's connection and its reply receiver (asking for settled deliveries)."""
    client = sc.client("rpc-client")
    try:
        r = client.receiver(None, dynamic=True, snd_settle="settled", credit=10)
        if r.address:
            return client, r, "dynamic node"
    except (BrokerRefused, StepTimeout) as exc:
        sc.ctx.note(f"no dynamic reply node ({exc}); the requester uses a queue-like node of its own")
        client.close()
        client = sc.client("rpc-client-2")
    address = sc.node("queue", "replies")
    return client, client.receiver(address, snd_settle="settled", credit=10), "own reply node"


def _settled_check(sc: Scenario, link: Receiver, got: list, what: str) -> None:
    """2.7.5: where the broker's attach agreed to snd-settle-mode settled, its deliveries are settled."""
    if link.snd_settle_mode != "settled":
        sc.ctx.note(f"{what}: asked for snd-settle-mode settled, the broker's attach says {link.snd_settle_mode} "
                    "(the sender SHOULD respect it if it supports it, 2.7.3): settled deliveries not required")
        return
    unsettled = [r.summary() for r in got if not r.settled]
    sc.check(not unsettled, f"{what}: deliveries on a link negotiated as snd-settle-mode settled come settled",
             expected="settled=true on every delivery", observed=shown(unsettled) if unsettled else
             f"{len(got)} settled deliveries", clauses=PRESETTLED_TRANSFER)


@case(f"{SECTION}/round-trip",
      title="a pre-settled request with a ttl and its pre-settled reply keep their ids and addresses",
      clauses=PROPERTIES_UNALTERED, timeout=14.0)
def round_trip(ctx: Context) -> None:
    """The server attaches to the group node asking for snd-settle-mode settled; the client sends two
    requests on a pre-settled link (message-id, reply-to, to, ttl 30 s); the server answers each on
    a pre-settled link to reply-to with correlation-id = message-id. Passes when the requests arrive
    with message-id, reply-to and to as sent (3.2.4) and a ttl no higher than sent (3.2.1: the
    reduced ttl, SHOULD), come settled where the broker agreed to settled (2.7.5), and the replies
    reach the client with their correlation-ids (3.2.4)."""

    def body(sc: Scenario) -> None:
        client, replies, kind = _reply_node(sc)
        reply_to = replies.address
        group = sc.node("group", "rpc")
        sc.step(f"the server attaches to {group!r} asking for settled deliveries; the client replies via its {kind}")
        server = sc.client("rpc-server")
        requests = server.receiver(group, mode="move", snd_settle="settled", credit=10)
        out = client.sender(group, presettled=True)
        token = sc.token()
        sent = {f"call-{i}-{token}": f"invoke {i} {token}".encode() for i in range(2)}
        for mid, payload in sent.items():
            out.send(message(payload, id=mid, reply_to=reply_to, to=group, ttl=TTL_S))
        sc.pump(lambda: len(requests.inbox) >= len(sent), WAIT)
        got = {str(r.message.id): r for r in requests.inbox if str(r.message.id) in sent}
        if not got:
            raise ScenarioError(f"no pre-settled request reached the server within {WAIT:g}s (at-most-once: the "
                                "spec allows the loss, the scenario cannot go on)")
        wrong = [r.summary() for r in got.values() if r.message.reply_to != reply_to or r.message.address != group]
        sc.check(not wrong, "requests arrive with message-id, reply-to and to as sent",
                 expected=f"reply-to={reply_to!r}, to={group!r}", observed=shown(wrong) if wrong else "all as sent")
        ttls = [r.message.ttl for r in got.values()]
        sc.check(all(0 < t <= TTL_S for t in ttls), "requests keep a ttl no higher than the one sent",
                 expected=f"0 < ttl <= {int(TTL_S * 1000)} ms", observed=shown(f"{int(t * 1000)} ms" for t in ttls),
                 clauses=REDUCED_TTL)
        _settled_check(sc, requests, list(got.values()), "requests")
        sc.step("the server replies pre-settled to reply-to with correlation-id = message-id")
        back = server.sender(reply_to, presettled=True)
        for mid, r in got.items():
            if not r.settled:
                requests.accept(r)
            else:
                requests.settle(r)
            back.send(message(b"result of " + r.body, correlation_id=r.message.id, ttl=TTL_S))
        sc.pump(lambda: len(replies.inbox) >= len(got), WAIT)
        corr = sorted(str(r.message.correlation_id) for r in replies.inbox)
        sc.check(corr == sorted(got), "the replies reach the client with correlation-id = the request's message-id",
                 expected=shown(sorted(got)), observed=shown(corr) if corr else f"nothing within {WAIT:g}s")
        _settled_check(sc, replies, replies.inbox, "replies")

    run(ctx, body)


@case(f"{SECTION}/expired-request-dropped", title="a request that outlived its ttl at the node is not delivered",
      guideline=TTL_DOC, timeout=12.0)
def expired_request_dropped(ctx: Context) -> None:
    """With no server attached yet, the client sends (pre-settled) a request with ttl 200 ms, waits
    800 ms, then sends a second one with ttl 30 s; a server then attaches with credit. Passes when
    the server gets the second request but not the expired first one (3.2.1: messages that outlive
    their expiration time are discarded or dead-lettered, guideline)."""

    def body(sc: Scenario) -> None:
        group = sc.node("group", "rpc")
        client = sc.client("rpc-client")
        out = client.sender(group, presettled=True)
        token = sc.token()
        expired, alive = f"short-{token}", f"long-{token}"
        out.send(message(b"short-lived request", id=expired, ttl=0.2))
        client.idle(0.8)
        out.send(message(b"long-lived request", id=alive, ttl=TTL_S))
        sc.step("800 ms later a server attaches and grants credit")
        server = sc.client("rpc-server").receiver(group, mode="move", credit=10)
        sc.pump(lambda: any(str(r.message.id) == alive for r in server.inbox), WAIT)
        sc.quiet(QUIET)
        ids = [str(r.message.id) for r in server.inbox]
        if alive not in ids:
            raise ScenarioError(f"the long-lived control request {alive} did not arrive ({shown(ids)}): the expiry of "
                                "the other cannot be judged")
        sc.check(expired not in ids, "the request whose ttl ran out at the node is not delivered",
                 expected=f"only {alive}", observed=shown(ids))

    run(ctx, body)


@case(f"{SECTION}/ttl-reduced",
      title="a request held at the node is passed on with its ttl reduced by the time it waited",
      clauses=REDUCED_TTL, timeout=12.0)
def ttl_reduced(ctx: Context) -> None:
    """The client sends (pre-settled) a request with ttl 30 s to a node without server; 600 ms later
    a server attaches. Passes when the delivered header's ttl is at most 30 000 - 600 + 100 ms: "the
    transmitted message's header SHOULD contain a ttl that is computed as the difference between the
    current time and the formerly computed message expiration time" (3.2.1; 100 ms for the request's
    own trip to the node)."""

    def body(sc: Scenario) -> None:
        group = sc.node("group", "rpc")
        client = sc.client("rpc-client")
        out = client.sender(group, presettled=True)
        mid = f"held-{sc.token()}"
        sent_at = time.monotonic()
        out.send(message(b"held request", id=mid, ttl=TTL_S))
        client.idle(0.6)
        server = sc.client("rpc-server").receiver(group, mode="move", credit=10)
        sc.pump(lambda: bool(server.inbox), WAIT)
        got = next((r for r in server.inbox if str(r.message.id) == mid), None)
        if got is None:
            raise ScenarioError(f"the request {mid} did not arrive within {WAIT:g}s")
        waited = int((got.at - sent_at) * 1000)
        limit = int(TTL_S * 1000) - 600 + 100
        ttl = int(round(got.message.ttl * 1000))
        sc.check(0 < ttl <= limit, "the delivered ttl is reduced by the time the request waited at the node",
                 expected=f"ttl <= {limit} ms (sent {int(TTL_S * 1000)} ms, held >= 600 ms; delivered {waited} ms "
                          "after sending)", observed=f"ttl {ttl} ms")

    run(ctx, body)
