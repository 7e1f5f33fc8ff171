"""Plays one hostile-broker example of AMQP 1.0 against a client launched through its driver.

The listening peer (:class:`amqpspec.peer.server10.ServerPeer10`) opens as a broker would and
serves through :class:`amqpspec.peer.server10_responder.Responder10` (the session/link layer
from the node's side), except at the example's point, where the recipes of the example are
built for the numbers the conversation settled (:func:`fuzz.server_strategies10.build`) and
sent instead of our open, begin or attach, in place of the credit a client sender waits for,
of the delivery a client receiver waits for, or of the settlement of what it sent.
"""
from __future__ import annotations

import time
from typing import Any

from amqpspec.client.drivers import DriverProcess
from amqpspec.peer.amqp10 import Observation, UnexpectedReply
from amqpspec.peer.base import Closed, PeerError
from amqpspec.peer.server10 import ServerPeer10
from amqpspec.peer.server10_responder import ClientSession, Responder10
from amqpspec.peer.session10 import RECEIVER, Sender, session_of
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import AMQPFrame

from .server_exec import ExecutorBase
from .server_example import Example
from .server_oracles import RssWatch, Run
from .server_strategies10 import ADDRESS, Where, build


class HostileResponder10(Responder10):
    def __init__(self, peer: ServerPeer10, example: Example, inject: Any) -> None:
        super().__init__(peer)
        self.example = example
        self.inject = inject              # inject(where, mark)
        self.count = 0
        self.done = False
        point = example.point
        if point == "begin":
            self.on("begin", self._begin)
        elif point == "attach":
            self.on("attach", self._attach)
        elif point == "flow":
            self.credit = 0               # the client sender waits for credit: the hostile frames come instead
            self.on("attach", self._attach_then)
        elif point == "transfer":
            self.on("flow", self._flow_then)
        elif point == "disposition":
            self.settle_deliveries = False
            self.on("transfer", self._transfer_then)

    def handle(self, item: Any) -> bool:
        self.count += 1
        return super().handle(item)

    def where(self, cs: ClientSession | None, handle: int = 0, delivery_id: int | None = None) -> Where:
        n = self.peer.negotiated
        theirs = n.client_open
        mfs = int(theirs.value_of("max-frame-size")) if theirs is not None else 0
        cmax = int(theirs.value_of("channel-max")) if theirs is not None else 65535
        w = Where(client_max_frame=mfs, client_channel_max=cmax, handle=handle)
        if cs is not None:
            s = cs.ours
            w.channel, w.remote_channel = s.channel, cs.channel
            w.delivery_id = s.next_delivery_id if delivery_id is None else delivery_id
            w.next_incoming_id = int(s.next_incoming_id or 0)
            w.next_outgoing_id = int(s.next_outgoing_id)
        return w

    def _once(self) -> bool:
        if self.done:
            return False
        self.done = True
        return True

    def _begin(self, f: AMQPFrame) -> bool | None:
        if not self._once():
            return None
        ours = self.free_channel()
        s = session_of(self.peer, ours)
        s.remote_channel, s.remote_begin = f.channel, f.performative
        self.peer.reserve_channel(ours)
        cs = ClientSession(f.channel, s, f.performative)
        self.sessions[f.channel] = cs
        self.inject(self.where(cs), self.count)
        return False

    def _attach(self, f: AMQPFrame) -> bool | None:
        cs = self.sessions.get(f.channel)
        if cs is None or not self._once():
            return None
        self.inject(self.where(cs, self.peer.free_handle(cs.ours.channel)), self.count)
        return False

    def _attach_then(self, f: AMQPFrame) -> bool | None:
        cs = self.sessions.get(f.channel)
        if cs is None or bool(f.performative.role) is bool(RECEIVER) or not self._once():
            return None
        link = self.answer_attach(cs, f)     # no credit granted (credit 0)
        self.inject(self.where(cs, link.handle), self.count)
        return False

    def _flow_then(self, f: AMQPFrame) -> bool | None:
        cs = self.sessions.get(f.channel)
        if cs is None:
            return None
        self._default(f, "flow", cs)
        link = self.link_of(cs, f.performative.handle)
        if isinstance(link, Sender) and link.link_credit > 0 and self._once():
            self.inject(self.where(cs, link.handle), self.count)
        return False

    def _transfer_then(self, f: AMQPFrame) -> bool | None:
        cs = self.sessions.get(f.channel)
        if cs is None:
            return None
        self._default(f, "transfer", cs)
        did = f.performative.delivery_id
        if did is not None and not f.performative.more and self._once():
            link = self.link_of(cs, f.performative.handle)
            self.inject(self.where(cs, link.handle if link is not None else 0, int(did)), self.count)
        return False


class Executor10(ExecutorBase):
    protocol = "1.0"

    def options(self, example: Example) -> dict[str, Any]:
        return {"address": ADDRESS, "count": 1, "timeout": self.driver_timeout, **dict(example.options)}

    def observation(self, received: list[Any], end: str, framing_error: str | None) -> Observation:
        return Observation(received=received, end=end, framing_error=framing_error)

    def on_socket(self, conn: Any, addr: Any, transcript: Transcript, deadline: float) -> ServerPeer10:
        return ServerPeer10.on_socket(conn, addr, transcript, deadline)

    def converse(self, example: Example, peer: ServerPeer10, proc: DriverProcess, watch: RssWatch, deadline: float,
                 transcript: Transcript) -> Run:
        state: dict[str, Any] = {"mark": None, "entry": -1}
        early: list[Any] = []
        end = "open"

        def inject(where: Where, mark: int) -> None:
            state["mark"], state["entry"] = mark, len(transcript.entries)
            for item in example.items:
                for data, summary in build(item.frame, where):
                    tag = f"  [hostile: {item.malformed}]" if item.malformed else "  [hostile]"
                    peer.link.send_bytes(data, summary + tag)
                    if item.frame.perf == "close" and item.frame.channel == 0:
                        peer.close_sent = True     # the client's close ends the conversation (responder)
            peer.last_sent = time.monotonic()

        responder = HostileResponder10(peer, example, inject)
        timeout = max(0.5, min(5.0, deadline - time.monotonic() - 1.0))
        try:
            if example.point == "open":
                peer.handshake(upto="amqp", timeout=timeout)
                theirs = peer.expect("open", timeout=timeout).performative
                n = peer.negotiated
                n.client_open = theirs
                inject(responder.where(None), 0)
                n.max_frame_size = min(int(theirs.value_of("max-frame-size")), 65536)
                n.idle_time_out = None if theirs.idle_time_out is None else int(theirs.idle_time_out)
                peer.opened.max_frame_size = n.max_frame_size
                peer.opened.remote_open = theirs
                peer.opened.opened = n.opened = True
                peer.stage = "open"
            else:
                peer.handshake(timeout=timeout)
        except UnexpectedReply as exc:
            got = exc.got
            if isinstance(got, Closed):
                end = got.how if got.how != "local" else "fin"
            elif got is not None:
                early.append(got)
        except PeerError as exc:
            transcript.event(f"opening ended: {exc}")
        watch.sample()
        served: list[Any] = []
        framing_error = peer.framing_error
        if end == "open" and peer.link.closed is None:
            end, framing_error = self.serve_slices(example, peer, responder, proc, watch, deadline, served)
        elif end == "open" and peer.link.closed is not None:
            end = peer.link.closed.how if peer.link.closed.how != "local" else "fin"
        out = proc.wait(max(0.1, deadline - time.monotonic()))
        watch.sample()
        injected = state["mark"] is not None
        if not injected:
            after: list[Any] = []
        elif example.point == "open":
            after = early + served
        else:
            after = served[state["mark"]:]
        theirs = peer.negotiated.client_open
        frame_max = int(theirs.value_of("max-frame-size")) if theirs is not None else 0
        channel_max = int(theirs.value_of("channel-max")) if theirs is not None else 65535
        return Run(out, self.observation(after, end, framing_error), injected, frame_max=frame_max,
                   channel_max=channel_max, rss_peak=watch.peak, inject_entry=state["entry"])


__all__ = ["Executor10", "HostileResponder10"]
