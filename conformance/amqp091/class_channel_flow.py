"""channel.flow from the client: a new channel is active; pausing stops deliveries, not get-ok.

channel.flow "asks the peer to pause or restart the flow of content data sent by a
consumer" and the server implements it (chassis MUST). With active=0 the server "stops
sending content frames" and confirms with flow-ok(active=0); with active=1 it "starts
sending"; Basic.Get-Ok is not affected. Only the initial-state rule states a server-side
fact (a new channel is active); the flow semantics are in docs without RFC 2119 keywords,
so those checks are guidelines (SHOULD). Pausing deliveries also changes what
queue.declare-ok reports: "consumers can suspend activity (Channel.Flow) in which case they
do not appear in this count".

Not tested here: the server using channel.flow on its own (throttling, basic/03, and
expected-behaviour: it cannot be provoked from outside without exhausting the broker). A
pause sent while the server is sending a content (bidirectional) is in
class_channel_flow_while_sending.py.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import Replies, Verifier
from amqpspec.wire.amqp091 import spec

from ._model import WAIT, declare_queue, fence, message_count, publish, quiet, receive
from ._replies import answer

FLOW_DOC = ("This method asks the peer to pause or restart the flow of content data sent by a consumer. [...] "
            "It does not affect contents returned by Basic.Get-Ok methods.")
ACTIVE_DOC = "If 1, the peer starts sending content frames. If 0, the peer stops sending content frames."
FLOW_OK_DOC = ("Confirms the setting of the processed flow method: 1 means the peer will start sending or continue "
               "to send content frames; 0 means it will not.")
INITIAL = "When a new channel is opened, it is active (flow is active)."
CONSUMER_COUNT = ("Reports the number of active consumers for the queue. Note that consumers can suspend activity "
                  "(Channel.Flow) in which case they do not appear in this count.")
PAUSED_WINDOW = 0.5  # how long a paused channel must stay without deliveries


class FlowOk(Verifier):
    """channel.flow-ok on ``channel`` confirming ``active``, and no close."""

    expects_close = False

    def __init__(self, channel: int, active: bool) -> None:
        self.channel = channel
        self.active = active

    def accepts(self, obs: Observation) -> bool:
        oks = obs.methods("channel.flow-ok", self.channel)
        return bool(oks) and bool(oks[0].method.active) == self.active and obs.connection_close is None

    def describe(self) -> str:
        return f"channel.flow-ok(active={int(self.active)}) on channel {self.channel}"


def flow(peer: Peer, ch: int, active: bool) -> Observation:
    return answer(peer, ch, spec.ChannelFlow(active), "channel.flow-ok")


def require_pause(ctx: Context, ch: int, obs: Observation) -> None:
    """Skips a follow-on case whose pause was not confirmed: the refusal is pause-answered's
    verdict, and a case that cannot pause observes nothing of what it is about."""
    if not FlowOk(ch, False).accepts(obs):
        ctx.skip(f"precondition refused: channel.flow(active=0) was not confirmed ({obs.describe()}); "
                 "judged by amqp091/channel.flow/pause-answered")


def paused_consumer(ctx: Context) -> tuple[Peer, int, int, str, Observation]:
    """A connection with a no-ack consumer on channel ``ch`` of a fresh queue, a second channel
    ``pub`` for publishing, and the observation of channel.flow(active=0) sent on ``ch``."""
    peer = ctx.connect()
    ch = peer.open_channel()
    pub = peer.open_channel()
    queue = declare_queue(ctx, peer, pub)
    peer.call(ch, spec.BasicConsume(queue=queue, no_ack=True))
    return peer, ch, pub, queue, flow(peer, ch, False)


@case("amqp091/channel.flow/new-channel-active", title="a new channel is active: its consumer gets deliveries",
      clauses=("amqp091:channel.flow/initial-state",))
def new_channel_active(ctx: Context) -> None:
    """Opens a channel, consumes (no-ack) from a fresh queue on it and publishes one message on
    it, with no channel.flow ever sent: the message is delivered. The rule is a MAY for clients;
    the sentence checked, that a new channel is active, states the server's side (a guideline,
    weighted SHOULD)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = declare_queue(ctx, peer, ch)
    tag = peer.call(ch, spec.BasicConsume(queue=queue, no_ack=True)).method.consumer_tag  # type: ignore[attr-defined]
    publish(peer, ch, "", queue, b"active")
    others: list = []
    got = receive(peer, 1, WAIT, others=others)
    ok = bool(got) and got[0].channel == ch and getattr(got[0].method, "consumer_tag", "") == tag
    ctx.record(ok, expected=f"basic.deliver to consumer {tag!r} on channel {ch}",
               observed=got[0].summary() if got else f"no delivery within {WAIT:g}s ({len(others)} other frames)",
               guideline=INITIAL, clauses=("amqp091:channel.flow/initial-state",))


@case("amqp091/channel.flow/activate-answered", title="channel.flow(active=1) on a new channel gets flow-ok(active=1)",
      guideline=f"{FLOW_OK_DOC} / {INITIAL}")
def activate_answered(ctx: Context) -> None:
    """Sends channel.flow(active=1) on a new (already active) channel: the server confirms it
    will "continue to send content frames" with channel.flow-ok(active=1)."""
    peer = ctx.connect()
    ch = peer.open_channel()
    ctx.check(flow(peer, ch, True), FlowOk(ch, True))


@case("amqp091/channel.flow/pause-answered", title="channel.flow(active=0) from the client gets flow-ok(active=0)",
      guideline=f"{FLOW_DOC} / {ACTIVE_DOC} / {FLOW_OK_DOC}")
def pause_answered(ctx: Context) -> None:
    """Sends channel.flow(active=0) on a channel with a consumer: the server is asked to stop
    sending content and confirms with channel.flow-ok(active=0). An exception (e.g. 540
    not-implemented) does not pass: the server chassis implements channel.flow, and the method
    is a request to the peer, whichever peer sends it."""
    _, ch, _, _, obs = paused_consumer(ctx)
    ctx.check(obs, FlowOk(ch, False))


@case("amqp091/channel.flow/paused-holds-deliveries",
      title="while paused a consumer gets no deliveries and is not counted; resuming delivers",
      guideline=f"{ACTIVE_DOC} / {FLOW_OK_DOC}")
def paused_holds_deliveries(ctx: Context) -> None:
    """Pauses a channel with a no-ack consumer (flow active=0, flow-ok), publishes one message to
    its queue from another channel: nothing may be delivered on the paused channel for half a
    second, and queue.declare-ok must not count the paused consumer. Then channel.flow(active=1)
    gets flow-ok(active=1) and the held message is delivered."""
    peer, ch, pub, queue, obs = paused_consumer(ctx)
    require_pause(ctx, ch, obs)
    publish(peer, pub, "", queue, b"held")
    fence(peer, pub)
    early = [m for m in quiet(peer, PAUSED_WINDOW) if m.channel == ch]
    ctx.record(not early, expected=f"no basic.deliver on channel {ch} within {PAUSED_WINDOW:g}s of the publish",
               observed=", ".join(m.summary() for m in early) or "nothing delivered",
               what="a paused channel gets no content")
    _, consumers = message_count(peer, pub, queue)
    ctx.record(consumers == 0, expected="queue.declare-ok consumer-count 0 (the only consumer is paused)",
               observed=f"consumer-count {consumers}", what="a paused consumer is not counted",
               guideline=CONSUMER_COUNT)
    if early:
        return
    resumed = flow(peer, ch, True)
    if not ctx.check(resumed, FlowOk(ch, True), what="the resume is confirmed with flow-ok(active=1)"):
        return
    got = [m for m in receive(peer, 1, WAIT) if m.channel == ch]
    ctx.record(bool(got) and got[0].body == b"held", expected=f"the held message is delivered on channel {ch}",
               observed=got[0].summary() if got else f"nothing delivered within {WAIT:g}s",
               what="resuming delivers the held message")


@case("amqp091/channel.flow/paused-get-ok-unaffected",
      title="a paused channel still gets messages with basic.get-ok",
      guideline=FLOW_DOC)
def paused_get_ok(ctx: Context) -> None:
    """Pauses a channel (flow active=0, flow-ok), publishes a message to a queue from another
    channel, and sends basic.get on the paused channel: flow "does not affect contents returned
    by Basic.Get-Ok methods", so get-ok with the message comes back. A refused pause skips the
    case ("precondition refused"), as pause-answered judges it."""
    peer = ctx.connect()
    ch = peer.open_channel()
    pub = peer.open_channel()
    queue = declare_queue(ctx, peer, pub)
    require_pause(ctx, ch, flow(peer, ch, False))
    publish(peer, pub, "", queue, b"get me")
    fence(peer, pub)
    reply = answer(peer, ch, spec.BasicGet(queue=queue, no_ack=True), "basic.get-ok", "basic.get-empty")
    ctx.check(reply, Replies("basic.get-ok", channel=ch), what="basic.get on the paused channel returns the message")

