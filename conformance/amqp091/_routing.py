"""Routing tables: which of a case's messages each bound queue receives (0-9-1 helper module).

Shared by the bindings (3.1.5), topic (3.1.3.3) and headers (3.1.3.4) modules: a case gives the
bindings of each queue and the messages to publish, and compares the indexes each queue got
with the ones the exchange type's rules route to it.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Peer
from amqpspec.wire.amqp091 import spec

from ._common import with_channel
from ._model import bind, bodies, declare_queue, fence, publish, unique
from ._queue import drain
from ._replies import attempt, ok_or_close


# The exchanges the spec has every broker pre-declare (3.1.3.1; 3.1.3.3 and 3.1.3.4 when the type is
# implemented): routing cases use them rather than exchanges of their own, so that they do not
# depend on exchange.declare / exchange.delete (the exchange class is checked elsewhere; garagemq,
# for one, never answers exchange.delete and stops serving when several run at once). They are
# shared with other cases: every message of a case carries a token of the case in its body, and
# only those are counted. A broker without the exchange skips (its absence is 3.1.3.x's matter).
PREDECLARED = {"direct": "amq.direct", "topic": "amq.topic", "headers": "amq.match"}


def routing_exchange(ctx: Context, peer: Peer, ch: int, type: str) -> str:
    """The pre-declared exchange of ``type``; skips the case when the broker does not have it."""
    name = PREDECLARED[type]
    obs = attempt(peer, ch, spec.ExchangeDeclare(exchange=name, type=type, passive=True))
    if not obs.methods("exchange.declare-ok", ch):
        ctx.skip(f"no pre-declared {type} exchange {name} ({ok_or_close(obs, 'exchange.declare-ok', ch)}): "
                 f"the {type} exchange type is not implemented, or 3.1.3 is not met (checked elsewhere)")
    return name


Binding = tuple[str, Any]          # (routing key or pattern, arguments table)
Publication = tuple[str, Any]      # (routing key, headers table or None)


def routing_table(ctx: Context, type: str, bindings: dict[str, list[Binding]],
                  publications: list[Publication]) -> dict[str, list[int]]:
    """Binds one exclusive queue per label to the exchange of ``type`` with the label's bindings,
    publishes each publication (body: a token of the case and its index) and returns, per label,
    the indexes of this case's messages its queue received (a repeat shows a duplicate)."""
    peer, ch = with_channel(ctx)
    x = routing_exchange(ctx, peer, ch, type)
    token = unique(ctx, "t")
    queues = {}
    for label, binds in bindings.items():
        q = queues[label] = declare_queue(ctx, peer, ch, exclusive=True)
        for key, args in binds:
            bind(peer, ch, q, x, key, args)
    for i, (key, headers) in enumerate(publications):
        props = spec.BasicProperties(headers=headers) if headers is not None else None
        publish(peer, ch, x, key, f"{token}:{i}".encode(), properties=props)
    fence(peer, ch)
    mine = token.encode() + b":"
    return {label: [int(b[len(mine):]) for b in bodies(drain(peer, ch, q, limit=4096)) if b.startswith(mine)]
            for label, q in queues.items()}


def check_routes(ctx: Context, got: dict[str, list[int]], want: dict[str, list[int]],
                 publications: list[Publication], **kw: Any) -> bool:
    """One check: each queue received exactly the expected messages, each once."""
    def show(table: dict[str, list[int]]) -> str:
        return "; ".join(f"{label} <- {[publications[i][0] if publications[i][1] is None else publications[i][1] for i in idx]}"
                         for label, idx in table.items())
    ok = all(sorted(got.get(label, [])) == sorted(idx) for label, idx in want.items())
    return ctx.record(ok, expected=show(want), observed=show(got), **kw)
