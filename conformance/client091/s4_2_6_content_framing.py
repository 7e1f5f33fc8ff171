"""4.2.6 Content framing, as the client receives deliveries.

The content rules name "a peer": "A peer MUST handle a content body that is split into
multiple frames" (4.2.6.2/1) -- here 10 000 octets in 100-octet frames, which the library
must hand to its application whole; "A peer that receives an incomplete or badly-formatted
content MUST raise a connection exception with reply code 505" (4.2.6/1); "The class-id MUST
match the method frame class id" and "The peer MUST respond to an invalid class-id by
raising a connection exception with reply code 501" (4.2.6.1/1-2); "A peer that receives a
zero channel number in a content frame MUST signal a connection exception with reply code
504" (4.2.6.1/4). Where two of these MUSTs describe the same frame they disagree on the
code, and either passes, as on the broker side: a header of the wrong class is also badly
formatted content (501 or 505); a content frame on channel 0 is also a content without its
method (504 or 505). A property flag for no defined property (bit 1 of the flags word) is
named by no MUST: "Invalid data can be handled unambiguously, by closing the channel or the
connection" (4.10.1) -- refusing it in any of those ways passes, accepting it is recorded.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.verify import ConnectionException
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec

from ._client import QUICK, check, error_closes, needs_driver, open_conversation, unmet


INVALID_DATA = "Invalid data can be handled unambiguously, by closing the channel or the connection."


def _consumer(ctx: Context, **options: object):  # type: ignore[no-untyped-def]
    p = open_conversation(ctx, "consume", count=1, **options)
    first = p.serve(QUICK * 2, stop=lambda f: isinstance(f, MethodFrame) and f.method.NAME == "basic.consume")
    consumer = next(iter(p.responder.consumers.values()), None)
    if consumer is None:
        unmet("basic.consume", first)
    return p, consumer


def _refused(ctx: Context, p, expectation: ConnectionException) -> None:  # type: ignore[no-untyped-def]
    """Watches the client's reaction to the content just sent (two quick windows) and judges it."""
    check(ctx, p.serve(QUICK * 2), expectation)
    p.finish()


def _deliver(p, consumer, *content):  # type: ignore[no-untyped-def]
    ch = consumer.channel
    p.peer.send(MethodFrame(ch, spec.BasicDeliver(consumer.tag, 1, False, "", consumer.queue)), *content)


@case("amqp091/4.2.6.2/client-joins-split-body", role="client",
      title="a 10 000-octet body in 100 body frames reaches the application whole",
      clauses=("amqp091:4.2.6.2/1",))
def joins_split_body(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    body = bytes(ord("a") + i % 26 for i in range(10_000))
    ch = consumer.channel
    pieces = [BodyFrame(ch, body[i:i + 100]) for i in range(0, len(body), 100)]
    _deliver(p, consumer, HeaderFrame(ch, 60, len(body), spec.BasicProperties()), *pieces)
    p.serve()
    out = needs_driver(p)
    got = out.named("delivered")
    # event strings are kept capped, with their full length beside them
    shown = str(got[0].get("body", "")) if got else ""
    length = got[0].get("body_length", len(shown)) if got else 0
    ok = bool(got) and length == len(body) and body.decode().startswith(shown.split("... (")[0])
    ctx.record(ok, expected=f"one delivery whose body is the {len(body)} octets sent",
               observed=f"delivered a body of {length} characters starting {shown[:40]!r}" if got else out.summary())


@case("amqp091/4.2.6/client-rejects-incomplete-content", role="client",
      title="a deliver followed by another deliver instead of its content header is refused with 505",
      clauses=("amqp091:4.2.6/1",))
def incomplete_content(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    _deliver(p, consumer)
    _deliver(p, consumer, *p.peer.content_frames(ch, b"second"))
    _refused(ctx, p, ConnectionException(505))


@case("amqp091/4.2.6/client-rejects-body-past-size", role="client",
      title="a body frame longer than the header's body-size is refused with 505",
      clauses=("amqp091:4.2.6/1",))
def body_past_size(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    _deliver(p, consumer, HeaderFrame(ch, 60, 5, spec.BasicProperties()), BodyFrame(ch, b"0123456789"))
    _refused(ctx, p, ConnectionException(505))


@case("amqp091/4.2.6.1/client-rejects-class-mismatch", role="client",
      title="a content header of class 50 after basic.deliver is refused with 501 (4.2.6.1) or 505 (4.2.6)",
      clauses=("amqp091:4.2.6.1/1", "amqp091:4.2.6.1/2", "amqp091:4.2.6/1"))
def class_mismatch(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    _deliver(p, consumer, HeaderFrame(ch, 50, 2, raw_properties=b"\x00\x00"), BodyFrame(ch, b"hi"))
    _refused(ctx, p, ConnectionException(501, 505))


@case("amqp091/4.2.6.1/client-rejects-content-on-channel-zero", role="client",
      title="a content header on channel 0 is refused with 504 (4.2.6.1) or 505 (4.2.6)",
      clauses=("amqp091:4.2.6.1/4", "amqp091:4.2.6/1"))
def content_channel_zero(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    _deliver(p, consumer, HeaderFrame(0, 60, 2, spec.BasicProperties()), BodyFrame(0, b"hi"))
    _refused(ctx, p, ConnectionException(504, 505))


@case("amqp091/4.2.6/client-rejects-unknown-property-flag", role="client",
      title="a content header flagging a property no class defines (bit 1) is refused (channel or connection)",
      guideline=INVALID_DATA)
def unknown_property_flag(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    _deliver(p, consumer, HeaderFrame(ch, 60, 2, raw_properties=b"\x00\x02"), BodyFrame(ch, b"hi"))
    obs = p.serve(QUICK * 2)
    errors = error_closes(obs)
    dropped = obs.closed and not obs.methods("connection.close")
    ctx.record(bool(errors) or dropped, guideline=INVALID_DATA,
               expected="the channel or the connection closed with an error code, or the socket closed",
               observed=obs.describe().replace("by broker", "by the client"))
    p.finish()


@case("amqp091/4.2.6/client-rejects-body-without-header", role="client",
      title="a content body frame with no delivery or header before it is refused with 505",
      clauses=("amqp091:4.2.6/1",))
def body_without_header(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    p.peer.send(BodyFrame(consumer.channel, b"stray body"))
    _refused(ctx, p, ConnectionException(505))


@case("amqp091/4.2.6/client-rejects-header-without-method", role="client",
      title="a content header with no basic.deliver before it is refused with 505",
      clauses=("amqp091:4.2.6/1",))
def header_without_method(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    p.peer.send(HeaderFrame(ch, 60, 2, spec.BasicProperties()), BodyFrame(ch, b"hi"))
    _refused(ctx, p, ConnectionException(505))


@case("amqp091/4.2.6/client-rejects-method-inside-body", role="client",
      title="a method between the body frames of a delivery is refused with 505",
      clauses=("amqp091:4.2.6/1",))
def method_inside_body(ctx: Context) -> None:
    p, consumer = _consumer(ctx)
    ch = consumer.channel
    _deliver(p, consumer, HeaderFrame(ch, 60, 10, spec.BasicProperties()), BodyFrame(ch, b"12345"))
    _deliver(p, consumer, *p.peer.content_frames(ch, b"second"))
    _refused(ctx, p, ConnectionException(505))


@case("amqp091/4.2.6.2/client-joins-split-get-body", role="client",
      title="a basic.get-ok whose 3000-octet body comes in 30 frames reaches the application whole",
      clauses=("amqp091:4.2.6.2/1",))
def joins_split_get_body(ctx: Context) -> None:
    p = open_conversation(ctx, "get", count=1)
    body = bytes(ord("A") + i % 26 for i in range(3000))

    def split_get_ok(frame: MethodFrame) -> bool:
        ch = frame.channel
        p.peer.send(MethodFrame(ch, spec.BasicGetOk(1, False, "", str(frame.method.queue), 0)),
                    HeaderFrame(ch, 60, len(body), spec.BasicProperties()),
                    *[BodyFrame(ch, body[i:i + 100]) for i in range(0, len(body), 100)])
        return False

    p.responder.on("basic.get", split_get_ok)
    p.serve()
    out = needs_driver(p)
    got = out.named("delivered")
    shown = str(got[0].get("body", "")) if got else ""
    length = got[0].get("body_length", len(shown)) if got else 0
    ok = bool(got) and length == len(body) and body.decode().startswith(shown.split("... (")[0])
    ctx.record(ok, expected=f"one message whose body is the {len(body)} octets sent",
               observed=f"delivered a body of {length} characters starting {shown[:40]!r}" if got else out.summary())


ZERO_OR_MORE = ("When a peer sends such a method frame, it always follows it with a content header and zero or more "
                "content body frames.")


@case("amqp091/4.2.6/client-takes-empty-body", role="client",
      title="a delivery of body-size 0 (a content header and no body frame) reaches the application, and so does "
            "the next one",
      guideline=ZERO_OR_MORE)
def takes_empty_body(ctx: Context) -> None:
    """A content is a header "and zero or more content body frames": with body-size 0 the
    header alone completes it. A client that waits for a body frame takes the next delivery's
    method as a method inside a content, or joins the two messages."""
    p = open_conversation(ctx, "consume", count=2, ack=True)
    p.responder.preload("amqpspec-q", ["", "after the empty one"])
    p.serve()
    out = needs_driver(p)
    got = out.named("delivered")
    bodies = [str(e.get("body", "")) for e in got]
    ok = bodies[:2] == ["", "after the empty one"]
    ctx.record(ok, expected="two deliveries: body '' and then 'after the empty one'",
               observed=f"delivered bodies {bodies[:3]}" if got else out.summary(), guideline=ZERO_OR_MORE)
