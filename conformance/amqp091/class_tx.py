"""The tx class of the 0-9-1 XML: select, commit, rollback, and what a transaction covers.

Tx.Commit and Tx.Rollback on a channel that never saw Tx.Select are client errors whose
rules name the server's answer, precondition-failed (tx.commit/transacted,
tx.rollback/transacted). The semantics are mostly in docs without RFC 2119 keywords, so
those checks are guidelines: published messages are "distributed to any active consumers
when the transaction, if any, is committed" (basic.publish), commit and rollback act on
"all message publications and acknowledgments performed in the current transaction", a
new transaction starts right after each, and 2.2.9 says transactions cover publishes and
acks, not deliveries: "a rollback does not requeue or redeliver any messages, and a client
is entitled to acknowledge these messages in a following transaction". (basic.ack's "on a
transacted channel, this check MUST be done immediately" is checked with basic.ack.)

The three class rules (not-multiple-queues, not-immediate, not-mandatory) tell
applications what not to rely on; they have no server side to test.

The helpers these cases share with the channel.flow and RabbitMQ extension modules (confirms,
basic.nack, consumer cancel notify, direct reply-to) are in ``_replies``, ``_model`` and ``_tx``.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import ChannelException, ConnectionException, Replies, StaysOpen
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._common import QUICK_WINDOW
from ._model import WAIT, close_channel, declare_queue, fence, get, publish, wait_count
from ._replies import after_async, answer, on_channel
from ._tx import tx_select

# ---------------------------------------------------------------------------------- spec text
PUBLISH_DOC = ("This method publishes a message to a specific exchange. The message will be routed to queues as "
               "defined by the exchange configuration and distributed to any active consumers when the "
               "transaction, if any, is committed.")
BUFFERED = ("Server local transactions, in which the server will buffer published messages and acknowledgements "
            "and commit them on demand from the client.")
COMMIT_DOC = ("This method commits all message publications and acknowledgments performed in the current "
              "transaction.  A new transaction starts immediately after a commit.")
ROLLBACK_DOC = ("This method abandons all message publications and acknowledgments performed in the current "
                "transaction. A new transaction starts immediately after a rollback.")
ATOMIC = ("Servers SHOULD implement atomic transactions at least where all publish or ack requests affect a "
          "single queue.")
NOT_DELIVERIES = ("Transactions cover published contents and acknowledgements, not deliveries. Thus, a rollback "
                  "does not requeue or redeliver any messages, and a client is entitled to acknowledge these "
                  "messages in a following transaction.")
ROLLBACK_UNACKED = ("Note that unacked messages will not be automatically redelivered by rollback; if that is "
                    "required an explicit recover call should be issued.")
DELIVERIES_NOT_TRANSACTED = ("Message deliveries from the server to the consumer are not transacted; it is "
                             "sufficient to transact the acknowledgements to these messages")
SELECT_DOC = ("This method sets the channel to use standard transactions. The client must use this method at "
              "least once on a channel before using the Commit or Rollback methods.")
SELECT_OK_DOC = ("This method confirms to the client that the channel was successfully set to use standard "
                 "transactions.")
NOT_IMPLEMENTED = ("not-implemented (540): The client tried to use functionality that is not implemented in the "
                   "server.")


# ---------------------------------------------------------------------------------- helpers
def drain(peer: Peer, ch: int, queue: str, limit: int = 20) -> list[bytes]:
    """Bodies of the messages in ``queue`` (basic.get no-ack until get-empty)."""
    bodies: list[bytes] = []
    while len(bodies) < limit:
        msg = get(peer, ch, queue)
        if msg is None:
            break
        bodies.append(msg.body)
    return bodies


# ---------------------------------------------------------------------------------- select
@case("amqp091/tx.select/select-ok",
      title="tx.select is answered with select-ok (or 540 not-implemented by a broker without transactions)",
      level=Level.SHOULD, guideline=f"<chassis name=\"server\" implement=\"SHOULD\"/> [tx class] / "
                                    f"{SELECT_OK_DOC} [tx.select-ok] / {NOT_IMPLEMENTED}")
def select_ok(ctx: Context) -> None:
    """Sends tx.select on a new channel. Servers SHOULD implement the tx class (its chassis); a
    server that does answers select-ok, one that does not says so with connection exception 540
    (not-implemented). Silence, or any other answer, is neither."""
    peer = ctx.connect()
    ch = peer.open_channel()
    obs = answer(peer, ch, spec.TxSelect(), "tx.select-ok", window=QUICK_WINDOW)
    ctx.check(obs, Replies("tx.select-ok", channel=ch) | ConnectionException(540))


# ---------------------------------------------------------------------------------- commit / rollback
@case("amqp091/tx.commit/not-transacted",
      title="tx.commit on a non-transacted channel is channel exception 406 (precondition-failed)",
      clauses=("amqp091:tx.commit/transacted",))
def commit_not_transacted(ctx: Context) -> None:
    """The rule's scenario: opens a channel and sends tx.commit without tx.select. The rule's
    on-failure is precondition-failed, a soft error: channel.close 406 on that channel passes."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(answer(peer, ch, spec.TxCommit(), window=QUICK_WINDOW), ChannelException(406, channel=ch))


@case("amqp091/tx.rollback/not-transacted",
      title="tx.rollback on a non-transacted channel is channel exception 406 (precondition-failed)",
      clauses=("amqp091:tx.rollback/transacted",))
def rollback_not_transacted(ctx: Context) -> None:
    """The rule's scenario: opens a channel and sends tx.rollback without tx.select; channel.close
    406 (precondition-failed, the rule's on-failure) on that channel passes."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(answer(peer, ch, spec.TxRollback(), window=QUICK_WINDOW), ChannelException(406, channel=ch))


@case("amqp091/tx.select/twice", title="tx.select on an already transacted channel is answered with select-ok",
      guideline=SELECT_DOC)
def select_twice(ctx: Context) -> None:
    """Sends tx.select twice on one channel. The doc asks clients to select "at least once" before
    commit or rollback, so a repeated select is legitimate: the second gets select-ok, and the
    channel stays usable (a probe on it is answered)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    tx_select(ctx, peer, ch)
    obs = answer(peer, ch, spec.TxSelect(), "tx.select-ok")
    if not ctx.check(obs, Replies("tx.select-ok", channel=ch), what="the second tx.select gets select-ok"):
        return
    ctx.check(after_async(peer, ch), StaysOpen(), what="the channel stays usable after the second select")


@case("amqp091/tx.commit/publish-visible-after-commit",
      title="messages published in a transaction reach the queue only at commit, all of them at once",
      guideline=PUBLISH_DOC)
def publish_visible_after_commit(ctx: Context) -> None:
    """Publishes three messages on a transacted channel to a queue, then (after a synchronous
    method on that channel proves the publishes were processed) a second connection's basic.get
    must find the queue empty. After commit-ok the three must be there, in order, at once: the
    first get-ok already reports two more (one queue: the atomic case the tx class asks servers to
    implement)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch)
    tx_select(ctx, peer, ch)
    bodies = [b"tx-1", b"tx-2", b"tx-3"]
    for body in bodies:
        publish(peer, ch, "", queue, body)
    fence(peer, ch)
    other = ctx.connect()
    och = other.open_channel()
    early = get(other, och, queue)
    ctx.record(early is None, expected="basic.get-empty: no message of the open transaction is in the queue",
               observed="basic.get-empty" if early is None else f"got {early.summary()}",
               what="published messages are not in the queue before commit", guideline=f"{PUBLISH_DOC} / {BUFFERED}")
    obs = answer(peer, ch, spec.TxCommit(), "tx.commit-ok")
    if not ctx.check(obs, Replies("tx.commit-ok", channel=ch), what="tx.commit is answered with commit-ok",
                     guideline=COMMIT_DOC):
        return
    first = get(other, och, queue)
    rest = drain(other, och, queue) if first is not None else []
    got = ([first.body] if first is not None else []) + rest
    ctx.record(got == bodies, expected=f"after commit-ok the queue holds {bodies!r} in order",
               observed=f"got {got!r}", what="committed messages are in the queue", guideline=COMMIT_DOC)
    remaining = getattr(first.method, "message_count", None) if first is not None else None
    ctx.record(remaining == len(bodies) - 1,
               expected=f"the first basic.get-ok after commit-ok reports message-count {len(bodies) - 1}: "
                        "the whole transaction arrived at once",
               observed=f"message-count {remaining}" if first is not None else "basic.get-empty",
               what="the commit to one queue is atomic", level=Level.SHOULD, guideline=ATOMIC)


@case("amqp091/tx.rollback/publish-discarded",
      title="rollback discards the transaction's publishes; a new transaction starts after commit and rollback",
      guideline=ROLLBACK_DOC)
def rollback_discards_publish(ctx: Context) -> None:
    """On a transacted channel: publish a, commit, publish b, rollback, publish c, commit. The
    queue must then hold exactly a and c: the rollback abandons b only (a new transaction started
    after the commit), and c is committed (a new transaction started after the rollback)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch)
    tx_select(ctx, peer, ch)
    steps = [(b"a", spec.TxCommit()), (b"b", spec.TxRollback()), (b"c", spec.TxCommit())]
    for body, end in steps:
        publish(peer, ch, "", queue, body)
        obs = answer(peer, ch, end)
        if not ctx.check(obs, Replies(end.RESPONSES[0], channel=ch), what=f"{end.NAME} is answered",
                         guideline=COMMIT_DOC if end.NAME == "tx.commit" else ROLLBACK_DOC):
            return
    other = ctx.connect()
    och = other.open_channel()
    count = wait_count(other, och, queue, 2)
    got = drain(other, och, queue)
    ctx.record(b"b" not in got, expected="the message published in the rolled-back transaction (b) is not in the queue",
               observed=f"queue held {got!r} (message-count {count})", what="rollback abandons the publish",
               guideline=ROLLBACK_DOC)
    ctx.record(got == [b"a", b"c"], expected="the queue holds a and c, in order",
               observed=f"queue held {got!r}", what="commits before and after the rollback take effect",
               guideline=f"{COMMIT_DOC} / {ROLLBACK_DOC}")


# ---------------------------------------------------------------------------------- acknowledgements
def _one_message_queue(ctx: Context, peer: Peer, ch: int, body: bytes = b"m") -> str:
    queue = declare_queue(ctx, peer, ch)
    publish(peer, ch, "", queue, body)
    wait_count(peer, ch, queue, 1)
    return queue


@case("amqp091/tx.commit/ack-takes-effect-at-commit",
      title="an ack in a transaction takes effect at commit, not before",
      guideline=BUFFERED)
def ack_at_commit(ctx: Context) -> None:
    """A queue holds one message. On a transacted channel: basic.get (ack mode), basic.ack, then
    channel.close without commit: the ack was never committed, so the message is still unacked
    when the channel closes and goes back to the queue. Then on a new transacted channel:
    get, ack, commit, close: now the ack was committed and the queue stays empty."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = _one_message_queue(ctx, peer, ch)
    consumer = ctx.connect()
    tch = consumer.open_channel()
    tx_select(ctx, consumer, tch)
    msg = get(consumer, tch, queue, no_ack=False)
    if msg is None:
        ctx.skip("the queue did not deliver its message to basic.get")
    consumer.send(MethodFrame(tch, spec.BasicAck(msg.delivery_tag, False)))
    close_channel(consumer, tch)
    count = wait_count(peer, ch, queue, 1)
    ctx.record(count == 1, expected="message-count 1: the uncommitted ack did not remove the message",
               observed=f"message-count {count}", what="an uncommitted ack is not applied", guideline=BUFFERED)
    tch = consumer.open_channel()
    tx_select(ctx, consumer, tch)
    msg = get(consumer, tch, queue, no_ack=False)
    if msg is None:
        ctx.record(False, expected="the message is delivered again to basic.get", observed="basic.get-empty",
                   what="the message is back after the uncommitted ack", guideline=BUFFERED)
        return
    consumer.send(MethodFrame(tch, spec.BasicAck(msg.delivery_tag, False)))
    obs = answer(consumer, tch, spec.TxCommit())
    if not ctx.check(obs, Replies("tx.commit-ok", channel=tch), what="tx.commit is answered with commit-ok",
                     guideline=COMMIT_DOC):
        return
    close_channel(consumer, tch)
    count = wait_count(peer, ch, queue, 0)
    ctx.record(count == 0, expected="message-count 0: the committed ack removed the message",
               observed=f"message-count {count}", what="a committed ack is applied", guideline=COMMIT_DOC)


@case("amqp091/tx.rollback/ack-undone-not-redelivered",
      title="rollback undoes an ack without redelivering; the message can be acked in the next transaction",
      guideline=NOT_DELIVERIES)
def rollback_ack(ctx: Context) -> None:
    """A queue holds one message. On a transacted channel: basic.get (ack mode), basic.ack,
    tx.rollback. The rollback neither requeues nor redelivers: a basic.get on the same channel
    finds nothing. Acking the same delivery tag again and committing then succeeds (commit-ok, no
    exception), and once the channel is closed the queue is empty: the ack took effect."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = _one_message_queue(ctx, peer, ch)
    consumer = ctx.connect()
    tch = consumer.open_channel()
    tx_select(ctx, consumer, tch)
    msg = get(consumer, tch, queue, no_ack=False)
    if msg is None:
        ctx.skip("the queue did not deliver its message to basic.get")
    consumer.send(MethodFrame(tch, spec.BasicAck(msg.delivery_tag, False)))
    obs = answer(consumer, tch, spec.TxRollback())
    if not ctx.check(obs, Replies("tx.rollback-ok", channel=tch), what="tx.rollback is answered with rollback-ok",
                     guideline=ROLLBACK_DOC):
        return
    again = get(consumer, tch, queue, no_ack=False)
    ctx.record(again is None, expected="basic.get-empty: the rollback neither requeued nor redelivered the message",
               observed="basic.get-empty" if again is None else f"got {again.summary()}",
               what="rollback does not requeue or redeliver", guideline=f"{NOT_DELIVERIES} / {ROLLBACK_UNACKED}")
    if again is not None:
        return
    consumer.send(MethodFrame(tch, spec.BasicAck(msg.delivery_tag, False)))
    obs = answer(consumer, tch, spec.TxCommit())
    if not ctx.check(obs, Replies("tx.commit-ok", channel=tch),
                     what="acking the same delivery tag in the following transaction is accepted"):
        return
    close_channel(consumer, tch)
    count = wait_count(peer, ch, queue, 0)
    ctx.record(count == 0, expected="message-count 0 after the channel closed: the second ack was committed",
               observed=f"message-count {count}", what="the ack in the following transaction takes effect")


@case("amqp091/tx.select/deliveries-not-transacted",
      title="deliveries to a consumer on a transacted channel arrive without a commit",
      guideline=DELIVERIES_NOT_TRANSACTED)
def deliveries_not_transacted(ctx: Context) -> None:
    """A consumer (no-ack) on a transacted channel; a message is published from another
    connection. Deliveries are not part of the transaction: basic.deliver arrives without the
    consumer's channel ever committing."""
    consumer = ctx.connect()
    tch = consumer.open_channel()
    queue = declare_queue(ctx, consumer, tch)
    tx_select(ctx, consumer, tch)
    consumer.call(tch, spec.BasicConsume(queue=queue, no_ack=True))
    peer = ctx.connect()
    ch = peer.open_channel()
    publish(peer, ch, "", queue, b"not transacted")
    obs = consumer.observe(WAIT, stop=on_channel(tch, "basic.deliver"))
    ctx.check(obs, Replies("basic.deliver", channel=tch))
