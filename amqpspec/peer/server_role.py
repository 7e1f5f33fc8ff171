"""The loop both server roles (0-9-1 ServerPeer, 1.0 ServerPeer10) serve a client with:
keep-alive frames on time, every received item kept and answered, and after the closing
handshake a short wait for the client's socket to close. What differs between the two
protocols (the keep-alive frame, how much is kept, what the close recorded) comes in as hooks."""
from __future__ import annotations

import time
from typing import Any, Callable

from amqpspec.peer.base import Closed

CLOSE_DRAIN_S = 1.0  # after the closing handshake: how long to wait for the client to close the socket


class ServerRole:
    """Mixed into a StreamPeer (it uses recv, send, link, framing_error, last_sent)."""

    recv: Callable[..., Any]
    link: Any
    framing_error: Any
    last_sent: float
    _end_observation: Callable[[Any, float], Any]

    def _keep(self, obs: Any, item: Any) -> None:
        """Records an item received while serving."""
        obs.received.append(item)

    def _keep_late(self, obs: Any, item: Any) -> None:
        """Records an item received after the closing handshake."""
        obs.received.append(item)

    def _serve_loop(self, obs: Any, started: float, until: float, *, beat: float, keepalive: Callable[[], Any],
                    handle: Callable[[Any], bool], stop: Callable[[Any], bool] | None,
                    on_closed: Callable[[Any], None]) -> Any:
        """Serves until ``until``: ``keepalive()`` once ``beat`` seconds passed without sending
        (0: never), each item kept then given to ``handle`` (True: the closing handshake is
        over, ``on_closed(obs)`` records it and we wait for the socket's end), ``stop`` ends
        early. Sets ``obs.end``, ``obs.framing_error`` and ``obs.elapsed``."""
        while True:
            now = time.monotonic()
            left = until - now
            if left <= 0:
                break
            if beat and now - self.last_sent >= beat:
                keepalive()
            item = self.recv(min(left, beat) if beat else left)
            if item is None:
                if self.framing_error is not None:
                    obs.framing_error = self.framing_error
                    obs.end = "framing-error"
                    if self.link.closed is None:
                        continue
                    break
                continue
            if isinstance(item, Closed):
                obs.end = item.how if item.how != "local" else "fin"
                break
            self._keep(obs, item)
            finished = handle(item)
            if stop is not None and stop(item):
                obs.end = "stopped"
                break
            if finished:
                on_closed(obs)
                obs.end = self._await_socket_close(min(until, time.monotonic() + CLOSE_DRAIN_S), obs)
                break
        return self._end_observation(obs, started)

    def _await_socket_close(self, until: float, obs: Any) -> str:
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return "stopped"
            item = self.recv(left)
            if item is None:
                return "framing-error" if self.framing_error is not None else "stopped"
            if isinstance(item, Closed):
                return item.how if item.how != "local" else "fin"
            self._keep_late(obs, item)
