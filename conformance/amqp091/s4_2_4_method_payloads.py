"""Spec 4.2.4 Method Payloads: class-id, method-id, then the method's arguments.

No RFC 2119 sentence says how a server answers a method payload it cannot decode or a
class/method it does not know; what these cases check is the meaning the XML gives its
reply codes: a payload that cannot be decoded is a frame-error (501) or a syntax-error
(502), a class-id or method-id the server does not define is command-invalid (503) or
not-implemented (540). Each is a connection exception ("hard-error" class in the XML). That
glossary defines what a code means, not when a server must send it, and no MUST or SHOULD
sentence of 4.2.4 or the XML decides these reactions; so the cases cite no clause, give the
reply-code text as their guideline, and weigh MAY: a broker that reacts otherwise is recorded
as informational, not warned.
Each faulty frame is followed by a basic.qos on the same channel, so a broker that ignores
the fault answers it at once and the case ends without waiting out its window.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ConnectionException
from amqpspec.wire.amqp091 import MethodFrame, RawFrame, UnknownMethod, spec

from ._common import REACTION_WINDOW, with_channel

MALFORMED = ('frame-error (501): "The sender sent a malformed frame that the recipient could not decode. '
             'This strongly implies a programming error in the sending peer." '
             'syntax-error (502): "The sender sent a frame that contained illegal values for one or more '
             'fields. This strongly implies a programming error in the sending peer."')
UNKNOWN = ('"The class-id and method-id are constants that are defined in the AMQP class and method '
           'specifications." [4.2.4] command-invalid (503): "The client sent an invalid sequence of frames, attempting '
           'to perform an operation that was considered invalid by the server. This usually implies a '
           'programming error in the client." not-implemented (540): "The client tried to use functionality '
           'that is not implemented in the server."')


def _declare(ctx: Context, **arguments: object) -> spec.QueueDeclare:
    """An exclusive, auto-delete queue.declare with a name of the case's own; whatever a
    broker makes of a damaged copy goes with the connection, and is deleted after the case."""
    name = ctx.name("q")
    if ("queue", name) not in ctx.cleanup:
        ctx.will_delete("queue", name)
    return spec.QueueDeclare(queue=name, exclusive=True, auto_delete=True, arguments=arguments or None)


def _observe_channel(peer: Peer, channel: int) -> Observation:
    """Observes the reaction to what was just sent on ``channel``, ending as soon as it is
    known: a basic.qos sent next on the same channel is answered only if the broker went on
    after the faulty frame (a probe on a fresh channel would not prove it on brokers that run
    channels concurrently)."""
    peer.send(MethodFrame(channel, spec.BasicQos(0, 0, False)))
    return peer.observe(REACTION_WINDOW, stop=lambda item: isinstance(item, MethodFrame) and (
        (item.method.NAME == "basic.qos-ok" and item.channel == channel)
        or item.method.NAME in ("connection.close", "channel.close")))


def _send_payload(ctx: Context, payload: bytes) -> None:
    """Sends ``payload`` as the whole payload of a method frame (size and frame-end correct)
    on an open channel; passes on a connection exception 501 or 502."""
    peer, ch = with_channel(ctx)
    peer.send(RawFrame(ch, type=spec.FRAME_METHOD, data=payload))
    ctx.check(_observe_channel(peer, ch), ConnectionException(501, 502))


# ---------------------------------------------------------------------------- undecodable payloads
@case("amqp091/4.2.4/truncated-table", title="a queue.declare cut in the middle of its arguments table is a "
      "connection exception 501 or 502", guideline=MALFORMED)
def truncated_table(ctx: Context) -> None:
    """Sends queue.declare (exclusive, own name) with a one-entry arguments table, cut in the
    middle of that table: the table's length field promises octets that the frame, whose size
    and frame-end are correct, does not hold. Passes on connection.close with 501 or 502."""
    method = _declare(ctx, **{"x-amqpspec": "truncated"})
    payload = method.encode()
    table_at = len(method.replace(arguments=None).encode()) - 4  # the table's 4-octet length field
    _send_payload(ctx, payload[: table_at + 4 + (len(payload) - table_at - 4) // 2])


@case("amqp091/4.2.4/truncated-short-string", title="a queue.declare cut in the middle of its queue name is a "
      "connection exception 501 or 502", guideline=MALFORMED)
def truncated_short_string(ctx: Context) -> None:
    """Sends queue.declare whose payload ends in the middle of the queue name: the short
    string's length octet promises more octets than the frame holds. Passes on
    connection.close with 501 or 502."""
    method = _declare(ctx)
    payload = method.encode()
    name_at = 4 + 2 + 1  # class-id, method-id, reserved-1 (short), then the name's length octet
    _send_payload(ctx, payload[: name_at + len(str(method.queue)) // 2])


@case("amqp091/4.2.4/payload-two-octets", title="a method payload of 2 octets (no method-id) is a connection "
      "exception 501 or 502", guideline=MALFORMED)
def payload_two_octets(ctx: Context) -> None:
    """Sends a method frame whose 2-octet payload is the class-id of queue (50) alone, shorter
    than the 4 octets of class-id and method-id every method payload starts with. Passes on
    connection.close with 501 or 502."""
    _send_payload(ctx, spec.QueueDeclare.CLASS_ID.to_bytes(2, "big"))


@case("amqp091/4.2.4/payload-empty", title="an empty method payload is a connection exception 501 or 502",
      guideline=MALFORMED)
def payload_empty(ctx: Context) -> None:
    """Sends a method frame with size 0: no class-id, no method-id. Passes on connection.close
    with 501 or 502."""
    _send_payload(ctx, b"")


@case("amqp091/4.2.4/trailing-octets", title="two octets after the last argument of queue.declare are a "
      "connection exception 501 or 502", guideline=MALFORMED)
def trailing_octets(ctx: Context) -> None:
    """Sends a complete queue.declare (exclusive, own name) followed, inside the same frame,
    by two extra octets "xx" (size and frame-end count them, so the envelope is correct).
    Method arguments are an invariant list: the frame does not decode. Passes on
    connection.close with 501 or 502; queue.declare-ok does not."""
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, _declare(ctx), trailing=b"xx"))
    ctx.check(_observe_channel(peer, ch), ConnectionException(501, 502))


# ---------------------------------------------------------------------------- unknown ids
def _send_unknown(ctx: Context, class_id: int, method_id: int) -> None:
    peer, ch = with_channel(ctx)
    peer.send(MethodFrame(ch, UnknownMethod(class_id, method_id)))
    ctx.check(_observe_channel(peer, ch), ConnectionException(503, 540))


@case("amqp091/4.2.4/unknown-class", title="an undefined class-id (9999) is a connection exception 503 or 540",
      guideline=UNKNOWN)
def unknown_class(ctx: Context) -> None:
    """Sends a method frame with class-id 9999 (in the range reserved for standard classes,
    none defined there) and method-id 10, no arguments. Passes on connection.close with 503
    or 540; a channel exception does not (both codes are hard errors)."""
    _send_unknown(ctx, 9999, 10)


@case("amqp091/4.2.4/extension-class", title="an extension class-id (0xF000) the broker does not define is a "
      "connection exception 503 or 540", guideline=UNKNOWN)
def extension_class(ctx: Context) -> None:
    """Sends a method frame with class-id 0xF000 (61440, the first id 4.2.4 leaves to
    implementations for extension classes) and method-id 10, no arguments. Unless the broker
    implements such a class, passes on connection.close with 503 or 540."""
    _send_unknown(ctx, 0xF000, 10)


@case("amqp091/4.2.4/unknown-method", title="an undefined method-id of the queue class (99) is a connection "
      "exception 503 or 540", guideline=UNKNOWN)
def unknown_method(ctx: Context) -> None:
    """Sends a method frame with class-id 50 (queue) and method-id 99, which queue does not
    define, no arguments. Passes on connection.close with 503 or 540."""
    _send_unknown(ctx, spec.QueueDeclare.CLASS_ID, 99)
