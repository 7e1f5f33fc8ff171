"""2.4.3 Closing a connection, from the client's side: where a close may arrive, and what the
client's own close says when an error makes it close.

"A close frame MAY be received on any channel up to the maximum channel number negotiated in
open" (2.4.3/4): the MAY is the sender's; the receiver cannot refuse it, so a close on channel
1 (within the client's channel-max) is the server's close like one on channel 0, and "Prior to
closing a connection, each peer MUST write a close frame" (2.4.3/1) -- the client answers it.
That sentence goes on: "with a code indicating the reason for closing", and close's error
field says the same ("The value of the field SHOULD contain details on the cause of the
error", 2.7.9/2): a stream the client cannot decode -- a frame header whose DOFF is 1, below
the 2 the frame header itself occupies (2.3.1) -- leaves it no way on but closing, and that
close carries the error that caused it. A client that drops the socket without a close
breaks the MUST as surely as one that closes without saying why.
The close is also how a client ends on its own: "Orderly shutdown requires that this frame
MUST be written by the sender" (2.7.9/1) -- after a send workload, not only a bare connect.
And a broker that refuses a connection at open sends its open and close together (its
CLOSE_PIPE state, 2.4.6): the client answers that close too, and writes nothing after its
own ("This frame MUST be the last thing ever written onto a connection", 2.4.3/2).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._client import QUICK, client_closed, error, named, open_conversation, play, unmet

# a frame header announcing 8 octets with DOFF 1: no valid frame header can be formed from it
BAD_DOFF = b"\x00\x00\x00\x08\x01\x00\x00\x00"


@case("amqp10/2.4.3/client-answers-close-on-channel-1", role="client",
      title="the server's close sent on channel 1 (within the client's channel-max) is answered by the client's close",
      clauses=("amqp10:2.4.3/4", "amqp10:2.4.3/1"))
def answers_close_on_channel_1(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=6)
    if p.peer.negotiated.channel_max < 1:
        p.finish(0.2)
        raise Skip("the client's channel-max is 0: channel 1 is outside it")
    p.serve(0.5)
    p.peer.send(AMQPFrame(1, spec.Close(error=error("amqp:connection:forced", "amqpspec closes (on channel 1)"))))
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) == "close")
    ctx.record(p.responder.client_close is not None, expected="close from the client after ours on channel 1",
               observed=client_closed(obs))
    p.finish()


@case("amqp10/2.4.3/client-close-carries-its-cause", role="client",
      title="made to close by a frame header it cannot decode (DOFF 1), the client writes a close carrying an error first",
      clauses=("amqp10:2.4.3/1", "amqp10:2.7.9/2"))
def close_carries_cause(ctx: Context) -> None:
    p = open_conversation(ctx, "idle", timeout=6)
    p.serve(0.5)
    p.peer.send(BAD_DOFF)
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) == "close")
    closes = named(obs.received, "close")
    if not closes and not obs.closed:
        p.finish(0.2)
        raise Skip(f"the client neither closed nor wrote anything within {QUICK * 2:g} s of the undecodable header")
    cause = error_condition(closes[0].performative) if closes else None
    ctx.record(cause is not None, expected="close with an error (e.g. amqp:connection:framing-error) before the socket closes",
               observed=(f"close with error {cause}" if cause else "close without an error") if closes
               else client_closed(obs))
    p.finish()


@case("amqp10/2.7.9/client-orderly-shutdown-writes-close", role="client",
      title="done with a send workload (a session, a link, a message), the client shuts down by writing close before its socket closes",
      clauses=("amqp10:2.7.9/1",))
def orderly_shutdown(ctx: Context) -> None:
    # "Orderly shutdown requires that this frame MUST be written by the sender" (close, 2.7.9):
    # the workload ends on its own, so its ending is the orderly shutdown the sentence speaks of
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    if not named(obs.received, "transfer"):
        unmet("a transfer from the client (the workload's work before its shutdown)", obs)
    closes = named(obs.received, "close")
    ctx.record(bool(closes) and p.responder.client_close is not None,
               expected="close from the client (answered by ours), then the socket closed",
               observed=client_closed(obs))
    p.finish()


@case("amqp10/2.4.3/client-answers-close-pipelined-with-open", role="client",
      title="the server's open followed at once by its close with an error (a refused connection) is answered by the client's close, and nothing after it",
      clauses=("amqp10:2.4.3/1", "amqp10:2.4.3/2"))
def answers_close_pipelined_with_open(ctx: Context) -> None:
    # the server's CLOSE_PIPE state (2.4.6): open and close sent together, as a broker refusing a
    # connection at open does; what the client pipelined before reading them is no fault
    p = play(ctx, "send", count=1)
    n = p.handshake(open=b"")
    p.peer.send(AMQPFrame(0, n.our_open), AMQPFrame(0, spec.Close(error=error(
        "amqp:unauthorized-access", "amqpspec refuses this connection"))))
    obs = p.serve(QUICK * 2, stop=lambda f: performative_name(f) == "close")
    if p.responder.client_close is None:
        ctx.record(False, expected="close from the client after our open and close", observed=client_closed(obs))
        p.finish()
        return
    late = p.peer.observe(1.0, reply_close=False)
    ctx.record(not late.received, expected="the client's close, then nothing more",
               observed="after its close: " + "; ".join(getattr(i, "summary", lambda: repr(i))()[:80]
                                                        for i in late.received[:4]) if late.received else
               "close from the client, nothing after; " + late.describe().replace("by broker", "by the client"))
    p.finish()
