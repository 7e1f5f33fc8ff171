"""Spec 2.7.2 Begin (transport): remote-channel, channel and handle limits, begins that fit no session.

The limits a begin and an open announce bind the partner: a channel above the broker's
channel-max, or a handle above its handle-max, is a framing-error of the connection (2.7.1,
2.7.2); and the broker must keep within the handle-max of our begin. A begin on a channel
that already carries a session, or one answering a session the broker never began, fits no
transition of the session state machine (2.5.5): the text names no reaction, so those checks
are guidelines.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import error_condition, performative_name
from amqpspec.peer.session10 import begin, begin_frame
from amqpspec.verify10 import ConnectionError
from amqpspec.wire.amqp10 import AMQPFrame, spec

from ._common import REACTION_WINDOW, STATE_ERROR_TEXT, STATE_ERRORS, WAIT, address, link_name, record_error_condition
from ._connection import FRAMING_ERROR
from ._sessions import ends_or_attach

HANDLE_MAX_DEFAULT = (1 << 32) - 1


@case("amqp10/2.7.2/channel-above-channel-max", title="a begin on a channel above the broker's channel-max is a framing-error",
      clauses=("amqp10:2.7.1/8",))
def channel_above_channel_max(ctx: Context) -> None:
    """Sends a begin on the channel one above the channel-max of the broker's open. Passes when the broker
    closes the connection with amqp:connection:framing-error. Skipped when the broker's channel-max is
    65535 (no channel number lies above it)."""
    peer = ctx.connect()
    top = int(peer.opened.channel_max)
    if top >= 0xFFFF:
        ctx.skip("the broker's channel-max is 65535: no channel number lies outside its range")
    peer.send(begin_frame(top + 1))
    obs = peer.observe(REACTION_WINDOW, probe=True)
    ctx.check(obs, ConnectionError(FRAMING_ERROR))


@case("amqp10/2.7.2/handle-above-handle-max", title="an attach with a handle above the broker's handle-max is a framing-error",
      clauses=("amqp10:2.7.2/4",))
def handle_above_handle_max(ctx: Context) -> None:
    """Attaches a link with the handle one above the handle-max of the broker's begin. Passes when the
    broker closes the connection with amqp:connection:framing-error. Skipped when the broker's
    handle-max is 2^32-1 (no handle lies above it)."""
    s = begin(ctx.connect())
    top = int(s.begin.value_of("handle-max"))
    if top >= HANDLE_MAX_DEFAULT:
        ctx.skip("the broker's handle-max is 4294967295: no handle lies outside its range")
    name = s.sender(address(ctx), name=link_name(ctx, "high"), handle=top + 1, wait=False).name
    obs = s.peer.observe(REACTION_WINDOW, stop=ends_or_attach(s, name))
    ctx.check(obs, ConnectionError(FRAMING_ERROR))


@case("amqp10/2.7.2/broker-within-our-handle-max", title="the broker attaches no link with a handle above the handle-max of our begin",
      clauses=("amqp10:2.7.2/3",))
def broker_within_our_handle_max(ctx: Context) -> None:
    """Begins a session announcing handle-max 0 and attaches two sending links (our handles 0 and 1, within
    the broker's handle-max), then detaches the first. Passes when no frame of the broker on the session
    carries a handle above 0: the broker may refuse the second link in any way, but not attach it on
    handle 1 or above."""
    s = begin(ctx.connect(), handle_max=0)
    peer = s.peer
    first = s.sender(address(ctx), name=link_name(ctx, "snd"), handle=0)
    s.sender(address(ctx), name=link_name(ctx, "second"), handle=1, wait=False)
    first.detach()

    def high(item: Any) -> bool:
        h = getattr(getattr(item, "performative", None), "handle", None)
        return isinstance(item, AMQPFrame) and item.channel == s.remote and h is not None and int(h) > 0
    obs = peer.observe(WAIT, stop=lambda f: high(f) or performative_name(f) in ("close", "detach")
                       or (performative_name(f) == "end" and f.channel == s.remote))
    if obs.end == "stopped" and performative_name(obs.received[-1]) == "detach":
        obs.received += peer.observe(0.3, stop=high).received
    above = [f for f in obs.frames() if high(f)]
    ctx.record(not above, expected="no frame on the session with a handle above 0", observed=obs.describe())


@case("amqp10/2.7.2/begin-on-channel-in-use", title="a second begin on a channel already carrying a session is an error",
      guideline="Sessions are established by creating a session endpoint, assigning it to an unused channel number, "
                "and sending a begin announcing the association of the session endpoint with the outgoing channel.")
def begin_on_channel_in_use(ctx: Context) -> None:
    """Begins a session, then sends another begin on the same channel. Passes when the broker answers with
    an error (an end of the session, or a close of the connection) and begins no second session for that
    channel; a guideline check prefers amqp:illegal-state or amqp:not-allowed."""
    s = begin(ctx.connect())
    peer = s.peer
    peer.send(s.begin_frame())   # a second begin of the same session endpoint, on its channel
    obs = peer.observe(REACTION_WINDOW, stop=lambda f: performative_name(f) == "close"
                       or (performative_name(f) == "end" and f.channel == s.remote)
                       or (performative_name(f) == "begin" and f.performative.remote_channel == s.ch))
    second = [f for f in obs.performatives("begin") if f.performative.remote_channel == s.ch]
    errors = [f for f in obs.performatives("end", s.remote) + obs.performatives("close")
              if error_condition(f.performative)]
    ctx.record(bool(errors) and not second, expected=f"end on channel {s.remote} or close, with an error; no second "
               f"begin for channel {s.ch}", observed=obs.describe())
    record_error_condition(ctx, obs, "end", STATE_ERRORS, STATE_ERROR_TEXT, what="error condition (end)",
                           channel=s.remote)
    record_error_condition(ctx, obs, "close", STATE_ERRORS, STATE_ERROR_TEXT, what="error condition (close)")


INVALID_REMOTE = STATE_ERRORS + (str(spec.AmqpError.INVALID_FIELD),)


@case("amqp10/2.7.2/begin-answering-no-session", title="a begin whose remote-channel names no session of the broker closes the connection",
      level=Level.SHOULD,
      guideline="The remote-channel field of a begin frame MUST be empty for a locally initiated session, and MUST be "
                "set when announcing the endpoint created as a result of a remotely initiated session.")
def begin_answering_no_session(ctx: Context) -> None:
    """Sends a begin with remote-channel 7, as if answering a session the broker began on its channel 7,
    which it never did. Passes when the broker closes the connection with an error (there is no session
    it could end); a guideline check prefers amqp:illegal-state, amqp:not-allowed or amqp:invalid-field.
    Treating the frame as a new session (a begin in answer) fails."""
    s = begin(ctx.connect(), remote_channel=7, wait=False)
    obs = s.peer.observe(REACTION_WINDOW, probe=True)
    ctx.check(obs, ConnectionError())
    record_error_condition(ctx, obs, "close", INVALID_REMOTE,
                           STATE_ERROR_TEXT + " / amqp:invalid-field: An invalid field was passed in a frame body, and "
                           "the operation could not proceed.", what="error condition")
