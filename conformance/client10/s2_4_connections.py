"""2.4 Connections (open, close, idle time-out), from the client's side.

"each peer MUST send an open frame before sending any other frames" (2.4.1/1, 2.7.1/1).
Closing: "Prior to closing a connection, each peer MUST write a close frame" (2.4.3/1) --
whether the client ends the connection itself or answers the server's close; "This frame
MUST be the last thing ever written onto a connection" (2.4.3/2), empty frames included
(2.4.5/8); "implementations SHOULD send it on channel 0" (2.4.3/5).
Idle time-out: the server's open asks for traffic at least every idle-time-out ("The idle
timeout REQUIRED by the sender", 2.7.1/9); "Implementations MUST be prepared to handle empty
frames arriving on any valid channel" (2.4.5/7); a client that announced an idle-time-out
and hears nothing past its threshold "SHOULD try to gracefully close the connection using a
close frame with an error explaining why" (2.4.5/1). The threshold is twice what it
announced ("the value in idle-time-out SHOULD be half the peer's actual timeout
threshold", 2.4.5/3), so the client has until then, and a little slack for a busy machine.
"""
from __future__ import annotations

import time

from amqpspec.case import Context, Skip, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, spec

from ._client import (QUICK, after, client_closed, describe_frames, error, idle_conversation, named, open_conversation,
                      play)

SLACK = 1.0   # seconds allowed beyond a time-out for a loaded machine


@case("amqp10/2.4.1/client-sends-open-first", role="client",
      title="the first frame the client sends after its AMQP header is open",
      clauses=("amqp10:2.4.1/1", "amqp10:2.7.1/1"))
def open_first(ctx: Context) -> None:
    p = play(ctx, "connect")
    p.handshake(upto="amqp")
    got = p.peer.recv(QUICK * 2)
    while isinstance(got, EmptyFrame):
        got = p.peer.recv(QUICK)
    ok = performative_name(got) == "open"
    ctx.record(ok, expected="open", observed=got.summary() if hasattr(got, "summary") else "nothing")
    if ok:
        p.peer.unread(got)
        p.handshake()
        p.serve()
    p.finish()


@case("amqp10/2.4.3/client-closes-with-close", role="client",
      title="the client ends its connection with a close frame before closing the socket",
      clauses=("amqp10:2.4.3/1",))
def uses_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    obs = p.serve()
    ctx.record(p.responder.client_close is not None, expected="close (answered by ours), then the socket closed",
               observed=client_closed(obs))
    p.finish()


@case("amqp10/2.4.3/client-answers-close", role="client",
      title="the server's close carrying an error is answered by the client's close",
      clauses=("amqp10:2.4.3/1",))
def answers_close(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=6)
    p.serve(0.5)
    p.peer.close_connection("amqp:connection:forced", "amqpspec closes the connection")
    obs = p.serve(QUICK * 2)
    ctx.record(p.responder.client_close is not None, expected="close from the client after ours",
               observed=client_closed(obs))
    p.finish()


@case("amqp10/2.4.3/nothing-after-close", role="client",
      title="after its close the client writes nothing more, not even an empty frame, while the server delays its close",
      clauses=("amqp10:2.4.3/2", "amqp10:2.4.5/8"))
def nothing_after_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    # hold our answering close back a while, and send the client something to answer meanwhile
    p.responder.on("close", lambda f: _late_close(p, f))
    obs = p.serve()
    if p.responder.client_close is None:
        from ._client import unmet
        unmet("the client's close", obs)
    tail = after(obs.received, lambda f: performative_name(f) == "close")
    ctx.record(not tail, expected="nothing after the client's close frame",
               observed=describe_frames(tail) if tail else "nothing")
    p.finish()


def _late_close(p, frame) -> bool:  # type: ignore[no-untyped-def]
    p.responder.client_close = frame.performative
    p.peer.send(AMQPFrame(0, spec.Begin(remote_channel=None, next_outgoing_id=0, incoming_window=10,
                                        outgoing_window=10)), EmptyFrame(0))
    rest = p.peer.observe(1.5, reply_close=False)
    p.peer.send(AMQPFrame(0, spec.Close()))
    for item in rest.received:
        p.peer.unread(item)   # judged with the rest of the observation
    return False


@case("amqp10/2.4.3/client-close-on-channel-0", role="client",
      title="the client sends its close on channel 0",
      clauses=("amqp10:2.4.3/5",))
def close_channel_zero(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    obs = p.serve()
    closes = named(obs.received, "close")
    if not closes:
        from ._client import unmet
        unmet("the client's close", obs)
    # the MUST of 2.4.3/5 is for a close pipelined with its open; this one is not: the SHOULD applies
    ctx.record(closes[0].channel == 0, expected="close on channel 0", observed=closes[0].summary(),
               guideline="implementations SHOULD send it on channel 0", level=Level.SHOULD)
    p.finish()


@case("amqp10/2.4.5/client-handles-empty-frames", role="client",
      title="empty frames on channel 0, channel 1 and the session's channel cause no error",
      clauses=("amqp10:2.4.5/7",))
def empty_frames(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", timeout=5, credit=1)
    p.serve(QUICK, stop=lambda _: bool(p.responder.senders()))
    # channel 0, channel 1 (valid whenever the client's channel-max allows it) and the session's
    cmax = p.peer.negotiated.channel_max
    cs = p.responder.session()
    channels = sorted({0, min(1, cmax)} | ({cs.ours.channel} if cs is not None else set()))
    for _ in range(3):
        p.peer.send(*[EmptyFrame(ch) for ch in channels])
        time.sleep(0.2)
    obs = p.serve(QUICK)
    errors = [f for f in obs.received if error_condition(getattr(f, "performative", None))]
    ctx.record(not errors, expected=f"no error for empty frames on channel(s) {channels}",
               observed=describe_frames(errors) if errors else client_closed(obs))
    p.responder.preload("amqpspec-q", ["after empty frames"])
    for s in p.responder.senders():
        p.responder.pump(s)
    p.serve()
    p.finish()


@case("amqp10/2.7.1/client-honours-idle-time-out", role="client", timeout=14.0,
      title="with the server's idle-time-out of 1000 ms the idle client sends a frame at least every second",
      clauses=("amqp10:2.7.1/9",))
def honours_idle_time_out(ctx: Context) -> None:
    idle_ms = 1000
    p = open_conversation(ctx, "idle", timeout=5, handshake={"idle_time_out": idle_ms})
    arrivals = [time.monotonic()]

    def seen(_: object) -> bool:
        arrivals.append(time.monotonic())
        return False

    obs = p.serve(4.0, stop=seen)
    if obs.end == "open":
        arrivals.append(time.monotonic())
    gap = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    limit = idle_ms / 1000 + 0.25
    ctx.record(gap <= limit, expected=f"no silence from the client longer than {idle_ms} ms (+0.25 s)",
               observed=f"longest silence {gap:.2f} s; {sum(isinstance(f, EmptyFrame) for f in obs.received)} "
                        f"empty frame(s); {client_closed(obs)}")
    p.serve()
    p.finish()


@case("amqp10/2.4.5/client-detects-silent-server", role="client", timeout=14.0,
      title="a client that announced an idle-time-out closes with an error when the server stays silent past twice it",
      clauses=("amqp10:2.4.5/1",))
def detects_silence(ctx: Context) -> None:
    p, idle = idle_conversation(ctx, timeout=9, heartbeat=1, why="it does not watch for a silent server")
    limit = 2 * idle / 1000 + SLACK
    if limit > ctx.remaining() - 2:
        p.finish(0.2)
        raise Skip(f"the client's idle-time-out ({idle} ms) is longer than this case can wait")
    started = time.monotonic()
    obs = p.serve(limit + 0.5, heartbeats=False)
    took = time.monotonic() - started
    closes = named(obs.received, "close")
    graceful = bool(closes) and error_condition(closes[0].performative) is not None
    ctx.record(graceful and took <= limit + 0.5,
               expected=f"close with an error within {limit:g} s of silence (twice the {idle} ms announced)",
               observed=f"after {took:.2f} s: {client_closed(obs)}")
    p.finish()




@case("amqp10/2.4.5/client-empty-frames-on-channel-0", role="client", timeout=12.0,
      title="the empty frames the idle client sends to keep the server's idle-time-out are on channel 0",
      clauses=("amqp10:2.4.5/7",))
def empty_frames_channel_zero(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=3, handshake={"idle_time_out": 1000})
    obs = p.serve(2.5)
    empties = [f for f in obs.received if isinstance(f, EmptyFrame)]
    if not empties:
        p.finish(0.2)
        raise Skip("the client sent no empty frame (it kept the idle-time-out with other frames, or not at all)")
    wrong = [f for f in empties if f.channel != 0]
    ctx.record(not wrong, expected="every empty frame on channel 0",
               observed=f"{len(empties)} empty frame(s), {len(wrong)} on another channel",
               guideline="implementations SHOULD use channel 0 when sending empty frames", level=Level.SHOULD)
    p.serve()
    p.finish()


@case("amqp10/2.4.3/client-waits-for-close", role="client",
      title="after its close the client keeps the socket open to read the server's close (held back 0.8 s)",
      clauses=("amqp10:2.4.3/3",))
def waits_for_close(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    held: dict[str, object] = {}

    def hold(frame) -> bool:  # type: ignore[no-untyped-def]
        p.responder.client_close = frame.performative
        held["obs"] = p.peer.observe(0.8, reply_close=False)
        if p.peer.link.closed is None:
            p.peer.send(AMQPFrame(0, spec.Close()))
        return True

    p.responder.on("close", hold)
    obs = p.serve()
    if p.responder.client_close is None:
        from ._client import unmet
        unmet("the client's close", obs)
    during = held.get("obs")
    dropped = during is not None and during.closed  # type: ignore[attr-defined]
    ctx.record(not dropped, expected="the socket still open 0.8 s after the client's close (waiting for ours)",
               observed=during.describe().replace("by broker", "by the client") if during is not None else "?")  # type: ignore[attr-defined]
    p.finish()



@case("amqp10/2.7.1/client-idle-time-out-too-small", role="client", timeout=10.0,
      title="offered an idle-time-out of 1 ms the client either keeps it (steady traffic, no silence of 0.5 s) or closes with an error saying why",
      clauses=("amqp10:2.7.1/10", "amqp10:2.4.5/4"))   # 2.4.5/4 says the same of any idle time-out it cannot support
def idle_too_small(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=4, handshake={"idle_time_out": 1})
    arrivals = [time.monotonic()]

    def seen(_: object) -> bool:
        arrivals.append(time.monotonic())
        return False

    obs = p.serve(2.0, stop=seen)
    closes = named(obs.received, "close")
    refused = bool(closes) and error_condition(closes[0].performative) is not None
    if obs.end == "open":
        arrivals.append(time.monotonic())
    gap = max(b - a for a, b in zip(arrivals, arrivals[1:]))
    kept = not closes and gap <= 0.5   # 1 ms cannot be kept to the letter: steady traffic is the sign
    ctx.record(refused or kept, expected="close with an error (the time-out is too small), or traffic with no silence above 0.5 s",
               observed=f"longest silence {gap:.2f} s; {client_closed(obs)}")
    p.serve()
    p.finish()



@case("amqp10/2.4.3/nothing-after-answering-close", role="client",
      title="after the close that answers the server's, the client writes nothing more",
      clauses=("amqp10:2.4.3/2", "amqp10:2.4.5/8"))
def nothing_after_answer(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=6, heartbeat=2)
    p.serve(0.3)
    p.peer.close_connection("amqp:connection:forced", "amqpspec closes the connection")
    obs = p.serve(QUICK, stop=lambda f: performative_name(f) == "close")
    if p.responder.client_close is None:
        from ._client import unmet
        unmet("the client's close answering ours", obs)
    late = p.peer.observe(1.5, reply_close=False)
    tail = [f for f in late.received]
    ctx.record(not tail, expected="nothing after the client's close", observed=describe_frames(tail) if tail else
               late.describe().replace("by broker", "by the client"))
    p.finish()



@case("amqp10/2.4.3/client-closes-socket-after-close", role="client",
      title="once the closes are exchanged the client closes the socket, and does not use it again",
      clauses=("amqp10:2.4.3/6",))
def socket_not_reused(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    obs = p.serve(stop=lambda f: performative_name(f) == "close")
    if p.responder.client_close is None:
        from ._client import unmet
        unmet("the client's close", obs)
    late = p.peer.observe(QUICK, reply_close=False)
    more = p.peer.reader.pending if hasattr(p.peer.reader, "pending") else 0
    ctx.record(late.closed and not late.received and not more,
               expected=f"the socket closed by the client within {QUICK:g} s, nothing more on it",
               observed=late.describe().replace("by broker", "by the client"))
    p.finish()


__all__ = ["error"]
