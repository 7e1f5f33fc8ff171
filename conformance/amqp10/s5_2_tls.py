"""Spec 5.2 TLS (security): the TLS protocol header AMQP 2 1.0.0.

"To establish a TLS session, each peer MUST start by sending a protocol header before
commencing with TLS negotiation ... Other than using a protocol id of two, the exchange of
TLS protocol headers follows the same rules specified in the version negotiation section."
So a broker that offers TLS this way answers AMQP 2 1.0.0 and then negotiates TLS; a broker
that does not must answer with a header of a protocol id it accepts and close the socket
(2.2, "It MAY choose any protocol id"). The certificate is not checked here: validating it is
the client's duty (5.2/3), not something the broker does.
"""
from __future__ import annotations

import ssl

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import READ_CAP, Observation, Peer
from amqpspec.verify import Verifier
from amqpspec.verify10 import AnyOf
from amqpspec.wire.amqp10 import TLS_HEADER, FrameReader, ProtocolHeader

from ._common import REACTION_WINDOW, WAIT
from ._handshake import (
    ALTERNATIVE_CLOSE, RefusesWithHeader, check_version_choice, header_of, observe_until, send_header,
)


def client_hello(server_name: str) -> bytes:
    """The first flight of a TLS client (a ClientHello record), made by Python's ssl module."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=server_name)
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


class AnswersTls(Verifier):
    """The broker answers in TLS: its first octets are a TLS handshake record carrying a ServerHello."""

    expects_close = False

    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        head = self.peer.link.head
        return len(head) >= 6 and head[0] == 0x16 and head[1] == 0x03 and head[5] == 0x02

    def describe(self) -> str:
        return "a TLS ServerHello (the broker runs a pure TLS server on this port)"


def _tls_then_amqp(ctx: Context, peer: Peer) -> tuple[bool, str]:
    """After AMQP 2 1.0.0 was exchanged: a TLS handshake, then the AMQP header inside TLS (figure 5.2)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # 5.2/3 (validating the certificate) is the client's duty, not checked here
    sock = peer.link.sock
    try:
        sock.settimeout(max(0.5, min(WAIT, peer.link.remaining())))
        wrapped = context.wrap_socket(sock, server_hostname=ctx.target.host)
    except (ssl.SSLError, OSError) as exc:
        return False, f"the TLS handshake after the TLS header failed: {exc}"
    peer.link.transcript.event(f"TLS established ({wrapped.version()})", peer.link.conn)
    peer.link.sock = wrapped
    peer.reader = FrameReader(READ_CAP)
    peer.send(ProtocolHeader.amqp())
    obs = peer.observe(WAIT, stop=lambda item: isinstance(item, ProtocolHeader))
    hdr = header_of(obs)
    if hdr is None:
        return False, f"TLS established ({wrapped.version()}), but no protocol header answered ours: {obs.describe()}"
    return True, f"TLS established ({wrapped.version()}); inside it the broker answered {hdr.summary()}"


@case("amqp10/5.2/tls-header", title="the TLS header is answered with AMQP 2 1.0.0 and TLS, or refused with a header and close",
      clauses=("amqp10:5.2/1", "amqp10:2.2/7", "amqp10:2.2/12", "amqp10:2.2/13", ALTERNATIVE_CLOSE))
def tls_header(ctx: Context) -> None:
    """Sends AMQP 2 1.0.0 on a plain TCP connection. Passes when the broker answers AMQP 2 1.0.0 and a
    TLS handshake then succeeds (inside which the AMQP header is answered), or when it refuses with a
    valid header of another protocol id and closes the socket (the protocol id is unacceptable: it
    MAY choose any). Silence, or a close without a header, fails."""
    if ctx.target.tls:
        ctx.skip("the target URL is amqps://: the connection is already TLS (5.2.1), a TLS header inside it "
                 "would test nothing")
    peer, obs = send_header(ctx, TLS_HEADER, done=lambda o: header_of(o) is not None)
    hdr = header_of(obs)
    if hdr is not None and hdr.data == TLS_HEADER and not obs.closed:
        ok, observed = _tls_then_amqp(ctx, peer)
        ctx.record(ok, expected="AMQP 2 1.0.0, then a TLS handshake and the AMQP header exchange inside TLS",
                   observed=observed, clauses=("amqp10:5.2/1", "amqp10:2.2/7"))
        return
    if hdr is not None and not obs.closed:
        obs = _until_closed(peer, obs)
    ctx.check(obs, RefusesWithHeader(TLS_HEADER, refused_protocol_id=2),
              clauses=("amqp10:2.2/12", "amqp10:2.2/13", ALTERNATIVE_CLOSE),
              what="a header of another protocol id, then the socket closed (TLS not offered this way)")


def _until_closed(peer: Peer, obs: Observation) -> Observation:
    more = peer.observe(REACTION_WINDOW)
    obs.received += more.received
    obs.end = more.end
    obs.framing_error = obs.framing_error or more.framing_error
    return obs


@case("amqp10/5.2/tls-header-unsupported-version",
      title="a TLS header for version 2.0.0 is answered with a supported header, then close",
      clauses=("amqp10:5.2/1", "amqp10:2.2/8", ALTERNATIVE_CLOSE, "amqp10:2.2/9"))
def tls_header_unsupported_version(ctx: Context) -> None:
    """Sends AMQP 2 2.0.0 (a TLS layer version that does not exist). The TLS header exchange follows
    the rules of 2.2: a valid header other than the one sent, then the socket closed; the version
    offered should be the highest supported one not above 2.0.0 (2.2/9, warning)."""
    data = b"AMQP\x02\x02\x00\x00"
    _, obs = send_header(ctx, data)
    ctx.check(obs, RefusesWithHeader(data), clauses=("amqp10:2.2/8", ALTERNATIVE_CLOSE),
              what="a valid protocol header, then the socket closed")
    check_version_choice(ctx, obs, (2, 0, 0))


@case("amqp10/5.2.1/client-hello-without-header",
      title="a TLS ClientHello without a header gets TLS (pure TLS server) or a valid AMQP header and close",
      clauses=("amqp10:5.2.1/1", "amqp10:2.2/11", ALTERNATIVE_CLOSE))
def client_hello_without_header(ctx: Context) -> None:
    """Sends a TLS ClientHello as the first octets, with no protocol header. A broker may run a pure
    TLS server (5.2.1/1) and answer with a ServerHello; otherwise the octets are a protocol header it
    cannot parse, so it MUST answer with a valid protocol header and close the socket (2.2/11)."""
    if ctx.target.tls:
        ctx.skip("the target URL is amqps://: the connection is already TLS")
    peer = ctx.connect(handshake=False)
    tls = AnswersTls(peer)
    peer.send(client_hello(ctx.target.host))
    obs = observe_until(peer, REACTION_WINDOW, lambda o: tls.accepts(o))
    ctx.check(obs, AnyOf(tls, RefusesWithHeader(None)))
