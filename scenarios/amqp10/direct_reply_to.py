"""RabbitMQ Direct Reply-To over AMQP 1.0, driven by python-qpid-proton.

A RabbitMQ extension: request/reply without a reply queue. The requester attaches a receiving link
whose source asks for a "volatile queue" -- no address, dynamic, expiry-policy link-detach,
durable none, timeout 0, capability ``rabbitmq:volatile-queue``, snd-settle-mode settled -- and
RabbitMQ answers with a pseudo-queue address ``/queues/amq.rabbitmq.reply-to.<opaque-suffix>``.
Requests carry it as reply-to; the responder sends the reply to that address. What is checked is
what RabbitMQ's guide documents (no RFC 2119 text: each check is a guideline, a warning when not
met), quoted from the guide's "Usage in AMQP 1.0" and "AMQP 1.0 Caveats and Limitations".

Brokers that do not offer it (every broker but RabbitMQ with AMQP 1.0 Direct Reply-To; RabbitMQ
3.x ends the session with not-implemented for a dynamic source) skip with their answer. The 0-9-1
side of the feature is covered by ``amqp091/rabbitmq.direct-reply-to*``.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level

from ._common10 import PROPERTIES_UNALTERED
from ._proton import (QUIET, WAIT, BrokerRefused, Client, Receiver, Scenario, StepTimeout, message, refused, run,
                      shown, terminus_list)

SECTION = "amqp10/rabbitmq.direct-reply-to"
VOLATILE = "rabbitmq:volatile-queue"
PREFIX = "/queues/amq.rabbitmq.reply-to."
GUIDE = "[RabbitMQ guide: Direct Reply-To, Usage in AMQP 1.0]"
CAVEATS = "[RabbitMQ guide: Direct Reply-To, AMQP 1.0 Caveats and Limitations]"
ATTACH_DOC = ("The requester first attaches a link to receive reply messages. ... Set snd-settle-mode to settled ... "
              "Leave address unset; RabbitMQ will generate the address. ... Set expiry-policy to link-detach. ... "
              "Include rabbitmq:volatile-queue in capabilities. RabbitMQ returns a broker-generated pseudo-queue "
              "address in the address field of the attach response. It looks like "
              f"/queues/amq.rabbitmq.reply-to.<opaque-suffix>, where <opaque-suffix> is not meaningful to clients. {GUIDE}")
REPLY_DOC = ("For each request, set the following message properties: message-id ... (The responder will set the "
             "reply's correlation-id to this value.) reply-to: the address received in the attach response. The "
             "responder reads the request's reply-to and sends the reply to that address via one of two options: ... "
             f"Create a sending link directly to the provided address. {GUIDE} The requester must receive replies "
             f"settled. {CAVEATS}")
GONE_DOC = ("Create a sending link directly to the provided address. In this case, RabbitMQ checks whether the "
            f"requester is still connected; if not, RabbitMQ refuses the link. {GUIDE}")
UNSETTLED_DOC = ("The responder should send replies settled. If it sends replies unsettled, RabbitMQ immediately "
                 "settles them with the accepted outcome, even if the reply may subsequently be dropped. ... RabbitMQ "
                 f"drops replies when: The AMQP 1.0 requester runs out of link credit. {CAVEATS}")


def _requester(sc: Scenario, label: str = "requester", credit: int = 10) -> tuple[Client, Receiver]:
    """The requester's Direct Reply-To link as the guide describes it; skips where it is not offered."""
    client = sc.client(label)
    try:
        r = client.receiver(None, dynamic=True, snd_settle="settled", capabilities=[VOLATILE], expiry="link-detach",
                            durable=0, credit=credit)
    except BrokerRefused as exc:
        sc.ctx.skip(f"the broker refused the Direct Reply-To attach with {exc.observed}: no Direct Reply-To for AMQP 1.0")
    except StepTimeout:
        sc.ctx.skip(f"no answer to the Direct Reply-To attach within {WAIT:g}s: no Direct Reply-To for AMQP 1.0")
    address = r.address or ""
    offered = address.startswith(PREFIX) or VOLATILE in terminus_list(r.link.remote_source.capabilities)
    if not offered:
        if (sc.ctx.target.broker.product or "").lower() != "rabbitmq":
            sc.ctx.skip(f"the broker made an ordinary dynamic node ({address!r}) of the request: it does not offer "
                        "RabbitMQ's Direct Reply-To")
        sc.check(False, "the attach response names a pseudo-queue /queues/amq.rabbitmq.reply-to.<suffix>",
                 expected=f"{PREFIX}<opaque-suffix>", observed=f"source {address!r}", level=Level.SHOULD,
                 guideline=ATTACH_DOC)
    else:
        sc.check(address.startswith(PREFIX) and len(address) > len(PREFIX),
                 "the attach response names a pseudo-queue /queues/amq.rabbitmq.reply-to.<suffix>",
                 expected=f"{PREFIX}<opaque-suffix>", observed=f"source {address!r}", level=Level.SHOULD,
                 guideline=ATTACH_DOC)
    return client, r


def _request(sc: Scenario, requester: Client, reply_to: str) -> tuple[Client, Receiver, str, str]:
    """A responder on a request node, and one request sent to it; returns the request's message-id."""
    service = sc.node("queue", "requests")
    responder = sc.client("responder")
    inbox = responder.receiver(service, credit=10)
    mid = f"rpc-{sc.token()}"
    requester.sender(service).send(message(b"ping", id=mid, reply_to=reply_to))
    sc.pump(lambda: any(str(r.message.id) == mid for r in inbox.inbox), WAIT)
    return responder, inbox, service, mid


@case(f"{SECTION}/rpc",
      title="a reply sent to the Direct Reply-To address reaches the requester settled, with its correlation-id",
      level=Level.SHOULD, guideline=REPLY_DOC, timeout=12.0)
def drt_rpc(ctx: Context) -> None:
    """The requester attaches as the guide says and grants credit; it sends a request with a
    message-id and reply-to = the pseudo-queue address to a request node. Passes when the responder
    gets the request with that reply-to (3.2.4), a sending link to the address is accepted, and the
    reply -- correlation-id = the request's message-id -- reaches the requester settled, with its
    correlation-id (3.2.4)."""

    def body(sc: Scenario) -> None:
        requester, replies = _requester(sc)
        responder, inbox, _, mid = _request(sc, requester, replies.address)
        got = next((r for r in inbox.inbox if str(r.message.id) == mid), None)
        sc.check(got is not None and got.message.reply_to == replies.address,
                 "the responder gets the request with reply-to = the pseudo-queue address",
                 expected=f"reply-to {replies.address!r}", observed=got.summary() if got else "no request",
                 clauses=PROPERTIES_UNALTERED)
        if got is None:
            return
        inbox.accept(got)
        back = sc.require("a sending link to the reply address is accepted while the requester is connected",
                          lambda: responder.sender(got.message.reply_to, presettled=True),
                          expected="attach with the reply address as target", level=Level.SHOULD, guideline=GONE_DOC)
        back.send(message(b"pong", correlation_id=got.message.id))
        sc.pump(lambda: bool(replies.inbox), WAIT)
        reply = next((r for r in replies.inbox if str(r.message.correlation_id) == mid), None)
        sc.check(reply is not None and reply.settled, "the reply reaches the requester, settled",
                 expected=f"a settled transfer with correlation-id {mid}",
                 observed=reply.summary() if reply else shown(r.summary() for r in replies.inbox) or "nothing")
        if reply is not None:
            sc.check(reply.body == b"pong", "the reply keeps its body and correlation-id", expected="b'pong'",
                     observed=reply.summary(), clauses=PROPERTIES_UNALTERED)

    run(ctx, body)


@case(f"{SECTION}/requester-gone-link-refused",
      title="a sending link to the reply address of a requester that disconnected is refused",
      level=Level.SHOULD, guideline=GONE_DOC, timeout=12.0)
def drt_requester_gone(ctx: Context) -> None:
    """The requester sends a request with reply-to = its pseudo-queue address, then closes its
    connection; the responder then attaches a sending link to that address (retrying for a few
    seconds: the broker learns of the close asynchronously). Passes when the broker refuses the
    link (detach with an error, or end/close)."""

    def body(sc: Scenario) -> None:
        requester, replies = _requester(sc)
        responder, inbox, _, mid = _request(sc, requester, replies.address)
        got = next((r for r in inbox.inbox if str(r.message.id) == mid), None)
        if got is None or not got.message.reply_to:
            sc.check(False, "the responder gets the request with its reply-to", expected="the request",
                     observed=got.summary() if got else "no request", clauses=PROPERTIES_UNALTERED)
            return
        inbox.accept(got)
        sc.step("the requester closes its connection; the responder then attaches to the reply address")
        requester.close()
        attempts, outcome = 0, None
        while True:
            attempts += 1
            outcome = refused(lambda: responder.sender(got.message.reply_to, presettled=True, timeout=WAIT))
            if outcome is not None or sc.ctx.remaining() < 2.0 or attempts >= 10:
                break
            responder.idle(0.3)
        sc.check(outcome is not None, "the link to a gone requester's reply address is refused",
                 expected="detach (or end/close) in answer to the attach",
                 observed=outcome.observed if outcome else f"attached, {attempts} attempts over a few seconds")

    run(ctx, body)


@case(f"{SECTION}/unsettled-reply-accepted",
      title="an unsettled reply is accepted at once, and dropped when the requester has no credit",
      level=Level.SHOULD, guideline=UNSETTLED_DOC, timeout=12.0)
def drt_unsettled_reply(ctx: Context) -> None:
    """The requester attaches without granting credit; the responder sends a reply unsettled to its
    address. Passes when the broker settles the reply with the accepted outcome and, the requester
    then granting credit, the reply does not come (no credit at the time: dropped, not buffered)."""

    def body(sc: Scenario) -> None:
        requester, replies = _requester(sc, credit=0)
        responder = sc.client("responder")
        back = responder.sender(replies.address)
        cid = f"late-{sc.token()}"
        outcome = back.send(message(b"pong", correlation_id=cid))
        sc.check(outcome == "accepted", "the unsettled reply is settled by the broker with accepted",
                 expected="accepted", observed=outcome)
        sc.step("the requester grants credit only now")
        replies.flow(5)
        sc.quiet(QUIET)
        late = [r.summary() for r in replies.inbox]
        sc.check(not late, "a reply sent while the requester had no credit is dropped", expected="no delivery",
                 observed=shown(late) if late else "nothing")

    run(ctx, body)
