"""The client's answer to something it must refuse on a link: what the message-size and
annotation cases both wait for."""
from __future__ import annotations

from typing import Any

from amqpspec.peer.amqp10 import Observation, performative_name

from ._client import QUICK


def serve_until_detach(p: Any, channel: int, handle: int) -> tuple[Observation, list[Any]]:
    """Serves until the client detaches, ends or closes; returns the observation and the
    client's detaches of ``handle`` on ``channel``."""
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) in ("detach", "end", "close"))
    return obs, [f for f in obs.received if performative_name(f) == "detach" and f.channel == channel
                 and int(f.performative.handle) == handle]
