"""Spec 2.7.9 Close (transport): orderly shutdown of a connection.

"Sending a close signals that the sender will not be sending any more frames (or bytes of any
other kind) on the connection. Orderly shutdown requires that this frame MUST be written by the
sender. It is illegal to send any more frames (or bytes of any other kind) after sending a close
frame." With 2.4.3: "Prior to closing a connection, each peer MUST write a close frame ...
This frame MUST be the last thing ever written onto a connection." Each case closes from our
side in a different situation and checks that the broker answers with its close and writes
nothing after it (the close rules of s2_4_connections.close_discipline).
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.session10 import begin, begin_frame
from amqpspec.verify10 import Replies
from amqpspec.wire.amqp10 import AMQPFrame, Described, List, ULong, spec

from ._common import WAIT, address, link_name
from ._connection import CLOSE_FIRST, CLOSE_LAST, close_discipline, watch

ANSWERED = ("amqp10:2.7.9/1", "amqp10:2.4.3/1")


def _answered(ctx: Context, close: spec.Close, *extra: AMQPFrame) -> None:
    peer = ctx.connect()
    peer.send(AMQPFrame(0, close), *extra)
    obs = watch(peer, WAIT)
    ctx.check(obs, Replies("close"), what="our close is answered with the broker's close", clauses=ANSWERED)
    close_discipline(ctx, obs)


@case("amqp10/2.7.9/close-answered", title="a close is answered with close, and nothing follows it",
      clauses=ANSWERED + (CLOSE_LAST,))
def close_answered(ctx: Context) -> None:
    """After the open exchange sends close (no error). The broker must shut down in order: write
    its own close (2.7.9, 2.4.3/1) -- before closing the socket, if it does -- and nothing after
    it (2.4.3/2); the close should be on channel 0."""
    _answered(ctx, spec.Close())


@case("amqp10/2.7.9/close-with-error-answered", title="a close carrying an error is answered with close, and "
      "nothing follows it", clauses=ANSWERED + (CLOSE_LAST,))
def close_with_error_answered(ctx: Context) -> None:
    """Sends close with an error (amqp:internal-error and a description), as a client failing
    would. The broker answers with its close and writes nothing after it, as for an orderly
    close."""
    _answered(ctx, spec.Close(error=spec.Error(condition=spec.AmqpError.INTERNAL_ERROR,
                                               description="amqpspec: the client gives up")))


@case("amqp10/2.7.9/close-with-links-attached", title="a close with a session and links still attached is "
      "answered with close, and nothing follows it", clauses=ANSWERED + (CLOSE_LAST,))
def close_with_links_attached(ctx: Context) -> None:
    """Begins a session, attaches a sending and a receiving link (with credit), then closes the
    connection without ending the session or detaching the links -- a close ends everything.
    The broker must answer with its close (it may end or detach first) and write nothing after
    it. (The close is sent once the broker has had 0.3 s to answer the attaches and the flow.)"""
    peer = ctx.connect()
    addr = address(ctx)
    s = begin(peer)
    s.sender(addr, name=link_name(ctx, "snd"))
    s.receiver(addr, name=link_name(ctx, "rcv"), credit=5)
    peer.observe(0.3)   # let the broker answer the attaches and the flow: the close then finds it quiet
    peer.send(AMQPFrame(0, spec.Close()))
    obs = watch(peer, WAIT)
    ctx.check(obs, Replies("close"), what="our close is answered with the broker's close", clauses=ANSWERED)
    close_discipline(ctx, obs)


@case("amqp10/2.7.9/nothing-after-close", title="after a close and a begin in one write, the broker's close is "
      "the last thing it writes", clauses=CLOSE_FIRST + (CLOSE_LAST,))
def nothing_after_close(ctx: Context) -> None:
    """Sends close immediately followed, in the same write, by a begin (which we should not send;
    the broker is in CLOSE_RCVD, where it may still send frames). The broker may answer the begin
    before its close, but once it has written its close nothing may follow -- not a begin, not an
    empty frame (2.4.3/2)."""
    peer = ctx.connect()
    peer.send(AMQPFrame(0, spec.Close()).encode() + begin_frame(1).encode())
    peer.close_sent = True
    obs = watch(peer, WAIT, grace=1.0)
    ctx.check(obs, Replies("close"), what="our close is answered with the broker's close", clauses=ANSWERED)
    close_discipline(ctx, obs)


@case("amqp10/2.7.9/error-has-details", title="a close carrying an error gives details of its cause",
      clauses=("amqp10:2.7.9/2",))
def error_has_details(ctx: Context) -> None:
    """Provokes a connection error -- a frame on channel 0 whose body is a described list of an
    unknown descriptor, which no peer can decode as a performative -- and, when the broker closes
    with an error, checks that the error has a description or info (2.7.9/2, SHOULD). A broker
    that does not close with an error here cannot be judged on this sentence: skipped."""
    peer = ctx.connect()
    peer.send(AMQPFrame(0, Described(ULong(0x00000000DEADBEEF), List(["amqpspec"]))))
    obs = watch(peer)
    close = obs.close
    err = getattr(close, "error", None) if close is not None else None
    if err is None:
        ctx.skip("the broker did not close the connection with an error for an undecodable performative")
    detail = getattr(err, "description", None) or getattr(err, "info", None)
    ctx.record(bool(detail), expected="error with a description or info", observed=f"{err.summary() if hasattr(err, 'summary') else err}")
