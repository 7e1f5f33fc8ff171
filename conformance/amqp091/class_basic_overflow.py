"""basic/02: "The server MUST NOT discard a persistent basic message in case of a queue overflow."

The specification defines no way to make a queue overflow, but brokers that offer a length limit
as a queue argument (``x-max-length``, RabbitMQ's and others') let a client set one itself. The
case sets a limit of one message and first shows that the broker applies it, with transient
messages (which basic/05 lets a server discard on overflow): where two transient messages both
stay, the limit is not applied and no overflow can be provoked, so the case is skipped, as it is
where the broker refuses the argument. Then two persistent messages overflow the limit: both must
stay in the queue, or the overflowing publish be refused visibly (a channel exception, the
publisher told). A broker that drops a persistent message -- the oldest (RabbitMQ's default
"drop-head") or the new one without a word -- fails. The text makes no exception for a limit the
client asked for.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Peer
from amqpspec.verify import StaysOpen
from amqpspec.wire.amqp091 import MethodFrame, spec

from ._content import get_all, shown
from ._model import content_frames, unique
from ._replies import answer, react

LIMIT = {"x-max-length": 1}


def publish_two(ctx: Context, peer: Peer, ch: int, queue: str, mode: int, label: str) -> tuple[list[bytes], bool]:
    """Publishes two messages with ``delivery_mode``; returns their bodies and whether the channel
    stayed open (a refused overflowing publish closes it)."""
    sent = [f"{label}-{i}-{ctx.rng.randbytes(4).hex()}".encode() for i in (1, 2)]
    for b in sent:
        peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=queue)),
                  *content_frames(ch, b, spec.BasicProperties(delivery_mode=mode)))
    obs = react(peer, ch)
    return sent, StaysOpen().accepts(obs)


@case("amqp091/basic/persistent-not-discarded-on-overflow",
      title="a queue limited to one message by x-max-length keeps both persistent messages published to it",
      clauses=("amqp091:basic/02",))
def persistent_kept(ctx: Context) -> None:
    """Declares a durable queue with x-max-length 1 (skipped if refused), shows with two transient
    messages that the limit applies (skipped if not), purges, publishes two persistent messages
    (delivery-mode 2), and gets everything: both persistent messages must be there, unless the
    second publish was refused with a channel exception. Fails a broker that drops either."""
    peer = ctx.connect()
    ch = peer.open_channel()
    queue = unique(ctx)
    ctx.will_delete("queue", queue)
    declared = answer(peer, ch, spec.QueueDeclare(queue=queue, durable=True, arguments=LIMIT))
    if not declared.methods("queue.declare-ok", ch):
        ctx.skip(f"the broker does not offer x-max-length: queue.declare with it got {declared.describe()}")
    _, open_ = publish_two(ctx, peer, ch, queue, 1, "transient")
    if not open_:
        ch = peer.open_channel()
    kept = get_all(peer, ch, queue)
    if len(kept) >= 2:
        ctx.skip(f"x-max-length 1 is accepted but not applied (two transient messages both stayed): no overflow "
                 "can be provoked")
    sent, open_ = publish_two(ctx, peer, ch, queue, 2, "persistent")
    if not open_:  # the overflowing publish was refused: the publisher knows, nothing was discarded unseen
        ch = peer.open_channel()
    got = [m.body for m in get_all(peer, ch, queue)]
    ok = got == sent or (not open_ and got == sent[:1])
    ctx.record(ok, expected=f"both persistent messages {shown(sent)} kept, or the second publish refused with a "
                            "channel exception and the first kept",
               observed=f"queue holds {shown(got)}" + ("" if open_ else " after a channel exception"))
