"""Spec 0.2 Conformance: which parts a conformant implementation implements, where observable.

Part 1 to 3 (types, transport, messaging) are exercised by the whole catalog; the cases that
cite 0.2/1-4, 6 and 8 directly are the ordinary exchange of ``amqp10/1.4/broker-frames-well-formed``
and the Part 1 reading cases in s1_types. Here: Part 4 is optional but RECOMMENDED for a
messaging intermediary, and a broker that does not offer it must still answer a coordinator
attach the way Part 2 answers any link it does not admit; Part 5's SASL is strongly
RECOMMENDED for a TCP server, with PLAIN and SCRAM-SHA1 among its mechanisms.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import Observation
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.peer.session10 import begin
from amqpspec.wire.amqp10 import ProtocolHeader, Symbol, describe, spec
from amqpspec.wire.amqp10.composite import show

from ._common import WAIT, link_name
from ._addressing import as_values
from ._sessions import ends_or_attach


@case("amqp10/0.2/coordinator-attach-answered",
      title="a coordinator attach is answered per Part 2, and the broker acts as transactional resource",
      clauses=("amqp10:0.2/7", "amqp10:0.2/11", "amqp10:0.2/12"))
def coordinator_attach_answered(ctx: Context) -> None:
    """Attaches a sending link to a coordinator target (capability amqp:local-transactions).
    MUST: the broker answers as Part 2 answers any link -- with its attach (a coordinator, or
    a null or other target when it does not admit the link, 2.6.3), or with a detach, end or
    close carrying an error -- not with silence or a dropped socket. SHOULD (0.2 recommends it
    for messaging intermediaries): its attach's target is a coordinator."""
    s = begin(ctx.connect(), timeout=5.0)
    name = link_name(ctx, "txn-ctl")
    s.sender(name=name, source=spec.Source(outcomes=[Symbol("amqp:accepted:list"), Symbol("amqp:rejected:list")]),
             target=spec.Coordinator(capabilities=[Symbol("amqp:local-transactions")]), wait=False)
    obs = s.peer.observe(WAIT, stop=ends_or_attach(s, name))
    remote = next((f.performative for f in obs.performatives("attach", s.remote) if str(f.performative.name) == name),
                  None)
    errors = [f for f in obs.frames() if performative_name(f) in ("detach", "end", "close")
              and error_condition(f.performative)]
    answered = remote is not None or bool(errors)
    ctx.record(answered, what="the attach is answered per Part 2", clauses=("amqp10:0.2/7",),
               expected="an attach, or a detach/end/close carrying an error", observed=obs.describe())
    coordinator = remote is not None and isinstance(remote.target, spec.Coordinator) and not errors
    shown = f"target {show(remote.target)}" if remote is not None else \
        "; ".join(describe(f) for f in errors) or obs.describe()
    ctx.record(coordinator, what="the broker acts as a transactional resource", clauses=("amqp10:0.2/11", "amqp10:0.2/12"),
               expected="its attach names a coordinator target", observed=shown)


def _mechanisms(ctx: Context) -> tuple[Observation, Any]:
    """Sends the SASL header; the observation and the sasl-mechanisms body (None unless the
    broker answered with the SASL header and sasl-mechanisms)."""
    peer = ctx.connect(handshake=False)
    peer.send(ProtocolHeader.sasl())
    obs = peer.observe(WAIT, stop=lambda f: performative_name(f) == "sasl-mechanisms")
    frame = obs.first("sasl-mechanisms")
    header = next((f for f in obs.frames() if isinstance(f, ProtocolHeader)), None)
    if header is None or header.protocol_id != 3:
        return obs, None
    return obs, frame


@case("amqp10/0.2/sasl-offered", title="the broker implements the SASL layer",
      clauses=("amqp10:0.2/17",))
def sasl_offered(ctx: Context) -> None:
    """Sends the SASL protocol header (AMQP 3 1.0.0). SHOULD (0.2 strongly recommends SASL for a
    TCP server): the broker answers with the SASL header and sasl-mechanisms. (That the list of
    mechanisms is not empty, 1.4, is checked by amqp10/5.3/sasl-header-answered.)"""
    obs, frame = _mechanisms(ctx)
    ctx.record(frame is not None, expected="the SASL header, then sasl-mechanisms", observed=obs.describe())


@case("amqp10/0.2/sasl-plain-and-scram", title="the broker offers the PLAIN and SCRAM-SHA-1 mechanisms",
      clauses=("amqp10:0.2/18",))
def sasl_plain_and_scram(ctx: Context) -> None:
    """Sends the SASL protocol header; skipped when the broker does not answer with
    sasl-mechanisms (sasl-offered covers that). SHOULD: the mechanisms include PLAIN
    (RFC 4616) and SCRAM-SHA-1 (RFC 5802)."""
    obs, frame = _mechanisms(ctx)
    offered = [] if frame is None else [str(m) for m in as_values(frame.sasl_server_mechanisms)]
    if not offered:
        ctx.skip(f"the broker offers no SASL mechanisms: {obs.describe()}")
    missing = [m for m in ("PLAIN", "SCRAM-SHA-1") if m not in offered]
    ctx.record(not missing, expected="PLAIN and SCRAM-SHA-1 offered",
               observed=f"offered {offered}" + (f"; missing {missing}" if missing else ""))
