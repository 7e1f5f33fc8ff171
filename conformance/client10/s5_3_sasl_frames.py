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
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp10 import ProtocolHeader, SASLFrame, Symbol, frame, spec

from ._client import QUICK, play, unmet

CLIENT_SIDE = ("sasl-init", "sasl-response")
SERVER_SIDE = ("sasl-mechanisms", "sasl-challenge", "sasl-outcome")


def _sasl_by_hand(ctx: Context) -> tuple[Any, list[SASLFrame]]:
    """Plays our SASL header and mechanisms, collects the client's SASL frames up to its
    sasl-init, answers with a successful outcome; returns the play and those frames."""
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    if n.first_header is None or n.first_header.protocol_id != 3:
        p.finish(0.2)
        raise Skip("the client does not use SASL (it opened with the AMQP header)")
    p.peer.send(ProtocolHeader.sasl(),
                frame(spec.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN"), Symbol("ANONYMOUS")])))
    obs = p.peer.observe(QUICK * 1.5, reply_close=False,
                         stop=lambda f: isinstance(f, SASLFrame) and getattr(f.body, "NAME", "") == "sasl-init")
    sasl = [f for f in obs.received if isinstance(f, SASLFrame)]
    init = [f for f in sasl if getattr(f.body, "NAME", "") == "sasl-init"]
    if not init:
        unmet("a sasl-init from the client", obs)
    p.peer.send(frame(spec.SaslOutcome(code=0)))
    p.peer.reader.expect_header()   # its AMQP header follows (5.3.2); the opening resumes from there
    p.peer.stage = "sasl"
    p.peer.negotiated.mechanism = str(init[0].body.mechanism)
    return p, sasl


def _name(f: SASLFrame) -> str:
    return str(getattr(f.body, "NAME", type(f.body).__name__))


@case("amqp10/5.3.1/client-sasl-frame-holds-one-value", role="client",
      title="each SASL frame the client sends holds exactly one value, a sasl-init or sasl-response, with nothing after it",
      clauses=("amqp10:5.3.1/3",))
def one_value(ctx: Context) -> None:
    p, sasl = _sasl_by_hand(ctx)
    wrong = [f for f in sasl if f.trailing or _name(f) not in CLIENT_SIDE + SERVER_SIDE]
    ctx.record(not wrong, expected="one sasl-frame value per SASL frame body, no octets after it",
               observed="; ".join(f.summary()[:100] for f in wrong[:3]) or
               f"{len(sasl)} SASL frame(s): {', '.join(_name(f) for f in sasl)}")
    p.handshake()
    p.serve()
    p.finish()


@case("amqp10/5.3.2/client-plays-sasl-client", role="client",
      title="the client (the TCP client) sends only SASL client frames: no sasl-mechanisms, sasl-challenge or sasl-outcome",
      clauses=("amqp10:5.3.2/3",))
def plays_sasl_client(ctx: Context) -> None:
    p, sasl = _sasl_by_hand(ctx)
    wrong = [f for f in sasl if _name(f) in SERVER_SIDE]
    ctx.record(not wrong, expected=f"only {' or '.join(CLIENT_SIDE)} from the client",
               observed="; ".join(f.summary()[:100] for f in wrong[:3]) or
               f"{len(sasl)} SASL frame(s): {', '.join(_name(f) for f in sasl)}")
    p.handshake()
    p.serve()
    p.finish()
