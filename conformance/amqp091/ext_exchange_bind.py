"""RabbitMQ extensions of the exchange class (amqp0-9-1.extended.xml): exchange-to-exchange
bindings (exchange.bind / exchange.unbind) and the auto-delete and internal flags of
exchange.declare, which the 0-9-1 XML had reserved.

exchange.bind routes what the source exchange would route to a queue on to the destination
exchange. Duplicate bindings are ignored, cycles are allowed, and a message reaches a
destination at most once however many routes lead there. Binding or unbinding a missing
exchange is refused with not-found; a failed unbind is a connection exception (exchange.unbind
rule 01) -- both codes are accepted there, as the two rules disagree on the kind. A blank name
must mean the default exchange (extended XML), while the 0-9-1 XML lets a client name the
default exchange only in queue.bind and basic.publish (exchange/default-access; errata section
14 reports that RabbitMQ refuses): those cases accept a refusal, or a bind that routes through
the default exchange.

An auto-delete exchange goes once no queue uses it, not before a client had time to bind (a
reasonable delay), and the flag is ignored when the exchange exists already. An internal
exchange takes messages only from exchanges bound to it (publishing to it directly is checked
with basic.publish, rule 02).

Exchange-to-exchange cases need the broker's "exchange_exchange_bindings" capability.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import ChannelException, ConnectionException, Replies
from amqpspec.wire.amqp091 import spec

from ._common import with_channel
from ._exchange import body_for, collect_until, exchange_exists, existence_text, refused, type_supported
from ._model import bind, declare_exchange, declare_queue, publish, unique
from ._replies import answer_channel_close, attempt

E2E = ("exchange_exchange_bindings",)
BIND_DOC = "This method binds an exchange to an exchange."
UNBIND_DOC = "This method unbinds an exchange from an exchange."
AUTO_DELETE_DOC = ("If set, the exchange is deleted when all queues have finished using it. / Auto-deleted "
                   "exchanges last until they are no longer used.")
INTERNAL_DOC = ("If set, the exchange may not be used directly by publishers, but only when bound to other "
                "exchanges. Internal exchanges are used to construct wiring that is not visible to applications.")
AUTO_DELETE_DELAY = 0.2   # the "small but non-zero delay" of amq_exchange_02
DELETION_WAIT = 5.0       # how long an unused auto-delete exchange may take to go (a "reasonable delay")


def e2e_bind(peer: Peer, ch: int, destination: str, source: str, routing_key: str = "") -> None:
    peer.call(ch, spec.ExchangeBind(destination=destination, source=source, routing_key=routing_key))


def count(bodies: list[bytes], body: bytes) -> int:
    return sum(1 for b in bodies if b == body)


# ------------------------------------------------------------------------------- exchange.bind
@case("amqp091/rabbitmq.exchange.bind/routes",
      title="a message routed by the source exchange to a bound exchange reaches that exchange's queues",
      requires=E2E, guideline=BIND_DOC)
def bind_routes(ctx: Context) -> None:
    """Binds a fanout exchange D (with a queue bound) to a direct exchange S with key "k"
    (bind-ok), publishes to S with key "other", then with key "k": only the second reaches the
    queue through D."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    destination = declare_exchange(ctx, peer, ch, "fanout")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, destination)
    obs = attempt(peer, ch, spec.ExchangeBind(destination=destination, source=source, routing_key="k"))
    if not ctx.check(obs, Replies("exchange.bind-ok", channel=ch), what="exchange.bind is answered with bind-ok"):
        return
    stray, marker = body_for(ctx, "stray"), body_for(ctx, "marker")
    publish(peer, ch, source, "other", stray)
    publish(peer, ch, source, "k", marker)
    bodies, seen = collect_until(peer, ch, queue, marker)
    ctx.record(seen and stray not in bodies, what="the destination gets what the source routes to it",
               expected="only the message with the binding's key arrives through the destination exchange",
               observed=("it arrived" if seen else "it did not arrive")
               + ("; the message with another key arrived too" if stray in bodies else ""))


@case("amqp091/rabbitmq.exchange.bind/duplicates",
      title="a repeated identical exchange.bind is answered with bind-ok and routes once",
      requires=E2E, clauses=("rabbitmq091:exchange.bind/duplicates", "rabbitmq091:exchange.bind/unique"))
def bind_duplicates(ctx: Context) -> None:
    """Binds exchange D to exchange S with key "k", then sends the same bind again (the rule's
    scenario): bind-ok, not an error. A message published to S with key "k" then reaches the queue
    bound to D exactly once (counted up to a marker and a short settle time)."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    destination = declare_exchange(ctx, peer, ch, "fanout")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, destination)
    e2e_bind(peer, ch, destination, source, "k")
    obs = attempt(peer, ch, spec.ExchangeBind(destination=destination, source=source, routing_key="k"))
    if not ctx.check(obs, Replies("exchange.bind-ok", channel=ch), clauses=("rabbitmq091:exchange.bind/duplicates",),
                     what="the duplicate bind is answered with bind-ok"):
        return
    body, marker = body_for(ctx, "once"), body_for(ctx, "marker")
    publish(peer, ch, source, "k", body)
    publish(peer, ch, source, "k", marker)
    bodies, seen = collect_until(peer, ch, queue, marker, settle=0.3)
    n = count(bodies, body)
    ctx.record(n == 1, what="the message arrives once", expected="exactly one copy of the message",
               observed=f"{n} copies" + ("" if seen else " (the marker did not arrive)"))


@case("amqp091/rabbitmq.exchange.bind/cyclical",
      title="an exchange can be bound to itself, and two exchanges to each other",
      requires=E2E, clauses=("rabbitmq091:exchange.bind/cyclical",))
def bind_cyclical(ctx: Context) -> None:
    """Binds a direct exchange X to itself (the rule's scenario), then exchanges A and B to each
    other; each exchange.bind is answered with bind-ok."""
    peer, ch = with_channel(ctx)
    x = declare_exchange(ctx, peer, ch, "direct")
    a = declare_exchange(ctx, peer, ch, "direct")
    b = declare_exchange(ctx, peer, ch, "direct")
    for destination, source, what in ((x, x, "an exchange bound to itself"), (b, a, "A bound to B"),
                                      (a, b, "B bound back to A: a cycle")):
        obs = attempt(peer, ch, spec.ExchangeBind(destination=destination, source=source, routing_key="k"))
        if not ctx.check(obs, Replies("exchange.bind-ok", channel=ch), what=what, sets_close=False):
            return


@case("amqp091/rabbitmq.exchange.bind/unique-many-routes",
      title="a message reaching a destination exchange by several bindings is delivered once",
      requires=E2E, clauses=("rabbitmq091:exchange.bind/unique",))
def bind_unique_many(ctx: Context) -> None:
    """The rule's scenario with a private topic exchange T instead of amq.topic (so that no other
    client's binding sees the messages): a fanout exchange D, with a queue bound, is bound to T by
    "a.b", "a.*", "*.b" and "#"; a message published to T with key "a.b" matches all four and must
    reach the queue once. A marker with key "zzz.y" (matched by "#" only) follows it."""
    if not type_supported(ctx, "topic"):
        ctx.skip("the broker does not implement the topic exchange type")
    peer, ch = with_channel(ctx)
    topic = declare_exchange(ctx, peer, ch, "topic")
    destination = declare_exchange(ctx, peer, ch, "fanout")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, destination)
    for key in ("a.b", "a.*", "*.b", "#"):
        e2e_bind(peer, ch, destination, topic, key)
    body, marker = body_for(ctx, "once"), body_for(ctx, "marker")
    publish(peer, ch, topic, "a.b", body)
    publish(peer, ch, topic, "zzz.y", marker)
    bodies, seen = collect_until(peer, ch, queue, marker, settle=0.3)
    n = count(bodies, body)
    ctx.record(n == 1, expected="exactly one copy of the message", observed=f"{n} copies"
               + ("" if seen else " (the marker did not arrive)"))


@case("amqp091/rabbitmq.exchange.bind/unique-cycle",
      title="a message in a cycle of exchange bindings is delivered once",
      requires=E2E, clauses=("rabbitmq091:exchange.bind/unique", "rabbitmq091:exchange.bind/cyclical"))
def bind_unique_cycle(ctx: Context) -> None:
    """Direct exchanges A and B bound to each other and A to itself, all with key "k" (infinite
    routes), and a queue bound to B with "k": a message published to A with key "k" must reach
    the queue exactly once (a second message, the marker, bounds the wait, then a settle time)."""
    peer, ch = with_channel(ctx)
    a = declare_exchange(ctx, peer, ch, "direct")
    b = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, b, "k")
    e2e_bind(peer, ch, b, a, "k")
    e2e_bind(peer, ch, a, b, "k")
    e2e_bind(peer, ch, a, a, "k")
    body, marker = body_for(ctx, "once"), body_for(ctx, "marker")
    publish(peer, ch, a, "k", body)
    publish(peer, ch, a, "k", marker)
    bodies, seen = collect_until(peer, ch, queue, marker, settle=0.3)
    n = count(bodies, body)
    ctx.record(n == 1, expected="exactly one copy of the message", observed=f"{n} copies"
               + ("" if seen else " (the marker did not arrive)"))


@case("amqp091/rabbitmq.exchange.bind.destination/exchange-existence",
      title="exchange.bind with a missing destination exchange is channel exception 404",
      requires=E2E, clauses=("rabbitmq091:exchange.bind.destination/exchange-existence",))
def bind_missing_destination(ctx: Context) -> None:
    """Binds an undeclared exchange (destination) to a declared one (the rule's scenario); the
    on-failure is not-found: channel.close 404."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeBind(destination=unique(ctx, "missing"), source=source, routing_key="k"))
    ctx.check(obs, ChannelException(404, channel=ch))


@case("amqp091/rabbitmq.exchange.bind.source/exchange-existence",
      title="exchange.bind with a missing source exchange is channel exception 404",
      requires=E2E, clauses=("rabbitmq091:exchange.bind.source/exchange-existence",))
def bind_missing_source(ctx: Context) -> None:
    """Binds a declared exchange to an undeclared one (source) (the rule's scenario); the
    on-failure is not-found: channel.close 404."""
    peer, ch = with_channel(ctx)
    destination = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeBind(destination=destination, source=unique(ctx, "missing"), routing_key="k"))
    ctx.check(obs, ChannelException(404, channel=ch))


DEFAULT_CONFLICT_DEST = ("rabbitmq091:exchange.bind.destination/default-exchange", "amqp091:exchange/default-access")
DEFAULT_CONFLICT_SOURCE = ("rabbitmq091:exchange.bind.source/default-exchange", "amqp091:exchange/default-access")


@case("amqp091/rabbitmq.exchange.bind.destination/default-exchange",
      title="exchange.bind with a blank destination binds the default exchange, or is refused",
      requires=E2E, clauses=DEFAULT_CONFLICT_DEST)
def bind_default_destination(ctx: Context) -> None:
    """Binds destination "" to a direct exchange S with a queue's name as key. The extended XML
    says blank means the default exchange; the 0-9-1 XML forbids naming the default exchange in
    anything but queue.bind and basic.publish: bind-ok or any exception passes. After a bind-ok, a
    message published to S with the queue's name must reach the queue through the default exchange."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    obs = attempt(peer, ch, spec.ExchangeBind(destination="", source=source, routing_key=queue))
    ctx.check(obs, Replies("exchange.bind-ok", channel=ch) | refused(ch))
    if not obs.methods("exchange.bind-ok", ch):
        return
    body = body_for(ctx, "via default")
    publish(peer, ch, source, queue, body)
    bodies, seen = collect_until(peer, ch, queue, body)
    ctx.record(seen, what="the blank destination is the default exchange",
               clauses=("rabbitmq091:exchange.bind.destination/default-exchange",),
               expected="the message published to the source with the queue's name arrives in the queue",
               observed="it arrived" if seen else "it did not arrive")


@case("amqp091/rabbitmq.exchange.bind.source/default-exchange",
      title="exchange.bind with a blank source binds to the default exchange, or is refused",
      requires=E2E, clauses=DEFAULT_CONFLICT_SOURCE)
def bind_default_source(ctx: Context) -> None:
    """Binds a fanout exchange D (with a queue bound) to source "" with a key unique to the case.
    As for a blank destination, bind-ok or any exception passes. After a bind-ok, a message
    published to "" with that key must reach the queue through D."""
    peer, ch = with_channel(ctx)
    destination = declare_exchange(ctx, peer, ch, "fanout")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, destination)
    key = unique(ctx, "k")
    obs = attempt(peer, ch, spec.ExchangeBind(destination=destination, source="", routing_key=key))
    ctx.check(obs, Replies("exchange.bind-ok", channel=ch) | refused(ch))
    if not obs.methods("exchange.bind-ok", ch):
        return
    body = body_for(ctx, "from default")
    publish(peer, ch, "", key, body)
    bodies, seen = collect_until(peer, ch, queue, body)
    ctx.record(seen, what="the blank source is the default exchange",
               clauses=("rabbitmq091:exchange.bind.source/default-exchange",),
               expected="the message published to \"\" with the binding's key arrives through the destination",
               observed="it arrived" if seen else "it did not arrive")


# ------------------------------------------------------------------------------- exchange.unbind
@case("amqp091/rabbitmq.exchange.unbind/stops-routing",
      title="after exchange.unbind the destination no longer gets the source's messages",
      requires=E2E, guideline=UNBIND_DOC)
def unbind_stops_routing(ctx: Context) -> None:
    """Binds fanout D (with a queue) to direct S by "k", the queue to S directly by "m", then
    unbinds D from S (unbind-ok); a message to S with "k" must no longer arrive, a marker to S
    with "m" does."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    destination = declare_exchange(ctx, peer, ch, "fanout")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, destination)
    bind(peer, ch, queue, source, "m")
    e2e_bind(peer, ch, destination, source, "k")
    obs = attempt(peer, ch, spec.ExchangeUnbind(destination=destination, source=source, routing_key="k"))
    if not ctx.check(obs, Replies("exchange.unbind-ok", channel=ch), what="exchange.unbind is answered with unbind-ok"):
        return
    stray, marker = body_for(ctx, "stray"), body_for(ctx, "marker")
    publish(peer, ch, source, "k", stray)
    publish(peer, ch, source, "m", marker)
    bodies, seen = collect_until(peer, ch, queue, marker)
    ctx.record(seen and stray not in bodies, what="the binding is gone",
               expected="the message with the unbound key does not arrive; the marker does",
               observed=("the unbound message arrived" if stray in bodies else "the unbound message did not arrive")
               + ("" if seen else "; the marker did not arrive"))


UNBIND_FAILS = ("rabbitmq091:exchange.unbind/01",)


@case("amqp091/rabbitmq.exchange.unbind.destination/must-exist",
      title="exchange.unbind with a missing destination is refused (404 on the channel, or a connection exception)",
      requires=E2E, clauses=("rabbitmq091:exchange.unbind.destination/must-exist",) + UNBIND_FAILS)
def unbind_missing_destination(ctx: Context) -> None:
    """Unbinds an undeclared exchange from a declared one (the rule's scenario). The field rule's
    on-failure is not-found (a channel exception 404); rule 01 of exchange.unbind wants a connection
    exception: either passes."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeUnbind(destination=unique(ctx, "missing"), source=source, routing_key="k"))
    ctx.check(obs, ChannelException(404, channel=ch) | ConnectionException())


@case("amqp091/rabbitmq.exchange.unbind.source/must-exist",
      title="exchange.unbind from a missing source is refused (404 on the channel, or a connection exception)",
      requires=E2E, clauses=("rabbitmq091:exchange.unbind.source/must-exist",) + UNBIND_FAILS)
def unbind_missing_source(ctx: Context) -> None:
    """Unbinds a declared exchange from an undeclared one (the rule's scenario): channel exception
    404 (the field rule's on-failure) or a connection exception (rule 01) passes."""
    peer, ch = with_channel(ctx)
    destination = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeUnbind(destination=destination, source=unique(ctx, "missing"), routing_key="k"))
    ctx.check(obs, ChannelException(404, channel=ch) | ConnectionException())


DEFAULT_UNBIND_DEST = ("rabbitmq091:exchange.unbind.destination/default-exchange", "amqp091:exchange/default-access")
DEFAULT_UNBIND_SOURCE = ("rabbitmq091:exchange.unbind.source/default-exchange", "amqp091:exchange/default-access")


@case("amqp091/rabbitmq.exchange.unbind.destination/default-exchange",
      title="exchange.unbind with a blank destination unbinds the default exchange, or is refused",
      requires=E2E, clauses=DEFAULT_UNBIND_DEST)
def unbind_default_destination(ctx: Context) -> None:
    """The rule's scenario: binds destination "" to a direct exchange S with a queue's name as key,
    then unbinds it. As for exchange.bind, a blank name must mean the default exchange (extended
    XML) while the 0-9-1 XML forbids naming it here: the bind may be refused; the unbind (on a
    fresh channel) is answered with unbind-ok or refused with any exception. After a bind-ok and an
    unbind-ok, a message published to S with the queue's name no longer reaches the queue (a marker
    through the default exchange bounds the wait)."""
    peer, ch = with_channel(ctx)
    source = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    first = attempt(peer, ch, spec.ExchangeBind(destination="", source=source, routing_key=queue))
    bound = bool(first.methods("exchange.bind-ok", ch))
    ctx.note("the bind was " + ("answered with bind-ok" if bound else f"refused: {first.describe()}"))
    answer_channel_close(peer, ch, first)
    if first.connection_close is not None or first.closed:
        peer = ctx.connect()
    ch = peer.open_channel()
    obs = attempt(peer, ch, spec.ExchangeUnbind(destination="", source=source, routing_key=queue))
    ctx.check(obs, Replies("exchange.unbind-ok", channel=ch) | refused(ch))
    if not (bound and obs.methods("exchange.unbind-ok", ch)):
        return
    stray, marker = body_for(ctx, "stray"), body_for(ctx, "marker")
    publish(peer, ch, source, queue, stray)
    publish(peer, ch, "", queue, marker)
    bodies, seen = collect_until(peer, ch, queue, marker, settle=0.2)
    ctx.record(seen and stray not in bodies, what="the default exchange no longer gets the source's messages",
               clauses=("rabbitmq091:exchange.unbind.destination/default-exchange",),
               expected="the message published to the source does not arrive; the marker does",
               observed=("the message arrived" if stray in bodies else "the message did not arrive")
               + ("" if seen else "; the marker did not arrive"))


@case("amqp091/rabbitmq.exchange.unbind.source/default-exchange",
      title="exchange.unbind from a blank source unbinds from the default exchange, or is refused",
      requires=E2E, clauses=DEFAULT_UNBIND_SOURCE)
def unbind_default_source(ctx: Context) -> None:
    """The rule's scenario: binds a fanout exchange D (with a queue) to source "" with a key unique
    to the case, then unbinds it (on a fresh channel): unbind-ok or any exception passes, as for
    the blank destination. After a bind-ok and an unbind-ok, a message published to "" with that key
    no longer reaches the queue (a marker through the default exchange bounds the wait)."""
    peer, ch = with_channel(ctx)
    destination = declare_exchange(ctx, peer, ch, "fanout")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, destination)
    key = unique(ctx, "k")
    first = attempt(peer, ch, spec.ExchangeBind(destination=destination, source="", routing_key=key))
    bound = bool(first.methods("exchange.bind-ok", ch))
    ctx.note("the bind was " + ("answered with bind-ok" if bound else f"refused: {first.describe()}"))
    answer_channel_close(peer, ch, first)
    if first.connection_close is not None or first.closed:
        peer = ctx.connect()
    ch = peer.open_channel()
    obs = attempt(peer, ch, spec.ExchangeUnbind(destination=destination, source="", routing_key=key))
    ctx.check(obs, Replies("exchange.unbind-ok", channel=ch) | refused(ch))
    if not (bound and obs.methods("exchange.unbind-ok", ch)):
        return
    stray, marker = body_for(ctx, "stray"), body_for(ctx, "marker")
    publish(peer, ch, "", key, stray)
    publish(peer, ch, "", queue, marker)
    bodies, seen = collect_until(peer, ch, queue, marker, settle=0.2)
    ctx.record(seen and stray not in bodies, what="the destination no longer gets the default exchange's messages",
               clauses=("rabbitmq091:exchange.unbind.source/default-exchange",),
               expected="the message published to \"\" with the unbound key does not arrive; the marker does",
               observed=("the message arrived" if stray in bodies else "the message did not arrive")
               + ("" if seen else "; the marker did not arrive"))


# ------------------------------------------------------------------------------- exchange.declare auto-delete
@case("amqp091/rabbitmq.exchange.declare.auto-delete/amq-exchange-25",
      title="redeclaring an existing exchange with another auto-delete flag gets declare-ok, the flag ignored",
      clauses=("rabbitmq091:exchange.declare.auto-delete/amq_exchange_25",))
def auto_delete_ignored(ctx: Context) -> None:
    """Declares a direct exchange without auto-delete, then again with auto-delete set: the field
    must be ignored for an existing exchange, so declare-ok. Then a queue is bound to it and
    unbound: the exchange must still exist (it did not become auto-delete)."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", auto_delete=True))
    ctx.check(obs, Replies("exchange.declare-ok", channel=ch), what="the redeclare is answered with declare-ok")
    peer, ch = with_channel(ctx)
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, name, "k")
    peer.call(ch, spec.QueueUnbind(queue=queue, exchange=name, routing_key="k"))
    found = exchange_exists(ctx, name, peer)
    ctx.record(found is True, what="the exchange did not become auto-delete",
               expected="the exchange still exists after its only binding is removed", observed=existence_text(found))


@case("amqp091/rabbitmq.exchange.declare.auto-delete/amq-exchange-02",
      title="a new auto-delete exchange is still there to bind a queue to a moment later",
      clauses=("rabbitmq091:exchange.declare.auto-delete/amq_exchange_02",))
def auto_delete_delay(ctx: Context) -> None:
    """Declares a direct exchange with auto-delete (skips if refused), waits 0.2 s (a small but
    non-zero delay) and binds a queue to it: bind-ok."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    first = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", auto_delete=True))
    if not first.methods("exchange.declare-ok", ch):
        ctx.skip(f"the broker does not declare auto-delete exchanges: {first.describe()}")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    time.sleep(AUTO_DELETE_DELAY)
    obs = attempt(peer, ch, spec.QueueBind(queue=queue, exchange=name, routing_key="k"))
    ctx.check(obs, Replies("queue.bind-ok", channel=ch))


@case("amqp091/rabbitmq.exchange.declare.auto-delete/deleted-when-unused",
      title="an auto-delete exchange is deleted once its last queue binding is removed",
      guideline=AUTO_DELETE_DOC)
def auto_delete_deleted(ctx: Context) -> None:
    """Declares a direct exchange with auto-delete (skips if refused), binds a queue, unbinds it;
    passive declares then must get 404 within 5 s (the server may wait a reasonable delay)."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    first = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", auto_delete=True))
    if not first.methods("exchange.declare-ok", ch):
        ctx.skip(f"the broker does not declare auto-delete exchanges: {first.describe()}")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, name, "k")
    peer.call(ch, spec.QueueUnbind(queue=queue, exchange=name, routing_key="k"))
    until = time.monotonic() + DELETION_WAIT
    found = exchange_exists(ctx, name, peer)
    while found is True and time.monotonic() < until:
        time.sleep(0.1)
        found = exchange_exists(ctx, name, peer)
    ctx.record(found is False, expected=f"the exchange is gone within {DELETION_WAIT:g}s of the unbind",
               observed=existence_text(found))


# ------------------------------------------------------------------------------- exchange.declare internal
@case("amqp091/rabbitmq.exchange.declare.internal/reachable-through-binding",
      title="an internal exchange receives messages through an exchange bound to it",
      requires=E2E, guideline=INTERNAL_DOC)
def internal_reachable(ctx: Context) -> None:
    """Declares an internal fanout exchange I (skips if refused) with a queue bound, binds I to a
    direct exchange S by "k", publishes to S with "k": the message reaches the queue through I."""
    peer, ch = with_channel(ctx)
    internal = unique(ctx, "i")
    ctx.will_delete("exchange", internal)
    first = attempt(peer, ch, spec.ExchangeDeclare(exchange=internal, type="fanout", internal=True))
    if not first.methods("exchange.declare-ok", ch):
        ctx.skip(f"the broker does not declare internal exchanges: {first.describe()}")
    source = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, internal)
    e2e_bind(peer, ch, internal, source, "k")
    body = body_for(ctx, "through")
    publish(peer, ch, source, "k", body)
    bodies, seen = collect_until(peer, ch, queue, body)
    ctx.record(seen, expected="the message arrives through the internal exchange",
               observed="it arrived" if seen else "it did not arrive")
