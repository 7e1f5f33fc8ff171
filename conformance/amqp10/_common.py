"""What every AMQP 1.0 case module shares: waits, unique names, and the error-condition check.

Sessions and links are the framework's (amqpspec.peer.session10); case modules use them
directly. Addresses are plain unique names, which both RabbitMQ's 1.0 plugin (as a queue
name) and the Qpid Proton example broker accept; they are registered for deletion.
"""
from __future__ import annotations

from amqpspec.case import Context
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, error_condition
from amqpspec.wire.amqp10 import spec

WAIT = 3.0               # seconds for something a correct broker sends at once
REACTION_WINDOW = 5.0    # for a reaction that must come (a close after an error)
MIN_MAX_FRAME_SIZE = 512  # the max-frame-size every peer accepts: 2.7.1 (AMQP frames), 5.3.1 (SASL frames)

STATE_ERRORS = (str(spec.AmqpError.ILLEGAL_STATE), str(spec.AmqpError.NOT_ALLOWED))
STATE_ERROR_TEXT = ("amqp:illegal-state: The peer sent a frame that is not permitted in the current state. / "
                    "amqp:not-allowed: The peer tried to use a frame in a manner that is inconsistent with the "
                    "semantics defined in the specification.")


# ---------------------------------------------------------------------------------------- names
def address(ctx: Context, what: str = "q") -> str:
    """A node address unique to this case and run, registered for cleanup."""
    name = ctx.name(f"{what}{ctx.rng.getrandbits(24):06x}")
    ctx.will_delete("queue", name)
    return name


def link_name(ctx: Context, what: str = "link") -> str:
    """A link name unique to this case and run (link names identify links across connections, 2.6.1)."""
    return ctx.name(f"{what}-{ctx.rng.getrandbits(32):08x}")


def token(ctx: Context, what: str = "msg") -> str:
    """A message body unique to this case and run, to recognise the message when it comes back."""
    return f"{ctx.name(what)}-{ctx.rng.getrandbits(40):010x}"


def token_octets(ctx: Context, what: str = "msg") -> bytes:
    """A ``token`` as octets, to find a message again among others by its payload."""
    return token(ctx, what).encode()


def tag(ctx: Context) -> bytes:
    """A delivery-tag (8 random octets from the case's seeded generator)."""
    return ctx.rng.getrandbits(64).to_bytes(8, "big")


# ---------------------------------------------------------------------------------------- checks
def record_error_condition(ctx: Context, obs: Observation, performative: str, conditions: tuple[str, ...], text: str,
                           *, what: str, channel: int | None = None) -> None:
    """The guideline check of an error condition the error definitions suggest, made only when a
    ``performative`` (close, end, detach) with an error came: its absence is another check's failure."""
    errors = [error_condition(f.performative) for f in obs.performatives(performative, channel)
              if error_condition(f.performative)]
    if not errors:
        return
    # level=SHOULD is a ceiling: the quoted text's own level decides when weaker (a definition)
    ctx.record(errors[0] in conditions, expected=f"{performative} with error {' or '.join(conditions)}",
               observed=obs.describe(), what=what, level=Level.SHOULD, guideline=text)
