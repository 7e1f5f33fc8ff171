"""An aborted delivery followed by a whole one, at the client as receiver: what the
2.6.14 abort case and the 2.7.5 aborted-with-more case both do before judging."""
from __future__ import annotations

from amqpspec.case import Context
from amqpspec.peer.amqp10 import Observation
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._client import await_sender, needs_driver, open_conversation, unmet


def abort_then_second(ctx: Context, *, more: bool) -> tuple[list[str], Observation]:
    """Splits a 3000-octet delivery, sends its first frame then a transfer with aborted=true
    (and ``more`` as given), then the message 'second'; returns the bodies the application
    saw, in order, with the observation."""
    p = open_conversation(ctx, "receive", count=1, credit=5)
    _, snd = await_sender(p, credit=2)
    frames = snd.transfer_frames("aborted-" + "a" * 3000, max_frame_size=1024)
    if len(frames) < 2:
        unmet("a delivery split in frames")
    first = frames[0]
    abort = AMQPFrame(first.channel, spec.Transfer(handle=snd.handle, aborted=True, more=more))
    p.peer.send(first, abort)
    # two transfer frames of the aborted delivery went out, not all of them
    snd.session.next_outgoing_id = (snd.session.next_outgoing_id - len(frames) + 2) % (1 << 32)
    snd.send("second")
    obs = p.serve()
    out = needs_driver(p)
    return [str(e.get("body", "")) for e in out.named("delivered")], obs
