"""What AMQP 0-9-1 lets a broker do with the octets of one stimulus.

:func:`expect` reads the octets exactly as a correct receiver must -- frame header, size,
frame-end before anything else (4.2.3/3), type, then the payload -- and follows the
connection state (negotiation step, open channels, contents in progress) until the first
frame the spec tells the broker to react to. That frame decides the expectation:

* a frame-end other than 0xCE, an undefined frame type: close the socket without sending
  anything (4.2.3/2, /3, /4);
* a frame over the negotiated frame-max: connection exception 501 (4.2.3/7, 2.3.3/3);
* a heartbeat on a channel other than 0 (501 or 503: 4.2.3/8, /9, 4.2.7/1, /2) or with a payload
  (501: 4.2.7/2); a connection-class method on another channel (503: 4.2.3/8, /9);
* content frames on channel 0 (504 or 505: 4.2.6.1/3, /4), out of order or overrunning the
  body-size (505: 4.2.6/1), a header of another class (501 or 505: 4.2.6.1/1, /2);
* a method interrupting a content: 505, or the content is aborted (the 4.2.6 prose);
* during the negotiation, any error: the socket closes without any further data (2.2.4/1);
  a mechanism not offered (start-ok mechanism/validity), a frame-max or channel-max above the
  broker's proposal or a frame-max below frame-min-size (tune-ok rules) are errors;
* a non-zero basic.ack delivery-tag on a channel that received nothing: a channel exception
  (basic.ack multiple/exists).

Where two MUSTs name different reactions (4.2.3 vs 4.2.7, 4.2.3/9 vs 2.2.4/1), either passes.
Everything else the spec leaves open -- undecodable arguments, unknown methods, valid methods
whose effect we do not model -- gives a non-strict expectation. Table values are decoded in
both readings of the type codes (the 's' conflict); a frame that decodes in either is valid.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from amqpspec.verify import (
    ChannelException, ConnectionException, HeaderThenClose, Replies, SilentClose, StaysOpen, Verifier,
)
from amqpspec.wire.amqp091 import PROTOCOL_HEADER, RABBITMQ, SPEC, Dialect, spec
from amqpspec.wire.amqp091.base import Method
from amqpspec.wire.amqp091.frames import FRAME_END, FRAME_OVERHEAD, decode_method
from amqpspec.wire.errors import DecodeError

from .expectation import (
    Anything, Expectation, GoesOn, NoCloseMethod, Reacts, Waits, anything, either,
)

FRAME_HEADER = struct.Struct(">BHI")
CONTENT_HEADER = struct.Struct(">HHQ")
HANDSHAKE = ("after-start", "after-tune", "after-tune-ok")
PHASES = ("fresh",) + HANDSHAKE + ("open",)
DIALECTS = (SPEC, RABBITMQ)

FRAME_END_BAD = ("amqp091:4.2.3/3", "amqp091:4.2.3/4")
UNDEFINED_TYPE = ("amqp091:4.2.3/2",)
OVERSIZED = ("amqp091:4.2.3/7", "amqp091:2.3.3/3")
CHANNEL_ZERO = ("amqp091:4.2.3/8", "amqp091:4.2.3/9")
HEARTBEAT_CHANNEL = CHANNEL_ZERO + ("amqp091:4.2.7/1", "amqp091:4.2.7/2")
HEARTBEAT_PAYLOAD = ("amqp091:4.2.7/2",)
HEARTBEAT_DISCARD = ("amqp091:4.2.7/3",)
INCOMPLETE = ("amqp091:4.2.6/1",)
CLASS_ID = ("amqp091:4.2.6/1", "amqp091:4.2.6.1/1", "amqp091:4.2.6.1/2")
CONTENT_CHANNEL_ZERO = ("amqp091:4.2.6.1/3", "amqp091:4.2.6.1/4", "amqp091:4.2.6/1")
NEGOTIATION = ("amqp091:2.2.4/1",)
MECHANISM = ("amqp091:connection.start-ok.mechanism/validity",) + NEGOTIATION
FRAME_MAX_UPPER = ("amqp091:connection.tune-ok.frame-max/upper-limit",)
FRAME_MAX_MINIMUM = ("amqp091:connection.tune-ok.frame-max/minimum",)
CHANNEL_MAX_UPPER = ("amqp091:connection.tune-ok.channel-max/upper-limit",)
HEADER_REJECT = ("amqp091:4.2.2/3", "amqp091:connection.start/protocol-name")
HEADER_VALID = ("amqp091:4.2.2/3", "amqp091:connection.start/server-support")
ACK_UNKNOWN = ("amqp091:basic.ack.multiple/exists",)


@dataclass
class Conn:
    """What the broker knows of the connection when the stimulus starts."""

    phase: str = "open"                       # one of PHASES
    frame_max: int = 0                        # negotiated (0: none), applies once tune-ok is sent
    channel_max: int = 0                      # negotiated (0: none)
    channels: frozenset[int] = frozenset()    # open channels
    mechanisms: tuple[str, ...] = ("PLAIN",)
    proposed: tuple[int, int, int] = (0, 0, 0)  # channel-max, frame-max, heartbeat of connection.tune
    vhost: str = "/"


# ---------------------------------------------------------------------------- verifiers

class StartsOtherVersion(Verifier):
    """connection.start for another AMQP version the broker also implements (0-8, 0-9, 0-10)."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        return bool(obs.methods("connection.start", 0))

    def describe(self) -> str:
        return "connection.start (a version the broker also implements)"


class OtherProtocolHeader(Verifier):
    """An AMQP 1.0 header answering a 1.0 request, connection left open (2.3.3/1: several
    protocols on one port)."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        frames = obs.frames()
        return bool(frames) and getattr(frames[0], "data", b"")[:4] == b"AMQP" and \
            getattr(frames[0], "data", b"")[5:8] == b"\x01\x00\x00"

    def describe(self) -> str:
        return "an AMQP 1.0 header (the broker also speaks 1.0 on this port)"


class HttpAnswer(Verifier):
    """An HTTP response (4.2.2/2: a server MAY accept non-AMQP protocols such as HTTP)."""

    expects_close = False

    def accepts(self, obs: Any) -> bool:
        return bytes(getattr(obs, "head", b"")).startswith(b"HTTP/")

    def describe(self) -> str:
        return "an HTTP response"


# ---------------------------------------------------------------------------- the walk

@dataclass
class _Decision:
    verifier: Verifier
    clauses: tuple[str, ...]
    why: str
    strict: bool = True
    goes_on: bool = False        # the broker may also carry on past this frame


@dataclass
class _Walk:
    conn: Conn
    phase: str = ""
    frame_max: int = 0
    channel_max: int = 0
    channels: set[int] = field(default_factory=set)
    content: dict[int, int] = field(default_factory=dict)   # channel -> body octets left, -1: header expected
    quiet: bool = True            # nothing sent so far asks the broker for a reply
    uncertain: str = ""           # a frame sent so far has effects we do not model (why)
    exits: list[_Decision] = field(default_factory=list)
    replies: list[tuple[str, int]] = field(default_factory=list)   # negotiation replies due
    valid: list[str] = field(default_factory=list)   # clauses that oblige the broker to accept what was sent
    opened: bool = False          # the stimulus itself sent connection.open
    refusable: str = ""           # in one reading of the spec a negotiation error was sent (why; state)
    closing: set[int] = field(default_factory=set)   # channels the stimulus closed (channel.close)
    refusable_state: str = ""

    def __post_init__(self) -> None:
        c = self.conn
        self.phase = c.phase
        self.frame_max = c.frame_max if c.phase in ("after-tune-ok", "open") else 0
        self.channel_max = c.channel_max
        self.channels = set(c.channels)

    @property
    def negotiating(self) -> bool:
        return self.phase in HANDSHAKE

    def state(self, channel: int | None = None) -> str:
        if self.negotiating:
            return self.phase
        if channel is not None and channel in self.content:
            return "in-content"
        return "after-open"

    # -- reactions ---------------------------------------------------------------------
    def silent(self, clauses: tuple[str, ...], why: str) -> _Decision:
        """Close the socket without sending anything more."""
        verifier: Verifier = SilentClose() if self.quiet else NoCloseMethod()
        if self.negotiating:
            verifier = either(verifier, Waits())
            clauses = clauses + tuple(c for c in NEGOTIATION if c not in clauses)
        return _Decision(verifier, clauses, why)

    def exception(self, codes: tuple[int, ...], clauses: tuple[str, ...], why: str) -> _Decision:
        """A connection exception; during the negotiation 2.2.4/1 also allows a silent close."""
        verifier: Verifier = ConnectionException(*codes)
        if self.negotiating:
            return _Decision(either(verifier, NoCloseMethod(), Waits()), clauses + NEGOTIATION, why)
        return _Decision(verifier, clauses, why)

    def open_question(self, why: str) -> _Decision:
        """The spec names no reaction: anything but silence (a pause, while negotiating)."""
        if self.negotiating:  # still no close method before open (2.2.4/1)
            return _Decision(either(NoCloseMethod(), Waits(), *self._step_replies()), NEGOTIATION, why)
        return _Decision(Reacts(), (), why, strict=False)

    def not_open(self, channel: int, what: str) -> _Decision:
        """A frame for a channel that is not open. After the stimulus's own channel.close the broker
        may discard it (the channel is closing or closed; no text names a reaction), so even
        silence passes; on a channel never opened it must react somehow."""
        if channel in self.closing:
            return _Decision(Anything(), (), f"{what} on channel {channel}, which the stimulus closed (the broker may "
                             "discard it)", strict=False)
        return self.open_question(f"{what} on channel {channel}, which is not open")

    def _step_replies(self) -> list[Verifier]:
        return [Replies(name, ch) for name, ch in self.replies]


def expect(conn: Conn, data: bytes) -> Expectation:
    """The expectation for ``data`` (the stimulus, then the probes the fuzzer appends, judged
    like the rest) sent on a connection in state ``conn``."""
    if conn.phase == "fresh":
        return _expect_header(conn, data)
    return _walk_frames(_Walk(conn), data, 0)


def _expect_header(conn: Conn, data: bytes) -> Expectation:
    head = data[:8]
    if len(head) < 8:
        if PROTOCOL_HEADER.startswith(head) or b"AMQP\x01\x01"[: len(head)] == head[:6]:
            return anything("before-header", f"{len(head)} octets of a protocol header: the broker waits for the rest")
        return Expectation(either(HeaderThenClose(), Waits()), HEADER_REJECT, "before-header",
                           f"{len(head)} octets that begin no AMQP header", may_wait=True, foreign=True)
    if head == PROTOCOL_HEADER:
        if len(data) == 8:
            return Expectation(Replies("connection.start", 0), HEADER_VALID, "before-header",
                               "the AMQP 0-9-1 protocol header", awaits=(("connection.start", 0),))
        walk = _Walk(Conn(phase="after-start", mechanisms=conn.mechanisms, vhost=conn.vhost))
        walk.quiet = False  # connection.start comes first
        return _walk_frames(walk, data, 8)
    options: list[Verifier] = [HeaderThenClose(), HttpAnswer()]
    if head[:4] == b"AMQP":
        options += [StartsOtherVersion(), OtherProtocolHeader()]
    return Expectation(either(*options), HEADER_REJECT, "before-header",
                       f"protocol header {head!r} that is not AMQP 0-9-1", wants_close_method=True, foreign=True)


def _walk_frames(w: _Walk, data: bytes, pos: int) -> Expectation:
    while pos < len(data):
        rest = len(data) - pos
        if rest < 7:
            return _pending(w, f"{rest} octets of a frame header: the broker waits for the rest")
        ftype, channel, size = FRAME_HEADER.unpack_from(data, pos)
        total = size + FRAME_OVERHEAD
        state = w.state(channel)
        if w.frame_max and total > w.frame_max:
            return _oversized(w, data, pos, ftype, channel, size, state)
        if not w.frame_max and w.negotiating and total > spec.FRAME_MIN_SIZE:
            return _pending(w, f"a {total}-octet frame before frame-max is negotiated (only {spec.FRAME_MIN_SIZE} must"
                               " be accepted)")
        if rest < total:
            return _pending(w, f"a frame announcing {size} payload octets, {rest - 7} sent: the broker waits for the rest")
        end = data[pos + 7 + size]
        if end != FRAME_END:
            return _final(w, w.silent(FRAME_END_BAD, f"frame-end 0x{end:02x} (type {ftype}, channel {channel})"), state)
        payload = data[pos + 7: pos + 7 + size]
        pos += total
        decision = _frame(w, ftype, channel, payload)
        if decision is None:
            continue
        if not decision.strict or w.uncertain:
            why = decision.why if not w.uncertain else f"{decision.why}, after {w.uncertain}"
            if not whole_frames(data, pos) and not w.negotiating:  # nothing can come back for the probes
                return _pending(w, f"{why}; the octets end inside a frame")
            return _final_open(w, decision, state, why)
        if decision.goes_on:
            w.exits.append(decision)
            continue
        return _final(w, decision, state)
    return _valid(w)


def whole_frames(data: bytes, pos: int = 0) -> bool:
    """Whether ``data[pos:]`` is whole frames (by their size fields), nothing left unfinished."""
    while pos < len(data):
        if len(data) - pos < 7:
            return False
        pos += int.from_bytes(data[pos + 3:pos + 7], "big") + FRAME_OVERHEAD
    return pos == len(data)


def _frame(w: _Walk, ftype: int, channel: int, payload: bytes) -> _Decision | None:
    """The decision a frame forces, or None when it is valid (the walk state is updated)."""
    if ftype == spec.FRAME_HEARTBEAT:
        if channel != 0:
            return w.exception((501, 503), HEARTBEAT_CHANNEL, f"a heartbeat on channel {channel}")
        if payload:
            return w.exception((501,), HEARTBEAT_PAYLOAD, f"a heartbeat with {len(payload)} payload octets")
        w.valid.extend(HEARTBEAT_DISCARD)  # discarded without error
        return None
    if ftype == spec.FRAME_METHOD:
        return _method(w, channel, payload)
    if ftype == spec.FRAME_HEADER:
        return _content_header(w, channel, payload)
    if ftype == spec.FRAME_BODY:
        return _content_body(w, channel, payload)
    if ftype == 4:  # HEARTBEAT in the 4.2.3 prose, undefined in the XML: discard or silent close
        d = w.silent(UNDEFINED_TYPE + HEARTBEAT_DISCARD, "a frame of type 4 (a heartbeat in the 4.2.3 prose only)")
        d.goes_on = True
        return d
    return w.silent(UNDEFINED_TYPE, f"a frame of undefined type {ftype}")


def _decode(payload: bytes) -> Method | str:
    """The method in either dialect, or why it does not decode in any."""
    problems = []
    for dialect in DIALECTS:
        try:
            return decode_method(payload, dialect)
        except DecodeError as exc:
            problems.append(str(exc))
    return problems[0]


def _method(w: _Walk, channel: int, payload: bytes) -> _Decision | None:
    class_id = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else None
    interrupted = channel in w.content and not w.negotiating
    if interrupted:  # a method ends the content early: 505, or the content is aborted
        d = _Decision(ConnectionException(505), INCOMPLETE, f"a method on channel {channel} before its content was complete",
                      goes_on=True)
        del w.content[channel]
        if w.uncertain:
            return w.open_question(d.why)
        w.exits.append(d)
    if class_id == 10 and channel != 0:
        d = w.exception((503,), CHANNEL_ZERO, f"a connection-class method on channel {channel}")
        if w.negotiating:  # 4.2.3/9 and 2.2.4/1 disagree: either passes (as in the conformance case)
            d = _Decision(either(ConnectionException(503), NoCloseMethod(), Waits()), CHANNEL_ZERO + NEGOTIATION, d.why)
        return d
    method = _decode(payload)
    if isinstance(method, str):
        return w.open_question(f"a method frame that does not decode ({method})")
    name = method.NAME
    if w.negotiating:
        return _negotiation(w, channel, method)
    if channel == 0 and name == "connection.close":
        # the stimulus itself ends the connection: the broker hands the close shake (close-ok) and
        # may discard what follows ("any received methods except Close and Close-OK MUST be
        # discarded" binds the closing side; the broker then waits for our socket close)
        w.replies.append(("connection.close-ok", 0))
        return _Decision(either(Replies("connection.close-ok", 0), Reacts()), (),
                         "the client's own connection.close (what follows may be discarded)", strict=False)
    if channel == 0 or (w.channel_max and channel > w.channel_max):
        return w.open_question(f"{name} on channel {channel}")
    if name.startswith("unknown("):
        return w.open_question(f"{name}: class-id/method-id the spec does not define")
    if channel not in w.channels:
        if name == "channel.open":
            w.channels.add(channel)
            w.quiet = False
            return None
        return w.not_open(channel, name)
    w.quiet = False
    if name == "channel.close":
        w.channels.discard(channel)
        w.closing.add(channel)
        w.uncertain = w.uncertain or name
        return None
    if name == "basic.qos" and int(method.prefetch_size) == 0:  # type: ignore[attr-defined]
        return None
    if name == "basic.publish" and method.exchange == "" and not method.immediate:  # type: ignore[attr-defined]
        w.content[channel] = -1
        return None
    if name == "basic.ack" and int(method.delivery_tag) != 0:  # type: ignore[attr-defined]
        return _Decision(ChannelException(), ACK_UNKNOWN,
                         f"basic.ack of delivery-tag {method.delivery_tag} on a channel that received nothing")  # type: ignore[attr-defined]
    if name in ("basic.publish",):  # a content to another exchange, or immediate: its fate is the broker's
        w.content[channel] = -1
    w.uncertain = w.uncertain or name
    return None


def _negotiation(w: _Walk, channel: int, method: Method) -> _Decision | None:
    name = method.NAME
    expected = {"after-start": "connection.start-ok", "after-tune": "connection.tune-ok",
                "after-tune-ok": "connection.open"}[w.phase]
    if channel == 0 and name == "connection.open" and name != expected:
        # out of order, but the broker has now received Open: 2.2.4/1 asks for silence only
        # "prior to sending or receiving Open or Open-Ok", and nothing else names a reaction
        return _Decision(Anything(), (), f"connection.open where {expected} was due (Open received: a close method "
                         "is allowed again)", strict=False)
    if channel != 0 or name != expected:
        return w.silent(NEGOTIATION, f"{name} on channel {channel} where {expected} was due")
    if name == "connection.start-ok":
        mechanism = str(method.mechanism)  # type: ignore[attr-defined]
        if mechanism not in w.conn.mechanisms:
            return w.silent(MECHANISM, f"start-ok with mechanism {mechanism!r}, which the broker did not offer")
        w.phase, w.quiet = "after-tune", False
        w.replies = [("connection.tune", 0), ("connection.secure", 0)]
        return None
    if name == "connection.tune-ok":
        return _tune_ok(w, method)
    vhost = str(method.virtual_host)  # type: ignore[attr-defined]
    w.phase, w.quiet, w.opened = "open", False, True
    if vhost != w.conn.vhost:  # the broker has received Open: a close method is allowed now
        w.uncertain = f"connection.open of virtual host {vhost!r}"
    w.replies = [("connection.open-ok", 0)]
    return None


def _tune_ok(w: _Walk, method: Method) -> _Decision | None:
    cm, fm, _hb = int(method.channel_max), int(method.frame_max), int(method.heartbeat)  # type: ignore[attr-defined]
    p_cm, p_fm, _ = w.conn.proposed
    if 0 < fm < spec.FRAME_MIN_SIZE:
        return w.silent(FRAME_MAX_MINIMUM, f"tune-ok frame-max {fm}, below frame-min-size {spec.FRAME_MIN_SIZE}")
    if p_fm and fm > p_fm:
        return w.silent(FRAME_MAX_UPPER, f"tune-ok frame-max {fm}, above the {p_fm} proposed")
    if p_cm and cm > p_cm:
        return w.silent(CHANNEL_MAX_UPPER, f"tune-ok channel-max {cm}, above the {p_cm} proposed")
    if (p_fm and fm == 0) or (p_cm and cm == 0):
        # "no limit" answering a limit: read either way (RabbitMQ's errata 10). Read as "higher than
        # the proposal" it breaks the upper-limit rule, so the broker may close without a close
        # method -- after a pause of several seconds, as 4.10.2 advises for negotiation errors --
        # and a silence that outlasts our window is no hang.
        w.uncertain = f"tune-ok with 0 (no limit) answering a limit (channel-max {p_cm}, frame-max {p_fm})"
        w.refusable, w.refusable_state = w.uncertain, w.phase
    w.phase, w.frame_max, w.channel_max = "after-tune-ok", fm, cm
    return None


def _content_header(w: _Walk, channel: int, payload: bytes) -> _Decision | None:
    if channel == 0:
        return w.exception((504, 505), CONTENT_CHANNEL_ZERO, "a content header on channel 0")
    if w.negotiating:
        return w.silent(NEGOTIATION, f"a content header on channel {channel} during the negotiation")
    if channel not in w.channels:
        return w.not_open(channel, "a content header")
    if w.content.get(channel) != -1:
        what = "a second content header during the body" if channel in w.content else "a content header without a content method"
        return w.exception((505,), INCOMPLETE, what)
    if len(payload) < CONTENT_HEADER.size:
        return w.open_question(f"a content header of {len(payload)} octets")
    class_id, weight, body_size = CONTENT_HEADER.unpack_from(payload, 0)
    if class_id != 60:
        return w.exception((501, 505), CLASS_ID, f"a content header of class {class_id} after basic.publish")
    props = spec.PROPERTIES[60]
    if not any(_decodes_properties(props, payload, d) for d in DIALECTS):
        return w.open_question("content properties that do not decode")
    if weight:
        return w.open_question(f"a content header with weight {weight} (must be zero)")
    if payload[CONTENT_HEADER.size:] != b"\x00\x00":  # what properties mean is the broker's to judge
        w.uncertain = w.uncertain or "content properties"
    w.quiet = False
    if body_size == 0:
        del w.content[channel]
        w.valid.append("amqp091:basic.publish.exchange/default-exchange")
    else:
        w.content[channel] = body_size
    return None


def _decodes_properties(props: Any, payload: bytes, dialect: Dialect) -> bool:
    try:
        _, end = props.decode(payload, CONTENT_HEADER.size, dialect)
    except DecodeError:
        return False
    return end == len(payload)


def _content_body(w: _Walk, channel: int, payload: bytes) -> _Decision | None:
    if channel == 0:
        return w.exception((504, 505), CONTENT_CHANNEL_ZERO, "a content body frame on channel 0")
    if w.negotiating:
        return w.silent(NEGOTIATION, f"a content body on channel {channel} during the negotiation")
    if channel not in w.channels:
        return w.not_open(channel, "a content body")
    left = w.content.get(channel)
    if left is None or left == -1:
        what = "a body frame without a content header" if left == -1 else "a body frame with no content in progress"
        return w.exception((505,), INCOMPLETE, what)
    if len(payload) > left:
        return w.exception((505,), INCOMPLETE, f"body octets beyond the body-size ({len(payload)} sent, {left} left)")
    left -= len(payload)
    if left:
        w.content[channel] = left
    else:
        del w.content[channel]
        w.quiet = False
        w.valid.append("amqp091:basic.publish.exchange/default-exchange")
    return None


# ---------------------------------------------------------------------------- endings

def _oversized(w: _Walk, data: bytes, pos: int, ftype: int, channel: int, size: int, state: str) -> Expectation:
    total = size + FRAME_OVERHEAD
    d = w.exception((501,), OVERSIZED, f"a {total}-octet frame (type {ftype}, channel {channel}) over frame-max {w.frame_max}")
    options = [d.verifier]
    complete = len(data) - pos >= total
    if not complete:  # the broker may wait for the rest before it knows more
        options.append(Waits())
    elif data[pos + 7 + size] != FRAME_END or ftype not in (1, 2, 3, 8):  # a silent close fits too
        options.append(w.silent(FRAME_END_BAD + UNDEFINED_TYPE, "").verifier)
    d.verifier = either(*options)
    exp = _final(w, d, state)
    exp.may_wait = not complete
    return exp


def _pending(w: _Walk, why: str) -> Expectation:
    return anything(w.state(), why, may_wait=True)


def _final(w: _Walk, d: _Decision, state: str) -> Expectation:
    options = [e.verifier for e in w.exits] + [d.verifier]
    clauses = tuple(dict.fromkeys(c for e in [*w.exits, d] for c in e.clauses))
    verifier = either(*options)
    wants_method = isinstance(d.verifier, ConnectionException) and not w.negotiating
    may_wait = w.negotiating
    return Expectation(verifier, clauses, state, d.why, strict=d.strict, may_wait=may_wait,
                       wants_close_method=wants_method, silent_required=isinstance(d.verifier, SilentClose),
                       awaits=tuple(w.replies))


def _refusable(w: _Walk, why: str) -> Expectation:
    """A stimulus that is a negotiation error in one reading: any reaction, silence included."""
    return Expectation(Anything(), (), w.refusable_state, f"{why} (in one reading a negotiation error: the broker may "
                       "pause, then close without a close method)", strict=False, may_wait=True, awaits=tuple(w.replies))


def _final_open(w: _Walk, d: _Decision, state: str, why: str) -> Expectation:
    if w.negotiating:  # a silent close (or a pause) is among the allowed reactions in every reading
        return Expectation(d.verifier, d.clauses, state, why, strict=d.strict, may_wait=True, awaits=tuple(w.replies))
    if w.refusable:
        return _refusable(w, why)
    if isinstance(d.verifier, Anything):  # even silence is allowed (see _Walk.not_open)
        return Expectation(Anything(), (), state, why, strict=False, may_wait=True, awaits=tuple(w.replies))
    # a decision that named its own (lenient) reactions keeps them; one made uncertain by what
    # came before it accepts any reaction but silence
    verifier = d.verifier if not d.strict else Reacts()
    return Expectation(verifier, (), state, why, strict=False, awaits=tuple(w.replies))


def _valid(w: _Walk) -> Expectation:
    """Everything sent is valid: the broker answers what asks for an answer."""
    exits = [e.verifier for e in w.exits]
    exit_clauses = [c for e in w.exits for c in e.clauses]
    awaits = tuple(w.replies)
    if w.refusable:
        return _refusable(w, w.uncertain)
    if w.negotiating:  # the next step is the broker's; still no close method before open (2.2.4/1)
        replies = [Replies(name, ch) for name, ch in w.replies]
        return Expectation(either(*exits, *replies, NoCloseMethod(), Waits()),
                           tuple(dict.fromkeys(exit_clauses + list(NEGOTIATION))), w.phase, "a valid negotiation step",
                           may_wait=True, awaits=awaits)
    state = "in-content" if w.content else "after-open"
    if w.opened or w.uncertain:
        why = "a connection.open" if w.opened and not w.uncertain else f"valid frames ({w.uncertain}: effect not modelled)"
        return Expectation(Reacts(), (), state, why, strict=False, awaits=awaits)
    clauses = tuple(dict.fromkeys(exit_clauses + w.valid))
    final = StaysOpen() if not w.content else GoesOn()
    if not clauses:  # no MUST obliges the broker to accept these frames: any reaction passes
        return Expectation(Reacts(), (), state, "valid frames", strict=False, awaits=awaits)
    return Expectation(either(*exits, final), clauses, state, "valid frames: the broker goes on", awaits=awaits)


__all__ = ["Conn", "expect", "whole_frames", "PHASES", "HANDSHAKE"]
