"""Spec 2.6 Links (transport): naming, handles, establishing, detaching, link errors, closing.

A link is attached by an attach from each end (2.6.3): the broker answers our attach with
its own, carrying its terminus -- or a null terminus followed at once by a detach when it
refuses. A detach unmaps the handle (2.6.4); a closing detach is answered by a closing detach
(2.6.6); a link detached with an error is destroyed, and input for it ends the session with
errant-link (2.6.5); a link attached again from elsewhere steals the first attachment (2.6.1).

The helpers this module shares with the link, transfer and disposition modules (sessions and
links of the framework, the answer to an attach, filling and reading nodes) are in _links.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.peer.session10 import begin, publish
from amqpspec.verify10 import SessionError
from amqpspec.wire.amqp10 import show, spec

from ._common import REACTION_WINDOW, WAIT, address, link_name, token
from ._links import await_answer, link_error_detach, provoke_link_error
from ._sessions import ends

SENDER = spec.Role.SENDER
RECEIVER = spec.Role.RECEIVER

G_ATTACH = ("On receipt of the attach, the remote session endpoint creates a corresponding link endpoint and informs "
            "its application of the attaching link. [...] The link endpoint is then mapped to an unused handle, and an "
            "attach frame is issued carrying the state of the newly created endpoint.")
G_ROLE = ("role: The role being played by the peer, i.e., whether the peer is the sender or the receiver of "
          "messages on the link.")
G_NO_TERMINUS = ("Note that if the application chooses not to create a terminus, the session endpoint will still "
                 "create a link endpoint and issue an attach indicating that the link endpoint has no associated "
                 "local terminus.")
G_RECOVER = ("If the remote peer has no record of the link, then no terminus will be located, and local terminus "
             "(source or target as appropriate) field in the attach frame will be null.")
G_HANDLE = ("Each link endpoint is assigned a numeric handle used by the peer as a shorthand to refer to the link in "
            "all frames that reference the link (attach, detach, flow, transfer, disposition).")
G_DETACH_REPLY = ("DETACH(handle=1) ----------> *detach input handle* (1) *detach output handle* <---------- "
                  "DETACH(handle=2) [Figure 2.37: Detaching a Link] / (1) At this point both endpoints are detached.")
G_REATTACH = ("When the state of a link endpoint changes, this is can be communicated by detaching and then "
              "reattaching with the updated state on the attach frame.")
G_CLOSE_REPLY = ("A peer closes a link by sending the detach frame with the handle for the specified link, and the "
                 "closed flag set to true. The partner will destroy the corresponding link endpoint, and reply with "
                 "its own detach frame with the closed flag set to true.")


# ============================================================================ 2.6.1 naming a link
@case("amqp10/2.6.1/link-stolen", title="a link attached again from another connection steals the first attachment",
      clauses=("amqp10:2.6.1/2",))
def link_stolen(ctx: Context) -> None:
    """Two connections with the same container-id: the first attaches a sending link N, the second attaches
    the same link (same name, same direction, same containers). Passes when the second attach succeeds and
    the first attachment is detached with amqp:link:stolen, or when the second attach is refused (the link
    is not stolen) and the first stays; fails when both stay attached, or the second succeeds and the first
    is detached without the stolen error."""
    container = ctx.name(f"c-{ctx.rng.getrandbits(32):08x}")
    addr = address(ctx)
    name = link_name(ctx, "steal")
    s1 = begin(ctx.connect(container_id=container))
    first = s1.sender(addr, name=name)
    s2 = begin(ctx.connect(container_id=container))
    s2.sender(addr, name=name, wait=False)
    ans = await_answer(s2, name)
    stop_end = ends(s1)
    obs1 = s1.peer.observe(WAIT if ans.attached else 0.5, stop=lambda f: stop_end(f) or (
        performative_name(f) == "detach" and f.channel == s1.remote and int(f.performative.handle) == first.remote_handle))
    gone = [f.performative for f in obs1.performatives("detach", s1.remote) if int(f.performative.handle) == first.remote_handle]
    stolen = ans.attached and any(error_condition(d) == str(spec.LinkError.STOLEN) for d in gone)
    refused = (ans.refused or ans.detach is not None or ans.failed) and not gone and obs1.close is None
    ctx.record(stolen or refused,
               expected="the second attach answered with a terminus and the first link detached with amqp:link:stolen, "
                        "or the second attach refused and the first link left attached",
               observed=f"second connection: {ans.describe()} | first connection: {obs1.describe()}")


# ============================================================================ 2.6.2 link handles
@case("amqp10/2.6.2/broker-uses-its-handle", title="the broker refers to a link by the handle of its own attach",
      clauses=("amqp10:2.6.2/1",), level=Level.SHOULD, guideline=G_HANDLE)
def broker_uses_its_handle(ctx: Context) -> None:
    """Puts a message in a node, then attaches a receiving link with handle 5 (not the lowest) and grants
    credit on it. Passes when every flow and transfer the broker sends for the link carries the handle of
    the broker's attach (its output handle), whatever number that is."""
    addr = address(ctx)
    publish(ctx, addr, token(ctx))
    s = begin(ctx.connect())
    link = s.receiver(addr, name=link_name(ctx, "rcv"), handle=5)
    link.grant(5)
    obs = s.peer.observe(WAIT, stop=lambda f: ends(s)(f) or performative_name(f) == "transfer")
    frames = [f.performative for f in obs.performatives(None, s.remote) if performative_name(f) in ("flow", "transfer")
              and f.performative.handle is not None]
    wrong = [p for p in frames if int(p.handle) != link.remote_handle]
    ok = bool(obs.performatives("transfer", s.remote)) and not wrong
    ctx.record(ok, expected=f"a transfer, and all flows and transfers for the link on handle {link.remote_handle} "
               f"(the broker's attach; ours is {link.handle})", observed=obs.describe(),
               clauses=("amqp10:2.6.2/1",), level=Level.SHOULD, guideline=G_HANDLE)


# ============================================================================ 2.6.3 establishing a link
@case("amqp10/2.6.3/attach-answered", title="an attach is answered with an attach of the same link, in the other role",
      clauses=("amqp10:2.6.3/2", "amqp10:2.7.3/2"))
def attach_answered(ctx: Context) -> None:
    """Attaches a sending link to a fresh node and a receiving link from it. Passes when the broker answers
    each with an attach of the same name in the opposite role (guideline); when such an attach carries no
    terminus, a detach of the link must follow at once (2.6.3, MUST); and the two links, both open, have
    different handles in the broker's attaches (2.7.3: a handle MUST NOT be used for other open links)."""
    s = begin(ctx.connect())
    addr = address(ctx)
    handles = []
    for role, what in ((SENDER, "sending link"), (RECEIVER, "receiving link")):
        name = link_name(ctx, "snd" if role is SENDER else "rcv")
        (s.sender if role is SENDER else s.receiver)(addr, name=name, wait=False)
        ans = await_answer(s, name)
        ok = ans.attach is not None and bool(ans.attach.role) != bool(role)
        ctx.record(ok, expected=f"an attach named {name!r} with role {'receiver' if role is SENDER else 'sender'}",
                   observed=ans.describe(), what=f"{what}: the broker attaches it", guideline=f"{G_ATTACH} / {G_ROLE}")
        if ans.attach is not None and ans.terminus is None:
            ctx.record(ans.refused, expected="a detach of the link right after its attach without terminus",
                       observed=ans.describe(), what=f"{what}: no terminus, so detached", clauses=("amqp10:2.6.3/2",))
        if ans.attached:
            handles.append(int(ans.attach.handle))
    if len(handles) == 2:
        ctx.record(handles[0] != handles[1], expected="two different handles for the two open links",
                   observed=f"broker handles {handles}", what="one handle per open link", clauses=("amqp10:2.7.3/2",))


@case("amqp10/2.6.3/refused-terminus", title="an attach to an unknown node is refused with a null terminus and a detach",
      clauses=("amqp10:2.6.3/1", "amqp10:2.6.3/2"))
def refused_terminus(ctx: Context) -> None:
    """Attaches, each on its own session, a receiving link from and a sending link to an address naming no
    node ('/amq/queue/<unique>', a form RabbitMQ never creates). Per link: passes when the broker attaches it
    to a terminus it created (2.6.3 MAY) or refuses it the 2.6.3 way -- an attach with a null terminus,
    then a detach; fails when it ends the session, closes the connection or does not answer. Skipped when
    the broker created both nodes (the refusal path was not exercised)."""
    created = 0
    for role, what in ((RECEIVER, "receiving link from an unknown source"), (SENDER, "sending link to an unknown target")):
        s = begin(ctx.connect())
        addr = f"/amq/queue/{token(ctx, 'absent')}"
        name = link_name(ctx, "absent")
        (s.receiver if role is RECEIVER else s.sender)(addr, name=name, wait=False)
        ans = await_answer(s, name)
        if ans.attached:
            created += 1
            ctx.note(f"{what}: the broker created or found a terminus for {addr} (2.6.3 MAY)")
            continue
        ctx.record(ans.refused, expected="an attach with a null terminus, then a detach of the link",
                   observed=ans.describe(), what=what, clauses=("amqp10:2.6.3/2",))
    if created == 2:
        ctx.skip("the broker created a node for each unknown address (2.6.3 allows it): the refusal path was not "
                 "exercised")


@case("amqp10/2.6.3/recover-null-target", title="an attach recovering a link (null target) is answered with an attach",
      clauses=("amqp10:2.6.3/2",))
def recover_null_target(ctx: Context) -> None:
    """Attaches a sending link whose target is null -- the recovery of a link the broker has no record of
    (Figure 2.36). Passes when the broker answers with an attach of the link (guideline) and, if that attach
    has a null target, detaches the link at once (2.6.3, MUST); fails on no answer, an end or a close."""
    s = begin(ctx.connect())
    name = link_name(ctx, "recover")
    s.sender(name=name, target=None, wait=False)
    ans = await_answer(s, name)
    observed = ans.describe()
    if ans.attach is None and not ans.failed:  # show whether the connection still serves
        observed += f" | then a new session: {s.peer.observe(WAIT, probe=True).describe()}"
    ctx.record(ans.attach is not None and not ans.failed, expected=f"an attach named {name!r}", observed=observed,
               what="the recovering attach is answered", guideline=f"{G_RECOVER} / {G_NO_TERMINUS}")
    if ans.attach is not None and ans.terminus is None:
        ctx.record(ans.refused, expected="a detach of the link right after its attach with a null target",
                   observed=ans.describe(), what="null target, so detached", clauses=("amqp10:2.6.3/2",))


def _dynamic(ctx: Context, role: bool) -> None:
    s = begin(ctx.connect())
    name = link_name(ctx, "dyn")
    if role is RECEIVER:
        s.receiver(name=name, source=spec.Source(dynamic=True), wait=False)
    else:
        s.sender(name=name, target=spec.Target(dynamic=True), wait=False)
    ans = await_answer(s, name)
    where = "source" if role is RECEIVER else "target"
    if ans.attached:
        ctx.note(f"the broker answered with {where} {show(ans.terminus)}")
    ctx.record(ans.attached or ans.refused,
               expected=f"an attach with a {where} (the node created, 2.6.3 MAY), or an attach with a null {where} "
                        "followed by a detach (refused, 2.6.3 MUST)",
               observed=ans.describe())


@case("amqp10/2.6.3/dynamic-source", title="a dynamic source is created, or refused with a null source and a detach",
      clauses=("amqp10:2.6.3/1", "amqp10:2.6.3/2"))
def dynamic_source(ctx: Context) -> None:
    """Attaches a receiving link with source {dynamic: true} and no address. Passes when the broker attaches
    it with a source (it created the node; 3.5.3 checks its address) or refuses with an attach whose source
    is null followed by a detach; fails when it ends the session, closes the connection or does not answer."""
    _dynamic(ctx, RECEIVER)


@case("amqp10/2.6.3/dynamic-target", title="a dynamic target is created, or refused with a null target and a detach",
      clauses=("amqp10:2.6.3/1", "amqp10:2.6.3/2"))
def dynamic_target(ctx: Context) -> None:
    """Attaches a sending link with target {dynamic: true} and no address. Passes when the broker attaches it
    with a target or refuses with an attach whose target is null followed by a detach; fails when it ends
    the session, closes the connection or does not answer."""
    _dynamic(ctx, SENDER)


# ============================================================================ 2.6.4 detaching and reattaching
@case("amqp10/2.6.4/detach-answered", title="a detach (not closing) is answered with a detach of the broker's handle",
      guideline=G_DETACH_REPLY)
def detach_answered(ctx: Context) -> None:
    """Attaches a sending link and detaches it with closed=false. Passes when the broker answers with a detach
    of its handle for the link (closed either way: 2.6.6 lets it close) without ending the session."""
    s = begin(ctx.connect())
    link = s.sender(address(ctx), name=link_name(ctx, "snd"))
    link.detach(closed=False)
    stop_end = ends(s)
    obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (performative_name(f) == "detach" and f.channel == s.remote))
    got = [f.performative for f in obs.performatives("detach", s.remote) if int(f.performative.handle) == link.remote_handle]
    ctx.record(bool(got) and error_condition(got[0]) is None and not obs.performatives("end", s.remote),
               expected=f"a detach of handle {link.remote_handle} without error", observed=obs.describe())


@case("amqp10/2.6.4/reattach", title="a link detached and attached again (pipelined) is attached again",
      clauses=("amqp10:2.7.3/12",))
def reattach(ctx: Context) -> None:
    """Attaches a sending link, then sends at once a detach (closed=false) and an attach of the same link on
    the same handle (Figure 2.38). Passes when the broker answers with a detach and then an attach of the
    link (guideline) and that attach -- a reattach, not a resume -- has a null unsettled map (2.7.3 MUST)."""
    s = begin(ctx.connect())
    addr = address(ctx)
    link = s.sender(addr, name=link_name(ctx, "snd"))
    link.detach(closed=False)
    link.attach(wait=False)   # the same attach again: same name, handle and termini
    stop_end = ends(s)
    obs = s.peer.observe(REACTION_WINDOW, stop=lambda f: stop_end(f) or (
        performative_name(f) == "attach" and f.channel == s.remote and str(f.performative.name) == link.name))
    again = [f.performative for f in obs.performatives("attach", s.remote) if str(f.performative.name) == link.name]
    detached = obs.performatives("detach", s.remote)
    ctx.record(bool(again) and bool(detached) and not obs.performatives("end", s.remote) and obs.close is None,
               expected="a detach of the link, then an attach of it", observed=obs.describe(),
               what="the link is reattached", guideline=G_REATTACH)
    if again:
        ctx.record(again[0].unsettled is None, expected="the reattaching attach has no unsettled map",
                   observed=f"unsettled={show(again[0].unsettled)}", what="unsettled map of the reattach",
                   clauses=("amqp10:2.7.3/12",))


# ============================================================================ 2.6.5 link errors
@case("amqp10/2.6.5/errant-link", title="a transfer for a link detached with an error ends the session with errant-link",
      clauses=("amqp10:2.6.5/1", "amqp10:2.6.5/3"))
def errant_link(ctx: Context) -> None:
    """Provokes a link error (a message larger than the max-message-size of the broker's attach), then --
    without detaching our end -- sends another transfer on the link. Passes when the broker had detached the
    link with an error (2.6.5/1) and then ends the session with amqp:session:errant-link (2.6.5/3).
    Skipped when the broker announces no max-message-size."""
    s = begin(ctx.connect())
    link, obs = provoke_link_error(ctx, s)
    err = link_error_detach(obs, s, link)
    ctx.record(err is not None, expected="a detach of the link with an error", observed=obs.describe(),
               what="the link is detached with an error", clauses=("amqp10:2.6.5/1",))
    if err is None:
        return
    link.send("after the link error")
    after = s.peer.observe(REACTION_WINDOW, stop=ends(s))
    ctx.check(after, SessionError(str(spec.SessionError.ERRANT_LINK), channel=s.remote),
              what="input for the destroyed link", clauses=("amqp10:2.6.5/3",))


@case("amqp10/2.6.5/pipelined-reattach", title="a plain re-attach of a link detached with an error ends the session with errant-link",
      clauses=("amqp10:2.6.5/6",))
def pipelined_reattach(ctx: Context) -> None:
    """Provokes a link error (a message larger than the broker's max-message-size), then sends our detach and
    an attach of the same link without an unsettled map (a pipelined re-attach, not a resume). Passes when
    the broker ends the session with amqp:session:errant-link. Skipped when the broker announces no
    max-message-size, or did not detach the link with an error (see amqp10/2.6.5/errant-link)."""
    s = begin(ctx.connect())
    link, obs = provoke_link_error(ctx, s)
    if link_error_detach(obs, s, link) is None:
        ctx.skip(f"the broker did not detach the link with an error: {obs.describe()}")
    link.detach(closed=False)
    link.attach(target=link.remote.target, wait=False)
    after = s.peer.observe(REACTION_WINDOW, stop=ends(s))
    ctx.check(after, SessionError(str(spec.SessionError.ERRANT_LINK), channel=s.remote))


# ============================================================================ 2.6.6 closing a link
@case("amqp10/2.6.6/close-answered", title="a closing detach is answered with a closing detach",
      guideline=G_CLOSE_REPLY)
def close_answered(ctx: Context) -> None:
    """Attaches a sending and a receiving link and closes each (detach with closed=true). Passes, per link,
    when the broker answers with a detach of its handle with closed=true and no error."""
    s = begin(ctx.connect())
    addr = address(ctx)
    links = ((s.sender(addr, name=link_name(ctx, "snd")), "sending link"),
             (s.receiver(addr, name=link_name(ctx, "rcv")), "receiving link"))
    for link, what in links:
        link.detach(closed=True)
        stop_end = ends(s)
        obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (
            performative_name(f) == "detach" and f.channel == s.remote and int(f.performative.handle) == link.remote_handle))
        got = [f.performative for f in obs.performatives("detach", s.remote)
               if int(f.performative.handle) == link.remote_handle]
        ok = bool(got) and bool(got[0].closed) and error_condition(got[0]) is None
        ctx.record(ok, expected=f"detach(handle={link.remote_handle}, closed=true) without error",
                   observed=obs.describe(), what=what)

