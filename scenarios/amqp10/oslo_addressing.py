"""The oslo.messaging AMQP 1.0 addressing patterns, driven by python-qpid-proton.

The oslo.messaging AMQP 1.0 driver proposal (oslo-specs, juno/amqp10-driver-implementation) maps
RPC onto AMQP 1.0 nodes with three address patterns -- server-specific ('exclusive' prefix),
one-of-a-group ('unicast' prefix) and broadcast ('/broadcast/' prefix) -- and makes the prefixes
configurable so that either the broker is configured to match them or the driver is configured for
the broker's built-in conventions. Each RPC server attaches three receiving links, the first two
with distribution-mode move, the broadcast one with copy; requests carry 'to' = the link's target.

The scenario plays two servers of one topic and a client, with the addressing conventions of
:class:`~._proton.Addressing` (RabbitMQ: queues for the first two patterns, its ``/topic/`` node
for broadcast; otherwise the oslo defaults; each overridable with AMQPSPEC_AMQP10_SERVER_PREFIX,
..._GROUP_PREFIX, ..._BROADCAST_PREFIX). The proposal is not the AMQP specification: the routing
checks are guidelines quoting it; the properties of the requests are checked against 3.2.4. On a
broker whose broadcast address does not confirm copy, the broadcast case is skipped.
"""
from __future__ import annotations

import uuid

from amqpspec.case import Context, case

from ._common10 import COPY_DOC, MOVE_DOC, PROPERTIES_UNALTERED, check_mode
from ._proton import QUIET, WAIT, Receiver, Scenario, message, run, shown

SECTION = "amqp10/scenario.oslo-rpc"
SPEC = "[oslo-specs juno/amqp10-driver-implementation]"
SERVER_DOC = ("(A) For invocations on a specific server the address will be formed by concatenating the topic name "
              "and the server name and will be prefixed by the exchange if specified and/or by a deployment specific "
              f"'server_request_prefix' string. The default value for this prefix is 'exclusive'. {SPEC}")
GROUP_DOC = ("(B) For invocations on one of a group of servers the address will be the topic name and will be "
             "prefixed by the exchange if specified and/or by a deployment specific 'group_request_prefix' string. "
             "The default value for this prefix is 'unicast'. ... Any message for an address starting with 'unicast' "
             f"(or 'exclusive') would be routed to only one subscriber for that address. {SPEC}")
BROADCAST_DOC = ("(C) For invocations on all of a group of servers the address will be the topic name, prefixed by the "
                 "exchange if specified and also prefixed with a configurable 'broadcast_prefix' string. ... Any "
                 f"message for an address starting with 'broadcast' would be sent to all subscribers for that address. {SPEC}")
KINDS = ("server", "group", "broadcast")


class Server:
    """An oslo RPC server: its three receiving links, on one connection."""

    def __init__(self, sc: Scenario, topic: str, name: str) -> None:
        self.name = name
        client = sc.client(f"server-{name}")
        self.links: dict[str, Receiver] = {
            "server": client.receiver(sc.node("server", name=f"{topic}.{name}"), mode="move", credit=10),
            "group": client.receiver(sc.node("group", name=topic), mode="move", credit=10),
            "broadcast": client.receiver(sc.node("broadcast", name=topic), mode="copy", credit=10),
        }

    def got(self, kind: str, ids: set[str]) -> list[str]:
        return [str(r.message.id) for r in self.links[kind].inbox if str(r.message.id) in ids]


def _deployment(sc: Scenario) -> tuple[str, list[Server]]:
    topic = sc.ctx.name(f"topic{uuid.uuid4().hex[:6]}")
    sc.step(f"two RPC servers of topic {topic!r} attach their server, group and broadcast links "
            f"({sc.addressing.source})")
    return topic, [Server(sc, topic, name) for name in ("s1", "s2")]


def _send(sc: Scenario, address: str, n: int) -> dict[str, bytes]:
    """The RPC client: a sending link to the pattern's address, requests with 'to' and a message-id."""
    client = sc.client("rpc-client")
    out = client.sender(address)
    token = sc.token()
    sent = {f"call-{i}-{token}": f"invoke {i} {token}".encode() for i in range(n)}
    for mid, payload in sent.items():
        outcome = out.send(message(payload, id=mid, to=address))
        if outcome not in ("accepted", "settled"):
            sc.ctx.note(f"the broker answered {outcome} to request {mid}")
    return sent


def _elsewhere(servers: list[Server], ids: set[str], allowed: set[tuple[str, str]]) -> list[str]:
    return [f"{s.name}/{kind}: {i}" for s in servers for kind in KINDS if (s.name, kind) not in allowed
            for i in s.got(kind, ids)]


def _to_kept(sc: Scenario, servers: list[Server], sent: dict[str, bytes], address: str) -> None:
    got = [r for s in servers for lnk in s.links.values() for r in lnk.inbox if str(r.message.id) in sent]
    bad = [r.summary() for r in got if r.message.address != address or r.body != sent[str(r.message.id)]]
    sc.check(not bad, "requests arrive with the 'to' and body they were sent with", expected=f"to={address!r}",
             observed=shown(bad) if bad else "all as sent", clauses=PROPERTIES_UNALTERED)


@case(f"{SECTION}/server-exclusive", title="a request to the server-specific address reaches that server only",
      guideline=SERVER_DOC, timeout=14.0)
def server_exclusive(ctx: Context) -> None:
    """Servers s1 and s2 of one topic attach their three links each (server-specific and group with
    move, broadcast with copy); the client sends 3 requests to s1's server-specific address with 'to'
    set to it. Passes when s1's server link gets all 3 and no other link of either server gets any
    (guideline: the proposal's pattern A), each with 'to' and body as sent (3.2.4)."""

    def body(sc: Scenario) -> None:
        topic, servers = _deployment(sc)
        address = sc.node("server", name=f"{topic}.s1")
        sent = _send(sc, address, 3)
        ids = set(sent)
        sc.pump(lambda: len(servers[0].got("server", ids)) >= len(ids), WAIT)
        sc.quiet(QUIET)
        got = servers[0].got("server", ids)
        stray = _elsewhere(servers, ids, {("s1", "server")})
        sc.check(sorted(got) == sorted(ids) and not stray, "the requests reach s1's server-specific link only",
                 expected=f"{len(ids)} requests on s1/server, none elsewhere",
                 observed=f"s1/server: {shown(got)}" + (f"; elsewhere: {stray}" if stray else ""))
        _to_kept(sc, servers, sent, address)

    run(ctx, body)


@case(f"{SECTION}/group-unicast", title="each request to the group address reaches exactly one server of the group",
      guideline=GROUP_DOC, timeout=14.0)
def group_unicast(ctx: Context) -> None:
    """Servers s1 and s2 attach their three links; the client sends 6 requests to the group
    address. Passes when every request reaches the group link of exactly one server (pattern B;
    move, 3.5.7), none reaches a server-specific or broadcast link, each with 'to' and body as sent
    (3.2.4)."""

    def body(sc: Scenario) -> None:
        topic, servers = _deployment(sc)
        check_mode(sc, [s.links["group"] for s in servers], "move", unset_ok=True)
        address = sc.node("group", name=topic)
        sent = _send(sc, address, 6)
        ids = set(sent)
        sc.pump(lambda: sum(len(s.got("group", ids)) for s in servers) >= len(ids), WAIT)
        sc.quiet(QUIET)
        all_got = [i for s in servers for i in s.got("group", ids)]
        twice = sorted({i for i in all_got if all_got.count(i) > 1})
        missing = sorted(ids - set(all_got))
        stray = _elsewhere(servers, ids, {("s1", "group"), ("s2", "group")})
        per = "; ".join(f"{s.name}/group: {shown(s.got('group', ids))}" for s in servers)
        sc.check(not twice and not missing and not stray, "each request reaches exactly one server's group link",
                 expected=f"{len(ids)} requests, each once over the group links",
                 observed=per + (f"; twice: {twice}" if twice else "") + (f"; never: {missing}" if missing else "")
                 + (f"; elsewhere: {stray}" if stray else ""))
        sc.check(not twice, "no request reaches both servers (move)", expected="no request on two links",
                 observed=shown(twice) if twice else "none twice", guideline=MOVE_DOC)
        _to_kept(sc, servers, sent, address)

    run(ctx, body)


@case(f"{SECTION}/broadcast", title="a request to the broadcast address reaches every server of the group",
      guideline=BROADCAST_DOC, timeout=14.0)
def broadcast(ctx: Context) -> None:
    """Servers s1 and s2 attach their three links, the broadcast one with distribution-mode copy;
    the client sends 2 requests to the broadcast address. Passes when both servers' broadcast links
    get both requests (pattern C; copy, 3.5.7), no server-specific or group link gets any, each with
    'to' and body as sent (3.2.4). Skipped when the broker does not confirm copy on the broadcast
    links (no pub-sub node at that address)."""

    def body(sc: Scenario) -> None:
        topic, servers = _deployment(sc)
        check_mode(sc, [s.links["broadcast"] for s in servers], "copy", unset_ok=False)
        address = sc.node("broadcast", name=topic)
        sent = _send(sc, address, 2)
        ids = set(sent)
        sc.pump(lambda: all(len(s.got("broadcast", ids)) >= len(ids) for s in servers), WAIT)
        sc.quiet(QUIET)
        stray = _elsewhere(servers, ids, {("s1", "broadcast"), ("s2", "broadcast")})
        for s in servers:
            got = s.got("broadcast", ids)
            sc.check(sorted(set(got)) == sorted(ids), f"{s.name}'s broadcast link gets every request",
                     expected=f"{sorted(ids)}", observed=shown(got) if got else "nothing")
        sc.check(not stray, "broadcast requests reach no server-specific or group link",
                 expected="none elsewhere", observed=shown(stray) if stray else "none")
        sc.check(all(len(s.got("broadcast", ids)) >= len(ids) for s in servers),
                 "each server's copy link gets the requests (copy)", expected="both servers get both",
                 observed="; ".join(f"{s.name}: {len(s.got('broadcast', ids))}" for s in servers),
                 guideline=COPY_DOC)
        _to_kept(sc, servers, sent, address)

    run(ctx, body)
