"""The client's answer to something it must refuse on a link: what the message-size and
annotation cases both wait for, and the terminus cases' judgement of a receiving link the
client must leave."""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation, performative_name

from ._client import QUICK, client_closed, describe_frames, named, unmet


def serve_until_detach(p: Any, channel: int, handle: int) -> tuple[Observation, list[Any]]:
    """Serves until the client detaches, ends or closes; returns the observation and the
    client's detaches of ``handle`` on ``channel``."""
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "end", "close"))
    return obs, [f for f in obs.received if performative_name(f) == "detach" and f.channel == channel
                 and int(f.performative.handle) == handle]


def await_receiving_attach(p: Any) -> tuple[Observation, Any]:
    """Serves until the client detaches, ends or closes (or 2 x QUICK); returns what was seen and
    the client's first attach of a receiving link (the case errs when there is none)."""
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "end", "close"))
    attaches = [f for f in named(obs.received, "attach") if bool(f.performative.role)]
    if not attaches:
        unmet("a receiving link's attach from the client", obs)
    return obs, attaches[0]


def record_left(ctx: Context, p: Any, obs: Observation, attach: Any) -> None:
    """Judges that the client left the link of ``attach``: a detach of its handle, or an end or
    close, in ``obs``; then lets the workload end."""
    handle = int(attach.performative.handle)
    gone = [f for f in obs.received if performative_name(f) in ("end", "close") or
            (performative_name(f) == "detach" and int(f.performative.handle) == handle)]
    ctx.record(bool(gone), expected=f"a detach of handle {handle} (or end or close) within {QUICK * 2:.0f} s",
               observed=describe_frames(gone) if gone else client_closed(obs))
    p.serve()
    p.finish(0.5)
