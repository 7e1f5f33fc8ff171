"""The connection class rules of the 0-9-1 XML: start, start-ok, tune, tune-ok, open, close.

Negotiation (start .. open-ok) is the part of a connection's life where nothing is
trusted yet: spec 2.2.4/1 says a peer that detects an error before Open/Open-Ok MUST
close the socket without sending any further data, and the tune-ok rules ask the same
("close the connection without attempting a negotiated close"). Once a close has been
sent, the close/stability rule says everything but Close and Close-Ok is discarded.

The negotiation helpers (``start_ok``, ``after_tune``) are in ``_negotiation``, shared with 2.2.4;
the stop predicates (``is_method``, ``any_frame``) in ``_replies``.
"""
from __future__ import annotations

from amqpspec.case import Context, case, close_info
from amqpspec.peer.amqp091 import Observation, Peer, client_properties
from amqpspec.verify import ConnectionException, Replies, SilentClose, Verifier, code_name
from amqpspec.wire.amqp091 import MethodFrame, spec, to_plain

from ._common import DISCARD_WINDOW, QUICK_WINDOW, REACTION_WINDOW, after_start
from ._negotiation import after_tune, offered_mechanisms, start_ok
from ._replies import Stop, any_frame, is_method

FRAME_MIN_SIZE = spec.FRAME_MIN_SIZE  # 4096
NEGOTIATION = "amqp091:2.2.4/1"


# ---------------------------------------------------------------------------------- helpers

class NotOpened(Verifier):
    """The broker refuses to open the connection: no connection.open-ok, and the connection
    ends (a connection.close with any code, or the socket closed)."""

    def accepts(self, obs: Observation) -> bool:
        return not obs.methods("connection.open-ok") and (obs.connection_close is not None or obs.closed)

    def describe(self) -> str:
        return "no connection.open-ok; the connection is closed (connection.close or socket close)"


class OnlyClosing(Verifier):
    """After a close was sent, nothing but close / close-ok comes back (the others are discarded)."""

    expects_close = False

    def __init__(self, allowed: tuple[str, ...], forbidden: str, channel: int | None = None) -> None:
        self.allowed = allowed
        self.forbidden = forbidden
        self.channel = channel

    def accepts(self, obs: Observation) -> bool:
        return all(f.method.NAME in self.allowed for f in obs.methods(channel=self.channel))

    def describe(self) -> str:
        where = f" on channel {self.channel}" if self.channel is not None else ""
        return f"no {self.forbidden} (nothing{where} but {' / '.join(self.allowed)}): the method was discarded"


# ---------------------------------------------------------------------------------- connection.start
REQUIRED_SERVER_PROPERTIES = ("host", "product", "version", "platform", "information")


@case("amqp091/connection.start/server-properties",
      title="connection.start server-properties contain host, product, version, platform, information",
      clauses=("amqp091:connection.start.server-properties/required-fields",))
def start_server_properties(ctx: Context) -> None:
    """Reads server-properties of connection.start. The rule asks for host, product, version,
    platform, copyright ("if appropriate", so not checked) and information."""
    peer = after_start(ctx)
    props = to_plain(peer.negotiated.start.server_properties or {})  # type: ignore[union-attr]
    keys = set(props) if isinstance(props, dict) else set()
    missing = [k for k in REQUIRED_SERVER_PROPERTIES if k not in keys]
    present = f"present: {', '.join(sorted(keys)) or 'none'}"
    ctx.record(not missing, expected="server-properties with " + ", ".join(REQUIRED_SERVER_PROPERTIES),
               observed=(f"missing: {', '.join(missing)}; " if missing else "") + present)


@case("amqp091/connection.start/locales-en-us", title="connection.start locales include en_US",
      clauses=("amqp091:connection.start.locales/required-support",))
def start_locales(ctx: Context) -> None:
    """Reads the space-delimited locales field of connection.start: en_US must be one of them."""
    peer = after_start(ctx)
    raw = peer.negotiated.start.locales  # type: ignore[union-attr]
    text = bytes(raw).decode("utf-8", "replace") if isinstance(raw, (bytes, bytearray)) else str(raw)
    ctx.record("en_US" in text.split(), expected="'en_US' among the locales", observed=f"locales {text!r}")


@case("amqp091/connection.start/version-offered",
      title="connection.start offers a version not higher than the 0-9-1 requested",
      clauses=("amqp091:connection.start/server-support",))
def start_version(ctx: Context) -> None:
    """Sends the 0-9-1 header; the version-major/minor of connection.start must be 0-9 or lower."""
    peer = after_start(ctx)
    start = peer.negotiated.start
    offered = (start.version_major, start.version_minor)  # type: ignore[union-attr]
    ctx.record(offered <= (0, 9), expected="version-major/minor <= 0-9",
               observed=f"version {offered[0]}-{offered[1]}")


# ---------------------------------------------------------------------------------- connection.start-ok
@case("amqp091/connection.start-ok/invalid-mechanism",
      title="a mechanism the server did not propose closes the socket without further data",
      clauses=("amqp091:connection.start-ok.mechanism/validity", NEGOTIATION))
def start_ok_invalid_mechanism(ctx: Context) -> None:
    """Answers connection.start with mechanism 'AMQPSPEC-NONE' (never proposed): the broker must
    close the connection with no close method and no other data."""
    peer = after_start(ctx)
    mech = "AMQPSPEC-NONE"
    if mech in offered_mechanisms(peer):  # pragma: no cover - nobody offers it
        ctx.skip(f"the broker proposes {mech}")
    peer.send(start_ok(ctx, peer, mechanism=mech, response=b"\x00amqpspec\x00amqpspec"))
    ctx.check(peer.observe(REACTION_WINDOW, stop=any_frame), SilentClose())


# ---------------------------------------------------------------------------------- connection.tune
@case("amqp091/connection.tune/proposes-limits",
      title="after start-ok the server proposes its limits with connection.tune (frame-max 0 or >= 4096)",
      clauses=("amqp091:2.3.3/4", "amqp091:connection.tune.frame-max/minimum"))
def tune_proposes_limits(ctx: Context) -> None:
    """Completes start-ok with valid credentials: the broker must send connection.tune (2.3.3/4);
    the frame-max it proposes must not be below frame-min-size 4096 (0 = no limit)."""
    peer = after_start(ctx)
    peer.send(start_ok(ctx, peer))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("connection.tune", "connection.secure", "connection.close"))
    if not ctx.check(obs, Replies("connection.tune", channel=0), what="connection.tune proposes the limits",
                     clauses=("amqp091:2.3.3/4",)):
        return
    tune: spec.ConnectionTune = obs.methods("connection.tune")[0].method  # type: ignore[assignment]
    ctx.record(tune.frame_max == 0 or tune.frame_max >= FRAME_MIN_SIZE,
               expected=f"frame-max 0 (no limit) or >= {FRAME_MIN_SIZE}",
               observed=f"channel-max={tune.channel_max} frame-max={tune.frame_max} heartbeat={tune.heartbeat}",
               what="proposed frame-max not below frame-min-size",
               clauses=("amqp091:connection.tune.frame-max/minimum",))


@case("amqp091/connection.tune/accepts-frame-min-size",
      title="a start-ok frame of exactly frame-min-size (4096) octets is accepted before tuning",
      clauses=("amqp091:connection.tune.frame-max/minimum", "amqp091:connection.tune-ok.frame-max/minimum"))
def tune_accepts_min_size(ctx: Context) -> None:
    """The rule's scenario: a start-ok whose client-properties are padded so that the whole frame
    (header, payload, frame-end) is 4096 octets. Frame-max is not negotiated yet, so the broker
    must accept it and go on with connection.tune."""
    peer = after_start(ctx)
    props = client_properties()
    props["x-amqpspec-padding"] = ""
    size = len(start_ok(ctx, peer, properties=props).encode())
    props["x-amqpspec-padding"] = "p" * (FRAME_MIN_SIZE - size)
    frame = start_ok(ctx, peer, properties=props)
    size = len(frame.encode())
    if size != FRAME_MIN_SIZE:  # pragma: no cover - a codec surprise, not a broker verdict
        raise RuntimeError(f"padded start-ok is {size} octets, not {FRAME_MIN_SIZE}")
    ctx.note(f"start-ok frame of {size} octets (client-properties padded)")
    peer.send(frame)
    obs = peer.observe(REACTION_WINDOW, stop=is_method("connection.tune", "connection.secure", "connection.close"))
    ctx.check(obs, Replies("connection.tune", channel=0))


CHANNEL_RANGE = ("Specifies highest channel number that the server permits. Usable channel numbers are in "
                 "the range 1..channel-max. Zero indicates no specified limit.")
# That sentence is the description of connection.tune's channel-max field, not a rule: no MUST or
# SHOULD says what a server does with a channel outside 1..channel-max (tune-ok's upper-limit rule
# is about the client's tune-ok value). The two cases below therefore weigh MAY (informational).


def _limited_channels(ctx: Context, wanted: int = 5) -> tuple[Peer, int]:
    """A connection opened with channel-max = ``wanted`` (or the server's lower, non-zero limit)."""
    peer, tune = after_tune(ctx)
    limit = wanted if tune.channel_max == 0 or tune.channel_max >= wanted else tune.channel_max
    frame_max = tune.frame_max or 131072
    peer.send(MethodFrame(0, spec.ConnectionTuneOk(limit, frame_max, 0)),
              MethodFrame(0, spec.ConnectionOpen(ctx.target.vhost)))
    peer.negotiated.channel_max, peer.negotiated.frame_max = limit, frame_max
    peer.expect("connection.open-ok", channel=0)
    peer.negotiated.opened = True
    ctx.note(f"negotiated channel-max {limit} (server proposed {tune.channel_max})")
    return peer, limit


@case("amqp091/connection.tune/channel-above-max",
      title="opening a channel numbered above the negotiated channel-max is a connection exception",
      guideline=CHANNEL_RANGE)
def tune_channel_above_max(ctx: Context) -> None:
    """Negotiates channel-max 5 and sends channel.open on channel 6, outside 1..channel-max.
    Passes on a connection exception: 504 (channel-error), 530 (not-allowed) or 503 (command-invalid)."""
    peer, limit = _limited_channels(ctx)
    peer.send(MethodFrame(limit + 1, spec.ChannelOpen()))
    ctx.check(peer.observe(REACTION_WINDOW, stop=is_method("channel.open-ok")),
              ConnectionException(504, 530, 503))


@case("amqp091/connection.tune/channel-at-max",
      title="a channel numbered exactly the negotiated channel-max can be opened",
      guideline=CHANNEL_RANGE)
def tune_channel_at_max(ctx: Context) -> None:
    """Negotiates channel-max 5 and opens channel 5, the top of the usable range: channel.open-ok."""
    peer, limit = _limited_channels(ctx)
    peer.send(MethodFrame(limit, spec.ChannelOpen()))
    ctx.check(peer.observe(REACTION_WINDOW, stop=is_method("channel.open-ok", "channel.close")),
              Replies("channel.open-ok", channel=limit))


# ---------------------------------------------------------------------------------- connection.tune-ok
def _tune_ok_then_open(ctx: Context, peer: Peer, channel_max: int, frame_max: int,
                       stop: Stop = any_frame) -> Observation:
    """Sends tune-ok with the given values and connection.open right behind it, as clients do."""
    peer.send(MethodFrame(0, spec.ConnectionTuneOk(channel_max, frame_max, 0)),
              MethodFrame(0, spec.ConnectionOpen(ctx.target.vhost)))
    return peer.observe(REACTION_WINDOW, stop=stop)


@case("amqp091/connection.tune-ok/channel-max-above-server",
      title="tune-ok channel-max above the server's is closed without a negotiated close",
      clauses=("amqp091:connection.tune-ok.channel-max/upper-limit", NEGOTIATION))
def tune_ok_channel_max_above(ctx: Context) -> None:
    """Answers connection.tune with channel-max one higher than proposed (then connection.open):
    the broker must close the socket without connection.close (and without open-ok)."""
    peer, tune = after_tune(ctx)
    if tune.channel_max in (0, 0xFFFF):
        ctx.skip(f"the server proposes channel-max {tune.channel_max}: no higher value exists")
    frame_max = tune.frame_max or 131072
    ctx.check(_tune_ok_then_open(ctx, peer, tune.channel_max + 1, frame_max), SilentClose())


@case("amqp091/connection.tune-ok/frame-max-above-server",
      title="tune-ok frame-max above the server's is closed without a negotiated close",
      clauses=("amqp091:connection.tune-ok.frame-max/upper-limit", NEGOTIATION))
def tune_ok_frame_max_above(ctx: Context) -> None:
    """Answers connection.tune with frame-max one higher than proposed (then connection.open):
    the broker must close the socket without connection.close (and without open-ok)."""
    peer, tune = after_tune(ctx)
    if tune.frame_max in (0, 0xFFFFFFFF):
        ctx.skip(f"the server proposes frame-max {tune.frame_max}: no higher value exists")
    ctx.check(_tune_ok_then_open(ctx, peer, tune.channel_max, tune.frame_max + 1), SilentClose())


@case("amqp091/connection.tune-ok/frame-max-below-minimum",
      title="tune-ok frame-max 1024 (below frame-min-size) is refused, silently",
      clauses=("amqp091:connection.tune-ok.frame-max/minimum", NEGOTIATION))
def tune_ok_frame_max_below(ctx: Context) -> None:
    """Answers connection.tune with frame-max 1024 (then connection.open). The minimum negotiated
    frame-max is 4096, so the broker must refuse the connection; as this is an error before
    Open-Ok, 2.2.4/1 further asks for a socket close without any data (checked separately)."""
    peer, tune = after_tune(ctx)
    obs = _tune_ok_then_open(ctx, peer, tune.channel_max, 1024, stop=is_method("connection.open-ok"))
    ctx.check(obs, NotOpened(), what="the connection is refused",
              clauses=("amqp091:connection.tune-ok.frame-max/minimum",))
    ctx.check(obs, SilentClose(), what="refused by closing the socket without any further data",
              clauses=(NEGOTIATION,), sets_close=False)


# ---------------------------------------------------------------------------------- connection.open
def _open_unknown_vhost(ctx: Context) -> Observation:
    peer, _ = after_tune(ctx)
    vhost = ctx.name("no-such-vhost")
    ctx.note(f"virtual host {vhost!r}")
    return _tune_ok_then_open_vhost(peer, vhost)


def _tune_ok_then_open_vhost(peer: Peer, vhost: str) -> Observation:
    tune = peer.negotiated.tune
    assert tune is not None
    peer.send(MethodFrame(0, spec.ConnectionTuneOk(tune.channel_max, tune.frame_max or 131072, 0)),
              MethodFrame(0, spec.ConnectionOpen(vhost)))
    return peer.observe(REACTION_WINDOW, stop=is_method("connection.open-ok"))


@case("amqp091/connection.open/unknown-vhost",
      title="connection.open to a virtual host that does not exist is refused",
      clauses=("amqp091:3.1.2/1", "amqp091:connection.open.virtual-host/separation"))
def open_unknown_vhost(ctx: Context) -> None:
    """Sends connection.open for a virtual host name unique to this run, which no broker has.
    A connection must be associated with a (real) virtual host, so the broker must not answer
    open-ok: a connection.close (any code) or a socket close passes."""
    obs = _open_unknown_vhost(ctx)
    ctx.check(obs, NotOpened())
    close = obs.connection_close
    if close is not None:
        ctx.note(f"reply code {code_name(close.reply_code)}: {close.reply_text}")


INVALID_PATH = "invalid-path (402): The client tried to work with an unknown virtual host."


@case("amqp091/connection.open/unknown-vhost-reply-code",
      title="connection.open to an unknown virtual host is answered with 402 (invalid-path)",
      guideline=INVALID_PATH)
def open_unknown_vhost_code(ctx: Context) -> None:
    """Sends connection.open for a virtual host that does not exist; the reply code defined for
    an unknown virtual host is 402 invalid-path, so connection.close 402 is expected. Only the
    reply-code glossary gives that meaning; no MUST or SHOULD sentence names the code a server
    closes with (connection.open's own rule, which unknown-vhost checks, names none), so another
    code is informational."""
    obs = _open_unknown_vhost(ctx)
    ctx.check(obs, ConnectionException(402))
    close = obs.connection_close
    ctx.note(f"reply code {code_name(close.reply_code)}: {close.reply_text}" if close is not None
             else "no connection.close came")


# ---------------------------------------------------------------------------------- connection.close
def provoke_connection_close(ctx: Context) -> tuple[Peer, spec.ConnectionClose]:
    """Makes the broker send connection.close (channel.open on an open channel, a channel-error
    per channel.open/state), leaving it unanswered. Skips when the broker does not close."""
    peer = ctx.connect()
    ch = peer.open_channel()
    peer.send(MethodFrame(ch, spec.ChannelOpen()))
    obs = peer.observe(REACTION_WINDOW, reply_close_ok=False, stop=is_method("connection.close"))
    close = obs.connection_close
    if close is None:
        ctx.skip(f"could not provoke a connection.close (channel.open on an open channel gave: {obs.describe()})")
    ctx.note(f"broker sent connection.close {code_name(close.reply_code)}")
    ctx.close = close_info(obs, None, True)  # the close verdict is the provoked close
    return peer, close


@case("amqp091/connection.close/discards-after-close",
      title="after sending connection.close the broker discards other methods (no channel.open-ok)",
      clauses=("amqp091:connection.close/stability",))
def close_discards(ctx: Context) -> None:
    """Provokes a connection.close, and before answering it sends channel.open on a fresh channel.
    The broker must discard it: no channel.open-ok, nothing but close / close-ok, either in the
    second we give it before answering close-ok or until the socket closes after it. (Sending
    close-ok at once would let a broker close the socket before a wrongful open-ok is written.)"""
    peer, _ = provoke_connection_close(ctx)
    peer.send(MethodFrame(peer.free_channel(), spec.ChannelOpen()))
    before = peer.observe(DISCARD_WINDOW, reply_close_ok=False, stop=is_method("channel.open-ok"))
    after = Observation(end=before.end)
    if not before.closed and not before.methods("channel.open-ok"):
        peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
        after = peer.observe(REACTION_WINDOW, reply_close_ok=False, stop=is_method("channel.open-ok"))
    obs = Observation(received=before.received + after.received, end=after.end,
                      framing_error=before.framing_error or after.framing_error,
                      elapsed=before.elapsed + after.elapsed)
    ctx.check(obs, OnlyClosing(("connection.close", "connection.close-ok"), "channel.open-ok"),
              sets_close=False)
    peer.abort()


@case("amqp091/connection.close/close-crossing",
      title="a connection.close answering the broker's connection.close gets connection.close-ok",
      clauses=("amqp091:connection.close/stability", "amqp091:2.3.7/2"))
def close_crossing(ctx: Context) -> None:
    """Provokes a connection.close and answers it with our own connection.close (as when both
    peers close at once). "The response to receiving a Close after sending Close must be to
    send Close-Ok" (stability), and 2.3.7/2: the receiver MUST respond to a Close with Close-Ok."""
    peer, _ = provoke_connection_close(ctx)
    peer.send(MethodFrame(0, spec.ConnectionClose(200, "amqpspec closes too", 0, 0)))
    obs = peer.observe(QUICK_WINDOW, reply_close_ok=False, stop=is_method("connection.close-ok"))
    ctx.check(obs, Replies("connection.close-ok", channel=0), sets_close=False)
    peer.abort()
