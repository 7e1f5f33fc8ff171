"""The channel class rules of the 0-9-1 XML: channel.open state, channel.close stability.

A channel must be opened before use and only once (channel.open/state, on failure
channel-error 504, a hard error: a connection exception). Once a peer has sent
channel.close, it discards every method on that channel but Close and Close-Ok, and a
Close crossing its own is answered with Close-Ok (channel.close/stability).
"""
from __future__ import annotations

from amqpspec.case import Context, case, close_info
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ConnectionException, Replies, Verifier, code_name
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._common import DISCARD_WINDOW, QUICK_WINDOW, REACTION_WINDOW, with_channel
from ._replies import is_method

CHANNEL_ERROR = ("channel-error (504): The client attempted to work with a channel that had not been "
                 "correctly opened. This most likely indicates a fault in the client layer.")
CHANNEL_ZERO = ("The channel number is 0 for all frames which are global to the connection and 1-65535 for "
                "frames that refer to specific channels.")
CLOSE_OK_DOC = ("This method confirms a Channel.Close method and tells the recipient that it is safe to "
                "release resources for the channel.")


# ---------------------------------------------------------------------------------- channel.open
@case("amqp091/channel.open/already-open", title="channel.open on an already-open channel is connection exception 504",
      clauses=("amqp091:channel.open/state",))
def open_already_open(ctx: Context) -> None:
    """Opens channel 1 and sends channel.open on it again (the rule's scenario). The rule's
    on-failure is channel-error, a hard error: connection.close with 504."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, spec.ChannelOpen()))
    ctx.check(peer.observe(REACTION_WINDOW, stop=is_method("channel.open-ok")), ConnectionException(504))


@case("amqp091/channel.open/never-opened-channel",
      title="a method on a channel never opened is connection exception 504 (channel-error)",
      guideline=CHANNEL_ERROR)
def never_opened(ctx: Context) -> None:
    """Sends basic.qos (harmless, answered by qos-ok on an open channel) on channel 1 without
    channel.open first: that is working with a channel that was not opened, which is what 504 means."""
    peer = ctx.connect()
    peer.send(MethodFrame(1, spec.BasicQos(0, 10, False)))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("basic.qos-ok", "channel.close"))
    ctx.check(obs, ConnectionException(504))


@case("amqp091/channel.open/channel-zero", title="channel.open on channel 0 is a connection exception (503/504)",
      guideline=CHANNEL_ZERO)
def open_channel_zero(ctx: Context) -> None:
    """Sends channel.open on channel 0, which carries only connection-global frames; passes on a
    connection exception 504 (channel-error) or 503 (command-invalid)."""
    peer = ctx.connect()
    peer.send(MethodFrame(0, spec.ChannelOpen()))
    ctx.check(peer.observe(REACTION_WINDOW, stop=is_method("channel.open-ok", "channel.close")),
              ConnectionException(504, 503))


# ---------------------------------------------------------------------------------- channel.close
def provoke_channel_close(ctx: Context) -> tuple[Peer, int, spec.ChannelClose]:
    """Makes the broker close a channel (passive queue.declare of a queue that does not exist),
    leaving its channel.close unanswered. Skips when the broker does not close the channel."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, spec.QueueDeclare(queue=ctx.name("missing"), passive=True)))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("channel.close", "connection.close", "queue.declare-ok"))
    close = obs.channel_close(ch)
    if close is None:
        ctx.skip(f"could not provoke a channel.close (passive declare of a missing queue gave: {obs.describe()})")
    ctx.note(f"broker sent channel.close {code_name(close.reply_code)}")
    ctx.close = close_info(obs, None, True)  # the close verdict is the provoked close
    return peer, ch, close


class DiscardedOnChannel(Verifier):
    """Nothing more on the closing channel, and the connection goes on (the liveness probe on a
    fresh channel, sent after close-ok, was answered)."""

    expects_close = False

    def __init__(self, channel: int, forbidden: str) -> None:
        self.channel = channel
        self.forbidden = forbidden

    def accepts(self, obs: Observation) -> bool:
        return not obs.methods(channel=self.channel) and bool(obs.probe_ok) and obs.connection_close is None \
            and not obs.closed

    def describe(self) -> str:
        return (f"no {self.forbidden} (nothing more on channel {self.channel}): the method was discarded, "
                "and the connection goes on")


@case("amqp091/channel.close/discards-after-close",
      title="after sending channel.close the broker discards other methods on the channel",
      clauses=("amqp091:channel.close/stability",))
def channel_close_discards(ctx: Context) -> None:
    """Provokes a channel.close (404 on a passive declare), then before answering close-ok sends
    basic.qos (answered by qos-ok on an open channel) on that channel. The broker must discard the
    qos: nothing more may come on the channel, in the second we give it before answering close-ok
    nor up to a liveness probe on a fresh channel after it, which must be answered (the broker
    goes on). Brokers may reorder replies across channels, hence the second before close-ok."""
    peer, ch, _ = provoke_channel_close(ctx)
    peer.send(MethodFrame(ch, spec.BasicQos(0, 10, False)))
    before = peer.observe(DISCARD_WINDOW, stop=lambda item: isinstance(item, MethodFrame) and item.channel == ch)
    if before.closed or before.connection_close is not None:
        obs = before
    else:
        peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
        after = peer.observe(REACTION_WINDOW, probe=True)
        obs = Observation(received=before.received + after.received, end=after.end,
                          framing_error=before.framing_error or after.framing_error,
                          elapsed=before.elapsed + after.elapsed, probe_ok=after.probe_ok)
    ctx.check(obs, DiscardedOnChannel(ch, "basic.qos-ok"), sets_close=False)


@case("amqp091/channel.close/close-crossing",
      title="a channel.close answering the broker's channel.close gets channel.close-ok",
      clauses=("amqp091:channel.close/stability", "amqp091:2.3.7/2"))
def channel_close_crossing(ctx: Context) -> None:
    """Provokes a channel.close and answers it with our own channel.close (both peers closing at
    once). "The response to receiving a Close after sending Close must be to send Close-Ok"
    (stability), and 2.3.7/2: the receiver MUST respond to a Close with Close-Ok."""
    peer, ch, _ = provoke_channel_close(ctx)
    peer.send(MethodFrame(ch, spec.ChannelClose(200, "amqpspec closes too", 0, 0)))
    obs = peer.observe(QUICK_WINDOW, stop=is_method("channel.close-ok", "connection.close"))
    ctx.check(obs, Replies("channel.close-ok", channel=ch), sets_close=False)


@case("amqp091/channel.close-ok/channel-reusable",
      title="after channel.close / close-ok the channel number can be opened again",
      guideline=CLOSE_OK_DOC)
def channel_reusable(ctx: Context) -> None:
    """Opens channel 1, closes it (close / close-ok), and sends channel.open on channel 1 again:
    the resources of the closed channel are released, so it is not "already-opened" and the
    broker answers channel.open-ok."""
    peer, ch = with_channel(ctx)
    peer.call(ch, spec.ChannelClose(200, "amqpspec done", 0, 0), "channel.close-ok")
    peer.send(MethodFrame(ch, spec.ChannelOpen()))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("channel.open-ok", "channel.close"))
    ctx.check(obs, Replies("channel.open-ok", channel=ch))
