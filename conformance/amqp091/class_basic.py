"""The basic class of the 0-9-1 XML: class-level rules (priorities, acknowledgement models),
basic.qos prefetch windows, and basic.get.

The helpers that publish numbered messages, wait until a queue holds them and read deliveries
are in ``_content`` (shared with the other basic-class modules and sections 4.6 and 4.7); the
ones that watch one channel for an exception are in ``_replies``.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._basic_text import EXCHANGE_FIELD_DOC, REDELIVERED_DOC, ROUTING_KEY_DOC
from ._common import REACTION_WINDOW
from ._content import QUIET, Gathered, gather, get_all, get_message, publish_n, shown, start_consumer, wait_queued
from ._model import WAIT, bodies, close_channel, declare_queue, fence, publish
from ._replies import Answered, is_close, method_on


# ------------------------------------------------------------------------------------ guidelines
GET_EMPTY_DOC = "This method tells the client that the queue has no messages available for the client. [basic.get-empty]"
MESSAGE_COUNT_DOC = ("The number of messages in the queue, which will be zero for newly-declared queues. This is the "
                     "number of messages present in the queue, and committed if the channel on which they were "
                     "published is transacted, that are not waiting acknowledgement. [domain message-count]")
NO_ACK_DOC = ("If this field is set the server does not expect acknowledgements for messages. That is, when a "
              "message is delivered to the client the server assumes the delivery will succeed and immediately "
              "dequeues it. [domain no-ack]")
QOS_OK_DOC = ("This method tells the client that the requested QoS levels could be handled by the server. The "
              "requested QoS applies to all active consumers until a new QoS is defined. [basic.qos-ok]")
PREFETCH_NO_ACK_DOC = "The prefetch-count is ignored if the no-ack option is set. [basic.qos prefetch-count]"
QOS_GLOBAL_DOC = ("By default the QoS settings apply to the current channel only. If this field is set, they are "
                  "applied to the entire connection. [basic.qos global]")


# ------------------------------------------------------------------------------------ class-level rules
@case("amqp091/basic/no-ack-consumer", title="a consumer with no-ack set receives the queued messages, which leave the queue",
      clauses=("amqp091:basic/09",))
def no_ack_consumer(ctx: Context) -> None:
    """Publishes 3 messages to a queue, consumes with no-ack true: all 3 must be delivered
    (basic/09). Then closes the channel without acknowledging anything and reads the queue from
    another channel: it must be empty, since no-ack deliveries are dequeued at once (no-ack doc,
    no keyword: a warning)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    sent = publish_n(peer, ch, q, 3)
    wait_queued(peer, ch, q, 3)
    tag, got = start_consumer(peer, ch, q, no_ack=True)
    gather(peer, timeout=WAIT, count=3, into=got)
    ctx.record(sorted(bodies(got.deliveries(ch, tag))) == sent, expected=f"deliveries of {shown(sent)}",
               observed=got.describe(), what="the no-ack consumer receives every message")
    close_channel(peer, ch)
    other = peer.open_channel()
    left = get_all(peer, other, q)
    ctx.record(not left, expected="queue empty: the no-ack deliveries were dequeued",
               observed=f"basic.get found {shown(bodies(left))}" if left else "basic.get-empty",
               what="no-ack deliveries are not requeued when the channel closes", clauses=(),
               guideline=NO_ACK_DOC)


@case("amqp091/basic/explicit-ack-consumer",
      title="an explicit-ack consumer acks half; after reconnecting only the other half is delivered",
      clauses=("amqp091:basic/10",))
def explicit_ack_consumer(ctx: Context) -> None:
    """The rule's scenario: a shared queue, a consumer with no-ack false, 4 messages; acks the 1st
    and 3rd, disconnects, reconnects and consumes again. Passes when exactly the 2nd and 4th
    are delivered the second time."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    sent = publish_n(peer, ch, q, 4)
    wait_queued(peer, ch, q, 4)
    tag, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=WAIT, count=4, into=got)
    first = got.deliveries(ch, tag)
    if sorted(bodies(first)) != sent:
        ctx.record(False, expected=f"deliveries of {shown(sent)}", observed=got.describe(),
                   what="the explicit-ack consumer receives every message")
        return
    acked = [m for m in first if m.body in (sent[0], sent[2])]
    for m in acked:
        peer.send(MethodFrame(ch, spec.BasicAck(m.delivery_tag, False)))
    fence(peer, ch)  # the acks are processed before the disconnection (the rule is not about that race)
    peer.close()
    again = ctx.connect()
    ch2 = again.open_channel()
    tag2, got2 = start_consumer(again, ch2, q, no_ack=True)
    gather(again, timeout=WAIT, count=2, into=got2)
    gather(again, timeout=QUIET, into=got2)  # anything beyond the two expected
    second = sorted(bodies(got2.deliveries(ch2, tag2)))
    ctx.record(second == [sent[1], sent[3]], expected=f"only the unacknowledged {shown([sent[1], sent[3]])}",
               observed=f"delivered {shown(second)}", what="acknowledged messages are gone, the others delivered again")


PRIORITY = ("amqp091:basic/06",)


def _first_by_priority(ctx: Context, peer: Peer, ch: int, low: int, high: int) -> tuple[bool, str]:
    q = declare_queue(ctx, peer, ch)
    publish_n(peer, ch, q, 5, prefix=f"p{low}-", properties=lambda i: spec.BasicProperties(priority=low))
    publish(peer, ch, "", q, f"p{high}".encode(), properties=spec.BasicProperties(priority=high))
    wait_queued(peer, ch, q, 6)
    first = get_message(peer, ch, q)
    got = first.body.decode("latin-1") if first else "get-empty"
    return first is not None and first.body == f"p{high}".encode(), f"first message got: {got}"


@case("amqp091/basic/two-priority-levels", title="a priority 9 (and a priority 5) message overtakes queued priority 0 (and 4) messages",
      clauses=PRIORITY)
def two_priority_levels(ctx: Context) -> None:
    """The rule's scenario: 5 messages of priority 0, then one of priority 9, to a plain queue; the
    first basic.get must return the priority 9 one. Then the same with 4 and 5, the edges of the
    two levels 0-4 and 5-9 the rule requires. (The spec has no queue argument for priorities, so
    the queue is declared without any.)"""
    peer = ctx.connect()
    ch = peer.open_channel()
    for low, high in ((0, 9), (4, 5)):
        ok, observed = _first_by_priority(ctx, peer, ch, low, high)
        ctx.record(ok, expected=f"the priority {high} message first", observed=observed,
                   what=f"priority {high} is delivered ahead of priority {low}")


@case("amqp091/basic/ten-priority-levels", title="ten messages of priorities 0..9 sent low to high come out high to low (MAY)",
      clauses=("amqp091:basic/07",))
def ten_priority_levels(ctx: Context) -> None:
    """The rule's scenario: ten messages in low-to-high priority, read back with basic.get; reports
    how many levels emerge. Informational: the server MAY implement up to 10 levels."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish_n(peer, ch, q, 10, prefix="p", properties=lambda i: spec.BasicProperties(priority=i))
    wait_queued(peer, ch, q, 10)
    order = [int(m.body[1:]) for m in get_all(peer, ch, q)]
    # a level boundary is wherever a later-published (higher priority) message came out first
    levels = 1 + sum(1 for a, b in zip(order, order[1:]) if b < a)
    ctx.note(f"priorities in delivery order: {order}; {levels} distinct level(s) emerge")
    ctx.record(order == list(range(9, -1, -1)), expected="priorities 9, 8, ..., 0 (ten levels)",
               observed=f"{order} ({levels} level(s))", what="ten priority levels")


@case("amqp091/basic/same-priority-order-persistence",
      title="messages of one priority with mixed persistence are delivered in publishing order",
      clauses=("amqp091:basic/08", "amqp091:4.7/1"))
def same_priority_order(ctx: Context) -> None:
    """The rule's scenario: 20 messages of priority 5 alternating delivery-mode 1 and 2 (and a
    random mix), to one queue; read back with basic.get they must come in publishing order."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    modes = [1 + (i % 2) if i < 10 else ctx.rng.choice((1, 2)) for i in range(20)]
    sent = publish_n(peer, ch, q, 20, properties=lambda i: spec.BasicProperties(priority=5, delivery_mode=modes[i]))
    wait_queued(peer, ch, q, 20)
    got = bodies(get_all(peer, ch, q))
    ctx.record(got == sent, expected=f"{shown(sent)} in that order (delivery modes {modes})", observed=shown(got))


# ------------------------------------------------------------------------------------ basic.qos
def qos(peer: Peer, ch: int, size: int = 0, count: int = 0, global_: bool = False,
        window: float = REACTION_WINDOW) -> Observation:
    """Sends basic.qos and observes the answer: qos-ok, or a close."""
    peer.send(MethodFrame(ch, spec.BasicQos(size, count, global_)))
    return peer.observe(window, stop=lambda item: method_on(ch, "basic.qos-ok")(item) or is_close(item, ch))


def qos_ok(obs: Observation, ch: int) -> bool:
    return bool(obs.methods("basic.qos-ok", ch)) and obs.channel_close(ch) is None and obs.connection_close is None


@case("amqp091/basic.qos/qos-ok", title="basic.qos with a prefetch count is answered with basic.qos-ok",
      guideline=QOS_OK_DOC)
def qos_answered(ctx: Context) -> None:
    """Sends basic.qos(prefetch-size 0, prefetch-count 10, global false), then the same with global
    true. Each must be answered with qos-ok (the server MUST implement basic.qos, chassis)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    for global_ in (False, True):
        obs = qos(peer, ch, 0, 10, global_)
        ctx.check(obs, Answered("basic.qos-ok", ch), what=f"qos-ok for prefetch-count 10, global {global_}")
        if not qos_ok(obs, ch):
            return


def _unacked_window(ctx: Context, peer: Peer, chans: list[int], queues: list[str], per_queue: int) -> Gathered:
    """Fills each queue with ``per_queue`` messages, starts an explicit-ack consumer on each
    (queue i on channel chans[i]), and gathers what is delivered until things go quiet."""
    pub = peer.open_channel()
    for q in queues:
        publish_n(peer, pub, q, per_queue)
        wait_queued(peer, pub, q, per_queue)
    got = Gathered()
    for ch, q in zip(chans, queues):
        start_consumer(peer, ch, q, got, no_ack=False)
    gather(peer, timeout=QUIET, into=got)
    return got


@case("amqp091/basic.qos/prefetch-count-limits-deliveries",
      title="with prefetch-count 2 no more than 2 unacknowledged messages are sent",
      clauses=("amqp091:basic.qos.prefetch-count/01",))
def prefetch_count_limits(ctx: Context) -> None:
    """basic.qos(prefetch-count 2) on a channel, 6 queued messages, one explicit-ack consumer:
    at most 2 deliveries may arrive while none is acknowledged. Then acks one, after which at most
    one more may arrive. A consumer that receives nothing at all fails basic/10."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    obs = qos(peer, ch, 0, 2)
    if not qos_ok(obs, ch):
        ctx.check(obs, Answered("basic.qos-ok", ch), what="basic.qos(prefetch-count 2) is accepted")
        return
    got = _unacked_window(ctx, peer, [ch], [q], 6)
    first = got.deliveries(ch)
    if not first:
        ctx.record(False, expected="at least one delivery", observed="nothing delivered",
                   what="the explicit-ack consumer receives messages", clauses=("amqp091:basic/10",))
        return
    ctx.record(len(first) <= 2, expected="at most 2 deliveries before any ack", observed=got.describe(),
               what="no more than prefetch-count unacknowledged messages")
    peer.send(MethodFrame(ch, spec.BasicAck(first[0].delivery_tag, False)))
    _, more = gather(peer, timeout=QUIET)
    ctx.record(len(more.deliveries(ch)) <= 1, expected="at most 1 more delivery after one ack",
               observed=more.describe(), what="after one ack the window admits one more message")


@case("amqp091/basic.qos/prefetch-count-ignored-with-no-ack",
      title="prefetch-count 1 does not hold back deliveries to a no-ack consumer",
      guideline=PREFETCH_NO_ACK_DOC)
def prefetch_ignored_no_ack(ctx: Context) -> None:
    """basic.qos(prefetch-count 1), 4 queued messages, a consumer with no-ack true: all 4 must be
    delivered, since the prefetch-count is ignored with no-ack (doc text, no keyword: a warning)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    obs = qos(peer, ch, 0, 1)
    if not qos_ok(obs, ch):
        ctx.check(obs, Answered("basic.qos-ok", ch), what="basic.qos(prefetch-count 1) is accepted")
        return
    sent = publish_n(peer, ch, q, 4)
    wait_queued(peer, ch, q, 4)
    tag, got = start_consumer(peer, ch, q, no_ack=True)
    gather(peer, timeout=WAIT, count=4, into=got)
    ctx.record(len(got.deliveries(ch, tag)) == 4, expected=f"all of {shown(sent)} delivered", observed=got.describe())


@case("amqp091/basic.qos/prefetch-size-single-message",
      title="a single message larger than prefetch-size is still delivered",
      clauses=("amqp091:basic.qos.prefetch-size/01",))
def prefetch_size_single(ctx: Context) -> None:
    """The rule's scenario: basic.qos(prefetch-size 10), then one message of 100 octets to an
    explicit-ack consumer. The message must arrive intact: prefetch-size limits only sending in
    advance. The rule says how a server applies a prefetch-size it accepted; a broker that refuses
    the qos (e.g. 540 not-implemented) applies none, so it does not misapply one: the case is then
    skipped ("precondition refused"), like prefetch-size-window."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    obs = qos(peer, ch, 10, 0)
    if not qos_ok(obs, ch):
        ctx.skip(f"precondition refused: the broker refused basic.qos with a prefetch-size: {obs.describe()}")
    payload = ctx.rng.randbytes(100)
    publish(peer, ch, "", q, payload)
    wait_queued(peer, ch, q, 1)
    tag, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=WAIT, count=1, into=got)
    ok = [m.body for m in got.deliveries(ch, tag)] == [payload]
    ctx.record(ok, expected="the 100-octet message, intact", observed=got.describe())


@case("amqp091/basic.qos/prefetch-size-window",
      title="with prefetch-size 10 and prefetch-count 5, messages of 100 octets arrive one at a time",
      clauses=("amqp091:basic.qos.prefetch-count/01",))
def prefetch_size_window(ctx: Context) -> None:
    """The rule's scenario: basic.qos(prefetch-size 10, prefetch-count 5), 3 queued messages of
    100 octets each, an explicit-ack consumer: no more than one may arrive while it is unacknowledged
    (a second would exceed the size window). Skipped when the broker refuses the qos (that is the
    prefetch-size-single-message case)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    obs = qos(peer, ch, 10, 5)
    if not qos_ok(obs, ch):
        ctx.skip(f"the broker refused basic.qos with a prefetch-size: {obs.describe()}")
    pub = peer.open_channel()
    for _ in range(3):
        publish(peer, pub, "", q, ctx.rng.randbytes(100))
    wait_queued(peer, pub, q, 3)
    _, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=QUIET, into=got)
    if not got.deliveries(ch):
        ctx.note("nothing was delivered at all (see amqp091/basic.qos/prefetch-size-single-message)")
    ctx.record(len(got.deliveries(ch)) <= 1, expected="at most one delivery while it is unacknowledged",
               observed=got.describe())


@case("amqp091/basic.qos/channel-wide-prefetch",
      title="prefetch-count 1 (global false) limits two consumers of one channel to 1 unacknowledged message in all",
      clauses=("amqp091:basic.qos.prefetch-count/01",))
def channel_wide_prefetch(ctx: Context) -> None:
    """basic.qos(prefetch-count 1, global false) applies "to the current channel" (global field doc):
    two explicit-ack consumers on that channel, each on its own queue of 2 messages, may together
    hold at most 1 unacknowledged message, since the server MUST NOT send more than the window."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queues = [declare_queue(ctx, peer, ch), declare_queue(ctx, peer, ch)]
    obs = qos(peer, ch, 0, 1, False)
    if not qos_ok(obs, ch):
        ctx.check(obs, Answered("basic.qos-ok", ch), what="basic.qos(prefetch-count 1) is accepted")
        return
    ctx.note(QOS_GLOBAL_DOC)
    got = _unacked_window(ctx, peer, [ch, ch], queues, 2)
    ctx.record(len(got.deliveries(ch)) <= 1, expected="at most 1 delivery on the channel before any ack",
               observed=got.describe())


@case("amqp091/basic.qos/global-prefetch",
      title="prefetch-count 1 with global true limits consumers on two channels to 1 unacknowledged message in all",
      clauses=("amqp091:basic.qos.prefetch-count/01",))
def global_prefetch(ctx: Context) -> None:
    """basic.qos(prefetch-count 1, global true) on channel 1 applies "to the entire connection"
    (global field doc): explicit-ack consumers on channels 1 and 2, each on its own queue of 2
    messages, may together hold at most 1 unacknowledged message."""
    peer = ctx.connect()
    a = peer.open_channel()
    b = peer.open_channel()
    queues = [declare_queue(ctx, peer, a), declare_queue(ctx, peer, a)]
    obs = qos(peer, a, 0, 1, True)
    if not qos_ok(obs, a):
        ctx.check(obs, Answered("basic.qos-ok", a), what="basic.qos(prefetch-count 1, global) is accepted")
        return
    ctx.note(QOS_GLOBAL_DOC)
    got = _unacked_window(ctx, peer, [a, b], queues, 2)
    ctx.record(len(got.deliveries()) <= 1, expected="at most 1 delivery on the connection before any ack",
               observed=got.describe())


# ------------------------------------------------------------------------------------ basic.get
@case("amqp091/basic.get/get-ok-fields",
      title="basic.get-ok carries a non-zero delivery tag, the exchange, routing key and remaining count",
      clauses=("amqp091:domain.delivery-tag/non-zero",))
def get_ok_fields(ctx: Context) -> None:
    """Binds a queue to amq.direct with key k, publishes 3 messages there, basic.get (no-ack false)
    once. The delivery tag must not be 0 (domain rule); exchange "amq.direct", routing key k,
    redelivered false and message-count 2 are what the field docs say (warnings)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    key = ctx.name("k")
    peer.call(ch, spec.QueueBind(queue=q, exchange="amq.direct", routing_key=key))
    publish_n(peer, ch, key, 3, exchange="amq.direct")
    wait_queued(peer, ch, q, 3)
    msg = get_message(peer, ch, q, no_ack=False)
    if msg is None:
        ctx.record(False, expected="basic.get-ok", observed="basic.get-empty", what="the queued message is returned")
        return
    m = msg.method
    ctx.record(m.delivery_tag != 0, expected="delivery-tag not 0", observed=f"delivery-tag {m.delivery_tag}",
               what="the delivery tag is not zero")
    ctx.record((m.exchange, m.routing_key) == ("amq.direct", key), expected=f"exchange 'amq.direct', routing-key {key!r}",
               observed=f"exchange {m.exchange!r}, routing-key {m.routing_key!r}",
               what="exchange and routing key are those of the publish", clauses=(), guideline=EXCHANGE_FIELD_DOC + " " + ROUTING_KEY_DOC)
    ctx.record(not m.redelivered, expected="redelivered false (first delivery)", observed=f"redelivered {m.redelivered}",
               what="a first delivery is not flagged redelivered", clauses=(), guideline=REDELIVERED_DOC)
    ctx.record(m.message_count == 2, expected="message-count 2", observed=f"message-count {m.message_count}",
               what="message-count counts the messages left", clauses=(), guideline=MESSAGE_COUNT_DOC)


@case("amqp091/basic.get/get-empty", title="basic.get on an empty queue is answered with basic.get-empty",
      guideline=GET_EMPTY_DOC)
def get_empty(ctx: Context) -> None:
    """basic.get on a newly declared queue: the answer must be get-empty, and the channel stays open."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    peer.send(MethodFrame(ch, spec.BasicGet(queue=q, no_ack=True)))
    obs = peer.observe(REACTION_WINDOW, stop=lambda i: method_on(ch, "basic.get-ok", "basic.get-empty")(i) or is_close(i))
    ctx.check(obs, Answered("basic.get-empty", ch))
