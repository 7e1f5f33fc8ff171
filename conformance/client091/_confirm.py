"""What the publisher-confirm cases share (RabbitMQ's confirm.select extension): serving the
confirm workload with the confirms a case chooses, and the checks every such case makes --
no exception for the confirms, and the application hearing them."""
from __future__ import annotations

from typing import Callable, Sequence

from amqpspec.case import Context, Skip
from amqpspec.client.session import Play
from amqpspec.peer.amqp091 import Observation
from amqpspec.wire.amqp091 import MethodFrame

from amqpspec.verify import ChannelException

from ._client import QUICK, check, describe_errors, error_closes, needs_driver, open_conversation, unmet

__all__ = ["serve_confirms", "sending", "refused", "no_exception", "hears", "three_outstanding", "three_answered"]

# what the responder does with a publish's sequence number: True acks it, False nacks it,
# None sends no confirm of its own (the case sent what it wanted)
Confirm = Callable[[int], "bool | None"]


def sending(p: Play, methods: Callable[[int], Sequence[object]], then: bool | None = None) -> Confirm:
    """A confirm answer that sends ``methods(seq)`` on the channel of the publish just taken,
    then lets the responder do ``then``."""
    def answer(seq: int) -> bool | None:
        ch = p.responder.contents[-1].channel
        p.peer.send(*(MethodFrame(ch, m) for m in methods(seq)))  # type: ignore[arg-type]
        return then
    return answer


def serve_confirms(ctx: Context, count: int, confirm: Callable[[Play], Confirm] | None = None,
                   timeout: float | None = None) -> tuple[Play, Observation]:
    """Runs the confirm workload for ``count`` publishes, each confirmed by ``confirm(p)``
    (the responder's default when None), until the client is done; the case cannot decide
    unless the client published on a confirm channel."""
    p = open_conversation(ctx, "confirm", count=count)
    if confirm is not None:
        p.responder.confirm_ack = confirm(p)
    obs = p.serve() if timeout is None else p.serve(timeout)
    if not p.responder.publish_seq:
        unmet("a publish on a confirm channel" if count == 1 else "publishes on a confirm channel", obs)
    return p, obs


def refused(ctx: Context, methods: Callable[[int], Sequence[object]], then: bool | None = None) -> None:
    """One publish, answered with ``methods(seq)`` (then the responder's ``then``) that name a
    message no longer unacknowledged: the client must refuse them with channel exception 406."""
    p, obs = serve_confirms(ctx, 1, lambda p: sending(p, methods, then), QUICK * 2)
    check(ctx, obs, ChannelException(406))
    p.finish()


def no_exception(ctx: Context, what: str, *observations: Observation, guideline: str = "") -> None:
    """The client raised no channel or connection exception in any of ``observations``."""
    errors = [f for obs in observations for f in error_closes(obs)]
    ctx.record(not errors, what=what, expected="no channel or connection exception",
               observed=describe_errors(errors), guideline=guideline)


def hears(ctx: Context, p: Play, acked: bool, seqs: set[int], guideline: str = "",
          what: str = "the application hears every confirm") -> None:
    """The application heard each of ``seqs`` confirmed (``acked``) -- read from the driver;
    nothing to judge in the serve mode, where no driver reports."""
    if p.driver is None:
        return
    out = needs_driver(p)
    got = {e.get("n") for e in out.named("confirmed") if e.get("ack") is acked}
    ctx.record(got >= seqs, what=what,
               expected=f"confirmed events n={', '.join(map(str, sorted(seqs)))} with ack={str(acked).lower()}",
               observed=out.summary(), guideline=guideline)


def three_outstanding(p: Play, why: str) -> tuple[Observation, int]:
    """Serves until the client has published three messages with none confirmed; skips (``why``
    the case needs them outstanding together) a client that publishes the next message only
    after the previous one is confirmed. Returns what was seen and the publishes' channel."""
    p.responder.confirm_ack = lambda seq: None
    first = p.serve(QUICK * 1.5, stop=lambda f: len(p.responder.contents) >= 3)
    if len(p.responder.contents) < 3:
        if p.responder.contents:
            p.finish(0.3)
            raise Skip("the client publishes the next message only after the previous one is confirmed: " + why)
        unmet("three publishes on a confirm channel", first)
    return first, p.responder.contents[-1].channel


def three_answered(ctx: Context, why: str, methods: Sequence[object], acked: bool, what: str, guideline: str = "",
                   heard: str = "the application hears every confirm") -> None:
    """Three publishes held outstanding (skipped, ``why``, for a client that waits for each
    confirm), then answered together by ``methods``: no exception (``what``), and the
    application hears all three confirmed as ``acked`` (``heard``)."""
    p = open_conversation(ctx, "confirm", count=3)
    first, ch = three_outstanding(p, why)
    p.peer.send(*(MethodFrame(ch, m) for m in methods))  # type: ignore[arg-type]
    obs = p.serve()
    no_exception(ctx, what, first, obs, guideline=guideline)
    hears(ctx, p, acked, {1, 2, 3}, guideline, what=heard)
