"""2.2.4 The connection class: errors before the connection is open.

"There is no hand-shaking for errors on connections that are not fully open. Following
successful protocol header negotiation ... and prior to sending or receiving Open or
Open-Ok, a peer that detects an error MUST close the socket without sending any further
data" (2.2.4/1). The client detects an error when the server skips a step (open-ok in place
of tune), sends a connection method on a channel other than 0, or offers only mechanisms the
client cannot use: it closes the socket, with no connection.close.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import MethodFrame, RawFrame, spec

from ._client import closes_silently_on

BEFORE_OPEN = ("amqp091:2.2.4/1",)


@case("amqp091/2.2.4/client-closes-on-skipped-tune", role="client",
      title="open-ok in place of connection.tune makes the client close the socket without sending anything",
      clauses=BEFORE_OPEN)
def skipped_tune(ctx: Context) -> None:
    closes_silently_on(ctx, "start-ok", MethodFrame(0, spec.ConnectionOpenOk()))


@case("amqp091/2.2.4/client-closes-on-tune-on-channel-1", role="client",
      title="connection.tune on channel 1 makes the client close the socket without sending anything",
      clauses=BEFORE_OPEN)
def tune_on_channel_one(ctx: Context) -> None:
    closes_silently_on(ctx, "start-ok", MethodFrame(1, spec.ConnectionTune(2047, 131072, 0)))


@case("amqp091/2.2.4/client-closes-on-no-usable-mechanism", role="client",
      title="a connection.start offering only an unknown SASL mechanism makes the client close the socket silently",
      clauses=BEFORE_OPEN)
def no_usable_mechanism(ctx: Context) -> None:
    closes_silently_on(ctx, "header", MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "amqpspec"},
                                                                     b"X-AMQPSPEC-UNKNOWN", b"en_US")))


@case("amqp091/2.2.4/client-closes-on-unknown-frame-before-open", role="client",
      title="a frame of undefined type 9 during negotiation makes the client close the socket without sending anything",
      clauses=BEFORE_OPEN + ("amqp091:4.2.3/2",))
def unknown_frame_before_open(ctx: Context) -> None:
    closes_silently_on(ctx, "start-ok", RawFrame(0, type=9, data=b"amqpspec"),
                       MethodFrame(0, spec.ConnectionTune(2047, 131072, 0)))
