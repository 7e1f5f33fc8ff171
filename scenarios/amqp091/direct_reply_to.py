"""RabbitMQ Direct Reply-To (amq.rabbitmq.reply-to) with pika: request/reply without a reply queue.

A RabbitMQ extension, advertised as the ``direct_reply_to`` capability in connection.start; the
cases skip on brokers that do not offer it. What is checked is what RabbitMQ's guide documents
for AMQP 0-9-1 (no RFC 2119 text: every check is a guideline, a warning when not met):

- the requester consumes from the pseudo-queue amq.rabbitmq.reply-to in no-ack mode (it need not
  declare it, but may) and sets reply-to to amq.rabbitmq.reply-to on its requests;
- the broker rewrites that reply-to to amq.rabbitmq.reply-to.<opaque suffix>; the responder
  publishes its reply to the default exchange with that value as routing key;
- the consumer must be no-ack; a requester has at most one such consumer per channel;
- a passive declare of the rewritten name on a disposable channel tells whether the requester
  is still there (it succeeds, with 0 messages and 1 consumer, or fails; it cannot create it);
- replies are not fault-tolerant: they are dropped when the requester has disconnected.

The raw-peer cases of section ``rabbitmq.direct-reply-to`` look at the same feature on the wire.
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level

from ._pika import QUIET, WAIT, BrokerRefused, Client, Scenario, props, refused, run, shown

SECTION = "amqp091/rabbitmq.direct-reply-to-pika"
NEEDS = ("direct_reply_to",)
PSEUDO = "amq.rabbitmq.reply-to"
# The guide's statements as the catalog records them (rabbitmq-guides.toml: clause ids
# rabbitmq091:direct-reply-to/<name>, with the releases whose guide says so); each guideline
# quotes one, so the checks cite it and weigh what the file gives it.
GUIDE = "[RabbitMQ guide: Direct Reply-To, usage in AMQP 0.9.1]"
USAGE_DOC = ("A requester consumes from the pseudo-queue amq.rabbitmq.reply-to in no-ack mode, without declaring it "
             "first (it may declare it), and sets reply-to amq.rabbitmq.reply-to on its request. " + GUIDE)
REWRITE_DOC = ("The responder sees the request's reply-to rewritten to a generated name amq.rabbitmq.reply-to.<suffix>; "
               "a reply published to the default exchange with that routing key goes straight to the requester's "
               "consumer. " + GUIDE)
# rabbitmq091:direct-reply-to/no-ack-only is a MAY: the guide puts the no-ack requirement on the
# client and leaves the broker's reaction to an ack-mode consumer unsaid (a refusal is an inference)
NO_ACK_DOC = ("The requester must consume in automatic acknowledgement mode, since there is no queue to return a "
              "reply to if it disconnects or rejects it. " + GUIDE)
ALIVE_DOC = ("A responder can declare the generated reply name on a disposable channel to learn whether the "
             "requester is still there; the name cannot be created, even with passive=false: the declare succeeds "
             "(0 messages ready, 1 consumer) or fails. " + GUIDE)
DROPPED_DOC = ("Replies are not fault-tolerant: a reply is discarded when the requester that published the request "
               "has disconnected. " + GUIDE)


def _requester(sc: Scenario, label: str = "requester") -> tuple[Client, Any, str]:
    """A requester with its Direct Reply-To consumer (no-ack) on one channel."""
    c = sc.client(label)
    ch = c.channel()
    tag = sc.require(f"{label}: basic.consume on {PSEUDO} in no-ack mode is accepted",
                     lambda: c.consume(ch, PSEUDO, auto_ack=True), expected="basic.consume-ok",
                     level=Level.SHOULD, guideline=USAGE_DOC)
    return c, ch, tag


def _responder(sc: Scenario) -> tuple[Client, Any, str]:
    """A responder consuming a service queue of its own (no-ack: the requests are not the point)."""
    c = sc.client("responder")
    ch = c.channel()
    service = c.declare_queue(ch, sc.name("svc")).queue
    c.consume(ch, service, auto_ack=True)
    return c, ch, service


def _request(sc: Scenario, requester: Client, ch: Any, service: str, cid: str) -> None:
    requester.publish(ch, "", service, f"request {cid}".encode(), properties=props(reply_to=PSEUDO, correlation_id=cid))


def _rewritten(reply_to: str | None) -> bool:
    return bool(reply_to) and reply_to.startswith(PSEUDO + ".") and len(reply_to) > len(PSEUDO) + 1  # type: ignore[union-attr]


def _served_request(sc: Scenario, responder: Client, cid: str) -> Any:
    sc.pump(lambda: any(d.properties.correlation_id == cid for d in responder.inbox), WAIT)
    return next((d for d in responder.inbox if d.properties.correlation_id == cid), None)


@case(f"{SECTION}/rpc", title="a reply to the rewritten amq.rabbitmq.reply-to name reaches the requester's no-ack consumer",
      requires=NEEDS, level=Level.SHOULD, guideline=REWRITE_DOC, timeout=12.0)
def drt_rpc(ctx: Context) -> None:
    """The guide's flow with pika: the requester declares amq.rabbitmq.reply-to (allowed, not
    needed), consumes it in no-ack mode and sends two requests with reply-to amq.rabbitmq.reply-to
    and correlation-ids to a service queue; the responder must see reply-to rewritten to
    amq.rabbitmq.reply-to.<suffix> (correlation-id and body unchanged, 3.1.1) and publishes each reply
    to the default exchange with that name as routing key. Passes when both replies reach the
    requester's Direct Reply-To consumer with their correlation-ids and bodies."""

    def body(sc: Scenario) -> None:
        sc.step(f"requester declares {PSEUDO} (passive, then not) and consumes it in no-ack mode")
        requester = sc.client("requester")
        rch = requester.channel()
        for passive in (True, False):
            refusal = refused(lambda: requester.declare_queue(rch, PSEUDO, passive=passive, register=False))
            sc.check(refusal is None, f"the requester may declare {PSEUDO} ({'passive' if passive else 'not passive'})",
                     expected="queue.declare-ok", observed=refusal.observed if refusal else "declare-ok",
                     level=Level.SHOULD, guideline=USAGE_DOC)
            if refusal is not None:
                rch = requester.channel()
        tag = sc.require(f"basic.consume on {PSEUDO} in no-ack mode is accepted",
                         lambda: requester.consume(rch, PSEUDO, auto_ack=True), expected="basic.consume-ok",
                         level=Level.SHOULD, guideline=USAGE_DOC)
        responder, sch, service = _responder(sc)

        sc.step("requester sends two requests with reply-to amq.rabbitmq.reply-to")
        cids = [f"rpc-{i}-{ctx.rng.randrange(1 << 30):08x}" for i in range(2)]
        for cid in cids:
            _request(sc, requester, rch, service, cid)
        sc.pump(lambda: len(responder.inbox) >= len(cids), WAIT)
        seen = {d.properties.correlation_id: d for d in responder.inbox}
        reply_tos = [seen[c].properties.reply_to if c in seen else None for c in cids]
        sc.check(all(_rewritten(r) for r in reply_tos), "the responder sees reply-to rewritten to "
                 f"{PSEUDO}.<suffix>", expected=f"{PSEUDO}.<non-empty suffix> on each request",
                 observed=shown(reply_tos))

        sc.step("responder replies to the default exchange with routing key = the rewritten reply-to")
        for cid in cids:
            if cid in seen and seen[cid].properties.reply_to:
                responder.publish(sch, "", seen[cid].properties.reply_to, f"reply {cid}".encode(),
                                  properties=props(correlation_id=cid))
        sc.pump(lambda: len(requester.inbox) >= len(cids), WAIT)
        got = {d.properties.correlation_id: d for d in requester.inbox}
        wrong = [d.summary() for d in requester.inbox if d.consumer_tag != tag
                 or d.body != f"reply {d.properties.correlation_id}".encode()]
        sc.check(sorted(got) == sorted(cids) and not wrong, "each reply reaches the requester's Direct Reply-To "
                 "consumer", expected=f"replies {cids} delivered to consumer {tag!r}",
                 observed=f"{sorted(got)}" + (f"; unexpected {wrong}" if wrong else ""))
        if responder.returned:
            ctx.note(f"the responder got basic.return for a reply: {responder.returned[0][0]}")

    run(ctx, body)


@case(f"{SECTION}/ack-mode-refused", title="a consumer on amq.rabbitmq.reply-to with acknowledgements is refused",
      requires=NEEDS, guideline=NO_ACK_DOC)
def drt_ack_mode(ctx: Context) -> None:
    """basic.consume on amq.rabbitmq.reply-to with no-ack false: the guide says the requester must
    consume in no-ack mode, so the broker refuses with a channel exception (the guide names no
    code); a no-ack consumer on a fresh channel of the same connection is then accepted."""

    def body(sc: Scenario) -> None:
        c = sc.client("requester")
        ch = c.channel()
        refusal = refused(lambda: c.consume(ch, PSEUDO, auto_ack=False))
        sc.check(refusal is not None and refusal.kind == "channel.close",
                 f"basic.consume on {PSEUDO} with no-ack false is refused",
                 expected="channel.close (a channel exception)", observed=refusal.observed if refusal else "consume-ok")
        if refusal is not None and refusal.kind == "connection.close":
            return
        ch2 = c.channel()
        sc.require(f"a no-ack consumer on {PSEUDO} is accepted afterwards", lambda: c.consume(ch2, PSEUDO, auto_ack=True),
                   expected="basic.consume-ok", level=Level.SHOULD, guideline=USAGE_DOC)

    run(ctx, body)


@case(f"{SECTION}/one-consumer-per-channel", title="a second amq.rabbitmq.reply-to consumer on the same channel is refused",
      requires=NEEDS, clauses=("rabbitmq091:direct-reply-to/one-consumer-per-channel",))  # 4.2's guide only
def drt_one_per_channel(ctx: Context) -> None:
    """Two no-ack consumers on amq.rabbitmq.reply-to: the first on channel A is accepted; a second
    on the same channel must be refused with a channel exception (at most one per channel); one
    on channel B of the same connection is accepted (the limit is per channel, not connection)."""

    def body(sc: Scenario) -> None:
        c, ch, _ = _requester(sc)
        refusal = refused(lambda: c.consume(ch, PSEUDO, auto_ack=True))
        sc.check(refusal is not None and refusal.kind == "channel.close", "a second consumer on the same channel "
                 "is refused", expected="channel.close (a channel exception)",
                 observed=refusal.observed if refusal else "consume-ok")
        if refusal is not None and refusal.kind == "connection.close":
            return
        other = c.channel()
        sc.require("a Direct Reply-To consumer on another channel of the same connection is accepted",
                   lambda: c.consume(other, PSEUDO, auto_ack=True), expected="basic.consume-ok")

    run(ctx, body)


@case(f"{SECTION}/requester-alive",
      title="a passive declare of the rewritten reply-to succeeds while the requester is connected, fails after",
      requires=NEEDS, level=Level.SHOULD, guideline=ALIVE_DOC, timeout=12.0)
def drt_requester_alive(ctx: Context) -> None:
    """The requester sends a request; the responder declares the rewritten reply-to name on
    disposable channels: passive and not passive, both must succeed with message-count 0 and
    consumer-count 1 while the requester is connected. After the requester closes its connection,
    both must fail with a channel exception (retrying for a few seconds: the broker learns of the
    close asynchronously) -- the name cannot be created."""

    def body(sc: Scenario) -> None:
        requester, rch, _ = _requester(sc)
        responder, _, service = _responder(sc)
        cid = f"alive-{ctx.rng.randrange(1 << 30):08x}"
        _request(sc, requester, rch, service, cid)
        request = _served_request(sc, responder, cid)
        if request is None or not _rewritten(request.properties.reply_to):
            sc.check(False, "the responder gets the request with a rewritten reply-to",
                     expected=f"{PSEUDO}.<suffix>", observed=request.summary() if request else "no request",
                     guideline=REWRITE_DOC, level=Level.SHOULD)
            return
        name = request.properties.reply_to

        sc.step("responder declares the reply-to name on disposable channels while the requester is connected")
        for passive in (True, False):
            ch = responder.channel()
            try:
                ok = responder.declare_queue(ch, name, passive=passive, register=False)
                observed = f"declare-ok messages={ok.message_count} consumers={ok.consumer_count}"
                good = ok.message_count == 0 and ok.consumer_count == 1
                responder.close_channel(ch)
            except BrokerRefused as exc:
                observed, good = exc.observed, False
            sc.check(good, f"{'passive' if passive else 'non-passive'} declare of the reply-to name succeeds while "
                     "the requester is connected", expected="declare-ok with 0 messages and 1 consumer",
                     observed=observed)

        sc.step("requester closes its connection; the same declares must now fail")
        requester.close()
        for passive in (True, False):
            outcome = _until_refused(sc, responder, name, passive)
            sc.check(isinstance(outcome, BrokerRefused) and outcome.kind == "channel.close",
                     f"{'passive' if passive else 'non-passive'} declare of the reply-to name fails once the "
                     "requester is gone", expected="channel.close (a channel exception)",
                     observed=outcome.observed if isinstance(outcome, BrokerRefused) else outcome)

    run(ctx, body)


def _until_refused(sc: Scenario, client: Client, name: str, passive: bool) -> BrokerRefused | str:
    stop = time.monotonic() + WAIT
    while True:
        ch = client.channel()
        try:
            ok = client.declare_queue(ch, name, passive=passive, register=False)
        except BrokerRefused as exc:
            return exc
        client.close_channel(ch)
        if time.monotonic() >= stop or sc.ctx.remaining() < 1.0:
            return f"still declare-ok after {WAIT:g}s (messages={ok.message_count}, consumers={ok.consumer_count})"
        time.sleep(0.05)


@case(f"{SECTION}/gone-requester", title="a reply to a requester that disconnected is dropped, without error",
      requires=NEEDS, level=Level.SHOULD, guideline=DROPPED_DOC, timeout=12.0)
def drt_gone_requester(ctx: Context) -> None:
    """The requester sends a request and closes its connection; the responder then publishes the
    reply to the rewritten reply-to, once plainly and once with mandatory. Passes when the
    responder's channel stays open (a fence on it succeeds: dropping a reply is not an error) and
    the requester, reconnected with a new Direct Reply-To consumer, receives none of them. Whether
    the mandatory reply comes back as basic.return is only noted: the guide's versions disagree
    (older: "not routed", returned; current: counted as routed, no return)."""

    def body(sc: Scenario) -> None:
        requester, rch, _ = _requester(sc)
        responder, sch, service = _responder(sc)
        cid = f"gone-{ctx.rng.randrange(1 << 30):08x}"
        _request(sc, requester, rch, service, cid)
        requester.fence(rch)
        sc.step("requester disconnects before the reply")
        requester.close()
        request = _served_request(sc, responder, cid)
        if request is None or not _rewritten(request.properties.reply_to):
            sc.check(False, "the responder gets the request with a rewritten reply-to",
                     expected=f"{PSEUDO}.<suffix>", observed=request.summary() if request else "no request",
                     guideline=REWRITE_DOC, level=Level.SHOULD)
            return

        sc.step("responder replies to the gone requester, plainly and with mandatory")
        responder.publish(sch, "", request.properties.reply_to, f"reply {cid}".encode(),
                          properties=props(correlation_id=cid))
        responder.publish(sch, "", request.properties.reply_to, f"mandatory reply {cid}".encode(),
                          properties=props(correlation_id=cid), mandatory=True)
        refusal = refused(lambda: responder.fence(sch))
        sc.check(refusal is None, "the responder's channel stays open after replying to a gone requester",
                 expected="no exception (the fence on the channel is answered)",
                 observed=refusal.observed if refusal else "channel open")
        responder.drain()
        ctx.note("mandatory reply to the gone requester: " + (
            f"basic.return {responder.returned[0][0].reply_code} {responder.returned[0][0].reply_text}"
            if responder.returned else "no basic.return"))

        sc.step("the requester reconnects with a new Direct Reply-To consumer: the old replies must not come")
        again, _, _ = _requester(sc, "requester-again")
        sc.quiet(QUIET)
        late = [d.summary() for d in again.inbox]
        sc.check(not late, "the replies are dropped, not kept for a reconnecting requester",
                 expected="no delivery", observed=shown(late) if late else "nothing")

    run(ctx, body)
