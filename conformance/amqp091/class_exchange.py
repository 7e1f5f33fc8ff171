"""The exchange class rules of the 0-9-1 XML: types, pre-declared instances, declare, delete.

A server implements the direct and fanout types (and should implement topic and headers),
pre-declares ``amq.<type>`` for each type it implements plus a nameless direct exchange, the
default exchange, which clients reach only through an empty exchange name in queue.bind and
basic.publish. exchange.declare creates or checks an exchange (passive: only checks, 404 when
missing; redeclaring checks type, durable and arguments), reserves ``amq.`` names, and refuses
types the server does not support (503); exchange.delete refuses a missing exchange (404) and,
with if-unused, one that still has bindings (406).

Some rules of the XML disagree: redeclaring with another type is a connection exception 530
by the "typed" rule and a channel exception by the "equivalent" rule (the errata, section 6,
call the typed rule superfluous); such cases accept both and cite both.

The helpers these cases share with ``s3_1_3_exchanges`` and ``ext_exchange_bind`` are in ``_exchange``.
"""
from __future__ import annotations

import uuid
from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Observation
from amqpspec.verify import ChannelException, ConnectionException, Replies
from amqpspec.wire.amqp091 import spec
from amqpspec.wire.amqp091.base import Method

from ._common import with_channel
from ._exchange import (
    body_for, check_instance, collect_until, exchange_exists, existence_text, refused, routed, type_supported,
)
from ._model import WAIT, bind, declare_exchange, declare_queue, publish, unique
from ._replies import answer_channel_close, attempt

# ------------------------------------------------------------------------------- spec texts
PRECONDITION_FAILED = ("precondition-failed (406): The client requested a method that was not allowed because "
                       "some precondition failed.")
NOT_ALLOWED = ("not-allowed (530): The client tried to work with some entity in a manner that is prohibited by "
               "the server, due to security settings or by some other criteria.")
ACCESS_REFUSED = ("access-refused (403): The client attempted to work with a server entity to which it has no "
                  "access due to security settings.")
RESERVED_NAMES = 'Exchange names starting with "amq." are reserved for pre-declared and standardised exchanges.'
SYNTAX_RULE = "amqp091:exchange.declare.exchange/syntax"
NAME_LENGTH = "exchange-name: <assert check=\"length\" value=\"127\"/> [domain exchange-name, a shortstr]"
SYNTAX = ("The exchange name consists of a non-empty sequence of these characters: letters, digits, hyphen, "
          "underscore, period, or colon.")
PASSIVE_IGNORES = ("If set, the server will reply with Declare-Ok if the exchange already exists with the same "
                   "name, and raise an error if not. [...] When set, all other method fields except name and "
                   "no-wait are ignored.")
IF_UNUSED_DOC = ("If set, the server will only delete the exchange if it has no queue bindings. If the exchange "
                 "has queue bindings the server does not delete it but raises a channel exception instead.")
DELETE_DOC = ("This method deletes an exchange. When an exchange is deleted all queue bindings on the exchange "
              "are cancelled.")

TYPED = ("amqp091:exchange.declare.type/typed", "amqp091:exchange.declare.passive/equivalent")


# ------------------------------------------------------------------------------- helpers
def check_reply(ctx: Context, obs: Observation, ch: int, reply: str, **kwargs: Any) -> bool:
    return ctx.check(obs, Replies(reply, channel=ch), **kwargs)


# ------------------------------------------------------------------------------- types
@case("amqp091/exchange/required-type-direct", title="an exchange of type direct can be declared",
      clauses=("amqp091:exchange/required-types", "amqp091:3.1.3.1/1"))
def required_type_direct(ctx: Context) -> None:
    """Declares a new exchange of type "direct" (the rule's scenario); passes on declare-ok."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    check_reply(ctx, attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct")), ch, "exchange.declare-ok")


@case("amqp091/exchange/required-type-fanout", title="an exchange of type fanout can be declared",
      clauses=("amqp091:exchange/required-types",))
def required_type_fanout(ctx: Context) -> None:
    """Declares a new exchange of type "fanout" (the rule's scenario); passes on declare-ok."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    check_reply(ctx, attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="fanout")), ch, "exchange.declare-ok")


@case("amqp091/exchange/recommended-type-topic", title="an exchange of type topic can be declared",
      clauses=("amqp091:exchange/recommended-types",))
def recommended_type_topic(ctx: Context) -> None:
    """Declares a new exchange of type "topic"; passes on declare-ok (a SHOULD: a refusal is a warning)."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    check_reply(ctx, attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="topic")), ch, "exchange.declare-ok")


@case("amqp091/exchange/recommended-type-headers", title="an exchange of type headers can be declared",
      clauses=("amqp091:exchange/recommended-types",))
def recommended_type_headers(ctx: Context) -> None:
    """Declares a new exchange of type "headers"; passes on declare-ok (a SHOULD: a refusal is a warning)."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    check_reply(ctx, attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="headers")), ch, "exchange.declare-ok")


# ------------------------------------------------------------------------------- pre-declared instances
@case("amqp091/exchange/required-instance-amq-direct", title="amq.direct is pre-declared and a queue can bind to it",
      clauses=("amqp091:exchange/required-instances", "amqp091:3.1.3.1/1"))
def instance_amq_direct(ctx: Context) -> None:
    """Passive exchange.declare of amq.direct, then binds a temporary queue to it (the rule's
    scenario): declare-ok then bind-ok. Direct is a required type, so its instance is required."""
    check_instance(ctx, "amq.direct", ("amqp091:exchange/required-instances", "amqp091:3.1.3.1/1"))


@case("amqp091/exchange/required-instance-amq-fanout", title="amq.fanout is pre-declared and a queue can bind to it",
      clauses=("amqp091:exchange/required-instances",))
def instance_amq_fanout(ctx: Context) -> None:
    """Passive exchange.declare of amq.fanout, then binds a temporary queue to it: declare-ok then
    bind-ok. Fanout is a required type (exchange/required-types), so a conforming server implements
    it and therefore pre-declares amq.fanout."""
    check_instance(ctx, "amq.fanout", ("amqp091:exchange/required-instances",))


@case("amqp091/exchange/required-instance-amq-topic",
      title="when topic is implemented, amq.topic is pre-declared and a queue can bind to it",
      clauses=("amqp091:exchange/required-instances", "amqp091:3.1.3.3/2"))
def instance_amq_topic(ctx: Context) -> None:
    """Declares a private topic exchange to learn whether the type is implemented (skips if not);
    then a passive declare of amq.topic and a queue bound to it: declare-ok then bind-ok."""
    if not type_supported(ctx, "topic"):
        ctx.skip("the broker does not implement the topic exchange type (a private topic exchange was refused)")
    check_instance(ctx, "amq.topic", ("amqp091:exchange/required-instances", "amqp091:3.1.3.3/2"))


@case("amqp091/exchange/required-instance-amq-headers",
      title="when headers is implemented, amq.headers is pre-declared and a queue can bind to it",
      clauses=("amqp091:exchange/required-instances",))
def instance_amq_headers(ctx: Context) -> None:
    """Declares a private headers exchange to learn whether the type is implemented (skips if
    not); then a passive declare of amq.headers ("amq." followed by the type name, as the rule and
    its scenario say) and a queue bound to it: declare-ok then bind-ok. Section 3.1.3.4 names the
    instance amq.match instead: checked apart (3.1.3.4/amq-match)."""
    if not type_supported(ctx, "headers"):
        ctx.skip("the broker does not implement the headers exchange type (a private headers exchange was refused)")
    check_instance(ctx, "amq.headers", ("amqp091:exchange/required-instances",))


# ------------------------------------------------------------------------------- default exchange
@case("amqp091/exchange/default-exchange",
      title="a message published to the empty exchange name with a queue's name as key reaches that queue",
      clauses=("amqp091:exchange/default-exchange", "amqp091:3.1.3.1/1", "amqp091:3.1.3.1/2"))
def default_exchange(ctx: Context) -> None:
    """Declares a queue, publishes to exchange "" with the queue's name as routing key, and reads
    the queue with basic.get: the message must be there. The rule's scenario also binds the queue
    to the empty exchange name first; that step is left out, since every queue is bound to the
    default exchange by its name already (3.1.3.1/2) and brokers differ on an explicit bind to ""
    (errata, section 14); queue.bind to "" is checked with the queue.bind cases."""
    peer, ch = with_channel(ctx)
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    body = body_for(ctx, "default")
    publish(peer, ch, "", queue, body)
    ok = routed(peer, ch, queue, body)
    ctx.record(ok, expected=f"the message published to \"\" with routing key {queue!r} arrives in that queue",
               observed="it arrived" if ok else "basic.get found no such message within "
               f"{WAIT:g}s")


def check_default_refused(ctx: Context, method: Method) -> None:
    """Sends a method naming the default exchange: any channel or connection exception passes."""
    peer, ch = with_channel(ctx)
    ctx.check(attempt(peer, ch, method), refused(ch))


def check_default_still_routes(ctx: Context, clauses: tuple[str, ...]) -> None:
    """The default exchange still delivers to a queue by its name (a fresh connection)."""
    peer, ch = with_channel(ctx)
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    body = body_for(ctx, "after")
    publish(peer, ch, "", queue, body)
    ok = routed(peer, ch, queue, body)
    ctx.record(ok, what="the default exchange still routes afterwards", clauses=clauses,
               expected=f"a message published to \"\" with routing key {queue!r} arrives in that queue",
               observed="it arrived" if ok else "it did not arrive")


@case("amqp091/exchange/default-access-declare",
      title="exchange.declare of the empty exchange name is refused",
      clauses=("amqp091:exchange/default-access",))
def default_access_declare(ctx: Context) -> None:
    """Sends exchange.declare with exchange "" (not passive, type direct). Only queue.bind and
    basic.publish may name the default exchange, so the server must refuse: any channel or
    connection exception passes (the rule names no code)."""
    check_default_refused(ctx, spec.ExchangeDeclare(exchange="", type="direct"))


@case("amqp091/exchange/default-access-passive-declare",
      title="a passive exchange.declare of the empty exchange name is refused",
      clauses=("amqp091:exchange/default-access",))
def default_access_passive(ctx: Context) -> None:
    """Sends a passive exchange.declare with exchange "": a reference to the default exchange by
    a method other than queue.bind and basic.publish, which the server must not allow; any channel
    or connection exception passes, declare-ok fails."""
    check_default_refused(ctx, spec.ExchangeDeclare(exchange="", type="direct", passive=True))


@case("amqp091/exchange/default-access-delete",
      title="exchange.delete of the empty exchange name is refused and the default exchange stays",
      clauses=("amqp091:exchange/default-access", "amqp091:exchange/default-exchange"))
def default_access_delete(ctx: Context) -> None:
    """Sends exchange.delete with exchange "": must be refused (any channel or connection
    exception); then, on a fresh connection, a message published to "" with a queue's name as
    routing key must still arrive (the default exchange is still there)."""
    peer, ch = with_channel(ctx)
    obs = attempt(peer, ch, spec.ExchangeDelete(exchange=""))
    ctx.check(obs, refused(ch), clauses=("amqp091:exchange/default-access",))
    check_default_still_routes(ctx, ("amqp091:exchange/default-exchange",))


# ------------------------------------------------------------------------------- exchange.declare
@case("amqp091/exchange.declare/minimum", title="16 exchanges can be declared in the virtual host",
      clauses=("amqp091:exchange.declare/minimum",))
def declare_minimum(ctx: Context) -> None:
    """Declares 16 new exchanges (direct, non-durable, all registered for deletion); passes when all
    16 are answered with declare-ok. The scenario's "as many as it can" is bounded at the minimum:
    declaring without end would exhaust a shared broker."""
    peer, ch = with_channel(ctx)
    declared = 0
    last: Observation | None = None
    for i in range(16):
        name = unique(ctx, f"m{i}-")
        ctx.will_delete("exchange", name)
        last = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct"))
        if not last.methods("exchange.declare-ok", ch):
            break
        declared += 1
    ctx.record(declared == 16, expected="16 exchanges declared (declare-ok for each)",
               observed=f"{declared} declared" + (f"; then: {last.describe()}" if last is not None and declared < 16 else ""))


@case("amqp091/exchange.declare.exchange/reserved",
      title="declaring a new exchange whose name starts with amq. is refused with 403",
      clauses=("amqp091:exchange.declare.exchange/reserved",))
def declare_reserved(ctx: Context) -> None:
    """Declares (not passive) a new exchange named "amq.amqpspec-..." (the rule's scenario). The
    names are reserved: the refusal (any exception) is checked against that sentence, which has no
    RFC 2119 keyword (a warning when missing); the code is the rule's on-failure access-refused,
    a channel exception 403 (the rule's keyword is the client's MAY, so that check is
    informational). A last check: the exchange was not created."""
    peer, ch = with_channel(ctx)
    name = f"amq.{unique(ctx, 'r')}"
    ctx.will_delete("exchange", name)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct"))
    ctx.check(obs, refused(ch), what="the declare is refused", guideline=RESERVED_NAMES)
    ctx.check(obs, ChannelException(403, channel=ch), what="the refusal is channel exception 403 (access-refused)",
              clauses=("amqp091:exchange.declare.exchange/reserved",), sets_close=False)
    found = exchange_exists(ctx, name)
    ctx.record(found is False, what="the reserved name was not created", guideline=RESERVED_NAMES,
               expected="a passive declare of the name gets 404", observed=existence_text(found))


@case("amqp091/exchange.declare.exchange/reserved-existing",
      title="a non-passive declare of the existing amq.direct is accepted",
      clauses=("amqp091:exchange.declare.exchange/reserved",))
def declare_reserved_existing(ctx: Context) -> None:
    """The client MAY declare an amq. name that already exists: sends a non-passive declare of
    amq.direct, type direct, once with durable set and once without (on two channels: the spec
    does not say whether pre-declared exchanges are durable, errata section 20). One of the two
    matches the existing exchange and should be answered with declare-ok (informational: the
    rule's keyword is MAY)."""
    peer = ctx.connect()
    seen = []
    ok = False
    for durable in (True, False):
        ch = peer.open_channel()
        obs = attempt(peer, ch, spec.ExchangeDeclare(exchange="amq.direct", type="direct", durable=durable))
        seen.append(f"durable={durable}: {obs.describe()}")
        answer_channel_close(peer, ch, obs)
        if obs.methods("exchange.declare-ok", ch):
            ok = True
            break
        if obs.connection_close is not None or obs.closed:
            peer = ctx.connect()
    ctx.record(ok, expected="declare-ok for durable set or for durable clear", observed=" | ".join(seen))


@case("amqp091/exchange.declare.exchange/syntax-illegal-characters",
      title="declaring an exchange with an illegal name is refused with 406",
      clauses=(SYNTAX_RULE,))
def declare_syntax(ctx: Context) -> None:
    """Declares an exchange whose name has a space, a slash, '#' and '*' (outside letters, digits,
    hyphen, underscore, period, colon) -- the rule's scenario; passes on channel exception 406, the
    rule's on-failure precondition-failed. The rule has no RFC 2119 keyword: a warning at most."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "s") + " bad/name#*"
    ctx.will_delete("exchange", name)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct"))
    ctx.check(obs, ChannelException(406, channel=ch), clauses=(), level=Level.SHOULD, guideline=SYNTAX)


@case("amqp091/exchange.declare.exchange/name-longer-than-127", title="an exchange name of 128 characters is refused",
      guideline=NAME_LENGTH)
def declare_name_too_long(ctx: Context) -> None:
    """Declares an exchange whose name has 128 characters (the exchange-name domain asserts at most
    127; no reply code is named): any channel or connection exception passes, declare-ok is informational:
    the limit is a domain <assert> without a rule, so no MUST or SHOULD sentence says a server
    refuses a longer name."""
    peer, ch = with_channel(ctx)
    name = (unique(ctx, "l") + "x" * 128)[:128]
    ctx.will_delete("exchange", name)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct"))
    ctx.check(obs, refused(ch))


@case("amqp091/exchange.declare.exchange/syntax-legal-characters",
      title="an exchange name made of letters, digits, hyphen, underscore, period and colon is accepted",
      clauses=(SYNTAX_RULE,))
def declare_syntax_legal(ctx: Context) -> None:
    """Declares an exchange whose name uses every allowed kind of character
    ("...-Az09_.:-..."); passes on declare-ok."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "L") + "-Az09_.:end"
    ctx.will_delete("exchange", name)
    check_reply(ctx, attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct")), ch, "exchange.declare-ok",
                clauses=(), level=Level.SHOULD, guideline=SYNTAX)


@case("amqp091/exchange.declare.type/typed",
      title="redeclaring an exchange with another type is refused (530 or a channel exception)",
      clauses=TYPED)
def declare_typed(ctx: Context) -> None:
    """Declares a direct exchange, then declares it again as fanout. Two MUSTs disagree on the
    reaction: the typed rule's on-failure is not-allowed, a connection exception 530; the
    equivalent rule says the server "MUST raise a channel exception" (no code; errata section 6:
    the typed rule is subsumed by it). Either reaction passes the first check, which cites both;
    it fails on a declare-ok (the redeclaration accepted), on silence, and on a connection
    exception other than 530. A separate check wants the code to fit -- 530 on the connection, or
    406 (precondition-failed) on the channel -- but only the reply-code glossary says so, so it
    weighs MAY.
    Last, the exchange keeps its type: a message published to it with a key no queue is bound
    with is not routed to a queue bound with another key."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="fanout"))
    ctx.check(obs, ConnectionException(530) | ChannelException(channel=ch))
    ctx.check(obs, ConnectionException(530) | ChannelException(406, channel=ch), sets_close=False,
              what="the reply code is 530 (connection) or 406 (channel)", guideline=f"{NOT_ALLOWED} / {PRECONDITION_FAILED}")
    # the exchange is still direct: a key that does not match is not delivered
    peer, ch = with_channel(ctx)
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, name, "bound-key")
    stray, marker = body_for(ctx, "stray"), body_for(ctx, "marker")
    publish(peer, ch, name, "other-key", stray)
    publish(peer, ch, name, "bound-key", marker)
    bodies, seen = collect_until(peer, ch, queue, marker)
    ctx.record(seen and stray not in bodies, what="the exchange is still of type direct", clauses=TYPED,
               expected="only the message with the bound key arrives",
               observed=("the marker arrived" if seen else "the marker did not arrive")
               + ("; the message with another key arrived too (routed as fanout)" if stray in bodies else ""))


@case("amqp091/exchange.declare.type/support",
      title="declaring an exchange of a type the server does not implement is connection exception 503",
      clauses=("amqp091:exchange.declare.type/support",))
def declare_type_support(ctx: Context) -> None:
    """Declares an exchange of type "x-amqpspec-unknown-<random>" (a well-formed implementation
    type no server implements); the rule's on-failure is command-invalid, a hard error: connection
    exception 503."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type=f"x-amqpspec-unknown-{uuid.uuid4().hex[:6]}"))
    ctx.check(obs, ConnectionException(503))


@case("amqp091/exchange.declare.passive/not-found",
      title="a passive exchange.declare of a missing exchange is channel exception 404",
      clauses=("amqp091:exchange.declare.passive/not-found",))
def passive_not_found(ctx: Context) -> None:
    """Sends a passive exchange.declare of a name never declared; passes on channel.close 404."""
    peer, ch = with_channel(ctx)
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=unique(ctx, "missing"), type="direct", passive=True))
    ctx.check(obs, ChannelException(404, channel=ch))


@case("amqp091/exchange.declare.passive/ignores-other-fields",
      title="a passive declare with another type and durable flag still gets declare-ok",
      guideline=PASSIVE_IGNORES)
def passive_ignores(ctx: Context) -> None:
    """Declares a transient direct exchange, then declares it passively with type fanout and
    durable set: the other fields are ignored when passive is set, so declare-ok."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="fanout", passive=True, durable=True))
    check_reply(ctx, obs, ch, "exchange.declare-ok")


@case("amqp091/exchange.declare.passive/equivalent-same",
      title="redeclaring an exchange with the same type, durable and arguments gets declare-ok",
      clauses=("amqp091:exchange.declare.passive/equivalent",))
def equivalent_same(ctx: Context) -> None:
    """Declares a fanout exchange and declares it again with the same fields, on another
    connection; passes on declare-ok."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "fanout")
    peer2, ch2 = with_channel(ctx)
    check_reply(ctx, attempt(peer2, ch2, spec.ExchangeDeclare(exchange=name, type="fanout")), ch2, "exchange.declare-ok")


@case("amqp091/exchange.declare.passive/equivalent-arguments",
      title="redeclaring an exchange with the same arguments gets declare-ok",
      clauses=("amqp091:exchange.declare.passive/equivalent",))
def equivalent_arguments(ctx: Context) -> None:
    """Declares a direct exchange with the arguments {"amqpspec-arg": "v", "amqpspec-n": 7} (skips
    if the broker refuses them: their meaning is the implementation's), then redeclares it with
    the same arguments; passes on declare-ok."""
    args = {"amqpspec-arg": "v", "amqpspec-n": 7}
    peer, ch = with_channel(ctx)
    name = unique(ctx, "x")
    ctx.will_delete("exchange", name)
    first = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", arguments=args))
    if not first.methods("exchange.declare-ok", ch):
        ctx.skip(f"the broker does not take these arguments: {first.describe()}")
    check_reply(ctx, attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", arguments=dict(args))),
                ch, "exchange.declare-ok")


@case("amqp091/exchange.declare.passive/equivalent-durable",
      title="redeclaring an exchange with another durable flag is a channel exception",
      clauses=("amqp091:exchange.declare.passive/equivalent",))
def equivalent_durable(ctx: Context) -> None:
    """Declares a transient direct exchange, then declares it again with durable set: a channel
    exception (any code); a separate guideline check wants 406 (precondition-failed, the code the
    errata, section 6, report)."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", durable=True))
    ctx.check(obs, ChannelException(channel=ch))
    ctx.check(obs, ChannelException(406, channel=ch), what="the reply code is 406 (precondition-failed)",
              guideline=PRECONDITION_FAILED, sets_close=False)


@case("amqp091/exchange.declare.durable/support", title="both a durable and a transient exchange can be declared",
      clauses=("amqp091:exchange.declare.durable/support",))
def durable_support(ctx: Context) -> None:
    """Declares a new exchange with durable set and another with durable clear (both deleted after
    the case); passes when both get declare-ok. That a durable one survives a restart is not
    checked (needs a broker restart)."""
    peer, ch = with_channel(ctx)
    for durable in (True, False):
        name = unique(ctx, "d" if durable else "t")
        ctx.will_delete("exchange", name)
        obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type="direct", durable=durable))
        if not check_reply(ctx, obs, ch, "exchange.declare-ok", what=f"a {'durable' if durable else 'transient'} "
                           "exchange is declared", sets_close=not durable):
            return


# ------------------------------------------------------------------------------- exchange.delete
@case("amqp091/exchange.delete.exchange/exists",
      title="deleting an exchange that does not exist is channel exception 404",
      clauses=("amqp091:exchange.delete.exchange/exists",))
def delete_missing(ctx: Context) -> None:
    """Sends exchange.delete for a name never declared; the rule's on-failure is not-found, a
    soft error: channel.close 404."""
    peer, ch = with_channel(ctx)
    obs = attempt(peer, ch, spec.ExchangeDelete(exchange=unique(ctx, "missing")))
    ctx.check(obs, ChannelException(404, channel=ch))


@case("amqp091/exchange.delete.if-unused/in-use",
      title="exchange.delete with if-unused of an exchange with a binding is refused with 406, and it stays",
      clauses=("amqp091:exchange.delete.if-unused/in-use",))
def delete_in_use(ctx: Context) -> None:
    """Declares an exchange, binds a queue to it, then deletes it with if-unused set (the rule's
    scenario): channel exception 406 (precondition-failed); then a passive declare on a fresh
    channel must find the exchange still there."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, name, "k")
    obs = attempt(peer, ch, spec.ExchangeDelete(exchange=name, if_unused=True))
    ctx.check(obs, ChannelException(406, channel=ch))
    answer_channel_close(peer, ch, obs)
    found = exchange_exists(ctx, name, peer)
    ctx.record(found is True, what="the exchange was not deleted", expected="the exchange still exists",
               observed=existence_text(found))


@case("amqp091/exchange.delete.if-unused/unused",
      title="exchange.delete with if-unused of an exchange without bindings deletes it",
      guideline=IF_UNUSED_DOC)
def delete_if_unused_unused(ctx: Context) -> None:
    """Declares an exchange with no binding and deletes it with if-unused set: delete-ok, and a
    passive declare then gets 404."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    obs = attempt(peer, ch, spec.ExchangeDelete(exchange=name, if_unused=True))
    if not check_reply(ctx, obs, ch, "exchange.delete-ok"):
        return
    found = exchange_exists(ctx, name, peer)
    ctx.record(found is False, what="the exchange is gone", expected="a passive declare gets 404",
               observed=existence_text(found))


@case("amqp091/exchange.delete/cancels-bindings",
      title="exchange.delete removes the exchange and its queue bindings",
      guideline=DELETE_DOC)
def delete_cancels_bindings(ctx: Context) -> None:
    """Declares a direct exchange, binds a queue with key k, deletes the exchange (delete-ok, then
    a passive declare gets 404), declares it again and publishes with key k: the old binding is
    gone, so the message does not reach the queue (a marker sent through the default exchange to
    the queue after it bounds the wait)."""
    peer, ch = with_channel(ctx)
    name = declare_exchange(ctx, peer, ch, "direct")
    queue = declare_queue(ctx, peer, ch, exclusive=True, auto_delete=True)
    bind(peer, ch, queue, name, "k")
    if not check_reply(ctx, attempt(peer, ch, spec.ExchangeDelete(exchange=name)), ch, "exchange.delete-ok",
                       what="exchange.delete is answered with delete-ok"):
        return
    found = exchange_exists(ctx, name, peer)
    ctx.record(found is False, what="the exchange is gone", expected="a passive declare gets 404",
               observed=existence_text(found))
    peer.call(ch, spec.ExchangeDeclare(exchange=name, type="direct"))
    stray = body_for(ctx, "stray")
    publish(peer, ch, name, "k", stray)
    # the stray and the marker take different exchanges: wait for the marker, then a moment more
    marker = body_for(ctx, "marker")
    publish(peer, ch, "", queue, marker)
    bodies, seen = collect_until(peer, ch, queue, marker, settle=0.2)
    ctx.record(seen and stray not in bodies, what="the queue binding was cancelled with the exchange",
               expected="the message published to the redeclared exchange does not reach the queue",
               observed=("it arrived: the binding survived" if stray in bodies else "it did not arrive")
               + ("" if seen else "; the marker through the default exchange did not arrive either"))
