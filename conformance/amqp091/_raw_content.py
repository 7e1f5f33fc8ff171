"""Contents sent frame by frame and read back byte-exact (shared by the 0-9-1 sections 4.2.5 and 4.2.6).

``fetch`` reads a message with the exact content header payload and the number of body frames
it came in, so a case can compare what the broker passed on with what was sent (3.1.1: bodies
unmodified, headers not removed or changed) in either reading of the field-type table. The
refusal helpers judge the broker's answer to invalid data: closing the channel or the
connection (4.10.1), but not by going down.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

from amqpspec.case import Context
from amqpspec.peer.amqp091 import Observation, Peer
from amqpspec.peer.base import Closed
from amqpspec.verify import AnyClose, ChannelException, StaysOpen
from amqpspec.wire.amqp091 import (
    SPEC, BodyFrame, Dialect, FieldValue, HeaderFrame, HeartbeatFrame, MalformedFrame, MethodFrame,
    encode_table, spec,
)
from amqpspec.wire.amqp091.frames import decode_frame
from amqpspec.wire.errors import EncodeError

from ._common import QUICK_WINDOW, publish_frames

INVALID_DATA = "Invalid data can be handled unambiguously, by closing the channel or the connection."
# What a broker refusing a valid table deviates from: no RFC 2119 keyword covers it.
VALID_TYPES = ("The valid field types for tables are an extension of the native integer, bit, string, and "
               "timestamp types, and are shown in the grammar. [4.2.5.5]")


def note_close(ctx: Context, obs: Observation) -> None:
    close = obs.connection_close or obs.channel_close()
    if close is not None:
        ctx.note(f"refused with {close.reply_code} {close.reply_text}")
    elif obs.closed:
        ctx.note(f"connection closed without a close method ({obs.end})")


def refused(ctx: Context, obs: Observation, what: str = "", clauses: tuple[str, ...] | None = None) -> bool:
    """Checks for a channel or connection exception, or a closed connection (4.10.1), and that a
    socket closed without a close method was not the broker going down: a crash is not
    "closing the connection", and would pass for one otherwise."""
    ok = ctx.check(obs, ChannelException() | AnyClose(), what=what, clauses=clauses)
    note_close(ctx, obs)
    if ok and obs.closed and obs.connection_close is None:
        alive, detail = broker_alive(ctx)
        ctx.record(alive, expected="the broker still accepts connections after closing this one",
                   observed=detail, what="the broker handles the invalid data without going down", clauses=())
        ok = ok and alive
    return ok


def broker_alive(ctx: Context) -> tuple[bool, str]:
    """Opens a fresh connection: does the broker still accept and serve connections?"""
    try:
        peer = ctx.connect()
    except Exception as exc:  # noqa: BLE001 -- any failure to connect is the evidence
        return False, f"a new connection failed: {exc}"
    peer.close()
    return True, "a new connection was opened"


def queue_for(ctx: Context, peer: Peer, channel: int, suffix: str = "q") -> str:
    """An exclusive, auto-delete queue named for this case (also registered for deletion).

    Named by the client rather than server-named (``_common.private_queue``): some brokers
    (garagemq) refuse an empty queue name, and these cases test content framing, not naming.
    """
    name = ctx.name(suffix)
    ctx.will_delete("queue", name)
    peer.call(channel, spec.QueueDeclare(queue=name, exclusive=True, auto_delete=True))
    return name


@dataclass
class Message:
    """A message fetched with basic.get; ``header_payload`` is the exact content header payload."""

    get_ok: MethodFrame
    header: HeaderFrame | None
    header_payload: bytes
    body: bytes
    body_frames: int

    @property
    def properties(self) -> spec.BasicProperties | None:
        return self.header.properties if self.header is not None else None  # type: ignore[return-value]


def _failure(peer: Peer, first: Any) -> Observation:
    """An observation starting with ``first`` (what came instead of a get reply), then the rest."""
    obs = Observation()
    if isinstance(first, Closed):
        obs.end = first.how if first.how != "local" else "fin"
        return obs
    if first is not None:
        obs.received.append(first)
        if isinstance(first, MethodFrame) and first.method.NAME == "channel.close":
            return obs  # the connection goes on: nothing more to wait for
        if isinstance(first, MethodFrame) and first.method.NAME == "connection.close":
            peer.send(MethodFrame(0, spec.ConnectionCloseOk()))
            obs.replied_close_ok = True
    rest = peer.observe(0.5 if first is None else 1.0)
    obs.received += rest.received
    obs.end, obs.framing_error, obs.elapsed = rest.end, rest.framing_error, rest.elapsed
    return obs


def _next(peer: Peer, timeout: float) -> Any:
    while True:
        item = peer.recv(timeout)
        if not isinstance(item, HeartbeatFrame):
            return item


def fetch(peer: Peer, channel: int, queue: str, wait: float = 0.5) -> Message | None | Observation:
    """basic.get (no-ack), repeated while the queue is empty until ``wait`` passes.

    A broker processes a channel's methods in order, so the first basic.get after a publish
    on the same channel normally finds the message; the short retry only covers brokers that
    enqueue asynchronously. Returns the message, None (queue empty), or an Observation of what
    the broker did instead of answering (a close, nothing).
    """
    until = time.monotonic() + wait
    pause = 0.02
    while True:
        peer.send(MethodFrame(channel, spec.BasicGet(queue=queue, no_ack=True)))
        item = _next(peer, QUICK_WINDOW)
        if not (isinstance(item, MethodFrame) and item.channel == channel
                and item.method.NAME in ("basic.get-ok", "basic.get-empty")):
            return _failure(peer, item)
        if item.method.NAME == "basic.get-empty":
            if time.monotonic() >= until:
                return None
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
            continue
        head = _next(peer, QUICK_WINDOW)
        if isinstance(head, HeaderFrame):
            payload = peer.reader.last_raw[7:-1]
            size = head.body_size
        elif isinstance(head, MalformedFrame) and head.type == spec.FRAME_HEADER:
            payload = head.data
            size = int.from_bytes(payload[4:12], "big") if len(payload) >= 12 else 0
            head = None
        else:
            return _failure(peer, head)
        body, frames = b"", 0
        while len(body) < size:
            part = _next(peer, QUICK_WINDOW)
            if not isinstance(part, BodyFrame):
                return _failure(peer, part)
            body += part.data
            frames += 1
        return Message(item, head, payload, body, frames)


def decode_headers(payload: bytes, dialect: Dialect) -> tuple[dict | None, str]:
    """The headers table of a basic content header payload read with ``dialect``, or why not."""
    frame = decode_frame(spec.FRAME_HEADER, 1, payload, dialect)
    if isinstance(frame, HeaderFrame):
        return frame.properties.headers, ""  # type: ignore[union-attr]
    return None, getattr(frame, "error", "undecodable")


def field_bytes(name: str, value: Any, dialect: Dialect) -> bytes | None:
    """The encoding of one table entry (name, code, value): what 'unmodified' is compared on."""
    try:
        return encode_table([(name, value)], dialect)[4:]
    except EncodeError:
        return None


def header_differences(sent: Iterable[tuple[str, Any]], got: dict | None, dialect: Dialect) -> list[str]:
    """Entries sent that came back missing or different (the broker MAY add others: 3.1.1/2)."""
    got = got or {}
    codes = getattr(got, "codes", {})
    diffs = []
    for name, value in sent:
        if name not in got:
            diffs.append(f"{name!r} missing")
            continue
        mine = field_bytes(name, value, dialect)
        theirs = field_bytes(name, FieldValue(codes.get(name, "?"), got[name]), dialect)
        if mine != theirs:
            shown = (theirs or b"")[:48]
            diffs.append(f"{name!r} changed: sent {(mine or b'')[:48].hex()}, got {codes.get(name)!r} {got[name]!r} ({shown.hex()})")
    return diffs


def publish(peer: Peer, channel: int, queue: str, body: bytes, properties: spec.BasicProperties | None = None,
            frame_body_max: int | None = None) -> None:
    peer.send(*publish_frames(channel, queue, body, properties=properties, frame_body_max=frame_body_max))


def all_properties(ctx: Context) -> tuple[spec.BasicProperties, list[tuple[str, Any]]]:
    """All 14 basic properties with non-default values; headers with every type code both
    readings of the errata table agree on (t b B u I i f d D S A T F V)."""
    headers: list[tuple[str, Any]] = [
        ("bool", FieldValue("t", True)),
        ("int8", FieldValue("b", -7)),
        ("uint8", FieldValue("B", 200)),
        ("uint16", FieldValue("u", 60000)),
        ("int32", FieldValue("I", -123456789)),
        ("uint32", FieldValue("i", 4000000000)),
        ("float32", FieldValue("f", 1.5)),
        ("float64", FieldValue("d", -2.25e100)),
        ("decimal", FieldValue("D", (3, -12345))),
        ("longstr", FieldValue("S", "caf\u00e9 \u2603")),
        ("array", FieldValue("A", [FieldValue("I", 1), FieldValue("S", "two"), FieldValue("t", False)])),
        ("timestamp", FieldValue("T", 1700000000)),
        ("table", FieldValue("F", {"inner": FieldValue("S", "value"), "n": FieldValue("I", 42)})),
        ("void", FieldValue("V", None)),
    ]
    props = spec.BasicProperties(
        content_type="application/x-amqpspec", content_encoding="x-amqpspec-identity", headers=headers,
        delivery_mode=2, priority=5, correlation_id="corr-" + ctx.rng.randbytes(4).hex(),
        reply_to="amqpspec-reply-to", expiration="600000", message_id="msg-" + ctx.rng.randbytes(4).hex(),
        timestamp=1700000123, type="amqpspec.test", user_id=ctx.target.username, app_id="amqpspec",
        reserved="",
    )
    return props, headers


def not_delivered(ctx: Context, got: Observation | None, what: str = "the message is accepted and delivered",
                  clauses: tuple[str, ...] | None = None) -> None:
    """Records that the message did not come back; ``clauses=()`` weighs it by the case's guideline."""
    if got is None:
        ctx.record(False, expected="the message, delivered by basic.get", observed="basic.get-empty",
                   what=what, clauses=clauses)
    else:
        ctx.check(got, StaysOpen(), what=what, clauses=clauses)


def compare_properties(sent: spec.BasicProperties, got: Message, headers: list[tuple[str, Any]],
                       dialect: Dialect = SPEC) -> list[str]:
    """Properties and header entries sent that came back missing or different."""
    back, why = decode_headers(got.header_payload, dialect)
    if back is None and why:
        return [f"content header undecodable in the {dialect.name} reading: {why}"]
    props = got.properties
    diffs = []
    for f in spec.BasicProperties.FIELDS:
        if f.attr == "headers":
            continue
        mine = getattr(sent, f.attr)
        theirs = getattr(props, f.attr) if props is not None else None
        if mine is not None and mine != theirs:
            diffs.append(f"{f.name}: sent {mine!r}, got {'absent' if theirs is None else repr(theirs)}")
    diffs += [f"headers {d}" for d in header_differences(headers, back, dialect)]
    return diffs
