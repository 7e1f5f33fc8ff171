"""2.3.7 Closing, connection.close, channel.close: the closing handshakes seen from the client.

"From this point onwards a peer that wishes to close the channel or connection MUST do so
using a hand-shake protocol" (2.3.7/1) and "The receiving peer MUST respond to a Close with
a Close-Ok, and then both parties can close their channel or connection" (2.3.7/2) bind
the client as much as the broker. The stability rules of connection.close and
channel.close bind the peer that sent Close: after it, "any received methods except Close
and Close-OK MUST be discarded", and a Close that crosses its own "must" be answered with
Close-Ok. Here the client is that peer: amqpspec, playing the broker, crosses its Close or
sends it a delivery before answering, and watches what the client does.

What follows a Close-Ok on a channel is a closed channel: a client that sends content on it
has not closed its channel at all (2.3.7/2).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, spec

from ._client import QUICK, check, open_conversation, unmet
from amqpspec.verify import Replies

HANDSHAKE = ("amqp091:2.3.7/1", "amqp091:2.3.7/2")
CONTENT = ("When a peer sends such a method frame, it always follows it with a content header and zero or more "
           "content body frames.")


def _is(name: str, channel: int | None = None):  # type: ignore[no-untyped-def]
    return lambda f: isinstance(f, MethodFrame) and f.method.NAME == name and (channel is None or f.channel == channel)


def _frames(items: list) -> list:  # type: ignore[type-arg]
    return [f for f in items if not isinstance(f, HeartbeatFrame)]


@case("amqp091/2.3.7/client-answers-connection-close", role="client",
      title="client answers the broker's connection.close with close-ok and nothing else",
      clauses=("amqp091:2.3.7/2",))
def answers_connection_close(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1)
    p.serve(stop=_is("basic.consume"))
    p.peer.close_connection(320, "CONNECTION_FORCED - amqpspec closes the connection")
    obs = p.serve(QUICK * 2)
    frames = _frames(obs.received)
    ok = bool(frames) and isinstance(frames[0], MethodFrame) and frames[0].method.NAME == "connection.close-ok" \
        and frames[0].channel == 0 and len(frames) == 1
    ctx.record(ok, expected="connection.close-ok on channel 0, and nothing after it",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/2.3.7/client-answers-channel-close", role="client",
      title="client answers the broker's channel.close with channel.close-ok",
      clauses=("amqp091:2.3.7/2",))
def answers_channel_close(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1)
    first = p.serve(stop=_is("basic.consume"))
    channel = first.received[-1].channel if first.received else 1
    p.responder.close_channel(channel, 404, "NOT_FOUND - amqpspec closes the channel", 60, 20)
    obs = p.serve(QUICK * 2, stop=_is("channel.close-ok", channel))
    check(ctx, obs, Replies("channel.close-ok", channel))
    p.finish()


@case("amqp091/2.3.7/client-uses-close-handshake", role="client",
      title="client ends its connection with connection.close before closing the socket",
      clauses=("amqp091:2.3.7/1",))
def uses_handshake(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    obs = p.serve()
    closes = obs.methods("connection.close", 0)
    ok = bool(closes) and p.peer.close_ok_sent
    ctx.record(ok, expected="connection.close on channel 0 (answered by our close-ok) before the socket closes",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/2.3.7/no-content-after-channel-close-ok", role="client",
      title="after its channel.close-ok the client sends nothing more on that channel (but a new channel.open)",
      clauses=HANDSHAKE)
def nothing_after_close_ok(ctx: Context) -> None:
    p = open_conversation(ctx, "publish", count=5, body="x" * 64)
    first = p.serve(QUICK * 2, stop=lambda f: len(p.responder.contents) >= 1)
    if not p.responder.contents:
        unmet("a published message to close the channel after", first)
    channel = p.responder.contents[0].channel
    p.responder.close_channel(channel, 406, "PRECONDITION_FAILED - amqpspec closes the channel", 60, 40)
    obs = p.serve(QUICK * 2)
    tail = None
    for i, f in enumerate(obs.received):
        if isinstance(f, MethodFrame) and f.method.NAME == "channel.close-ok" and f.channel == channel:
            tail = obs.received[i + 1:]
            break
    if tail is None:
        ctx.record(False, expected=f"channel.close-ok on channel {channel}", observed=obs.describe(),
                   what="the client answers channel.close", clauses=("amqp091:2.3.7/2",))
        return
    late = [f for f in tail if getattr(f, "channel", 0) == channel and not isinstance(f, HeartbeatFrame)]
    reopened = bool(late) and isinstance(late[0], MethodFrame) and late[0].method.NAME == "channel.open"
    ctx.record(not late or reopened, expected=f"no frame on channel {channel} after its close-ok (unless it opens the channel again)",
               observed="; ".join(f.summary() for f in late[:5]) or "nothing on that channel")
    p.finish()


@case("amqp091/channel.close/client-discards-after-close", role="client",
      title="after sending channel.close the client discards a delivery instead of acknowledging it",
      clauses=("amqp091:channel.close/stability",))
def discards_after_channel_close(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1, ack=True)
    p.responder.preload("amqpspec-q", ["first"])

    def late_delivery(frame: MethodFrame) -> bool:
        consumer = next(iter(p.responder.consumers.values()), None)
        ch = frame.channel
        if consumer is not None:
            p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 99, False, "", consumer.queue)),
                        *p.peer.content_frames(ch, b"after your close"))
        p.peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
        p.responder.after_channel_close.append(frame)  # its close, as a marker
        return False

    # a consumer cancelled by the client would not be delivered to: keep it registered
    def keep_consumer(frame: MethodFrame) -> bool:
        p.peer.send(MethodFrame(frame.channel, spec.BasicCancelOk(frame.method.consumer_tag)))
        return False

    p.responder.on("basic.cancel", keep_consumer)
    p.responder.on("channel.close", late_delivery)
    obs = p.serve()
    closed_at = None
    for i, f in enumerate(obs.received):
        if isinstance(f, MethodFrame) and f.method.NAME == "channel.close":
            closed_at = i
            break
    if closed_at is None:
        unmet("the client closes its channel (precondition)", obs)
    answered = [f for f in obs.received[closed_at + 1:] if isinstance(f, MethodFrame)
                and f.method.NAME in ("basic.ack", "basic.reject", "basic.nack")]
    ctx.record(not answered, expected="no acknowledgement of the delivery received after the client's channel.close",
               observed="; ".join(f.summary() for f in answered) or "the delivery was discarded")
    p.finish()


@case("amqp091/channel.close/client-answers-crossing-close", role="client",
      title="a channel.close crossing the client's own is answered with channel.close-ok",
      clauses=("amqp091:channel.close/stability",))
def crossing_channel_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")

    def cross(frame: MethodFrame) -> bool:
        p.responder.closing.add(frame.channel)
        p.peer.send(MethodFrame(frame.channel, spec.ChannelClose(200, "amqpspec closes too", 0, 0)),
                    MethodFrame(frame.channel, spec.ChannelCloseOk()))
        return False

    p.responder.on("channel.close", cross)
    obs = p.serve()
    crossed = obs.methods("channel.close")
    if not crossed:
        unmet("the client closes its channel (precondition)", obs)
    ch = crossed[0].channel
    # a close-ok may come after the client's connection.close too: the watch keeps what arrives then
    answered = ch in p.responder.channel_close_oks or bool(obs.methods("channel.close-ok", ch))
    ctx.record(answered, expected=f"channel.close-ok on channel {ch} for our crossing close",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/connection.close/client-answers-crossing-close", role="client",
      title="a connection.close crossing the client's own is answered with connection.close-ok",
      clauses=("amqp091:connection.close/stability",))
def crossing_connection_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")

    def cross(frame: MethodFrame) -> bool:
        p.peer.close_connection(200, "amqpspec closes too")
        p.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
        return False

    p.responder.on("connection.close", cross)
    obs = p.serve()
    if not obs.methods("connection.close", 0):
        unmet("the client closes its connection (precondition)", obs)
    ctx.record(bool(obs.methods("connection.close-ok", 0)), expected="connection.close-ok for our crossing close",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/2.3.7/client-answers-channel-close-instead-of-reply", role="client",
      title="a channel.close in place of basic.qos-ok is answered with channel.close-ok",
      clauses=("amqp091:2.3.7/2",))
def channel_close_instead_of_reply(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1, prefetch=1)

    def refuse(frame: MethodFrame) -> bool:
        p.responder.close_channel(frame.channel, 540, "NOT_IMPLEMENTED - amqpspec refuses basic.qos", 60, 10)
        return False

    p.responder.on("basic.qos", refuse)
    obs = p.serve(QUICK * 2, stop=_is("channel.close-ok"))
    if not obs.methods("basic.qos"):
        unmet("basic.qos (prefetch=1)", obs)
    ch = obs.methods("basic.qos")[0].channel
    check(ctx, obs, Replies("channel.close-ok", ch))
    p.finish()


@case("amqp091/2.3.7/client-answers-connection-close-instead-of-open-ok", role="client",
      title="a connection.close in place of channel.open-ok is answered with connection.close-ok",
      clauses=("amqp091:2.3.7/2",))
def connection_close_instead_of_open_ok(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")

    def refuse(frame: MethodFrame) -> bool:
        p.peer.close_connection(530, "NOT_ALLOWED - amqpspec refuses channel.open", 20, 10)
        return False

    p.responder.on("channel.open", refuse)
    obs = p.serve(QUICK * 2)
    if not obs.methods("channel.open"):
        unmet("channel.open", obs)
    check(ctx, obs, Replies("connection.close-ok", 0))
    p.finish()


@case("amqp091/connection.close/client-discards-after-close", role="client",
      title="after sending connection.close the client discards a delivery and a channel.flow instead of answering them",
      clauses=("amqp091:connection.close/stability",))
def discards_after_connection_close(ctx: Context) -> None:
    """Between the client's connection.close and our close-ok we send a delivery (method and
    content) and a channel.flow, both of which a client that had not closed would answer
    (ack, flow-ok). "Any received methods except Close and Close-OK MUST be discarded": from
    its close on, the client sends nothing but heartbeats (and a close-ok to a crossing close)."""
    p = open_conversation(ctx, "consume", count=1, ack=True)
    p.responder.preload("amqpspec-q", ["first"])
    closed: list[MethodFrame] = []

    def late_frames(frame: MethodFrame) -> bool:
        closed.append(frame)
        consumer = next(iter(p.responder.consumer_log), None)
        ch = consumer.channel if consumer is not None else 1
        tag = consumer.tag if consumer is not None else "amq.ctag-amqpspec-1"
        p.peer.send(MethodFrame(ch, spec.BasicDeliver(tag, 99, False, "", "amqpspec-q")),
                    *p.peer.content_frames(ch, b"after your close"),
                    MethodFrame(ch, spec.ChannelFlow(False)))
        return False  # no close-ok yet: the client has time to (wrongly) answer

    p.responder.on("connection.close", late_frames)
    first = p.serve(stop=lambda f: bool(closed))
    if not closed:
        unmet("the client closes its connection (precondition)", first)
    watched = p.serve(QUICK)
    p.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
    p.peer.close_ok_sent = True
    answered = [f for f in _frames(watched.received)
                if not (isinstance(f, MethodFrame) and f.method.NAME in ("connection.close", "connection.close-ok"))]
    ctx.record(not answered, expected=f"nothing but heartbeats for {QUICK:g} s after the client's connection.close "
               "(the delivery and channel.flow we sent discarded)",
               observed="; ".join(f.summary() if hasattr(f, "summary") else repr(f) for f in answered[:4])
               or "the delivery and channel.flow were discarded")
    p.finish()


@case("amqp091/channel.close/client-discards-flow-after-close", role="client",
      title="after sending channel.close the client does not answer a channel.flow on that channel",
      clauses=("amqp091:channel.close/stability",))
def discards_flow_after_channel_close(ctx: Context) -> None:
    """channel.flow asks for an answer (flow-ok) on an open channel; on a channel the client
    is closing it is one of the "received methods" that "MUST be discarded"."""
    p = open_conversation(ctx, "connect")
    closing: list[int] = []

    def flow_first(frame: MethodFrame) -> bool:
        closing.append(frame.channel)
        p.peer.send(MethodFrame(frame.channel, spec.ChannelFlow(False)))
        return False  # no close-ok yet: the client has time to (wrongly) answer

    p.responder.on("channel.close", flow_first)
    first = p.serve(stop=lambda f: bool(closing))
    if not closing:
        unmet("the client closes its channel (precondition)", first)
    ch = closing[0]
    watched = p.serve(QUICK)
    p.peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
    p.serve()
    answered = [f for f in watched.received if isinstance(f, MethodFrame) and f.channel == ch
                and f.method.NAME not in ("channel.close", "channel.close-ok")]
    ctx.record(not answered, expected=f"nothing on channel {ch} for {QUICK:g} s after the client's channel.close "
               "(our channel.flow discarded)",
               observed="; ".join(f.summary() for f in answered[:3]) or "the channel.flow was discarded")
    p.finish()


@case("amqp091/2.3.7/client-answers-channel-close-while-publishing", role="client",
      title="a channel.close arriving while the client sends 20 000-octet contents in 4096-octet frames is "
            "answered with close-ok, after the content in progress",
      clauses=("amqp091:2.3.7/2",))
def answers_close_while_publishing(ctx: Context) -> None:
    """The close comes right after the first content header: the client is between frames of
    a content. It answers close-ok (2.3.7/2) -- and as a content is a header "and zero or
    more content body frames" carried to its end, the close-ok follows the last body frame."""
    p = open_conversation(ctx, "publish", count=3, body="w" * 20_000, handshake={"frame_max": 4096})
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, HeaderFrame))
    headers = [f for f in first.received if isinstance(f, HeaderFrame)]
    if not headers:
        unmet("a published content", first)
    ch = headers[0].channel
    p.responder.close_channel(ch, 406, "PRECONDITION_FAILED - amqpspec closes the channel", 60, 40)
    obs = p.serve(QUICK * 2, stop=_is("channel.close-ok", ch))
    check(ctx, obs, Replies("channel.close-ok", ch))
    # the content in progress at the close-ok: its octets so far against its header's size
    left = headers[0].body_size - sum(len(f.data) for f in first.received if isinstance(f, BodyFrame))
    cut = None
    for f in obs.received:
        if isinstance(f, HeaderFrame) and f.channel == ch:
            left = f.body_size
        elif isinstance(f, BodyFrame) and f.channel == ch:
            left -= len(f.data)
        elif isinstance(f, MethodFrame) and f.method.NAME == "channel.close-ok" and f.channel == ch:
            cut = left
            break
    if cut is not None:
        ctx.record(cut <= 0, expected="close-ok after the last body frame of the content in progress",
                   observed=f"close-ok with {cut} octets of the content still to come" if cut > 0
                   else "close-ok after a complete content", guideline=CONTENT)
    p.finish()


@case("amqp091/2.3.7/client-answers-connection-close-while-publishing", role="client",
      title="a connection.close arriving while the client sends 20 000-octet contents in 4096-octet frames is "
            "answered with close-ok",
      clauses=("amqp091:2.3.7/2",))
def answers_connection_close_while_publishing(ctx: Context) -> None:
    """The close comes right after the first content header, the client between frames of a
    content: "The receiving peer MUST respond to a Close with a Close-Ok" (2.3.7/2)."""
    p = open_conversation(ctx, "publish", count=3, body="v" * 20_000, handshake={"frame_max": 4096})
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, HeaderFrame))
    if not any(isinstance(f, HeaderFrame) for f in first.received):
        unmet("a published content", first)
    p.peer.close_connection(320, "CONNECTION_FORCED - amqpspec closes the connection")
    obs = p.serve(QUICK * 2)
    check(ctx, obs, Replies("connection.close-ok", 0))
    p.finish()
