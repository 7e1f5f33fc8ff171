"""4.2.7 Heartbeat frames: what counts as traffic, from the client's side.

"If a peer detects no incoming traffic (i.e. received octets) for two heartbeat intervals or
longer, it should close the connection": traffic is any octet, not heartbeat frames only --
a server that keeps delivering but sends no heartbeat frame is alive, and the client keeps
its connection. The other way round: "heartbeats only have to be sent if no non-heartbeat
AMQP traffic is sent for longer than one heartbeat interval" -- what counts is what the
client *sends*: a no-ack consumer that only receives must still heartbeat. Both sentences
are lower-case guidelines; a client that turns heartbeats off in tune-ok (heartbeat 0) has no
interval to keep and the cases are skipped.

"Heartbeats can be sent at any time": a heartbeat frame between connection.start and
connection.tune, before either side agreed on heartbeating, is no fault -- a client that
does not heartbeat yet discards it ("If the peer does not support heartbeating it MUST
discard the heartbeat frame without signalling any error or fault", 4.2.7/3, read for the
time before tuning), and the handshake goes on.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, Skip, case
from amqpspec.client.session import Play, play
from amqpspec.peer.amqp091 import UnexpectedReply
from amqpspec.peer.server091_responder import Consumer, Message
from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame

from ._client import QUICK, error_closes, open_conversation, unmet

DETECT_SILENCE = ("If a peer detects no incoming traffic (i.e. received octets) for two heartbeat intervals or longer, "
                  "it should close the connection without following the Connection.Close/Close-Ok handshaking, and "
                  "log an error.")
SEND_AT_INTERVALS = ("The peer should make a best effort to send heartbeats at specified intervals. Heartbeats can "
                     "be sent at any time. Any sent octet is a valid substitute for a heartbeat, thus heartbeats only "
                     "have to be sent if no non-heartbeat AMQP traffic is sent for longer than one heartbeat interval.")
ANY_TIME = "Heartbeats can be sent at any time."
INTERVAL = 1


def _heartbeat_consumer(ctx: Context, count: int, **options: object) -> tuple[Play, Consumer]:
    """A consume conversation with a 1 s heartbeat, stopped at the client's basic.consume."""
    p = open_conversation(ctx, "consume", count=count, handshake={"heartbeat": INTERVAL}, **options)
    if p.peer.negotiated.heartbeat == 0:
        p.finish(0.2)
        raise Skip("the client turned heartbeats off in tune-ok (heartbeat 0): no interval to keep")
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    return p, consumer


@case("amqp091/4.2.7/client-counts-deliveries-as-traffic", role="client", timeout=12.0,
      title="with a 1 s heartbeat, a server that sends no heartbeat frame but a delivery every 0.4 s for 3.6 s "
            "keeps the client's connection open",
      guideline=DETECT_SILENCE)
def deliveries_are_traffic(ctx: Context) -> None:
    count = 10
    p, consumer = _heartbeat_consumer(ctx, count)
    started = time.monotonic()
    ended = ""
    for n in range(1, count):  # the last delivery lets the workload end on its own
        p.responder.deliver(consumer, Message(b"beat-%d" % n))
        part = p.serve(0.4, heartbeats=False)
        if part.closed or error_closes(part) or part.methods("connection.close"):
            ended = f"after {time.monotonic() - started:.2f} s: " + part.describe().replace("by broker", "by the client")
            break
    if not ended:
        p.responder.deliver(consumer, Message(b"beat-%d" % count))
        p.serve()
    ctx.record(not ended, guideline=DETECT_SILENCE,
               expected=f"the connection kept open while a delivery arrives every 0.4 s ({count - 1} over "
                        f"{0.4 * (count - 1):.1f} s) and no heartbeat frame",
               observed=ended or "the client kept the connection open through the deliveries")
    p.finish()


@case("amqp091/4.2.7/client-heartbeats-while-only-receiving", role="client", timeout=12.0,
      title="with a 1 s heartbeat, a no-ack consumer that receives a delivery every 0.3 s for 3 s still sends "
            "traffic at least every 2 s",
      guideline=SEND_AT_INTERVALS)
def heartbeats_while_receiving(ctx: Context) -> None:
    count = 11
    p, consumer = _heartbeat_consumer(ctx, count, ack="false")
    if not consumer.no_ack:
        unmet("a no-ack consumer (ack=false)", p.serve(0.1))
    arrivals = [time.monotonic()]

    def seen(item: object) -> bool:
        arrivals.append(time.monotonic())
        return False

    beats = 0
    closed = False
    for n in range(1, count):
        p.responder.deliver(consumer, Message(b"in-%d" % n))
        part = p.serve(0.3, stop=seen)
        beats += sum(isinstance(f, HeartbeatFrame) for f in part.received)
        if part.closed:
            closed = True
            break
    arrivals.append(time.monotonic())
    gap = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    if not closed:
        p.responder.deliver(consumer, Message(b"in-%d" % count))
        p.serve()
    ctx.record(gap < 2 * p.peer.negotiated.heartbeat, guideline=SEND_AT_INTERVALS,
               expected=f"no silence of {2 * p.peer.negotiated.heartbeat} s or more from the client while it only receives",
               observed=f"longest silence {gap:.2f} s; {beats} heartbeat(s)" + ("; the client closed the socket" if closed else ""))
    p.finish()


@case("amqp091/4.2.7/client-takes-heartbeat-before-tune", role="client",
      title="a heartbeat frame between connection.start and connection.tune causes no error: the handshake goes on",
      guideline=ANY_TIME)
def heartbeat_before_tune(ctx: Context) -> None:
    p = play(ctx, "connect")
    p.handshake(upto="start-ok")
    p.peer.send(HeartbeatFrame(0))
    try:
        p.handshake()
        ok, observed = True, "tune-ok and open followed"
    except UnexpectedReply as exc:
        ok, observed = False, str(exc)
    ctx.record(ok, guideline=ANY_TIME, expected="the handshake goes on after a heartbeat before connection.tune",
               observed=observed)
    if ok:
        p.serve()
    p.finish()
