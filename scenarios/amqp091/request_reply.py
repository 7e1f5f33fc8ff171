"""Request/reply with reply-to and correlation-id, driven by pika (spec 2.1.5.1 + 2.1.5.2).

The two first examples of 2.1.5 put together, as the spec suggests: requests go to a shared
service queue through the default exchange; each requester names its private reply queue in
the Reply-To property, "designed specifically for carrying the name of reply queues" (2.1.5.2);
the responder publishes the reply to the default exchange with that name as routing key and
copies the request's correlation-id. What the broker must do is route (default binding, direct
matching) and carry bodies and properties unchanged (3.1.1): that is what is checked.
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.case import Context, case

from ._pika import QUIET, WAIT, BrokerRefused, Client, Delivery, Scenario, props, run, shown

SECTION = "amqp091/scenario.request-reply"
DEFAULT_ROUTE = ("amqp091:3.1.3.1/2", "amqp091:queue.declare/default-binding",
                 "amqp091:basic.publish.exchange/default-exchange",
                 "amqp091:queue.bind.routing-key/direct-exchange-key-matching")
UNCHANGED = ("amqp091:3.1.1/1", "amqp091:3.1.1/2")
ACKED = ("amqp091:basic/10",)


def _requester(sc: Scenario, label: str) -> tuple[Client, Any, str]:
    c = sc.client(label)
    ch = c.channel()
    try:
        q = c.declare_queue(ch, "", exclusive=True).queue
    except BrokerRefused as exc:  # server naming is checked by the reply-queue scenario
        sc.ctx.note(f"{label}: server-named queue refused ({exc.observed}); using a client-named exclusive queue")
        ch = c.channel()
        q = c.declare_queue(ch, sc.name("reply"), exclusive=True).queue
    c.consume(ch, q, auto_ack=True)
    return c, ch, q


@case(f"{SECTION}/rpc", title="requests reach the service queue and replies reach each requester's reply-to queue",
      clauses=DEFAULT_ROUTE + UNCHANGED + ACKED, timeout=12.0)
def request_reply(ctx: Context) -> None:
    """A responder consumes a shared service queue with explicit acks; two requesters, each with a
    private reply queue, publish two requests each to the default exchange with reply-to (their
    queue) and a correlation-id. The responder collects all four, then answers in reverse order
    to the default exchange with routing key = reply-to and the request's correlation-id, and
    acks. Passes when the responder sees every request with reply-to and correlation-id as sent,
    each requester gets exactly its own two replies with its correlation-ids and bodies, and
    the acknowledged requests are gone from the service queue afterwards (basic/10)."""

    def body(sc: Scenario) -> None:
        sc.step("responder declares the service queue and consumes it with explicit acks")
        responder = sc.client("responder")
        rch = responder.channel()
        service = responder.declare_queue(rch, sc.name("svc")).queue
        responder.qos(rch, 10)
        responder.consume(rch, service, auto_ack=False)

        sc.step("two requesters declare their reply queues and send two requests each")
        requests: dict[str, tuple[str, str, bytes]] = {}   # correlation-id -> (requester, reply-to, body)
        requesters: dict[str, Client] = {}
        for r in ("requester-1", "requester-2"):
            c, ch, reply_q = _requester(sc, r)
            requesters[r] = c
            for i in range(2):
                cid = f"{r}-{i}-{ctx.rng.randrange(1 << 30):08x}"
                payload = f"compute {cid}".encode()
                c.publish(ch, "", service, payload, properties=props(reply_to=reply_q, correlation_id=cid,
                                                                      message_id=f"m-{cid}"))
                requests[cid] = (r, reply_q, payload)
        sc.pump(lambda: len(responder.inbox) >= len(requests), WAIT)
        seen = {d.properties.correlation_id: d for d in responder.inbox}
        wrong = [f"{cid}: {'missing' if cid not in seen else seen[cid].summary()}"
                 for cid, (_, reply_q, payload) in requests.items()
                 if cid not in seen or seen[cid].properties.reply_to != reply_q or seen[cid].body != payload]
        sc.check(not wrong, "the responder receives every request with its reply-to and correlation-id",
                 expected=f"{len(requests)} requests as sent", observed="; ".join(wrong) or "all as sent",
                 clauses=DEFAULT_ROUTE + UNCHANGED)

        sc.step("responder replies in reverse order (Basic.Publish exchange=<empty> routing-key=<reply-to>) and acks")
        for d in reversed(responder.inbox):
            p = d.properties
            responder.publish(rch, "", p.reply_to or "", b"result of " + d.body,
                              properties=props(correlation_id=p.correlation_id))
            responder.ack(d)
        sc.pump(lambda: sum(len(c.inbox) for c in requesters.values()) >= len(seen), WAIT)
        for r, c in requesters.items():
            mine = {cid for cid, (who, _, _) in requests.items() if who == r and cid in seen}
            got: list[Delivery] = c.inbox
            ids = [d.properties.correlation_id for d in got]
            bad = [d.summary() for d in got if d.properties.correlation_id not in mine
                   or d.body != b"result of " + requests[d.properties.correlation_id][2]]
            sc.check(sorted(ids) == sorted(mine) and not bad, f"{r} gets exactly its own replies",
                     expected=f"correlation-ids {sorted(mine)}",
                     observed=f"{sorted(ids)}" + (f"; unexpected {shown(bad)}" if bad else ""),
                     clauses=DEFAULT_ROUTE + UNCHANGED)

        sc.step("the responder disconnects; the acknowledged requests must not come back")
        responder.close()
        checker = sc.client("checker")
        cch = checker.channel()
        # unacknowledged messages would be requeued when the broker ends the channel, which may
        # follow close-ok by a little: watch the count for a short while, not just once
        counts = []
        stop = time.monotonic() + QUIET
        while True:
            counts.append(checker.declare_queue(cch, service, passive=True).message_count)
            if counts[-1] or time.monotonic() >= stop:
                break
            time.sleep(0.05)
        sc.check(not any(counts), "acknowledged requests are removed from the service queue",
                 expected="message-count 0 after the responder acked everything and closed",
                 observed=f"message-count {counts[-1]} ({len(counts)} looks in {QUIET:g}s)", clauses=ACKED)

    run(ctx, body)
