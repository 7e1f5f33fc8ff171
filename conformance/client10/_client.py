"""What the 1.0 client cases share: starting a conversation, and checks worded for the client role."""
from __future__ import annotations

from typing import Any, Callable, NoReturn

from amqpspec.case import Context, Skip
from amqpspec.client.drivers import DriverOutcome
from amqpspec.client.session import Play, play
from amqpspec.peer.amqp10 import Observation, error_condition, performative_name
from amqpspec.peer.base import PeerError
from amqpspec.peer.server10 import is_performative
from amqpspec.peer.session10 import seq_diff
from amqpspec.verify import Verifier
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, spec

__all__ = ["Play", "open_conversation", "check", "unmet", "needs_driver", "after", "named", "error_frames",
           "describe_frames", "is_performative", "QUICK", "Context"]

QUICK = 2.0   # seconds to watch for a reaction that should come at once


def open_conversation(ctx: Context, workload: str, *, handshake: dict[str, Any] | None = None,
                      responder: dict[str, Any] | None = None, **options: Any) -> Play:
    """Launches ``workload`` and answers the opening as a correct broker (``handshake`` overrides
    the frames or limits of :meth:`ServerPeer10.handshake`; ``responder`` sets attributes of the
    responder -- credit, begin_fields, attach_fields ... -- before anything is served)."""
    p = play(ctx, workload, **options)
    for k, v in (responder or {}).items():
        setattr(p.responder, k, v)
    p.handshake(**(handshake or {}))
    return p


def check(ctx: Context, obs: Observation, verifier: Verifier, **kwargs: Any) -> bool:
    """ctx.check, with the observation worded from the broker's chair (it is the client who closed)."""
    ok = ctx.check(obs, verifier, **kwargs)
    last = ctx.checks[-1]
    last.observed = last.observed.replace("by broker", "by the client")
    return ok


def needs_driver(p: Play) -> DriverOutcome:
    """The driver's outcome, for a check that reads what the library told its application;
    skips in the serve mode, where no driver reports."""
    out = p.finish()
    if p.driver is None:
        raise Skip("the check reads the driver's events: run with amqpspec client --driver")
    return out


def named(items: list[Any], name: str, channel: int | None = None) -> list[AMQPFrame]:
    return [f for f in items if performative_name(f) == name and (channel is None or f.channel == channel)]


def after(items: list[Any], pred: Any) -> list[Any]:
    """What the client sent after the first item matching ``pred`` (nothing when none matched)."""
    for i, item in enumerate(items):
        if pred(item):
            return items[i + 1:]
    return []


def error_frames(items: list[Any]) -> list[AMQPFrame]:
    """close, end or detach frames the client sent carrying an error."""
    return [f for f in items if performative_name(f) in ("close", "end", "detach")
            and error_condition(f.performative) is not None]


def describe_frames(items: list[Any], limit: int = 6) -> str:
    shown = [f.summary() for f in items if not isinstance(f, EmptyFrame)][:limit]
    return "; ".join(shown) or "nothing"


def unmet(what: str, obs: Observation | None = None) -> NoReturn:
    """The client never reached the case's starting point (the workload did not do what the
    case needs): the case cannot decide -- an error, never a verdict on the client."""
    raise PeerError(f"{what} did not happen" + (f"; observed {obs.describe()}" if obs is not None else ""))


def error(condition: str, description: str | None = None) -> spec.Error:
    from amqpspec.wire.amqp10 import Symbol

    return spec.Error(condition=Symbol(condition), description=description)


def await_sender(p: Play, window: float = 2 * QUICK, *, credit: int = 1) -> tuple[Observation, Any]:
    """Serves until the client has attached a receiving link (ours sends) and granted at least
    ``credit``; returns what was seen and our Sender (the case errs when it never happens)."""
    def ready(_: Any) -> bool:
        return any(s.link_credit >= credit for s in p.responder.senders())
    obs = p.serve(window, stop=ready)
    senders = [s for s in p.responder.senders() if s.link_credit >= credit]
    if not senders:
        unmet(f"a receiving link from the client with link-credit {credit} or more", obs)
    return obs, senders[0]


def await_receiver(p: Play, window: float = 2 * QUICK) -> tuple[Observation, Any]:
    """Serves until the client has attached a sending link (ours receives); returns our Receiver."""
    obs = p.serve(window, stop=lambda _: bool(p.responder.receivers()))
    if not p.responder.receivers():
        unmet("a sending link from the client", obs)
    return obs, p.responder.receivers()[0]


def uncredited_sender(ctx: Context, count: int) -> tuple[Play, Any]:
    """The send workload for ``count`` messages, its sending link attached and no credit granted
    (the case grants what it tests); returns the play and our Receiver."""
    p = open_conversation(ctx, "send", count=count, timeout=8, responder={"credit": 0, "replenish": False})
    _, rcv = await_receiver(p)
    return p, rcv


def drained_to(limit: int, handle: int | None = None) -> Callable[[Any], bool]:
    """Matches a flow of the client (for link ``handle``, or any) whose delivery-count reached
    ``limit``: a sender that drained its credit says so this way (2.6.7)."""
    def drained(f: Any) -> bool:
        return performative_name(f) == "flow" and f.performative.handle is not None \
            and (handle is None or int(f.performative.handle) == handle) \
            and f.performative.delivery_count is not None \
            and seq_diff(int(f.performative.delivery_count), limit) >= 0
    return drained


def at_most_one_delivery(ctx: Context, p: Play, rcv: Any, expected: str, *, show_all: bool = False) -> None:
    """Judges 2 s of the send workload held to credit 1 (one delivery at most: 2.6.7/9), showing
    its new transfers (or, ``show_all``, every transfer); then grants plenty so that it ends."""
    obs = p.serve(2.0)
    transfers = named(obs.received, "transfer")
    new = [f for f in transfers if f.performative.delivery_id is not None]
    ctx.record(len(rcv.received) <= 1 and len(new) <= 1, expected=expected,
               observed=f"{len(rcv.received)} delivery(ies): {describe_frames(transfers if show_all else new)}")
    p.responder.replenish = True
    p.responder.credit = 10
    rcv.grant(10)
    p.serve()
    p.finish()


def idle_conversation(ctx: Context, *, timeout: float, heartbeat: float, why: str = "") -> tuple[Play, int]:
    """The idle workload, opened; returns the play and the idle-time-out (ms) the client announced
    in its open. Skipped when it announced none (``why``: what the case then cannot see)."""
    p = open_conversation(ctx, "idle", timeout=timeout, heartbeat=heartbeat)
    idle = p.peer.negotiated.idle_time_out
    if not idle:
        p.finish(0.2)
        raise Skip("the client announced no idle-time-out" + (f": {why}" if why else ""))
    return p, idle


def client_closed(obs: Observation) -> str:
    return obs.describe().replace("by broker", "by the client")
