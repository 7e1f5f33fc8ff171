"""Acknowledgements and redelivery: basic.ack, basic.reject, basic.recover(-async), the
redelivered flag, channel-local delivery tags, and what closing a channel does to the
messages it had not acknowledged (section 4.5).

A non-zero delivery tag that does not refer to a delivered, unacknowledged message of the
channel is a channel exception 406 (basic.ack multiple/exists, on-failure precondition-failed),
at once even on a transacted channel. Delivery tags are valid only on their channel
(domain delivery-tag/channel-local), so a tag of another channel is unknown there. Section 4.5
(no keyword: warnings) says unacknowledged messages of a closed channel are marked for
redelivery; the server SHOULD flag them redelivered (domain redelivered/implementation).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer, UnexpectedReply
from amqpspec.verify import ChannelException, StaysOpen
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._common import QUICK_WINDOW
from ._content import (
    QUIET, Gathered, gather, gather_until, get_eventually, get_message, messages, publish_n, shown,
    start_consumer, wait_queued,
)
from ._model import WAIT, Message, close_channel, declare_queue, publish
from ._replies import is_close, method_on, react
from ._while_sending import judge, settle_while_sending

EXISTS = ("amqp091:basic.ack.multiple/exists",)
REDELIVERED = ("amqp091:domain.redelivered/implementation",)
CHANNEL_CLOSURE = ("When the server closes a channel, any unacknowledged messages on the channel are marked for "
                   "redelivery. [4.5]")
MULTIPLE_DOC = ("If set to 1, the delivery tag is treated as \"up to and including\", so that the client can "
                "acknowledge multiple messages with a single method. If set to zero, the delivery tag refers to a "
                "single message. If the multiple field is 1, and the delivery tag is zero, tells the server to "
                "acknowledge all outstanding messages. [basic.ack multiple]")
REJECT_UNKNOWN = ("The spec doesn't say what should happen when a client sends a basic.reject with an unknown "
                  "delivery tag. The server should probably handle this in the same way as for basic.ack, namely a "
                  "raise a precondition_failed error. [RabbitMQ errata, 21]")
REQUEUE_DOC = ("If requeue is true, the server will attempt to requeue the message. If requeue is false or the "
               "requeue attempt fails the messages are discarded or dead-lettered. [basic.reject requeue]")
RECOVER_DOC = ("This method asks the server to redeliver all unacknowledged messages on a specified channel. Zero "
               "or more messages may be redelivered. [basic.recover]")
RECOVER_REQUEUE_DOC = ("If this field is zero, the message will be redelivered to the original recipient. If this "
                       "bit is 1, the server will attempt to requeue the message, potentially then delivering it to "
                       "an alternative subscriber. [basic.recover requeue; RabbitMQ errata 2 discusses "
                       "requeue=false]")
PRECONDITION_FAILED = 406


def unacked(ctx: Context, peer: Peer, ch: int, n: int = 1, prefix: str = "m") -> tuple[str, list[Message]]:
    """A queue with ``n`` messages fetched with basic.get on ``ch`` and not acknowledged."""
    q = declare_queue(ctx, peer, ch)
    publish_n(peer, ch, q, n, prefix=prefix)
    wait_queued(peer, ch, q, n)
    got = [get_message(peer, ch, q, no_ack=False) for _ in range(n)]
    if any(m is None for m in got):  # a setup step that failed: the case cannot decide
        raise UnexpectedReply(f"basic.get-ok for each of the {n} messages just published", None)
    return q, got  # type: ignore[return-value]


def refused_406(ctx: Context, obs: Observation, ch: int, **kw: object) -> bool:
    return ctx.check(obs, ChannelException(PRECONDITION_FAILED, channel=ch), **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ basic.ack
@case("amqp091/basic.ack/unknown-tag", title="basic.ack of a delivery tag never delivered is channel exception 406",
      clauses=EXISTS)
def ack_unknown(ctx: Context) -> None:
    """On a fresh channel that has received nothing, basic.ack(delivery-tag 99): the server must
    raise a channel exception, on-failure precondition-failed: channel.close 406."""
    peer = ctx.connect()
    ch = peer.open_channel()
    peer.send(MethodFrame(ch, spec.BasicAck(99, False)))
    refused_406(ctx, react(peer, ch), ch)


@case("amqp091/basic.ack/twice", title="acknowledging the same message twice is channel exception 406",
      clauses=EXISTS)
def ack_twice(ctx: Context) -> None:
    """Fetches a message with basic.get (no-ack false), acks it, and acks the same tag again: "a
    client MUST not acknowledge the same message more than once"; the tag no longer refers to a
    delivered unacknowledged message, so channel.close 406."""
    peer = ctx.connect()
    ch = peer.open_channel()
    _, (msg,) = unacked(ctx, peer, ch)
    peer.send(MethodFrame(ch, spec.BasicAck(msg.delivery_tag, False)))
    first = react(peer, ch)
    if not ctx.check(first, StaysOpen(), what="the first ack is accepted", sets_close=False):
        return
    peer.send(MethodFrame(ch, spec.BasicAck(msg.delivery_tag, False)))
    refused_406(ctx, react(peer, ch), ch, what="the second ack of the same tag is refused")


@case("amqp091/basic.ack/other-channel",
      title="a delivery tag of channel 1 acknowledged on channel 2 is channel exception 406 on channel 2",
      clauses=("amqp091:domain.delivery-tag/channel-local",) + EXISTS)
def ack_other_channel(ctx: Context) -> None:
    """Channel 1 fetches 3 messages and channel 2 one message (basic.get, no-ack false); channel 2
    then acks a tag that channel 1 received and channel 2 did not. Delivery tags are valid only
    on their channel, so on channel 2 the tag refers to no delivered message: channel.close 406 on
    channel 2."""
    peer = ctx.connect()
    a, b = peer.open_channel(), peer.open_channel()
    _, on_a = unacked(ctx, peer, a, 3, "a")
    _, on_b = unacked(ctx, peer, b, 1, "b")
    mine = {m.delivery_tag for m in on_b}
    foreign = [m.delivery_tag for m in on_a if m.delivery_tag not in mine]
    ctx.note(f"tags on channel {a}: {[m.delivery_tag for m in on_a]}, on channel {b}: {sorted(mine)}")
    peer.send(MethodFrame(b, spec.BasicAck(max(foreign), False)))
    refused_406(ctx, react(peer, b), b)


@case("amqp091/basic.ack/transacted-checked-at-once",
      title="on a transacted channel an unknown delivery tag is refused at once, before any commit",
      clauses=EXISTS)
def ack_transacted(ctx: Context) -> None:
    """tx.select, then basic.ack(delivery-tag 77) that refers to nothing, and no tx.commit: "On a
    transacted channel, this check MUST be done immediately and not delayed until a Tx.Commit":
    channel.close 406 before the probe on the channel is answered."""
    peer = ctx.connect()
    ch = peer.open_channel()
    peer.send(MethodFrame(ch, spec.TxSelect()))
    selected = peer.observe(QUICK_WINDOW, stop=lambda i: method_on(ch, "tx.select-ok")(i) or is_close(i))
    if not selected.methods("tx.select-ok", ch) or selected.channel_close() or selected.connection_close:
        ctx.skip(f"the channel could not be made transacted: tx.select gave {selected.describe()}")
    peer.send(MethodFrame(ch, spec.BasicAck(77, False)))
    refused_406(ctx, react(peer, ch), ch)


def _ack_then(ctx: Context, peer: Peer, ch: int, tag: int, what: str, refused: bool) -> bool:
    """Acks ``tag`` alone and checks the channel's reaction against the multiple field's doc."""
    peer.send(MethodFrame(ch, spec.BasicAck(tag, False)))
    obs = react(peer, ch)
    verifier = ChannelException(PRECONDITION_FAILED, channel=ch) if refused else StaysOpen()
    return ctx.check(obs, verifier, what=what)


@case("amqp091/basic.ack/multiple", title="basic.ack with multiple set acknowledges up to and including the tag",
      guideline=MULTIPLE_DOC)
def ack_multiple(ctx: Context) -> None:
    """Fetches 3 messages (tags t1 < t2 < t3), sends basic.ack(t2, multiple). Then t3 must still be
    unacknowledged (acking it alone is accepted) and t1 acknowledged already (acking it again is
    refused with 406, as for any tag acknowledged twice)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    _, msgs = unacked(ctx, peer, ch, 3)
    t1, t2, t3 = sorted(m.delivery_tag for m in msgs)
    peer.send(MethodFrame(ch, spec.BasicAck(t2, True)))
    if _ack_then(ctx, peer, ch, t3, f"t3 ({t3}) is not covered by ack({t2}, multiple): acking it is accepted", False):
        _ack_then(ctx, peer, ch, t1, f"t1 ({t1}) was covered by ack({t2}, multiple): acking it again is refused", True)


@case("amqp091/basic.ack/multiple-zero", title="basic.ack(0, multiple) acknowledges all outstanding messages",
      guideline=MULTIPLE_DOC)
def ack_multiple_zero(ctx: Context) -> None:
    """Fetches 3 messages, sends basic.ack(0, multiple): all are acknowledged, so acking the last
    one again is refused with 406."""
    peer = ctx.connect()
    ch = peer.open_channel()
    _, msgs = unacked(ctx, peer, ch, 3)
    peer.send(MethodFrame(ch, spec.BasicAck(0, True)))
    last = max(m.delivery_tag for m in msgs)
    _ack_then(ctx, peer, ch, last, f"tag {last} was covered by ack(0, multiple): acking it again is refused", True)


# ------------------------------------------------------------------------------------ basic.reject
@case("amqp091/basic.reject/requeue-not-same-channel",
      title="a message rejected with requeue is not delivered again to the same consumer channel",
      clauses=("amqp091:basic.reject.requeue/01",))
def reject_not_same_channel(ctx: Context) -> None:
    """A single explicit-ack consumer receives a message and rejects it with requeue true. "The
    server MUST NOT deliver the message to the same client within the context of the current
    channel": it must not come back on that channel during the next second."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", q, b"rejected")
    tag, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=WAIT, count=1, into=got)
    first = got.deliveries(ch, tag)
    if not first:
        ctx.record(False, expected="a delivery", observed=got.describe(), what="the message is delivered",
                   clauses=("amqp091:basic/10",))
        return
    peer.send(MethodFrame(ch, spec.BasicReject(first[0].delivery_tag, True)))
    _, again = gather(peer, timeout=1.0)
    back = [m for m in again.deliveries(ch) if m.body == b"rejected"]
    ctx.record(not back, expected="the rejected message not delivered again on this channel within 1 s",
               observed=again.describe())


@case("amqp091/basic.reject/requeue-true-requeues",
      title="a message rejected with requeue true is available again, flagged redelivered",
      clauses=("amqp091:basic.reject/02",) + REDELIVERED)
def reject_requeue(ctx: Context) -> None:
    """Connection 1 fetches a message (basic.get, no-ack false) and rejects it with requeue true;
    connection 2 then reads the queue. The server SHOULD take the reject as "unable to process the
    message at this time", so the message is there again; the server SHOULD flag it redelivered."""
    one = ctx.connect()
    ch = one.open_channel()
    q, (msg,) = unacked(ctx, one, ch)
    one.send(MethodFrame(ch, spec.BasicReject(msg.delivery_tag, True)))
    two = ctx.connect()
    again = get_eventually(two, two.open_channel(), q)
    if not ctx.record(again is not None and again.body == msg.body, expected=f"the message {msg.body!r} again",
                      observed=again.summary() if again else "basic.get-empty",
                      what="the rejected message is requeued", clauses=("amqp091:basic.reject/02",)):
        return
    ctx.record(again.redelivered, expected="redelivered true", observed=f"redelivered {again.redelivered}",
               what="the requeued message is flagged redelivered", clauses=REDELIVERED)


@case("amqp091/basic.reject/requeue-false-discards",
      title="a message rejected with requeue false is discarded", guideline=REQUEUE_DOC)
def reject_discards(ctx: Context) -> None:
    """Fetches a message (no-ack false), rejects it with requeue false, closes the channel (which
    would requeue it, were it still unacknowledged) and reads the queue on another channel after
    half a second: it must be empty."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q, (msg,) = unacked(ctx, peer, ch)
    peer.send(MethodFrame(ch, spec.BasicReject(msg.delivery_tag, False)))
    close_channel(peer, ch)
    other = peer.open_channel()
    gather(peer, timeout=QUIET)
    left = get_message(peer, other, q)
    ctx.record(left is None, expected="basic.get-empty", observed=left.summary() if left else "basic.get-empty")


@case("amqp091/basic.reject/unknown-tag", title="basic.reject of a delivery tag never delivered is channel exception 406",
      guideline=REJECT_UNKNOWN)
def reject_unknown(ctx: Context) -> None:
    """On a fresh channel, basic.reject(delivery-tag 99, requeue false). The spec names no reaction;
    the errata suggest precondition-failed as for basic.ack: channel.close 406 (a warning)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    peer.send(MethodFrame(ch, spec.BasicReject(99, False)))
    refused_406(ctx, react(peer, ch), ch)


@case("amqp091/basic.reject/during-content",
      title="a reject sent while the message's content is still being sent is processed then",
      clauses=("amqp091:basic.reject/01",), timeout=20.0)
def reject_during_content(ctx: Context) -> None:
    """basic.reject/01: the server SHOULD accept and process a reject "while sending message
    content", reading incoming methods while sending output frames. Fetches an 8 MiB message with
    basic.get (no-ack false) and sends basic.reject(requeue true) as soon as get-ok arrives, reading
    none of the content (see ``_while_sending``: the server then still has content to send). A
    server that processes the reject then shows the message back in the queue while its content is
    unread, or cuts the content with an empty body frame; one that reads the reject only after the
    whole content fails the SHOULD (a warning)."""
    judge(ctx, settle_while_sending(ctx, lambda ch, tag: MethodFrame(ch, spec.BasicReject(tag, True))), "reject")


# ------------------------------------------------------------------------------------ basic.recover
def _consumed_unacked(ctx: Context, peer: Peer, n: int = 3) -> tuple[int, str, Gathered, list[bytes]]:
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    sent = publish_n(peer, ch, q, n)
    wait_queued(peer, ch, q, n)
    tag, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=WAIT, count=n, into=got)
    return ch, tag, got, sent


def _resent(peer: Peer, ch: int, before: int, first: Gathered, expected: int) -> list[Message]:
    """Deliveries after the first ``before`` ones, waiting up to a second for ``expected`` of them."""
    gather_until(peer, first, lambda g: len(g.deliveries(ch)) >= before + expected, 1.0)
    return first.deliveries(ch)[before:]


def _recover(ctx: Context, requeue: bool) -> None:
    peer = ctx.connect()
    ch, tag, got, sent = _consumed_unacked(ctx, peer)
    before = len(got.deliveries(ch))
    peer.send(MethodFrame(ch, spec.BasicRecover(requeue)))
    reply, got = gather(peer, lambda i: method_on(ch, "basic.recover-ok")(i), WAIT, got)
    if reply is None:
        ctx.record(False, expected="basic.recover-ok", observed=got.describe(), what="basic.recover is answered",
                   clauses=(), guideline=RECOVER_REQUEUE_DOC if not requeue else RECOVER_DOC)
        return
    resent = _resent(peer, ch, before, got, len(sent))
    flags = [m.redelivered for m in resent]
    if resent:
        ctx.record(all(flags), expected="redelivered true on every message resent",
                   observed=f"{shown(m.body for m in resent)} with redelivered {flags}",
                   what="resent messages are flagged redelivered")
    else:
        ctx.note("no message was resent")
    if requeue:
        ctx.record(sorted(m.body for m in resent) == sent, expected=f"{shown(sent)} resent",
                   observed=f"{shown(m.body for m in resent)} resent", what="every unacknowledged message is resent",
                   clauses=(), guideline=RECOVER_DOC)
    else:
        same = all(m.method.consumer_tag == tag for m in resent)
        ctx.record(sorted(m.body for m in resent) == sent and same,
                   expected=f"{shown(sent)} resent to the original consumer {tag!r}",
                   observed=f"{shown(m.body for m in resent)} resent to {sorted({m.method.consumer_tag for m in resent})}",
                   what="requeue false redelivers to the original recipient", clauses=(), guideline=RECOVER_REQUEUE_DOC)


@case("amqp091/basic.recover/requeue-true", title="basic.recover(requeue true) resends the unacknowledged messages flagged redelivered",
      clauses=("amqp091:basic.recover/01",))
def recover_requeue(ctx: Context) -> None:
    """A single explicit-ack consumer receives 3 messages without acking them; basic.recover(requeue
    true) must be answered with recover-ok (the XML omits synchronous="1": errata 28). Every
    message resent MUST be flagged redelivered; that all 3 are resent is what the method doc says
    (a warning)."""
    _recover(ctx, True)


@case("amqp091/basic.recover/requeue-false",
      title="basic.recover(requeue false) resends the unacknowledged messages to their consumer, flagged redelivered",
      clauses=("amqp091:basic.recover/01",))
def recover_no_requeue(ctx: Context) -> None:
    """As requeue-true with requeue false: "the message will be redelivered to the original
    recipient" (field doc; RabbitMQ errata 2): all 3 resent to the same consumer (a warning), each
    flagged redelivered (MUST). A broker refusing requeue false gets the warning."""
    _recover(ctx, False)


@case("amqp091/basic.recover-async/redelivered",
      title="basic.recover-async(requeue true) resends the unacknowledged messages flagged redelivered",
      clauses=("amqp091:basic.recover-async/01",))
def recover_async(ctx: Context) -> None:
    """A single explicit-ack consumer receives 3 messages without acking, then sends the deprecated
    basic.recover-async(requeue true), which the server MAY implement: skipped if the broker closes
    the channel or connection. Every message resent must be flagged redelivered."""
    peer = ctx.connect()
    ch, _, got, sent = _consumed_unacked(ctx, peer)
    before = len(got.deliveries(ch))
    peer.send(MethodFrame(ch, spec.BasicRecoverAsync(True)))
    obs = react(peer, ch)
    if not StaysOpen().accepts(obs):
        ctx.skip(f"the broker does not implement basic.recover-async (MAY): {obs.describe()}")
    got.messages += messages(obs.received, ("basic.deliver",))
    resent = _resent(peer, ch, before, got, len(sent))
    flags = [m.redelivered for m in resent]
    if not resent:
        ctx.note("no message was resent")
    ctx.record(all(flags), expected="redelivered true on every message resent",
               observed=f"{shown(m.body for m in resent)} with redelivered {flags}")


# ------------------------------------------------------------------------------------ redelivery (4.5)
def _requeued(ctx: Context, q: str, msg: Message) -> None:
    """Reads ``q`` on a fresh connection: ``msg`` must be there (4.5), flagged redelivered (SHOULD)."""
    peer = ctx.connect()
    again = get_eventually(peer, peer.open_channel(), q)
    if not ctx.record(again is not None and again.body == msg.body, expected=f"the message {msg.body!r} again",
                      observed=again.summary() if again else "basic.get-empty",
                      what="the unacknowledged message is back in the queue", clauses=(), guideline=CHANNEL_CLOSURE):
        return
    ctx.record(again.redelivered, expected="redelivered true", observed=f"redelivered {again.redelivered}",
               what="it is flagged redelivered", clauses=REDELIVERED)


@case("amqp091/domain.redelivered/after-connection-close",
      title="a message consumed without ack before the connection closed comes again flagged redelivered",
      clauses=REDELIVERED)
def redelivered_after_connection_close(ctx: Context) -> None:
    """The rule's scenario: a shared queue, one message, consumed with explicit acks and not
    acknowledged; the connection is closed; a new connection reads the queue. The message is
    there again (4.5, a warning) and SHOULD be flagged redelivered."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", q, b"unacked")
    tag, got = start_consumer(peer, ch, q, no_ack=False)
    gather(peer, timeout=WAIT, count=1, into=got)
    first = got.deliveries(ch, tag)
    if not first:
        ctx.record(False, expected="a delivery", observed=got.describe(), what="the message is delivered",
                   clauses=("amqp091:basic/10",))
        return
    peer.close()
    _requeued(ctx, q, first[0])


@case("amqp091/4.5/unacked-requeued-on-channel-close",
      title="unacknowledged messages of a channel the client closes are redelivered",
      guideline=CHANNEL_CLOSURE)
def requeued_on_channel_close(ctx: Context) -> None:
    """Fetches a message with basic.get (no-ack false), closes the channel with channel.close /
    close-ok, and reads the queue on a new connection: the message is there again, flagged
    redelivered (SHOULD)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q, (msg,) = unacked(ctx, peer, ch)
    close_channel(peer, ch)
    _requeued(ctx, q, msg)


@case("amqp091/4.5/unacked-requeued-on-channel-exception",
      title="unacknowledged messages of a channel closed by an exception are redelivered",
      guideline=CHANNEL_CLOSURE)
def requeued_on_channel_exception(ctx: Context) -> None:
    """Fetches a message (no-ack false), then provokes a channel exception on that channel (basic.ack
    of tag 999, which refers to nothing), answers the close, and reads the queue on a new
    connection: the message is there again, flagged redelivered (SHOULD)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q, (msg,) = unacked(ctx, peer, ch)
    peer.send(MethodFrame(ch, spec.BasicAck(999, False)))
    _, got = gather(peer, lambda i: is_close(i, ch), WAIT)
    if got.items and is_close(got.items[-1], ch) and got.items[-1].method.NAME == "channel.close":
        peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
    else:
        ctx.note(f"no channel.close came for the unknown tag: {got.describe()}; closing the channel instead")
        close_channel(peer, ch)
    _requeued(ctx, q, msg)


@case("amqp091/4.5/unacked-requeued-on-socket-close",
      title="unacknowledged messages of a connection whose socket closes without handshake are redelivered",
      guideline=CHANNEL_CLOSURE)
def requeued_on_socket_close(ctx: Context) -> None:
    """Fetches a message (no-ack false), then closes the TCP socket without connection.close (4.5
    case 3), and reads the queue on a new connection: the message is there again, flagged
    redelivered (SHOULD)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    q, (msg,) = unacked(ctx, peer, ch)
    peer.abort()
    _requeued(ctx, q, msg)

