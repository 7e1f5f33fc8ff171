"""Sending a method and watching one channel for the broker's reaction (shared by the 0-9-1 case modules).

The stop predicates end a ``Peer.observe`` at the frame that decides a case: a method's reply,
the channel's close, or a connection.close. ``answer`` and ``attempt`` send a synchronous method
and observe up to its reply or an exception; ``after_async`` and ``react`` follow asynchronous
frames with a probe on the same channel, whose answer proves that nothing sent before it raised
an exception there. The rest answer or describe a close so that a case can go on after one.
"""
from __future__ import annotations

from typing import Any, Callable

from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import StaysOpen, code_name
from amqpspec.wire.amqp091 import HeartbeatFrame, MethodFrame, spec
from amqpspec.wire.amqp091.base import Method

from ._common import REACTION_WINDOW

# ---------------------------------------------------------------------------------- stop predicates
Stop = Callable[[object], bool]


def is_method(*names: str) -> Stop:
    """Stop predicate for Peer.observe: one of the named methods arrived."""
    return lambda item: isinstance(item, MethodFrame) and item.method.NAME in names


def any_frame(item: object) -> bool:
    """Stop predicate for silent-close checks: any frame decides the verdict (it is already
    "further data"); after a connection.close we still wait for the socket close, for the evidence."""
    if isinstance(item, MethodFrame) and item.method.NAME == "connection.close":
        return False
    return not isinstance(item, HeartbeatFrame)


def method_on(ch: int, *names: str) -> Callable[[Any], bool]:
    return lambda item: isinstance(item, MethodFrame) and item.channel == ch and item.method.NAME in names


def is_close(item: Any, ch: int | None = None) -> bool:
    return isinstance(item, MethodFrame) and (item.method.NAME == "connection.close"
                                              or (item.method.NAME == "channel.close" and (ch is None or item.channel == ch)))


def on_channel(ch: int, *names: str) -> Callable[[object], bool]:
    """Stop predicate: one of ``names`` (or channel.close) on ``ch``, or any connection.close."""
    wanted = set(names) | {"channel.close"}
    return lambda item: isinstance(item, MethodFrame) and (
        (item.channel == ch and item.method.NAME in wanted) or item.method.NAME == "connection.close")


# ---------------------------------------------------------------------------------- send and observe
def answer(peer: Peer, ch: int, method: object, *replies: str, window: float = REACTION_WINDOW) -> Observation:
    """Sends a synchronous method and observes until its reply, a close, or the window's end."""
    peer.send(MethodFrame(ch, method))  # type: ignore[arg-type]
    return peer.observe(window, stop=on_channel(ch, *(replies or method.RESPONSES)))  # type: ignore[attr-defined]


def after_async(peer: Peer, ch: int, *frames: MethodFrame, window: float = REACTION_WINDOW) -> Observation:
    """Sends asynchronous frames on ``ch``, then probes the same channel: the probe's reply proves
    everything before it was processed without an exception on that channel."""
    if frames:
        peer.send(*frames)
    return peer.observe(window, probe_channel=ch, stop=on_channel(ch))


def attempt(peer: Peer, ch: int, method: Method, window: float = REACTION_WINDOW) -> Observation:
    """Sends a synchronous method and observes until its reply, a close of the channel, or a
    connection.close (answered with close-ok by the peer)."""
    return answer(peer, ch, method, window=window)


def react(peer: Peer, ch: int, window: float = REACTION_WINDOW) -> Observation:
    """What the broker does on ``ch`` after a stimulus: ends at a close, or when a probe on the
    same channel (passive declare of amq.direct) comes back, proving no exception was raised."""
    return peer.observe(window, probe_channel=ch, stop=lambda item: is_close(item, ch))


class Answered(StaysOpen):
    """The named method on the channel, and no close; with ``probe`` also the liveness probe on
    that channel answered (nothing sent before it raised an exception)."""

    def __init__(self, name: str, ch: int, probe: bool = False) -> None:
        self.name, self.ch, self.probe = name, ch, probe

    def accepts(self, obs: Observation) -> bool:
        return bool(obs.methods(self.name, self.ch)) and obs.channel_close() is None and obs.connection_close is None \
            and not obs.closed and (not self.probe or bool(obs.probe_ok))

    def describe(self) -> str:
        return f"{self.name} on channel {self.ch}, no exception"


# ---------------------------------------------------------------------------------- after a close
def answer_channel_close(peer: Peer, ch: int, obs: Observation) -> None:
    """A correct client answers the broker's channel.close, so the connection can go on."""
    if obs.channel_close(ch) is not None and obs.connection_close is None and not obs.closed:
        peer.send(MethodFrame(ch, spec.ChannelCloseOk()))


def reopen(peer: Peer, obs: Observation, ch: int) -> int:
    """After an observation that may have closed ``ch``: answers the close, returns a usable channel."""
    if obs.channel_close(ch) is not None:
        peer.send(MethodFrame(ch, spec.ChannelCloseOk()))
        return peer.open_channel()
    return ch


def ok_or_close(obs: Observation, reply: str, ch: int) -> str:
    if obs.methods(reply, ch):
        return reply
    close = obs.connection_close or obs.channel_close(ch)
    if close is not None:
        return f"{'connection' if obs.connection_close else 'channel'}.close {code_name(close.reply_code)}"
    return obs.describe()
