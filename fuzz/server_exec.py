"""What the two protocols' hostile-broker executors share: one listening socket per example,
the driver launched and killed at the example's deadline, the serve loop in short slices that
watch the driver and its memory. The protocol executors (``server_exec091``,
``server_exec10``) say how to reach the example's point and what to send there."""
from __future__ import annotations

import time
from typing import Any

from amqpspec.client.drivers import DriverProcess, DriverSpec
from amqpspec.peer.base import PeerError
from amqpspec.peer.server091 import Listener
from amqpspec.transcript import Transcript

from .server_example import Example
from .server_oracles import RssWatch, Run

SLICE_S = 0.25          # the serve loop looks at the driver (and its RSS) this often
EXIT_GRACE_S = 0.3      # after the driver exits: time for its last frames to arrive


def release(listener: Listener, proc: DriverProcess | None, watch: RssWatch | None, peer: Any) -> None:
    """Ends what one example (or its replay) held, whatever of it was made: the RSS sampler, the
    client's connection, a driver still running, the listening socket."""
    if watch is not None:
        watch.stop()
    if peer is not None:
        peer.close()
    if proc is not None and proc.running():
        proc.abort()
    listener.close()


class ExecutorBase:
    protocol = ""

    def __init__(self, driver: DriverSpec, *, deadline_s: float = 8.0, driver_timeout: int = 3,
                 host: str = "127.0.0.1") -> None:
        self.driver = driver
        self.deadline_s = deadline_s
        self.driver_timeout = driver_timeout
        self.host = host

    def options(self, example: Example) -> dict[str, Any]:
        raise NotImplementedError

    def observation(self, received: list[Any], end: str, framing_error: str | None) -> Any:
        raise NotImplementedError

    def on_socket(self, conn: Any, addr: Any, transcript: Transcript, deadline: float) -> Any:
        raise NotImplementedError

    def converse(self, example: Example, peer: Any, proc: DriverProcess, watch: RssWatch, deadline: float,
                 transcript: Transcript) -> Run:
        raise NotImplementedError

    def run(self, example: Example, password: str) -> tuple[Run, Transcript]:
        """Plays ``example``: the driver launched, its connection accepted and served; never
        longer than the deadline (the driver is killed then), never raises for what the client does."""
        transcript = Transcript()
        deadline = time.monotonic() + self.deadline_s
        listener = Listener(self.host, 0)
        proc: DriverProcess | None = None
        peer: Any = None
        watch: RssWatch | None = None
        try:
            options = self.options(example)
            transcript.event(f"launching driver {self.driver.name}: workload {example.workload} "
                             + " ".join(f"{k}={v}" for k, v in options.items()))
            proc = self.driver.launch(listener.url("guest", password), example.workload, options)
            watch = RssWatch(proc.proc.pid).start()
            try:
                conn, addr = listener.accept_socket(max(0.1, deadline - time.monotonic() - 1.0))
            except PeerError as exc:
                out = proc.wait(max(0.1, deadline - time.monotonic()))
                return Run(out, self.observation([], "open", None), False, rss_peak=watch.peak,
                           notes=[str(exc)]), transcript
            peer = self.on_socket(conn, addr, transcript, deadline)
            try:
                return self.converse(example, peer, proc, watch, deadline, transcript), transcript
            except PeerError as exc:   # the peer's own bounds (deadline) ended the conversation
                transcript.event(f"conversation ended: {exc}")
                out = proc.wait(max(0.1, deadline - time.monotonic()))
                return Run(out, self.observation([], "open", None), False, rss_peak=watch.peak,
                           notes=[str(exc)]), transcript
        finally:
            release(listener, proc, watch, peer)

    def serve_slices(self, example: Example, peer: Any, responder: Any, proc: DriverProcess, watch: RssWatch,
                     deadline: float, served: list[Any]) -> tuple[str, str | None]:
        """Serves in short slices until the socket ends, the driver exits (and its last frames
        had time to arrive) or the deadline nears; returns how the connection ended and any
        framing error. Everything the client sent is appended to ``served``."""
        end, framing_error = "open", None
        exited_at: float | None = None
        while True:
            left = deadline - time.monotonic() - 0.5
            if left <= 0:
                break
            obs = peer.serve(min(SLICE_S, left), responder, heartbeats=example.heartbeats)
            served.extend(obs.received)
            watch.sample()
            if obs.framing_error:
                framing_error = obs.framing_error
            if obs.closed or obs.end == "framing-error" or peer.link.closed is not None:
                end = obs.end if obs.end != "open" else (peer.link.closed.how if peer.link.closed else "fin")
                break
            if not proc.running():
                exited_at = exited_at or time.monotonic()
                if time.monotonic() - exited_at > EXIT_GRACE_S:
                    break
        return ("fin" if end == "local" else end), framing_error


__all__ = ["ExecutorBase", "SLICE_S"]
