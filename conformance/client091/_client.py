"""What the client cases share: starting a conversation, and checks worded for the client role."""
from __future__ import annotations

from typing import Any, NoReturn

from amqpspec.case import Context, Skip
from amqpspec.client.drivers import DriverOutcome
from amqpspec.client.session import Play, play
from amqpspec.peer.amqp091 import Observation, UnexpectedReply
from amqpspec.peer.base import PeerError
from amqpspec.verify import SilentClose, Verifier
from amqpspec.wire.amqp091 import MethodFrame, spec

__all__ = ["Play", "open_conversation", "unmet", "check", "error_closes", "describe_errors", "needs_driver", "after",
           "methods_after", "stopped_on_open", "handshake_goes_on", "closes_silently_on", "QUICK"]

QUICK = 2.0   # seconds to watch for a reaction that should come at once


def open_conversation(ctx: Context, workload: str, *, handshake: dict[str, Any] | None = None, **options: Any) -> Play:
    """Launches ``workload`` and answers the handshake as a correct broker (``handshake``
    overrides the frames or tuning of :meth:`ServerPeer.handshake`)."""
    p = play(ctx, workload, **options)
    p.handshake(**(handshake or {}))
    return p


def check(ctx: Context, obs: Observation, verifier: Verifier, **kwargs: Any) -> bool:
    """ctx.check, with the observation worded from the broker's chair (it is the client who closed)."""
    ok = ctx.check(obs, verifier, **kwargs)
    last = ctx.checks[-1]
    last.observed = last.observed.replace("by broker", "by the client")
    return ok


def error_closes(obs: Observation) -> list[MethodFrame]:
    """connection.close or channel.close frames the client sent with an error code: 3xx and
    above are the spec's soft and hard errors (200 is reply-success; some clients close with
    0, no defined code, meaning a normal shutdown)."""
    return [f for f in obs.methods() if f.method.NAME in ("connection.close", "channel.close")
            and getattr(f.method, "reply_code", 200) >= 300]


def describe_errors(frames: list[MethodFrame]) -> str:
    return "; ".join(f.summary() for f in frames) or "no exception"


def needs_driver(p: Play) -> DriverOutcome:
    """The driver's outcome, for a check that reads what the library told its application;
    skips in the serve mode, where no driver reports."""
    out = p.finish()
    if p.driver is None:
        raise Skip("the check reads the driver's events: run with amqpspec client --driver")
    return out


def after(obs: Observation, pred: Any) -> list[Any]:
    """What the client sent after the first item matching ``pred``."""
    for i, item in enumerate(obs.received):
        if pred(item):
            return obs.received[i + 1:]
    return []


def methods_after(obs: Observation, name: str, channel: int | None = None) -> list[Any]:
    return after(obs, lambda f: isinstance(f, MethodFrame) and f.method.NAME == name
                 and (channel is None or f.channel == channel))


def unmet(what: str, obs: Observation) -> NoReturn:
    """The client never reached the case's starting point (the workload did not do what the
    case needs): the case cannot decide -- an error, never a verdict on the client."""
    raise PeerError(f"{what} did not happen; observed {obs.describe()}")


def stopped_on_open(p: Play) -> tuple[Observation, int]:
    """Answers the client's first channel.open with open-ok and, at once, channel.flow(active=false),
    before the workload can send content on it (other channels get the default answer); serves
    until the client's flow-ok (or QUICK). Returns what was seen and the stopped channel."""
    stopped: list[int] = []

    def open_stopped(frame: MethodFrame) -> bool:
        if stopped:
            return None  # type: ignore[return-value]  # other channels: the default answer
        p.responder.open_channels.add(frame.channel)
        p.peer.send(MethodFrame(frame.channel, spec.ChannelOpenOk()), MethodFrame(frame.channel, spec.ChannelFlow(False)))
        stopped.append(frame.channel)
        return False

    p.responder.on("channel.open", open_stopped)
    answer = p.serve(QUICK, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "channel.flow-ok")
    if not stopped:
        unmet("channel.open", answer)
    return answer, stopped[0]


def handshake_goes_on(ctx: Context, properties: dict[str, Any], expected: str, guideline: str = "") -> None:
    """Offers the connect workload a connection.start carrying ``properties``, and records whether
    the handshake went on (start-ok, tune-ok and open followed); then lets the workload end."""
    p = play(ctx, "connect")
    try:
        p.handshake(properties=properties)
        ok, observed = True, "start-ok, tune-ok and open followed"
    except UnexpectedReply as exc:
        ok, observed = False, str(exc)
    ctx.record(ok, guideline=guideline, expected=expected, observed=observed)
    if ok:
        p.serve()
    p.finish()


def closes_silently_on(ctx: Context, upto: str, *frames: Any) -> None:
    """Takes the connect workload's handshake up to ``upto`` (header: the client's protocol header
    read), sends ``frames`` in place of what comes next, and checks that the client closes the
    socket without sending anything -- its answer to a bad peer before the connection is open."""
    p = play(ctx, "connect")
    p.handshake(upto=upto)
    p.peer.send(*frames)
    obs = p.serve(QUICK * 2)
    check(ctx, obs, SilentClose())
    p.finish()
