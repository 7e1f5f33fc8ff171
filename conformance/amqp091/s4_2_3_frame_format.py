"""Spec 4.2.3 General Frame Format: frame-end, frame types, frame size, channel zero.

Every frame is ``type(octet) channel(short) size(long) payload frame-end(%xCE)``. The
receiver checks the frame-end before decoding (4.2.3/3); a bad frame-end or an undefined
frame type is a fatal protocol error, and the connection is closed *without sending any
further data* (4.2.3/2, /4) -- so a connection.close 501 sent first does not conform. A
frame larger than the negotiated frame-max is a connection exception 501 (4.2.3/7) and the
sender "IS faulty and MUST be disconnected" (2.3.3/3); frame-max counts the 7-octet header
and the frame-end ("including frame header and end-byte", connection.tune frame-max).
Heartbeat frames and connection-class frames travel on channel 0 only; anything else is a
connection exception 503 (4.2.3/8, /9) -- 4.2.7/2 names 501 for an invalid heartbeat frame,
so a heartbeat on another channel accepts either code.

After the opening handshake, cases that expect a close follow the faulty frame with a
basic.qos on the same channel (or a channel.open on a fresh one for channel-0 frames): a
broker that ignores the fault answers it at once, and the case ends without waiting out its
window. The qos is never what is judged.
"""
from __future__ import annotations

from dataclasses import replace

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import AnyOf, ConnectionException, SilentClose, StaysOpen, Verifier
from amqpspec.wire.amqp091 import FRAME_END, BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, RawFrame, spec

from ._common import REACTION_WINDOW, get_message, private_queue, publish_frames, with_channel

FRAME_END_BAD = ("amqp091:4.2.3/3", "amqp091:4.2.3/4")
UNDEFINED_TYPE = ("amqp091:4.2.3/2",)
OVERSIZED = ("amqp091:4.2.3/7", "amqp091:2.3.3/3")
AT_LIMIT = ("amqp091:connection.tune-ok.frame-max/minimum", "amqp091:2.3.3/3")
CHANNEL_ZERO = ("amqp091:4.2.3/8", "amqp091:4.2.3/9")

FRAME_MAX = 4096            # frame-min-size: the smallest frame-max a peer may negotiate
PARTIAL_WINDOW = 1.0        # how long a partial frame is left unfinished


def _declare(ctx: Context, **arguments: object) -> spec.QueueDeclare:
    """An exclusive, auto-delete queue.declare with a name of the case's own (not server-named:
    some brokers refuse an empty name, and their refusal would hide the reaction looked for).
    Whatever a broker makes of it goes with the connection, and is deleted after the case."""
    name = ctx.name("q")
    if ("queue", name) not in ctx.cleanup:
        ctx.will_delete("queue", name)
    return spec.QueueDeclare(queue=name, exclusive=True, auto_delete=True, arguments=arguments or None)


def _padded_declare(ctx: Context, channel: int, total: int) -> MethodFrame:
    """A queue.declare frame of exactly ``total`` octets (header and frame-end included),
    padded with one long-string argument."""
    def frame(pad: int) -> MethodFrame:
        return MethodFrame(channel, _declare(ctx, **{"x-amqpspec-pad": "x" * pad}))

    pad = total - len(frame(0).encode())
    result = frame(pad)
    assert len(result.encode()) == total
    return result


def _data(item: object) -> bool:
    """Anything but a heartbeat: once the broker sends it, a silent close is ruled out."""
    return not isinstance(item, HeartbeatFrame)


def _silent_close_observed(peer: Peer, channel: int | None = None) -> Observation:
    """Observes until the socket closes or the broker sends anything (which already rules out
    the silent close these cases expect, so there is no point waiting for the socket).

    With ``channel`` (an open channel) a basic.qos follows the stimulus on it, and with
    ``channel=0`` a channel.open on a fresh channel: a broker that ignores the faulty frame
    answers it at once instead of letting the whole window pass. Before open, no follow-up.
    """
    if channel:
        peer.send(MethodFrame(channel, spec.BasicQos(0, 0, False)))
    elif channel == 0:
        peer.send(MethodFrame(peer.free_channel(), spec.ChannelOpen()))
    return peer.observe(REACTION_WINDOW, stop=_data)


def _observe_channel(peer: Peer, channel: int) -> Observation:
    """Observes the reaction to what was just sent on ``channel``, ending as soon as it is
    known. A basic.qos sent after it on the same channel is answered only once the broker has
    processed the earlier frames of that channel without closing anything; a liveness probe on
    a fresh channel would not prove that on brokers that run each channel concurrently."""
    peer.send(MethodFrame(channel, spec.BasicQos(0, 0, False)))
    return peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame) and (
        (item.method.NAME == "basic.qos-ok" and item.channel == channel)
        or item.method.NAME in ("connection.close", "channel.close")))


# ---------------------------------------------------------------------------- frame-end
@case("amqp091/4.2.3/frame-end-zero", title="a method frame ending in 0x00 closes the connection silently",
      clauses=FRAME_END_BAD)
def frame_end_zero(ctx: Context) -> None:
    """Sends queue.declare on an open channel with the frame-end octet 0x00 instead of 0xCE.
    Passes only when the broker closes the socket without sending anything (no close method)."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, _declare(ctx), end=0x00))
    ctx.check(_silent_close_observed(peer, ch), SilentClose())


@case("amqp091/4.2.3/frame-end-cd", title="a method frame ending in 0xCD closes the connection silently",
      clauses=FRAME_END_BAD)
def frame_end_cd(ctx: Context) -> None:
    """Sends queue.declare with frame-end 0xCD, one bit away from 0xCE. Passes only when the
    broker closes the socket without sending anything."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, _declare(ctx), end=0xCD))
    ctx.check(_silent_close_observed(peer, ch), SilentClose())


@case("amqp091/4.2.3/frame-end-missing", title="a frame without frame-end, followed by a valid frame, closes silently",
      clauses=FRAME_END_BAD)
def frame_end_missing(ctx: Context) -> None:
    """Sends queue.declare without any frame-end octet, immediately followed by a valid
    queue.declare frame: the octet where the frame-end must be is 0x01 (the next frame's
    type). Passes only when the broker closes the socket without sending anything."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, _declare(ctx), end=b""), MethodFrame(ch, _declare(ctx)))
    ctx.check(_silent_close_observed(peer, ch), SilentClose())


@case("amqp091/4.2.3/frame-end-body", title="a content body frame ending in 0x00 closes the connection silently",
      clauses=FRAME_END_BAD)
def frame_end_body(ctx: Context) -> None:
    """Publishes a 16-octet message to the default exchange whose body frame ends in 0x00.
    Passes only when the broker closes the socket without sending anything."""
    peer, ch = with_channel(ctx)
    frames = publish_frames(ch, ctx.name("unrouted"), b"amqpspec-body-16")
    frames[-1] = BodyFrame(ch, frames[-1].data, end=0x00)
    peer.send(*frames)
    ctx.check(_silent_close_observed(peer, ch), SilentClose())


@case("amqp091/4.2.3/frame-end-heartbeat", title="a heartbeat frame ending in 0x00 closes the connection silently",
      clauses=FRAME_END_BAD)
def frame_end_heartbeat(ctx: Context) -> None:
    """Sends a heartbeat frame (type 8, channel 0, no payload) ending in 0x00 on an open
    connection. 4.2.3/3 has the frame-end checked *before* the frame is decoded, so the frame
    never becomes a heartbeat (whose errors 4.2.7/2 answers with 501): it is a framing error.
    Passes only when the broker closes the socket without sending anything."""
    peer = ctx.connect()
    peer.send(HeartbeatFrame(0, end=0x00))
    ctx.check(_silent_close_observed(peer, 0), SilentClose())


@case("amqp091/4.2.3/frame-end-handshake", title="a start-ok ending in 0x00 closes the socket without any data",
      clauses=FRAME_END_BAD + ("amqp091:2.2.4/1",))
def frame_end_handshake(ctx: Context) -> None:
    """Answers connection.start with a correct start-ok (valid credentials) whose frame-end is
    0x00. Before open/open-ok an error must close the socket without further data (2.2.4/1),
    and a bad frame-end always must (4.2.3/4). Passes only on a silent close."""
    peer = ctx.connect(handshake=False)
    peer.handshake(upto="start")
    peer.send(replace(peer.start_ok(), end=0x00))
    ctx.check(_silent_close_observed(peer), SilentClose())


@case("amqp091/4.2.3/size-too-small", title="a size field shorter than the payload puts a non-frame-end octet "
      "where the frame-end must be: silent close", clauses=FRAME_END_BAD)
def size_too_small(ctx: Context) -> None:
    """Sends queue.declare whose size field is 3 octets smaller than its payload: the octet
    the broker finds at the frame-end position is part of the arguments (never 0xCE). Passes
    only when the broker closes the socket without sending anything."""
    peer, ch = with_channel(ctx)
    frame = MethodFrame(ch, _declare(ctx))
    payload = frame.payload()
    cut = len(payload) - 3
    while payload[cut] == FRAME_END:  # the lying size must land on a non-0xCE octet
        cut -= 1
    peer.send(MethodFrame(ch, _declare(ctx), size=cut))
    ctx.check(_silent_close_observed(peer, ch), SilentClose())


class NotActedOn(Verifier):
    """The broker did not act on an unfinished frame: no method at all came in the window."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:
        return not obs.methods()

    def describe(self) -> str:
        return "no reply (queue.declare-ok, channel.close, ...): the frame is not decoded before its frame-end arrives"


@case("amqp091/4.2.3/partial-frame", title="a frame whose size field promises more octets is not decoded early",
      clauses=("amqp091:4.2.3/3",))
def partial_frame(ctx: Context) -> None:
    """Sends a complete, valid queue.declare frame (payload and 0xCE) whose size field
    announces 64 more octets than follow, then keeps the socket open without sending more.
    The frame-end has not arrived, so the broker cannot have checked it (4.2.3/3) and must
    not act on the frame: passes when no method (declare-ok or any other) comes within a
    one-second window."""
    peer, ch = with_channel(ctx)
    frame = MethodFrame(ch, _declare(ctx))
    peer.send(MethodFrame(ch, _declare(ctx), size=len(frame.payload()) + 64))
    obs = peer.observe(PARTIAL_WINDOW, stop=lambda item: isinstance(item, MethodFrame))
    ctx.check(obs, NotActedOn())


# ---------------------------------------------------------------------------- frame types
def _undefined_type(type_: int) -> None:
    def run(ctx: Context) -> None:
        peer, ch = with_channel(ctx)
        # a plausible payload: a valid queue.declare method payload
        peer.send(RawFrame(ch, type=type_, data=_declare(ctx).encode()))
        ctx.check(_silent_close_observed(peer, ch), SilentClose())

    run.__doc__ = (f"Sends a frame of the undefined type {type_} on an open channel, carrying a valid "
                   "queue.declare payload and a correct frame-end. Passes only when the broker closes "
                   "the socket without sending anything.")
    run.__name__ = f"undefined_type_{type_}"
    case(f"amqp091/4.2.3/undefined-type-{type_}",
         title=f"a frame of undefined type {type_} closes the connection silently", clauses=UNDEFINED_TYPE)(run)


for _t in (0, 7, 9, 255):
    _undefined_type(_t)


@case("amqp091/4.2.3/type-4", title="a frame of type 4 (HEARTBEAT in the 4.2.3 prose, undefined in the XML) is "
      "discarded or closes the connection silently", clauses=UNDEFINED_TYPE + ("amqp091:4.2.7/3",))
def type_4(ctx: Context) -> None:
    """Sends ``4 0 0 frame-end`` (an empty frame of type 4 on channel 0) on an open connection
    with heartbeats off. The 4.2.3 prose lists "Type = 4, HEARTBEAT", while the XML constant
    frame-heartbeat and the 4.2.x grammar ("heartbeat = %d8 %d0 %d0 frame-end") say 8. A broker
    reading the prose takes it for a heartbeat and must discard it (4.2.7/3: stays open); one
    following the XML finds an undefined type and must close without further data (4.2.3/2).
    Both pass; a close method does not."""
    peer = ctx.connect()
    peer.send(RawFrame(0, type=4))
    ctx.check(peer.observe(REACTION_WINDOW, probe=True, stop=_data), AnyOf(SilentClose(), StaysOpen()))


# ---------------------------------------------------------------------------- frame size
def _publish_body(ctx: Context, total: int) -> tuple[Peer, int, str, bytes]:
    """Negotiates frame-max 4096 and publishes to a queue of the case's own (exclusive) one
    message in a single body frame of ``total`` octets (header and frame-end included)."""
    peer, ch = with_channel(ctx, frame_max=FRAME_MAX)
    queue = peer.call(ch, _declare(ctx)).method.queue  # type: ignore[attr-defined]
    body = ctx.rng.randbytes(total - 8)
    frames = publish_frames(ch, queue, body)
    assert len(frames[-1].encode()) == total
    peer.send(*frames)
    return peer, ch, queue, body


@case("amqp091/4.2.3/oversized-body-frame", title="a body frame one octet over frame-max is a connection "
      "exception 501", clauses=OVERSIZED)
def oversized_body_frame(ctx: Context) -> None:
    """Negotiates frame-max 4096, then publishes to an exclusive queue a message whose single
    body frame is 4097 octets long (4089 payload + 7 header + frame-end), followed by a
    basic.qos on the same channel. Passes on connection.close with 501 (frame-error); a
    basic.qos-ok means the broker took the frame."""
    peer, ch, _, _ = _publish_body(ctx, FRAME_MAX + 1)
    ctx.check(_observe_channel(peer, ch), ConnectionException(501))


@case("amqp091/4.2.3/oversized-body-frame-double", title="a body frame of twice frame-max is a connection "
      "exception 501", clauses=OVERSIZED)
def oversized_body_frame_double(ctx: Context) -> None:
    """Like oversized-body-frame, with a body frame of 8192 octets (twice the negotiated 4096),
    so that a broker tolerating a few octets over the limit is told apart from one that does
    not check at all. Passes on connection.close with 501."""
    peer, ch, _, _ = _publish_body(ctx, 2 * FRAME_MAX)
    ctx.check(_observe_channel(peer, ch), ConnectionException(501))


@case("amqp091/4.2.3/oversized-method-frame", title="a method frame one octet over frame-max is a connection "
      "exception 501", clauses=OVERSIZED)
def oversized_method_frame(ctx: Context) -> None:
    """Negotiates frame-max 4096, then sends a queue.declare (server-named, exclusive) padded
    with a long-string argument to 4097 octets, followed by a basic.qos on the same channel.
    Passes on connection.close with 501; queue.declare-ok means the broker took the frame."""
    peer, ch = with_channel(ctx, frame_max=FRAME_MAX)
    peer.send(_padded_declare(ctx, ch, FRAME_MAX + 1))
    ctx.check(_observe_channel(peer, ch), ConnectionException(501))


class ChannelGoesOn(Verifier):
    """No exception: a basic.qos sent after the stimulus on the same channel is answered."""

    expects_close = False

    def __init__(self, channel: int) -> None:
        self.channel = channel

    def accepts(self, obs: Observation) -> bool:
        return bool(obs.methods("basic.qos-ok", self.channel)) and obs.connection_close is None \
            and obs.channel_close() is None and not obs.closed

    def describe(self) -> str:
        return (f"no exception: the broker goes on (answers a basic.qos sent next on channel {self.channel}), "
                "connection open")


@case("amqp091/4.2.3/body-frame-at-frame-max", title="a body frame of exactly frame-max octets is accepted "
      "and delivered intact", clauses=AT_LIMIT + ("amqp091:2.3.3/5",))
def body_frame_at_frame_max(ctx: Context) -> None:
    """Negotiates frame-max 4096 and publishes to an exclusive queue a message whose single body
    frame is exactly 4096 octets (4088 payload), then a basic.qos on the same channel. The
    frame obeys the agreed limit: the broker must go on (basic.qos-ok), and basic.get must
    return the 4088 octets unchanged."""
    peer, ch, queue, body = _publish_body(ctx, FRAME_MAX)
    if not ctx.check(_observe_channel(peer, ch), ChannelGoesOn(ch), what="the frame is accepted"):
        return
    got = get_message(peer, ch, queue)
    delivered = b"" if got is None else got[2]
    ctx.record(delivered == body, expected=f"basic.get-ok with the {len(body)} octets published",
               observed="basic.get-empty" if got is None else
               f"basic.get-ok with {len(delivered)} octets{'' if delivered == body else ' (different content)'}",
               what="the message arrives intact", clauses=AT_LIMIT + ("amqp091:3.1.1/1",))


class Processed(Verifier):
    """The broker decoded the frame and answered it on its channel: the reply, or a channel
    exception (the arguments of queue.declare are implementation-defined and may be refused)."""

    expects_close = False

    def __init__(self, reply: str, channel: int) -> None:
        self.reply, self.channel = reply, channel

    def accepts(self, obs: Observation) -> bool:
        return obs.connection_close is None and bool(obs.methods(self.reply, self.channel)
                                                      or obs.channel_close(self.channel))

    def describe(self) -> str:
        return f"{self.reply} on channel {self.channel} (or a channel exception refusing the argument)"


@case("amqp091/4.2.3/method-frame-at-frame-max", title="a method frame of exactly frame-max octets is accepted",
      clauses=AT_LIMIT)
def method_frame_at_frame_max(ctx: Context) -> None:
    """Negotiates frame-max 4096 and sends a queue.declare (server-named, exclusive) padded
    with a long-string argument to exactly 4096 octets. Passes when the broker answers on the
    channel (declare-ok, or a channel exception if it refuses the unknown argument) without a
    connection exception."""
    peer, ch = with_channel(ctx, frame_max=FRAME_MAX)
    peer.send(_padded_declare(ctx, ch, FRAME_MAX))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame)
                       and item.method.NAME in ("queue.declare-ok", "channel.close", "connection.close"))
    ctx.check(obs, Processed("queue.declare-ok", ch))


# ---------------------------------------------------------------------------- channel zero
@case("amqp091/4.2.3/heartbeat-nonzero-channel", title="a heartbeat on channel 1 is a connection exception "
      "503 (4.2.3) or 501 (4.2.7)", clauses=CHANNEL_ZERO + ("amqp091:4.2.7/1", "amqp091:4.2.7/2"))
def heartbeat_nonzero_channel(ctx: Context) -> None:
    """Sends a heartbeat frame on open channel 1. 4.2.3/9 asks for 503 (command-invalid) for a
    heartbeat on a non-zero channel; 4.2.7/2 asks for 501 (frame-error) for an invalid heartbeat
    frame, which this is by 4.2.7/1. Either code passes (a basic.qos follows on channel 1, so a
    broker that ignores the heartbeat is seen at once)."""
    peer, ch = with_channel(ctx)
    peer.send(HeartbeatFrame(ch))
    ctx.check(_observe_channel(peer, ch), ConnectionException(501, 503))


@case("amqp091/4.2.3/connection-close-nonzero-channel", title="connection.close on channel 1 is a connection "
      "exception 503", clauses=CHANNEL_ZERO)
def connection_close_nonzero_channel(ctx: Context) -> None:
    """Sends connection.close (200) on open channel 1 instead of channel 0. Passes on
    connection.close with 503; a close-ok (taking it as a real close) does not, nor does a
    basic.qos-ok for the basic.qos sent next on channel 1."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, spec.ConnectionClose(200, "amqpspec: close on a channel", 0, 0)))
    ctx.check(_observe_channel(peer, ch), ConnectionException(503))


@case("amqp091/4.2.3/tune-ok-nonzero-channel", title="connection.tune-ok on channel 1 after open is a "
      "connection exception 503", clauses=CHANNEL_ZERO)
def tune_ok_nonzero_channel(ctx: Context) -> None:
    """After the connection is open, sends connection.tune-ok (the values negotiated) on open
    channel 1, then basic.qos on channel 1. Passes on connection.close with 503."""
    peer, ch = with_channel(ctx)
    n = peer.negotiated
    peer.send(MethodFrame(ch, spec.ConnectionTuneOk(n.channel_max, n.frame_max, n.heartbeat)))
    ctx.check(_observe_channel(peer, ch), ConnectionException(503))


@case("amqp091/4.2.3/start-ok-nonzero-channel", title="connection.start-ok on channel 1 closes the connection "
      "(503, or silently before open)", clauses=CHANNEL_ZERO + ("amqp091:2.2.4/1",))
def start_ok_nonzero_channel(ctx: Context) -> None:
    """Answers connection.start with a correct start-ok sent on channel 1. 4.2.3/9 asks for a
    connection exception 503; 2.2.4/1 asks, before open/open-ok, for the socket to be closed
    without further data. The two MUSTs disagree, so connection.close 503 and a silent close
    both pass; going on with connection.tune does not."""
    peer = ctx.connect(handshake=False)
    peer.handshake(upto="start")
    peer.send(peer.start_ok(channel=1))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame)
                       and item.method.NAME == "connection.tune")
    ctx.check(obs, AnyOf(ConnectionException(503), SilentClose()))


# ----------------------------------------------------------------------------- the broker's own frames

def _frames_received_after(ctx: Context, peer: Peer, mark: int) -> list[bytes]:
    conn = peer.link.conn
    return [e.data for e in ctx.transcript.entries[mark:] if e.dir == "recv" and e.conn == conn and e.data]


def _broker_frames_case(ctx: Context, consume: bool) -> None:
    peer, ch = with_channel(ctx, frame_max=4096)
    queue = private_queue(peer, ch, ctx)
    body = bytes(ctx.rng.randrange(256) for _ in range(20000))
    peer.send(*publish_frames(ch, queue, body, frame_body_max=4096 - 8))
    mark = len(ctx.transcript.entries)
    if consume:
        peer.call(ch, spec.BasicConsume(queue=queue, no_ack=True), "basic.consume-ok")
        got = b""
        for _ in range(64):
            item = peer.recv(3.0)
            if isinstance(item, BodyFrame):
                got += item.data
                if len(got) >= len(body):
                    break
            elif not isinstance(item, (MethodFrame, HeaderFrame)):  # nothing more, or the connection ended
                break
    else:
        message = get_message(peer, ch, queue)
        got = message[2] if message else b""
    sizes = [len(f) for f in _frames_received_after(ctx, peer, mark)]
    too_big = [n for n in sizes if n > 4096]
    ctx.record(not too_big and bool(sizes), expected="every frame from the broker at most 4096 octets (negotiated frame-max)",
               observed=f"{len(sizes)} frames, largest {max(sizes, default=0)} octets"
               + (f"; {len(too_big)} larger than 4096" if too_big else ""),
               what="broker frames respect the negotiated frame-max", clauses=("amqp091:4.2.3/6",))
    ctx.record(peer.framing_error is None, expected="every frame from the broker ends with frame-end 0xCE",
               observed=peer.framing_error or "all frame-ends valid", what="broker frame-ends",
               clauses=("amqp091:4.2.3/1",))
    ctx.record(got == body, expected="the 20000-octet body delivered byte-identical",
               observed=f"{len(got)} octets, {'identical' if got == body else 'different'}",
               what="body reassembled from the broker's frames", clauses=("amqp091:4.2.6.2/1", "amqp091:3.1.1/1"))


@case("amqp091/4.2.3/broker-frames-within-frame-max-get", title="frames the broker sends (basic.get) respect frame-max 4096",
      clauses=("amqp091:4.2.3/6", "amqp091:4.2.3/1", "amqp091:4.2.6.2/1", "amqp091:3.1.1/1"))
def broker_frames_get(ctx: Context) -> None:
    """Negotiates frame-max 4096, publishes a 20000-octet message and fetches it with basic.get:
    no frame the broker sends may exceed 4096 octets (4.2.3/6), each must end in 0xCE (4.2.3/1),
    and the body must come back intact, split as the broker likes."""
    _broker_frames_case(ctx, consume=False)


@case("amqp091/4.2.3/broker-frames-within-frame-max-deliver",
      title="frames the broker sends (basic.deliver) respect frame-max 4096",
      clauses=("amqp091:4.2.3/6", "amqp091:4.2.3/1", "amqp091:4.2.6.2/1", "amqp091:3.1.1/1"))
def broker_frames_deliver(ctx: Context) -> None:
    """Same as the basic.get variant, with the message delivered to a consumer."""
    _broker_frames_case(ctx, consume=True)
