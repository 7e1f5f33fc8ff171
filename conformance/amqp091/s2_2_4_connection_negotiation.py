"""Spec 2.2.4 The Connection Class: errors during negotiation.

"There is no hand-shaking for errors on connections that are not fully open. Following
successful protocol header negotiation [...] and prior to sending or receiving Open or
Open-Ok, a peer that detects an error MUST close the socket without sending any further
data." (2.2.4/1). Each case here gets past the protocol header, then breaks the
start / start-ok / tune / tune-ok / open sequence of the connection grammar (or fails to
authenticate); the broker must close the socket with no close method and no other frame.
Spec 4.10.2 suggests pausing several seconds first, hence the long observation window.
"""
from __future__ import annotations

from typing import Callable

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer, sasl_plain
from amqpspec.verify import SilentClose, Verifier
from amqpspec.wire.amqp091 import PROTOCOL_HEADER, MethodFrame, ProtocolHeader, RawFrame, spec
from amqpspec.wire.amqp091.frames import Sendable

from ._common import REACTION_WINDOW, after_start
from ._negotiation import after_tune, offered_mechanisms, start_ok
from ._replies import any_frame, is_method

NEGOTIATION = "amqp091:2.2.4/1"


class Refused(Verifier):
    """Authentication did not succeed: no connection.tune, and the broker ended the connection
    (close method or socket close) -- or repeated the challenge with connection.secure."""

    def accepts(self, obs: Observation) -> bool:
        if obs.methods("connection.tune"):
            return False
        return bool(obs.methods("connection.secure")) or obs.connection_close is not None or obs.closed

    def describe(self) -> str:
        return "no connection.tune: the connection is closed (or the challenge repeated with connection.secure)"


@case("amqp091/2.2.4/wrong-password", title="start-ok with a wrong password gets no tune; the socket closes silently",
      clauses=(NEGOTIATION,))
def wrong_password(ctx: Context) -> None:
    """Answers connection.start with PLAIN and the target's user name but a wrong password.
    The broker must not go on to connection.tune; a failed login is an error before Open, so it
    must close the socket without sending any further data (a separate check)."""
    peer = after_start(ctx)
    if "PLAIN" not in offered_mechanisms(peer):
        ctx.skip("the broker does not offer PLAIN")
    wrong = "amqpspec-wrong-" + "".join(ctx.rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(12))
    if wrong == ctx.target.password.reveal():  # pragma: no cover
        wrong += "x"
    peer.send(start_ok(ctx, peer, response=sasl_plain(ctx.target.username, wrong)))
    obs = peer.observe(REACTION_WINDOW, stop=is_method("connection.tune", "connection.secure"))
    if not ctx.check(obs, Refused(), what="the login is refused (no connection.tune)"):
        return
    if obs.methods("connection.secure"):
        ctx.note("the broker repeated the challenge (connection.secure): socket-close check not applicable")
        return
    ctx.check(obs, SilentClose(), what="refused by closing the socket without any further data", sets_close=False)


def _silent_case(name: str, title: str, doc: str, setup: Callable[[Context], Peer],
                 stimulus: Callable[[Context, Peer], list[Sendable]],
                 clauses: tuple[str, ...] = (NEGOTIATION,)) -> None:
    """Registers a case: ``setup(ctx)`` gives a peer mid-negotiation, ``stimulus(ctx, peer)`` the
    frames (or octets) that break the sequence; the broker must close the socket silently."""

    def run(ctx: Context) -> None:
        peer = setup(ctx)
        peer.send(*stimulus(ctx, peer))
        # any frame decides the verdict (it is "further data"): no need to wait for more
        ctx.check(peer.observe(REACTION_WINDOW, stop=any_frame), SilentClose())

    run.__doc__ = doc
    run.__name__ = run.__qualname__ = name.replace("-", "_")
    case(f"amqp091/2.2.4/{name}", title=title, clauses=clauses)(run)


def _after_tune(ctx: Context) -> Peer:
    return after_tune(ctx)[0]


def _after_tune_ok(ctx: Context) -> Peer:
    peer = ctx.connect(handshake=False)
    peer.handshake(upto="tune-ok")
    return peer


def _undecodable_frame(ctx: Context, peer: Peer) -> list[Sendable]:
    """A frame envelope with an undefined type (seeded, not 1/2/3/8), seeded payload and a wrong frame-end."""
    ftype = ctx.rng.choice([0, 5, 6, 7] + list(range(9, 256)))
    end = ctx.rng.choice([b for b in range(256) if b != spec.FRAME_END])
    payload = bytes(ctx.rng.randrange(256) for _ in range(16))
    return [RawFrame(0, type=ftype, data=payload, end=end)]


_silent_case(
    "channel-open-before-connection-open", "channel.open before connection.open closes the socket silently",
    "Completes tune-ok, then sends channel.open on channel 1 instead of connection.open: the connection "
    "is not open, so the broker must close the socket without any further data.",
    _after_tune_ok, lambda ctx, peer: [MethodFrame(1, spec.ChannelOpen())])
_silent_case(
    "open-without-tune-ok", "connection.open without tune-ok closes the socket silently",
    "Receives connection.tune and sends connection.open without tune-ok; the grammar requires "
    "S:TUNE C:TUNE-OK before C:OPEN, so the broker must close the socket without any further data.",
    _after_tune, lambda ctx, peer: [MethodFrame(0, spec.ConnectionOpen(ctx.target.vhost))])
_silent_case(
    "open-instead-of-start-ok", "connection.open instead of start-ok closes the socket silently",
    "Answers connection.start with connection.open: the client skipped authentication and tuning, so "
    "the broker must close the socket without any further data.",
    after_start, lambda ctx, peer: [MethodFrame(0, spec.ConnectionOpen(ctx.target.vhost))])
_silent_case(
    "tune-ok-instead-of-start-ok", "tune-ok instead of start-ok closes the socket silently",
    "Answers connection.start with connection.tune-ok (no tune was sent yet): the broker must close "
    "the socket without any further data.",
    after_start, lambda ctx, peer: [MethodFrame(0, spec.ConnectionTuneOk(0, 131072, 0))])
_silent_case(
    "start-ok-after-tune", "a second start-ok instead of tune-ok closes the socket silently",
    "Receives connection.tune and answers it with another start-ok: the broker must close the socket "
    "without any further data.",
    _after_tune, lambda ctx, peer: [start_ok(ctx, peer)])
_silent_case(
    "second-protocol-header", "a second protocol header after connection.start closes the socket silently",
    "Answers connection.start with the protocol header again: protocol negotiation is over and a header "
    "is not a frame. Read as a frame header, 'AMQP\\x00\\x00\\x09' gives an undefined type 'A' (65) and a "
    "size of 1342177289 octets, far above frame-min-size: an error detectable from these 7 octets, so "
    "the broker must close the socket without any further data.",
    after_start, lambda ctx, peer: [ProtocolHeader(PROTOCOL_HEADER)])
_silent_case(
    "undecodable-frame-instead-of-start-ok", "an undecodable frame instead of start-ok closes the socket silently",
    "Answers connection.start with a frame of an undefined type (seeded), seeded payload and a wrong "
    "frame-end: 2.2.4/1, 4.2.3/2 and 4.2.3/4 all require a socket close without any further data.",
    after_start, _undecodable_frame, clauses=(NEGOTIATION, "amqp091:4.2.3/2", "amqp091:4.2.3/4"))
