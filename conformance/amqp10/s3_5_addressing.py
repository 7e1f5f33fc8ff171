"""Spec 3.5 Sources and Targets (messaging): what the broker does with the terminus fields.

The broker's attach reports the terminus it actually set up (transport 2.6.3: "the endpoint
MUST report the actual properties of the terminus as created"), so most checks read the
source (broker sending) or target (broker receiving) of the broker's attach: a field the
text constrains (dynamic-node-properties only with dynamic, outcomes that name outcomes,
distribution-mode set when the node offers more than one, an address for a node created on
request) and the fields it must not claim (a filter or a distribution-mode no
implementation can know). The others exercise what the fields mean on the wire: an
accepted message is not sent again on the link, a delivery settled without a state gets
the source's default outcome, a node created with delete-on-close goes away with its link.

Dynamic node creation as such (the attach/detach sequence) belongs to the links cases of
2.6; here only the 3.5 field semantics of the broker's answer are checked, and a broker that
does not create dynamic nodes (refuses the attach, or answers with a terminus that is not
dynamic) is skipped.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import Observation
from amqpspec.peer.session10 import Link, Receiver, Sender, Session, begin
from amqpspec.wire.amqp10 import AMQPFrame, Array, Described, Symbol, describe, spec
from amqpspec.wire.amqp10.composite import DescribedBase, show

from ._addressing import (
    ABSENT_WINDOW, as_values, attach_link, describe_arrivals, read_until, receiver_from, refusal, sender_to,
    transfer_outcome, with_token,
)
from ._common import address, link_name, token_octets

OUTCOME_DESCRIPTORS = {cls.DESCRIPTOR: cls.NAME for cls in spec.OUTCOMES}    # "amqp:accepted:list" -> "accepted"
OUTCOME_CODES = {int(cls.CODE): cls.NAME for cls in spec.OUTCOMES}
LIFETIME_POLICIES = (spec.DeleteOnClose, spec.DeleteOnNoLinks, spec.DeleteOnNoMessages, spec.DeleteOnNoLinksOrMessages)
REPORT_ACTUAL = "amqp10:2.6.3/5"   # "... the endpoint MUST report the actual properties of the terminus as created"


def distribution_mode(source: Any) -> str | None:
    mode = getattr(source, "distribution_mode", None)
    return None if mode is None else str(mode)


# ============================================================================ 3.5.2 distribution modes

def _accepted_then_resent(ctx: Context, s: Session, snd: Sender, rcv: Receiver, first: bytes, sentinel: bytes,
                          link: str) -> int:
    """Grants ``rcv`` one credit and accepts the message ``first`` when it comes (skips the case when it does
    not come on the ``link``), then posts ``sentinel`` and grants more; returns how many times ``first`` came
    again, before the sentinel or within ABSENT_WINDOW after it."""
    rcv.grant(1)
    if not read_until(s, lambda: with_token(rcv, first)):
        ctx.skip(f"the message was not delivered on the {link}: {describe_arrivals(s)}")
    rcv.accept(with_token(rcv, first)[0])
    transfer_outcome(snd, sentinel)
    rcv.grant(5)
    read_until(s, lambda: with_token(rcv, sentinel) or s.error_frames())
    read_until(s, lambda: len(with_token(rcv, first)) > 1 or s.error_frames(), ABSENT_WINDOW)
    return len(with_token(rcv, first)) - 1


@case("amqp10/3.5.2/accepted-not-resent", title="a message accepted at the receiver is not sent again on the link",
      clauses=("amqp10:3.5.2/1", "amqp10:3.5.3/11"))
def accepted_not_resent(ctx: Context) -> None:
    """Posts a message to a fresh node, receives it on a link with a minimal source (address only)
    and settles it as accepted; then posts a sentinel and grants more credit. Passes when the
    accepted message does not come again before or after the sentinel, and (when the broker's
    source names neither outcomes nor a default-outcome) accepting raised no error."""
    s = begin(ctx.connect())
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    first, sentinel = token_octets(ctx, "first"), token_octets(ctx, "sentinel")
    if not isinstance(transfer_outcome(snd, first), spec.Accepted):
        ctx.skip("the broker did not accept the message posted to the node")
    rcv = receiver_from(ctx, s, spec.Source(address=addr))
    offered = [str(o) for o in as_values(rcv.remote.source.outcomes)]
    if offered and "amqp:accepted:list" not in offered:
        ctx.skip(f"the broker's source does not offer the accepted outcome (outcomes={offered})")
    again = _accepted_then_resent(ctx, s, snd, rcv, first, sentinel, "receiving link")
    minimal = rcv.remote.source.default_outcome is None and not offered
    if minimal:
        errors = s.error_frames()
        ctx.record(not errors, what="accepted is supported by a source with no outcomes and no default-outcome",
                   expected="no error after the accepted disposition",
                   observed="; ".join(describe(e) for e in errors) or "no error",
                   clauses=("amqp10:3.5.3/11",))
    else:
        ctx.note("the broker's source names outcomes or a default-outcome: 3.5.3/11 does not apply")
    seen_sentinel = bool(with_token(rcv, sentinel))
    ctx.record(again == 0, what="the accepted message is not resent", clauses=("amqp10:3.5.2/1",),
               expected="the sentinel, and the accepted message not again",
               observed=f"accepted message sent again {again} time(s); sentinel "
                        f"{'received' if seen_sentinel else 'not received'}; {describe_arrivals(s)}")


@case("amqp10/3.5.2/copy-link-no-resend", title="a copy link does not resend a message it transferred and that was accepted",
      clauses=("amqp10:3.5.2/1", "amqp10:3.5.2/2"))
def copy_link_no_resend(ctx: Context) -> None:
    """Asks for distribution-mode copy; skipped unless the broker's source reports copy. Posts a
    message, receives and accepts it on the copy link, posts a sentinel and grants more credit:
    the copy link must not send the accepted message again (the source keeps the state that
    prevents it). A separate guideline check: with copy the message stays available at the
    node, so a second (default) link receives it."""
    s = begin(ctx.connect())
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    first, sentinel = token_octets(ctx, "first"), token_octets(ctx, "sentinel")
    if not isinstance(transfer_outcome(snd, first), spec.Accepted):
        ctx.skip("the broker did not accept the message posted to the node")
    rcv = receiver_from(ctx, s, spec.Source(address=addr, distribution_mode=Symbol("copy")), "copy")
    if distribution_mode(rcv.remote.source) != "copy":
        ctx.skip(f"the broker's source is not a copy source (distribution-mode="
                 f"{distribution_mode(rcv.remote.source)})")
    again = _accepted_then_resent(ctx, s, snd, rcv, first, sentinel, "copy link")
    ctx.record(again == 0, what="the copy link does not resend the accepted message",
               expected="the sentinel, and the accepted message not again",
               observed=f"accepted message sent again {again} time(s); {describe_arrivals(s)}")
    other = receiver_from(ctx, s, spec.Source(address=addr), "second")
    other.grant(5)
    read_until(s, lambda: with_token(other, first) or s.error_frames())
    ctx.record(bool(with_token(other, first)), what="the copied message is still at the node",
               expected="a second link from the node receives the message the copy link transferred",
               observed=f"{len(with_token(other, first))} copies on the second link; {describe_arrivals(s)}",
               guideline="The copy distribution-mode leaves the state of the message unchanged at the distribution node.")


# ============================================================================ 3.5.3 source

@case("amqp10/3.5.3/distribution-mode-set", title="a source that offers several distribution-modes always states its mode",
      clauses=("amqp10:3.5.3/7",))
def distribution_mode_set(ctx: Context) -> None:
    """Attaches three receiving links to one node: asking for copy, for move, and for nothing.
    When the broker's sources show that the node supports more than one distribution-mode
    (its attaches report two different modes), every one of its attaches must set the field,
    the one answering the link that asked for nothing included. Skipped otherwise."""
    s = begin(ctx.connect())
    addr = address(ctx)
    sender_to(ctx, s, addr)
    reported: dict[str, str | None] = {}
    for asked in ("copy", "move", None):
        src = spec.Source(address=addr, distribution_mode=None if asked is None else Symbol(asked))
        rcv = receiver_from(ctx, s, src, f"dist-{asked or 'none'}")
        reported[asked or "nothing"] = distribution_mode(rcv.remote.source)
    modes = {m for m in reported.values() if m is not None}
    shown = ", ".join(f"asked {k}: {v or 'not set'}" for k, v in reported.items())
    if len(modes) < 2:
        ctx.skip(f"the broker's sources do not show more than one distribution-mode ({shown})")
    ctx.record(all(v is not None for v in reported.values()),
               expected="distribution-mode set on every source the broker sends",
               observed=f"the node supports {sorted(modes)}; {shown}")


@case("amqp10/3.5.3/unknown-distribution-mode-not-claimed",
      title="a distribution-mode no one defines is not reported as the mode in place",
      clauses=(REPORT_ACTUAL,))
def unknown_distribution_mode(ctx: Context) -> None:
    """Asks (receiving end, 3.5.3 lets it state a preference) for distribution-mode
    'amqpspec:undefined-mode', which neither the spec nor its registry defines. The broker may
    refuse the link or adjust the mode, but its source reports the actual terminus, so it must
    not carry the undefined mode."""
    s = begin(ctx.connect())
    addr = address(ctx)
    sender_to(ctx, s, addr)
    bogus = "amqpspec:undefined-mode"
    link, obs = attach_link(s, link_name(ctx, "rcv"), role=spec.Role.RECEIVER,
                            source=spec.Source(address=addr, distribution_mode=Symbol(bogus)), target=spec.Target())
    remote = link.remote
    if remote is None or remote.source is None:
        ctx.note(f"the broker refused the link: {obs.describe()}")
        ctx.record(True, expected=f"no source claiming distribution-mode {bogus}", observed=obs.describe())
        return
    mode = distribution_mode(remote.source)
    ctx.record(mode != bogus, expected=f"the source reports the mode in place, not {bogus}",
               observed=f"source {show(remote.source)}")


@case("amqp10/3.5.3/outcomes-valid", title="the broker's source names only outcomes, and its default-outcome is an outcome",
      clauses=("amqp10:3.5.3/10", "amqp10:3.5.3/12"))
def outcomes_valid(ctx: Context) -> None:
    """Attaches two receiving links: one with a minimal source, one asking for all four outcomes
    and default-outcome modified. In each broker source, every value of outcomes must be the
    symbolic descriptor of an outcome (accepted, rejected, released, modified or declared) and
    default-outcome, when set, must be an outcome."""
    s = begin(ctx.connect())
    addr = address(ctx)
    sender_to(ctx, s, addr)
    asked = [Symbol(d) for d in ("amqp:accepted:list", "amqp:rejected:list", "amqp:released:list",
                                 "amqp:modified:list")]
    sources = []
    for what, src in (("minimal", spec.Source(address=addr)),
                      ("full", spec.Source(address=addr, outcomes=asked,
                                           default_outcome=spec.Modified(delivery_failed=True)))):
        sources.append((what, receiver_from(ctx, s, src, what).remote.source))
    bad_outcomes = []
    bad_defaults = []
    for what, src in sources:
        for o in as_values(src.outcomes):
            if not isinstance(o, Symbol) or str(o) not in OUTCOME_DESCRIPTORS:
                bad_outcomes.append(f"{what}: {show(o)}")
        d = src.default_outcome
        if d is not None and not _is_outcome(d):
            bad_defaults.append(f"{what}: {show(d)}")
    shown = "; ".join(f"{w}: outcomes={show(s.outcomes)}, default-outcome={show(s.default_outcome)}"
                      for w, s in sources)
    ctx.record(not bad_outcomes, what="outcomes are symbolic descriptors of outcomes", clauses=("amqp10:3.5.3/12",),
               expected="each value a symbol among " + ", ".join(sorted(OUTCOME_DESCRIPTORS)),
               observed=("not outcome descriptors: " + ", ".join(bad_outcomes) + "; " if bad_outcomes else "") + shown)
    ctx.record(not bad_defaults, what="default-outcome is a valid outcome", clauses=("amqp10:3.5.3/10",),
               expected="null or an outcome (accepted, rejected, released, modified, declared)",
               observed=("not outcomes: " + ", ".join(bad_defaults) + "; " if bad_defaults else "") + shown)


def _is_outcome(value: Any) -> bool:
    if isinstance(value, DescribedBase):
        return value.NAME in OUTCOME_DESCRIPTORS.values() and not value.problems
    if isinstance(value, Described):
        d = value.descriptor
        return (isinstance(d, Symbol) and str(d) in OUTCOME_DESCRIPTORS) or (isinstance(d, int) and int(d) in OUTCOME_CODES)
    return False


@case("amqp10/3.5.3/default-outcome-applied",
      title="a delivery settled without a state gets the source's default-outcome",
      guideline="Indicates the outcome to be used for transfers that have not reached a terminal state at the "
                "receiver when the transfer is settled, including when the source is destroyed.")
def default_outcome_applied(ctx: Context) -> None:
    """Asks for default-outcome released; the broker reports the default-outcome in place
    (skipped when it reports none). Receives a message and settles it with no state: with a
    released or modified (not undeliverable-here) default the message must be delivered again
    (on a second link); with accepted or rejected it must not."""
    s = begin(ctx.connect())
    addr = address(ctx)
    snd = sender_to(ctx, s, addr)
    first = token_octets(ctx, "first")
    if not isinstance(transfer_outcome(snd, first), spec.Accepted):
        ctx.skip("the broker did not accept the message posted to the node")
    rcv = receiver_from(ctx, s, spec.Source(address=addr, default_outcome=spec.Released()))
    default = rcv.remote.source.default_outcome
    if default is None or not _is_outcome(default):
        ctx.skip(f"the broker's source reports no default-outcome (default-outcome={show(default)})")
    name = default.NAME if isinstance(default, DescribedBase) else "?"
    comes_back = name == "released" or (name == "modified" and not getattr(default, "undeliverable_here", None))
    rcv.grant(1)
    if not read_until(s, lambda: with_token(rcv, first)):
        ctx.skip(f"the message was not delivered on the receiving link: {describe_arrivals(s)}")
    did = int(with_token(rcv, first)[0].transfer.delivery_id)
    # settled without a state: the frame the case is about, so built here (the layer's would say accepted)
    s.peer.send(AMQPFrame(s.ch, spec.Disposition(role=spec.Role.RECEIVER, first=did, settled=True)))
    rcv.detach(closed=True)
    read_until(s, lambda: s.error_frames() or rcv.remote_detach is not None)
    if s.error_frames():
        ctx.record(False, expected=f"default-outcome {show(default)} applied to the delivery settled without a state",
                   observed=f"the broker answered the disposition (settled, no state) with an error: "
                            f"{describe_arrivals(s)}")
        return
    other = receiver_from(ctx, s, spec.Source(address=addr), "second")
    sentinel = token_octets(ctx, "sentinel")
    transfer_outcome(snd, sentinel)
    other.grant(5)
    read_until(s, lambda: (with_token(other, first) and with_token(other, sentinel)) or s.error_frames())
    if not comes_back:
        read_until(s, lambda: with_token(other, first) or s.error_frames(), ABSENT_WINDOW)
    again = bool(with_token(other, first))
    ctx.record(again == comes_back,
               expected=f"default-outcome {show(default)}: the message "
                        f"{'is delivered again' if comes_back else 'is not delivered again'}",
               observed=f"message {'delivered again' if again else 'not delivered again'} on a second link; "
                        f"{describe_arrivals(s)}")


@case("amqp10/3.5.3/no-node-properties-without-dynamic",
      title="the broker's source carries dynamic-node-properties only when dynamic is true",
      clauses=("amqp10:3.5.3/6",))
def source_node_properties(ctx: Context) -> None:
    """Attaches a receiving link whose source names an address and (wrongly, without dynamic)
    dynamic-node-properties {lifetime-policy: delete-on-close}. Whatever the broker does with
    them, its own source must leave dynamic-node-properties unset unless its dynamic is true."""
    s = begin(ctx.connect())
    addr = address(ctx)
    sender_to(ctx, s, addr)
    props = {Symbol("lifetime-policy"): spec.DeleteOnClose()}
    link, obs = attach_link(s, link_name(ctx, "rcv"), role=spec.Role.RECEIVER,
                            source=spec.Source(address=addr, dynamic_node_properties=props), target=spec.Target())
    _node_properties_check(ctx, link.remote, obs, "source")


@case("amqp10/3.5.4/no-node-properties-without-dynamic",
      title="the broker's target carries dynamic-node-properties only when dynamic is true",
      clauses=("amqp10:3.5.4/6",))
def target_node_properties(ctx: Context) -> None:
    """Attaches a sending link whose target names an address and (wrongly, without dynamic)
    dynamic-node-properties {lifetime-policy: delete-on-close}. The broker's own target must
    leave dynamic-node-properties unset unless its dynamic is true."""
    s = begin(ctx.connect())
    addr = address(ctx)
    props = {Symbol("lifetime-policy"): spec.DeleteOnClose()}
    link, obs = attach_link(s, link_name(ctx, "snd"), role=spec.Role.SENDER, source=spec.Source(),
                            target=spec.Target(address=addr, dynamic_node_properties=props))
    _node_properties_check(ctx, link.remote, obs, "target")


def _node_properties_check(ctx: Context, remote: Any, obs: Observation, which: str) -> None:
    terminus = None if remote is None else getattr(remote, which)
    if terminus is None:
        ctx.record(True, expected=f"no {which} with dynamic-node-properties unless dynamic is true",
                   observed=f"no {which} in the broker's attach: {obs.describe()}")
        return
    ok = terminus.dynamic_node_properties is None or terminus.dynamic is True
    ctx.record(ok, expected=f"dynamic-node-properties unset in the broker's {which} (its dynamic is not true)",
               observed=f"{which} {show(terminus)}")


# ---------------------------------------------------------------------------- dynamic nodes

def _dynamic(ctx: Context, which: str, properties: dict | None = None) -> tuple[Session, Link, Any, str]:
    """Requests a dynamic node as source (we receive) or target (we send); skips when none is reported.

    Returns the session, the link, the broker's terminus, and the link name.
    """
    container = ctx.name("container")
    s = begin(ctx.connect(container_id=container))
    name = link_name(ctx, "dyn")
    if which == "source":
        link, obs = attach_link(s, name, role=spec.Role.RECEIVER,
                                source=spec.Source(dynamic=True, dynamic_node_properties=properties),
                                target=spec.Target())
    else:
        link, obs = attach_link(s, name, role=spec.Role.SENDER, source=spec.Source(),
                                target=spec.Target(dynamic=True, dynamic_node_properties=properties))
    remote = link.remote
    why = refusal(obs, remote)
    if why is not None:
        ctx.skip(f"the broker does not create dynamic nodes: {why}")
    terminus = getattr(remote, which)
    if terminus is None or terminus.dynamic is not True:
        ctx.skip(f"the broker's {which} does not report a dynamic node ({which}={show(terminus)})")
    addr = terminus.address
    if isinstance(addr, str) and addr:
        ctx.will_delete("queue", addr)
    return s, link, terminus, name


def _dynamic_checks(ctx: Context, terminus: Any, name: str, which: str, must: str, should: tuple[str, str]) -> None:
    addr = terminus.address
    ctx.record(addr is not None, what=f"the {which} of the created node has its address", clauses=(must,),
               expected="address set", observed=f"{which} {show(terminus)}")
    container = ctx.name("container")  # the container-id _dynamic opened the connection with
    text = str(addr) if addr is not None else ""
    ctx.record(name in text and container in text, what="the generated address names the link and our container",
               clauses=should, expected=f"an address including the link name {name!r} and container-id {container!r}",
               observed=f"address {show(addr)}")
    props = terminus.dynamic_node_properties
    problems = _node_property_problems(props)
    ctx.record(not problems, what="the node properties have the standard types",
               clauses=("amqp10:3.5.9/1", "amqp10:3.5.9/2", "amqp10:3.5.9/3"),
               expected="lifetime-policy a lifetime-policy type; supported-dist-modes one or more symbols",
               observed="; ".join(problems) or f"dynamic-node-properties={show(props)}")


def _node_property_problems(props: Any) -> list[str]:
    if props is None:
        return []
    if not hasattr(props, "items"):
        return [f"dynamic-node-properties is not a map: {show(props)}"]
    out = []
    for k, v in props.items():
        key = str(k)
        if key == "lifetime-policy" and not (isinstance(v, LIFETIME_POLICIES) and not v.problems):
            out.append(f"lifetime-policy {show(v)} is not a lifetime-policy")
        if key == "supported-dist-modes":
            values = as_values(v)
            if not values or not all(isinstance(m, Symbol) for m in values):
                out.append(f"supported-dist-modes {show(v)} is not one or more symbols")
    return out


@case("amqp10/3.5.3/dynamic-source-address", title="a source created on request reports its address",
      clauses=("amqp10:3.5.3/2", "amqp10:3.5.3/3", "amqp10:3.5.3/5", "amqp10:3.5.9/1", "amqp10:3.5.9/2",
               "amqp10:3.5.9/3"))
def dynamic_source_address(ctx: Context) -> None:
    """Attaches a receiving link with source {dynamic: true, no address, dynamic-node-properties
    {lifetime-policy: delete-on-close, supported-dist-modes: move}}. Skipped unless the broker's
    source has dynamic=true. Then: its address is set (MUST); it includes the link name and our
    container-id (SHOULD); node properties it reports have the standard types (MUST)."""
    props = {Symbol("lifetime-policy"): spec.DeleteOnClose(),
             Symbol("supported-dist-modes"): Array([Symbol("move")], type="symbol")}
    _, _, terminus, name = _dynamic(ctx, "source", props)
    _dynamic_checks(ctx, terminus, name, "source", "amqp10:3.5.3/2", ("amqp10:3.5.3/3", "amqp10:3.5.3/5"))


@case("amqp10/3.5.4/dynamic-target-address", title="a target created on request reports its address",
      clauses=("amqp10:3.5.4/2", "amqp10:3.5.4/3", "amqp10:3.5.4/5", "amqp10:3.5.9/1"))
def dynamic_target_address(ctx: Context) -> None:
    """Attaches a sending link with target {dynamic: true, no address, dynamic-node-properties
    {lifetime-policy: delete-on-close}}. Skipped unless the broker's target has dynamic=true.
    Then: its address is set (MUST); it includes the link name and our container-id (SHOULD);
    node properties it reports have the standard types (MUST)."""
    props = {Symbol("lifetime-policy"): spec.DeleteOnClose()}
    _, _, terminus, name = _dynamic(ctx, "target", props)
    _dynamic_checks(ctx, terminus, name, "target", "amqp10:3.5.4/2", ("amqp10:3.5.4/3", "amqp10:3.5.4/5"))


@case("amqp10/3.5.10/delete-on-close", title="a node created with delete-on-close goes away with its link",
      guideline="A node dynamically created with this lifetime policy will be deleted at the point that the link "
                "which caused its creation ceases to exist.")
def delete_on_close(ctx: Context) -> None:
    """Requests a dynamic source with lifetime-policy delete-on-close; skipped unless the broker
    reports a dynamic source whose lifetime-policy is delete-on-close. Posts a message to the
    node (not consumed), closes the link, then attaches to the address again: the old node's
    message must not be delivered (the attach may also be refused: the node is gone)."""
    props = {Symbol("lifetime-policy"): spec.DeleteOnClose()}
    s, link, terminus, _ = _dynamic(ctx, "source", props)
    policy = (terminus.dynamic_node_properties or {}).get(Symbol("lifetime-policy")) \
        if hasattr(terminus.dynamic_node_properties or {}, "get") else None
    if not isinstance(policy, spec.DeleteOnClose):
        ctx.skip(f"the broker's dynamic source does not report lifetime-policy delete-on-close "
                 f"(dynamic-node-properties={show(terminus.dynamic_node_properties)})")
    addr = str(terminus.address)
    snd = sender_to(ctx, s, addr)
    left = token_octets(ctx, "left")
    if not isinstance(transfer_outcome(snd, left), spec.Accepted):
        ctx.skip("the broker did not accept a message posted to the dynamic node")
    link.detach(closed=True)
    s.peer.await_frame("detach", channel=s.remote, match=lambda f: f.performative.closed is True)
    again, obs = attach_link(s, link_name(ctx, "again"), role=spec.Role.RECEIVER, source=spec.Source(address=addr),
                             target=spec.Target())
    if refusal(obs, again.remote) is not None or again.remote.source is None:
        ctx.record(True, expected="the node is gone", observed=f"attach to {addr!r} refused: {obs.describe()}")
        return
    rcv: Receiver = again  # type: ignore[assignment]   (a receiving link: attach_link made it for that role)
    rcv.grant(5)
    read_until(s, lambda: with_token(rcv, left) or s.error_frames(), ABSENT_WINDOW * 2)
    ctx.record(not with_token(rcv, left), expected="the node is gone: its message is not delivered",
               observed=f"{len(with_token(rcv, left))} delivery of the message posted before the link closed")


# ============================================================================ 3.5.8 filter set

@case("amqp10/3.5.8/unknown-filter-not-claimed", title="a filter of an undefined type is not reported as in place",
      clauses=(REPORT_ACTUAL,))
def unknown_filter(ctx: Context) -> None:
    """Asks for a filter-set holding one filter whose descriptor 'amqpspec:undefined-filter:string'
    no specification or registry defines. The sending endpoint sets the filter actually in
    place and reports the actual terminus, so the broker's source must not carry that filter
    (it may refuse the link, or attach without it)."""
    s = begin(ctx.connect())
    addr = address(ctx)
    sender_to(ctx, s, addr)
    key = Symbol("amqpspec-undefined")
    filt = {key: Described(Symbol("amqpspec:undefined-filter:string"), "anything")}
    link, obs = attach_link(s, link_name(ctx, "rcv"), role=spec.Role.RECEIVER,
                            source=spec.Source(address=addr, filter=filt), target=spec.Target())
    remote = link.remote
    if remote is None or remote.source is None:
        ctx.record(True, expected="no source claiming the undefined filter", observed=f"link refused: {obs.describe()}")
        return
    reported = remote.source.filter
    keys = [str(k) for k in reported.keys()] if hasattr(reported, "keys") else []
    claimed = str(key) in keys or "amqpspec:undefined-filter:string" in show(reported)
    ctx.record(not claimed, expected="the broker's source filter without the undefined filter",
               observed=f"filter={show(reported)}")


@case("amqp10/3.5.8/filter-set-well-formed", title="the filter-set the broker reports has symbol keys and filter values",
      clauses=("amqp10:3.5.8/1",))
def filter_set_well_formed(ctx: Context) -> None:
    """Asks for a filter-set with a registered selector filter (apache.org:selector-filter:string
    "1=1") and a null-valued entry. Whatever filters the broker reports in its source: every key
    a symbol, every value null or a described value (a filter)."""
    s = begin(ctx.connect())
    addr = address(ctx)
    sender_to(ctx, s, addr)
    filt = {Symbol("selector"): Described(Symbol("apache.org:selector-filter:string"), "1=1"),
            Symbol("amqpspec-null"): None}
    link, obs = attach_link(s, link_name(ctx, "rcv"), role=spec.Role.RECEIVER,
                            source=spec.Source(address=addr, filter=filt), target=spec.Target())
    remote = link.remote
    if remote is None or remote.source is None:
        ctx.skip(f"the broker refused the link: {obs.describe()}")
    reported = remote.source.filter
    if reported is None:
        ctx.record(True, expected="a well-formed filter-set, or none", observed="no filter reported")
        return
    problems = []
    if not hasattr(reported, "items"):
        problems.append(f"filter is a {type(reported).__name__}, not a map")
    else:
        for k, v in reported.items():
            if not isinstance(k, Symbol):
                problems.append(f"key {show(k)} is not a symbol")
            if v is not None and not isinstance(v, (Described, DescribedBase)):
                problems.append(f"value of {show(k)} is {show(v)}, neither null nor described")
    ctx.record(not problems, expected="symbol keys; values null or described",
               observed="; ".join(problems) or f"filter={show(reported)}")
