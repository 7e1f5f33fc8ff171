"""3.2.1 and the reply codes: synchronous requests, and methods no client expects.

"The sending peer SHOULD wait for the specific reply method, but MAY implement this
asynchronously" (3.2.1/2): a client that sends basic.qos waits for qos-ok before its next
method on that channel -- we hold qos-ok back for a second and look whether anything came
meanwhile (a pipelining client is a warning, the text allows it only as a MAY). The same with
channel.open held back: nothing on the new channel before its open-ok; and with tx.select,
tx.commit and confirm.select (a synchronous method of RabbitMQ's, unless no-wait).

A method the client cannot take -- an undefined method id of the connection class, a
connection-class method on channel 1 -- is a frame "that was not expected"
(unexpected-frame, 505), and "The channel number MUST be zero ... for method, header and
body frames that refer to the Connection class", which "A peer that receives a non-zero
channel number for one of these frames MUST signal a connection exception with reply code
503" (4.2.3/8-9).
"""
from __future__ import annotations

import time

from amqpspec.case import Context, case
from amqpspec.verify import AnyClose, ConnectionException
from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame, spec
from amqpspec.wire.amqp091.base import UnknownMethod

from ._client import QUICK, check, open_conversation, unmet

UNEXPECTED = ("The peer sent a frame that was not expected, usually in the context of a content header and body.  "
              "This strongly indicates a fault in the peer's content processing.")
HOLD_S = 1.0


def _hold(p, early: list[str]):  # type: ignore[no-untyped-def]
    """A responder override that holds the reply back HOLD_S seconds, noting in ``early``
    what the client sends on the request's channel meanwhile."""
    def hold(frame: MethodFrame) -> None:
        until = time.monotonic() + HOLD_S
        while time.monotonic() < until:
            item = p.peer.recv(until - time.monotonic())
            if item is None or not hasattr(item, "channel"):
                if item is not None:
                    p.peer.unread(item)
                break
            if isinstance(item, HeartbeatFrame):
                continue
            if getattr(item, "channel", None) == frame.channel:
                early.append(item.summary())
            p.peer.unread(item)
            break
        return None  # then the reply, and what came early is handled in order
    return hold


def _waits_while_held(ctx: Context, p, method: str, reply: str, short: str,  # type: ignore[no-untyped-def]
                      asked: str = "") -> None:
    """Holds the reply to the client's ``method`` back HOLD_S seconds and records whether the
    client sent anything on that channel meanwhile (``reply``/``short``: the reply's full and
    short names in the evidence; ``asked``: what the case waited for, when not just ``method``)."""
    early: list[str] = []
    p.responder.on(method, _hold(p, early))
    obs = p.serve()
    if not obs.methods(method):
        unmet(asked or method, obs)
    ctx.record(not early, expected=f"nothing on the channel for {HOLD_S:g} s while {reply} is held back",
               observed=(f"sent before {short}: " + "; ".join(early)) if early else f"the client waited for {short}")
    p.finish()


@case("amqp091/3.2.1/client-waits-for-qos-ok", role="client",
      title="after basic.qos the client sends nothing more on the channel until qos-ok (held back 1 s)",
      clauses=("amqp091:3.2.1/2",))
def waits_for_reply(ctx: Context) -> None:
    p = open_conversation(ctx, "consume", count=1, prefetch=1, ack=True)
    p.responder.preload("amqpspec-q", ["one"])
    _waits_while_held(ctx, p, "basic.qos", "qos-ok", "qos-ok", asked="basic.qos (prefetch=1)")


@case("amqp091/3.2.1/client-waits-for-channel-open-ok", role="client",
      title="after channel.open the client sends nothing on the channel until open-ok (held back 1 s)",
      clauses=("amqp091:3.2.1/2",))
def waits_for_open_ok(ctx: Context) -> None:
    _waits_while_held(ctx, open_conversation(ctx, "publish", count=1), "channel.open", "channel.open-ok", "open-ok")


@case("amqp091/3.2.1/client-waits-for-tx-select-ok", role="client",
      title="after tx.select the client publishes nothing until select-ok (held back 1 s)",
      clauses=("amqp091:3.2.1/2",))
def waits_for_select_ok(ctx: Context) -> None:
    _waits_while_held(ctx, open_conversation(ctx, "tx", count=2), "tx.select", "tx.select-ok", "select-ok")


@case("amqp091/3.2.1/client-waits-for-tx-commit-ok", role="client",
      title="after tx.commit the client sends nothing more on the channel until commit-ok (held back 1 s)",
      clauses=("amqp091:3.2.1/2",))
def waits_for_commit_ok(ctx: Context) -> None:
    _waits_while_held(ctx, open_conversation(ctx, "tx", count=2), "tx.commit", "tx.commit-ok", "commit-ok")


@case("amqp091/3.2.1/client-waits-for-confirm-select-ok", role="client",
      title="after confirm.select (RabbitMQ's publisher confirms) the client publishes nothing until select-ok "
            "(held back 1 s)",
      clauses=("amqp091:3.2.1/2",))
def waits_for_confirm_select_ok(ctx: Context) -> None:
    _waits_while_held(ctx, open_conversation(ctx, "confirm", count=2), "confirm.select", "confirm.select-ok",
                      "select-ok")


@case("amqp091/4.2.3/client-rejects-connection-method-on-channel-1", role="client",
      title="a connection-class method (connection.blocked) on channel 1 is refused with 503",
      clauses=("amqp091:4.2.3/8", "amqp091:4.2.3/9"))
def connection_method_channel_one(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=4)
    p.peer.send(MethodFrame(1, spec.ConnectionBlocked("amqpspec")))
    obs = p.serve(QUICK * 1.5)
    check(ctx, obs, ConnectionException(503))
    p.finish()


@case("amqp091/4.2.3/client-closes-on-unknown-method", role="client",
      title="an undefined method (connection class, method 99) makes the client end the connection",
      guideline=UNEXPECTED)
def unknown_method(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=4)
    p.peer.send(MethodFrame(0, UnknownMethod(10, 99, b"")))
    obs = p.serve(QUICK * 1.5)
    check(ctx, obs, ConnectionException(503, 505, 540) | AnyClose(), guideline=UNEXPECTED)
    p.finish()
