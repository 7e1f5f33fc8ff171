"""Spec 4.2.5 AMQP Data Fields: strings, field tables, and the type codes of field values.

Field names MUST follow a small grammar (4.2.5.5/1) and a server SHOULD refuse others with a
connection exception (4.2.5.5/2). Lengths are never to be trusted (4.10.1: invalid data is
handled by closing the channel or the connection). Message headers are field tables inside a
content header, which the server MUST NOT modify (3.1.1/2): every value sent in them must come
back with the same type code and the same octets. Where the spec and the deployed brokers read
a type code differently (errata section 3: 's' is a short string in 0-9-1 but a signed 16-bit
integer in RabbitMQ/Qpid), refusing the table is accepted; changing it is not.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.verify import ConnectionException
from amqpspec.wire.amqp091 import RABBITMQ, SPEC, Dialect, FieldValue, MethodFrame, Sized, spec
from amqpspec.wire.amqp091.base import Method

from ._common import REACTION_WINDOW, with_channel
from ._raw_content import (
    INVALID_DATA, VALID_TYPES, Message, decode_headers, fetch, header_differences, not_delivered, note_close,
    publish, queue_for, refused,
)

NAMES = ("amqp091:4.2.5.5/1", "amqp091:4.2.5.5/2")
NAME_REACTION = ("amqp091:4.2.5.5/2",)
UNMODIFIED = ("amqp091:3.1.1/2",)
INVALID_DATA_4_10_1 = INVALID_DATA + " [4.10.1]"


# ----------------------------------------------------------------------------- helpers

def declare_reaction(peer: Peer, channel: int, method: Method, window: float = REACTION_WINDOW) -> Observation:
    """Sends a queue.declare and collects the broker's reaction; declare-ok counts as the
    liveness probe (the broker processed the method and kept channel and connection open)."""
    peer.send(MethodFrame(channel, method))
    obs = peer.observe(window, stop=lambda item: isinstance(item, MethodFrame) and item.channel == channel
                       and item.method.NAME in ("queue.declare-ok", "channel.close"))
    obs.probe_ok = bool(obs.methods("queue.declare-ok", channel)) and obs.channel_close(channel) is None
    return obs


def _declare_with_arguments(ctx: Context, arguments: Any) -> Observation:
    peer, ch = with_channel(ctx)
    name = ctx.name("q")
    ctx.will_delete("queue", name)
    return declare_reaction(peer, ch, spec.QueueDeclare(queue=name, exclusive=True, auto_delete=True, arguments=arguments))


def use_dialect(peer: Peer, dialect: Dialect) -> None:
    """Encode and decode field tables on this connection in ``dialect`` (Peer takes a dialect,
    but ``Context.connect`` cannot pass one yet)."""
    peer.dialect = dialect
    peer.reader.dialect = dialect


def headers_unmodified(ctx: Context, headers: list[tuple[str, Any]], dialect: Dialect = SPEC) -> Message | None:
    """Publishes a message whose headers are ``headers`` and checks with basic.get that every
    entry comes back with the same type code and value. A refusal is weighed by the case's
    guideline (MAY: the grammar, no RFC 2119 sentence) and cites no clause; a change fails 3.1.1/2."""
    peer, ch = with_channel(ctx)
    if dialect is not SPEC:
        use_dialect(peer, dialect)
    queue = queue_for(ctx, peer, ch)
    publish(peer, ch, queue, b"headers", spec.BasicProperties(headers=headers))
    got = fetch(peer, ch, queue)
    if not isinstance(got, Message):
        not_delivered(ctx, got, clauses=())
        if isinstance(got, Observation):
            note_close(ctx, got)
        return None
    ok, expected, observed = _compare(headers, got, dialect)
    ctx.record(ok, expected=expected, observed=observed, what="the header entries come back unmodified",
               clauses=UNMODIFIED)
    return got


def _compare(headers: list[tuple[str, Any]], got: Message, dialect: Dialect) -> tuple[bool, str, str]:
    back, why = decode_headers(got.header_payload, dialect)
    if back is None and why:
        diffs = [f"content header undecodable in the {dialect.name} reading: {why}"]
    else:
        diffs = header_differences(headers, back, dialect)
    return not diffs, "every header entry sent, same type code and value", "; ".join(diffs) or "unchanged"


def conflicting_code(ctx: Context, name: str, value: FieldValue, dialect: Dialect, other: Dialect) -> None:
    """A table the two readings of the type codes disagree on: refusing it (channel or
    connection exception) passes, returning it unchanged passes, changing it fails 3.1.1/2;
    a message silently dropped is informational (4.10.1 says only "can"). Notes which reading the broker took."""
    peer, ch = with_channel(ctx)
    if dialect is not SPEC:
        use_dialect(peer, dialect)
    queue = queue_for(ctx, peer, ch)
    headers = [(name, value)]
    publish(peer, ch, queue, b"headers", spec.BasicProperties(headers=headers))
    got = fetch(peer, ch, queue)
    if isinstance(got, Observation):
        if refused(ctx, got, what="the table is refused, or delivered unchanged", clauses=UNMODIFIED):
            ctx.note(f"the broker refused the table: it does not read {value.code!r} the {dialect.name} way")
        return
    if got is None:
        ctx.record(False, expected="a channel or connection exception, or the message delivered unchanged",
                   observed="no exception, and basic.get-empty: the message was dropped silently",
                   what="invalid data is handled by closing the channel or the connection", clauses=())
        return
    ok, expected, observed = _compare(headers, got, dialect)
    ctx.record(ok, expected=f"a channel or connection exception, or {expected}", observed=observed,
               what="the table is refused, or delivered unchanged", clauses=UNMODIFIED)
    if ok:
        ctx.note(f"the broker returned {name!r} unchanged, as {value.code!r} {value.value!r} (the {dialect.name} "
                 "reading, or it passes the table through opaque)")
    else:
        theirs, why = decode_headers(got.header_payload, other)
        shown = f"{theirs.codes.get(name)!r} {theirs.get(name)!r}" if theirs is not None and name in theirs else why
        ctx.note(f"the broker changed {name!r}; in the {other.name} reading it came back as {shown}")


# ----------------------------------------------------------------------------- strings

@case("amqp091/4.2.5.3/shortstr-length-overruns-frame",
      title="a queue name whose length prefix points past the frame is refused (channel or connection)",
      guideline="All externally- provided data can be verified against maximum allowed lengths "
                                    "whenever any data is read. " + INVALID_DATA_4_10_1)
def shortstr_length_overruns_frame(ctx: Context) -> None:
    """Sends queue.declare whose queue name is 'abc' with a length prefix of 200, while only
    8 octets of the frame follow it. Passes on a channel or connection exception (any code) or
    a closed connection; a declare-ok is informational (4.10.1: invalid data "can" be handled so)."""
    peer, ch = with_channel(ctx)
    obs = declare_reaction(peer, ch, spec.QueueDeclare(queue=Sized("abc", length=200), exclusive=True, auto_delete=True))
    refused(ctx, obs)


@case("amqp091/4.2.5.3/longstr-any-octets-unmodified",
      title="long strings of invalid UTF-8 and zero octets in message headers come back byte-exact",
      clauses=UNMODIFIED, level=Level.MAY,
      guideline="Long strings, stored as a 32-bit unsigned integer length followed by zero or more octets of "
                "data. Long strings can contain any data. [4.2.5.3]")
def longstr_any_octets_unmodified(ctx: Context) -> None:
    """Publishes a message whose headers hold long strings that are not UTF-8 (0xff 0xfe, a
    truncated sequence, zero octets, 256 seeded random octets) and reads it back with basic.get.
    Passes when each comes back with code 'S' and the same octets; refusing them is
    informational (long strings "can contain any data": no MUST or SHOULD)."""
    headers = [
        ("invalid", FieldValue("S", b"\xff\xfe invalid \x80")),
        ("truncated", FieldValue("S", b"caf\xc3")),
        ("zeros", FieldValue("S", b"\x00a\x00b\x00")),
        ("random", FieldValue("S", ctx.rng.randbytes(256))),
    ]
    headers_unmodified(ctx, headers)


# ----------------------------------------------------------------------------- field names

def _bad_name(name: str, what: str) -> Any:
    def run(ctx: Context) -> None:
        obs = _declare_with_arguments(ctx, {name: "x"})
        ctx.check(obs, ConnectionException(502, 503), what=f"a field name {what} is refused", clauses=NAME_REACTION)
        note_close(ctx, obs)
    return run


def _name_case(slug: str, name: str, what: str) -> None:
    run = _bad_name(name, what)
    run.__name__ = slug.replace("-", "_")
    run.__doc__ = (f"Sends queue.declare (exclusive, named by the case) whose arguments table holds a field "
                   f"name {what} ({name[:20]!r}{'...' if len(name) > 20 else ''}). 4.2.5.5/2 says the server "
                   "SHOULD signal a connection exception with \"503 (syntax error)\", though 502 is syntax-error "
                   "and 503 command-invalid: connection.close with 502 or 503 passes, anything else is a warning.")
    case(f"amqp091/4.2.5.5/{slug}", title=f"a field name {what} is refused with connection exception 502/503",
         clauses=NAMES)(run)


_name_case("name-starts-with-digit", "1abc", "starting with a digit")
_name_case("name-with-hyphen", "a-b", "containing '-'")
_name_case("name-with-space", "a b", "containing a space")
_name_case("name-129-characters", "a" * 129, "of 129 characters")


# ----------------------------------------------------------------------------- malformed tables

@case("amqp091/4.2.5.5/undefined-type-code", title="a field table with the undefined type code 'Z' is refused",
      guideline=INVALID_DATA_4_10_1)
def undefined_type_code(ctx: Context) -> None:
    """Sends queue.declare whose arguments table holds a value of type 'Z' (defined by neither
    the 0-9-1 grammar nor RabbitMQ/Qpid), followed by 9 octets. Passes on a channel or connection
    exception (any code) or a closed connection; a declare-ok is informational (4.10.1: invalid data "can" be handled so)."""
    refused(ctx, _declare_with_arguments(ctx, [("zfield", FieldValue("Z", b"\x00\x00\x00\x05hello"))]))


@case("amqp091/4.2.5.5/undefined-type-code-in-headers",
      title="message headers with the undefined type code 'Z' are refused, or delivered unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=INVALID_DATA_4_10_1)
def undefined_type_code_in_headers(ctx: Context) -> None:
    """Publishes a message whose headers hold a value of type 'Z' followed by 9 octets. A broker
    that decodes headers must refuse them (channel or connection exception); one that does not may
    pass them on, but then unchanged (3.1.1/2). Dropping the message silently is informational (4.10.1 says only "can")."""
    peer, ch = with_channel(ctx)
    queue = queue_for(ctx, peer, ch)
    raw = b"\x00\x00\x00\x05hello"
    publish(peer, ch, queue, b"headers", spec.BasicProperties(headers=[("zfield", FieldValue("Z", raw))]))
    got = fetch(peer, ch, queue)
    if isinstance(got, Observation):
        refused(ctx, got, what="the table is refused, or delivered unchanged", clauses=UNMODIFIED)
        return
    if got is None:
        ctx.record(False, expected="a channel or connection exception, or the message delivered unchanged",
                   observed="no exception, and basic.get-empty: the message was dropped silently",
                   what="invalid data is handled by closing the channel or the connection", clauses=())
        return
    entry = b"\x06zfieldZ" + raw
    table = got.header_payload[14:]  # flags 0x2000: only headers present
    ok = got.header_payload[12:14] == b"\x20\x00" and entry in table
    ctx.record(ok, expected=f"the headers table delivered with the entry {entry.hex()} unchanged",
               observed=f"property flags {got.header_payload[12:14].hex()}, properties {table[:64].hex()}",
               what="the table is refused, or delivered unchanged", clauses=UNMODIFIED)


@case("amqp091/4.2.5.5/table-length-overruns-frame",
      title="a field table whose length prefix points past the frame is refused (channel or connection)",
      guideline="All externally- provided data can be verified against maximum allowed lengths "
                                    "whenever any data is read. " + INVALID_DATA_4_10_1)
def table_length_overruns_frame(ctx: Context) -> None:
    """Sends queue.declare whose arguments table {'a': 'b'} claims 1 MiB while the frame ends
    after its 8 octets of entries. Passes on a channel or connection exception (any code) or a closed
    connection; a declare-ok is informational (4.10.1 says only "can")."""
    refused(ctx, _declare_with_arguments(ctx, Sized({"a": "b"}, length=1 << 20)))


# ----------------------------------------------------------------------------- the 's' and 'l' conflicts

@case("amqp091/4.2.5.5/s-as-short-string",
      title="header 's' written as a 0-9-1 short string is refused, or delivered unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=INVALID_DATA_4_10_1)
def s_as_short_string(ctx: Context) -> None:
    """Publishes a message whose headers hold 's' 'abc' encoded as the 0-9-1 grammar reads 's'
    (a short string) and reads it back with basic.get, decoding the spec way. RabbitMQ/Qpid read
    's' as a signed 16-bit integer (errata section 3), so refusing the table passes; passing it on
    unchanged passes; changing it fails 3.1.1/2. A note says which reading the broker took."""
    conflicting_code(ctx, "sfield", FieldValue("s", "abc"), SPEC, RABBITMQ)


@case("amqp091/4.2.5.5/s-as-int16",
      title="header 's' written as a RabbitMQ signed 16-bit integer is refused, or delivered unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=INVALID_DATA_4_10_1)
def s_as_int16(ctx: Context) -> None:
    """Publishes a message whose headers hold 's' 1234 encoded as RabbitMQ/Qpid read 's' (signed
    16-bit, errata section 3) on a connection using the RabbitMQ reading, and reads it back with
    basic.get. In the 0-9-1 reading it is a short string overrunning the table, so refusing it
    passes; passing it on unchanged passes; changing it fails 3.1.1/2."""
    conflicting_code(ctx, "sfield", FieldValue("s", 1234), RABBITMQ, SPEC)


@case("amqp091/4.2.5.5/l-above-int64-unmodified",
      title="header 'l' with a value above 2^63 comes back with the same octets",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def l_above_int64_unmodified(ctx: Context) -> None:
    """Publishes 'l' 2^63 + 5: unsigned 64-bit in 0-9-1, signed in RabbitMQ/Qpid (errata
    section 3); both readings take 8 octets, so however the broker reads it the octets must come
    back unchanged (3.1.1/2). Refusing the table is informational (the
    grammar lists the type; no MUST or SHOULD says a server accepts every type in it)."""
    headers_unmodified(ctx, [("big", FieldValue("l", (1 << 63) + 5))])


@case("amqp091/4.2.5.5/spec-int16-unmodified", title="header 'U' (0-9-1 signed 16-bit) comes back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def spec_int16_unmodified(ctx: Context) -> None:
    """Publishes 'U' -2 (signed 16-bit in the 0-9-1 grammar; RabbitMQ/Qpid use 's' instead and
    do not define 'U'). Passes when it comes back unchanged (3.1.1/2); refusing it is informational: the
    grammar lists the type, but no MUST or SHOULD sentence says a server accepts every type in it,
    and a refused message is not a modified one, so 3.1.1/2 is not failed by it either."""
    headers_unmodified(ctx, [("int16", FieldValue("U", -2))])


@case("amqp091/4.2.5.5/spec-int64-unmodified", title="header 'L' (0-9-1 signed 64-bit) comes back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def spec_int64_unmodified(ctx: Context) -> None:
    """Publishes 'L' -2 (signed 64-bit in the 0-9-1 grammar; RabbitMQ/Qpid use 'l' instead and
    do not define 'L'). Passes when it comes back unchanged (3.1.1/2); refusing it is informational: the
    grammar lists the type, but no MUST or SHOULD sentence says a server accepts every type in it,
    and a refused message is not a modified one, so 3.1.1/2 is not failed by it either."""
    headers_unmodified(ctx, [("int64", FieldValue("L", -2))])


# ----------------------------------------------------------------------------- round-trips

@case("amqp091/4.2.5.5/decimal-unmodified", title="decimal header values come back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def decimal_unmodified(ctx: Context) -> None:
    """Publishes 'D' values 123.45, -123.45 (the value is "a long signed integer"; the grammar
    says long-uint, the errata reads it signed), 0 with scale 0 and 1 with scale 200 (the scale
    octet "is not signed"). Passes when each comes back with the same scale and value octets."""
    headers_unmodified(ctx, [
        ("positive", FieldValue("D", (2, 12345))),
        ("negative", FieldValue("D", (2, -12345))),
        ("zero", FieldValue("D", (0, 0))),
        ("scale200", FieldValue("D", (200, 1))),
    ])


@case("amqp091/4.2.5.5/timestamp-unmodified", title="timestamp header values come back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def timestamp_unmodified(ctx: Context) -> None:
    """Publishes 'T' values 0, 1700000000 and 2^64 - 1 (a 64-bit POSIX time_t, 4.2.5.4). Passes
    when each comes back unchanged."""
    headers_unmodified(ctx, [
        ("epoch", FieldValue("T", 0)),
        ("recent", FieldValue("T", 1700000000)),
        ("max", FieldValue("T", (1 << 64) - 1)),
    ])


@case("amqp091/4.2.5.5/nested-table-unmodified", title="tables nested three deep in headers come back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def nested_table_unmodified(ctx: Context) -> None:
    """Publishes headers holding a table ('F') that holds a table that holds a table, with long
    strings, integers and booleans at every level, and an empty table (arrays are left to
    array-unmodified, so that this case isolates tables). Passes when both entries come back
    with the same type codes and values."""
    headers_unmodified(ctx, [
        ("outer", FieldValue("F", {
            "name": FieldValue("S", "outer"),
            "middle": FieldValue("F", {
                "n": FieldValue("I", -1),
                "inner": FieldValue("F", {"deep": FieldValue("S", "three levels"), "flag": FieldValue("t", True)}),
            }),
        })),
        ("empty", FieldValue("F", {})),
    ])


@case("amqp091/4.2.5.5/array-unmodified", title="field arrays of mixed types in headers come back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def array_unmodified(ctx: Context) -> None:
    """Publishes headers holding an array ('A') of mixed element types (I, S, t, D, T, V, an
    array and a table) and an empty array. Passes when both come back with the same type codes
    and values, in order."""
    headers_unmodified(ctx, [
        ("mixed", FieldValue("A", [
            FieldValue("I", 1), FieldValue("S", "two"), FieldValue("t", True), FieldValue("D", (1, 35)),
            FieldValue("T", 1700000000), FieldValue("V", None), FieldValue("A", [FieldValue("I", 3)]),
            FieldValue("F", {"k": FieldValue("S", "v")}),
        ])),
        ("empty", FieldValue("A", [])),
    ])


@case("amqp091/4.2.5.5/void-unmodified", title="a void ('V') header value comes back unchanged",
      clauses=UNMODIFIED, level=Level.MAY, guideline=VALID_TYPES)
def void_unmodified(ctx: Context) -> None:
    """Publishes headers with a void value ('V', no octets) between two long strings. Passes when
    all three come back unchanged (the void entry present, still 'V')."""
    headers_unmodified(ctx, [
        ("before", FieldValue("S", "b")),
        ("nothing", FieldValue("V", None)),
        ("after", FieldValue("S", "a")),
    ])
