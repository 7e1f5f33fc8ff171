"""5.3 SASL, from the client's side.

"The peer acting as the SASL server MUST announce supported authentication mechanisms using
the sasl-mechanisms frame. The partner MUST then choose one of the supported mechanisms and
initiate a sasl exchange" (5.3.2/2); "Each peer MUST authenticate using the highest-level
security profile it can handle from the list provided by the partner" (5.3.3.2/2): given a
user and password in its URL, a client offered ANONYMOUS first and PLAIN second must use
PLAIN, which proves who it is. "Upon successful completion of the SASL dialog the security
layer has been established, and the peers MUST exchange protocol headers" (5.3.3.5/1): the
client's next octets are the AMQP header, not a frame. A hostname given in sasl-init and in
open SHOULD be the same (2.7.1/3: "this field SHOULD be null or contain the same value").
A client holding a password but offered only ANONYMOUS still chooses among what is offered
(5.3.2/2); a successful outcome that carries additional-data is a successful outcome: the
headers are exchanged (5.3.3.5/1); one mechanism offered as a single symbol rather than an
array of one is offered all the same ("A single element of the type specified in the field
description is always permitted", 1.4, part of the type system every implementation "MUST
implement", 0.2/3).
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.peer.server10 import header_ok
from amqpspec.wire.amqp10 import ProtocolHeader, SASLFrame, Symbol, frame, spec

from ._client import QUICK, play


def _sasl(ctx: Context, mechanisms: tuple[str, ...]):  # type: ignore[no-untyped-def]
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    if n.first_header is None or n.first_header.protocol_id != 3:
        p.finish(0.2)
        raise Skip("the client does not use SASL (it opened with the AMQP header)")
    return p


def _inits_after_offer(p, mechanisms: Any) -> tuple[Any, list[Any]]:  # type: ignore[no-untyped-def]
    """Sends the SASL header and our own sasl-mechanisms holding ``mechanisms`` (the field as it
    goes on the wire: an array of symbols, or one symbol); returns what the client sent within
    1.5 x QUICK and the sasl-inits among it."""
    p.peer.send(ProtocolHeader.sasl(), frame(spec.SaslMechanisms(sasl_server_mechanisms=mechanisms)))
    obs = p.peer.observe(QUICK * 1.5, reply_close=False, stop=lambda f: isinstance(f, SASLFrame))
    return obs, [f.body for f in obs.received if isinstance(f, SASLFrame) and isinstance(f.body, spec.SaslInit)]


def _open_after_success(p) -> None:  # type: ignore[no-untyped-def]
    """After a sasl-init we take: our successful outcome, then the headers and opens as usual."""
    p.peer.send(frame(spec.SaslOutcome(code=0)))
    p.peer.reader.expect_header()
    p.peer.stage = "sasl"
    p.handshake()
    p.serve()


def _header_follows(ctx: Context, p) -> None:  # type: ignore[no-untyped-def]
    """After our successful sasl-outcome, the client's next octets are the AMQP protocol header
    (5.3.3.5/1); when they are, the connection goes on and the workload ends normally."""
    got = p.peer.recv(QUICK)
    ok = header_ok(got, 0)  # type: ignore[arg-type]
    ctx.record(ok, expected="the protocol header AMQP 0 1.0.0",
               observed=got.summary() if hasattr(got, "summary") else f"nothing within {QUICK:g} s")
    if ok:
        p.peer.negotiated.amqp_header = got
        p.handshake()
        p.serve()
    p.finish()


@case("amqp10/5.3.2/client-chooses-offered-mechanism", role="client",
      title="offered only PLAIN, the client's sasl-init names PLAIN (one of the mechanisms offered)",
      clauses=("amqp10:5.3.2/2",))
def chooses_offered(ctx: Context) -> None:
    p = _sasl(ctx, ("PLAIN",))
    n = p.handshake(upto="sasl", mechanisms=("PLAIN",))
    ctx.record(n.mechanism == "PLAIN", expected="sasl-init with mechanism PLAIN (the only one offered)",
               observed=f"sasl-init mechanism {n.mechanism!r}")
    p.handshake()
    p.serve()
    p.finish()


@case("amqp10/5.3.3.2/client-uses-strongest-mechanism", role="client",
      title="given a user and password, offered ANONYMOUS then PLAIN, the client authenticates with PLAIN",
      clauses=("amqp10:5.3.3.2/2", "amqp10:5.3.2/2"))
def strongest(ctx: Context) -> None:
    p = _sasl(ctx, ("ANONYMOUS", "PLAIN"))
    n = p.handshake(upto="sasl", mechanisms=("ANONYMOUS", "PLAIN"))
    ctx.record(n.mechanism == "PLAIN",
               expected="sasl-init with PLAIN: the client holds credentials, PLAIN is the stronger profile offered",
               observed=f"sasl-init mechanism {n.mechanism!r}")
    p.handshake()
    p.serve()
    p.finish()


@case("amqp10/5.3.3.5/client-sends-amqp-header-after-sasl", role="client",
      title="after a successful sasl-outcome the client sends the AMQP protocol header before any frame",
      clauses=("amqp10:5.3.3.5/1",))
def header_after_sasl(ctx: Context) -> None:
    p = _sasl(ctx, ("PLAIN", "ANONYMOUS"))
    p.handshake(upto="sasl")
    _header_follows(ctx, p)


@case("amqp10/2.7.1/client-hostname-matches-sasl", role="client",
      title="a hostname the client gave in sasl-init is the one (or none) it gives in open",
      clauses=("amqp10:2.7.1/3",))
def hostname_matches(ctx: Context) -> None:
    p = _sasl(ctx, ("PLAIN", "ANONYMOUS"))
    n = p.handshake()
    if n.sasl_hostname is None:
        p.finish(0.2)
        raise Skip("the client's sasl-init named no hostname")
    opened = n.client_open.hostname if n.client_open is not None else None
    ok = opened is None or str(opened) == n.sasl_hostname
    ctx.record(ok, expected=f"open hostname absent or {n.sasl_hostname!r} (as in sasl-init)",
               observed=f"open hostname {opened!r}")
    p.serve()
    p.finish()


@case("amqp10/5.3.2/client-skips-unknown-mechanisms", role="client",
      title="offered two mechanisms it cannot know before PLAIN and ANONYMOUS, the client still chooses one of the offered ones",
      clauses=("amqp10:5.3.2/2",))
def skips_unknown(ctx: Context) -> None:
    offered = ("AMQPSPEC-X-ONE", "AMQPSPEC-X-TWO", "PLAIN", "ANONYMOUS")
    p = _sasl(ctx, offered)
    n = p.handshake(upto="sasl", mechanisms=offered)
    ctx.record(n.mechanism in offered, expected=f"sasl-init naming one of {list(offered)}",
               observed=f"sasl-init mechanism {n.mechanism!r}")
    p.handshake()
    p.serve()
    p.finish()


@case("amqp10/5.3.2/client-no-usable-mechanism", role="client",
      title="offered only a mechanism it cannot know, the client names nothing else in a sasl-init (it closes instead)",
      clauses=("amqp10:5.3.2/2",))
def no_usable_mechanism(ctx: Context) -> None:
    offered = ("AMQPSPEC-X-ONLY",)
    p = _sasl(ctx, offered)
    obs, inits = _inits_after_offer(p, [Symbol(m) for m in offered])
    wrong = [str(i.mechanism) for i in inits if str(i.mechanism) not in offered]
    ctx.record(not wrong, expected=f"no sasl-init naming a mechanism outside {list(offered)} (closing is the way out)",
               observed=f"sasl-init mechanism {wrong[0]!r}" if wrong else obs.describe().replace("by broker", "by the client"))
    if inits:
        p.peer.send(frame(spec.SaslOutcome(code=1)))
    p.finish()


@case("amqp10/5.3.1/client-sasl-frame-header", role="client",
      title="the client's sasl-init frame has type-specific octets 0x0000 and DOFF 2 (no extended header)",
      clauses=("amqp10:5.3.1/1", "amqp10:5.3.1/2", "amqp10:5.3.1/4", "amqp10:5.3.1/5"))
def sasl_frame_header(ctx: Context) -> None:
    p = _sasl(ctx, ("PLAIN", "ANONYMOUS"))
    n = p.handshake(upto="sasl")
    channel, extended = n.sasl_init_header or (0, 0)
    ctx.record(channel == 0, what="type-specific octets 0x0000", expected="0x0000", observed=f"0x{channel:04x}",
               clauses=("amqp10:5.3.1/1", "amqp10:5.3.1/4"))   # the prose, and the figure's note *1
    ctx.record(extended == 0, what="DOFF 2", expected="DOFF 2 (no extended header)",
               observed=f"DOFF {2 + extended // 4}", clauses=("amqp10:5.3.1/2", "amqp10:5.3.1/5"))   # and note *2
    p.handshake()
    p.serve()
    p.finish()


@case("amqp10/5.3.2/client-anonymous-only", role="client",
      title="given a user and password but offered only ANONYMOUS, the client names ANONYMOUS or closes -- never a mechanism not offered",
      clauses=("amqp10:5.3.2/2",))
def anonymous_only(ctx: Context) -> None:
    # the server that needs no authentication offers ANONYMOUS alone (5.3.3.1's SHOULD): the
    # client's credentials give it no licence to choose PLAIN, which was not offered
    offered = ("ANONYMOUS",)
    p = _sasl(ctx, offered)
    obs, inits = _inits_after_offer(p, [Symbol(m) for m in offered])
    wrong = [str(i.mechanism) for i in inits if str(i.mechanism) not in offered]
    ctx.record(not wrong, expected="sasl-init naming ANONYMOUS, or no sasl-init (the client closes)",
               observed=f"sasl-init mechanism {wrong[0]!r}" if wrong else
               (f"sasl-init mechanism {str(inits[0].mechanism)!r}" if inits else
                obs.describe().replace("by broker", "by the client")))
    if inits and not wrong:   # on with the opening: our outcome, then headers and opens as usual
        _open_after_success(p)
    elif inits:
        p.peer.send(frame(spec.SaslOutcome(code=1)))
    p.finish()


@case("amqp10/5.3.3.5/client-proceeds-after-outcome-with-additional-data", role="client",
      title="a successful sasl-outcome (code 0) that carries additional-data is still success: the client sends the AMQP header and opens",
      clauses=("amqp10:5.3.3.5/1",))
def outcome_with_additional_data(ctx: Context) -> None:
    # additional-data is a field of sasl-outcome ("additional data as specified in RFC-4422"); its
    # presence does not change the code: the dialog completed, and the headers are exchanged
    p = _sasl(ctx, ("PLAIN", "ANONYMOUS"))
    p.handshake(upto="sasl", sasl_outcome=frame(spec.SaslOutcome(code=0, additional_data=b"amqpspec: welcome")))
    _header_follows(ctx, p)


@case("amqp10/5.3.2/client-reads-single-mechanism", role="client",
      title="offered PLAIN as a single symbol (not an array: sasl-server-mechanisms is a multiple field), the client chooses PLAIN",
      clauses=("amqp10:5.3.2/2", "amqp10:0.2/3"),
      guideline="A single element of the type specified in the field description is always permitted.")
def single_mechanism(ctx: Context) -> None:
    # the type system every implementation "MUST implement" (0.2/3) lets a multiple field hold one
    # value without an array (1.4): the mechanism offered that way is offered all the same
    p = _sasl(ctx, ("PLAIN",))
    obs, inits = _inits_after_offer(p, Symbol("PLAIN"))
    chosen = str(inits[0].mechanism) if inits else None
    ctx.record(chosen == "PLAIN", expected="sasl-init with mechanism PLAIN (the one offered, as a single symbol)",
               observed=f"sasl-init mechanism {chosen!r}" if inits else
               "no sasl-init: " + obs.describe().replace("by broker", "by the client"))
    if chosen == "PLAIN":   # on with the opening: our outcome, then headers and opens as usual
        _open_after_success(p)
    p.finish()
