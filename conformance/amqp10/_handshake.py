"""Protocol headers for the case modules (2.2, 5.2, 5.3): sending one, reading the broker's, and
judging a refusal. The SASL (5.3) and TLS (5.2) headers follow "the same rules specified in the
version negotiation section", so their modules judge with the same helpers as 2.2.
"""
from __future__ import annotations

import socket
import time
from typing import Callable

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation, Peer, performative_name
from amqpspec.verify import Verifier
from amqpspec.wire.amqp10 import MalformedFrame, ProtocolHeader, RawFrame

from ._common import REACTION_WINDOW

V1 = (1, 0, 0)
ALTERNATIVE_CLOSE = "amqp10:2.4.3/1"   # "Prior to closing a connection, each peer MUST write a close frame ..."
REFUSE = ("amqp10:2.2/8", ALTERNATIVE_CLOSE)
UNPARSEABLE = ("amqp10:2.2/11", ALTERNATIVE_CLOSE)
PROTOCOL_ID = ("amqp10:2.2/12", "amqp10:2.2/13", ALTERNATIVE_CLOSE)


def header_of(obs: Observation) -> ProtocolHeader | None:
    """The broker's first item when it is a protocol header."""
    frames = obs.frames()
    return frames[0] if frames and isinstance(frames[0], ProtocolHeader) else None


class RefusesWithHeader(Verifier):
    """A valid protocol header other than the refused one, then the socket closes.

    Between the two, only well-formed frames of the announced protocol are allowed (2.2/2),
    beginning with open for an AMQP header (2.4.1): a broker may open and close with an error
    (2.4.3) before dropping the socket.
    """

    def __init__(self, refused: bytes | None, *, refused_protocol_id: int | None = None) -> None:
        self.refused = refused
        self.refused_protocol_id = refused_protocol_id

    def problem(self, obs: Observation) -> str | None:
        hdr = header_of(obs)
        if hdr is None or not hdr.well_formed:
            return "the broker's first octets are not a protocol header"
        if self.refused is not None and hdr.data == self.refused:
            return "the broker echoed the header it cannot support"
        if self.refused_protocol_id is not None and hdr.protocol_id == self.refused_protocol_id:
            return f"the broker answered with the refused protocol id {self.refused_protocol_id}"
        if obs.framing_error:
            return "what followed the header does not match the version it announced"
        rest = obs.frames()[1:]
        for item in rest:
            if isinstance(item, (ProtocolHeader, RawFrame, MalformedFrame)):
                return "what followed the header does not match the version it announced"
        if rest and hdr.protocol_id == 0 and performative_name(rest[0]) != "open":
            return "a frame other than open followed the AMQP header"
        if not obs.closed:
            return "the socket was not closed"
        return None

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return self.problem(obs) is None

    def describe(self) -> str:
        refused = "" if self.refused is None else f" other than {ProtocolHeader(self.refused).summary()}"
        if self.refused_protocol_id is not None:
            refused = f" with a protocol id other than {self.refused_protocol_id}"
        return (f"a valid protocol header{refused}, then the socket closed (directly, or after open and close "
                "frames of the announced version)")


class StartsAmqp091(Verifier):
    """The broker goes on in AMQP 0-9-1: its first octets are a 0-9-1 connection.start frame."""

    expects_close = False

    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        head = self.peer.link.head
        # frame type 1 (method), channel 0, size (4), class 10 (connection), method 10 (start)
        return len(head) >= 11 and head[0] == 1 and head[1:3] == b"\x00\x00" and head[7:11] == b"\x00\x0a\x00\x0a"

    def describe(self) -> str:
        return "an AMQP 0-9-1 connection.start (the broker implements 0-9-1 and proceeds in it)"


def observe_until(peer: Peer, window: float, done: Callable[[Observation], bool]) -> Observation:
    """observe() in short slices until ``done`` holds, the socket closes, or ``window`` passes."""
    total = Observation()
    started = time.monotonic()
    while True:
        left = window - (time.monotonic() - started)
        part = peer.observe(max(0.0, min(0.25, left)))
        total.received += part.received
        total.end = part.end
        total.framing_error = total.framing_error or part.framing_error
        total.replied_close = total.replied_close or part.replied_close
        if part.closed or done(total) or left <= 0.25:
            break
    total.elapsed = time.monotonic() - started
    return total


def send_header(ctx: Context, data: bytes, window: float = REACTION_WINDOW,
                done: Callable[[Observation], bool] | None = None) -> tuple[Peer, Observation]:
    """A new connection on which ``data`` is the first thing sent; what the broker does then."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader(data) if len(data) == 8 and data[:4] == b"AMQP" else data)
    if done is None:
        return peer, peer.observe(window)
    return peer, observe_until(peer, window, done)


def version_text(v: tuple[int, int, int]) -> str:
    return ".".join(str(x) for x in v)


def check_version_choice(ctx: Context, obs: Observation, requested: tuple[int, int, int] | None) -> None:
    """2.2/9 and 2.2/10: the version a refusal offers.

    The broker implements 1.0.0. When 1.0.0 <= requested, the highest supported version not
    above the request is at least 1.0.0 and at most the request (2.2/9); when the request is
    below every version the broker supports, it should offer its highest, which is at least
    1.0.0 (2.2/10). ``requested`` None: the request could not be parsed, no version rule applies.
    """
    hdr = header_of(obs)
    if hdr is None or not hdr.well_formed or requested is None:
        return
    got = hdr.version
    assert got is not None
    if requested >= V1:
        ctx.record(V1 <= got <= requested, clauses=("amqp10:2.2/9",),
                   what="the version offered is the highest supported not above the request",
                   expected=f"a version from {version_text(V1)} to {version_text(requested)} (the broker supports "
                            f"{version_text(V1)})",
                   observed=hdr.summary())
    else:
        ctx.record(got >= V1, clauses=("amqp10:2.2/10",),
                   what="below every supported version: the highest supported version is offered",
                   expected=f"a version of at least {version_text(V1)} (the broker supports {version_text(V1)})",
                   observed=hdr.summary())


def keeps_reading(ctx: Context, peer: Peer, obs: Observation) -> tuple[bool, str]:
    """Whether the broker shut down only its outgoing stream and still reads ours.

    Expects the socket to have ended with FIN. Sends octets after that FIN: a broker still
    reading takes them; a broker that closed the whole socket makes our kernel receive an RST
    (the second send then fails, or the read reports a reset). Our stream is then ended
    (shutdown of our outgoing side), as the reading peer expects.
    """
    if obs.end == "rst":
        return False, "the broker reset the connection (RST) instead of shutting down its outgoing stream"
    if obs.end != "fin":
        return False, f"the broker did not close its outgoing stream ({obs.describe()})"
    for i in range(2):
        if not peer.link.send_bytes(b"\x00" * 8, f"8 octets after the broker's FIN ({i + 1}/2): is it still reading?"):
            return False, f"after its FIN the broker no longer reads: {peer.link.send_failed}"
        time.sleep(0.2)
    sock = peer.link.sock
    try:
        sock.settimeout(0.3)
        sock.recv(64)
    except (ConnectionResetError, BrokenPipeError) as exc:
        peer.link.transcript.event(f"reset after the broker's FIN: {exc}", peer.link.conn)
        return False, "after its FIN the broker no longer reads: octets sent to it were answered by a reset (RST)"
    except OSError:
        pass
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    return True, "FIN, then octets we sent afterwards were taken without a reset"


