"""Spec 3.1.3 Exchanges (and the overview notes of 2.1.3): exchange types and their instances.

The direct type passes a message to a queue bound with key K when its routing key R equals K
(3.1.3.1), and the server pre-declares amq.direct and a nameless direct exchange, the default
exchange, to which every queue is bound by its own name (3.1.3.1/2). The fanout type passes
every message to every bound queue, whatever its key (3.1.3.2). A server that implements topic
or headers pre-declares amq.topic (3.1.3.3/2) and amq.match (3.1.3.4/1). Types that are not
standard start with "x-" (3.1.3.6/1, 3.1.10/2), so a type without that prefix that the server
does not know must be refused (exchange.declare type/support: command-invalid 503).

Topic and headers *matching* is checked with the queue bindings; here only the instances.
No case publishes to a shared pre-declared exchange with a key another case could have bound:
amq.fanout is never published to, amq.direct only with keys unique to the case.
"""
from __future__ import annotations

import uuid

from amqpspec.case import Context, case
from amqpspec.verify import ConnectionException, Replies
from amqpspec.wire.amqp091 import spec

from ._common import with_channel
from ._exchange import (
    body_for, check_instance, collect_until, exchange_exists, existence_text, refused, routed, type_supported,
)
from ._model import bind, declare_exchange, declare_queue, publish, unique
from ._replies import answer_channel_close, attempt

DIRECT = ("amqp091:3.1.3.1/1", "amqp091:exchange/required-types")
DIRECT_ALGORITHM = ("The direct exchange type works as follows: 1. A message queue binds to the exchange using a "
                    "routing key, K. 2. A publisher sends the exchange a message with the routing key R. 3. The "
                    "message is passed to the message queue if K = R.")
FANOUT_ALGORITHM = ("The fanout exchange type works as follows: 1. A message queue binds to the exchange with no "
                    "arguments. 2. A publisher sends the exchange a message. 3. The message is passed to the "
                    "message queue unconditionally.")
PREDECLARED_NOTE = ("The server will create a set of exchanges, including a direct and a topic exchange at "
                    "start-up with well- known names and client applications may depend on this.")  # sic: the text's line break
LIFECYCLE_NOTE = ("Each AMQP server pre-creates a number of exchanges (instances). These exchanges exist when the "
                  "server starts and cannot be destroyed.")


# ------------------------------------------------------------------------------- 3.1.3.1 direct
@case("amqp091/3.1.3.1/direct-exact-match",
      title="a direct exchange passes a message only to queues bound with exactly its routing key",
      clauses=DIRECT)
def direct_exact_match(ctx: Context) -> None:
    """Binds a queue to a new direct exchange with key "amqpspec.key", publishes with keys that
    differ from it only a little (other case, a suffix, a prefix, empty, wildcards, a trailing
    space), then with the bound key: only the last message may arrive (K = R, exact match).
    Implementing the direct type (a MUST) means implementing this algorithm."""
    peer, ch = with_channel(ctx)
    exchange = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, exchange, "amqpspec.key")
    strays = {}
    for key in ("amqpspec.Key", "amqpspec.key.", "amqpspec", "", "amqpspec.*", "#", "amqpspec.key "):
        body = body_for(ctx, f"stray {key!r}")
        strays[body] = key
        publish(peer, ch, exchange, key, body)
    marker = body_for(ctx, "marker")
    publish(peer, ch, exchange, "amqpspec.key", marker)
    bodies, seen = collect_until(peer, ch, queue, marker)
    wrong = [strays[b] for b in bodies if b in strays]
    ctx.record(seen and not wrong, expected="only the message with routing key 'amqpspec.key' arrives",
               observed=("it arrived" if seen else "it did not arrive")
               + (f"; messages with keys {wrong!r} arrived too" if wrong else ""))


@case("amqp091/3.1.3.1/amq-direct-routes",
      title="amq.direct routes by exact routing key",
      clauses=("amqp091:3.1.3.1/1", "amqp091:exchange/required-instances"))
def amq_direct_routes(ctx: Context) -> None:
    """Binds a queue to amq.direct with a key unique to the case, publishes to amq.direct with that
    key plus a suffix, then with the key: only the second arrives (amq.direct is a direct exchange)."""
    peer, ch = with_channel(ctx)
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    key = unique(ctx, "k")
    bind(peer, ch, queue, "amq.direct", key)
    stray, marker = body_for(ctx, "stray"), body_for(ctx, "marker")
    publish(peer, ch, "amq.direct", key + "-other", stray)
    publish(peer, ch, "amq.direct", key, marker)
    bodies, seen = collect_until(peer, ch, queue, marker)
    ctx.record(seen and stray not in bodies, expected="only the message with the bound key arrives",
               observed=("it arrived" if seen else "it did not arrive")
               + ("; the message with another key arrived too" if stray in bodies else ""))


@case("amqp091/3.1.3.1/default-binding-every-queue",
      title="every kind of queue is bound to the default exchange by its name",
      clauses=("amqp091:3.1.3.1/2",))
def default_binding_every_queue(ctx: Context) -> None:
    """Declares a client-named exclusive queue, a server-named queue and a client-named shared
    (non-exclusive, non-durable) queue, and for each publishes to exchange "" with the queue's name
    as routing key: each message arrives in its queue (one check per queue). A kind of queue the
    broker does not declare is left out with a note (queue.declare is checked elsewhere)."""
    peer, ch = with_channel(ctx)
    kinds = {
        "client-named exclusive": dict(name=unique(ctx, "q"), exclusive=True, auto_delete=True),
        "server-named": dict(name="", exclusive=True),
        "client-named shared": dict(name=unique(ctx, "q")),
    }
    for kind, fields in kinds.items():
        if fields["name"]:
            ctx.will_delete("queue", str(fields["name"]))
        obs = attempt(peer, ch, spec.QueueDeclare(queue=str(fields.pop("name")), **fields))
        reply = obs.methods("queue.declare-ok", ch)
        if not reply:  # the declare itself is checked by the queue cases
            ctx.note(f"a {kind} queue could not be declared, not checked: {obs.describe()}")
            answer_channel_close(peer, ch, obs)
            if obs.connection_close is not None or obs.closed:
                peer = ctx.connect()
            ch = peer.open_channel()
            continue
        queue = reply[0].method.queue
        ctx.will_delete("queue", queue)
        body = body_for(ctx, kind)
        publish(peer, ch, "", queue, body)
        ok = routed(peer, ch, queue, body)
        ctx.record(ok, what=f"a {kind} queue is bound by its name",
                   expected=f"the message published to \"\" with routing key {queue!r} arrives there",
                   observed="it arrived" if ok else "it did not arrive")


@case("amqp091/3.1.3.1/default-exchange-exact-match",
      title="the default exchange routes only on the exact queue name",
      clauses=("amqp091:3.1.3.1/1",))
def default_exchange_exact_match(ctx: Context) -> None:
    """The default exchange is a direct exchange: publishes to "" with keys close to a queue's
    name (upper case, a suffix, one character short, a leading space), then with the name: only the
    last message may reach the queue."""
    peer, ch = with_channel(ctx)
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    strays = {}
    for key in (queue.upper(), queue + "x", queue[:-1], " " + queue):
        body = body_for(ctx, f"stray {key!r}")
        strays[body] = key
        publish(peer, ch, "", key, body)
    marker = body_for(ctx, "marker")
    publish(peer, ch, "", queue, marker)
    bodies, seen = collect_until(peer, ch, queue, marker)
    wrong = [strays[b] for b in bodies if b in strays]
    ctx.record(seen and not wrong, expected=f"only the message with routing key {queue!r} arrives",
               observed=("it arrived" if seen else "it did not arrive")
               + (f"; messages with keys {wrong!r} arrived too" if wrong else ""))


# ------------------------------------------------------------------------------- 3.1.3.2 fanout
@case("amqp091/3.1.3.2/fanout-all-queues",
      title="a fanout exchange passes each message to every bound queue, whatever the keys",
      clauses=("amqp091:exchange/required-types",))
def fanout_all_queues(ctx: Context) -> None:
    """Binds two queues to a new fanout exchange, with keys "k1" and "", and publishes one message
    with key "zzz": both queues get it. Implementing the fanout type (a MUST) means this algorithm
    (3.1.3.2: "passed to the message queue unconditionally")."""
    peer, ch = with_channel(ctx)
    exchange = declare_exchange(ctx, peer, ch, "fanout")
    queues = [declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True) for _ in range(2)]
    bind(peer, ch, queues[0], exchange, "k1")
    bind(peer, ch, queues[1], exchange, "")
    body = body_for(ctx, "fanout")
    publish(peer, ch, exchange, "zzz", body)
    for queue, key in zip(queues, ("k1", "")):
        ok = routed(peer, ch, queue, body)
        ctx.record(ok, what=f"the queue bound with key {key!r} gets the message",
                   expected="the message published with key 'zzz' arrives", observed="it arrived" if ok else "it did not")


# ------------------------------------------------------------------------------- 3.1.3.3 / 3.1.3.4 instances
@case("amqp091/3.1.3.4/amq-match",
      title="when headers is implemented, amq.match is pre-declared and a queue can bind to it",
      clauses=("amqp091:3.1.3.4/1",))
def amq_match(ctx: Context) -> None:
    """Declares a private headers exchange to learn whether the type is implemented (skips if
    not); then a passive declare of amq.match and a queue bound to it (with x-match arguments no
    message has): declare-ok then bind-ok. (The XML's required-instances rule names the instance
    amq.headers: checked apart.)"""
    if not type_supported(ctx, "headers"):
        ctx.skip("the broker does not implement the headers exchange type (a private headers exchange was refused)")
    check_instance(ctx, "amq.match", ("amqp091:3.1.3.4/1",))


# ------------------------------------------------------------------------------- 3.1.3.6 / 3.1.10 x- types
@case("amqp091/3.1.3.6/unprefixed-type-refused",
      title="declaring an exchange of an unknown type without the x- prefix is connection exception 503",
      clauses=("amqp091:3.1.3.6/1", "amqp091:3.1.10/1", "amqp091:3.1.10/2", "amqp091:exchange.declare.type/support"))
def unprefixed_type(ctx: Context) -> None:
    """Declares an exchange of type "amqpspec-<random>": not a standard type, and non-standard
    types must start with "x-", so no server implements it; declaring a type the server does not
    support has on-failure command-invalid, a hard error: connection exception 503."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type=f"amqpspec-{uuid.uuid4().hex[:6]}"))
    ctx.check(obs, ConnectionException(503))


# ------------------------------------------------------------------------------- 2.1.3 overview notes
@case("amqp091/2.1.3/predeclared-direct-and-topic",
      title="a direct and a topic exchange exist with well-known names (amq.direct, amq.topic)",
      guideline=PREDECLARED_NOTE)
def predeclared_direct_topic(ctx: Context) -> None:
    """Passive declares of amq.direct and amq.topic, on one channel each: both answered with
    declare-ok. (The note has no RFC 2119 keyword, so amq.topic is wanted here even from a server
    that does not implement topic: a warning at most.)"""
    peer = ctx.connect()
    for name in ("amq.direct", "amq.topic"):
        ch = peer.open_channel()
        obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", passive=True))
        ctx.check(obs, Replies("exchange.declare-ok", channel=ch), what=f"{name} exists", sets_close=False)
        answer_channel_close(peer, ch, obs)


@case("amqp091/2.1.3/predeclared-not-destroyed",
      title="exchange.delete of the pre-declared amq.fanout is refused, and it stays",
      guideline=LIFECYCLE_NOTE)
def predeclared_not_destroyed(ctx: Context) -> None:
    """Sends exchange.delete for amq.fanout: refused with any channel or connection exception,
    and a passive declare on a fresh connection still finds it. amq.fanout rather than amq.direct,
    which other cases use as a probe; should a broker delete it, the case declares it again
    (fanout, durable) so that later cases find it."""
    peer, ch = with_channel(ctx)
    obs = attempt(peer, ch, spec.ExchangeDelete(exchange="amq.fanout"))
    ctx.check(obs, refused(ch), what="the delete is refused")
    found = exchange_exists(ctx, "amq.fanout")
    ctx.record(found is True, what="amq.fanout still exists", expected="a passive declare gets declare-ok",
               observed=existence_text(found))
    if found is False:  # restore what the broker wrongly deleted
        fix, fch = with_channel(ctx)
        back = attempt(fix, fch, spec.ExchangeDeclare(exchange="amq.fanout", type="fanout", durable=True))
        ctx.note(f"amq.fanout was deleted; declaring it again: {back.describe()}")
