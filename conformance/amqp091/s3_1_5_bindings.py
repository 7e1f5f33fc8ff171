"""Spec 3.1.5 Bindings and the queue.bind / queue.unbind rules of the XML.

A binding tells an exchange which messages a queue should get; it lives as long as its queue
(3.1.5). queue.bind must ignore duplicates, deliver a message once to a queue however many of
its bindings match (unique), bind durable queues to transient exchanges, take a blank exchange
name for the default exchange, and refuse (not-found) a missing queue, a missing exchange, or
no queue at all. queue.unbind has the same not-found rules, plus "If a unbind fails, the server
MUST raise a connection exception" (queue.unbind/01), which disagrees with their soft
not-found code: both are accepted.

The routing tables (on the pre-declared exchanges) are built by ``_routing``, shared with the topic
(3.1.3.3) and headers (3.1.3.4) modules.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.verify import ChannelException, ConnectionException, Replies
from amqpspec.wire.amqp091 import spec

from ._common import with_channel
from ._model import bind, bodies, declare_exchange, declare_queue, fence, publish, unique
from ._queue import drain, lookup, missing_queue_case, no_queue_name_case
from ._replies import attempt, ok_or_close, reopen
from ._routing import check_routes, routing_table

UNIQUE = ("amqp091:queue.bind/unique",)
UNBIND_FAILS = "amqp091:queue.unbind/01"
BINDINGS_3_1_5 = ("The lifespan of bindings depend on the message queues they are defined for - when a message "
                  "queue is destroyed, its bindings are also destroyed. [3.1.5]")
ROUTING_KEY_DOC = ("If the queue name is empty, the server uses the last queue declared on the channel. If the "
                   "routing key is also empty, the server uses this queue name for the routing key as well. "
                   "[queue.bind routing-key]")
UNBIND_DOC = "This method unbinds a queue from an exchange. [queue.unbind]"
DIRECT_3_1_3_1 = ("The direct exchange type works as follows: 1. A message queue binds to the exchange using a "
                  "routing key, K. 2. A publisher sends the exchange a message with the routing key R. 3. The "
                  "message is passed to the message queue if K = R. [3.1.3.1]")


# ---------------------------------------------------------------------------------- queue.bind
@case("amqp091/queue.bind/duplicates", title="a repeated identical queue.bind is not an error, and routes once",
      clauses=("amqp091:queue.bind/duplicates",) + UNIQUE)
def bind_duplicates(ctx: Context) -> None:
    """Binds a queue to amq.direct with a key, then repeats the same bind (the rule's scenario):
    the second must also be answered bind-ok. A message then published with that key must reach
    the queue once (queue.bind/unique)."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    bind(peer, ch, q, "amq.direct", q)
    obs = attempt(peer, ch, spec.QueueBind(queue=q, exchange="amq.direct", routing_key=q))
    if not ctx.check(obs, Replies("queue.bind-ok", channel=ch), clauses=("amqp091:queue.bind/duplicates",)):
        return
    publish(peer, ch, "amq.direct", q, b"once")
    fence(peer, ch)
    got = drain(peer, ch, q)
    ctx.record(bodies(got) == [b"once"], expected="the message once: [b'once']", observed=f"{bodies(got)}",
               what="the duplicate binding does not duplicate the message", clauses=UNIQUE)


@case("amqp091/queue.bind/unique", title="a message matching several bindings of a queue reaches it once",
      clauses=UNIQUE)
def bind_unique(ctx: Context) -> None:
    """Binds one queue to amq.topic with four patterns that all match "a.b.c" (a.b.c, a.*.c, a.#, #)
    and a second queue with one of them (the rule's scenario). Publishes "a.b.c" once: each queue
    must hold it once."""
    pubs: list[tuple[str, Any]] = [("a.b.c", None)]
    got = routing_table(ctx, "topic", {"four bindings": [("a.b.c", None), ("a.*.c", None), ("a.#", None), ("#", None)],
                                       "one binding": [("a.b.c", None)]}, pubs)
    check_routes(ctx, got, {"four bindings": [0], "one binding": [0]}, pubs)


@case("amqp091/queue.bind/unique-same-key-other-arguments",
      title="two direct bindings with the same key and different arguments deliver a message once",
      clauses=UNIQUE)
def bind_unique_arguments(ctx: Context) -> None:
    """Binds a queue to amq.direct twice with the same routing key (unique to the case), once without
    arguments and once with an arguments table (two bindings that may be distinct, both matching).
    A message with that key must reach the queue once."""
    key = unique(ctx, "k")
    pubs: list[tuple[str, Any]] = [(key, None)]
    got = routing_table(ctx, "direct", {"queue": [(key, None), (key, {"amqpspec-binding": "second"})]}, pubs)
    check_routes(ctx, got, {"queue": [0]}, pubs)


@case("amqp091/queue.bind/transient-exchange", title="a durable queue can be bound to a transient exchange",
      clauses=("amqp091:queue.bind/transient-exchange",))
def bind_transient_exchange(ctx: Context) -> None:
    """Declares a transient direct exchange and a named durable queue, and binds them (the rule's
    scenario): bind-ok passes; a message published with the key must then reach the queue."""
    peer, ch = with_channel(ctx)
    x = declare_exchange(ctx, peer, ch, "direct", durable=False)
    q = declare_queue(ctx, peer, ch, durable=True)
    obs = attempt(peer, ch, spec.QueueBind(queue=q, exchange=x, routing_key="k"))
    if not ctx.check(obs, Replies("queue.bind-ok", channel=ch)):
        return
    publish(peer, ch, x, "k", b"routed")
    fence(peer, ch)
    got = drain(peer, ch, q)
    ctx.record(bodies(got) == [b"routed"], expected="the message reaches the durable queue", observed=f"{bodies(got)}",
               what="the binding routes")


@case("amqp091/queue.bind/binding-count", title="a queue can have 4 bindings, to 4 different exchanges",
      clauses=("amqp091:queue.bind/binding-count",))
def binding_count(ctx: Context) -> None:
    """Binds one queue to 4 different exchanges (the rule's scenario): the pre-declared amq.direct,
    amq.fanout, amq.topic and amq.match, keyed by a token of the case (amq.match: header
    amqpspec-token). For an exchange the broker lacks, a second amq.direct binding with another key
    stands in (still 4 bindings per queue, the rule's text). All four binds must be answered
    bind-ok, and a message through each binding must reach the queue."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    token = unique(ctx, "k")
    match_args = {"x-match": "all", "amqpspec-token": token}
    bindings = []   # (exchange, routing key, arguments)
    for name, type in (("amq.direct", "direct"), ("amq.fanout", "fanout"), ("amq.topic", "topic"),
                       ("amq.match", "headers")):
        obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type=type, passive=True))
        if obs.methods("exchange.declare-ok", ch):
            bindings.append((name, token, match_args if type == "headers" else None))
        else:
            ch = reopen(peer, obs, ch)
            ctx.note(f"no {name}: a second amq.direct binding stands in for it")
            bindings.append(("amq.direct", f"{token}.{type}", None))
    outcomes = []
    for x, key, args in bindings:
        obs = attempt(peer, ch, spec.QueueBind(queue=q, exchange=x, routing_key=key, arguments=args))
        outcomes.append(f"{x} {key!r}: {ok_or_close(obs, 'queue.bind-ok', ch)}")
        if not obs.methods("queue.bind-ok", ch):
            ctx.record(False, expected="4 x queue.bind-ok", observed="; ".join(outcomes))
            return
    mine = token.encode() + b":"
    for i, (x, key, _) in enumerate(bindings):
        publish(peer, ch, x, key, mine + b"%d" % i, properties=spec.BasicProperties(headers={"amqpspec-token": token}))
    fence(peer, ch)
    got = sorted(int(b[len(mine):]) for b in bodies(drain(peer, ch, q, limit=4096)) if b.startswith(mine))
    ctx.record(got == [0, 1, 2, 3], expected="4 x queue.bind-ok, and one message through each binding",
               observed=f"{'; '.join(outcomes)}; messages through bindings {got}")


no_queue_name_case("queue.bind", lambda: spec.QueueBind(queue="", exchange="amq.direct", routing_key="k"),
                   "amqp091:queue.bind.queue/queue-known")
missing_queue_case("queue.bind", lambda q: spec.QueueBind(queue=q, exchange="amq.direct", routing_key=q),
                   "amqp091:queue.bind.queue/must-exist")


@case("amqp091/queue.bind.queue/empty-name-is-last-declared",
      title="queue.bind with empty queue name and routing key binds the last declared queue by its name",
      guideline=ROUTING_KEY_DOC)
def bind_current_queue(ctx: Context) -> None:
    """Declares a queue, then sends queue.bind to amq.direct with an empty queue name and an empty
    routing key on the same channel: bind-ok, and a message published to amq.direct with the
    queue's name as routing key must reach the queue."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    obs = attempt(peer, ch, spec.QueueBind(queue="", exchange="amq.direct", routing_key=""))
    if not ctx.check(obs, Replies("queue.bind-ok", channel=ch)):
        return
    publish(peer, ch, "amq.direct", q, b"by-name")
    fence(peer, ch)
    got = drain(peer, ch, q)
    ctx.record(bodies(got) == [b"by-name"], expected="the message sent to amq.direct with the queue's name arrives",
               observed=f"{bodies(got)}", what="bound with the queue's name as routing key")


@case("amqp091/queue.bind.exchange/exchange-existence",
      title="queue.bind to an exchange that does not exist is channel exception 404",
      clauses=("amqp091:queue.bind.exchange/exchange-existence",))
def bind_missing_exchange(ctx: Context) -> None:
    """Binds an existing queue to an exchange never declared (the rule's scenario). The rule's
    on-failure is not-found: channel.close 404 passes."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    x = unique(ctx, "missing")
    obs = attempt(peer, ch, spec.QueueBind(queue=q, exchange=x, routing_key="k"))
    ctx.check(obs, ChannelException(404, channel=ch))


@case("amqp091/queue.bind.exchange/default-exchange",
      title="queue.bind with a blank exchange name (the default exchange) is accepted",
      clauses=("amqp091:queue.bind.exchange/default-exchange",))
def bind_default_exchange(ctx: Context) -> None:
    """Declares a queue and binds it to the blank exchange name with the queue's name as routing key
    (the binding every queue has already, 3.1.3.1): the server MUST accept the blank name, so
    bind-ok passes. A message to the default exchange must then still reach the queue once."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    obs = attempt(peer, ch, spec.QueueBind(queue=q, exchange="", routing_key=q))
    if not ctx.check(obs, Replies("queue.bind-ok", channel=ch)):
        return
    publish(peer, ch, "", q, b"default")
    fence(peer, ch)
    got = drain(peer, ch, q)
    ctx.record(bodies(got) == [b"default"], expected="the message once: [b'default']", observed=f"{bodies(got)}",
               what="the default exchange still routes to the queue, once", clauses=UNIQUE)


@case("amqp091/queue.bind.routing-key/direct-exchange-key-matching",
      title="a direct binding with key K passes messages with routing key K, and not others",
      clauses=("amqp091:queue.bind.routing-key/direct-exchange-key-matching",))
def direct_key_matching(ctx: Context) -> None:
    """Binds a queue to amq.direct with key K = "<token>.k.1" (the token unique to the case) and
    publishes with keys K, "<token>.k.2", "<token>.k" and "<token>.K.1". The message with R = K MUST
    reach the queue (the rule); that the others do not follows from 3.1.3.1 and is checked as a
    guideline."""
    t = unique(ctx, "k")
    pubs: list[tuple[str, Any]] = [(f"{t}.k.1", None), (f"{t}.k.2", None), (f"{t}.k", None), (f"{t}.K.1", None)]
    got = routing_table(ctx, "direct", {"K=k.1": [(f"{t}.k.1", None)]}, pubs)
    ctx.record(0 in got["K=k.1"], expected="the message with routing key K arrives",
               observed=f"arrived: {[pubs[i][0] for i in got['K=k.1']]}", what="K = R is passed")
    check_routes(ctx, got, {"K=k.1": [0]}, pubs, what="only K = R is passed", guideline=DIRECT_3_1_3_1)


# ---------------------------------------------------------------------------------- queue.unbind
@case("amqp091/queue.unbind/stops-routing", title="after queue.unbind the binding no longer routes to the queue",
      guideline=UNBIND_DOC)
def unbind_stops_routing(ctx: Context) -> None:
    """Binds a queue to amq.direct with a key, unbinds it (unbind-ok), and publishes with that key:
    the queue must stay empty; a message to the default exchange then still reaches it."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    key = q + ".k"
    bind(peer, ch, q, "amq.direct", key)
    obs = attempt(peer, ch, spec.QueueUnbind(queue=q, exchange="amq.direct", routing_key=key))
    if not ctx.check(obs, Replies("queue.unbind-ok", channel=ch)):
        return
    publish(peer, ch, "amq.direct", key, b"unbound")
    publish(peer, ch, "", q, b"default")
    fence(peer, ch)
    got = bodies(drain(peer, ch, q))
    ctx.record(got == [b"default"], expected="only the message through the default exchange: [b'default']",
               observed=f"{got}", what="the unbound key routes nothing")


no_queue_name_case("queue.unbind", lambda: spec.QueueUnbind(queue="", exchange="amq.direct", routing_key="k"),
                   "amqp091:queue.unbind.queue/queue-known")
missing_queue_case("queue.unbind", lambda q: spec.QueueUnbind(queue=q, exchange="amq.direct", routing_key=q),
                   "amqp091:queue.unbind.queue/must-exist")


@case("amqp091/queue.unbind.exchange/must-exist",
      title="queue.unbind from an exchange that does not exist is refused (404, or a connection exception)",
      clauses=("amqp091:queue.unbind.exchange/must-exist", UNBIND_FAILS))
def unbind_missing_exchange(ctx: Context) -> None:
    """Unbinds an existing queue from an exchange never declared (the rule's scenario). The rule's
    on-failure is not-found (channel.close 404); queue.unbind/01 says a failed unbind raises a
    connection exception: either passes."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    x = unique(ctx, "missing")
    obs = attempt(peer, ch, spec.QueueUnbind(queue=q, exchange=x, routing_key="k"))
    ctx.check(obs, ChannelException(404, channel=ch) | ConnectionException())


UNBIND_DEFAULT_CONFLICT = ("amqp091:queue.unbind.exchange/default-exchange", "amqp091:exchange/default-access")


@case("amqp091/queue.unbind.exchange/default-exchange",
      title="queue.unbind with a blank exchange name (the default exchange) is accepted, or refused",
      clauses=UNBIND_DEFAULT_CONFLICT)
def unbind_default_exchange(ctx: Context) -> None:
    """Declares a queue and unbinds it from the blank exchange name with the queue's name as routing
    key. The XML conflicts with itself here: queue.unbind's exchange rule says the server MUST accept
    a blank name as the default exchange, while exchange/default-access says it MUST NOT allow access
    to the default exchange except through queue.bind and basic.publish, and queue.unbind is neither.
    As for exchange.unbind's blank source and destination, either reading passes: unbind-ok, or a
    channel or connection exception. Silence, or any other answer, fails both."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    obs = attempt(peer, ch, spec.QueueUnbind(queue=q, exchange="", routing_key=q))
    ctx.check(obs, Replies("queue.unbind-ok", channel=ch) | ChannelException(channel=ch) | ConnectionException())


# ---------------------------------------------------------------------------------- 3.1.5
@case("amqp091/3.1.5/bindings-destroyed-with-queue",
      title="deleting a queue destroys its bindings: a new queue of the same name is not bound",
      guideline=BINDINGS_3_1_5)
def bindings_destroyed(ctx: Context) -> None:
    """Binds a queue to amq.direct with a key, deletes the queue, declares a queue of the same name
    again and publishes with that key: the new queue must stay empty (the old binding died with the
    old queue). A message to the default exchange then still reaches it."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch)
    key = q + ".k"
    bind(peer, ch, q, "amq.direct", key)
    peer.call(ch, spec.QueueDelete(queue=q))
    found = lookup(peer, ch, q)
    ch = found.channel
    declare_queue(ctx, peer, ch, q)
    publish(peer, ch, "amq.direct", key, b"old-binding")
    publish(peer, ch, "", q, b"default")
    fence(peer, ch)
    got = bodies(drain(peer, ch, q))
    ctx.record(got == [b"default"], expected="only the message through the default exchange: [b'default']",
               observed=f"{got} (after delete, passive declare gave: {found.observed})")
