"""Raw-socket peers: send any bytes, read with deadlines, observe how connections end."""
from amqpspec.peer.base import Closed, DeadlineExceeded, Link, PeerError

__all__ = ["Closed", "DeadlineExceeded", "Link", "PeerError"]
