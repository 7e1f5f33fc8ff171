"""The channel class and channel numbers, from the client's side.

"The client MUST NOT use this method on an already-opened channel" (channel.open/state).
The channel-max the client settles in tune-ok is "the highest channel number" it may use:
with 1 agreed, a client opens channel 1 only. channel.flow from the server "asks the peer
to pause or restart the flow of content data": "When sending content frames, a peer SHOULD
monitor the channel for incoming methods and respond to a Channel.Flow as rapidly as
possible" (channel.flow/bidirectional) -- here within two seconds, while it publishes.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._client import QUICK, open_conversation, stopped_on_open, unmet

REPLY_CODE = "The reply code. The AMQ reply codes are defined as constants at the start of this formal specification."
USABLE = "Specifies highest channel number that the server permits.  Usable channel numbers are in the range 1..channel-max."


@case("amqp091/channel.open/client-never-reopens-open-channel", role="client",
      title="the client never sends channel.open for a channel that is open (rpc workload)",
      clauses=("amqp091:channel.open/state",))
def never_reopens(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    reopened: list[str] = []

    def opening(frame: MethodFrame) -> None:
        if frame.channel in p.responder.open_channels:
            reopened.append(frame.summary())
        return None  # the default answer follows

    p.responder.on("channel.open", opening)
    obs = p.serve()
    opens = obs.methods("channel.open")
    if not opens:
        unmet("channel.open", obs)
    ctx.record(not reopened, expected="each channel.open on a channel that is not open",
               observed="; ".join(reopened) or f"{len(opens)} channel.open, each on a closed channel number")
    p.finish()


@case("amqp091/4.3/client-uses-channels-within-channel-max", role="client",
      title="with channel-max 1 agreed the client uses channel 1 only",
      guideline=USABLE)
def within_channel_max(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc", handshake={"channel_max": 1})
    agreed = p.peer.negotiated.channel_max
    obs = p.serve()
    used = sorted({getattr(f, "channel", 0) for f in obs.received} - {0})
    if not used:
        unmet("frames on a channel", obs)
    over = [c for c in used if agreed and c > agreed]
    ctx.record(not over, expected=f"channel numbers 1..{agreed}", observed=f"channels used: {used}", guideline=USABLE)
    p.finish()


@case("amqp091/channel.flow/client-answers-flow", role="client",
      title="a channel.flow(active=false) from the server while the client publishes is answered with flow-ok",
      clauses=("amqp091:channel.flow/bidirectional",))
def answers_flow(ctx: Context) -> None:
    p = open_conversation(ctx, "publish", count=20, body="f" * 256)
    first = p.serve(QUICK * 2, stop=lambda f: len(p.responder.contents) >= 1)
    if not p.responder.contents:
        unmet("a published message", first)
    ch = p.responder.contents[0].channel
    p.peer.send(MethodFrame(ch, spec.ChannelFlow(False)))
    sent = time.monotonic()
    obs = p.serve(QUICK, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "channel.flow-ok")
    oks = obs.methods("channel.flow-ok", ch)
    ctx.record(bool(oks) and oks[0].method.active is False,
               expected=f"channel.flow-ok(active=false) on channel {ch} within {QUICK:g} s",
               observed=(f"{oks[0].summary()} after {time.monotonic() - sent:.2f} s" if oks
                         else obs.describe().replace("by broker", "by the client")))
    p.peer.send(MethodFrame(ch, spec.ChannelFlow(True)))
    p.serve()
    p.finish()


@case("amqp091/channel.close/client-closes-with-defined-reply-code", role="client",
      title="the client's own channel.close and connection.close carry reply codes the specification defines",
      guideline=REPLY_CODE)
def defined_reply_codes(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    obs = p.serve()
    closes = obs.methods("channel.close") + obs.methods("connection.close")
    if not closes:
        unmet("channel.close or connection.close from the client", obs)
    undefined = [f.summary() for f in closes if f.method.reply_code not in spec.REPLY_CODES]
    ctx.record(not undefined, expected="reply codes from the spec's constants (200 reply-success for a normal close)",
               observed="; ".join(undefined) or "; ".join(f.summary() for f in closes), guideline=REPLY_CODE)
    p.finish()


FLOW_ACTIVE = "If 1, the peer starts sending content frames. If 0, the peer stops sending content frames."
FLOW_COUNT = 40


@case("amqp091/channel.flow/client-holds-content-while-stopped", role="client",
      title="a channel stopped by channel.flow(active=false) right after its open-ok carries no content until "
            "flow(active=true)",
      guideline=FLOW_ACTIVE)
def holds_content_while_stopped(ctx: Context) -> None:
    """We answer channel.open with open-ok and, at once, channel.flow(active=false), before
    the publish workload has sent anything; then we watch the channel for one second from the
    client's flow-ok (its answer says it knows; content it sent before that is not counted).
    A client that never answers is watched from two seconds after our flow: by then it has
    had time to stop. Then we restart the flow and let the workload end."""
    p = open_conversation(ctx, "publish", count=FLOW_COUNT, body="f" * 256)
    answer, ch = stopped_on_open(p)
    oks = answer.methods("channel.flow-ok", ch)
    before = len(answer.methods("basic.publish", ch))
    if before >= FLOW_COUNT:
        unmet(f"the client still publishing when it answered the stop (all {FLOW_COUNT} sent before flow-ok)", answer)
    watched = p.serve(QUICK / 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.publish")
    sent = watched.methods("basic.publish", ch)
    ended = [f.summary() for f in answer.methods() + watched.methods()
             if f.method.NAME in ("channel.close", "connection.close")]
    if not sent and (ended or answer.closed or watched.closed):
        # a client that left sent nothing, but not because it held its content
        unmet("the client keeping its channel open through the stop", watched if ended else answer)
    p.peer.send(MethodFrame(ch, spec.ChannelFlow(True)))
    p.serve()
    since = "its channel.flow-ok" if oks else f"{QUICK:g} s after our channel.flow (no flow-ok came)"
    ctx.record(not sent, expected=f"no basic.publish on channel {ch} for {QUICK / 2:g} s from {since}",
               observed="; ".join(f.summary() for f in sent[:2])
               or f"none ({before} published before its flow-ok)", guideline=FLOW_ACTIVE)
    p.finish()
