"""basic.publish and basic.return: the exchange rules, and the mandatory and immediate flags.

Publishing to an exchange that does not exist is a channel exception 404 (must-exist,
on-failure not-found), to an internal exchange 403 (rule 02). The server SHOULD implement
mandatory (an unroutable message comes back with basic.return) and immediate (a message no
consumer can take at once comes back with basic.return); the field docs say what happens
otherwise (the message is dropped silently, or queued).
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.verify import ChannelException, StaysOpen
from amqpspec.wire.amqp091 import MethodFrame, spec, to_plain

from ._basic_text import EXCHANGE_FIELD_DOC, ROUTING_KEY_DOC
from ._content import gather, get_message, messages, start_consumer, wait_queued
from ._model import Message, declare_exchange, declare_queue, publish
from ._replies import is_close, react

MANDATORY_DOC = ("This flag tells the server how to react if the message cannot be routed to a queue. If this flag "
                 "is set, the server will return an unroutable message with a Return method. If this flag is zero, "
                 "the server silently drops the message. [basic.publish mandatory]")
IMMEDIATE_DOC = ("This flag tells the server how to react if the message cannot be routed to a queue consumer "
                 "immediately. If this flag is set, the server will return an undeliverable message with a Return "
                 "method. If this flag is zero, the server will queue the message, but with no guarantee that it "
                 "will ever be consumed. [basic.publish immediate]")
NO_CONSUMERS_DOC = ("no-consumers (313): When the exchange cannot deliver to a consumer when the immediate flag is "
                    "set. As a result of pending data on the queue or the absence of any consumers of the queue.")
DEFAULT_EXCHANGE_GET_DOC = ("Specifies the name of the exchange that the message was originally published to. If "
                            "empty, the message was published to the default exchange. [basic.get-ok exchange]")
BODY_INTACT = ("amqp091:3.1.1/1", "amqp091:3.1.1/2")


def some_properties(ctx: Context) -> spec.BasicProperties:
    """Properties of the common types (short strings, a small table, octets, a timestamp)."""
    return spec.BasicProperties(
        content_type="application/x-amqpspec", content_encoding="identity",
        headers={"origin": "amqpspec", "n": 42}, delivery_mode=2, priority=3,
        correlation_id="corr-" + ctx.rng.randbytes(4).hex(), reply_to="amqpspec-reply",
        message_id="msg-" + ctx.rng.randbytes(4).hex(), timestamp=1700000000, type="amqpspec.returned",
        app_id="amqpspec")


def property_diffs(sent: spec.BasicProperties, got: spec.BasicProperties | None) -> list[str]:
    """Properties sent that came back missing or different (the broker MAY add others: 3.1.1/2)."""
    diffs = []
    for f in spec.BasicProperties.FIELDS:
        mine = getattr(sent, f.attr)
        if mine is None:
            continue
        theirs = getattr(got, f.attr) if got is not None else None
        if f.attr == "headers":
            back = to_plain(theirs or {})
            missing = {k: v for k, v in to_plain(mine).items() if back.get(k) != v}
            if missing:
                diffs.append(f"headers: sent {to_plain(mine)!r}, got {back!r}")
        elif mine != theirs:
            diffs.append(f"{f.name}: sent {mine!r}, got {'absent' if theirs is None else repr(theirs)}")
    return diffs


def check_returned_content(ctx: Context, ret: Message, props: spec.BasicProperties, payload: bytes,
                           exchange: str, key: str) -> None:
    diffs = property_diffs(props, ret.properties)
    if ret.body != payload:
        diffs.append(f"body: {len(ret.body)} octets, {'identical' if ret.body == payload else 'different'}")
    ctx.record(not diffs, expected=f"the {len(payload)}-octet body and every property sent, unchanged",
               observed="; ".join(diffs) or "identical", what="the returned content is unmodified", clauses=BODY_INTACT)
    m = ret.method
    ctx.record((m.exchange, m.routing_key) == (exchange, key), expected=f"exchange {exchange!r}, routing-key {key!r}",
               observed=f"exchange {m.exchange!r}, routing-key {m.routing_key!r}",
               what="basic.return names the exchange and routing key of the publish", clauses=(), guideline=EXCHANGE_FIELD_DOC + " " + ROUTING_KEY_DOC)
    ctx.note(f"basic.return reply-code {m.reply_code} {m.reply_text!r}")


def returned(obs: Any, ch: int) -> list[Message]:
    return [m for m in messages(obs.received, ("basic.return",)) if m.channel == ch]


# ------------------------------------------------------------------------------------ exchange rules
@case("amqp091/basic.publish/exchange-must-exist",
      title="publishing to an exchange that does not exist is channel exception 404",
      clauses=("amqp091:basic.publish.exchange/must-exist",))
def exchange_must_exist(ctx: Context) -> None:
    """The rule's scenario: basic.publish (with its content) to an exchange name never declared.
    On-failure not-found, a soft error: channel.close 404 on that channel."""
    peer = ctx.connect()
    ch = peer.open_channel()
    publish(peer, ch, ctx.name("no-such-exchange"), "rk", b"lost")
    ctx.check(react(peer, ch), ChannelException(404, channel=ch))


@case("amqp091/basic.publish/default-exchange",
      title="publishing to the blank exchange name routes to the queue named by the routing key",
      clauses=("amqp091:basic.publish.exchange/default-exchange",))
def default_exchange(ctx: Context) -> None:
    """Declares a queue, publishes to exchange "" with the queue's name as routing key, reads the
    queue with basic.get: the message must be there. get-ok naming the exchange "" is what its
    field doc says (a warning)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    payload = b"via the default exchange"
    publish(peer, ch, "", q, payload)
    wait_queued(peer, ch, q, 1)
    msg = get_message(peer, ch, q)
    if not ctx.record(msg is not None and msg.body == payload, expected=f"basic.get-ok with {payload!r}",
                      observed=msg.summary() if msg else "basic.get-empty"):
        return
    ctx.record(msg.method.exchange == "", expected="exchange ''", observed=f"exchange {msg.method.exchange!r}",
               what="get-ok names the default exchange as ''", clauses=(), guideline=DEFAULT_EXCHANGE_GET_DOC)


@case("amqp091/basic.publish/bcc-header-kept",
      title="a BCC entry in the headers property reaches the consumer unchanged", clauses=BODY_INTACT)
def bcc_header_kept(ctx: Context) -> None:
    """3.1.1/2: the server MAY add information to content headers but MUST NOT remove or modify
    existing information. Publishes to a queue (default exchange) a message whose headers table
    holds a "BCC" entry (an array naming a second queue) next to an ordinary one, and reads it with
    basic.get: both entries must come back as sent, and the body unchanged (3.1.1/1). Header names
    carry no meaning in the specification; a broker that gives "BCC" one (RabbitMQ's
    sender-selected distribution strips it) may route by it, but not remove it."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q, other = declare_queue(ctx, peer, ch), declare_queue(ctx, peer, ch)
    props = spec.BasicProperties(headers={"BCC": [other], "origin": "amqpspec"})
    payload = b"with a BCC header"
    publish(peer, ch, "", q, payload, properties=props)
    refusal = react(peer, ch)
    if not StaysOpen().accepts(refusal):  # a field array it cannot read: the 4.2.5 table cases judge that
        ctx.skip(f"the broker refused the headers table with a field array: {refusal.describe()}")
    wait_queued(peer, ch, q, 1)
    msg = get_message(peer, ch, q)
    if not ctx.record(msg is not None and msg.body == payload, expected=f"basic.get-ok with {payload!r}",
                      observed=msg.summary() if msg else "basic.get-empty", what="the body is delivered unmodified",
                      clauses=("amqp091:3.1.1/1",)):
        return
    diffs = property_diffs(props, msg.properties)
    ctx.record(not diffs, expected=f"headers {to_plain(props.headers)!r} kept", observed="; ".join(diffs) or "kept",
               what="the BCC header is not removed or modified", clauses=("amqp091:3.1.1/2",))


@case("amqp091/basic.publish/internal-exchange",
      title="publishing to an exchange declared internal is channel exception 403",
      clauses=("amqp091:basic.publish.exchange/02",))
def internal_exchange(ctx: Context) -> None:
    """Declares an exchange with the internal bit (reserved-3 in 0-9-1: deprecated, "must be zero",
    the only way to declare an internal exchange) and publishes to it: channel.close 403. Skipped
    when the broker refuses the declaration, or accepts the publish: then it ignored the reserved
    bit and the exchange is not internal, so the rule does not apply."""
    peer = ctx.connect()
    ch = peer.open_channel()
    name = ctx.name("internal")
    ctx.will_delete("exchange", name)
    peer.send(MethodFrame(ch, spec.ExchangeDeclare(exchange=name, type="direct", internal=True)))
    obs = peer.observe(5.0, stop=lambda i: (isinstance(i, MethodFrame) and i.channel == ch
                                            and i.method.NAME == "exchange.declare-ok") or is_close(i))
    if not obs.methods("exchange.declare-ok", ch) or obs.channel_close() or obs.connection_close:
        ctx.skip(f"the broker does not declare internal exchanges: {obs.describe()}")
    publish(peer, ch, name, "rk", b"to an internal exchange")
    obs = react(peer, ch)
    if StaysOpen().accepts(obs):
        ctx.skip("the publish was accepted: the broker ignores the reserved (deprecated) internal bit, "
                 "so the exchange is not internal")
    ctx.check(obs, ChannelException(403, channel=ch))


# ------------------------------------------------------------------------------------ mandatory
@case("amqp091/basic.publish/mandatory-unroutable-returned",
      title="an unroutable mandatory message comes back unmodified with basic.return",
      clauses=("amqp091:basic.publish.mandatory/01",) + BODY_INTACT)
def mandatory_returned(ctx: Context) -> None:
    """Declares a direct exchange without bindings and publishes to it with mandatory set, with
    several properties and a 3000-octet body. The server SHOULD implement mandatory: the message
    comes back with basic.return, its content unmodified (3.1.1, MUST), naming the exchange and
    routing key (field docs, a warning). The reply code is only noted: 0-9-1 defines none for
    "no route" (errata 17: RabbitMQ uses 312)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    x = declare_exchange(ctx, peer, ch, "direct")
    props, payload, key = some_properties(ctx), ctx.rng.randbytes(3000), ctx.name("nowhere")
    publish(peer, ch, x, key, payload, properties=props, mandatory=True)
    obs = react(peer, ch)
    back = returned(obs, ch)
    if not ctx.record(bool(back), expected="basic.return of the message", observed=obs.describe(),
                      what="the unroutable mandatory message is returned", clauses=("amqp091:basic.publish.mandatory/01",)):
        return
    check_returned_content(ctx, back[0], props, payload, x, key)


@case("amqp091/basic.publish/mandatory-default-exchange-returned",
      title="a mandatory message to the default exchange naming no queue comes back with basic.return",
      clauses=("amqp091:basic.publish.mandatory/01",))
def mandatory_default_exchange(ctx: Context) -> None:
    """Publishes with mandatory set to exchange "" with a routing key that names no queue: the
    message is unroutable, so the server (which SHOULD implement mandatory) returns it."""
    peer = ctx.connect()
    ch = peer.open_channel()
    key = ctx.name("no-such-queue")
    publish(peer, ch, "", key, b"unroutable", mandatory=True)
    obs = react(peer, ch)
    back = returned(obs, ch)
    ctx.record(bool(back) and back[0].body == b"unroutable" and back[0].method.routing_key == key,
               expected=f"basic.return of the message, routing-key {key!r}", observed=obs.describe())


@case("amqp091/basic.publish/mandatory-routable-not-returned",
      title="a routable mandatory message is queued, not returned", guideline=MANDATORY_DOC)
def mandatory_routable(ctx: Context) -> None:
    """Publishes with mandatory set to a queue (default exchange), then basic.get: no basic.return
    may come, and the message must be in the queue."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", q, b"routable", mandatory=True)
    obs = react(peer, ch)
    back = returned(obs, ch)
    wait_queued(peer, ch, q, 1)
    msg = get_message(peer, ch, q)
    ctx.record(not back and msg is not None and msg.body == b"routable", expected="no basic.return; the message queued",
               observed=f"{obs.describe()}; then {msg.summary() if msg else 'basic.get-empty'}")


@case("amqp091/basic.publish/unroutable-dropped-silently",
      title="an unroutable message without mandatory is dropped silently (no return, no exception)",
      guideline=MANDATORY_DOC)
def unroutable_dropped(ctx: Context) -> None:
    """Publishes without mandatory to a direct exchange with no bindings: no basic.return and no
    exception on the channel (a probe on the same channel is answered)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    x = declare_exchange(ctx, peer, ch, "direct")
    publish(peer, ch, x, ctx.name("nowhere"), b"dropped")
    obs = react(peer, ch)
    ctx.check(obs, StaysOpen())
    ctx.record(not returned(obs, ch), expected="no basic.return", observed=obs.describe(), what="nothing is returned")


# ------------------------------------------------------------------------------------ immediate
@case("amqp091/basic.publish/immediate-no-consumer-returned",
      title="an immediate message to a queue without consumers comes back with basic.return",
      clauses=("amqp091:basic.publish.immediate/01",))
def immediate_no_consumer(ctx: Context) -> None:
    """Publishes with immediate set to a queue that has no consumer. The server SHOULD implement the
    immediate flag, which returns such a message with basic.return; the reply code no-consumers
    (313) is what the constant's doc describes (a separate warning)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", q, b"nobody home", immediate=True)
    obs = react(peer, ch)
    back = returned(obs, ch)
    if not ctx.check(obs, _Returned(ch), what="the undeliverable immediate message is returned"):
        return
    code = back[0].method.reply_code
    ctx.record(code == 313, expected="reply-code 313 (no-consumers)", observed=f"reply-code {code}",
               what="the return says no-consumers", clauses=(), guideline=NO_CONSUMERS_DOC)


@case("amqp091/basic.publish/immediate-with-consumer-delivered",
      title="an immediate message to a queue with a ready consumer is delivered, not returned",
      clauses=("amqp091:basic.publish.immediate/01",))
def immediate_with_consumer(ctx: Context) -> None:
    """Starts a no-ack consumer on a queue, then publishes to it with immediate set on another
    channel. The server SHOULD implement the immediate flag: the consumer can take the message at
    once, so it is delivered and no basic.return comes (IMMEDIATE_DOC)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    pub = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    _, got = start_consumer(peer, ch, q)
    publish(peer, pub, "", q, b"take it now", immediate=True)
    obs = react(peer, pub)
    got_msgs = [m for m in messages(obs.received) if m.channel == ch] + got.deliveries(ch)
    if not got_msgs and StaysOpen().accepts(obs):
        _, more = gather(peer, timeout=2.0, count=1)
        got_msgs = more.deliveries(ch)
    ok = StaysOpen().accepts(obs) and not returned(obs, pub) and [m.body for m in got_msgs] == [b"take it now"]
    ctx.record(ok, expected="the message delivered to the consumer, no basic.return, no exception",
               observed=obs.describe() + (f"; delivered {[m.body for m in got_msgs]}" if got_msgs else ""))


class _Returned(StaysOpen):
    """A basic.return on the channel, and no exception."""

    def __init__(self, ch: int) -> None:
        self.ch = ch

    def accepts(self, obs: Any) -> bool:
        return bool(returned(obs, self.ch)) and obs.connection_close is None and obs.channel_close() is None

    def describe(self) -> str:
        return f"basic.return on channel {self.ch}, no exception"

