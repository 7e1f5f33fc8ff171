"""4.2.3 General frame format: more of the frame checks a client makes, and the channels it writes on.

"A peer that receives an oversized frame MUST signal a connection exception with reply code
501 (frame error)" (4.2.3/7) and "Every incoming frame either obeys the agreed limits ... or
exceeds them, in which case the other party IS faulty and MUST be disconnected" (2.3.3/3):
here the oversized frame is a method (channel.open-ok, whose reserved long string can be of
any length), where the cases of 2.3.3 use a header and a body frame.

"When a peer reads a frame it MUST check that the frame-end is valid before attempting to
decode the frame. If the frame-end is not valid it MUST treat this as a fatal protocol error
and close the connection without sending any further data on it" (4.2.3/3, 4.2.3/4): a
method frame whose arguments are cut short *and* whose frame-end is 0x00 tells the two
orders apart -- a client that decodes first meets a syntax error and sends connection.close;
one that checks the end first closes the socket silently. Before connection.open-ok, a bad
frame-end is also an error "prior to sending or receiving Open or Open-Ok", where "a peer
that detects an error MUST close the socket without sending any further data" (2.2.4/1).

"The channel number is 0 for all frames which are global to the connection and 1-65535 for
frames that refer to specific channels": the client's channel and basic methods and its
content frames are never on channel 0.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify import AnyClose, ConnectionException, SilentClose
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, RawFrame, spec

from ._client import QUICK, check, closes_silently_on, open_conversation, unmet

CHANNEL_NUMBERS = ("The channel number is 0 for all frames which are global to the connection and 1-65535 for "
                   "frames that refer to specific channels.")
#: the payload of a basic.deliver whose arguments stop after three octets of its consumer-tag
CUT_SHORT = b"\x00\x3c\x00\x3c\x07amq"


@case("amqp091/4.2.3/client-rejects-oversized-method-frame", role="client",
      title="a channel.open-ok of 8000 octets after frame-max 4096 ends the client's connection, with 501",
      clauses=("amqp091:2.3.3/3", "amqp091:4.2.3/7"))
def oversized_method(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"frame_max": 4096})
    if p.peer.negotiated.frame_max != 4096:
        unmet(f"frame-max 4096 negotiated (the client chose {p.peer.negotiated.frame_max})", p.serve(0.1))
    opened: list[int] = []

    def big_open_ok(frame: MethodFrame) -> bool:
        opened.append(frame.channel)
        p.responder.open_channels.add(frame.channel)
        p.peer.send(MethodFrame(frame.channel, spec.ChannelOpenOk(b"r" * 8000)))
        return False

    p.responder.on("channel.open", big_open_ok)
    obs = p.serve(QUICK * 2)
    if not opened:
        unmet("channel.open", obs)
    check(ctx, obs, AnyClose(), clauses=("amqp091:2.3.3/3",))
    check(ctx, obs, ConnectionException(501), clauses=("amqp091:4.2.3/7",), sets_close=False)
    p.finish()


@case("amqp091/4.2.3/client-checks-frame-end-before-decoding", role="client",
      title="a method frame cut short inside its arguments and ending in 0x00 makes the client close the socket "
            "silently (no syntax-error close)",
      clauses=("amqp091:4.2.3/3", "amqp091:4.2.3/4"))
def frame_end_before_decoding(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1)
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    p.peer.send(RawFrame(consumer.channel, type=1, data=CUT_SHORT, end=0))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, SilentClose())
    p.finish()


@case("amqp091/2.2.4/client-closes-on-bad-frame-end-before-open", role="client",
      title="a connection.tune ending in 0x00 instead of 0xCE makes the client close the socket without sending anything",
      clauses=("amqp091:2.2.4/1", "amqp091:4.2.3/4"))
def bad_frame_end_before_open(ctx: Context) -> None:
    closes_silently_on(ctx, "start-ok", MethodFrame(0, spec.ConnectionTune(2047, 131072, 0), end=0))


@case("amqp091/2.2.4/client-closes-on-start-on-channel-1", role="client",
      title="connection.start on channel 1 makes the client close the socket without sending anything",
      clauses=("amqp091:2.2.4/1",))
def start_on_channel_one(ctx: Context) -> None:
    """4.2.3/9 asks for a connection exception (503) for a connection method on a channel
    other than 0; before open, 2.2.4/1 leaves no close method to send it with: the socket
    alone ends, as in the case of connection.tune on channel 1."""
    closes_silently_on(ctx, "header", MethodFrame(1, spec.ConnectionStart(0, 9, {"product": "amqpspec"},
                                                                     b"PLAIN AMQPLAIN", b"en_US")))


@case("amqp091/4.2.3/client-channel-frames-on-nonzero-channel", role="client",
      title="the client sends channel- and basic-class methods and content frames on channels 1-65535 only (rpc workload)",
      guideline=CHANNEL_NUMBERS)
def channel_frames_nonzero(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    methods = [f for f in obs.received if isinstance(f, MethodFrame) and f.method.CLASS_ID != 10]
    if not methods:
        unmet("a channel or basic method from the client", obs)
    wrong = [f.summary() for f in obs.received
             if (isinstance(f, MethodFrame) and f.method.CLASS_ID != 10 or isinstance(f, (HeaderFrame, BodyFrame)))
             and f.channel == 0]
    ctx.record(not wrong, expected="every non-connection method and content frame on a channel from 1 to 65535",
               observed="; ".join(wrong[:3]) or f"{len(methods)} channel/basic method(s), none on channel 0",
               guideline=CHANNEL_NUMBERS)
    p.finish()
