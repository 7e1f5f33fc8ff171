"""Spec 5.3 SASL (security), and 5.1 on how a failed security layer ends the connection.

The SASL layer: header AMQP 3 1.0.0 both ways (the 2.2 rules apply), the broker announces its
mechanisms (sasl-mechanisms), the client picks one (sasl-init), the broker answers with a
sasl-outcome; after a successful outcome the AMQP header is exchanged again. SASL frames have
TYPE 0x01, their channel octets and extended header are ignored, and "the maximum size of a
SASL frame is defined by MIN-MAX-FRAME-SIZE" (512 octets).

The outcome codes carry no RFC 2119 keyword ("1 Connection authentication failed due to an
unspecified problem with the supplied credentials"), so checks of the code a failure carries
are guideline-level. Frames are padded to a size through their extended header, which SASL
frames ignore, so no field with a meaning (hostname, credentials) changes.
"""
from __future__ import annotations

import uuid
from typing import Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, Peer, UnexpectedReply, _as_list, performative_name
from amqpspec.verify import Verifier
from amqpspec.wire.amqp10 import (
    AMQP_HEADER, SASL_HEADER, AMQPFrame, Composite, Encoded, ProtocolHeader, SASLFrame, Symbol, describe, spec,
)

from ._common import MIN_MAX_FRAME_SIZE, REACTION_WINDOW, WAIT
from ._handshake import (
    ALTERNATIVE_CLOSE, RefusesWithHeader, check_version_choice, header_of, keeps_reading, send_header,
)

AUTH_FAILURE_WINDOW = 10.0   # brokers may delay a failed outcome on purpose (RabbitMQ: about 6 s)
AUTH_TEXT = "auth (1): Connection authentication failed due to an unspecified problem with the supplied credentials."
FAILED_TEXT = ("ok (0): Connection authentication succeeded. / auth (1): Connection authentication failed due to an "
               "unspecified problem with the supplied credentials. / sys (2): Connection authentication failed due "
               "to a system error. / sys-perm (3): Connection authentication failed due to a system error that is "
               "unlikely to be corrected without intervention. / sys-temp (4): Connection authentication failed due "
               "to a transient system error. [sasl-code]")
NO_DATA_TEXT = "If the authentication is unsuccessful, this field is not set."


# ---------------------------------------------------------------------------------------- helpers
def mechanisms(ctx: Context, peer: Peer) -> list[str]:
    """SASL header exchange and sasl-mechanisms; skips when the broker does not offer SASL (it
    refused the header with another protocol id, which 2.2 allows)."""
    try:
        body = peer.sasl(upto="mechanisms")
    except UnexpectedReply as exc:
        got = exc.got
        if isinstance(got, ProtocolHeader) and got.well_formed and got.protocol_id != 3:
            ctx.skip(f"the broker answered the SASL header with {got.summary()}: it offers no SASL layer")
        raise
    return [str(m) for m in _as_list(body.sasl_server_mechanisms)]


def working_init(ctx: Context, offered: list[str]) -> spec.SaslInit:
    """The sasl-init that should succeed: PLAIN with the URL's credentials, else ANONYMOUS."""
    target = ctx.target
    if target.credentials_given and "PLAIN" in offered:
        response = b"\x00" + target.username.encode() + b"\x00" + target.password.reveal().encode()
        return spec.SaslInit(mechanism=Symbol("PLAIN"), initial_response=response)
    if "ANONYMOUS" in offered:
        return spec.SaslInit(mechanism=Symbol("ANONYMOUS"))
    ctx.skip(f"no mechanism the suite can use: the broker offers {', '.join(offered)}"
             f"{'' if target.credentials_given else ' and the URL names no credentials'}")
    raise AssertionError  # not reached


def plain_init(ctx: Context, offered: list[str], username: str, password: str) -> spec.SaslInit:
    if "PLAIN" not in offered:
        ctx.skip(f"the broker does not offer PLAIN (it offers {', '.join(offered)})")
    return spec.SaslInit(mechanism=Symbol("PLAIN"),
                         initial_response=b"\x00" + username.encode() + b"\x00" + password.encode())


def _variants(init: spec.SaslInit) -> list[tuple[str, spec.SaslInit]]:
    """The same sasl-init in other valid encodings (a wider symbol, binary or list constructor),
    fewest changes first: each changes the body's length by 3 or 6 octets, not its meaning."""
    sym = Encoded(init.mechanism, "sym32")
    vbin = None if init.initial_response is None else Encoded(bytes(init.initial_response), "vbin32")
    out = [("", init), ("mechanism as sym32", init.replace(mechanism=sym))]
    if vbin is not None:
        out.append(("initial-response as vbin32", init.replace(initial_response=vbin)))
    out.append(("list32 encoding", init.override(encoding="list32")))
    out.append(("list32 encoding, mechanism as sym32", init.replace(mechanism=sym).override(encoding="list32")))
    return out


def padded(init: spec.SaslInit, sizes: range | tuple[int, ...]) -> tuple[SASLFrame, str]:
    """The SASL frame of ``init`` grown to one of ``sizes`` octets by an extended header (which
    SASL frames ignore; it comes in 4-octet words, so the body's encoding may be widened)."""
    for note, body in _variants(init):
        bare = len(SASLFrame(body).encode())
        for size in sizes:
            pad = size - bare
            if pad >= 0 and pad % 4 == 0 and 2 + pad // 4 <= 255:
                frame = SASLFrame(body, extended=bytes(pad))
                assert len(frame.encode()) == size
                return frame, note
    raise ValueError(f"cannot pad a sasl-init to {sizes} octets")


def sized(ctx: Context, init: spec.SaslInit, sizes: range | tuple[int, ...]) -> SASLFrame:
    frame, note = padded(init, sizes)
    ctx.note(f"sasl-init of {len(frame.encode())} octets: {len(frame.extended)} octets of extended header"
             + (f", {note}" if note else ""))
    return frame


def outcome_of(obs: Observation) -> spec.SaslOutcome | None:
    return obs.first("sasl-outcome")


def code_of(outcome: spec.SaslOutcome | None) -> int | None:
    return None if outcome is None else int(outcome.code)


def authenticated(item: object) -> bool:
    """A successful sasl-outcome or an open: the broker went on as if authenticated (ends a wait)."""
    name = performative_name(item)
    return name == "open" or (name == "sasl-outcome" and int(item.body.code) == 0)  # type: ignore[attr-defined]


class NotAuthenticated(Verifier):
    """No successful outcome and no open; the connection ends (a failed outcome before is allowed)."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        oks = [f for f in obs.performatives("sasl-outcome") if int(f.body.code) == 0]  # type: ignore[union-attr]
        return not oks and obs.first("open") is None and obs.closed

    def describe(self) -> str:
        return "no successful sasl-outcome and no open: the connection is closed (after a failed outcome, or not)"


class FailedOutcomeThenClose(Verifier):
    """A sasl-outcome with a failure code (1-4), then the socket closed."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        code = code_of(outcome_of(obs))
        return code is not None and 1 <= code <= 4 and obs.first("open") is None and obs.closed

    def describe(self) -> str:
        return "a sasl-outcome with an authentication failure code (1-4), then the socket closed"


def failed_login(ctx: Context, username: str, password: str) -> tuple[Peer, Observation]:
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(SASLFrame(plain_init(ctx, offered, username, password)))
    return peer, peer.observe(AUTH_FAILURE_WINDOW)


def check_failed_outcome(ctx: Context, obs: Observation) -> None:
    """The guideline-level checks of a refused login: failure code, code auth, no additional-data."""
    outcome = outcome_of(obs)
    code = code_of(outcome)
    if not ctx.record(code is not None and 1 <= code <= 4, expected="a sasl-outcome with a failure code (1-4)",
                      observed=obs.describe(), what="the login is refused", guideline=FAILED_TEXT):
        return
    ctx.record(code == 1, expected="sasl-outcome code auth (1)", observed=obs.describe(),
               what="the outcome code is auth", guideline=AUTH_TEXT)
    data = getattr(outcome, "additional_data", None)
    ctx.record(data is None, expected="no additional-data", observed=f"additional-data={data!r}",
               what="a failed outcome carries no additional-data", guideline=NO_DATA_TEXT)


# ---------------------------------------------------------------------------------------- 5.3 header and mechanisms
@case("amqp10/5.3/sasl-header-answered",
      title="the SASL header is answered with AMQP 3 1.0.0 and a non-empty sasl-mechanisms",
      clauses=("amqp10:5.3/1", "amqp10:2.2/7", "amqp10:5.3.2/1", "amqp10:5.3.2/3", "amqp10:1.4/3"))
def sasl_header_answered(ctx: Context) -> None:
    """Sends AMQP 3 1.0.0. The broker must answer with the SASL header AMQP 3 1.0.0 (5.3/1, 2.2/7),
    then, as the SASL server (it is the TCP server, 5.3.2/3), announce its mechanisms in a
    sasl-mechanisms frame (5.3.2/1) whose list is not empty (a multiple mandatory field, 1.4/3).
    A broker without SASL may refuse the header (another protocol id, then close): skipped."""
    peer, obs = send_header(ctx, SASL_HEADER, window=WAIT, done=lambda o: bool(o.performatives("sasl-mechanisms")))
    hdr = header_of(obs)
    if hdr is not None and hdr.data != SASL_HEADER and RefusesWithHeader(SASL_HEADER, refused_protocol_id=3).accepts(obs):
        ctx.skip(f"the broker refused the SASL header with {hdr.summary()}: it offers no SASL layer")
    ctx.record(hdr is not None and hdr.data == SASL_HEADER, expected="protocol-header AMQP 3 1.0.0 first",
               observed=obs.describe(), clauses=("amqp10:5.3/1", "amqp10:2.2/7"),
               what="the SASL header is answered with the SASL header")
    frames = obs.frames()[1:]
    first = frames[0] if frames else None
    ok = performative_name(first) == "sasl-mechanisms"
    ctx.record(ok, expected="a sasl-mechanisms frame (the broker acts as SASL server)", observed=obs.describe(),
               clauses=("amqp10:5.3.2/1", "amqp10:5.3.2/3"), what="the broker announces its mechanisms")
    if not ok:
        return
    offered = [str(m) for m in _as_list(first.body.sasl_server_mechanisms)]  # type: ignore[union-attr]
    ctx.record(bool(offered), expected="at least one mechanism", observed=f"sasl-server-mechanisms={offered}",
               clauses=("amqp10:5.3.2/1", "amqp10:1.4/3"), what="the list of mechanisms is not empty")


@case("amqp10/5.3/sasl-header-unsupported-version",
      title="a SASL header for version 2.0.0 is answered with a supported header, then close",
      clauses=("amqp10:5.3/1", "amqp10:2.2/8", ALTERNATIVE_CLOSE, "amqp10:2.2/9"))
def sasl_header_unsupported_version(ctx: Context) -> None:
    """Sends AMQP 3 2.0.0. "The exchange of SASL layer headers follows the same rules specified in
    the version negotiation section": a valid header other than 3 2.0.0, then the socket closed;
    the version offered should be the highest supported not above 2.0.0 (2.2/9, warning)."""
    data = b"AMQP\x03\x02\x00\x00"
    _, obs = send_header(ctx, data)
    ctx.check(obs, RefusesWithHeader(data), clauses=("amqp10:2.2/8", ALTERNATIVE_CLOSE),
              what="a valid protocol header, then the socket closed")
    check_version_choice(ctx, obs, (2, 0, 0))


@case("amqp10/5.3.3.1/anonymous-only-when-not-required",
      title="a broker that does not require authentication offers only ANONYMOUS",
      clauses=("amqp10:5.3.3.1/1",))
def anonymous_only_when_not_required(ctx: Context) -> None:
    """Finds out whether the broker requires authentication: it does not when a sasl-init with
    ANONYMOUS succeeds. If so, its sasl-mechanisms SHOULD be the one-element list [ANONYMOUS]
    (warning otherwise). Skipped when ANONYMOUS is not offered or fails (authentication required)."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    if "ANONYMOUS" not in offered:
        ctx.skip(f"the broker does not offer ANONYMOUS ({', '.join(offered)}): it requires authentication")
    peer.send(SASLFrame(spec.SaslInit(mechanism=Symbol("ANONYMOUS"))))
    obs = peer.observe(AUTH_FAILURE_WINDOW, stop=lambda item: performative_name(item) == "sasl-outcome")
    if code_of(outcome_of(obs)) != 0:
        ctx.skip(f"ANONYMOUS does not succeed ({obs.describe()}): the broker requires authentication")
    ctx.record(offered == ["ANONYMOUS"], expected="sasl-server-mechanisms=[ANONYMOUS]",
               observed=f"sasl-server-mechanisms={offered}, and ANONYMOUS succeeds")


# ---------------------------------------------------------------------------------------- 5.3.3.2 init and outcome
@case("amqp10/5.3.3.5/outcome-ok-then-amqp-header",
      title="a successful SASL exchange is followed by the AMQP header exchange and open",
      clauses=("amqp10:5.3.3.5/1", "amqp10:5.3.3.2/3"), timeout=15.0)
def outcome_ok_then_amqp_header(ctx: Context) -> None:
    """SASL with PLAIN and the URL's credentials (ANONYMOUS without credentials), with no hostname in
    sasl-init: the broker SHOULD pick a default host and succeed (code 0; warning otherwise). Then
    the peers MUST exchange protocol headers: our AMQP 0 1.0.0 is answered with AMQP 0 1.0.0 and
    an open is answered with an open."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(SASLFrame(working_init(ctx, offered)))
    obs = peer.observe(AUTH_FAILURE_WINDOW, stop=lambda item: performative_name(item) == "sasl-outcome")
    ok = code_of(outcome_of(obs)) == 0
    ctx.record(ok, expected="sasl-outcome code ok (0)", observed=obs.describe(), clauses=("amqp10:5.3.3.2/3",),
               what="without a hostname the broker selects a default and authenticates")
    if not ok:
        return
    peer.send(ProtocolHeader.amqp())
    after = peer.observe(WAIT, stop=lambda item: isinstance(item, ProtocolHeader))
    hdr = header_of(after)
    if not ctx.record(hdr is not None and hdr.data == AMQP_HEADER, expected="protocol-header AMQP 0 1.0.0",
                      observed=after.describe(), clauses=("amqp10:5.3.3.5/1",),
                      what="the AMQP header is exchanged after the outcome"):
        return
    peer.stage = "header"
    peer.open(wait=False)
    opened = peer.observe(WAIT, stop=lambda item: performative_name(item) == "open")
    ctx.record(opened.first("open") is not None and opened.close is None, expected="the broker's open",
               observed=opened.describe(), clauses=("amqp10:5.3.3.5/1",), what="the AMQP connection is established")


@case("amqp10/5.3.3.2/plain-wrong-password", title="PLAIN with a wrong password is refused with code auth",
      guideline=AUTH_TEXT, timeout=20.0)
def plain_wrong_password(ctx: Context) -> None:
    """PLAIN with the URL's user name and a wrong password (the password with a suffix). The login
    must not succeed: a sasl-outcome with a failure code, code auth (1) for credentials, and no
    additional-data (guideline-level: the codes carry no RFC 2119 keyword). Skipped without PLAIN
    or without credentials in the URL."""
    if not ctx.target.credentials_given:
        ctx.skip("the URL names no credentials")
    _, obs = failed_login(ctx, ctx.target.username, ctx.target.password.reveal() + "-wrong")
    check_failed_outcome(ctx, obs)


@case("amqp10/5.3.3.2/plain-unknown-user", title="PLAIN with an unknown user is refused with code auth",
      guideline=AUTH_TEXT, timeout=20.0)
def plain_unknown_user(ctx: Context) -> None:
    """PLAIN for a user name that does not exist (random). The login must not succeed: a failure code,
    code auth (1), no additional-data (guideline-level). Skipped when PLAIN is not offered."""
    user = f"amqpspec-nobody-{uuid.UUID(int=ctx.rng.getrandbits(128)).hex[:8]}"
    _, obs = failed_login(ctx, user, "amqpspec")
    check_failed_outcome(ctx, obs)


@case("amqp10/5.3.3.2/unsupported-mechanism",
      title="a mechanism the broker does not support is refused with an authentication failure code, then close",
      clauses=("amqp10:5.3.3.2/1",), timeout=20.0)
def unsupported_mechanism(ctx: Context) -> None:
    """sasl-init with the mechanism AMQPSPEC-NO-SUCH-MECHANISM, which no broker offers. "If the
    selected mechanism is not supported by the receiving peer, it MUST close the connection with the
    authentication-failure close-code": a sasl-outcome with an authentication failure code (1-4),
    then the socket closed."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    assert "AMQPSPEC-NO-SUCH-MECHANISM" not in offered
    peer.send(SASLFrame(spec.SaslInit(mechanism=Symbol("AMQPSPEC-NO-SUCH-MECHANISM"))))
    ctx.check(peer.observe(AUTH_FAILURE_WINDOW), FailedOutcomeThenClose())


@case("amqp10/5.1/failed-sasl-closes-outgoing-then-reads",
      title="after a failed SASL outcome the broker shuts its outgoing stream, then reads ours until it ends",
      clauses=("amqp10:5.1/1",), timeout=20.0)
def failed_sasl_closes_outgoing_then_reads(ctx: Context) -> None:
    """Fails a SASL exchange (PLAIN with a wrong password when the broker offers PLAIN and the URL
    names credentials, else an unsupported mechanism). The security layer terminates, so "the TCP
    connection MUST be closed by first shutting down the outgoing stream and then reading the
    incoming stream until it is terminated": the broker's FIN (not a reset), after which octets we
    send are still taken (no RST) until we end our stream."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    if ctx.target.credentials_given and "PLAIN" in offered:
        init = plain_init(ctx, offered, ctx.target.username, ctx.target.password.reveal() + "-wrong")
    else:
        init = spec.SaslInit(mechanism=Symbol("AMQPSPEC-NO-SUCH-MECHANISM"))
    peer.send(SASLFrame(init))
    obs = peer.observe(AUTH_FAILURE_WINDOW)
    if not ctx.record(obs.closed and code_of(outcome_of(obs)) != 0,
                      expected="the failed exchange ends the TCP connection", observed=obs.describe(),
                      what="the TCP connection is closed"):
        return
    ok, observed = keeps_reading(ctx, peer, obs)
    ctx.record(ok, expected="FIN, then the broker keeps reading until our stream ends", observed=observed,
               what="outgoing stream shut first, incoming stream read until terminated")


# ---------------------------------------------------------------------------------------- 5.3.1 SASL frames
@case("amqp10/5.3.1/broker-sasl-frame-header",
      title="the broker's SASL frames have channel octets 0, DOFF 2, and at most 512 octets",
      clauses=("amqp10:5.3.1/1", "amqp10:5.3.1/4", "amqp10:5.3.1/2", "amqp10:5.3.1/5", "amqp10:2.7.1/4",
               "amqp10:5.3.1/3"),
      timeout=15.0)
def broker_sasl_frame_header(ctx: Context) -> None:
    """Runs a SASL exchange and inspects the broker's sasl-mechanisms and sasl-outcome frames: octets
    6-7 SHOULD be 0x0000 and DOFF SHOULD be 2 (warnings); each frame is at most 512 octets, the size
    of every SASL frame (a peer MUST NOT send frames larger than its partner can handle); each body
    is exactly one AMQP type providing sasl-frame, with nothing after it (5.3.1/3)."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader.sasl())
    seen: list[tuple[SASLFrame, int]] = []
    header = peer.expect_header()
    if header.data != SASL_HEADER:
        ctx.skip(f"the broker answered the SASL header with {header.summary()}: it offers no SASL layer")
    item = peer.expect("sasl-mechanisms")
    seen.append((item, len(peer.reader.last_raw)))
    offered = [str(m) for m in _as_list(item.body.sasl_server_mechanisms)]
    peer.send(SASLFrame(working_init(ctx, offered)))
    item = peer.expect("sasl-outcome", timeout=AUTH_FAILURE_WINDOW)
    seen.append((item, len(peer.reader.last_raw)))
    shown = "; ".join(f"{performative_name(f)}: channel octets 0x{f.channel:04x}, DOFF {2 + len(f.extended) // 4}, "
                      f"{n} octets" for f, n in seen)
    ctx.record(all(f.channel == 0 for f, _ in seen), expected="octets 6-7 of each SASL frame 0x0000",
               observed=shown, clauses=("amqp10:5.3.1/1", "amqp10:5.3.1/4"), what="type-specific octets are 0")
    ctx.record(all(not f.extended for f, _ in seen), expected="DOFF 2 (no extended header)",
               observed=shown, clauses=("amqp10:5.3.1/2", "amqp10:5.3.1/5"), what="DOFF is 2")
    ctx.record(all(n <= MIN_MAX_FRAME_SIZE for _, n in seen), expected="SASL frames of at most 512 octets",
               observed=shown, clauses=("amqp10:2.7.1/4",), what="SASL frames fit MIN-MAX-FRAME-SIZE")
    bodies = "; ".join(describe(f) for f, _ in seen)
    ctx.record(all(isinstance(f.body, Composite) and "sasl-frame" in f.body.PROVIDES and not f.trailing for f, _ in seen),
               expected="each frame body exactly one described type providing sasl-frame", observed=bodies,
               clauses=("amqp10:5.3.1/3",), what="a SASL frame body is exactly one SASL frame type")


def _init_answered(ctx: Context, frame_of: Callable[[spec.SaslInit], SASLFrame], what: str) -> None:
    """The sasl-init that succeeds for this target, framed by ``frame_of``: the outcome must be ok."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(frame_of(working_init(ctx, offered)))
    obs = peer.observe(AUTH_FAILURE_WINDOW, stop=lambda item: performative_name(item) == "sasl-outcome")
    ctx.record(code_of(outcome_of(obs)) == 0, expected="sasl-outcome code ok (0), as for a plain sasl-init",
               observed=obs.describe(), what=what)


@case("amqp10/5.3.1/channel-octets-ignored", title="a sasl-init with non-zero channel octets is processed normally",
      guideline="Bytes 6 and 7 of the header are ignored.", timeout=15.0)
def channel_octets_ignored(ctx: Context) -> None:
    """Sends the sasl-init that succeeds for this target (PLAIN with the URL's credentials, or
    ANONYMOUS) with octets 6-7 set to 0x1234. They are ignored: the outcome must be ok (warning)."""
    _init_answered(ctx, lambda init: SASLFrame(init, channel=0x1234), "octets 6-7 of a SASL frame are ignored")


@case("amqp10/5.3.1/extended-header-ignored", title="a sasl-init with an extended header is processed normally",
      guideline="The extended header is ignored.", timeout=15.0)
def extended_header_ignored(ctx: Context) -> None:
    """Sends the sasl-init that succeeds for this target with DOFF 4 and 8 non-zero octets of
    extended header. The extended header is ignored: the outcome must be ok (warning)."""
    _init_answered(ctx, lambda init: SASLFrame(init, extended=bytes.fromhex("deadbeefcafef00d")),
                   "the extended header of a SASL frame is ignored")


@case("amqp10/5.3.1/frame-of-512-accepted", title="a sasl-init frame of exactly 512 octets is accepted",
      clauses=("amqp10:2.7.1/6",), timeout=15.0)
def frame_of_512_accepted(ctx: Context) -> None:
    """Sends the sasl-init that succeeds for this target, padded to exactly 512 octets (the largest
    SASL frame) with an extended header, which SASL frames ignore. Both peers MUST accept frames of
    up to 512 octets: the outcome must be ok."""
    _init_answered(ctx, lambda init: sized(ctx, init, (MIN_MAX_FRAME_SIZE,)), "a 512-octet SASL frame is processed")


@case("amqp10/5.3.1/frame-over-512-refused", title="a sasl-init frame larger than 512 octets does not authenticate",
      clauses=("amqp10:2.7.1/5",), timeout=15.0)
def frame_over_512_refused(ctx: Context) -> None:
    """Sends the sasl-init that succeeds for this target, padded to 1000-1003 octets with an extended
    header. "The maximum size of a SASL frame is defined by MIN-MAX-FRAME-SIZE" (512), so the frame
    is oversized and the broker MUST close the connection (SASL has no close frame to carry
    framing-error): no successful outcome, then the socket closed. A failed outcome first is allowed."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(sized(ctx, working_init(ctx, offered), range(1000, 1004)))
    obs = peer.observe(REACTION_WINDOW, stop=authenticated)
    ctx.check(obs, NotAuthenticated())


@case("amqp10/5.3.1/empty-frame-irrecoverable", title="an empty frame during SASL ends the connection",
      guideline="Receipt of an empty frame is an irrecoverable error.", timeout=15.0)
def empty_frame_irrecoverable(ctx: Context) -> None:
    """After sasl-mechanisms, sends an empty SASL frame (8-octet header, TYPE 1, no body), then the
    sasl-init that would succeed. An empty frame is an irrecoverable error: the connection must end
    without a successful outcome (a broker that ignored the empty frame answers the init: warning)."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(SASLFrame(None), SASLFrame(working_init(ctx, offered)))
    ctx.check(peer.observe(REACTION_WINDOW, stop=authenticated), NotAuthenticated())


# ---------------------------------------------------------------------------------------- 5.3.2 negotiation
@case("amqp10/5.3.2/amqp-frame-instead-of-init", title="an AMQP open instead of sasl-init does not open the connection",
      level=Level.SHOULD, guideline="The partner MUST then choose one of the supported mechanisms and initiate a sasl "
                                    "exchange.")
def amqp_frame_instead_of_init(ctx: Context) -> None:
    """After sasl-mechanisms, sends an AMQP frame (TYPE 0) carrying open instead of a sasl-init.
    The client skipped the exchange it must initiate; the text names no reaction, but the broker
    must not open an unauthenticated connection: no open and no successful outcome, and the
    connection ends (warning otherwise)."""
    peer = ctx.connect(handshake=False)
    mechanisms(ctx, peer)
    peer.send(AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host)))
    ctx.check(peer.observe(REACTION_WINDOW, stop=authenticated), NotAuthenticated())


@case("amqp10/5.3.2/sasl-init-in-amqp-frame", title="a sasl-init in an AMQP frame (TYPE 0) is not a SASL exchange",
      guideline="A SASL frame has a type code of 0x01.", timeout=15.0)
def sasl_init_in_amqp_frame(ctx: Context) -> None:
    """After sasl-mechanisms, sends the sasl-init that would succeed, but in a frame of TYPE 0x00
    (AMQP) instead of 0x01. It is not a SASL frame: the broker should not authenticate on it
    (no successful outcome, no open) and the connection should end (warning otherwise)."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(AMQPFrame(0, working_init(ctx, offered)))
    ctx.check(peer.observe(REACTION_WINDOW, stop=authenticated), NotAuthenticated())


@case("amqp10/5.3.3.5/open-without-amqp-header",
      title="an open sent after the outcome without the AMQP header is answered with a header, then close",
      clauses=("amqp10:5.3.3.5/1", "amqp10:2.2/11", ALTERNATIVE_CLOSE), timeout=15.0)
def open_without_amqp_header(ctx: Context) -> None:
    """Completes SASL successfully, then sends an open frame where the peers MUST exchange protocol
    headers. The broker, waiting for a header, receives octets it cannot parse as one: it MUST send
    a valid protocol header and close the socket (2.2/11; an open and a close in between are
    allowed, 2.4.3)."""
    peer = ctx.connect(handshake=False)
    offered = mechanisms(ctx, peer)
    peer.send(SASLFrame(working_init(ctx, offered)))
    first = peer.observe(AUTH_FAILURE_WINDOW, stop=lambda item: performative_name(item) == "sasl-outcome")
    if code_of(outcome_of(first)) != 0:
        ctx.skip(f"SASL did not succeed: {first.describe()}")
    peer.send(AMQPFrame(0, spec.Open(container_id="amqpspec", hostname=ctx.target.host)))
    obs = peer.observe(REACTION_WINDOW)
    ctx.check(obs, RefusesWithHeader(None))
