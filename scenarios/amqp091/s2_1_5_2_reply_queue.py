"""Spec 2.1.5.2 Constructing a Reply Queue, driven by pika.

The spec's second example: a requester declares a queue with an empty name and exclusive set,
the server names it (queue.declare.queue/default-name), and anyone can reach it through the
default exchange with that name as routing key. Reply queues are "temporary, server-named, and
private to one consumer" (2.1.1.1): the exclusive flag makes them "accessible only by the current
connection, and ... deleted when that connection closes" (queue.declare exclusive field, 2.1.4.1).
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.case import Context, case

from ._pika import WAIT, BrokerRefused, Client, Scenario, props, refused, run, shown

SECTION = "amqp091/scenario.reply-queue"
DEFAULT_NAME = ("amqp091:queue.declare.queue/default-name",)
DEFAULT_ROUTE = ("amqp091:3.1.3.1/2", "amqp091:queue.declare/default-binding",
                 "amqp091:basic.publish.exchange/default-exchange",
                 "amqp091:queue.bind.routing-key/direct-exchange-key-matching")
UNCHANGED = ("amqp091:3.1.1/1", "amqp091:3.1.1/2")
EXCLUSIVE_RULE = ("amqp091:queue.declare.exclusive/exclusive",)
EXCLUSIVE_DOC = ("Exclusive queues may only be accessed by the current connection, and are deleted when that "
                 "connection closes. Passive declaration of an exclusive queue by other connections are not "
                 "allowed. [queue.declare exclusive]")
GONE_DOC = ("exclusive - if set, the queue belongs to the current connection only, and is deleted when the "
            "connection closes. [2.1.4.1]")
RESOURCE_LOCKED = 405
NOT_FOUND = 404
COMPARED = ("correlation_id", "message_id", "content_type", "app_id", "type")


def _reply_queue(sc: Scenario, label: str = "requester", *, fallback: bool = False) -> tuple[Client, Any, str]:
    """Queue.Declare queue=<empty> exclusive=TRUE; S: Queue.Declare-Ok queue=tmp.1

    With ``fallback``, a broker that refuses to name the queue (checked by the flow case) gets a
    client-named exclusive queue instead, so that a case about exclusivity still checks exclusivity.
    """
    requester = sc.client(label)
    ch = requester.channel()
    if fallback:
        try:
            return requester, ch, requester.declare_queue(ch, "", exclusive=True).queue
        except BrokerRefused as exc:
            sc.ctx.note(f"the broker refused a server-named queue ({exc.observed}): using a client-named "
                        "exclusive queue; amqp091/scenario.reply-queue/flow checks the naming")
            ch = requester.channel()
            return requester, ch, requester.declare_queue(ch, sc.name("reply"), exclusive=True).queue
    ok = sc.require("queue.declare with an empty name and exclusive is accepted",
                    lambda: requester.declare_queue(ch, "", exclusive=True),
                    expected="queue.declare-ok", clauses=DEFAULT_NAME + ("amqp091:queue.declare.exclusive/types",))
    return requester, ch, ok.queue


def _differences(sent: Any, got: Any) -> list[str]:
    diff = [f"{f}: sent {getattr(sent, f)!r}, got {getattr(got, f, None)!r}" for f in COMPARED
            if getattr(sent, f) is not None and getattr(got, f, None) != getattr(sent, f)]
    for key, value in (sent.headers or {}).items():
        have = (got.headers or {}).get(key)
        if have != value:
            diff.append(f"headers[{key!r}]: sent {value!r}, got {have!r}")
    return diff


@case(f"{SECTION}/flow", title="a server-named exclusive reply queue receives what is published to its name",
      clauses=DEFAULT_NAME + ("amqp091:queue.declare.exclusive/types",) + DEFAULT_ROUTE + UNCHANGED + ("amqp091:4.7/1",),
      timeout=12.0)
def reply_queue_flow(ctx: Context) -> None:
    """The 2.1.5.2 example with pika: the requester declares two queues with empty names and
    exclusive set (both names must be generated, non-empty and different), consumes from the
    first; a responder on another connection publishes three replies to the default exchange with
    that name as routing key. Passes when all three arrive, in order, with body and the
    properties set by the responder unchanged."""

    def body(sc: Scenario) -> None:
        sc.step("requester declares its reply queues (Queue.Declare queue=<empty> exclusive=TRUE)")
        requester, rch, tmp1 = _reply_queue(sc)
        tmp2 = requester.declare_queue(rch, "", exclusive=True).queue
        sc.check(bool(tmp1) and bool(tmp2) and tmp1 != tmp2, "the server generates a unique name for each",
                 expected="two non-empty, different names", observed=f"{tmp1!r} and {tmp2!r}", clauses=DEFAULT_NAME)
        requester.consume(rch, tmp1, auto_ack=True)

        sc.step("responder publishes three replies to the default exchange (Basic.Publish exchange=<empty> routing-key=tmp.1)")
        responder = sc.client("responder")
        sch = responder.channel()
        sent = []
        for i in range(3):
            p = props(correlation_id=f"req-{i}", message_id=f"reply-{i}", content_type="text/plain",
                      app_id="amqpspec", type="reply", headers={"n": i, "step": "reply"})
            payload = f"reply {i}: \x00\xff binary".encode("latin-1")
            responder.publish(sch, "", tmp1, payload, properties=p)
            sent.append((payload, p))
        sc.pump(lambda: len(requester.inbox) >= len(sent), WAIT)
        got = requester.inbox
        sc.check(len(got) >= len(sent), "every reply published to the queue's generated name arrives",
                 expected=f"{len(sent)} deliveries", observed=f"{len(got)}: {shown(d.body for d in got)}",
                 clauses=DEFAULT_ROUTE)
        if not got:
            return
        order = [d.properties.correlation_id for d in got]
        sc.check(order == [p.correlation_id for _, p in sent][:len(got)], "replies arrive in the order published",
                 expected=str([p.correlation_id for _, p in sent]), observed=str(order), clauses=("amqp091:4.7/1",))
        by_id = {p.correlation_id: (b, p) for b, p in sent}
        changed = []
        for d in got:
            payload, p = by_id.get(d.properties.correlation_id, (None, None))
            if p is None:
                changed.append(f"unknown reply {d.summary()}")
                continue
            if d.body != payload:
                changed.append(f"{p.correlation_id}: body {d.body!r} != {payload!r}")
            changed += [f"{p.correlation_id}: {x}" for x in _differences(p, d.properties)]
        sc.check(not changed, "bodies and properties arrive unchanged", expected="body, correlation-id, message-id, "
                 "content-type, app-id, type and headers as published", observed="; ".join(changed) or "unchanged",
                 clauses=UNCHANGED)

    run(ctx, body)


@case(f"{SECTION}/private", title="another connection cannot use a reply queue declared exclusive (405 resource-locked)",
      clauses=EXCLUSIVE_RULE, timeout=12.0)
def reply_queue_private(ctx: Context) -> None:
    """The requester holds a server-named exclusive queue; a second connection tries, each on a
    fresh channel, what the rule's scenario lists: passive declare, declare, bind, consume, get,
    purge, delete. Each must be refused with a channel exception (the exclusive field's doc, a
    guideline: warning); the rule's on-failure names resource-locked, 405 (a MAY rule:
    informational)."""

    def body(sc: Scenario) -> None:
        sc.step("requester declares its private reply queue")
        requester, rch, tmp = _reply_queue(sc, fallback=True)
        requester.consume(rch, tmp, auto_ack=True)
        sc.step("another connection tries to use it")
        other = sc.client("intruder")
        attempts = [
            ("passive queue.declare", lambda ch: other.declare_queue(ch, tmp, passive=True)),
            ("queue.declare", lambda ch: other.declare_queue(ch, tmp, register=False)),
            ("queue.bind to amq.direct", lambda ch: other.bind(ch, tmp, "amq.direct", ctx.name("rk"))),
            ("basic.consume", lambda ch: other.consume(ch, tmp, auto_ack=True)),
            ("basic.get", lambda ch: other.do(f"basic.get({tmp!r})", ch.basic_get, tmp, auto_ack=True)),
            ("queue.purge", lambda ch: other.do(f"queue.purge({tmp!r})", ch.queue_purge, tmp)),
            ("queue.delete", lambda ch: other.do(f"queue.delete({tmp!r})", ch.queue_delete, tmp)),
        ]
        codes: dict[str, int | None] = {}
        for what, attempt in attempts:
            ch = other.channel()
            refusal = refused(lambda: attempt(ch))
            codes[what] = refusal.code if refusal and refusal.kind == "channel.close" else None
            sc.check(refusal is not None and refusal.kind == "channel.close",
                     f"{what} of another connection's exclusive queue is refused",
                     expected="channel.close (a channel exception)",
                     observed=refusal.observed if refusal else "accepted", clauses=EXCLUSIVE_RULE,
                     guideline=EXCLUSIVE_DOC)
            if refusal is not None and refusal.kind == "connection.close":
                break
        wrong = {w: c for w, c in codes.items() if c is not None and c != RESOURCE_LOCKED}
        sc.check(not wrong, "the refusals use reply code 405 (resource-locked)", expected="405 for every refusal",
                 observed=", ".join(f"{w}: {c}" for w, c in codes.items()), clauses=EXCLUSIVE_RULE)
        # the intruder leaves before the owner: a broker that let it consume the exclusive queue may
        # otherwise be left with a consumer on a queue deleted under it (garagemq 0.1 then stops
        # answering every client), which would blame whatever case runs next
        other.close()

    run(ctx, body)


@case(f"{SECTION}/gone-with-connection", title="a reply queue declared exclusive is deleted when its connection closes",
      guideline=GONE_DOC, timeout=12.0)
def reply_queue_gone(ctx: Context) -> None:
    """Two requesters each declare a server-named exclusive queue; the first closes its connection
    with connection.close, the second closes the socket without it (4.5 case 3). Another
    connection then declares each name passively (retrying for a few seconds: deletion follows
    the close): passes when both are refused with 404 (not-found), i.e. the queues are gone."""

    def body(sc: Scenario) -> None:
        sc.step("two requesters declare their reply queues")
        polite, _, q1 = _reply_queue(sc, "requester-1", fallback=True)
        rude, _, q2 = _reply_queue(sc, "requester-2", fallback=True)
        sc.step("requester-1 closes its connection (Close/Close-Ok); requester-2 drops its socket")
        polite.close()
        rude.abort()
        observer = sc.client("observer")
        for who, q in (("connection.close", q1), ("socket closed without close", q2)):
            sc.step(f"observer declares {q!r} passively until the broker says it is gone")
            outcome = _until_gone(sc, observer, q)
            sc.check(isinstance(outcome, BrokerRefused) and outcome.code == NOT_FOUND,
                     f"the exclusive queue is deleted after {who}",
                     expected="passive queue.declare refused with 404 (not-found)",
                     observed=outcome.observed if isinstance(outcome, BrokerRefused) else
                     f"still there after {WAIT:g}s: {outcome}")

    run(ctx, body)


def _until_gone(sc: Scenario, observer: Client, queue: str) -> BrokerRefused | str:
    """Passive declares (a fresh channel each: a refusal closes it) until refused or WAIT passes."""
    stop = time.monotonic() + WAIT
    last = ""
    while True:
        ch = observer.channel()
        try:
            ok = observer.declare_queue(ch, queue, passive=True)
        except BrokerRefused as exc:
            return exc
        last = f"declare-ok (messages={ok.message_count}, consumers={ok.consumer_count})"
        observer.close_channel(ch)
        if time.monotonic() >= stop or sc.ctx.remaining() < 1.0:
            return last
        time.sleep(0.05)
