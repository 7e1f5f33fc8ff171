"""Spec 2.3 Framing (transport), with the frame-size rules of 2.4.1 / 2.7.1 and empty frames.

A frame is SIZE (4 octets, the whole frame), DOFF (the body's offset in 4-octet words, at
least 2), TYPE, two type-specific octets (the channel of an AMQP frame), an extended header
of DOFF*4-8 octets that AMQP frames ignore, and the body. The text calls a frame with SIZE < 8
or DOFF < 2 "malformed" without naming a reaction, so those cases are guideline-level: the
connection should end, and the error that fits is amqp:connection:framing-error ("A valid
frame header cannot be formed from the incoming byte stream").

Frame sizes: "Prior to any explicit negotiation, the maximum frame size is 512
(MIN-MAX-FRAME-SIZE)" (2.4.1); after the open exchange each peer's max-frame-size applies.
"A peer MUST NOT send frames larger than its partner can handle. A peer that receives an
oversized frame MUST close the connection with the framing-error error-code. Both peers MUST
accept frames of up to 512 (MIN-MAX-FRAME-SIZE) octets." (2.7.1, open.max-frame-size). The
cases of those rules carry section 2.7.1 in their ids.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, Peer, performative_name
from amqpspec.peer.base import Closed
from amqpspec.peer.session10 import Sender, begin, begin_frame
from amqpspec.verify10 import AnyClose, AnyOf, ConnectionError, StaysOpen
from amqpspec.wire.amqp10 import (
    AMQP_HEADER, AMQPFrame, EmptyFrame, Message, ProtocolHeader, RawFrame, Symbol, spec,
)

from ._common import MIN_MAX_FRAME_SIZE, REACTION_WINDOW, WAIT, address, link_name
from ._connection import FRAMING_ERROR
from ._links import fresh_sender

FRAMING_ERROR_TEXT = "amqp:connection:framing-error: A valid frame header cannot be formed from the incoming byte stream."
DOFF_TEXT = ("Byte 4 of the frame header is the data offset. This gives the position of the body within the frame. "
             "/ Frame Body . . | (SIZE - DOFF * 4) bytes [figure of 2.3.1]")
LARGEST_SENT = 1 << 20     # the largest frame a case sends whole (a broker limit above it is not exercised)


# ---------------------------------------------------------------------------------------- helpers
def react(peer: Peer, window: float = REACTION_WINDOW) -> Observation:
    """What the broker does after a stimulus: ends at a close, or as soon as a liveness probe
    (a new session) is answered -- proof that the stimulus was processed without an error."""
    return peer.observe(window, probe=True)


def check_malformed(ctx: Context, obs: Observation, guideline: str) -> None:
    """Two guideline-level checks: the connection ends, and with framing-error."""
    # level=SHOULD is a ceiling: the quoted text's own level decides when weaker (a definition)
    ok = ctx.check(obs, AnyClose(), what="the malformed frame ends the connection",
                   level=Level.SHOULD, guideline=guideline)
    if ok:
        ctx.check(obs, ConnectionError(FRAMING_ERROR), what="the close carries amqp:connection:framing-error",
                  guideline=FRAMING_ERROR_TEXT, sets_close=False)


def exact_size(make: Callable[[int], AMQPFrame], size: int) -> AMQPFrame:
    """``make(n)`` builds a frame from a padding length n; finds the n giving exactly ``size`` octets."""
    n = size
    for _ in range(32):
        frame = make(max(0, n))
        diff = len(frame.encode()) - size
        if diff == 0:
            return frame
        n -= diff
    raise ValueError(f"cannot build a frame of exactly {size} octets")


def padded_open(ctx: Context, size: int) -> AMQPFrame:
    """An open frame of exactly ``size`` octets: a property 'padding' carries the filler."""
    return exact_size(lambda n: AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host,
                                                       max_frame_size=65536,
                                                       properties={Symbol("padding"): "x" * n})), size)


def transfer_of_size(snd: Sender, size: int) -> AMQPFrame:
    """A settled transfer of a new delivery on ``snd`` (its delivery-id and one transfer-id taken) whose
    frame is exactly ``size`` octets."""
    s = snd.session
    t = spec.Transfer(handle=snd.handle, delivery_id=s.take_delivery_id(), delivery_tag=b"amqpspec", message_format=0,
                      settled=True)
    return exact_size(lambda n: AMQPFrame(s.channel, t, Message(body=b"x" * n).encode()), size)


def open_after_security(ctx: Context, peer: Peer) -> None:
    """The SASL layer when the target uses one; leaves the peer ready for the AMQP header."""
    if ctx.target.credentials_given:
        outcome = peer.sasl()
        if int(outcome.code) != 0:
            ctx.skip(f"SASL authentication failed (code {outcome.code})")


def broker_max_frame_size(ctx: Context, peer: Peer) -> int:
    """The broker's max-frame-size; skips the case when it is unset or above what a case sends."""
    remote = peer.opened.remote_open
    assert remote is not None
    theirs = int(remote.value_of("max-frame-size"))
    if theirs >= LARGEST_SENT:
        ctx.skip(f"the broker's max-frame-size is {theirs} octets: a frame of that size is too large to send in a case")
    return theirs


# ---------------------------------------------------------------------------------------- 2.3.1 frame layout
@case("amqp10/2.3.1/size-below-header", title="a frame whose SIZE is below 8 ends the connection (framing-error)",
      guideline="The frame is malformed if the size is less than the size of the frame header (8 bytes).")
def size_below_header(ctx: Context) -> None:
    """After open, sends an empty frame whose SIZE field says 7 (the header alone is 8 octets).
    The frame is malformed: the connection should end (warning otherwise), with a close carrying
    amqp:connection:framing-error (warning otherwise)."""
    peer = ctx.connect()
    peer.send(EmptyFrame(0, size=7))
    check_malformed(ctx, react(peer), "The frame is malformed if the size is less than the size of the frame "
                                      "header (8 bytes).")


@case("amqp10/2.3.1/doff-below-two", title="a frame whose DOFF is below 2 ends the connection (framing-error)",
      guideline="Due to the mandatory 8-byte frame header, the frame is malformed if the value is "
                                    "less than 2.")
def doff_below_two(ctx: Context) -> None:
    """After open, sends a begin frame whose DOFF is 1 (the body would start inside the 8-octet
    header). The frame is malformed: the connection should end, with framing-error (warnings)."""
    peer = ctx.connect()
    ch = peer.free_channel()
    peer.send(replace(begin_frame(ch), doff=1))
    check_malformed(ctx, react(peer), "Due to the mandatory 8-byte frame header, the frame is malformed if the value "
                                      "is less than 2.")


@case("amqp10/2.3.1/doff-past-size", title="a frame whose DOFF points past its end ends the connection (framing-error)",
      guideline=DOFF_TEXT)
def doff_past_size(ctx: Context) -> None:
    """After open, sends an 8-octet frame (SIZE 8) whose DOFF is 3: its extended header would be
    4 octets long and its body -4. No valid frame header can be formed: the connection should
    end, with framing-error (warnings)."""
    peer = ctx.connect()
    peer.send(EmptyFrame(0, doff=3))
    check_malformed(ctx, react(peer), DOFF_TEXT)


@case("amqp10/2.3.1/undefined-frame-type", title="a frame of an undefined TYPE is ignored or refused, not left hanging",
      guideline="Byte 5 of the frame header is a type code. The type code indicates the format and "
                                    "purpose of the frame.")
def undefined_frame_type(ctx: Context) -> None:
    """After open, sends a frame of TYPE 0x05, which the spec does not define (0x00 AMQP, 0x01
    SASL), with a small body. The text names no reaction: the broker may skip it (its SIZE says
    where the next frame starts) and go on -- a liveness probe is then answered -- or end the
    connection. A broker that does neither stops serving the connection (warning)."""
    peer = ctx.connect()
    peer.send(RawFrame(0, type=0x05, data=b"\x00\x53\x10\x45"))
    obs = react(peer)
    ctx.check(obs, AnyOf(StaysOpen(), AnyClose()))


# ---------------------------------------------------------------------------------------- 2.3.2 AMQP frames
@case("amqp10/2.3.2/extended-header-ignored", title="an AMQP frame with an extended header is processed normally",
      guideline="Extended Header . <IGNORED> . | (DOFF * 4 - 8) bytes [figure 2.16, AMQP Frame Layout]")
def extended_header_ignored(ctx: Context) -> None:
    """After open, sends a begin frame with DOFF 4 and 8 octets of non-zero extended header
    (SIZE counting them). The extended header of an AMQP frame is ignored: the begin must be
    answered by the broker's begin (warning otherwise)."""
    peer = ctx.connect()
    ch = peer.free_channel()
    peer.send(replace(begin_frame(ch), extended=bytes.fromhex("deadbeefcafef00d")))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: performative_name(item) == "begin"
                       and getattr(item.performative, "remote_channel", None) == ch)
    begun = any(getattr(f.performative, "remote_channel", None) == ch for f in obs.performatives("begin"))
    ctx.record(begun and obs.close is None, expected=f"begin with remote-channel={ch}", observed=obs.describe())


@case("amqp10/2.3.2/empty-frame-channel-0", title="an empty frame on channel 0 after open is accepted",
      clauses=("amqp10:2.4.5/7", "amqp10:2.3.2/2"))
def empty_frame_channel_0(ctx: Context) -> None:
    """After open, sends an empty frame (8-octet header, no body) on channel 0, as a heartbeat.
    Implementations MUST be prepared to handle empty frames: the connection must stay open and
    keep serving (liveness probe answered)."""
    peer = ctx.connect()
    peer.send(EmptyFrame(0))
    ctx.check(react(peer), StaysOpen())


@case("amqp10/2.3.2/empty-frame-session-channel", title="an empty frame on a session's channel is accepted",
      clauses=("amqp10:2.4.5/7", "amqp10:2.3.2/2"))
def empty_frame_session_channel(ctx: Context) -> None:
    """Begins a session, then sends an empty frame on its channel ("any valid channel"). The
    connection must stay open and keep serving (liveness probe answered)."""
    s = begin(ctx.connect(), timeout=5.0)
    s.peer.send(EmptyFrame(s.channel))
    ctx.check(react(s.peer), StaysOpen())


@case("amqp10/2.3.2/empty-frames-between-frames", title="empty frames between a transfer's frames change nothing",
      clauses=("amqp10:2.4.5/7", "amqp10:2.3.2/2"))
def empty_frames_between_frames(ctx: Context) -> None:
    """Sends a 3000-octet message in 512-octet transfer frames with an empty frame between each two
    (channel 0, as heartbeats may come at any time), then receives it. The connection must stay
    open and the message must arrive whole: empty frames have no meaning beyond keeping the
    connection alive."""
    s = begin(ctx.connect(), timeout=5.0)
    addr = address(ctx)
    snd = s.sender(addr, name=link_name(ctx, "snd"))
    body = bytes(ctx.rng.randrange(256) for _ in range(3000))
    for f in snd.transfer_frames(Message(body=body), settled=True, tag=b"amqpspec", max_frame_size=MIN_MAX_FRAME_SIZE):
        s.peer.send(f, EmptyFrame(0))
    rcv = s.receiver(addr, name=link_name(ctx, "rcv"))
    mark = len(s.log)
    rcv.grant(1)
    got = rcv.receive(1, WAIT)
    others = [f for f in s.log[mark:] if performative_name(f) != "transfer"]
    ok = bool(got) and got[0].message().body == spec.Data(body)
    ctx.record(ok, expected="the message, whole, and the connection open",
               observed=f"{len(got)} message(s){' with the same body' if ok else ''}; "
                        + "; ".join(performative_name(o) or type(o).__name__ for o in others))


# ---------------------------------------------------------------------------------------- 2.7.1 frame sizes
@case("amqp10/2.7.1/max-frame-size-512-open-accepted", title="an open frame of exactly 512 octets is accepted",
      clauses=("amqp10:2.7.1/6",))
def max_frame_size_512_open_accepted(ctx: Context) -> None:
    """Sends the AMQP header and an open frame padded (a 'padding' property) to exactly 512 octets,
    the limit before negotiation. Both peers MUST accept frames of up to 512 octets: the broker
    must answer with its open, without closing."""
    peer = ctx.connect(handshake=False)
    open_after_security(ctx, peer)
    peer.send(AMQP_HEADER, padded_open(ctx, MIN_MAX_FRAME_SIZE))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: performative_name(item) == "open")
    ok = obs.first("open") is not None and obs.close is None
    ctx.record(ok, expected="the broker's open", observed=obs.describe())


@case("amqp10/2.7.1/max-frame-size-open-over-512",
      title="an open frame larger than 512 octets, before negotiation, is refused with framing-error",
      clauses=("amqp10:2.7.1/5",))
def max_frame_size_open_over_512(ctx: Context) -> None:
    """Sends the AMQP header and an open frame of 1024 octets. "Prior to any explicit negotiation,
    the maximum frame size is 512" (2.4.1), so this frame is oversized: the broker MUST close the
    connection with amqp:connection:framing-error (after its own open, 2.4.1). Answering with open
    and going on (liveness probe answered) fails."""
    peer = ctx.connect(handshake=False)
    open_after_security(ctx, peer)
    peer.send(AMQP_HEADER, padded_open(ctx, 1024))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: performative_name(item) in ("open", "close"))
    if obs.close is None and not obs.closed and obs.first("open") is not None:
        peer.stage, peer.opened.opened = "open", True
        more = react(peer, WAIT)
        obs.received += more.received
        obs.end, obs.probe_ok = more.end, more.probe_ok
    ctx.check(obs, ConnectionError(FRAMING_ERROR))


@case("amqp10/2.7.1/max-frame-size-exceeded-after-open",
      title="a frame larger than the broker's max-frame-size closes the connection with framing-error",
      clauses=("amqp10:2.7.1/5",))
def max_frame_size_exceeded_after_open(ctx: Context) -> None:
    """Opens (proposing 65536), reads the broker's max-frame-size M, attaches a sending link and
    sends a transfer frame of M+1 octets. The broker MUST close the connection with
    amqp:connection:framing-error. Skipped when the broker sets no limit (or one above 1 MiB)."""
    peer = ctx.connect()
    limit = broker_max_frame_size(ctx, peer)
    peer.send(transfer_of_size(fresh_sender(ctx, begin(peer, timeout=5.0)), limit + 1))
    ctx.check(react(peer), ConnectionError(FRAMING_ERROR))


@case("amqp10/2.7.1/max-frame-size-at-limit-accepted",
      title="a frame of exactly the broker's max-frame-size is accepted",
      guideline="max-frame-size: The largest frame size that the sending peer is able to accept on "
                                    "this connection.")
def max_frame_size_at_limit_accepted(ctx: Context) -> None:
    """Opens, reads the broker's max-frame-size M, attaches a sending link and sends a settled
    transfer frame of exactly M octets. The broker announced it can accept it: the connection
    stays open (liveness probe answered; warning otherwise). Skipped without a limit up to 1 MiB."""
    peer = ctx.connect()
    limit = broker_max_frame_size(ctx, peer)
    peer.send(transfer_of_size(fresh_sender(ctx, begin(peer, timeout=5.0)), limit))
    ctx.check(react(peer), StaysOpen())


@case("amqp10/2.7.1/max-frame-size-broker-open-fits-512",
      title="the broker's open frame, sent before negotiation, is at most 512 octets",
      clauses=("amqp10:2.7.1/4",))
def max_frame_size_broker_open_fits_512(ctx: Context) -> None:
    """Opens a connection and measures the broker's open frame. Until the open exchange the
    maximum frame size is 512 (2.4.1) and a peer MUST NOT send frames larger than its partner
    can handle: the broker's open must be at most 512 octets."""
    peer = ctx.connect(handshake=False)
    open_after_security(ctx, peer)
    peer.send(ProtocolHeader.amqp())
    peer.expect_header()
    peer.stage = "header"
    peer.open(wait=False)
    size = None
    while True:
        item = peer.recv(WAIT)
        if item is None or isinstance(item, Closed):
            break
        if performative_name(item) == "open":
            size = len(peer.reader.last_raw)
            break
    if size is None:
        ctx.record(False, expected="the broker's open frame", observed=f"no open ({peer.framing_error or 'nothing'})")
        return
    ctx.record(size <= MIN_MAX_FRAME_SIZE, expected=f"an open frame of at most {MIN_MAX_FRAME_SIZE} octets",
               observed=f"an open frame of {size} octets")


@case("amqp10/2.7.1/max-frame-size-broker-respects-ours",
      title="with max-frame-size 512 proposed, the broker sends no frame larger than 512 octets",
      clauses=("amqp10:2.7.1/4", "amqp10:2.4.1/2", "amqp10:2.8.19/2"))
def max_frame_size_broker_respects_ours(ctx: Context) -> None:
    """Opens proposing max-frame-size 512, sends a 3000-octet message (in 512-octet frames) to a
    new queue, then receives it on the same connection. Every frame the broker sends (its
    flows, attaches, the transfers of the message) must be at most 512 octets -- the maximum frame
    size the peers agreed on (2.8.19/2) -- so the message comes split over several transfer frames."""
    peer = ctx.connect(max_frame_size=MIN_MAX_FRAME_SIZE)
    addr = address(ctx)
    s = begin(peer, timeout=5.0)
    s.sender(addr, name=link_name(ctx, "snd")).send(bytes(3000), settled=True)
    s.receiver(addr, name=link_name(ctx, "rcv"), credit=1)
    sizes: list[tuple[str, int]] = []
    finished = False
    while True:
        item = peer.recv(WAIT)
        if item is None or isinstance(item, Closed):
            break
        sizes.append((performative_name(item) or "empty", len(peer.reader.last_raw)))
        if performative_name(item) == "transfer" and not item.performative.more:  # type: ignore[union-attr]
            finished = True
            break
        if performative_name(item) in ("close", "end", "detach"):
            break
    largest = max((n for _, n in sizes), default=0)
    shown = ", ".join(f"{name} {n}" for name, n in sizes[:20])
    if peer.framing_error:
        ctx.record(False, expected="frames of at most 512 octets", observed=f"{shown}; then {peer.framing_error}")
        return
    ctx.record(finished and largest <= MIN_MAX_FRAME_SIZE,
               expected="the message in transfer frames of at most 512 octets (like every other frame)",
               observed=f"frames (octets): {shown}" + ("" if finished else "; the message did not arrive whole"))


