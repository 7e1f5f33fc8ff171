"""2.2 and 2.3 Framing, from the client's side: what follows the client's header is AMQP 1.0 frames.

"Any data appearing beyond the protocol header MUST match the version indicated by the
protocol header" (2.2/2); a frame's SIZE "MUST contain the total frame size of the frame
header, extended header, and frame body" (2.3.1/1) -- a size that lies leaves the stream
undecodable from that frame on, which is how it shows from the server's chair: the playing
broker reads every frame the client sends through one bounded reader and records the first
octets it cannot decode. An AMQP frame's body "MUST be one of those defined in performatives
and is encoded as a described type" (2.3.2/1): a described value whose descriptor names no
performative is not one (an empty frame, with no body, is allowed: 2.3.2/2). Reading works
the other way too: the frame header's DOFF "gives the position of the body within the frame"
(2.3.1), past an extended header that is "an extension point defined for future expansion"
(2.3) -- a client that parses frames "in accordance with the format" (0.2/1) finds it there;
and it takes a frame's extent from its SIZE, however the stream was cut into TCP segments.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from amqpspec.case import Context, case
from amqpspec.client.session import Play
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.wire.amqp10 import AMQPFrame, encode

from ._client import await_sender, client_closed, named, needs_driver, open_conversation, unmet


@case("amqp10/2.3.1/client-frames-decode", role="client",
      title="everything the client sends after its AMQP header (a send workload) decodes as AMQP 1.0 frames of the size they announce",
      clauses=("amqp10:2.3.1/1", "amqp10:2.2/2"))
def frames_decode(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    if obs.framing_error is None and not named(obs.received, "begin"):
        unmet("a begin from the client", obs)
    ctx.record(obs.framing_error is None, expected="every frame decodable, each exactly its SIZE",
               observed=f"undecodable: {obs.framing_error}" if obs.framing_error else
               f"{len(obs.received)} frame(s) decoded; {client_closed(obs)}")
    p.finish()


@case("amqp10/2.3.2/client-sends-only-performatives", role="client",
      title="every AMQP frame with a body the client sends (a send workload) carries one of the defined performatives",
      clauses=("amqp10:2.3.2/1",))
def only_performatives(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1)
    obs = p.serve()
    frames = [f for f in obs.received if isinstance(f, AMQPFrame)]
    if not named(frames, "begin"):
        unmet("a begin from the client", obs)
    # the reader decodes a described value it knows as no performative into a body without a NAME
    odd = [f for f in frames if f.performative is not None and performative_name(f) is None]
    ctx.record(not odd, expected="a performative (open, begin, attach ... close) in every frame body",
               observed="; ".join(f"channel {f.channel}: {str(f.performative)[:80]}" for f in odd[:3]) or
               f"{len(frames)} AMQP frame(s), each a performative")
    p.finish()


EXTENDED = b"\x00" * 4   # one 4-octet word of extended header: DOFF 3


def _delivered_whole(ctx: Context, body: str, send: Callable[[Play, list[AMQPFrame]], None]) -> None:
    """The receive workload is given one message ``body``, its transfer frames sent by ``send``
    (in an unusual but valid form): the application gets it whole, and the client raises no error."""
    p = open_conversation(ctx, "receive", count=1, credit=1)
    _, snd = await_sender(p)
    send(p, snd.transfer_frames(body))
    obs = p.serve()
    errors = [f for f in obs.received if error_condition(getattr(f, "performative", None))]
    out = needs_driver(p)
    got = [str(e.get("body", "")) for e in out.named("delivered")]
    ctx.record(not errors and got[:1] == [body], expected=f"{body!r} delivered, no error",
               observed=f"delivered {got[:1] or 'nothing'}; {client_closed(obs)}")


@case("amqp10/2.3.1/client-skips-extended-header", role="client",
      title="a message in a transfer frame with 4 octets of extended header (DOFF 3) is delivered whole, no error",
      clauses=("amqp10:0.2/1",),
      guideline="Byte 4 of the frame header is the data offset. This gives the position of the body within the frame.")
def skips_extended_header(ctx: Context) -> None:
    # "parse ... frames in accordance with the format" (0.2/1): the extended header is "an
    # extension point defined for future expansion" (2.3), and DOFF says where the body starts
    _delivered_whole(ctx, "after an extended header",
                     lambda p, frames: p.peer.send(*[dataclasses.replace(f, extended=EXTENDED) for f in frames]))


@case("amqp10/2.3.1/client-reassembles-split-frames", role="client",
      title="a message whose transfer frame arrives one octet per TCP segment is delivered whole, no error",
      clauses=("amqp10:0.2/1",),
      guideline="Bytes 0-3 of the frame header contain the frame size.")
def reassembles_split_frames(ctx: Context) -> None:
    # the frame's SIZE, not how TCP happens to cut the stream, delimits a frame: parsing "in
    # accordance with the format" (0.2/1) reassembles what arrives in pieces
    _delivered_whole(ctx, "one octet at a time",
                     lambda p, frames: p.peer.send_slowly(b"".join(encode(f) for f in frames), chunk=1, pause=0.003))
