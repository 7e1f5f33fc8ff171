"""RabbitMQ extension: Direct Reply-To (the pseudo-queue ``amq.rabbitmq.reply-to``), raw peers.

Tested when the broker lists ``direct_reply_to`` in its capabilities. No XML describes it:
the expectations come from RabbitMQ's Direct Reply-To guide (AMQP 0.9.1 part), read in the
Chinese edition the project started from and translated to English in each guideline below.
The guide describes the broker's behaviour without RFC 2119 keywords, so the checks are
guidelines (SHOULD); where it states only what the requester must do and leaves the broker's
reaction to a requester that does otherwise unsaid (ack-mode consumers, publishing from
another channel), the expected refusal is an inference and weighs MAY (informational).

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
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ChannelException, ConnectionException, Replies, StaysOpen
from amqpspec.wire.amqp091 import spec

from ._common import QUICK_WINDOW
from ._model import WAIT, Message, declare_queue, get, publish, receive, wait_count
from ._replies import after_async, answer

DRT = ("direct_reply_to",)
REPLY_TO = "amq.rabbitmq.reply-to"
_SOURCE = "RabbitMQ documentation, Direct Reply-To guide, AMQP 0.9.1 (translated from the Chinese edition): "
G_CONSUME = _SOURCE + ("To use Direct Reply-To, a requester must: consume from the pseudo-queue amq.rabbitmq.reply-to "
                       "in no-ack mode. There is no need to declare this \"queue\" first (although the client can). "
                       "Set the reply-to property of the request message to amq.rabbitmq.reply-to.")
G_REWRITE = _SOURCE + ("When forwarding the request, RabbitMQ transparently rewrites reply-to to "
                       "amq.rabbitmq.reply-to.<opaque-suffix>, where <opaque-suffix> has no meaning for the client. "
                       "The responder then uses that value as the routing key to publish the reply to the default "
                       "exchange (\"\").")
G_LIVENESS = _SOURCE + ("If the responder will perform an expensive operation, it can check whether the client has "
                        "disconnected by passively declaring the generated reply queue name on a disposable channel. "
                        "Even with passive=false it cannot be created; the declare either succeeds (0 ready "
                        "messages, 1 consumer) or fails.")
G_NOACK = _SOURCE + ("The requester must consume in automatic acknowledgement mode. If the requester disconnects or "
                     "rejects a reply, there is no queue to return the reply to.")
G_SAME_CHANNEL = _SOURCE + ("The requester must use the same connection and channel to consume from "
                            "amq.rabbitmq.reply-to and to publish the request.")
G_DROPPED = _SOURCE + ("Replies sent via Direct Reply-To are not fault-tolerant; they are dropped if the client that "
                       "published the request disconnects. The requester is assumed to reconnect and resubmit the "
                       "request.")
G_NOT_A_QUEUE = _SOURCE + ("The name amq.rabbitmq.reply-to is used in basic.consume and in the reply-to property as "
                           "if it were a queue; however it is not. It cannot be deleted, and does not appear in the "
                           "management plugin or in rabbitmqctl list_queues.")
G_MANDATORY = _SOURCE + ("If the responder publishes with the mandatory flag, amq.rabbitmq.reply-to.* is treated as a "
                         "queue for routing. Whether the requester is still alive is not checked at routing time. In "
                         "other words, messages routed only to this name are considered \"routed\", and RabbitMQ "
                         "does not send a basic.return.")
G_ONE_CONSUMER = _SOURCE + "A requester can create at most one Direct Reply-To consumer (basic.consume) per channel."
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


def reply_received(ctx: Context, call: Rpc, what: str, guideline: str = G_REWRITE) -> bool:
    got = receive(call.requester, 1, WAIT)
    ok = bool(got) and got[0].channel == call.req_ch and got[0].body == b"reply" \
        and getattr(got[0].method, "consumer_tag", None) == call.consumer_tag
    return ctx.record(ok, expected=f"basic.deliver of the reply to consumer {call.consumer_tag!r} on channel "
                                   f"{call.req_ch}", observed=got[0].summary() if got else f"nothing within {WAIT:g}s",
                      what=what, level=Level.SHOULD, guideline=guideline)


def declare_on_fresh_channel(peer: Peer, name: str, passive: bool) -> tuple[int, Observation]:
    ch = peer.open_channel()
    return ch, answer(peer, ch, spec.QueueDeclare(queue=name, passive=passive), window=QUICK_WINDOW)


def drop_requester(call: Rpc) -> None:
    """The requester disconnects (orderly connection.close)."""
    call.requester.close()


# ---------------------------------------------------------------------------------- consuming
@case("amqp091/rabbitmq.direct-reply-to/consume-no-ack",
      title="basic.consume from amq.rabbitmq.reply-to in no-ack mode, without declaring it, is accepted",
      requires=DRT, level=Level.SHOULD, guideline=G_CONSUME)
def consume_no_ack(ctx: Context) -> None:
    """Sends basic.consume(queue=amq.rabbitmq.reply-to, no-ack=1) on a new channel, nothing
    declared before: the answer is basic.consume-ok."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(consume_reply_to(peer, ch), Replies("basic.consume-ok", channel=ch))


@case("amqp091/rabbitmq.direct-reply-to/declare-accepted",
      title="queue.declare of amq.rabbitmq.reply-to is answered with declare-ok",
      requires=DRT, level=Level.SHOULD, guideline=G_CONSUME)
def declare_accepted(ctx: Context) -> None:
    """Sends queue.declare(queue=amq.rabbitmq.reply-to) (passive=0) on a new channel: declaring
    the pseudo-queue is not needed but allowed ("although the client can"), so declare-ok."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(answer(peer, ch, spec.QueueDeclare(queue=REPLY_TO), window=QUICK_WINDOW),
              Replies("queue.declare-ok", channel=ch))


@case("amqp091/rabbitmq.direct-reply-to/one-consumer-per-channel",
      title="a second amq.rabbitmq.reply-to consumer on the same channel is refused",
      requires=DRT, level=Level.SHOULD, guideline=G_ONE_CONSUMER)
def one_consumer_per_channel(ctx: Context) -> None:
    """Consumes (no-ack) from amq.rabbitmq.reply-to, then again on the same channel. At most one
    such consumer per channel: the second basic.consume is refused (no code named: any channel
    or connection exception), not answered with consume-ok."""
    peer, ch, _ = requester(ctx)
    ctx.check(consume_reply_to(peer, ch), REFUSED)


@case("amqp091/rabbitmq.direct-reply-to/ack-mode-consume-refused",
      title="an ack-mode consumer on amq.rabbitmq.reply-to is refused (informational)",
      requires=DRT, level=Level.MAY, guideline=G_NOACK)
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
      requires=DRT, level=Level.MAY, guideline=G_SAME_CHANNEL)
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
      requires=DRT, level=Level.SHOULD, guideline=G_REWRITE)
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
      requires=DRT, level=Level.SHOULD, guideline=G_REWRITE)
def reply_delivered(ctx: Context) -> None:
    """After the request/fetch of reply-to-rewritten, the responder publishes a reply to the
    default exchange with the rewritten reply-to as routing key: the requester receives it as a
    basic.deliver to its amq.rabbitmq.reply-to consumer, on the channel it consumes on."""
    call = rpc(ctx)
    reply(call)
    reply_received(ctx, call, "the reply reaches the requester")


@case("amqp091/rabbitmq.direct-reply-to/mandatory-reply-routed",
      title="a mandatory reply to a live requester is delivered without basic.return",
      requires=DRT, level=Level.SHOULD, guideline=G_MANDATORY)
def mandatory_reply_routed(ctx: Context) -> None:
    """The responder publishes the reply with mandatory=1, then probes its channel: a message
    routed only to amq.rabbitmq.reply-to.* counts as routed, so no basic.return comes before the
    probe's reply; and the requester receives the reply."""
    call = rpc(ctx)
    reply(call, mandatory=True)
    obs = after_async(call.responder, call.resp_ch)
    returns = obs.methods("basic.return", call.resp_ch)
    ctx.record(not returns and bool(obs.probe_ok), expected="no basic.return for the mandatory reply",
               observed=obs.describe(), what="the mandatory reply counts as routed")
    reply_received(ctx, call, "the mandatory reply reaches the requester")


@case("amqp091/rabbitmq.direct-reply-to/not-deletable",
      title="queue.delete of amq.rabbitmq.reply-to does not end Direct Reply-To: the reply still arrives",
      requires=DRT, level=Level.SHOULD, guideline=G_NOT_A_QUEUE)
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
    reply_received(ctx, call, "the reply arrives after the delete attempt", guideline=G_NOT_A_QUEUE)


# ---------------------------------------------------------------------------------- requester alive or gone
@case("amqp091/rabbitmq.direct-reply-to/passive-declare-alive",
      title="a passive declare of the rewritten reply-to succeeds (0 messages, 1 consumer) while the requester lives",
      requires=DRT, level=Level.SHOULD, guideline=G_LIVENESS)
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
      requires=DRT, level=Level.SHOULD, guideline=G_LIVENESS)
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
      title="a reply to a requester that disconnected is dropped: no exception, and no basic.return even if mandatory",
      requires=DRT, level=Level.SHOULD, guideline=G_DROPPED)
def reply_to_gone(ctx: Context) -> None:
    """The requester closes its connection; the responder publishes the reply (mandatory=1) to
    the rewritten reply-to and probes its channel. The reply is dropped: the responder's channel
    goes on without an exception; and since routing does not check whether the requester is
    alive, the reply counts as routed: no basic.return."""
    call = rpc(ctx)
    drop_requester(call)
    reply(call, mandatory=True)
    obs = after_async(call.responder, call.resp_ch)
    ctx.check(obs, StaysOpen(), what="the responder's channel goes on")
    returns = obs.methods("basic.return", call.resp_ch)
    ctx.record(not returns, expected="no basic.return for the mandatory reply", observed=obs.describe(),
               what="the reply counts as routed although the requester is gone", level=Level.SHOULD,
               guideline=G_MANDATORY)

