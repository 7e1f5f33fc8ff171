"""4.2.7 Heartbeat frames, from the client's side.

Binding a client: "Heartbeat frames MUST have a channel number of zero" (4.2.7/1); "A peer
that receives an invalid heartbeat frame MUST raise a connection exception with reply code
501" (4.2.7/2) -- while 4.2.3/9 names 503 for any connection-class frame on a non-zero
channel: a heartbeat on channel 1 is answered by either code; "If the peer does not support
heartbeating it MUST discard the heartbeat frame without signalling any error or fault"
(4.2.7/3). The timing sentences are lower-case guidelines: "The peer should make a best
effort to send heartbeats at specified intervals", and "If a peer detects no incoming
traffic ... for two heartbeat intervals or longer, it should close the connection".
A client may turn heartbeats off in tune-ok (heartbeat 0, "the client does not want a
heartbeat"): the timing cases then do not apply.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, Skip, case
from amqpspec.verify import ConnectionException
from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame, spec

from amqpspec.client.session import play

from ._client import QUICK, check, describe_errors, error_closes, open_conversation, unmet

SEND_AT_INTERVALS = ("The peer should make a best effort to send heartbeats at specified intervals. Heartbeats can "
                     "be sent at any time. Any sent octet is a valid substitute for a heartbeat, thus heartbeats only "
                     "have to be sent if no non-heartbeat AMQP traffic is sent for longer than one heartbeat interval.")
DETECT_SILENCE = ("If a peer detects no incoming traffic (i.e. received octets) for two heartbeat intervals or longer, "
                  "it should close the connection without following the Connection.Close/Close-Ok handshaking, and "
                  "log an error.")
DURING_CLOSE = ("Heartbeating should continue until the connection socket is closed, including during and after "
                "Connection.Close/Close-Ok handshaking.")
FROM_TUNE = ("The client should start sending heartbeats after receiving a Connection.Tune method, and start "
             "monitoring heartbeats after receiving Connection.Open.")
INTERVAL = 1


def _heartbeating(ctx: Context, **options: object):  # type: ignore[no-untyped-def]
    p = open_conversation(ctx, "idle", handshake={"heartbeat": INTERVAL}, **options)
    if p.peer.negotiated.heartbeat == 0:
        p.finish(0.2)
        raise Skip("the client turned heartbeats off in tune-ok (heartbeat 0): no interval to keep")
    return p


@case("amqp091/4.2.7/client-sends-heartbeats", role="client", timeout=12.0,
      title="with a 1 s heartbeat negotiated the idle client sends traffic at least every 2 s, heartbeats on channel 0",
      clauses=("amqp091:4.2.7/1",))
def sends_heartbeats(ctx: Context) -> None:
    p = _heartbeating(ctx, timeout=5)
    arrivals: list[float] = [time.monotonic()]

    def seen(item: object) -> bool:
        arrivals.append(time.monotonic())
        return False

    obs = p.serve(4.0, stop=seen)
    arrivals.append(time.monotonic())
    gap = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    ctx.record(gap < 2 * p.peer.negotiated.heartbeat, guideline=SEND_AT_INTERVALS,
               what="traffic at least once every two intervals",
               expected=f"no silence of {2 * p.peer.negotiated.heartbeat} s or more from the client",
               observed=f"longest silence {gap:.2f} s; {sum(isinstance(f, HeartbeatFrame) for f in obs.received)} heartbeat(s)")
    beats = [f for f in obs.received if isinstance(f, HeartbeatFrame)]
    wrong = [f for f in beats if f.channel != 0]
    ctx.record(not wrong, what="heartbeats on channel 0", expected="every heartbeat frame on channel 0",
               observed=f"{len(beats)} heartbeat(s), {len(wrong)} on another channel")
    p.finish()


@case("amqp091/4.2.7/client-detects-silent-server", role="client", timeout=12.0,
      title="with a 1 s heartbeat and a server that sends nothing, the client closes the connection within about two intervals",
      guideline=DETECT_SILENCE)
def detects_silence(ctx: Context) -> None:
    p = _heartbeating(ctx, timeout=8)
    started = time.monotonic()
    limit = 2 * p.peer.negotiated.heartbeat + 2.0  # two intervals, and slack for a busy machine
    obs = p.serve(limit + 0.5, heartbeats=False)
    took = time.monotonic() - started
    ctx.record(obs.closed and took <= limit, expected=f"the client closes the socket within {limit:g} s of silence",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/4.2.7/client-discards-unnegotiated-heartbeat", role="client",
      title="heartbeats from a server when none were negotiated cause no error",
      clauses=("amqp091:4.2.7/3",))
def discards_heartbeats(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=3, handshake={"heartbeat": 0})
    deadline = time.monotonic() + 2.5
    obs_parts = []
    while time.monotonic() < deadline:
        p.peer.send(HeartbeatFrame(0))
        part = p.serve(0.5, heartbeats=False)
        obs_parts.append(part)
        if part.end != "open":
            break
    errors = [f for part in obs_parts for f in error_closes(part)]
    ctx.record(not errors, expected="no connection or channel exception for the heartbeats",
               observed=describe_errors(errors))
    p.serve()
    p.finish()


@case("amqp091/4.2.7/client-rejects-heartbeat-on-channel-1", role="client",
      title="a heartbeat frame on channel 1 is a connection exception (501 by 4.2.7, 503 by 4.2.3)",
      clauses=("amqp091:4.2.7/2", "amqp091:4.2.3/9"))
def heartbeat_channel_one(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=4)
    p.peer.send(HeartbeatFrame(1))
    obs = p.serve(QUICK * 1.5)
    check(ctx, obs, ConnectionException(501, 503))
    p.finish()


@case("amqp091/4.2.7/client-rejects-heartbeat-with-payload", role="client",
      title="a heartbeat frame carrying payload octets is refused with 501",
      clauses=("amqp091:4.2.7/2",))
def heartbeat_payload(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=4)
    p.peer.send(HeartbeatFrame(0, b"amqpspec"))
    obs = p.serve(QUICK * 1.5)
    check(ctx, obs, ConnectionException(501))
    p.finish()


@case("amqp091/4.2.7/client-heartbeats-during-close", role="client", timeout=12.0,
      title="with a 1 s heartbeat, the client keeps heartbeating while its connection.close waits 3 s for close-ok",
      guideline=DURING_CLOSE)
def heartbeats_during_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect", handshake={"heartbeat": INTERVAL})
    if p.peer.negotiated.heartbeat == 0:
        p.finish(0.2)
        raise Skip("the client turned heartbeats off in tune-ok (heartbeat 0): no interval to keep")
    held = {"at": 0.0}

    def hold_close(frame: object) -> bool:
        held["at"] = time.monotonic()
        return False  # no close-ok yet

    p.responder.on("connection.close", hold_close)
    arrivals: list[float] = []
    first = p.serve(4.0, stop=lambda f: bool(held["at"]))
    if not held["at"]:
        unmet("connection.close from the client", first)

    def seen(item: object) -> bool:
        arrivals.append(time.monotonic())
        return False

    obs = p.serve(3.0, heartbeats=True, stop=seen)
    gaps = [b - a for a, b in zip([held["at"]] + arrivals, arrivals + [time.monotonic()])]
    if obs.closed:
        gaps = gaps[:-1] or [0.0]  # a socket it closed itself ends the watch: no silence after that counts
    gap = max(gaps)
    ctx.record(gap < 2 * p.peer.negotiated.heartbeat,
               expected=f"traffic from the client at least every {2 * p.peer.negotiated.heartbeat} s while close-ok is held back (until it closes the socket)",
               observed=f"longest silence {gap:.2f} s; " + obs.describe().replace("by broker", "by the client"),
               guideline=DURING_CLOSE)
    p.peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
    p.finish()


@case("amqp091/4.2.7/client-heartbeats-before-open-ok", role="client", timeout=12.0,
      title="with a 1 s heartbeat, the client heartbeats while open-ok is held back 3 s (it starts after connection.tune)",
      guideline=FROM_TUNE)
def heartbeats_before_open_ok(ctx: Context) -> None:
    p = play(ctx, "connect")
    n = p.handshake(upto="tune-ok", heartbeat=INTERVAL)
    if n.heartbeat == 0:
        p.finish(0.2)
        raise Skip("the client turned heartbeats off in tune-ok (heartbeat 0): no interval to keep")
    p.peer.negotiated.open = p.peer.expect("connection.open", timeout=3.0).method  # type: ignore[assignment]
    held = time.monotonic()
    arrivals = [held]
    closed = False
    while time.monotonic() - held < 3.0:
        if time.monotonic() - p.peer.last_sent >= n.heartbeat / 2:
            p.peer.send(HeartbeatFrame(0))  # the server heartbeats from tune-ok on (4.2.7)
        item = p.peer.recv(0.2)
        if item is None:
            continue
        if not hasattr(item, "channel"):
            closed = True
            break
        arrivals.append(time.monotonic())
    arrivals.append(time.monotonic())
    gap = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    ctx.record(gap < 2 * n.heartbeat, expected=f"traffic from the client at least every {2 * n.heartbeat} s before open-ok",
               observed=f"longest silence {gap:.2f} s" + ("; the client closed the socket" if closed else ""),
               guideline=FROM_TUNE)
    if not closed:
        p.peer.send(MethodFrame(0, spec.ConnectionOpenOk()))
        p.peer.negotiated.opened, p.peer.stage = True, "open-ok"
        p.serve()
    p.finish()
