"""The content a client publishes: its delivery-mode.

The Basic content's delivery-mode property is "non-persistent (1) or persistent (2)"
(basic properties): an application that asks for persistent messages (the driver contract's
``persistent=true``) gets content headers with delivery-mode 2 -- a header without it, or with
1, makes the broker treat the message as transient, and it is lost on a restart.
"""
from __future__ import annotations

from amqpspec.case import Context, case

from ._client import open_conversation, unmet

DELIVERY_MODE = "non-persistent (1) or persistent (2)"


def _persistent(ctx: Context, workload: str) -> None:
    p = open_conversation(ctx, workload, count=2, persistent=True)
    obs = p.serve()
    if not p.responder.contents:
        unmet("a published content", obs)
    modes = [getattr(c.header.properties, "delivery_mode", None) for c in p.responder.contents if c.header]
    ctx.record(bool(modes) and all(m == 2 for m in modes), guideline=DELIVERY_MODE,
               expected="delivery-mode 2 in the header of every content published as persistent",
               observed="delivery-mode " + ", ".join("absent" if m is None else str(m) for m in modes))
    p.finish()


@case("amqp091/basic.delivery-mode/client-marks-persistent-publishes", role="client",
      title="messages published as persistent carry delivery-mode 2",
      guideline=DELIVERY_MODE)
def marks_persistent(ctx: Context) -> None:
    _persistent(ctx, "publish")


@case("amqp091/basic.delivery-mode/client-marks-persistent-transacted-publishes", role="client",
      title="messages published as persistent in a transaction carry delivery-mode 2",
      guideline=DELIVERY_MODE)
def marks_persistent_tx(ctx: Context) -> None:
    _persistent(ctx, "tx")
