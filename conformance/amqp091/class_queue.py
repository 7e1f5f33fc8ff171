"""The queue class rules of the 0-9-1 XML: declare, purge, delete (and their fields).

queue.declare creates or checks a queue: an empty name asks the server for a unique one
(default-name), names starting with "amq." are reserved (reserved, access-refused), a passive
declare only asserts existence (passive, not-found), redeclaring checks that durable,
exclusive, auto-delete and arguments are the same (equivalent) though auto-delete of an
existing queue is to be ignored (pre-existence). Exclusive queues belong to one connection
(exclusive, resource-locked) and go with it; auto-delete queues go with their last consumer.
Every new queue is bound to the default exchange by its name (default-binding, 3.1.3.1).
queue.purge removes ready messages, never unacknowledged ones (purge/02); queue.delete
refuses, with precondition-failed, a queue in use (if-unused) or not empty (if-empty).
Operations on a queue that does not exist, or on no queue at all, fail with not-found.

Where a rule's only RFC 2119 keyword binds the client ("The client MAY ...") and the server's
side is stated without one (or only by the rule's on-failure code), the check weighs as a
guideline (SHOULD) and quotes the sentence it checks. The errata (sections 5-9) are RabbitMQ's
reading: they inform the accepted sets, never the expectation.

The helpers these cases share with the bindings module (queue lookups, the not-found cases of
every method that names a queue) are in ``_queue``.
"""
from __future__ import annotations

import time
from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Peer, UnexpectedReply
from amqpspec.verify import ChannelException, ConnectionException, Replies, StaysOpen
from amqpspec.wire.amqp091 import MethodFrame, spec
from amqpspec.wire.amqp091.base import Method

from ._common import QUICK_WINDOW, REACTION_WINDOW, with_channel
from ._model import Message, bodies, consume, declare_queue, fence, get, publish, quiet, receive, unique
from ._queue import Lookup, drain, lookup, missing_queue_case, no_queue_name_case, reply_of
from ._replies import attempt, ok_or_close, reopen

# How long a deletion the spec does not time (exclusive queue after its connection closed,
# auto-delete queue after its last consumer) may take before we call it "not deleted".
# Errata 5: the spec does not say whether these deletions happen before the broker replies.
DELETION_WINDOW = 3.0
POLL_PAUSE = 0.05

# ---------------------------------------------------------------------------------- spec texts
DEFAULT_BINDING = ("amqp091:queue.declare/default-binding", "amqp091:3.1.3.1/2")
EXCLUSIVE_RULE = "amqp091:queue.declare.exclusive/exclusive"
EXCLUSIVE_DOC = ("Exclusive queues may only be accessed by the current connection, and are deleted when that "
                 "connection closes. Passive declaration of an exclusive queue by other connections are not allowed.")
EXCLUSIVE_2_1_4 = ("exclusive - if set, the queue belongs to the current connection only, and is deleted when the "
                   "connection closes. [2.1.4.1]")
AUTO_DELETE_DOC = ("If set, the queue is deleted when all consumers have finished using it. The last consumer can be "
                   "cancelled either explicitly or because its channel is closed. If there was no consumer ever on "
                   "the queue, it won't be deleted.")
PASSIVE_RULE = "amqp091:queue.declare.passive/passive"
PASSIVE_FAILURE = ("If the queue does not exist, the server treats this as a failure. "
                   "[on-failure: not-found]")
PASSIVE_DOC = ("If set, the server will reply with Declare-Ok if the queue already exists with the same name, and "
               "raise an error if not. The client can use this to check whether a queue exists without modifying "
               "the server state. When set, all other method fields except name and no-wait are ignored.")
PASSIVE_NO_WAIT = ("When set, all other method fields except name and no-wait are ignored. A declare with both "
                   "passive and no-wait has no effect. [passive field] If the queue does not exist, the server treats "
                   "this as a failure. [rule passive, on-failure not-found]")
EQUIVALENT = "amqp091:queue.declare.passive/equivalent"
PRECONDITION_FAILED = ("precondition-failed (406): The client requested a method that was not allowed because some "
                       "precondition failed.")
RESERVED_RULE = "amqp091:queue.declare.queue/reserved"
RESERVED_TEXT = ("Queue names starting with \"amq.\" are reserved for pre-declared and standardised queues. "
                 "[on-failure: access-refused]")
SYNTAX_RULE = "amqp091:queue.declare.queue/syntax"
SYNTAX_TEXT = ("The queue name can be empty, or a sequence of these characters: letters, digits, hyphen, "
               "underscore, period, or colon. [on-failure: precondition-failed]")
NAME_LENGTH = "queue-name: <assert check=\"length\" value=\"127\"/> [domain queue-name, a shortstr]"
QUEUE_NAME_DOC = ("In methods where the queue name may be blank, and that has no specific significance, this refers "
                  "to the 'current' queue for the channel, meaning the last queue that the client declared on the "
                  "channel. If the client did not declare a queue, and the method needs a queue name, this will "
                  "result in a 502 (syntax error) channel exception. [domain queue-name]")
MESSAGE_COUNT_DOC = ("The number of messages in the queue, which will be zero for newly-declared queues. This is the "
                     "number of messages present in the queue, and committed if the channel on which they were "
                     "published is transacted, that are not waiting acknowledgement. [domain message-count]")
CONSUMER_COUNT_DOC = ("Reports the number of active consumers for the queue. Note that consumers can suspend activity "
                      "(Channel.Flow) in which case they do not appear in this count. [queue.declare-ok consumer-count]")
DECLARE_OK_DOC = ("This method confirms a Declare method and confirms the name of the queue, essential for "
                  "automatically-named queues. [queue.declare-ok]")
PURGE_DOC = ("This method removes all messages from a queue which are not awaiting acknowledgment. [queue.purge] "
             "Reports the number of messages purged. [queue.purge-ok message-count]")
DELETE_DOC = "Reports the number of messages deleted. [queue.delete-ok message-count]"
IF_UNUSED_DOC = ("If set, the server will only delete the queue if it has no consumers. If the queue has consumers "
                 "the server does does not delete it but raises a channel exception instead.")
ONE_CLIENT_3_1_4 = ("A message routed to a message queue is never sent to more than one client unless it is is being "
                    "resent after a failure or rejection. [3.1.4]")
REPLY_QUEUE_2_1_5_2 = ("Reply queues are usually temporary, with server-assigned names. [...] To publish to the reply "
                       "queue, a producer sends a message to the default exchange [2.1.5.2]")


# ---------------------------------------------------------------------------------- helpers
def wait_gone(peer: Peer, ch: int, name: str, within: float = DELETION_WINDOW) -> Lookup:
    """Looks the queue up until it is reported not found (404) or ``within`` seconds pass."""
    until = time.monotonic() + within
    while True:
        found = lookup(peer, ch, name)
        if found.gone or time.monotonic() >= until:
            return found
        ch = found.channel
        time.sleep(POLL_PAUSE)


def cancel_all(peer: Peer, consumers: list[tuple[int, str]]) -> None:
    """Cancels the case's consumers before it ends (a tidy client; the case was about something
    else, and some brokers mishandle connections closing with consumers on exclusive queues)."""
    for ch, tag in consumers:
        peer.call(ch, spec.BasicCancel(consumer_tag=tag))


# ---------------------------------------------------------------------------------- queue.declare
@case("amqp091/queue.declare/default-binding",
      title="a new queue receives messages published to the default exchange with its name as routing key",
      clauses=DEFAULT_BINDING)
def default_binding(ctx: Context) -> None:
    """Declares a named queue, binds nothing, publishes to the empty exchange with the queue's name as
    routing key, and reads the queue with basic.get: the message must be there."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    publish(peer, ch, "", q, b"default-binding")
    fence(peer, ch)
    got = drain(peer, ch, q)
    ctx.record(bodies(got) == [b"default-binding"], expected="basic.get returns the message, once",
               observed=f"{len(got)} message(s): {[m.summary() for m in got]}")


@case("amqp091/queue.declare/minimum-queues", title="the server supports 256 queues per virtual host",
      clauses=("amqp091:queue.declare/minimum-queues",), timeout=20.0)
def minimum_queues(ctx: Context) -> None:
    """Declares 256 exclusive queues (deleted with the connection) on one channel, sending all declares
    at once, and counts the declare-oks: all 256 must be answered with declare-ok."""
    peer, ch = with_channel(ctx)
    total = 256
    base = ctx.name("m")
    peer.send(*[MethodFrame(ch, spec.QueueDeclare(queue=f"{base}{i}", exclusive=True)) for i in range(total)])
    count, last = 0, None
    while count < total:
        item = peer.recv(REACTION_WINDOW)
        if isinstance(item, MethodFrame) and item.method.NAME == "queue.declare-ok":
            count += 1
            continue
        last = item
        break
    ctx.record(count == total, expected=f"{total} queue.declare-ok", observed=f"{count} queue.declare-ok"
               + (f", then {last.summary() if hasattr(last, 'summary') else last!r}" if count < total else ""))


@case("amqp091/queue.declare.queue/default-name",
      title="declares with an empty queue name get unique, server-generated names in declare-ok",
      clauses=("amqp091:queue.declare.queue/default-name",))
def default_name(ctx: Context) -> None:
    """Declares three exclusive queues with an empty name (the rule's scenario: several). Each
    declare-ok must carry a non-empty name, all three different."""
    peer, ch = with_channel(ctx)
    names = []
    for _ in range(3):
        obs = attempt(peer, ch, spec.QueueDeclare(queue="", exclusive=True))
        reply = reply_of(obs, "queue.declare-ok", ch)
        if reply is None:
            ctx.check(obs, Replies("queue.declare-ok", channel=ch), what="a queue with an empty name is created")
            return
        names.append(str(reply.queue))
        if reply.queue:
            ctx.will_delete("queue", str(reply.queue))
    ok = all(names) and len(set(names)) == len(names)
    ctx.record(ok, expected="three non-empty, distinct queue names", observed=f"{names}")


@case("amqp091/queue.declare.queue/server-named-reply-queue",
      title="a server-named queue receives messages sent to the default exchange with its generated name",
      clauses=DEFAULT_BINDING)
def server_named_reply_queue(ctx: Context) -> None:
    """Declares an exclusive queue with an empty name (a reply queue, 2.1.5.2), publishes to the
    default exchange with the generated name as routing key, and reads it back with basic.get."""
    peer, ch = with_channel(ctx)
    obs = attempt(peer, ch, spec.QueueDeclare(queue="", exclusive=True))
    reply = reply_of(obs, "queue.declare-ok", ch)
    if reply is None or not reply.queue:
        ctx.skip("the broker generates no queue name (see queue.declare.queue/default-name): "
                 + ok_or_close(obs, "queue.declare-ok", ch))
    q = str(reply.queue)
    ctx.will_delete("queue", q)
    publish(peer, ch, "", q, b"reply")
    fence(peer, ch)
    got = drain(peer, ch, q)
    ctx.record(bodies(got) == [b"reply"], expected="basic.get returns the message sent to the generated name",
               observed=f"{len(got)} message(s): {[m.summary() for m in got]}")
    ctx.note(REPLY_QUEUE_2_1_5_2)


@case("amqp091/queue.declare.queue/reserved-amq-prefix",
      title="declaring a new queue named amq.* (not passive) is refused with channel exception 403",
      clauses=(RESERVED_RULE,))
def reserved_prefix(ctx: Context) -> None:
    """Declares a queue named "amq.<unique>" that does not exist, passive off (the rule's scenario).
    Its on-failure is access-refused: channel.close 403 passes. The rule's keyword (MAY) binds the
    client; the reservation itself carries none, so the check weighs as a guideline."""
    peer, ch = with_channel(ctx)
    name = "amq." + unique(ctx, "r")
    ctx.will_delete("queue", name)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, exclusive=True))
    ctx.check(obs, ChannelException(403, channel=ch), clauses=(RESERVED_RULE,), guideline=RESERVED_TEXT)


@case("amqp091/queue.declare.queue/reserved-amq-prefix-passive",
      title="a passive declare of a missing amq.* queue is allowed, and fails as not-found (404)",
      clauses=(RESERVED_RULE, PASSIVE_RULE))
def reserved_prefix_passive(ctx: Context) -> None:
    """Declares "amq.<unique>" (which does not exist) with passive set: the client MAY do so, so the
    name must not be refused as reserved (403); the queue does not exist, so the passive declare
    fails with not-found. channel.close 404 passes (MAY: a failure is informational)."""
    peer, ch = with_channel(ctx)
    name = "amq." + unique(ctx, "p")
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, passive=True))
    ctx.check(obs, ChannelException(404, channel=ch))


@case("amqp091/queue.declare.queue/syntax-illegal-characters",
      title="a queue name with characters outside letters, digits, - _ . : is refused (406)",
      clauses=(SYNTAX_RULE,))
def syntax_illegal(ctx: Context) -> None:
    """Declares a queue named with a space, '!', '/' and '#' in it. The rule (no RFC 2119 keyword)
    names precondition-failed: channel.close 406 passes; a declare-ok is a warning."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "bad name!/#")
    ctx.will_delete("queue", name)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, exclusive=True))
    ctx.check(obs, ChannelException(406, channel=ch), clauses=(), level=Level.SHOULD, guideline=SYNTAX_TEXT)


@case("amqp091/queue.declare.queue/syntax-legal-characters",
      title="a queue name of letters, digits, hyphen, underscore, period and colon is accepted",
      clauses=(SYNTAX_RULE,))
def syntax_legal(ctx: Context) -> None:
    """Declares a queue whose name uses every allowed kind of character (A-Z a-z 0-9 - _ . :):
    declare-ok passes."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "AZ.az_09:x")
    ctx.will_delete("queue", name)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, exclusive=True))
    ctx.check(obs, Replies("queue.declare-ok", channel=ch), clauses=(), level=Level.SHOULD, guideline=SYNTAX_TEXT)


@case("amqp091/queue.declare.queue/name-longer-than-127", title="a queue name of 128 characters is refused",
      guideline=NAME_LENGTH)
def name_too_long(ctx: Context) -> None:
    """Declares a queue whose name has 128 characters (the queue-name domain asserts at most 127;
    no reply code is named): any channel or connection exception passes, a declare-ok is informational:
    the limit is a domain <assert> without a rule, so no MUST or SHOULD sentence says a server
    refuses a longer name."""
    peer, ch = with_channel(ctx)
    base = unique(ctx, "l")
    name = (base + "x" * 128)[:128]
    ctx.will_delete("queue", name)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, exclusive=True))
    ctx.check(obs, ChannelException(channel=ch) | ConnectionException())


# ---------------------------------------------------------------------------------- passive / equivalent
@case("amqp091/queue.declare.passive/existing", title="a passive declare of an existing queue is answered declare-ok",
      clauses=(PASSIVE_RULE,))
def passive_existing(ctx: Context) -> None:
    """Declares a queue, then declares it again with passive set (first step of the rule's scenario):
    queue.declare-ok passes."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=q, passive=True))
    ctx.check(obs, Replies("queue.declare-ok", channel=ch), guideline=PASSIVE_DOC,
              clauses=(PASSIVE_RULE,))


@case("amqp091/queue.declare.passive/missing", title="a passive declare of a missing queue is channel exception 404",
      clauses=(PASSIVE_RULE,))
def passive_missing(ctx: Context) -> None:
    """Declares, passive set, a queue that was never declared (second step of the rule's scenario):
    "the server must close the channel with the correct reply-code", not-found: channel.close 404."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "missing")
    ctx.will_delete("queue", name)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=name, passive=True))
    ctx.check(obs, ChannelException(404, channel=ch), clauses=(PASSIVE_RULE,), guideline=PASSIVE_FAILURE)


@case("amqp091/queue.declare.passive/passive-no-wait-missing",
      title="a passive, no-wait declare of a missing queue is ignored or refused with 404, never answered",
      clauses=(PASSIVE_RULE,))
def passive_no_wait_missing(ctx: Context) -> None:
    """Declares a missing queue with passive and no-wait set. The passive field says "A declare with
    both passive and no-wait has no effect", the passive rule that a missing queue is a failure
    (not-found); errata 9 notes the conflict. Either passes: channel.close 404, or nothing at all
    (a probe on the same channel answered). A declare-ok (no-wait asks for none) or any other
    exception is a warning."""
    peer, ch = with_channel(ctx)
    name = unique(ctx, "missing")
    ctx.will_delete("queue", name)
    peer.send(MethodFrame(ch, spec.QueueDeclare(queue=name, passive=True, no_wait=True)))
    obs = peer.observe(REACTION_WINDOW, probe_channel=ch)
    if obs.methods("queue.declare-ok", ch):
        ctx.record(False, expected="no queue.declare-ok (no-wait)", observed=obs.describe(), clauses=(PASSIVE_RULE,),
                   guideline=PASSIVE_NO_WAIT)
        return
    ctx.check(obs, ChannelException(404, channel=ch) | StaysOpen(), clauses=(PASSIVE_RULE,), guideline=PASSIVE_NO_WAIT)


@case("amqp091/queue.declare.passive/ignores-other-fields",
      title="a passive declare with other durable/auto-delete/arguments values still gets declare-ok",
      clauses=(EQUIVALENT,))
def passive_ignores_fields(ctx: Context) -> None:
    """Declares a transient, non-auto-delete queue without arguments, then declares it passively with
    durable and auto-delete set and an arguments table. With passive set "all other method fields
    except name and no-wait are ignored" and the equivalence check applies only when passive is not
    set: queue.declare-ok passes."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=q, passive=True, durable=True, auto_delete=True,
                                              arguments={"amqpspec-argument": "ignored"}))
    ctx.check(obs, Replies("queue.declare-ok", channel=ch), clauses=(EQUIVALENT,), level=Level.SHOULD,
              guideline=PASSIVE_DOC)


@case("amqp091/queue.declare.passive/equivalent-same-fields",
      title="redeclaring a queue with the same durable, exclusive, auto-delete and arguments gets declare-ok",
      clauses=(EQUIVALENT,))
def equivalent_same(ctx: Context) -> None:
    """Declares a durable queue and declares it again with exactly the same fields: the server MUST
    respond with Declare-Ok."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, durable=True)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=q, durable=True))
    ctx.check(obs, Replies("queue.declare-ok", channel=ch))


@case("amqp091/queue.declare.passive/equivalent-durable-differs",
      title="redeclaring a transient queue as durable is a channel exception",
      clauses=(EQUIVALENT,))
def equivalent_durable(ctx: Context) -> None:
    """Declares a transient queue, then declares it again (not passive) with durable set. The server
    MUST raise a channel exception (any code passes). The rule names no code; precondition-failed
    (406, errata 6) is checked separately as a guideline."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=q, durable=True))
    if ctx.check(obs, ChannelException(channel=ch)):
        ctx.check(obs, ChannelException(406, channel=ch), what="the reply code is precondition-failed",
                  guideline=PRECONDITION_FAILED)


@case("amqp091/queue.declare.passive/equivalent-exclusive-differs",
      title="redeclaring a shared queue as exclusive is a channel exception",
      clauses=(EQUIVALENT,))
def equivalent_exclusive(ctx: Context) -> None:
    """Declares a non-exclusive queue, then declares it again on the same connection (not passive)
    with exclusive set: the server MUST raise a channel exception (any code passes)."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=q, exclusive=True))
    ctx.check(obs, ChannelException(channel=ch))


# ---------------------------------------------------------------------------------- durable / exclusive types
@case("amqp091/queue.declare.durable/types", title="both a durable and a transient named queue can be declared, and each keeps its kind",
      clauses=("amqp091:queue.declare.durable/types",))
def durable_types(ctx: Context) -> None:
    """Declares two named queues, one durable and one transient (the rule's scenario): both must be
    answered with declare-ok naming them. A declare-ok does not show that the server supports the
    kind asked for, but queue.declare.passive/equivalent makes it observable: the server MUST check
    an existing queue's durable field and raise a channel exception when a redeclare differs (the
    rule names no code; 406 precondition-failed is usual). So each queue is then declared again
    with the other durable value: a server that made both queues of one kind accepts one of them."""
    peer, ch = with_channel(ctx)
    outcomes, made = [], []
    for durable in (True, False):
        name = unique(ctx, "d" if durable else "t")
        ctx.will_delete("queue", name)
        obs = attempt(peer, ch, spec.QueueDeclare(queue=name, durable=durable))
        reply = reply_of(obs, "queue.declare-ok", ch)
        outcomes.append((reply is not None and reply.queue == name, f"{'durable' if durable else 'transient'}: "
                         f"{ok_or_close(obs, 'queue.declare-ok', ch)}"))
        if reply is not None:
            made.append((name, durable))
        ch = reopen(peer, obs, ch)
    if not ctx.record(all(ok for ok, _ in outcomes), expected="queue.declare-ok naming each queue, durable and transient",
                      observed="; ".join(text for _, text in outcomes), what="both kinds of queue are declared"):
        return
    for name, durable in made:
        kind, other = ("durable", "transient") if durable else ("transient", "durable")
        obs = attempt(peer, ch, spec.QueueDeclare(queue=name, durable=not durable))
        ctx.check(obs, ChannelException(channel=ch), what=f"the {kind} queue redeclared {other} is refused",
                  clauses=("amqp091:queue.declare.durable/types", "amqp091:queue.declare.passive/equivalent"))
        ch = reopen(peer, obs, ch)


@case("amqp091/queue.declare.exclusive/types",
      title="both an exclusive and a shared named queue can be declared; the shared one is seen by others",
      clauses=("amqp091:queue.declare.exclusive/types",))
def exclusive_types(ctx: Context) -> None:
    """Declares two named queues, one exclusive and one not (the rule's scenario): both must get
    declare-ok; a second connection's passive declare of the shared queue must get declare-ok too
    (it is shared)."""
    peer, ch = with_channel(ctx)
    outcomes = []
    names = {}
    for exclusive in (True, False):
        name = names[exclusive] = unique(ctx, "e" if exclusive else "s")
        ctx.will_delete("queue", name)
        obs = attempt(peer, ch, spec.QueueDeclare(queue=name, exclusive=exclusive))
        outcomes.append((bool(obs.methods("queue.declare-ok", ch)),
                         f"{'exclusive' if exclusive else 'shared'}: {ok_or_close(obs, 'queue.declare-ok', ch)}"))
        ch = reopen(peer, obs, ch)
    other, och = with_channel(ctx)
    obs = attempt(other, och, spec.QueueDeclare(queue=names[False], passive=True))
    outcomes.append((bool(obs.methods("queue.declare-ok", och)),
                     f"shared, passive from another connection: {ok_or_close(obs, 'queue.declare-ok', och)}"))
    ctx.record(all(ok for ok, _ in outcomes), expected="queue.declare-ok for both, and for the shared queue from "
               "another connection", observed="; ".join(text for _, text in outcomes))


# ---------------------------------------------------------------------------------- exclusive, other connection
def owned_exclusive(ctx: Context) -> tuple[Peer, int, str]:
    """A connection that owns an exclusive (not auto-delete) queue, bound to amq.direct by its name."""
    owner, och = with_channel(ctx)
    q = declare_queue(ctx, owner, och, exclusive=True)
    owner.call(och, spec.QueueBind(queue=q, exchange="amq.direct", routing_key=q))
    return owner, och, q


def exclusive_case(slug: str, what: str, make: Callable[[str], Method], scenario: bool) -> None:
    def run(ctx: Context) -> None:
        owner, och, q = owned_exclusive(ctx)
        other, ch = with_channel(ctx)
        obs = attempt(other, ch, make(q))
        ctx.check(obs, ChannelException(405, channel=ch), clauses=(EXCLUSIVE_RULE,), guideline=EXCLUSIVE_DOC)
        accepted = reply_of(obs, "basic.consume-ok", ch)
        if accepted is not None:  # tidy up the consumer the broker should not have accepted
            attempt(other, ch, spec.BasicCancel(consumer_tag=accepted.consumer_tag), QUICK_WINDOW)
        if slug in ("delete", "purge"):
            found = lookup(owner, och, q)
            ctx.record(found.exists, expected="the owner still finds its queue (passive declare-ok)",
                       observed=found.observed, what=f"the other connection's {what} did not delete the queue",
                       clauses=(EXCLUSIVE_RULE,), guideline=EXCLUSIVE_DOC)

    run.__name__ = f"exclusive_other_{slug.replace('-', '_')}"
    source = ("one of the operations of the rule's scenario" if scenario else
              "not in the rule's scenario (errata 7), but the field says exclusive queues \"may only be accessed "
              "by the current connection\"")
    run.__doc__ = (f"One connection declares an exclusive queue; a second connection sends {what} naming it "
                   f"({source}). The rule's on-failure is resource-locked: channel.close 405 on the second "
                   "connection passes. The rule's keyword (MAY NOT) binds the client, so the check weighs as a "
                   "guideline quoting the exclusive field.")
    case(f"amqp091/queue.declare.exclusive/other-connection-{slug}",
         title=f"{what} of a queue exclusive to another connection is channel exception 405",
         clauses=(EXCLUSIVE_RULE,))(run)


exclusive_case("declare", "queue.declare (same fields)",
               lambda q: spec.QueueDeclare(queue=q, exclusive=True), True)
exclusive_case("passive-declare", "a passive queue.declare", lambda q: spec.QueueDeclare(queue=q, passive=True), True)
exclusive_case("bind", "queue.bind", lambda q: spec.QueueBind(queue=q, exchange="amq.direct", routing_key=q + ".b"), True)
exclusive_case("unbind", "queue.unbind",
               lambda q: spec.QueueUnbind(queue=q, exchange="amq.direct", routing_key=q), False)
exclusive_case("consume", "basic.consume", lambda q: spec.BasicConsume(queue=q), True)
exclusive_case("get", "basic.get", lambda q: spec.BasicGet(queue=q, no_ack=True), False)
exclusive_case("purge", "queue.purge", lambda q: spec.QueuePurge(queue=q), True)
exclusive_case("delete", "queue.delete", lambda q: spec.QueueDelete(queue=q), True)


@case("amqp091/queue.declare.exclusive/same-connection-other-channel",
      title="an exclusive queue outlives the channel that declared it and serves the connection's other channels",
      guideline=EXCLUSIVE_DOC + " " + EXCLUSIVE_2_1_4)
def exclusive_same_connection(ctx: Context) -> None:
    """Declares an exclusive queue on channel 1 and closes channel 1; on channel 2 of the same
    connection, sends basic.get and a passive declare of it: no exception (the queue belongs to
    the connection, not to the channel that declared it, and lives until the connection closes);
    a liveness probe on channel 2 must come back."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    ch2 = peer.open_channel()
    peer.call(ch, spec.ChannelClose(200, "amqpspec done", 0, 0), "channel.close-ok")
    peer.send(MethodFrame(ch2, spec.BasicGet(queue=q, no_ack=True)),
              MethodFrame(ch2, spec.QueueDeclare(queue=q, passive=True)))
    obs = peer.observe(REACTION_WINDOW, probe_channel=ch2)
    ctx.check(obs, StaysOpen())


@case("amqp091/queue.declare.exclusive/deleted-with-connection",
      title="an exclusive queue is deleted when its connection closes",
      guideline=EXCLUSIVE_DOC + " " + EXCLUSIVE_2_1_4)
def exclusive_deleted_on_close(ctx: Context) -> None:
    """One connection declares an exclusive queue and closes (connection.close / close-ok). A second
    connection then declares it passively until it is reported not found (404), for up to
    3 seconds (the spec does not say whether the deletion precedes close-ok, errata 5)."""
    owner, och = with_channel(ctx)
    q = declare_queue(ctx, owner, och, exclusive=True)
    other, ch = with_channel(ctx)
    owner.close()
    found = wait_gone(other, ch, q)
    ctx.record(found.gone, expected=f"passive queue.declare refused with 404 within {DELETION_WINDOW:g}s",
               observed=found.observed)


@case("amqp091/queue.declare.exclusive/deleted-with-connection-while-consumed",
      title="an exclusive queue with a consumer is deleted when its connection closes",
      guideline=EXCLUSIVE_DOC + " " + EXCLUSIVE_2_1_4)
def exclusive_consumed_deleted_on_close(ctx: Context) -> None:
    """As deleted-with-connection, with a consumer on the exclusive queue (on another channel of
    the owning connection) when the connection closes: the temporary reply queue of 2.1.4.2. A
    second connection must see it reported not found (404) within 3 seconds."""
    owner, och = with_channel(ctx)
    q = declare_queue(ctx, owner, och, exclusive=True)
    consume(owner, owner.open_channel(), q)
    other, ch = with_channel(ctx)
    owner.close()
    found = wait_gone(other, ch, q)
    ctx.record(found.gone, expected=f"passive queue.declare refused with 404 within {DELETION_WINDOW:g}s",
               observed=found.observed)


# ---------------------------------------------------------------------------------- auto-delete
@case("amqp091/queue.declare.auto-delete/pre-existence",
      title="redeclaring existing queues with auto-delete reversed does not change their auto-delete",
      clauses=("amqp091:queue.declare.auto-delete/pre-existence", EQUIVALENT))
def auto_delete_pre_existence(ctx: Context) -> None:
    """Declares queue A auto-delete and queue B not, then redeclares each with auto-delete reversed
    (the rule's scenario). pre-existence says the field MUST be ignored (declare-ok) while the
    equivalence rule says a different auto-delete MUST raise a channel exception: either passes.
    Then each gets a consumer that is cancelled: A must be deleted, B must stay. A third
    auto-delete queue, never redeclared, shows that the broker deletes auto-delete queues at all;
    if it does not, the second check is not made."""
    peer, ch = with_channel(ctx)
    a = declare_queue(ctx, peer, ch, auto_delete=True)
    b = declare_queue(ctx, peer, ch, auto_delete=False)
    control = declare_queue(ctx, peer, ch, auto_delete=True)
    seen = []
    ok = True
    for name, flag in ((a, False), (b, True)):
        obs = attempt(peer, ch, spec.QueueDeclare(queue=name, auto_delete=flag))
        ok = ok and (bool(obs.methods("queue.declare-ok", ch)) or obs.channel_close(ch) is not None)
        seen.append(f"{'A' if name == a else 'B'} with auto-delete={flag}: {ok_or_close(obs, 'queue.declare-ok', ch)}")
        ch = reopen(peer, obs, ch)
    ctx.record(ok, expected="queue.declare-ok (field ignored) or a channel exception (not equivalent)",
               observed="; ".join(seen), what="the redeclares are answered", clauses=ctx.spec.clauses)
    tags = [consume(peer, ch, name) for name in (a, b, control)]
    for tag in tags:
        peer.call(ch, spec.BasicCancel(consumer_tag=tag))
    probe = peer.open_channel()
    gone_control = wait_gone(peer, probe, control)
    if not gone_control.gone:
        ctx.note("the control auto-delete queue was not deleted after its consumer was cancelled "
                 "(see queue.declare.auto-delete/deleted-after-last-cancel): A's flag cannot be judged")
    else:
        gone_a = wait_gone(peer, gone_control.channel, a)
        ctx.record(gone_a.gone, expected="A (declared auto-delete) deleted after its consumer was cancelled",
                   observed=gone_a.observed, what="A keeps auto-delete",
                   clauses=("amqp091:queue.declare.auto-delete/pre-existence",))
        probe = gone_a.channel
    still_b = lookup(peer, probe, b)
    ctx.record(still_b.exists, expected="B (declared without auto-delete) still exists after its consumer was "
               "cancelled", observed=still_b.observed, what="B keeps explicit delete",
               clauses=("amqp091:queue.declare.auto-delete/pre-existence",))


@case("amqp091/queue.declare.auto-delete/deleted-after-last-cancel",
      title="an auto-delete queue stays while a consumer remains and is deleted when the last one is cancelled",
      guideline=AUTO_DELETE_DOC)
def auto_delete_last_cancel(ctx: Context) -> None:
    """Declares an auto-delete queue with two consumers on two channels. Cancels the first: the
    queue must still exist (passive declare-ok). Cancels the last: the queue must be reported not
    found (404) within 3 seconds."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, auto_delete=True)
    ch2 = peer.open_channel()
    t1, t2 = consume(peer, ch, q), consume(peer, ch2, q)
    peer.call(ch, spec.BasicCancel(consumer_tag=t1))
    probe = peer.open_channel()
    found = lookup(peer, probe, q)
    ctx.record(found.exists, expected="the queue exists while a consumer remains", observed=found.observed,
               what="not deleted before the last consumer finished")
    peer.call(ch2, spec.BasicCancel(consumer_tag=t2))
    gone = wait_gone(peer, found.channel, q)
    ctx.record(gone.gone, expected=f"passive declare refused with 404 within {DELETION_WINDOW:g}s after the last "
               "basic.cancel-ok", observed=gone.observed, what="deleted after the last consumer was cancelled")


@case("amqp091/queue.declare.auto-delete/deleted-after-consumer-channel-close",
      title="an auto-delete queue is deleted when the channel of its last consumer closes",
      guideline=AUTO_DELETE_DOC)
def auto_delete_channel_close(ctx: Context) -> None:
    """Declares an auto-delete queue, consumes from it on channel 2 and closes channel 2 (close /
    close-ok). The last consumer is cancelled "because its channel is closed": the queue must be
    reported not found (404) within 3 seconds."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, auto_delete=True)
    ch2 = peer.open_channel()
    consume(peer, ch2, q)
    peer.call(ch2, spec.ChannelClose(200, "amqpspec done", 0, 0), "channel.close-ok")
    gone = wait_gone(peer, ch, q)
    ctx.record(gone.gone, expected=f"passive declare refused with 404 within {DELETION_WINDOW:g}s",
               observed=gone.observed)


@case("amqp091/queue.declare.auto-delete/kept-without-consumer",
      title="an auto-delete queue that never had a consumer is not deleted (basic.get is no consumer)",
      guideline=AUTO_DELETE_DOC)
def auto_delete_no_consumer(ctx: Context) -> None:
    """Declares an auto-delete queue, publishes one message to it and reads it with basic.get, then
    declares it passively: declare-ok passes (it never had a consumer; errata 5 reads basic.get as
    not being one, and the spec's consumers are those of basic.consume, 3.1.6)."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, auto_delete=True)
    publish(peer, ch, "", q, b"x")
    fence(peer, ch)
    get(peer, ch, q)
    obs = attempt(peer, ch, spec.QueueDeclare(queue=q, passive=True))
    ctx.check(obs, Replies("queue.declare-ok", channel=ch))


# ---------------------------------------------------------------------------------- declare-ok counts
@case("amqp091/queue.declare-ok/new-queue-counts",
      title="declare-ok of a new queue names it and reports 0 messages and 0 consumers",
      guideline=DECLARE_OK_DOC + " " + MESSAGE_COUNT_DOC)
def new_queue_counts(ctx: Context) -> None:
    """Declares a new named queue: declare-ok must carry its name, message-count 0 ("zero for
    newly-declared queues") and consumer-count 0."""
    peer, ch = with_channel(ctx)
    name = unique(ctx)
    ctx.will_delete("queue", name)
    reply = peer.call(ch, spec.QueueDeclare(queue=name, exclusive=True)).method
    got = (reply.queue, reply.message_count, reply.consumer_count)
    ctx.record(got == (name, 0, 0), expected=f"queue={name!r}, message-count=0, consumer-count=0",
               observed=f"queue={reply.queue!r}, message-count={reply.message_count}, "
                        f"consumer-count={reply.consumer_count}")


def counts(peer: Peer, ch: int, q: str, want: int, within: float = 1.0) -> Any:
    """Passive declare-ok of ``q``, retried for a short while until message-count is ``want``
    (publishing is asynchronous: the count may lag behind the fence on some brokers)."""
    until = time.monotonic() + within
    while True:
        reply = peer.call(ch, spec.QueueDeclare(queue=q, passive=True)).method
        if reply.message_count == want or time.monotonic() >= until:
            return reply
        time.sleep(POLL_PAUSE)


@case("amqp091/queue.declare-ok/message-count",
      title="declare-ok counts ready messages, not those awaiting acknowledgement",
      guideline=MESSAGE_COUNT_DOC)
def message_count(ctx: Context) -> None:
    """Publishes 3 messages to a queue: a passive declare-ok must report message-count 3. Then takes
    one with basic.get without no-ack (it now awaits acknowledgement): the count must be 2."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    for i in range(3):
        publish(peer, ch, "", q, b"m%d" % i)
    fence(peer, ch)
    first = counts(peer, ch, q, 3)
    ctx.record(first.message_count == 3, expected="message-count 3 after 3 messages",
               observed=f"message-count {first.message_count}", what="ready messages are counted")
    get(peer, ch, q, no_ack=False)
    second = counts(peer, ch, q, 2)
    ctx.record(second.message_count == 2, expected="message-count 2 with one of 3 messages awaiting acknowledgement",
               observed=f"message-count {second.message_count}", what="messages awaiting acknowledgement are not counted")


@case("amqp091/queue.declare-ok/consumer-count", title="declare-ok counts the queue's consumers, not a cancelled one",
      guideline=CONSUMER_COUNT_DOC)
def consumer_count(ctx: Context) -> None:
    """Starts three consumers on a queue (three channels) and cancels the third (cancel-ok), then
    declares the queue passively from a fourth channel: consumer-count must be 2, the consumers
    that exist. The field's other half, that a consumer whose channel is paused by channel.flow
    does not count, needs a pause the broker accepts: channel.flow/paused-holds-deliveries judges
    it, and is skipped where the pause is refused; here every consumer is active."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    ch2, ch3 = peer.open_channel(), peer.open_channel()
    tags = [(ch, consume(peer, ch, q)), (ch2, consume(peer, ch2, q))]
    cancel_all(peer, [(ch3, consume(peer, ch3, q))])
    reply = peer.call(peer.open_channel(), spec.QueueDeclare(queue=q, passive=True)).method
    ctx.record(reply.consumer_count == 2, expected="consumer-count 2 (two consumers, a third cancelled)",
               observed=f"consumer-count {reply.consumer_count}")
    cancel_all(peer, tags)


# ---------------------------------------------------------------------------------- 3.1.4
@case("amqp091/3.1.4/each-message-to-one-client",
      title="a message in a queue with two consumers on two connections is sent to one of them only",
      guideline=ONE_CLIENT_3_1_4)
def each_message_to_one_client(ctx: Context) -> None:
    """Two connections consume (no-ack) from one queue; 10 messages are published to it. Collects
    deliveries on both for up to 3 s (until 10 arrived): each message must reach exactly one client,
    none twice and none lost."""
    owner, ch = with_channel(ctx)
    q = declare_queue(ctx, owner, ch)
    other, och = with_channel(ctx)
    tags = [(ch, consume(owner, ch, q))]
    other_tag = consume(other, och, q)
    for i in range(10):
        publish(owner, ch, "", q, b"m%d" % i)
    got: list[bytes] = []
    until = time.monotonic() + 3.0
    while len(got) < 10 and time.monotonic() < until:
        for peer in (owner, other):
            got += bodies(receive(peer, 10, timeout=0.05))
    got += bodies(quiet(owner, 0.2)) + bodies(quiet(other, 0.05))
    want = sorted(b"m%d" % i for i in range(10))
    ctx.record(sorted(got) == want, expected="each of the 10 messages delivered once, to one of the two clients",
               observed=f"{len(got)} deliveries: {sorted(got)}")
    cancel_all(owner, tags)
    cancel_all(other, [(och, other_tag)])


# ---------------------------------------------------------------------------------- queue.purge
@case("amqp091/queue.purge/removes-ready-messages",
      title="queue.purge removes the queue's messages and reports how many",
      guideline=PURGE_DOC)
def purge_ready(ctx: Context) -> None:
    """Publishes 3 messages to a queue and purges it: purge-ok must report 3, and a basic.get after
    it must find the queue empty."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    for i in range(3):
        publish(peer, ch, "", q, b"p%d" % i)
    fence(peer, ch)
    counts(peer, ch, q, 3)
    reply = peer.call(ch, spec.QueuePurge(queue=q)).method
    left = drain(peer, ch, q)
    ctx.record(reply.message_count == 3 and not left, expected="purge-ok message-count 3, then basic.get-empty",
               observed=f"purge-ok message-count {reply.message_count}, then {len(left)} message(s) left")


@case("amqp091/queue.purge/keeps-unacknowledged",
      title="queue.purge does not remove a message delivered and not yet acknowledged",
      clauses=("amqp091:queue.purge/02",))
def purge_unacked(ctx: Context) -> None:
    """Publishes 2 messages, takes the first with basic.get without no-ack, purges the queue, then
    rejects the first with requeue: it must come back (basic.get within 2 s), since the purge MUST
    NOT have removed it. purge-ok should report 1 (the ready message only; a guideline)."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    publish(peer, ch, "", q, b"unacked")
    publish(peer, ch, "", q, b"ready")
    fence(peer, ch)
    counts(peer, ch, q, 2)
    held = get(peer, ch, q, no_ack=False)
    if held is None:
        raise UnexpectedReply("basic.get-ok", None)
    reply = peer.call(ch, spec.QueuePurge(queue=q)).method
    ctx.record(reply.message_count == 1, expected="purge-ok message-count 1 (the message awaiting acknowledgement "
               "is not purged)", observed=f"purge-ok message-count {reply.message_count}",
               what="purge-ok counts only the ready message", guideline=PURGE_DOC)
    peer.send(MethodFrame(ch, spec.BasicReject(delivery_tag=held.delivery_tag, requeue=True)))
    back: list[Message] = []
    until = time.monotonic() + 2.0
    while not back and time.monotonic() < until:
        back = drain(peer, ch, q)
        if not back:
            time.sleep(POLL_PAUSE)
    ctx.record(bodies(back) == [b"unacked"], expected="the unacknowledged message, requeued after the purge, "
               "comes back: [b'unacked']", observed=f"{bodies(back)}", what="the unacknowledged message survived",
               clauses=("amqp091:queue.purge/02",))


@case("amqp091/queue.purge/empty-name-is-last-declared",
      title="queue.purge with an empty name purges the queue last declared on the channel",
      guideline=QUEUE_NAME_DOC)
def purge_current_queue(ctx: Context) -> None:
    """Declares a queue, publishes 2 messages to it, and sends queue.purge with an empty queue name
    on the same channel: it refers to the last queue declared there, so purge-ok must report 2 and
    the queue must be empty afterwards."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    publish(peer, ch, "", q, b"a")
    publish(peer, ch, "", q, b"b")
    fence(peer, ch)
    counts(peer, ch, q, 2)
    obs = attempt(peer, ch, spec.QueuePurge(queue=""))
    reply = reply_of(obs, "queue.purge-ok", ch)
    if reply is None:
        ctx.check(obs, Replies("queue.purge-ok", channel=ch))
        return
    left = drain(peer, ch, q)
    ctx.record(reply.message_count == 2 and not left, expected="purge-ok message-count 2, then the queue empty",
               observed=f"purge-ok message-count {reply.message_count}, then {len(left)} message(s) left")


no_queue_name_case("queue.purge", lambda: spec.QueuePurge(queue=""), "amqp091:queue.purge.queue/queue-known")
missing_queue_case("queue.purge", lambda q: spec.QueuePurge(queue=q), "amqp091:queue.purge.queue/must-exist")


# ---------------------------------------------------------------------------------- queue.delete
no_queue_name_case("queue.delete", lambda: spec.QueueDelete(queue=""), "amqp091:queue.delete.queue/queue-known")
missing_queue_case("queue.delete", lambda q: spec.QueueDelete(queue=q), "amqp091:queue.delete.queue/must-exist")


@case("amqp091/queue.delete/reports-deleted-messages",
      title="queue.delete deletes the queue and delete-ok reports its messages",
      guideline=DELETE_DOC)
def delete_reports(ctx: Context) -> None:
    """Publishes 2 messages to a queue and deletes it: delete-ok must report 2, and a passive declare
    afterwards must be refused with 404."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", q, b"a")
    publish(peer, ch, "", q, b"b")
    fence(peer, ch)
    counts(peer, ch, q, 2)
    reply = peer.call(ch, spec.QueueDelete(queue=q)).method
    found = lookup(peer, ch, q)
    ctx.record(reply.message_count == 2 and found.gone,
               expected="delete-ok message-count 2, then passive declare refused with 404",
               observed=f"delete-ok message-count {reply.message_count}, then {found.observed}")


@case("amqp091/queue.delete.if-unused/in-use",
      title="queue.delete with if-unused of a queue with a consumer is refused (406) and the queue stays",
      clauses=("amqp091:queue.delete.if-unused/in-use",))
def delete_in_use(ctx: Context) -> None:
    """Declares a queue, consumes from it, and deletes it with if-unused set (the rule's scenario) on
    another channel. The rule's on-failure is precondition-failed: channel.close 406 passes. The
    queue MUST NOT be deleted: a passive declare afterwards must get declare-ok with one consumer."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    tag = consume(peer, ch, q)
    ch2 = peer.open_channel()
    obs = attempt(peer, ch2, spec.QueueDelete(queue=q, if_unused=True))
    ctx.check(obs, ChannelException(406, channel=ch2))
    found = lookup(peer, reopen(peer, obs, ch2), q)
    ctx.record(found.exists and found.ok.consumer_count == 1, expected="queue.declare-ok with consumer-count 1",
               observed=found.observed, what="the queue was not deleted")
    if found.exists:
        cancel_all(peer, [(ch, tag)])


@case("amqp091/queue.delete.if-empty/not-empty",
      title="queue.delete with if-empty of a queue holding a message is refused (406) and the queue stays",
      clauses=("amqp091:queue.delete.if-empty/not-empty",))
def delete_not_empty(ctx: Context) -> None:
    """Declares a queue, publishes a message to it, and deletes it with if-empty set on another
    channel (the rule's scenario). The rule's on-failure is precondition-failed: channel.close 406
    passes. The queue MUST NOT be deleted: the message must still be there (basic.get)."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch, exclusive=True)
    publish(peer, ch, "", q, b"keep")
    fence(peer, ch)
    counts(peer, ch, q, 1)
    ch2 = peer.open_channel()
    obs = attempt(peer, ch2, spec.QueueDelete(queue=q, if_empty=True))
    ctx.check(obs, ChannelException(406, channel=ch2))
    if obs.connection_close is not None:
        return
    reopen(peer, obs, ch2)
    found = lookup(peer, ch, q)
    left = drain(peer, found.channel, q) if found.exists else []
    ctx.record(bodies(left) == [b"keep"], expected="the queue and its message are still there: [b'keep']",
               observed=f"{bodies(left)}" if found.exists else found.observed, what="the queue was not deleted")


@case("amqp091/queue.delete.if-unused/conditions-met",
      title="queue.delete with if-unused and if-empty of an unused, empty queue deletes it",
      guideline=IF_UNUSED_DOC + " If set, the server will only delete the queue if it has no "
                                                    "messages. [if-empty]")
def delete_conditions_met(ctx: Context) -> None:
    """Declares a queue and deletes it at once with if-unused and if-empty set: it has no consumer
    and no message, so delete-ok passes, and a passive declare afterwards must be refused (404)."""
    peer, ch = with_channel(ctx)
    q = declare_queue(ctx, peer, ch)
    obs = attempt(peer, ch, spec.QueueDelete(queue=q, if_unused=True, if_empty=True))
    if ctx.check(obs, Replies("queue.delete-ok", channel=ch)):
        found = lookup(peer, ch, q)
        ctx.record(found.gone, expected="passive declare refused with 404", observed=found.observed,
                   what="the queue is gone")
