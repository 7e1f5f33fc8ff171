"""Putting a channel into transactional mode, or skipping the case (0-9-1 helper module).

Transactions are a SHOULD for servers: the cases that need one (tx, publisher confirms) skip on
a broker without them, and ``amqp091/tx.select/select-ok`` checks the answer itself.
"""
from __future__ import annotations

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Peer
from amqpspec.wire.amqp091 import spec

from ._replies import answer

SELECT_WINDOW = 1.0  # a broker with transactions answers tx.select at once


def tx_select(ctx: Context, peer: Peer, ch: int) -> None:
    """tx.select; skips the case when the broker does not answer select-ok (transactions are a
    SHOULD for servers; ``amqp091/tx.select/select-ok`` checks the answer itself)."""
    obs = answer(peer, ch, spec.TxSelect(), "tx.select-ok", window=SELECT_WINDOW)
    if not obs.methods("tx.select-ok", ch):
        ctx.skip(f"tx.select was not answered with select-ok ({obs.describe()}): no transactions to test "
                 "(see amqp091/tx.select/select-ok)")
