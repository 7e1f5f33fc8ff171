"""What the cases of RabbitMQ's server-sent extensions share: the capability a client must
announce before the server may send it the method."""
from __future__ import annotations

from amqpspec.case import Skip
from amqpspec.client.session import Play
from amqpspec.wire.amqp091 import to_plain

__all__ = ["announced"]


def announced(p: Play, capability: str) -> None:
    """Skips the case (after letting the client go) unless the client's start-ok announced
    ``capabilities.<capability>``: a server must not send an unannounced extension method."""
    props = to_plain(p.peer.negotiated.start_ok.client_properties or {})
    caps = props.get("capabilities") if isinstance(props, dict) else None
    if not (isinstance(caps, dict) and caps.get(capability)):
        p.finish(0.3)
        raise Skip(f"the client does not announce capabilities.{capability}: the server must not send it")
