"""connection.start-ok, connection.tune-ok, frame-min-size: the client's half of negotiation.

start-ok: "The properties SHOULD contain at least these fields: product, version,
platform, copyright (if appropriate), information (if appropriate)"; "The client SHOULD
authenticate using the highest-level security profile it can handle from the list provided
by the server" -- at the least one from that list.

tune-ok: the limits are the server's proposal, which "The client responds and MAY reduce"
(2.3.3/5); the tune-ok rules name a channel-max or frame-max "higher than the value provided
by the server" a fault the server closes on, and "the minimum negotiated value for
frame-max is also frame-min-size" (4096). Before tuning "both peers MUST accept frames of up
to frame-min-size octets large": a connection.start of 4000 octets must be read.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.server091 import server_properties
from amqpspec.client.session import client_target
from amqpspec.wire.amqp091 import MethodFrame, spec, to_plain

from ._client import handshake_goes_on, open_conversation

REQUIRED = ("product", "version", "platform")
RESPONSE = ("A block of opaque data passed to the security mechanism. The contents of this data are defined by "
            "the SASL security mechanism.")
LOCALE = "A single message locale selected by the client, which must be one of those specified by the server."


@case("amqp091/connection.start-ok/client-properties-fields", role="client",
      title="client-properties carry product, version and platform",
      clauses=("amqp091:connection.start-ok.client-properties/required-fields",))
def client_properties(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    props = to_plain(p.peer.negotiated.start_ok.client_properties or {})  # type: ignore[union-attr]
    missing = [k for k in REQUIRED if not props.get(k)]
    ctx.record(not missing, expected="client-properties with " + ", ".join(REQUIRED),
               observed=("missing " + ", ".join(missing)) if missing else "fields: " + ", ".join(sorted(map(str, props))))
    p.serve()
    p.finish()


@case("amqp091/connection.start-ok/mechanism-from-offer", role="client",
      title="the client authenticates with a mechanism from the server's list (PLAIN only offered)",
      clauses=("amqp091:connection.start-ok.mechanism/security",))
def mechanism_from_offer(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"mechanisms": b"PLAIN"})
    chosen = str(p.peer.negotiated.start_ok.mechanism)  # type: ignore[union-attr]
    ctx.record(chosen == "PLAIN", expected="mechanism PLAIN (the only one offered)", observed=f"mechanism {chosen!r}")
    p.serve()
    p.finish()


@case("amqp091/connection.tune-ok/channel-max-within-proposal", role="client",
      title="tune-ok channel-max is not above the server's proposal (5)",
      clauses=("amqp091:connection.tune-ok.channel-max/upper-limit", "amqp091:2.3.3/5"))
def channel_max(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"channel_max": 5})
    got = p.peer.negotiated.channel_max
    ctx.record(0 < got <= 5, expected="channel-max from 1 to 5 (0 would mean no limit: above the proposal)",
               observed=f"channel-max {got}", clauses=("amqp091:connection.tune-ok.channel-max/upper-limit",))
    p.serve()
    p.finish()


@case("amqp091/connection.tune-ok/frame-max-within-proposal", role="client",
      title="tune-ok frame-max is not above the server's proposal (4096) nor below frame-min-size",
      clauses=("amqp091:connection.tune-ok.frame-max/upper-limit", "amqp091:connection.tune-ok.frame-max/minimum"))
def frame_max(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"frame_max": 4096})
    got = p.peer.negotiated.frame_max
    ctx.record(got == 4096, expected="frame-max 4096 (not above the proposal, not below frame-min-size 4096)",
               observed=f"frame-max {got}")
    p.serve()
    p.finish()


@case("amqp091/connection.tune-ok/frame-max-zero-proposal", role="client",
      title="to a proposal of no frame limit (0) the client answers 0 or a limit of at least frame-min-size",
      clauses=("amqp091:connection.tune-ok.frame-max/minimum",))
def frame_max_unlimited(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"frame_max": 0})
    got = p.peer.negotiated.frame_max
    ctx.record(got == 0 or got >= 4096, expected="frame-max 0 or at least 4096", observed=f"frame-max {got}")
    p.serve()
    p.finish()


@case("amqp091/connection.tune/accepts-frame-min-size-start", role="client",
      title="before tuning the client accepts a connection.start frame of nearly frame-min-size (4000 octets)",
      clauses=("amqp091:connection.tune.frame-max/minimum",))
def accepts_large_start(ctx: Context) -> None:
    props = server_properties()
    props["information"] = ""
    base = len(MethodFrame(0, spec.ConnectionStart(0, 9, props, b"PLAIN AMQPLAIN", b"en_US")).encode())
    props["information"] = "x" * (4000 - base)  # the whole frame: 4000 octets, under frame-min-size
    handshake_goes_on(ctx, props, "the handshake goes on after a 4000-octet connection.start")


@case("amqp091/connection.start-ok/locale-from-offer", role="client",
      title="the client selects a locale the server offered (en_US only)",
      guideline=LOCALE)
def locale_from_offer(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"locales": b"en_US"})
    chosen = str(p.peer.negotiated.start_ok.locale)  # type: ignore[union-attr]
    ctx.record(chosen == "en_US", expected="locale en_US (the only one offered)", observed=f"locale {chosen!r}",
               guideline=LOCALE)
    p.serve()
    p.finish()


@case("amqp091/connection.start-ok/plain-response", role="client",
      title="offered PLAIN only, the client's response is the SASL PLAIN message of its URL's user and password",
      guideline=RESPONSE)
def plain_response(ctx: Context) -> None:
    """SASL PLAIN (RFC 4616): [authzid] NUL authcid NUL passwd. The password is compared, never shown."""
    p = open_conversation(ctx, "connect", handshake={"mechanisms": b"PLAIN"})
    ok_ = p.peer.negotiated.start_ok
    target = client_target(ctx)
    response = bytes(ok_.response or b"") if ok_ is not None else b""  # type: ignore[arg-type]
    parts = response.split(b"\0")
    good = (str(ok_.mechanism) == "PLAIN" and len(parts) == 3 and parts[1] == target.username.encode()
            and parts[2] == target.password.reveal().encode())
    if target.serve_mode:  # the client brings credentials of its own: only the layout is known
        good = str(ok_.mechanism) == "PLAIN" and len(parts) == 3
    shown = (f"mechanism {str(ok_.mechanism)!r}, {len(parts)} NUL-separated part(s), user "
             f"{parts[1][:40]!r} , password {'as given' if len(parts) == 3 and parts[2] == target.password.reveal().encode() else 'NOT as given'}"
             if len(parts) >= 2 else f"mechanism {str(ok_.mechanism)!r}, a response of {len(response)} octets without the PLAIN layout")
    ctx.record(good, expected=f"PLAIN with authzid empty or absent, user {target.username!r} and the URL's password",
               observed=shown, guideline=RESPONSE)
    p.serve()
    p.finish()
