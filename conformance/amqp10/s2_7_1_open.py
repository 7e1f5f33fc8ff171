"""Spec 2.7.1 Open (transport): the first frame, and the rules of its fields.

"The first frame sent on a connection in either direction MUST contain an open performative",
and "The open frame can only be sent on channel 0" (2.4.1). Before the open exchange "the
maximum frame size is 512 (MIN-MAX-FRAME-SIZE) and the maximum channel number is 0" (2.4.1).
max-frame-size: "Both peers MUST accept frames of up to 512 (MIN-MAX-FRAME-SIZE) octets" and
"A peer MUST NOT send frames larger than its partner can handle". channel-max: "A peer that
receives a channel number outside the supported range MUST close the connection with the
framing-error error-code". hostname: "If no hostname is provided the receiving peer SHOULD
select a default". container-id is mandatory ("a non null value for the field is always
encoded").

The frame-size rules are checked in s2_3_framing (cases amqp10/2.7.1/max-frame-size-*); this
module adds the max-frame-size below 512, the channel rules and the other fields.
"""
from __future__ import annotations

import uuid

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import UnexpectedReply, performative_name
from amqpspec.peer.session10 import begin, begin_frame, publish
from amqpspec.verify10 import ConnectionError, StaysOpen
from amqpspec.wire.amqp10 import AMQPFrame, Symbol, describe, spec

from ._common import (
    MIN_MAX_FRAME_SIZE, REACTION_WINDOW, STATE_ERROR_TEXT, WAIT, address, link_name, record_error_condition,
)
from ._connection import (
    FRAMING_ERROR, OPEN_FIRST, close_discipline, first_frame_open, frames_of, mark_opened, now, open_then, to_header,
    watch,
)

CHANNEL_0_OPEN_TEXT = "The open frame can only be sent on channel 0."
MANDATORY_TEXT = ("The mandatory attribute of a field description controls whether a null element value is "
                  "permitted in the representation. [open: <field name=\"container-id\" type=\"string\" "
                  "mandatory=\"true\"/>]")
INVALID_FIELD_ERRORS = (str(spec.AmqpError.INVALID_FIELD), str(spec.AmqpError.DECODE_ERROR))
INVALID_FIELD_TEXT = ("amqp:invalid-field: An invalid field was passed in a frame body, and the operation could not "
                      "proceed. / amqp:decode-error: Data could not be decoded.")
CHANNEL_MAX_TEXT = "The channel-max value is the highest channel number that can be used on the connection."
IDLE_ZERO_TEXT = "A value of zero is the same as if it was not set (null)."
LOCALE_TEXT = "If none of the requested locales are supported, en-US will be chosen."


def plain_open(ctx: Context, **fields: object) -> spec.Open:
    values: dict[str, object] = {"container_id": "amqpspec", "hostname": ctx.target.host, "max_frame_size": 65536}
    values.update(fields)
    return spec.Open(**values)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------- the broker's open
@case("amqp10/2.7.1/broker-open-first", title="the broker's first frame is an open on channel 0 with a "
      "container-id", clauses=OPEN_FIRST)
def broker_open_first(ctx: Context) -> None:
    """Exchanges headers and sends our open; the broker's first frame must be an open (2.7.1/1,
    2.4.1/1). It should be on channel 0 ("The open frame can only be sent on channel 0.") and
    carry a container-id, a mandatory field (guidelines: no RFC 2119 keyword)."""
    peer = to_header(ctx)
    peer.send(AMQPFrame(0, plain_open(ctx)))
    obs = peer.observe(WAIT, stop=lambda item: performative_name(item) in ("open", "close"))
    if not frames_of(obs):
        ctx.record(False, expected="the broker's open", observed=obs.describe())
        return
    first_frame_open(ctx, obs)
    first = frames_of(obs)[0]
    if performative_name(first) == "open":
        ctx.record(first.channel == 0, what="the broker's open is on channel 0", guideline=CHANNEL_0_OPEN_TEXT, expected="open on channel 0", observed=describe(first))
        ctx.record(first.performative.container_id is not None,  # type: ignore[union-attr]
                   what="the broker's open carries a container-id", guideline=MANDATORY_TEXT,
                   expected="a container-id (not null)", observed=describe(first))


@case("amqp10/2.7.1/broker-max-frame-size-at-least-512", title="the broker's max-frame-size is at least 512",
      clauses=("amqp10:2.7.1/6",))
def broker_max_frame_size_at_least_512(ctx: Context) -> None:
    """Opens a connection and reads the broker's max-frame-size (unset means no limit). "Both peers
    MUST accept frames of up to 512 (MIN-MAX-FRAME-SIZE) octets": announcing less fails."""
    peer = ctx.connect()
    remote = peer.opened.remote_open
    value = int(remote.value_of("max-frame-size"))  # type: ignore[union-attr]
    ctx.record(value >= MIN_MAX_FRAME_SIZE, expected=f"max-frame-size >= {MIN_MAX_FRAME_SIZE}",
               observed=f"max-frame-size {value}")


# ---------------------------------------------------------------------------------------- max-frame-size
@case("amqp10/2.7.1/max-frame-size-511", title="with max-frame-size 511 proposed, the broker refuses the "
      "connection or sends no frame above 512 octets", clauses=("amqp10:2.7.1/4", "amqp10:2.7.1/6"))
def max_frame_size_511(ctx: Context) -> None:
    """Queues a 3000-octet message, then opens a second connection proposing max-frame-size 511 --
    below the 512 every peer must accept -- and receives the message. The text allows two
    readings: "A peer MUST NOT send frames larger than its partner can handle" (511) and "Both
    peers MUST accept frames of up to 512", so frames up to 512 octets pass; so does refusing the
    connection. A larger frame fails, and a refusal must follow the close rules (open first,
    close before the socket closes, nothing after the close)."""
    addr = address(ctx)
    publish(ctx, addr, bytes(ctx.rng.randrange(256) for _ in range(3000)))

    peer = to_header(ctx)
    since = now(ctx)
    peer.send(AMQPFrame(0, plain_open(ctx, max_frame_size=511)))
    obs = peer.observe(REACTION_WINDOW, stop=lambda item: performative_name(item) in ("open", "close"))
    delivered = False
    remote = obs.first("open")
    if remote is not None and obs.close is None and not obs.closed:
        mark_opened(peer, remote, ours=511)
        try:
            s = begin(peer, timeout=WAIT)
            delivered = bool(s.receiver(addr, name=link_name(ctx, "rcv"), credit=1).receive(1, WAIT))
        except UnexpectedReply as exc:
            ctx.note(f"the connection did not serve: {exc}")
        obs = watch(peer, 0.3)
    sizes = [int.from_bytes(e.data[:4], "big") for e in ctx.transcript.entries
             if e.conn == peer.link.conn and e.dir == "recv" and e.t >= since and e.summary.startswith("ch=")]
    largest = max(sizes, default=0)
    refused = remote is None or obs.close is not None or obs.closed
    ok = largest <= MIN_MAX_FRAME_SIZE
    ctx.record(ok, expected="no frame above 512 octets (or the connection refused)",
               observed=f"frame sizes {sizes[:30]}; " + ("message delivered" if delivered else
                                                        "connection refused" if refused else "message not delivered"))
    first_frame_open(ctx, obs)
    close_discipline(ctx, obs)


# ---------------------------------------------------------------------------------------- channel-max
@case("amqp10/2.7.1/channel-above-low-channel-max", title="after the broker announced a low channel-max, a "
      "begin above it closes the connection with framing-error", clauses=("amqp10:2.7.1/8",))
def channel_above_low_channel_max(ctx: Context) -> None:
    """Opens proposing channel-max 7 (a limit on the broker's channels; some brokers answer with the
    smaller value), reads the broker's channel-max C and sends a begin on channel C+1. "A peer
    that receives a channel number outside the supported range MUST close the connection with
    the framing-error error-code." Skipped when C is 65535. (amqp10/2.7.2/channel-above-channel-max
    does the same after a plain open.)"""
    peer = ctx.connect(channel_max=7)
    top = peer.opened.channel_max
    if top >= 0xFFFF:
        ctx.skip("the broker's channel-max is 65535: no channel number lies outside its range")
    peer.send(begin_frame(top + 1))
    obs = watch(peer, REACTION_WINDOW, probe=True)
    ctx.check(obs, ConnectionError(FRAMING_ERROR))
    close_discipline(ctx, obs)


@case("amqp10/2.7.1/channel-at-channel-max-accepted", title="a begin on the broker's channel-max itself is "
      "answered", guideline=CHANNEL_MAX_TEXT)
def channel_at_channel_max_accepted(ctx: Context) -> None:
    """Opens, reads the broker's channel-max C and begins a session on channel C, the highest
    channel number that can be used: the broker answers with a begin naming channel C."""
    peer = ctx.connect()
    top = peer.opened.channel_max
    peer.send(begin_frame(top))
    obs = watch(peer, REACTION_WINDOW, stop=lambda item: performative_name(item) == "begin"
                and getattr(item.performative, "remote_channel", None) == top)
    answered = any(getattr(f.performative, "remote_channel", None) == top for f in obs.performatives("begin"))
    ctx.record(answered and obs.close is None, expected=f"begin(remote-channel={top})", observed=obs.describe())
    close_discipline(ctx, obs)


@case("amqp10/2.7.1/open-on-channel-1", title="an open on channel 1 is refused with framing-error (the channel "
      "range is 0 before the open exchange)", clauses=("amqp10:2.7.1/8",) + OPEN_FIRST)
def open_on_channel_1(ctx: Context) -> None:
    """Sends our open on channel 1. "The open frame can only be sent on channel 0", and before the
    open exchange "the maximum channel number is 0" (2.4.1): channel 1 is outside the range the
    broker supports, so it MUST close the connection with framing-error (2.7.1/8) -- after its own
    open, as its first frame must be an open (2.4.1/1). Going on as if the open were valid
    (liveness probe answered) fails."""
    peer = to_header(ctx)
    obs = open_then(peer, plain_open(ctx), channel=1)
    first_frame_open(ctx, obs)
    ctx.check(obs, ConnectionError(FRAMING_ERROR), clauses=("amqp10:2.7.1/8",))
    close_discipline(ctx, obs)


# ---------------------------------------------------------------------------------------- a second open
@case("amqp10/2.7.1/second-open", title="a second open: the broker may refuse it, and keeps to the close rules",
      clauses=("amqp10:2.4.3/1", "amqp10:2.4.3/2"))
def second_open(ctx: Context) -> None:
    """After the open exchange sends a second open on channel 0. The text forbids no second open
    (OPENED accepts any frame in the state table), so refusing it is only recorded
    (informational, after the illegal-state definition); whatever the broker does, a close it
    writes must come before a socket close and be the last thing it writes -- also after we
    answer it with our close."""
    peer = ctx.connect()
    peer.send(AMQPFrame(0, plain_open(ctx, container_id="amqpspec-again")))
    obs = watch(peer, REACTION_WINDOW, probe=True, grace=1.0)
    close_discipline(ctx, obs)
    ctx.check(obs, ConnectionError(), what="the second open is refused with a connection error", clauses=(),
              guideline=STATE_ERROR_TEXT)


# ---------------------------------------------------------------------------------------- hostname, container-id
@case("amqp10/2.7.1/no-hostname", title="an open without hostname is accepted (the broker picks a default)",
      clauses=("amqp10:2.7.1/2",))
def no_hostname(ctx: Context) -> None:
    """Sends an open without the hostname field. "If no hostname is provided the receiving peer
    SHOULD select a default based on its own configuration": the broker answers with its open and
    serves the connection (liveness probe answered)."""
    peer = to_header(ctx)
    obs = open_then(peer, plain_open(ctx, hostname=None))
    ctx.check(obs, StaysOpen())
    close_discipline(ctx, obs)


@case("amqp10/2.7.1/no-container-id", title="an open without its mandatory container-id is refused with a "
      "connection error", clauses=OPEN_FIRST)
def no_container_id(ctx: Context) -> None:
    """Sends an open whose container-id, a mandatory field, is null. The broker's first frame must
    still be its open (2.4.1/1); the open is invalid, so the broker should close the connection
    with an error (guideline: the text names no reaction), preferably invalid-field or
    decode-error (guideline)."""
    peer = to_header(ctx)
    obs = open_then(peer, plain_open(ctx, container_id=None))
    first_frame_open(ctx, obs)
    close_discipline(ctx, obs)
    ctx.check(obs, ConnectionError(), what="the open is refused with a connection error", clauses=(),
              guideline=MANDATORY_TEXT)
    record_error_condition(ctx, obs, "close", INVALID_FIELD_ERRORS, INVALID_FIELD_TEXT,
                           what=f"the close carries {' or '.join(INVALID_FIELD_ERRORS)}")


# ---------------------------------------------------------------------------------------- idle-time-out, locales
@case("amqp10/2.7.1/idle-time-out-zero", title="an open with idle-time-out 0 (no time-out) is accepted",
      guideline=IDLE_ZERO_TEXT)
def idle_time_out_zero(ctx: Context) -> None:
    """Opens with idle-time-out 0, which means no idle time-out at all: the broker must not refuse
    it as too small; after a second without traffic the connection still serves (probe)."""
    peer = ctx.connect(idle_time_out=0)
    obs = peer.observe(1.0)
    if not obs.closed and obs.close is None:
        obs = watch(peer, REACTION_WINDOW, probe=True)
    ctx.check(obs, StaysOpen())
    close_discipline(ctx, obs)


@case("amqp10/2.7.1/unsupported-incoming-locale", title="an open asking for an unsupported incoming locale is "
      "accepted (en-US is the fallback)", guideline=LOCALE_TEXT)
def unsupported_incoming_locale(ctx: Context) -> None:
    """Sends an open whose incoming-locales list only a made-up locale (x-amqpspec). The broker
    falls back to en-US, which every peer supports (2.7.1/12): it answers with its open and serves
    the connection (liveness probe answered)."""
    peer = to_header(ctx)
    tag = Symbol(f"x-amqpspec-{uuid.UUID(int=ctx.rng.getrandbits(128)).hex[:6]}")
    obs = open_then(peer, plain_open(ctx, incoming_locales=[tag]))
    ctx.check(obs, StaysOpen())
    close_discipline(ctx, obs)
