"""A scripted AMQP 1.0 receiver for amqp10/2.6.7/transfer-beyond-credit: it grants a small link-credit
to our sending link, accepts (settled disposition) every delivery within that credit, and reacts to
a delivery beyond it in one chosen way -- the two reactions 2.6.7/10 allows, and three it does not.

Not a broker: it answers open, begin, attach and close, enough for that case to reach the excess
transfer, so the case's verdict for each reaction is known exactly. Run it with
``hostile.HostileServer(excess_broker(reaction))`` and the credential-less ``url_10`` URL.
"""
from __future__ import annotations

import socket
from typing import Callable

from amqpspec.peer.amqp10 import performative_name
from amqpspec.wire.amqp10 import AMQPFrame, spec
from tests.support.hostile_fuzz10 import frames_after_header, url_10

CREDIT = 2
REACTIONS = ("accept", "detach-limit", "drop", "detach-other", "close")   # the first two are what the text allows


def _reaction(reaction: str, channel: int, transfer: spec.Transfer) -> list[AMQPFrame]:
    """The frames answering the excess transfer."""
    if reaction == "accept":
        return [AMQPFrame(channel, spec.Disposition(role=spec.Role.RECEIVER, first=transfer.delivery_id, settled=True,
                                                    state=spec.Accepted()))]
    if reaction in ("detach-limit", "detach-other"):
        condition = spec.LinkError.TRANSFER_LIMIT_EXCEEDED if reaction == "detach-limit" else spec.AmqpError.INTERNAL_ERROR
        return [AMQPFrame(channel, spec.Detach(handle=transfer.handle, closed=True,
                                               error=spec.Error(condition=condition, description="excess transfer")))]
    if reaction == "close":
        return [AMQPFrame(0, spec.Close(error=spec.Error(condition=spec.AmqpError.INTERNAL_ERROR,
                                                         description="excess transfer")))]
    return []   # "drop": the excess delivery is neither settled nor refused


def excess_broker(reaction: str) -> Callable[[socket.socket], None]:
    """A ``HostileServer`` behaviour answering the excess transfer by ``reaction`` (one of REACTIONS)."""
    assert reaction in REACTIONS, reaction

    def run(conn: socket.socket) -> None:
        received = 0
        for channel, item in frames_after_header(conn):
            name = performative_name(item) if item is not None and not isinstance(item, Exception) else None
            perf = getattr(item, "performative", None)
            out: list[AMQPFrame] = []
            if name == "open":
                out.append(AMQPFrame(0, spec.Open(container_id="amqpspec-excess", max_frame_size=65536)))
            elif name == "begin":
                out.append(AMQPFrame(channel, spec.Begin(remote_channel=channel, next_outgoing_id=0,
                                                         incoming_window=2048, outgoing_window=2048)))
            elif name == "attach" and bool(perf.role):   # our receiving link (role receiver): nothing to give
                out.append(AMQPFrame(channel, spec.Attach(name=perf.name, handle=perf.handle, role=spec.Role.SENDER,
                                                          source=perf.source, target=perf.target,
                                                          initial_delivery_count=0)))
            elif name == "attach":
                out.append(AMQPFrame(channel, spec.Attach(name=perf.name, handle=perf.handle, role=spec.Role.RECEIVER,
                                                          source=perf.source, target=perf.target)))
                out.append(AMQPFrame(channel, spec.Flow(next_incoming_id=0, incoming_window=2048, next_outgoing_id=0,
                                                        outgoing_window=2048, handle=perf.handle, delivery_count=0,
                                                        link_credit=CREDIT)))
            elif name == "transfer":
                received += 1
                if received <= CREDIT:
                    out.append(AMQPFrame(channel, spec.Disposition(role=spec.Role.RECEIVER, first=perf.delivery_id,
                                                                   settled=True, state=spec.Accepted())))
                else:
                    out += _reaction(reaction, channel, perf)
            elif name == "end":
                out.append(AMQPFrame(channel, spec.End()))
            elif name == "close":
                conn.sendall(AMQPFrame(0, spec.Close()).encode())
                return
            if out:
                conn.sendall(b"".join(f.encode() for f in out))
    return run


__all__ = ["CREDIT", "REACTIONS", "excess_broker", "url_10"]
