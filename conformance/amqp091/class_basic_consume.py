"""basic.consume, basic.deliver and basic.cancel: consumer tags, exclusive and no-local
consumers, what a delivery carries, and cancelling.

Consumer tags are local to a channel (basic.consume consumer-tag doc): reusing a tag of the
same channel, or using one created on another channel, is not-allowed (530, a hard error, so
a connection exception). An exclusive consumer cannot be started on a queue that has consumers
(access-refused 403, a channel exception).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ChannelException, ConnectionException, StaysOpen
from amqpspec.wire.amqp091 import FRAME_OVERHEAD, BodyFrame, HeaderFrame, MethodFrame, spec

from ._basic_text import EXCHANGE_FIELD_DOC, REDELIVERED_DOC, ROUTING_KEY_DOC
from ._common import REACTION_WINDOW
from ._content import QUIET, gather, gather_until, next_item, publish_n, queue_count, shown, start_consumer, wait_queued
from ._model import WAIT, bodies, close_channel, declare_queue, publish
from ._raw_content import VALID_TYPES, Message as RawMessage, all_properties, compare_properties
from ._replies import Answered, is_close, method_on, react

GENERATED_TAG_DOC = ("Specifies the identifier for the consumer. The consumer tag is local to a channel, so two "
                     "clients can use the same consumer tags. If this field is empty the server will generate a "
                     "unique tag. [basic.consume consumer-tag]")
CONSUME_OK_DOC = ("Holds the consumer tag specified by the client or provided by the server. "
                  "[basic.consume-ok consumer-tag]")
EXCLUSIVE_DOC = ("Request exclusive consumer access, meaning only this consumer can access the queue. "
                 "[basic.consume exclusive]")
NO_LOCAL_DOC = ("If the no-local field is set the server will not send messages to the connection that published "
                "them. [domain no-local]")
CONSUMER_TAG_DOC = "Identifier for the consumer, valid within the current channel. [domain consumer-tag]"
CANCEL_DOC = ("This method cancels a consumer. This does not affect already delivered messages, but it does mean "
              "the server will not send any more messages for that consumer. [basic.cancel]; This method confirms "
              "that the cancellation was completed. [basic.cancel-ok]")
NOT_ALLOWED = 530


def consume_reaction(peer: Peer, ch: int, **fields: object) -> Observation:
    """Sends basic.consume and observes: consume-ok, a close, or nothing."""
    peer.send(MethodFrame(ch, spec.BasicConsume(**fields)))
    return peer.observe(REACTION_WINDOW, stop=lambda i: method_on(ch, "basic.consume-ok")(i) or is_close(i))


# ------------------------------------------------------------------------------------ consumer tags
@case("amqp091/basic.consume/server-generated-tag",
      title="an empty consumer tag gets a non-empty server-generated tag, a different one each time",
      guideline=GENERATED_TAG_DOC)
def server_generated_tag(ctx: Context) -> None:
    """Starts two consumers with an empty consumer-tag on one channel and queue: each consume-ok
    must carry a non-empty tag, and the two must differ ("a unique tag"; doc text, a warning)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    first, _ = start_consumer(peer, ch, q)
    second, _ = start_consumer(peer, ch, q)
    ctx.record(bool(first) and bool(second) and first != second, expected="two non-empty, different tags",
               observed=f"{first!r} and {second!r}")


@case("amqp091/basic.consume/client-tag-echoed", title="consume-ok carries the consumer tag the client chose",
      guideline=CONSUME_OK_DOC)
def client_tag_echoed(ctx: Context) -> None:
    """Starts a consumer with the tag "amqpspec-ctag-<random>": consume-ok must hold that tag."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    wanted = "amqpspec-ctag-" + ctx.rng.randbytes(4).hex()
    got, _ = start_consumer(peer, ch, q, tag=wanted)
    ctx.record(got == wanted, expected=f"consumer-tag {wanted!r}", observed=f"consumer-tag {got!r}")


@case("amqp091/basic.consume/duplicate-tag",
      title="a second consumer with a tag already in use on the channel is connection exception 530",
      clauses=("amqp091:basic.consume.consumer-tag/01",))
def duplicate_tag(ctx: Context) -> None:
    """The rule's scenario: two consumers with the same non-empty tag on the same channel (the
    second on another queue). On-failure not-allowed, a hard error: connection.close 530."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q1, q2 = declare_queue(ctx, peer, ch), declare_queue(ctx, peer, ch)
    tag = "amqpspec-dup-" + ctx.rng.randbytes(4).hex()
    start_consumer(peer, ch, q1, tag=tag)
    obs = consume_reaction(peer, ch, queue=q2, consumer_tag=tag)
    ctx.check(obs, ConnectionException(NOT_ALLOWED))


@case("amqp091/basic.consume/same-tag-other-channel",
      title="the same consumer tag can be used on two channels",
      guideline=GENERATED_TAG_DOC)
def same_tag_other_channel(ctx: Context) -> None:
    """Starts a consumer with tag T on channel 1 and another with the same tag T on channel 2
    (same queue): consumer tags are local to a channel, so both get consume-ok."""
    peer = ctx.connect()
    a, b = peer.open_channel(), peer.open_channel()
    q = declare_queue(ctx, peer, a)
    tag = "amqpspec-same-" + ctx.rng.randbytes(4).hex()
    start_consumer(peer, a, q, tag=tag)
    obs = consume_reaction(peer, b, queue=q, consumer_tag=tag)
    ctx.check(obs, Answered("basic.consume-ok", b))


@case("amqp091/basic.consume/tag-from-other-channel",
      title="cancelling on channel 2 a consumer tag generated on channel 1 is connection exception 530",
      clauses=("amqp091:basic.consume.consumer-tag/02",))
def tag_from_other_channel(ctx: Context) -> None:
    """The rule's scenario: a consumer with a server-generated tag A on channel 1, another with a
    server-generated tag B on channel 2; then basic.cancel(A) on channel 2. What the scenario says it
    tests is the server's part, that generated tags are unique: A must differ from B (MUST). The
    rule's MUST NOT binds the client; its on-failure (not-allowed, connection.close 530) names the
    code for a server that detects the misuse, but no sentence makes the server detect it (a cancel
    of a tag unknown on channel 2 may be answered cancel-ok), so that reaction weighs MAY."""
    peer = ctx.connect()
    a, b = peer.open_channel(), peer.open_channel()
    q = declare_queue(ctx, peer, a)
    tag_a, _ = start_consumer(peer, a, q)
    tag_b, _ = start_consumer(peer, b, q)
    if not ctx.record(tag_a != tag_b, expected="different generated tags on the two channels",
                      observed=f"{tag_a!r} on channel {a}, {tag_b!r} on channel {b}",
                      what="server-generated tags are unique"):
        return
    peer.send(MethodFrame(b, spec.BasicCancel(consumer_tag=tag_a)))
    obs = peer.observe(REACTION_WINDOW, stop=lambda i: method_on(b, "basic.cancel-ok")(i) or is_close(i))
    ctx.check(obs, ConnectionException(NOT_ALLOWED), what="a consumer tag of another channel is not-allowed",
              clauses=("amqp091:basic.consume.consumer-tag/02",), level=Level.MAY,
              guideline="I.e. a client MUST NOT create a consumer in one channel and then use it in another. "
                        "[basic.consume consumer-tag rule 02, a rule on the client; its on-failure is not-allowed]")


@case("amqp091/basic.consume/sixteen-consumers", title="a queue accepts 16 consumers",
      clauses=("amqp091:basic.consume/01",))
def sixteen_consumers(ctx: Context) -> None:
    """Starts 16 consumers on one queue, 8 on each of two channels: every one must get consume-ok."""
    peer = ctx.connect()
    chans = [peer.open_channel(), peer.open_channel()]
    q = declare_queue(ctx, peer, chans[0])
    for i in range(16):
        ch = chans[i % 2]
        obs = consume_reaction(peer, ch, queue=q, consumer_tag=f"amqpspec-{i}")
        if not obs.methods("basic.consume-ok", ch) or obs.connection_close or obs.channel_close():
            ctx.check(obs, Answered("basic.consume-ok", ch), what=f"consumer {i + 1} of 16 is accepted")
            return
    ctx.record(True, expected="16 consume-ok", observed="16 consume-ok")


# ------------------------------------------------------------------------------------ exclusive, no-local
@case("amqp091/basic.consume/exclusive-on-queue-with-consumers",
      title="an exclusive consumer on a queue that has a consumer is refused with 403 (channel)",
      clauses=("amqp091:basic.consume.exclusive/01",))
def exclusive_on_busy_queue(ctx: Context) -> None:
    """The rule's scenario: connection 1 declares a shared queue and consumes from it; connection 2
    asks to consume from it with exclusive set. On-failure access-refused, a soft error:
    channel.close 403 on connection 2's channel. (The rule says "MAY NOT": informational.)"""
    one = ctx.connect()
    ch1 = one.open_channel()
    q = declare_queue(ctx, one, ch1)
    start_consumer(one, ch1, q)
    two = ctx.connect()
    ch2 = two.open_channel()
    obs = consume_reaction(two, ch2, queue=q, exclusive=True)
    ctx.check(obs, ChannelException(403, channel=ch2))


@case("amqp091/basic.consume/exclusive-consumer-keeps-others-out",
      title="while an exclusive consumer is active, another consumer on the queue is refused",
      guideline=EXCLUSIVE_DOC)
def exclusive_keeps_others_out(ctx: Context) -> None:
    """Connection 1 starts an exclusive consumer on a shared queue; connection 2 starts an ordinary
    consumer on it. Only the exclusive consumer can access the queue, so the second must be refused:
    any channel exception (the doc names no code; a warning, no keyword)."""
    one = ctx.connect()
    ch1 = one.open_channel()
    q = declare_queue(ctx, one, ch1)
    start_consumer(one, ch1, q, exclusive=True)
    two = ctx.connect()
    ch2 = two.open_channel()
    obs = consume_reaction(two, ch2, queue=q)
    ctx.check(obs, ChannelException(channel=ch2))


@case("amqp091/basic.consume/no-local", title="a no-local consumer gets messages of other connections, not its own",
      guideline=NO_LOCAL_DOC)
def no_local(ctx: Context) -> None:
    """Connection 1 starts a no-local, no-ack consumer, then publishes M1 to the queue on another of
    its channels (a passive declare there makes sure the queue has handled it); connection 2 then
    publishes M2. Passes when the consumer receives M2 and not M1."""
    one = ctx.connect()
    ch = one.open_channel()
    pub = one.open_channel()
    q = declare_queue(ctx, one, ch)
    tag, got = start_consumer(one, ch, q, no_local=True)
    publish(one, pub, "", q, b"M1 from the consumer's connection")
    queue_count(one, pub, q, into=got)
    two = ctx.connect()
    ch2 = two.open_channel()
    publish(two, ch2, "", q, b"M2 from another connection")
    gather_until(one, got, lambda g: any(m.body.startswith(b"M2") for m in g.messages))
    gather(one, timeout=QUIET, into=got)
    seen = bodies(got.deliveries(ch, tag))
    ctx.record(seen == [b"M2 from another connection"], expected="only M2 delivered", observed=shown(seen))


# ------------------------------------------------------------------------------------ basic.deliver
@case("amqp091/basic.deliver/fields",
      title="basic.deliver carries a non-zero delivery tag, the consumer tag, exchange and routing key",
      clauses=("amqp091:domain.delivery-tag/non-zero",))
def deliver_fields(ctx: Context) -> None:
    """Binds a queue to amq.direct with key k, starts a consumer with a chosen tag, publishes 3
    messages to amq.direct with key k. No delivery tag may be 0 (domain rule); consumer-tag,
    exchange, routing key, and redelivered false are what the field docs say (warnings)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    key = ctx.name("k")
    peer.call(ch, spec.QueueBind(queue=q, exchange="amq.direct", routing_key=key))
    tag = "amqpspec-deliver-" + ctx.rng.randbytes(4).hex()
    start_consumer(peer, ch, q, tag=tag, no_ack=False)
    publish_n(peer, ch, key, 3, exchange="amq.direct")
    _, got = gather(peer, timeout=WAIT, count=3)
    msgs = got.deliveries(ch)
    if len(msgs) < 3:
        ctx.record(False, expected="3 deliveries", observed=got.describe(), what="the messages are delivered",
                   clauses=("amqp091:basic/10",))
        return
    tags = [m.delivery_tag for m in msgs]
    ctx.record(0 not in tags, expected="no delivery tag 0", observed=f"delivery tags {tags}",
               what="delivery tags are not zero")
    ctx.record(all(m.method.consumer_tag == tag for m in msgs), expected=f"consumer-tag {tag!r}",
               observed=f"consumer tags {[m.method.consumer_tag for m in msgs]}", what="the consumer tag is the consumer's",
               clauses=(), guideline=CONSUMER_TAG_DOC)
    pairs = {(m.method.exchange, m.routing_key) for m in msgs}
    ctx.record(pairs == {("amq.direct", key)}, expected=f"exchange 'amq.direct', routing-key {key!r}",
               observed=f"{sorted(pairs)}", what="exchange and routing key are those of the publish", clauses=(),
               guideline=EXCHANGE_FIELD_DOC + " " + ROUTING_KEY_DOC)
    ctx.record(not any(m.redelivered for m in msgs), expected="redelivered false on first deliveries",
               observed=f"redelivered {[m.redelivered for m in msgs]}", what="first deliveries are not flagged redelivered",
               clauses=(), guideline=REDELIVERED_DOC)


@case("amqp091/basic.deliver/content-unmodified",
      title="a delivered message keeps all 14 properties and a body spanning several frames unmodified",
      clauses=("amqp091:3.1.1/1", "amqp091:3.1.1/2", "amqp091:4.2.6.2/1"))
def deliver_content_unmodified(ctx: Context) -> None:
    """Negotiates frame-max 4096, publishes a message with every basic property set (as in
    4.2.6.1/all-properties-unmodified, which reads it back with basic.get) and a random body of
    10000 octets in frames of 4088, and receives it through a consumer (basic.deliver). Passes
    when every property and header entry sent is present and unchanged (the broker MAY add
    others) and the body is byte-identical, however the broker splits it. Refusing the valid
    header is a warning, as in the basic.get case (no keyword covers it)."""
    peer = ctx.connect(frame_max=4096)
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    props, headers = all_properties(ctx)
    payload = ctx.rng.randbytes(10000)
    step = peer.negotiated.frame_max - FRAME_OVERHEAD
    peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=q)),
              HeaderFrame(ch, 60, len(payload), props),
              *[BodyFrame(ch, payload[i:i + step]) for i in range(0, len(payload), step)])
    accepted = react(peer, ch)
    if not StaysOpen().accepts(accepted):
        ctx.check(accepted, StaysOpen(), what="the message with all properties is accepted", clauses=(),
                  guideline=VALID_TYPES)
        return
    start_consumer(peer, ch, q, tag="amqpspec-content")
    deliver = None
    while deliver is None:
        item = next_item(peer, WAIT)
        if item is None or is_close(item) or not hasattr(item, "channel"):
            ctx.record(False, expected="basic.deliver of the message", observed=f"{item!r}",
                       what="the message is delivered", clauses=("amqp091:basic/09",))
            return
        if isinstance(item, MethodFrame) and item.method.NAME == "basic.deliver":
            deliver = item
    header = next_item(peer, WAIT)
    if not isinstance(header, HeaderFrame):
        ctx.record(False, expected="a content header", observed=f"{header!r}", what="the content follows the deliver")
        return
    raw = peer.reader.last_raw[7:-1]
    data, frames = b"", 0
    while len(data) < header.body_size:
        part = next_item(peer, WAIT)
        if not isinstance(part, BodyFrame):
            break
        data += part.data
        frames += 1
    got = RawMessage(deliver, header, raw, data, frames)
    diffs = compare_properties(props, got, headers)
    ctx.record(not diffs, expected="every property and header entry sent, unchanged",
               observed="; ".join(diffs) if diffs else "all present and unchanged",
               what="content header information is not removed or modified", clauses=("amqp091:3.1.1/2",))
    ctx.record(data == payload and header.body_size == len(payload),
               expected=f"body-size {len(payload)}, byte-identical body",
               observed=f"body-size {header.body_size}, {len(data)} octets in {frames} frame(s), "
                        f"{'identical' if data == payload else 'different'}",
               what="the body is delivered unmodified", clauses=("amqp091:3.1.1/1", "amqp091:4.2.6.2/1"))


EMPTY_BODY_DOC = ("The body size is a 64-bit value that defines the total size of the content body, that is, the "
                  "sum of the body sizes for the following content body frames. Zero indicates that there are no "
                  "content body frames. [4.2.6.1]")


@case("amqp091/basic.deliver/empty-body",
      title="a message with an empty body is delivered with body-size 0 and no body frame",
      clauses=("amqp091:3.1.1/1",))
def deliver_empty_body(ctx: Context) -> None:
    """Publishes a content with body-size 0 and no body frame (4.2.6.2/empty-body reads one back with
    basic.get; this one goes through a consumer). The delivery must carry body-size 0 (the body
    is not modified); that no body frame follows is what "Zero indicates that there are no content
    body frames" says (a warning): a probe on the channel ends the frames looked at. A broker
    that waits for a body frame and never delivers the message gets a warning too, as in the
    basic.get case."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=q)), HeaderFrame(ch, 60, 0))
    wait_queued(peer, ch, q, 1)
    tag = "amqpspec-empty"
    peer.send(MethodFrame(ch, spec.BasicConsume(queue=q, consumer_tag=tag, no_ack=True)))
    _, before = gather(peer, lambda i: isinstance(i, MethodFrame) and i.channel == ch
                       and i.method.NAME == "basic.deliver", WAIT)
    if not before.items or not method_on(ch, "basic.deliver")(before.items[-1]):
        ctx.record(False, expected="basic.deliver", observed=before.describe(), what="the message is delivered",
                   clauses=(), guideline=EMPTY_BODY_DOC)
        return
    obs = react(peer, ch)
    frames = [f for f in obs.received if getattr(f, "channel", None) == ch]
    header = next((f for f in frames if isinstance(f, HeaderFrame)), None)
    ctx.record(header is not None and header.body_size == 0, expected="a content header with body-size 0",
               observed=obs.describe(), what="the empty body is delivered empty")
    ctx.record(not any(isinstance(f, BodyFrame) for f in frames), expected="no content body frame",
               observed=obs.describe(), what="no body frame follows a body-size of 0", clauses=(),
               guideline=EMPTY_BODY_DOC)


REDELIVERY_ROUNDS = 20


@case("amqp091/basic.deliver/redelivery-limit",
      title=f"a message redelivered again and again without ack stops being delivered (within {REDELIVERY_ROUNDS} rounds)",
      clauses=("amqp091:basic.deliver/01",), timeout=30.0)
def redelivery_limit(ctx: Context) -> None:
    """Publishes one message; then up to 20 times opens a channel, consumes it with no-ack false
    and closes the channel without acknowledging (4.5: unacknowledged messages are marked for
    redelivery). The server SHOULD count the deliveries and, after a certain number (e.g. 5),
    treat it as unprocessable and move it to a dead letter queue: passes when a round receives
    nothing."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", q, b"poison")
    wait_queued(peer, ch, q, 1)
    close_channel(peer, ch)
    rounds = 0
    for rounds in range(1, REDELIVERY_ROUNDS + 1):
        c = peer.open_channel()
        tag, got = start_consumer(peer, c, q, no_ack=False)
        gather(peer, timeout=WAIT if rounds == 1 else 1.0, count=1, into=got)
        close_channel(peer, c)
        if not got.deliveries(c, tag):
            ctx.record(rounds > 1, expected="the message stops being delivered after some redeliveries",
                       observed=f"delivered {rounds - 1} time(s), then no more",
                       what="the unprocessable message is taken out of the queue")
            return
    ctx.record(False, expected="the message stops being delivered after some redeliveries",
               observed=f"still delivered after {rounds} deliveries without ack")


# ------------------------------------------------------------------------------------ basic.cancel
@case("amqp091/basic.cancel/cancel-ok", title="basic.cancel is answered with cancel-ok carrying the consumer tag",
      guideline=CANCEL_DOC)
def cancel_ok(ctx: Context) -> None:
    """Starts a consumer with a chosen tag and cancels it: the answer must be cancel-ok with that tag."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    tag = "amqpspec-cancel-" + ctx.rng.randbytes(4).hex()
    start_consumer(peer, ch, q, tag=tag)
    peer.send(MethodFrame(ch, spec.BasicCancel(consumer_tag=tag)))
    obs = peer.observe(REACTION_WINDOW, stop=lambda i: method_on(ch, "basic.cancel-ok")(i) or is_close(i))
    if ctx.check(obs, Answered("basic.cancel-ok", ch)):
        got = obs.methods("basic.cancel-ok", ch)[0].method.consumer_tag
        ctx.record(got == tag, expected=f"consumer-tag {tag!r}", observed=f"consumer-tag {got!r}",
                   what="cancel-ok names the cancelled consumer")


@case("amqp091/basic.cancel/queue-deleted",
      title="basic.cancel of a consumer whose queue was deleted is ignored: cancel-ok, no exception",
      clauses=("amqp091:basic.cancel/01",))
def cancel_after_queue_deleted(ctx: Context) -> None:
    """Connection 1 consumes from a shared queue; connection 2 deletes the queue; connection 1 then
    cancels its consumer (the tag is valid on that channel). The server must ignore the cancel:
    cancel-ok (the method is synchronous) and no exception on the channel."""
    one = ctx.connect()
    ch = one.open_channel()
    q = declare_queue(ctx, one, ch)
    tag = "amqpspec-gone-" + ctx.rng.randbytes(4).hex()
    start_consumer(one, ch, q, tag=tag)
    two = ctx.connect()
    two.call(two.open_channel(), spec.QueueDelete(queue=q))
    one.send(MethodFrame(ch, spec.BasicCancel(consumer_tag=tag)))
    obs = react(one, ch)
    if obs.methods("basic.cancel", ch):
        ctx.note("the broker sent basic.cancel for the consumer when its queue was deleted (a RabbitMQ extension)")
    ctx.check(obs, Answered("basic.cancel-ok", ch, probe=True))
