"""5.3.1 and 5.3.2 SASL frames, from the client's side: what the client puts in them, and
which of them it may send at all.

"The frame body of a SASL frame MUST contain exactly one AMQP type, whose type encoding MUST
have provides="sasl-frame"" (5.3.1/3): the client's SASL frames hold a sasl-init or a
sasl-response and nothing after it (the reader keeps octets that follow the body's one value
apart, as the frame's trailing octets). "The peer playing the role of the SASL client and the
peer playing the role of the SASL server MUST correspond to the TCP client and server
respectively" (5.3.2/3): the client, the TCP client, plays the SASL client -- it never sends
the frames only the SASL server sends (sasl-mechanisms, sasl-challenge, sasl-outcome).
The SASL exchange is played by hand up to the client's sasl-init (so that every SASL frame it
sends is seen, whatever comes first), then the opening goes on as usual.
Reading, the client meets SASL frames whose "extended header is ignored" (5.3.1): offered the
mechanisms in a frame carrying 4 octets of it (DOFF 3; the server's SHOULD of 5.3.1/2 is not
the client's to enforce), it still "MUST then choose one of the supported mechanisms and
initiate a sasl exchange" (5.3.2/2) -- parsing the frame "in accordance with the format"
(0.2/1).
"""
from __future__ import annotations

from typing import Any, Callable

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp10 import ProtocolHeader, SASLFrame, Symbol, frame, spec

from ._client import QUICK, play, unmet

CLIENT_SIDE = ("sasl-init", "sasl-response")
OFFERED = ("PLAIN", "ANONYMOUS")
SERVER_SIDE = ("sasl-mechanisms", "sasl-challenge", "sasl-outcome")


def _sasl_by_hand(ctx: Context, extended: bytes = b"", *,
                  judged: bool = False) -> tuple[Any, list[SASLFrame], str]:
    """Plays our SASL header and mechanisms (with ``extended`` as their frame's extended header),
    collects the client's SASL frames up to its sasl-init, answers with a successful outcome;
    returns the play, those frames and how the observation ended. Without a sasl-init the case errs, unless the sasl-init is
    what it ``judged`` (then nothing more is played, and the frames come back without one)."""
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    if n.first_header is None or n.first_header.protocol_id != 3:
        p.finish(0.2)
        raise Skip("the client does not use SASL (it opened with the AMQP header)")
    mechanisms = spec.SaslMechanisms(sasl_server_mechanisms=[Symbol(m) for m in OFFERED])
    p.peer.send(ProtocolHeader.sasl(), SASLFrame(mechanisms, extended=extended) if extended else frame(mechanisms))
    obs = p.peer.observe(QUICK * 1.5, reply_close=False,
                         stop=lambda f: isinstance(f, SASLFrame) and getattr(f.body, "NAME", "") == "sasl-init")
    sasl = [f for f in obs.received if isinstance(f, SASLFrame)]
    init = [f for f in sasl if getattr(f.body, "NAME", "") == "sasl-init"]
    seen = obs.describe().replace("by broker", "by the client")
    if not init and judged:
        return p, sasl, seen
    if not init:
        unmet("a sasl-init from the client", obs)
    p.peer.send(frame(spec.SaslOutcome(code=0)))
    p.peer.reader.expect_header()   # its AMQP header follows (5.3.2); the opening resumes from there
    p.peer.stage = "sasl"
    p.peer.negotiated.mechanism = str(init[0].body.mechanism)
    return p, sasl, seen


def _name(f: SASLFrame) -> str:
    return str(getattr(f.body, "NAME", type(f.body).__name__))


def _none_wrong(ctx: Context, wrong: Callable[[Any], bool], expected: str) -> None:
    """Judges the SASL frames the client sent in the dialog: none of them ``wrong``; then the
    connection goes on and the workload ends."""
    p, sasl, _ = _sasl_by_hand(ctx)
    bad = [f for f in sasl if wrong(f)]
    ctx.record(not bad, expected=expected,
               observed="; ".join(f.summary()[:100] for f in bad[:3]) or
               f"{len(sasl)} SASL frame(s): {', '.join(_name(f) for f in sasl)}")
    p.handshake()
    p.serve()
    p.finish()


@case("amqp10/5.3.1/client-sasl-frame-holds-one-value", role="client",
      title="each SASL frame the client sends holds exactly one value, a sasl-init or sasl-response, with nothing after it",
      clauses=("amqp10:5.3.1/3",))
def one_value(ctx: Context) -> None:
    _none_wrong(ctx, lambda f: bool(f.trailing) or _name(f) not in CLIENT_SIDE + SERVER_SIDE,
                "one sasl-frame value per SASL frame body, no octets after it")


@case("amqp10/5.3.2/client-plays-sasl-client", role="client",
      title="the client (the TCP client) sends only SASL client frames: no sasl-mechanisms, sasl-challenge or sasl-outcome",
      clauses=("amqp10:5.3.2/3",))
def plays_sasl_client(ctx: Context) -> None:
    _none_wrong(ctx, lambda f: _name(f) in SERVER_SIDE, f"only {' or '.join(CLIENT_SIDE)} from the client")


@case("amqp10/5.3.1/client-ignores-sasl-extended-header", role="client",
      title="offered the mechanisms in a SASL frame with 4 octets of extended header (DOFF 3), the client still answers with a sasl-init naming one of them",
      clauses=("amqp10:5.3.2/2", "amqp10:0.2/1"), guideline="The extended header is ignored.")
def ignores_sasl_extended_header(ctx: Context) -> None:
    p, sasl, seen = _sasl_by_hand(ctx, extended=b"\x00" * 4, judged=True)
    init = [f for f in sasl if _name(f) == "sasl-init"]
    ctx.record(bool(init) and str(init[0].body.mechanism) in OFFERED,
               expected=f"sasl-init naming one of {list(OFFERED)}",
               observed=init[0].summary()[:120] if init else f"no sasl-init: {seen}")
    if init:
        p.handshake()
        p.serve()
    p.finish()
