"""Spec 2.7.7 Detach (transport): a detach unmaps the handle.

Once a link is detached its handle is free for another link, and a transfer on it refers to
no attached link (the session ends, preferably with unattached-handle). A detach carrying an
error from us is still answered by the broker's detach. Details in the broker's own error
detaches (2.7.7 SHOULD) are checked where one can be provoked: amqp10/2.7.3/max-message-size-exceeded.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp10 import Observation, error_condition, performative_name
from amqpspec.peer.session10 import Sender, Session, begin
from amqpspec.verify10 import SessionError
from amqpspec.wire.amqp10 import spec

from ._common import REACTION_WINDOW, WAIT, address, link_name
from ._links import fresh_sender
from ._sessions import ends, ends_or_attach, marker_link

G_UNMAPS = "Detach the link endpoint from the session. This unmaps the handle and makes it available for use by other links."
G_UNATTACHED = ("amqp:session:unattached-handle: A frame (other than attach) was received referencing a handle which is "
                "not currently in use of an attached link.")
G_CLOSE_REPLY = ("The partner will destroy the corresponding link endpoint, and reply with its own detach frame with the "
                 "closed flag set to true.")


def _detached(s: Session, link: Sender) -> Observation:
    """Closes ``link`` and waits for the broker's detach of it (or the session's end)."""
    link.detach(closed=True)
    stop_end = ends(s)
    return s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (
        performative_name(f) == "detach" and f.channel == s.remote and int(f.performative.handle) == link.remote_handle))


# weighs as a MAY: amqp10:2.8.4/2 ("Link handles MAY be reused ...") decides, G_UNMAPS has no keyword
@case("amqp10/2.7.7/handle-reusable", title="the handle of a detached link can be used by a new link",
      clauses=("amqp10:2.8.4/2",), guideline=G_UNMAPS)
def handle_reusable(ctx: Context) -> None:
    """Attaches a sending link on handle 0, closes it (and waits for the broker's detach), then attaches
    another link (another name) on handle 0. Passes when the broker attaches the new link without an error."""
    s = begin(ctx.connect())
    addr = address(ctx)
    first = fresh_sender(ctx, s, addr, handle=0)
    before = _detached(s, first)
    name = link_name(ctx, "again")
    s.sender(addr, name=name, handle=0, wait=False)
    obs = s.peer.observe(WAIT, stop=ends_or_attach(s, name))
    answered = [f for f in obs.performatives("attach", s.remote) if str(f.performative.name) == name]
    ctx.record(bool(answered) and not obs.performatives("end", s.remote) and obs.close is None,
               expected=f"an attach of the new link {name!r} on our handle 0, no error",
               observed=f"after the close: {before.describe()} | new attach: {obs.describe()}",
               clauses=("amqp10:2.8.4/2",), guideline=G_UNMAPS)


@case("amqp10/2.7.7/transfer-after-detach", title="a transfer on the handle of a detached link ends the session",
      clauses=("amqp10:2.5.4/1",))
def transfer_after_detach(ctx: Context) -> None:
    """Attaches a sending link, closes it (waiting for the broker's detach), then sends a transfer on its old
    handle and an attach marker. Passes when the broker ends the session with an error (2.5.4, MUST: the
    handle no longer refers to a link); a guideline check prefers amqp:session:unattached-handle."""
    s = begin(ctx.connect())
    link = fresh_sender(ctx, s)
    _detached(s, link)
    link.send("after the detach")
    mark = marker_link(ctx, s)
    obs = s.peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, mark))
    ctx.check(obs, SessionError(channel=s.remote), what="the session ends with an error")
    ends_ = [f.performative for f in obs.performatives("end", s.remote) if error_condition(f.performative)]
    if ends_:
        ctx.record(error_condition(ends_[0]) == str(spec.SessionError.UNATTACHED_HANDLE),
                   expected="end with error amqp:session:unattached-handle", observed=obs.describe(),
                   what="error condition", guideline=G_UNATTACHED)


@case("amqp10/2.7.7/detach-with-error-answered", title="a closing detach carrying an error is answered with a closing detach",
      guideline=G_CLOSE_REPLY)
def detach_with_error_answered(ctx: Context) -> None:
    """Attaches a sending link and closes it with a detach carrying an error (amqp:internal-error, with a
    description). Passes when the broker answers with a detach of its handle, closed=true, and keeps the
    session (no end)."""
    s = begin(ctx.connect())
    link = fresh_sender(ctx, s)
    link.detach(closed=True, error=spec.Error(condition=spec.AmqpError.INTERNAL_ERROR,
                                               description="amqpspec: the application gave up on this link"))
    stop_end = ends(s)
    obs = s.peer.observe(WAIT, stop=lambda f: stop_end(f) or (
        performative_name(f) == "detach" and f.channel == s.remote and int(f.performative.handle) == link.remote_handle))
    got = [f.performative for f in obs.performatives("detach", s.remote) if int(f.performative.handle) == link.remote_handle]
    ctx.record(bool(got) and bool(got[0].closed) and not obs.performatives("end", s.remote) and obs.close is None,
               expected=f"detach(handle={link.remote_handle}, closed=true), the session kept", observed=obs.describe())
