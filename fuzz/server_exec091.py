"""Plays one hostile-broker example of AMQP 0-9-1 against a client launched through its driver.

The broker is the suite's own listening peer (:class:`amqpspec.peer.server091.ServerPeer`)
answering as a correct broker would (:class:`amqpspec.peer.server091_responder.Responder`),
except at the example's point, where the generated frames go out instead of (or right after)
the answer the client is waiting for. Everything is bounded by the example's deadline: the
peer's reads, the serve loop and the driver (killed at the deadline). A client that floods,
never reads or sends garbage meets the peer's own bounds (one frame buffered at most, capped
transcript) and the deadline.
"""
from __future__ import annotations

import time
from collections import deque
from typing import Any

from amqpspec.client.drivers import DriverProcess
from amqpspec.peer.amqp091 import Observation, UnexpectedReply
from amqpspec.peer.base import Closed, PeerError
from amqpspec.peer.server091 import ServerPeer
from amqpspec.peer.server091_responder import Consumer, Message, Responder
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import MethodFrame, describe, spec

from .server_example import Example, Item, placed
from .server_exec import ExecutorBase
from .server_oracles import Run, RssWatch
from .server_strategies091 import FRAME_MAX, QUEUE

HANDSHAKE_POINTS = ("connection.start", "connection.tune", "connection.open-ok")


class HostileResponder(Responder):
    """A correct broker's answers, with the example's frames at its point."""

    def __init__(self, peer: ServerPeer, example: Example, inject: Any) -> None:
        super().__init__(peer)
        self.example = example
        self.inject = inject            # inject(channel, consumer_tag) -> sends the items, marks
        self.count = 0                  # items handled: the index into what the serve loop kept
        self.queues[QUEUE] = deque([Message(b"hello")])   # what a consume or get finds before the point
        point = example.point
        if point == "channel.open-ok":
            self.on("channel.open", self._instead)
        elif point == "basic.consume-ok":
            self.on("basic.consume", self._after_consume_ok)
            self.queues[QUEUE].clear()  # the hostile frames are the deliveries
        elif point == "basic.get-ok":
            self.on("basic.get", self._instead)
        elif point == "basic.ack":
            self.confirm_ack = self._confirm

    def handle(self, item: Any) -> bool:
        self.count += 1
        return super().handle(item)

    def _instead(self, frame: MethodFrame) -> bool:
        if frame.method.NAME == "channel.open":
            self.open_channels.add(frame.channel)
        self.inject(frame.channel, None, self.count)
        return False

    def _after_consume_ok(self, frame: MethodFrame) -> bool:
        m = frame.method
        tag = str(m.consumer_tag) or "amq.ctag-amqpspec-1"
        self.consumers[(frame.channel, tag)] = Consumer(frame.channel, tag, str(m.queue), bool(m.no_ack))
        if not m.no_wait:
            self.peer.send(MethodFrame(frame.channel, spec.BasicConsumeOk(tag)))
        self.inject(frame.channel, tag, self.count)
        return False

    def _confirm(self, seq: int) -> bool | None:
        if self.example.point == "basic.ack" and not getattr(self, "_confirmed_once", False):
            self._confirmed_once = True
            channel = next(iter(self.confirming), 1)
            self.inject(channel, None, self.count)
            return None
        return True


class Executor091(ExecutorBase):
    """Runs examples against one driver; each on a listening socket of its own."""

    protocol = "0-9-1"

    def options(self, example: Example) -> dict[str, Any]:
        return {"queue": QUEUE, "count": 1, "timeout": self.driver_timeout, **dict(example.options)}

    def observation(self, received: list[Any], end: str, framing_error: str | None) -> Observation:
        return Observation(received=received, end=end, framing_error=framing_error)

    def on_socket(self, conn: Any, addr: Any, transcript: Transcript, deadline: float) -> ServerPeer:
        return ServerPeer.on_socket(conn, addr, transcript, deadline)

    # ------------------------------------------------------------------ the conversation
    def converse(self, example: Example, peer: ServerPeer, proc: DriverProcess, watch: RssWatch, deadline: float,
                  transcript: Transcript) -> Run:
        state: dict[str, Any] = {"mark": None, "entry": -1, "channel": 1}
        early: list[Any] = []      # the client's reaction caught by a handshake step after the hostile frames
        end = "open"

        def inject(channel: int, tag: str | None, mark: int) -> None:
            state["mark"], state["channel"], state["entry"] = mark, channel, len(transcript.entries)
            for item in example.items:
                self._send(peer, responder, item, channel, tag)

        responder = HostileResponder(peer, example, inject)
        timeout = max(0.5, min(5.0, deadline - time.monotonic() - 1.0))
        tune = example.tune or (2047, FRAME_MAX, 0)
        try:
            if example.point in HANDSHAKE_POINTS:
                self._handshake_with_injection(example, peer, responder, inject, tune, timeout)
            else:
                peer.handshake(channel_max=tune[0], frame_max=tune[1], heartbeat=tune[2], timeout=timeout)
        except UnexpectedReply as exc:
            got = exc.got
            if isinstance(got, Closed):
                end = got.how if got.how != "local" else "fin"
            elif got is not None:
                early.append(got)
        except PeerError as exc:
            transcript.event(f"handshake ended: {exc}")
        watch.sample()
        served: list[Any] = []
        framing_error = peer.framing_error
        if end == "open" and peer.link.closed is None:
            end, framing_error = self.serve_slices(example, peer, responder, proc, watch, deadline, served)
        elif peer.link.closed is not None and end == "open":
            end = peer.link.closed.how
        out = proc.wait(max(0.1, deadline - time.monotonic()))
        watch.sample()
        injected = state["mark"] is not None
        after = early + (served[state["mark"]:] if injected and state["mark"] is not None else [])
        if example.point in HANDSHAKE_POINTS and injected:
            after = early + served
        obs = Observation(received=after, end=end if end != "local" else "fin", framing_error=framing_error)
        return Run(out, obs, injected, frame_max=peer.negotiated.frame_max, rss_peak=watch.peak,
                   inject_entry=state["entry"])

    def _handshake_with_injection(self, example: Example, peer: ServerPeer, responder: HostileResponder, inject: Any,
                                  tune: tuple[int, int, int], timeout: float) -> None:
        """The handshake with the example's frames in place of start, tune or open-ok; when the
        client answers as it would to the real frame, the handshake goes on."""
        n = peer.negotiated
        point = example.point
        if point == "connection.start":
            peer.handshake(upto="header", timeout=timeout)
            inject(0, None, 0)
            n.start_ok = peer.expect("connection.start-ok", timeout=timeout).method  # type: ignore[assignment]
            peer.stage = "start-ok"
            peer.handshake(channel_max=tune[0], frame_max=tune[1], heartbeat=tune[2], timeout=timeout)
        elif point == "connection.tune":
            peer.handshake(upto="start-ok", timeout=timeout)
            n.tune = spec.ConnectionTune(*tune)
            inject(0, None, 0)
            ok: spec.ConnectionTuneOk = peer.expect(  # type: ignore[assignment]
                "connection.tune-ok", timeout=timeout).method
            n.tune_ok, n.channel_max, n.frame_max, n.heartbeat = ok, ok.channel_max, ok.frame_max, ok.heartbeat
            peer.stage = "tune-ok"
            peer.handshake(timeout=timeout)
        else:
            peer.handshake(upto="tune-ok", channel_max=tune[0], frame_max=tune[1], heartbeat=tune[2], timeout=timeout)
            n.open = peer.expect("connection.open", timeout=timeout).method  # type: ignore[assignment]
            inject(0, None, 0)
            n.opened = True
            peer.stage = "open-ok"

    def _send(self, peer: ServerPeer, responder: Responder, item: Item, channel: int, tag: str | None) -> None:
        frame = placed(item.frame, channel, tag)
        method = getattr(frame, "method", None)
        if isinstance(method, spec.ConnectionClose):
            peer.close_sent = method        # the client's close-ok ends the conversation (responder)
        elif isinstance(method, spec.ChannelClose):
            responder.closing.add(frame.channel)
        summary = describe(frame) + (f"  [hostile: {item.malformed}]" if item.malformed else "  [hostile]")
        peer.link.send_bytes(frame.encode(), summary)
        peer.last_sent = time.monotonic()


__all__ = ["Executor091", "HostileResponder"]
