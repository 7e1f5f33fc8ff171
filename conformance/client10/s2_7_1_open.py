"""2.7.1 Open: the limits the server's open sets, respected by the client.

"After sending the open frame and reading its partner's open frame a peer MUST operate
within mutually acceptable limitations from this point forward" (2.4.1/2): "A peer MUST NOT
send frames larger than its partner can handle" (2.7.1/4) -- with max-frame-size 512, a
2000-octet message reaches us in transfers of at most 512 octets; "A peer MUST not use
channel numbers outside the range that its partner can handle" (2.7.1/7) -- with
channel-max 0 every begin is on channel 0. The receiving rules bind the client too: "A peer
that receives an oversized frame MUST close the connection with the framing-error
error-code" (2.7.1/5), and likewise a channel number outside the range it announced
(2.7.1/8); "Both peers MUST accept frames of up to MIN-MAX-FRAME-SIZE octets" (2.7.1/6).
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.peer.amqp10 import error_condition
from amqpspec.verify10 import ConnectionError as CloseWith
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._client import QUICK, await_receiver, await_sender, check, client_closed, named, needs_driver, \
    open_conversation, unmet

BIG = 2000
MIN_MAX_FRAME_SIZE = 512


@case("amqp10/2.7.1/client-respects-max-frame-size", role="client",
      title="with the server's max-frame-size 512 a 2000-octet message is sent in frames of at most 512 octets",
      clauses=("amqp10:2.7.1/4", "amqp10:2.4.1/2"))
def respects_max_frame_size(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, body="b" * BIG, handshake={"max_frame_size": MIN_MAX_FRAME_SIZE})
    obs = p.serve()
    over = p.peer.oversized(MIN_MAX_FRAME_SIZE)
    transfers = named(obs.received, "transfer")
    if not transfers and not over and obs.framing_error is None:
        unmet("a transfer from the client", obs)
    if obs.framing_error:
        over.append((obs.framing_error, 0))
    ctx.record(not over, expected=f"every frame at most {MIN_MAX_FRAME_SIZE} octets",
               observed="; ".join(f"{s[:80]} ({n} octets)" for s, n in over[:3]) or
               f"{len(transfers)} transfer frame(s), none oversized")
    p.finish()


@case("amqp10/2.7.1/client-respects-channel-max", role="client",
      title="with the server's channel-max 0 the client begins its session on channel 0",
      clauses=("amqp10:2.7.1/7", "amqp10:2.4.1/2"))
def respects_channel_max(ctx: Context) -> None:
    p = open_conversation(ctx, "send", count=1, handshake={"channel_max": 0})
    obs = p.serve()
    begins = named(obs.received, "begin")
    if not begins:
        unmet("a begin from the client", obs)
    wrong = [f for f in obs.received if getattr(f, "channel", 0) > 0]
    ctx.record(not wrong, expected="every frame on channel 0", observed="; ".join(f.summary()[:100] for f in wrong[:3])
               or f"{len(begins)} begin(s), all on channel 0")
    p.finish()


@case("amqp10/2.7.1/client-accepts-min-max-frame-size", role="client",
      title="a message delivered in frames of exactly 512 octets (MIN-MAX-FRAME-SIZE) is received whole",
      clauses=("amqp10:2.7.1/6",))
def accepts_min_frames(ctx: Context) -> None:
    body = "m" * 1500
    p = open_conversation(ctx, "receive", count=1, credit=1)
    _, snd = await_sender(p)
    frames = snd.transfer_frames(body, max_frame_size=MIN_MAX_FRAME_SIZE)
    p.peer.send(*frames)
    obs = p.serve()
    errors = [f for f in obs.received if error_condition(getattr(f, "performative", None))]
    out = needs_driver(p)
    got = [e for e in out.named("delivered")]
    whole = bool(got) and (got[0].get("body_length", len(str(got[0].get("body", "")))) == len(body))
    ctx.record(not errors and whole, expected=f"the {len(body)}-character body delivered whole from "
               f"{len(frames)} frames of at most {MIN_MAX_FRAME_SIZE} octets, no error",
               observed=(f"delivered {len(got)} message(s)" + (f", first of length {got[0].get('body_length', len(str(got[0].get('body', ''))))}" if got else "")
                         + f"; {client_closed(obs)}"))


@case("amqp10/2.7.1/client-closes-on-oversized-frame", role="client",
      title="a frame larger than the client's max-frame-size makes it close with amqp:connection:framing-error",
      clauses=("amqp10:2.7.1/5",))
def oversized(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1)
    limit = int(p.peer.negotiated.client_open.value_of("max-frame-size")) if p.peer.negotiated.client_open else 0
    if not limit or limit >= (1 << 22):
        p.finish(0.2)
        raise Skip(f"the client's max-frame-size ({limit}) is too large to exceed here")
    _, snd = await_sender(p)
    frames = snd.transfer_frames("o" * (limit + 100), max_frame_size=limit + 1024)
    p.peer.send(*frames)
    obs = p.serve(QUICK * 2)
    check(ctx, obs, CloseWith("amqp:connection:framing-error"))
    p.finish()


@case("amqp10/2.7.1/client-closes-on-channel-beyond-max", role="client",
      title="a frame on a channel above the client's channel-max makes it close with amqp:connection:framing-error",
      clauses=("amqp10:2.7.1/8",))
def channel_beyond(ctx: Context) -> None:
    p = open_conversation(ctx, "receive", count=1, credit=1)
    cmax = int(p.peer.negotiated.client_open.value_of("channel-max")) if p.peer.negotiated.client_open else 65535
    if cmax >= 65535:
        p.finish(0.2)
        raise Skip("the client's channel-max is 65535: no channel number lies beyond it")
    await_sender(p)
    p.peer.send(AMQPFrame(cmax + 1, spec.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=0,
                                              outgoing_window=10)))
    obs = p.serve(QUICK * 2)
    check(ctx, obs, CloseWith("amqp:connection:framing-error"))
    p.finish()


__all__ = ["await_receiver"]


@case("amqp10/2.7.1/client-frames-fit-before-open", role="client",
      title="before the server's open the client's frames (its open included) fit in 512 octets, all a partner must accept",
      clauses=("amqp10:2.7.1/4",))
def fits_before_open(ctx: Context) -> None:
    p = open_conversation(ctx, "connect")
    early = list(p.peer.sizes)   # every frame read so far: SASL frames and the open, read before we answered
    over = [(s, n) for s, n in early if n > MIN_MAX_FRAME_SIZE]
    ctx.record(not over, expected=f"no frame above {MIN_MAX_FRAME_SIZE} octets before the server's max-frame-size is known",
               observed="; ".join(f"{s[:80]} ({n} octets)" for s, n in over[:2]) or f"{len(early)} frame(s), none above")
    p.serve()
    p.finish()
