"""RabbitMQ extension: Direct Reply-To (the pseudo-queue ``amq.rabbitmq.reply-to``), raw peers.

Tested when the broker lists ``direct_reply_to`` in its capabilities. No XML describes it:
the expectations come from RabbitMQ's Direct Reply-To guide (AMQP 0.9.1 part), recorded as
vendor clauses ``rabbitmq091:direct-reply-to/*`` with the releases whose edition of the guide
says each (the seed document translates the current, 4.2 edition; RabbitMQ 3.x's edition
differs on mandatory replies and says nothing of a second consumer). The guide describes the
broker's behaviour without RFC 2119 keywords, so those clauses weigh SHOULD; where it states
only what the requester must do and leaves the broker's reaction to a requester that does
otherwise unsaid (ack-mode consumers, publishing from another channel), the expected refusal
is an inference and the clause weighs MAY (informational).

Roles: the *requester* consumes from amq.rabbitmq.reply-to (no-ack) and publishes a request
with reply-to ``amq.rabbitmq.reply-to``; the *responder* (another connection) gets the
request from an ordinary queue, reads the rewritten reply-to and publishes the reply to the
default exchange with that routing key. A request/reply flow with a real client is a
scenario elsewhere; these cases use raw peers.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ChannelException, ConnectionException, Replies, StaysOpen
from amqpspec.wire.amqp091 import spec

from ._common import QUICK_WINDOW
from ._model import WAIT, Message, declare_queue, get, publish, receive, wait_count
from ._replies import after_async, answer

DRT = ("direct_reply_to",)
REPLY_TO = "amq.rabbitmq.reply-to"
# The guide's statements, each with the RabbitMQ releases whose edition says it (see
# amqpspec/specdata/amqp-0-9-1/rabbitmq-guides.toml and `amqpspec clauses --extensions`).
_G = "rabbitmq091:direct-reply-to/"
C_CONSUME = _G + "consume-no-ack"
C_REWRITE = _G + "reply-to-rewritten"
C_LIVENESS = _G + "liveness-declare"
C_NOACK = _G + "no-ack-only"
C_SAME_CHANNEL = _G + "same-channel"
C_DROPPED = _G + "dropped-when-gone"
C_NOT_A_QUEUE = _G + "not-a-queue"
# The guide changed in RabbitMQ 4.2 (Direct Reply-To became a volatile queue type): up to 4.1 a
# mandatory reply is "not routed" and returned, from 4.2 on it counts as routed. A case cites
# both and judges each broker by the edition of its own release (Context.applicable).
C_MANDATORY_3 = _G + "mandatory-not-routed"
C_MANDATORY_4 = _G + "mandatory-routed"
C_ONE_CONSUMER = _G + "one-consumer-per-channel"  # only the 4.2 edition says it
REFUSED = ChannelException() | ConnectionException()


# ---------------------------------------------------------------------------------- helpers
@dataclass
class Rpc:
    """A request in flight: the requester (consuming from the pseudo-queue) and the responder
    holding the request, whose reply-to the broker rewrote."""

    requester: Peer
    req_ch: int
    consumer_tag: str
    responder: Peer
    resp_ch: int
    request: Message

    @property
    def reply_to(self) -> str:
        props = self.request.properties
        return str(props.reply_to or "") if props is not None else ""


def consume_reply_to(peer: Peer, ch: int, no_ack: bool = True) -> Observation:
    return answer(peer, ch, spec.BasicConsume(queue=REPLY_TO, no_ack=no_ack), "basic.consume-ok",
                  window=QUICK_WINDOW)


def requester(ctx: Context) -> tuple[Peer, int, str]:
    """A connection consuming (no-ack) from amq.rabbitmq.reply-to; skips when refused."""
    peer = ctx.connect()
    ch = peer.open_channel()
    obs = consume_reply_to(peer, ch)
    oks = obs.methods("basic.consume-ok", ch)
    if not oks:
        ctx.skip(f"consuming from {REPLY_TO} was refused ({obs.describe()}); "
                 "see amqp091/rabbitmq.direct-reply-to/consume-no-ack")
    return peer, ch, oks[0].method.consumer_tag  # type: ignore[attr-defined]


def rpc(ctx: Context) -> Rpc:
    """Requester, responder, request queue; the request published and fetched by the responder."""
    req, req_ch, tag = requester(ctx)
    resp = ctx.connect()
    resp_ch = resp.open_channel()
    queue = declare_queue(ctx, resp, resp_ch)
    props = spec.BasicProperties(reply_to=REPLY_TO, correlation_id=ctx.name("rpc"))
    publish(req, req_ch, "", queue, b"request", properties=props)
    wait_count(resp, resp_ch, queue, 1)
    msg = get(resp, resp_ch, queue)
    if msg is None:
        ctx.skip("the request did not reach the request queue")
    return Rpc(req, req_ch, tag, resp, resp_ch, msg)


def reply(call: Rpc, *, mandatory: bool = False) -> None:
    request = call.request.properties
    props = spec.BasicProperties(correlation_id=request.correlation_id if request is not None else None)
    publish(call.responder, call.resp_ch, "", call.reply_to, b"reply", properties=props, mandatory=mandatory)


def reply_received(ctx: Context, call: Rpc, what: str, clause: str = C_REWRITE) -> bool:
    got = receive(call.requester, 1, WAIT)
    ok = bool(got) and got[0].channel == call.req_ch and got[0].body == b"reply" \
        and getattr(got[0].method, "consumer_tag", None) == call.consumer_tag
    return ctx.record(ok, expected=f"basic.deliver of the reply to consumer {call.consumer_tag!r} on channel "
                                   f"{call.req_ch}", observed=got[0].summary() if got else f"nothing within {WAIT:g}s",
                      what=what, clauses=(clause,))


def declare_on_fresh_channel(peer: Peer, name: str, passive: bool) -> tuple[int, Observation]:
    ch = peer.open_channel()
    return ch, answer(peer, ch, spec.QueueDeclare(queue=name, passive=passive), window=QUICK_WINDOW)


def drop_requester(call: Rpc) -> None:
    """The requester disconnects (orderly connection.close)."""
    call.requester.close()


# ---------------------------------------------------------------------------------- consuming
@case("amqp091/rabbitmq.direct-reply-to/consume-no-ack",
      title="basic.consume from amq.rabbitmq.reply-to in no-ack mode, without declaring it, is accepted",
      requires=DRT, clauses=(C_CONSUME,))
def consume_no_ack(ctx: Context) -> None:
    """Sends basic.consume(queue=amq.rabbitmq.reply-to, no-ack=1) on a new channel, nothing
    declared before: the answer is basic.consume-ok."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(consume_reply_to(peer, ch), Replies("basic.consume-ok", channel=ch))


@case("amqp091/rabbitmq.direct-reply-to/declare-accepted",
      title="queue.declare of amq.rabbitmq.reply-to is answered with declare-ok",
      requires=DRT, clauses=(C_CONSUME,))
def declare_accepted(ctx: Context) -> None:
    """Sends queue.declare(queue=amq.rabbitmq.reply-to) (passive=0) on a new channel: declaring
    the pseudo-queue is not needed but allowed ("although the client can"), so declare-ok."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(answer(peer, ch, spec.QueueDeclare(queue=REPLY_TO), window=QUICK_WINDOW),
              Replies("queue.declare-ok", channel=ch))


@case("amqp091/rabbitmq.direct-reply-to/one-consumer-per-channel",
      title="a second amq.rabbitmq.reply-to consumer on the same channel is refused",
      requires=DRT, clauses=(C_ONE_CONSUMER,))
def one_consumer_per_channel(ctx: Context) -> None:
    """Consumes (no-ack) from amq.rabbitmq.reply-to, then again on the same channel. At most one
    such consumer per channel: the second basic.consume is refused (no code named: any channel
    or connection exception), not answered with consume-ok."""
    peer, ch, _ = requester(ctx)
    ctx.check(consume_reply_to(peer, ch), REFUSED)


@case("amqp091/rabbitmq.direct-reply-to/ack-mode-consume-refused",
      title="an ack-mode consumer on amq.rabbitmq.reply-to is refused (informational)",
      requires=DRT, clauses=(C_NOACK,))
def ack_mode_refused(ctx: Context) -> None:
    """Sends basic.consume(queue=amq.rabbitmq.reply-to, no-ack=0). The guide requires no-ack
    consumers ("there is no queue to return the reply to") but does not say how the broker
    reacts to an ack-mode one; a refusal (channel or connection exception) is expected, and a
    consume-ok is recorded as informational."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(consume_reply_to(peer, ch, no_ack=False), REFUSED)


@case("amqp091/rabbitmq.direct-reply-to/request-from-other-channel-refused",
      title="a request with reply-to amq.rabbitmq.reply-to from a channel without the consumer is refused "
            "(informational)",
      requires=DRT, clauses=(C_SAME_CHANNEL,))
def other_channel_refused(ctx: Context) -> None:
    """The requester consumes from amq.rabbitmq.reply-to on one channel and publishes a request
    with reply-to amq.rabbitmq.reply-to on another channel of the same connection, then probes
    that channel. The guide requires the same channel for both and leaves the broker's reaction
    unsaid; a refusal (channel or connection exception) is expected, anything else is recorded
    as informational."""
    peer, _, _ = requester(ctx)
    other = peer.open_channel()
    queue = declare_queue(ctx, peer, other)
    publish(peer, other, "", queue, b"request", properties=spec.BasicProperties(reply_to=REPLY_TO))
    ctx.check(after_async(peer, other), ChannelException(channel=other) | ConnectionException())


# ---------------------------------------------------------------------------------- request and reply
@case("amqp091/rabbitmq.direct-reply-to/reply-to-rewritten",
      title="the broker rewrites reply-to amq.rabbitmq.reply-to to amq.rabbitmq.reply-to.<suffix>",
      requires=DRT, clauses=(C_REWRITE,))
def reply_to_rewritten(ctx: Context) -> None:
    """The requester (consuming from the pseudo-queue) publishes a request with reply-to
    amq.rabbitmq.reply-to to a queue; the responder fetches it: its reply-to reads
    amq.rabbitmq.reply-to.<opaque-suffix>, with a non-empty suffix."""
    call = rpc(ctx)
    name = call.reply_to
    ctx.record(name.startswith(REPLY_TO + ".") and len(name) > len(REPLY_TO) + 1,
               expected=f"reply-to {REPLY_TO}.<opaque-suffix>", observed=f"reply-to {name!r}")


@case("amqp091/rabbitmq.direct-reply-to/reply-delivered",
      title="a reply published to the rewritten reply-to reaches the requester's consumer",
      requires=DRT, clauses=(C_REWRITE,))
def reply_delivered(ctx: Context) -> None:
    """After the request/fetch of reply-to-rewritten, the responder publishes a reply to the
    default exchange with the rewritten reply-to as routing key: the requester receives it as a
    basic.deliver to its amq.rabbitmq.reply-to consumer, on the channel it consumes on."""
    call = rpc(ctx)
    reply(call)
    reply_received(ctx, call, "the reply reaches the requester")


def mandatory_outcome(ctx: Context, call: Rpc, what: str) -> None:
    """Judges the responder's channel after a mandatory reply by the guide of the broker's release:
    up to 4.1 the reply is "not routed", so a basic.return comes before the probe's reply; from 4.2
    on it counts as routed, so none does."""
    clause = ctx.applicable(C_MANDATORY_4, C_MANDATORY_3)
    obs = after_async(call.responder, call.resp_ch)
    returned = bool(obs.methods("basic.return", call.resp_ch))
    if clause == C_MANDATORY_3:
        ctx.record(returned, expected="a basic.return of the mandatory reply (not routed)", observed=obs.describe(),
                   what=f"{what}: the mandatory reply is returned", clauses=(clause,))
    else:
        ctx.record(not returned and bool(obs.probe_ok), expected="no basic.return for the mandatory reply",
                   observed=obs.describe(), what=f"{what}: the mandatory reply counts as routed", clauses=(clause,))


@case("amqp091/rabbitmq.direct-reply-to/mandatory-reply-routed",
      title="a mandatory reply to a live requester is returned up to RabbitMQ 4.1, routed without basic.return "
            "from 4.2",
      requires=DRT, clauses=(C_MANDATORY_3, C_MANDATORY_4, C_REWRITE))
def mandatory_reply_routed(ctx: Context) -> None:
    """The responder publishes the reply with mandatory=1, then probes its channel. Up to RabbitMQ
    4.1 the guide says amq.rabbitmq.reply-to.* is then treated as not a queue: the reply is "not
    routed" and a basic.return comes (RabbitMQ 3.x does so). From 4.2 on it counts as routed: no
    basic.return, and the requester receives the reply. A release is judged by its own edition."""
    call = rpc(ctx)
    reply(call, mandatory=True)
    mandatory_outcome(ctx, call, "a live requester")
    if ctx.applicable(C_MANDATORY_4, C_MANDATORY_3) == C_MANDATORY_4:
        reply_received(ctx, call, "the mandatory reply reaches the requester")


@case("amqp091/rabbitmq.direct-reply-to/not-deletable",
      title="queue.delete of amq.rabbitmq.reply-to does not end Direct Reply-To: the reply still arrives",
      requires=DRT, clauses=(C_NOT_A_QUEUE,))
def not_deletable(ctx: Context) -> None:
    """With a request in flight, a third connection sends queue.delete(amq.rabbitmq.reply-to)
    (whatever it answers), then the responder replies: the pseudo-queue "cannot be deleted", so
    the requester's consumer still receives the reply."""
    call = rpc(ctx)
    third = ctx.connect()
    tch = third.open_channel()
    obs = answer(third, tch, spec.QueueDelete(queue=REPLY_TO), window=QUICK_WINDOW)
    ctx.note(f"queue.delete({REPLY_TO}) was answered with: {obs.describe()}")
    reply(call)
    reply_received(ctx, call, "the reply arrives after the delete attempt", clause=C_NOT_A_QUEUE)


# ---------------------------------------------------------------------------------- requester alive or gone
@case("amqp091/rabbitmq.direct-reply-to/passive-declare-alive",
      title="a passive declare of the rewritten reply-to succeeds (0 messages, 1 consumer) while the requester lives",
      requires=DRT, clauses=(C_LIVENESS,))
def passive_declare_alive(ctx: Context) -> None:
    """The responder passively declares the rewritten reply-to on a fresh channel while the
    requester is connected: queue.declare-ok, reporting 0 ready messages and 1 consumer."""
    call = rpc(ctx)
    ch, obs = declare_on_fresh_channel(call.responder, call.reply_to, passive=True)
    if not ctx.check(obs, Replies("queue.declare-ok", channel=ch), what="the passive declare succeeds"):
        return
    ok: spec.QueueDeclareOk = obs.methods("queue.declare-ok", ch)[0].method  # type: ignore[assignment]
    ctx.record((ok.message_count, ok.consumer_count) == (0, 1),
               expected="message-count 0, consumer-count 1",
               observed=f"message-count {ok.message_count}, consumer-count {ok.consumer_count}",
               what="the declare-ok reports 0 ready messages and 1 consumer")


@case("amqp091/rabbitmq.direct-reply-to/declare-after-requester-gone",
      title="once the requester disconnected, declaring the rewritten reply-to fails, passive or not",
      requires=DRT, clauses=(C_LIVENESS,))
def declare_after_gone(ctx: Context) -> None:
    """The requester closes its connection. The responder's passive declare of the rewritten
    reply-to, on a fresh channel, must then fail (repeated for up to a few seconds while it
    still succeeds: the broker learns of the disconnection asynchronously); a non-passive
    declare of the same name fails too, since it "cannot be created". No code is named: any
    channel or connection exception passes."""
    call = rpc(ctx)
    name = call.reply_to
    drop_requester(call)
    until = time.monotonic() + WAIT
    while True:
        ch, obs = declare_on_fresh_channel(call.responder, name, passive=True)
        if not obs.methods("queue.declare-ok", ch) or time.monotonic() >= until:
            break
        time.sleep(0.05)
    if not ctx.check(obs, ChannelException(channel=ch) | ConnectionException(),
                     what="the passive declare fails once the requester is gone"):
        return
    ch, obs = declare_on_fresh_channel(call.responder, name, passive=False)
    ctx.check(obs, ChannelException(channel=ch) | ConnectionException(),
              what="a non-passive declare cannot create it")


@case("amqp091/rabbitmq.direct-reply-to/reply-to-gone-dropped",
      title="a reply to a requester that disconnected is dropped without an exception; a mandatory one is "
            "returned up to RabbitMQ 4.1, not from 4.2",
      requires=DRT, clauses=(C_DROPPED, C_MANDATORY_3, C_MANDATORY_4))
def reply_to_gone(ctx: Context) -> None:
    """The requester closes its connection; the responder publishes the reply (mandatory=1) to
    the rewritten reply-to and probes its channel. The reply is discarded: the responder's
    channel goes on without an exception. As for a live requester, the guide of the broker's
    release decides the basic.return: up to 4.1 a reply to this name is "not routed" and
    returned; from 4.2 routing does not check whether the requester is alive, so it counts as
    routed and nothing is returned."""
    call = rpc(ctx)
    drop_requester(call)
    reply(call, mandatory=True)
    obs = after_async(call.responder, call.resp_ch)
    ctx.check(obs, StaysOpen(), what="the responder's channel goes on", clauses=(C_DROPPED,))
    clause = ctx.applicable(C_MANDATORY_4, C_MANDATORY_3)
    returned = bool(obs.methods("basic.return", call.resp_ch))
    if clause == C_MANDATORY_3:
        ctx.record(returned, expected="a basic.return of the mandatory reply (not routed)", observed=obs.describe(),
                   what="the mandatory reply to a gone requester is returned", clauses=(clause,))
    else:
        ctx.record(not returned, expected="no basic.return for the mandatory reply", observed=obs.describe(),
                   what="the reply counts as routed although the requester is gone", clauses=(clause,))
