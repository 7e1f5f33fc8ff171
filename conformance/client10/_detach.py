"""The client's answer to something it must refuse on a link: what the message-size and
annotation cases both wait for, the receiving link whose max-message-size a case exceeds, and
the terminus cases' judgement of a receiving link the client must leave."""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, Skip
from amqpspec.peer.amqp10 import Observation, performative_name

from ._client import QUICK, await_sender, client_closed, describe_frames, named, open_conversation, unmet

LARGEST = 1 << 20   # past this, too much to send in a quick case


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


def limited_receiver(ctx: Context, credit: int, unprovoked: str) -> tuple[Any, Any, int]:
    """The receive workload with ``credit``, its receiving link attached with a max-message-size
    small enough to exceed here; returns the play, our Sender and the limit. Skipped (saying there
    is ``unprovoked``) when the link announces none, or one too large to send past in a quick case."""
    p = open_conversation(ctx, "receive", count=1, credit=credit, timeout=6)
    _, snd = await_sender(p)
    limit = int(getattr(snd.remote, "max_message_size", None) or 0) if snd.remote is not None else 0
    if not limit or limit > LARGEST:
        p.finish(0.2)
        raise Skip(f"the client's receiving link announces max-message-size {limit or 'none'}: {unprovoked}")
    return p, snd, limit
