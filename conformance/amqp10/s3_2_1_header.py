"""Spec 3.2.1 Header (messaging): how an intermediary that implements priority levels orders messages.

3.2.1 leaves the NUMBER of distinct priority levels n to the intermediary, but not their shape:
for n < 10, priorities 0..(5 - ceiling(n/2)) are one level, the lowest, priorities
(4 + floor(n/2)) and above are one level, the highest, and each priority between is a level of
its own; for n >= 10, priorities 0..(n - 1) are distinct. So a node's delivery order is one of
ten orders at most: the messages sorted by effective priority, highest first, in arrival order
within a level (n = 1 is plain FIFO: the broker implements no priorities, and the case skips).

Black-box: we fill a node with the same priorities sent up then down (0..9, then 9..0), before
any receiver is attached, and read them back. Sending each priority twice, in both directions,
makes every n give a different order (FIFO included), so the order read back names n -- or
matches none, which breaks the text.

The header's durable field: "Durable messages MUST NOT be lost even if an intermediary is
unexpectedly terminated and restarted." AMQP cannot ask for a restart, so that case runs only
with a ``--restart-command`` (skipped otherwise, saying so) and is ``exclusive``: the runner
runs it alone, after the others, since the restart ends every connection.
"""
from __future__ import annotations

import math

from amqpspec.case import NO_RESTART_COMMAND, Context, case
from amqpspec.peer.session10 import SetupError, fetch, publish
from amqpspec.wire.amqp10 import Message, UByte, spec

from ._common import address, token

RESTART_TIMEOUT = 150.0  # two connections and a broker restart (RabbitMQ takes tens of seconds)
PRIORITIES = list(range(10)) + list(range(9, -1, -1))   # up, then down: each priority twice


def effective(priority: int, levels: int) -> int:
    """The effective priority of ``priority`` at an intermediary with ``levels`` distinct levels (3.2.1)."""
    if levels >= 10:
        return min(priority, levels - 1)
    lowest, highest = 5 - math.ceil(levels / 2), 4 + levels // 2
    return min(max(priority, lowest), highest)


def order_for(levels: int, sent: list[int]) -> list[int]:
    """The indexes of ``sent`` in the order such an intermediary delivers them: by effective priority,
    highest first, then in arrival order."""
    return sorted(range(len(sent)), key=lambda i: (-effective(sent[i], levels), i))


def levels_matching(order: list[int], sent: list[int]) -> list[int]:
    """The numbers of levels (1..10) whose delivery order is ``order``."""
    return [n for n in range(1, 11) if order_for(n, sent) == order]


@case("amqp10/3.2.1/priority-levels", title="a node orders messages by priority in one of the ways 3.2.1 admits",
      clauses=("amqp10:3.2.1/5", "amqp10:3.2.1/6", "amqp10:3.2.1/7", "amqp10:3.2.1/8", "amqp10:3.2.1/9"))
def priority_levels(ctx: Context) -> None:
    """Fills a fresh node with 20 messages, header priority 0..9 then 9..0 (body: the index sent),
    all accepted before a receiver attaches, then reads them back with credit 20. Passes when the
    order is that of n distinct levels (2 <= n <= 10) as 3.2.1 defines them; skipped when it is
    plain arrival order (no priority levels implemented); fails when it matches no n."""
    addr = address(ctx, "prio")
    publish(ctx, addr, *[Message(header=spec.Header(priority=UByte(p)), body=str(i).encode())
                         for i, p in enumerate(PRIORITIES)])
    got = fetch(ctx, addr, count=len(PRIORITIES))
    if len(got) < len(PRIORITIES):
        raise SetupError(f"{len(got)} of {len(PRIORITIES)} messages came back from {addr}")
    try:
        order = [int(d.text()) for d in got]
    except ValueError as exc:
        raise SetupError(f"a message came back with another body: {exc}") from exc
    shown = " ".join(f"p{PRIORITIES[i]}" for i in order)
    matching = levels_matching(order, PRIORITIES)
    if matching == [1]:
        ctx.skip(f"the node delivers in arrival order (one priority level: {shown})")
    ctx.record(bool(matching),
               expected="the order of n distinct levels for some n in 2..10: 0..(5-ceil(n/2)) lowest, "
                        "(4+floor(n/2)).. highest, the priorities between distinct; arrival order within a level",
               observed=f"delivered {shown}" + (f" (n = {matching[0]})" if matching else " (no n gives it)"))


@case("amqp10/3.2.1/durable-message-survives-restart",
      title="a durable message accepted by a node is still there after the broker restarts",
      clauses=("amqp10:3.2.1/2",), timeout=RESTART_TIMEOUT, exclusive=True)
def durable_survives_restart(ctx: Context) -> None:
    """Puts a message with header durable=true into a fresh node (the broker accepts it: the node
    holds it), restarts the broker with the run's restart command, and reads the node on a new
    connection: the durable message must come back, body unchanged. Skipped without
    ``--restart-command``; a broker keeping its messages in memory only fails."""
    if not ctx.restart_command:
        ctx.skip(NO_RESTART_COMMAND)
    addr = address(ctx, "durable")
    body = token(ctx, "durable")
    publish(ctx, addr, Message(header=spec.Header(durable=True), body=body.encode()))
    ctx.restart_broker()
    got = fetch(ctx, addr, count=1)
    ctx.record(len(got) == 1 and got[0].text() == body,
               expected=f"the durable message {body!r} delivered from {addr} after the restart",
               observed=(f"delivered {got[0].text()!r}" if got else "no message within the wait"))
