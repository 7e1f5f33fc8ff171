"""3.5.3 Source, 3.5.4 Target, 3.5.9 Node properties: the fields of the termini the client attaches with.

dynamic-node-properties, in both source and target: "If the dynamic field is not set to true
this field MUST be left unset" (3.5.3/6, 3.5.4/6). The rpc workload attaches both kinds of
link (a sender to the service's address, a receiver for replies, often dynamic): every source
and target of the client's attaches that does not ask for a dynamic node carries no
dynamic-node-properties. Where the client does ask for one, the standard node properties it
names have their types: lifetime-policy "MUST be of a type which provides the lifetime-policy
archetype" (3.5.9/1), supported-dist-modes "MUST be one or more symbols which are valid
distribution-modes" (3.5.9/2, 3.5.9/3: move or copy).

A source the client sets outcomes on (as receiver it says which it may choose): default-outcome
"MUST be a valid outcome (e.g., released or rejected)" (3.5.3/10), and each of outcomes "MUST be a
symbolic descriptor of a valid outcome, e.g., "amqp:accepted:list"" (3.5.3/12). The outcomes are
those of 3.4 (accepted, rejected, released, modified) and declared (4.5.5); received is a delivery
state, not an outcome. A client that sets neither is skipped.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp10 import Symbol, spec
from amqpspec.wire.amqp10.composite import DescribedBase

from ._client import describe_frames, named, open_conversation, unmet

OUTCOME_DESCRIPTORS = {str(cls.DESCRIPTOR) for cls in spec.OUTCOMES}   # "amqp:accepted:list", ...
LIFETIME_POLICIES = (spec.DeleteOnClose, spec.DeleteOnNoLinks, spec.DeleteOnNoMessages, spec.DeleteOnNoLinksOrMessages)
DIST_MODES = ("move", "copy")


def _termini(attach: Any) -> list[tuple[str, Any]]:
    return [(kind, t) for kind, t in (("source", attach.source), ("target", attach.target)) if t is not None]


def _values(value: Any) -> list[Any]:
    """A multiple field as a list (types 1.4: null is no value, a single value is one)."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _rpc_attaches(ctx: Context) -> tuple[Any, list[Any]]:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    attaches = named(obs.received, "attach")
    if not attaches:
        unmet("an attach from the client", obs)
    return p, attaches


@case("amqp10/3.5.3/client-no-dynamic-node-properties-without-dynamic", role="client",
      title="no source or target of the client's attaches carries dynamic-node-properties without dynamic=true",
      clauses=("amqp10:3.5.3/6", "amqp10:3.5.4/6"))
def dynamic_node_properties(ctx: Context) -> None:
    p, attaches = _rpc_attaches(ctx)
    wrong = [f"{kind} of {f.summary()[:100]}" for f in attaches for kind, t in _termini(f.performative)
             if getattr(t, "dynamic_node_properties", None) is not None and getattr(t, "dynamic", None) is not True]
    ctx.record(not wrong, expected="dynamic-node-properties unset wherever dynamic is not true",
               observed="; ".join(wrong) if wrong else f"{len(attaches)} attach(es): {describe_frames(attaches)}")
    p.finish()


@case("amqp10/3.5.9/client-node-properties-types", role="client",
      title="the lifetime-policy and supported-dist-modes the client asks of a dynamic node have their types",
      clauses=("amqp10:3.5.9/1", "amqp10:3.5.9/2", "amqp10:3.5.9/3"))
def node_properties_types(ctx: Context) -> None:
    p, attaches = _rpc_attaches(ctx)
    p.finish()
    props = [(f, t.dynamic_node_properties) for f in attaches for _, t in _termini(f.performative)
             if isinstance(getattr(t, "dynamic_node_properties", None), dict)]
    policies = [(f, v) for f, d in props for k, v in d.items() if str(k) == "lifetime-policy"]
    modes = [(f, v) for f, d in props for k, v in d.items() if str(k) == "supported-dist-modes"]
    if not policies and not modes:
        raise Skip("the client asks for no lifetime-policy or supported-dist-modes")
    bad_policies = [v for _, v in policies if not isinstance(v, LIFETIME_POLICIES)]
    bad_modes = [v for _, v in modes if not _values(v)
                 or any(not isinstance(m, Symbol) or str(m) not in DIST_MODES for m in _values(v))]
    shown = "; ".join(f"{k}={v!r}" for _, d in props for k, v in d.items())
    if policies:
        ctx.record(not bad_policies, what="lifetime-policy is a lifetime policy", clauses=("amqp10:3.5.9/1",),
                   expected="delete-on-close, delete-on-no-links, delete-on-no-messages or "
                            "delete-on-no-links-or-messages", observed=shown)
    if modes:
        ctx.record(not bad_modes, what="supported-dist-modes are distribution-mode symbols",
                   clauses=("amqp10:3.5.9/2", "amqp10:3.5.9/3"), expected="one or more of the symbols move, copy",
                   observed=shown)


@case("amqp10/3.5.3/client-source-outcomes-valid", role="client",
      title="outcomes in the client's source are outcome descriptors, and its default-outcome is an outcome",
      clauses=("amqp10:3.5.3/10", "amqp10:3.5.3/12"))
def source_outcomes(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1)
    p.responder.preload("amqpspec-q", ["one"])
    obs = p.serve()
    p.finish()
    sources = [f.performative.source for f in named(obs.received, "attach") if f.performative.source is not None]
    if not sources:
        unmet("an attach with a source from the client", obs)
    outcomes = [o for s in sources for o in _values(s.outcomes)]
    defaults = [s.default_outcome for s in sources if s.default_outcome is not None]
    if not outcomes and not defaults:
        raise Skip("the client's sources set neither outcomes nor default-outcome")
    shown = "; ".join(f"outcomes={s.outcomes!r}, default-outcome={s.default_outcome!r}" for s in sources)
    if outcomes:
        bad = [o for o in outcomes if not isinstance(o, Symbol) or str(o) not in OUTCOME_DESCRIPTORS]
        ctx.record(not bad, what="outcomes are symbolic descriptors of outcomes", clauses=("amqp10:3.5.3/12",),
                   expected="each a symbol among " + ", ".join(sorted(OUTCOME_DESCRIPTORS)), observed=shown)
    if defaults:
        bad = [d for d in defaults if not (isinstance(d, DescribedBase) and d.NAME in
                                           {cls.NAME for cls in spec.OUTCOMES} and not d.problems)]
        ctx.record(not bad, what="default-outcome is an outcome", clauses=("amqp10:3.5.3/10",),
                   expected="accepted, rejected, released, modified or declared", observed=shown)
