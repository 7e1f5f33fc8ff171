"""Request/reply with a dynamic reply node, driven by python-qpid-proton.

The requester attaches a receiving link whose source has dynamic=true and no address: "a request
for the sending peer to dynamically create a node at the source" (3.5.3). The broker either
creates one and names it in the source of its attach ("The address of the source MUST be set"
when the sending end sets dynamic, 3.5.3), or refuses -- creating a terminus is optional (2.6.3:
MAY), and a refusal is an attach without terminus followed at once by a detach (2.6.3: MUST
immediately detach). The requester sends requests with reply-to = that address and a message-id;
the responder answers to reply-to, echoing the message-id in correlation-id. Properties are part
of the bare message and must arrive unaltered (3.2.4), which is what makes the correlation work.

Brokers that refuse dynamic nodes (e.g. RabbitMQ 3.x ends the session with not-implemented) skip
the scenario with their answer; a broker that does not answer the attach at all fails it.
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._common10 import BARE_UNCHANGED, DYNAMIC_ADDRESS, DYNAMIC_DOC, PROPERTIES_UNALTERED, REFUSAL_DETACH
from ._proton import (QUIET, WAIT, BrokerRefused, Client, Receiver, Scenario, StepTimeout, StopScenario, message, run,
                      shown)

SECTION = "amqp10/scenario.request-reply"


def dynamic_receiver(sc: Scenario, client: Client, credit: int = 10, **opts: object) -> Receiver:
    """A receiving link from a node the broker creates; skips when the broker declines, fails when
    it does not answer."""
    try:
        r = client.receiver(None, dynamic=True, credit=credit, **opts)  # type: ignore[arg-type]
    except BrokerRefused as exc:
        sc.ctx.skip(f"the broker does not create a dynamic node here: it answered the attach with {exc.observed} "
                    "(creating a terminus is optional, 2.6.3)")
    except StepTimeout:
        sc.check(False, "the attach asking for a dynamic node is answered",
                 expected="attach naming the created node, or attach without source then detach",
                 observed=f"no answer within {WAIT:g}s", clauses=REFUSAL_DETACH + DYNAMIC_ADDRESS)
        raise StopScenario("no answer to the dynamic attach") from None
    source = r.link.remote_source
    if source.dynamic:
        sc.check(bool(source.address), "the broker's attach names the node it created",
                 expected="source with dynamic=true and an address", observed=f"address {source.address!r}",
                 clauses=DYNAMIC_ADDRESS)
    if not source.address:
        sc.ctx.skip(f"the broker attached the dynamic request without naming a node (source dynamic={source.dynamic}, "
                    "no address): there is nothing to reply to")
    return r


@case(f"{SECTION}/dynamic-reply-node",
      title="requests carry the dynamic node as reply-to and replies come back with the message-id as correlation-id",
      clauses=PROPERTIES_UNALTERED, timeout=12.0)
def dynamic_reply_node(ctx: Context) -> None:
    """The responder consumes a service node; the requester attaches a dynamic reply node and sends
    two requests with reply-to = its address and a message-id each. Passes when the responder gets
    both with reply-to and message-id as sent (3.2.4: properties unaltered), and the replies it sends
    to reply-to, with correlation-id = the request's message-id, reach the requester with that
    correlation-id and their bodies (3.2.4, 3.2). The attach must be answered with the node's address
    (3.5.3) or refused (2.6.3); a refusal skips the case."""

    def body(sc: Scenario) -> None:
        service = sc.node("queue", "svc")
        sc.step("the requester asks the broker for a dynamic reply node")
        requester = sc.client("requester")
        replies = dynamic_receiver(sc, requester)
        reply_to = replies.address
        sc.step(f"the responder consumes the service node {service!r}")
        responder = sc.client("responder")
        requests = responder.receiver(service, mode="move", credit=10)
        out = requester.sender(service)
        token = sc.token()
        sent = {f"req-{i}-{token}": f"compute {i} {token}".encode() for i in range(2)}
        for mid, payload in sent.items():
            out.send(message(payload, id=mid, reply_to=reply_to))
        sc.pump(lambda: len(requests.inbox) >= len(sent), WAIT)
        got = {str(r.message.id): r for r in requests.inbox}
        wrong = [f"{mid}: " + (got[mid].summary() if mid in got else "missing") for mid in sent
                 if mid not in got or got[mid].message.reply_to != reply_to]
        sc.check(not wrong, "the responder gets each request with its message-id and reply-to",
                 expected=f"{len(sent)} requests, reply-to {reply_to!r}", observed="; ".join(wrong) or "all as sent")
        if not got:
            return
        sc.step("the responder replies to reply-to with correlation-id = the request's message-id")
        back = responder.sender(reply_to)
        for mid, r in got.items():
            back.send(message(b"result of " + r.body, correlation_id=r.message.id))
            requests.accept(r)
        sc.pump(lambda: len(replies.inbox) >= len(got), WAIT)
        corr = {str(r.message.correlation_id): r for r in replies.inbox}
        bad = [f"{mid}: " + (corr[mid].summary() if mid in corr else "no reply") for mid in got
               if mid not in corr or corr[mid].body != b"result of " + sent[mid]]
        sc.check(not bad, "each reply reaches the requester with correlation-id = the request's message-id",
                 expected=f"replies with correlation-ids {sorted(got)}", observed="; ".join(bad) or "all as sent",
                 clauses=BARE_UNCHANGED)
        for r in list(replies.inbox):
            replies.accept(r)

    run(ctx, body)


@case(f"{SECTION}/separate-dynamic-nodes",
      title="two requesters get distinct dynamic nodes and each receives only what is sent to its own",
      guideline=DYNAMIC_DOC, timeout=12.0)
def separate_dynamic_nodes(ctx: Context) -> None:
    """Two requesters, on their own connections, each attach a dynamic reply node; a responder sends
    one reply to each address. Passes when the two addresses differ (each attach asks the broker to
    create a node) and each requester gets exactly the reply sent to its own node, with its
    correlation-id (3.2.4)."""

    def body(sc: Scenario) -> None:
        nodes = []
        for label in ("requester-1", "requester-2"):
            nodes.append(dynamic_receiver(sc, sc.client(label)))
        addresses = [n.address for n in nodes]
        sc.check(addresses[0] != addresses[1], "each dynamic attach creates its own node",
                 expected="two different addresses", observed=shown(addresses))
        if addresses[0] == addresses[1]:
            return
        responder = sc.client("responder")
        token = sc.token()
        for i, n in enumerate(nodes):
            responder.sender(n.address).send(message(f"reply {i} {token}".encode(), correlation_id=f"call-{i}-{token}"))
        sc.pump(lambda: all(n.inbox for n in nodes), WAIT)
        sc.quiet(QUIET)
        for i, n in enumerate(nodes):
            ids = [str(r.message.correlation_id) for r in n.inbox]
            sc.check(ids == [f"call-{i}-{token}"], f"{n.client.label} gets exactly the reply sent to its node",
                     expected=f"[call-{i}-{token}]", observed=shown(ids) if ids else "nothing")
            sc.check(all(r.message.correlation_id == f"call-{i}-{token}" for r in n.inbox),
                     f"{n.client.label}'s reply keeps its correlation-id", expected=f"call-{i}-{token}",
                     observed=shown(ids) if ids else "nothing", clauses=PROPERTIES_UNALTERED)

    run(ctx, body)
