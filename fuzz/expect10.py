"""What AMQP 1.0 lets a broker do with the octets of one stimulus.

:func:`expect` reads the octets the way a correct receiver must -- the protocol header on a
fresh connection (2.2), then frames: SIZE, DOFF, TYPE, channel (2.3.1), the body -- and follows
the state of the connection (SASL, open due, open; sessions by our channel, links by our
handle) until the first frame the spec tells the broker to react to. That frame decides:

* a protocol header the broker does not take: a valid header of a version it supports, then
  the socket closed (2.2/8, 2.2/11, 2.2/12); a multi-protocol broker may also go on in the
  protocol it announced (2.2/5 -- RabbitMQ answers 0-9-1 headers with connection.start);
* a frame larger than the broker's max-frame-size (512 before the open exchange, 2.4.1):
  close with amqp:connection:framing-error (2.7.1/5);
* a channel above the broker's channel-max (0 before the open exchange): close with
  framing-error (2.7.1/8); a handle above the session's handle-max: the same (2.7.2/4);
* an attach on a handle already in use: handle-in-use (2.7.3/3); a flow naming a handle no
  link uses: end with unattached-handle (2.7.4/2); a transfer or detach on such a handle: the
  session ends with an error (2.5.4/1);
* a sasl-init with a mechanism the broker did not offer: a sasl-outcome with an
  authentication failure code (5.3.3.2/1);
* our close: the broker's close (2.4.3/1); empty frames on valid channels: nothing but the
  connection going on (2.4.5/7); a valid open or begin: the broker's open (2.4.1/1) or begin.

Where the spec names no reaction -- a malformed frame header (2.3.1 calls it "malformed"
only), an undecodable body, a performative with a wrong field, a frame on a channel without a
session, a transfer whose fate is the broker's -- the expectation is not strict, but once the
connection is open one MUST still holds: "Prior to closing a connection, each peer MUST write
a close frame" (2.4.3/1). A bare socket close there is a reset-without-close, silence a hang.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from amqpspec.peer.amqp10 import Observation, error_condition, performative_name
from amqpspec.verify import Verifier
from amqpspec.verify10 import ConnectionError, SessionError, StaysOpen
from amqpspec.wire.amqp10 import AMQPFrame, ProtocolHeader, spec
from amqpspec.wire.amqp10.composite import Composite, DescribedBase
from amqpspec.wire.amqp10.frames import (
    AMQP_HEADER, FRAME_AMQP, FRAME_HEADER_SIZE, FRAME_SASL, MIN_DOFF, SASL_HEADER, TLS_HEADER, MalformedFrame,
    decode_body,
)
from amqpspec.wire.amqp10.types import Array, Described

from .expectation import Anything, Expectation, Waits, anything, either  # noqa: F401

HEADER = struct.Struct(">IBBH")
MIN_MAX_FRAME_SIZE = 512
UINT_MAX = (1 << 32) - 1
PHASES = ("fresh", "sasl", "header", "open")

FRAMING_ERROR = str(spec.AmqpConnectionError.FRAMING_ERROR)
HANDLE_IN_USE = str(spec.SessionError.HANDLE_IN_USE)
UNATTACHED_HANDLE = str(spec.SessionError.UNATTACHED_HANDLE)

CLOSE_FIRST = ("amqp10:2.4.3/1",)
OPEN_FIRST = ("amqp10:2.4.1/1",)
REFUSE = ("amqp10:2.2/8",) + CLOSE_FIRST
UNPARSEABLE = ("amqp10:2.2/11",) + CLOSE_FIRST
PROTOCOL_ID = ("amqp10:2.2/12", "amqp10:2.2/13") + CLOSE_FIRST
HEADER_ACCEPTED = ("amqp10:2.2/7", "amqp10:2.2/12")
SASL_ACCEPTED = ("amqp10:5.3/1", "amqp10:5.3.2/1", "amqp10:2.2/12")
MULTI_PROTOCOL = ("amqp10:2.2/5",)
OVERSIZED = ("amqp10:2.7.1/5",)
CHANNEL_RANGE = ("amqp10:2.7.1/8",)
HANDLE_RANGE = ("amqp10:2.7.2/4",)
HANDLE_USED = ("amqp10:2.7.3/3",)
FLOW_UNATTACHED = ("amqp10:2.7.4/2",)
SESSION_INPUT = ("amqp10:2.5.4/1",)
MECHANISM = ("amqp10:5.3.3.2/1",)
EMPTY_FRAMES = ("amqp10:2.4.5/7",)
BEGIN_ANSWER = ("amqp10:2.7.2/2",)
NO_LARGER = ("amqp10:2.7.1/4",)


# ---------------------------------------------------------------------------- connection state

@dataclass
class Link:
    name: str
    role: bool                        # our role: False we send (sender), True we receive


@dataclass
class Session:
    remote: int | None = None         # the broker's channel for it (None: its begin not seen)
    handle_max: int | None = None     # from the broker's begin (None: not known)
    links: dict[int, Link] = field(default_factory=dict)   # our handle -> link


@dataclass
class Conn:
    """What the broker knows of the connection when the stimulus starts."""

    phase: str = "open"                           # one of PHASES
    mechanisms: tuple[str, ...] = ()              # offered in sasl-mechanisms
    max_frame_size: int = MIN_MAX_FRAME_SIZE      # the broker's: the largest frame we may send
    channel_max: int = 0                          # the broker's: the highest channel we may use
    sessions: dict[int, Session] = field(default_factory=dict)   # our channel -> session
    multi_protocol: bool = False                  # the port also speaks AMQP 0-9-1


# ---------------------------------------------------------------------------- verifiers

def _first_header(obs: Observation) -> ProtocolHeader | None:
    frames = obs.frames()
    return frames[0] if frames and isinstance(frames[0], ProtocolHeader) else None


class HeaderEcho(Verifier):
    """The broker answers with the very header that was sent (2.2/7) and that protocol
    proceeds: for SASL, the sasl-mechanisms frame follows (5.3.2/1)."""

    expects_close = False

    def __init__(self, header: bytes, then: str | None = None) -> None:
        self.header = header
        self.then = then

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        hdr = _first_header(obs)
        if hdr is None or hdr.data != self.header or obs.close is not None:
            return False
        return self.then is None or bool(obs.performatives(self.then))

    def describe(self) -> str:
        then = f", then {self.then}" if self.then else ""
        return f"{ProtocolHeader(self.header).summary()} in answer{then}"


class RefusesWithHeader(Verifier):
    """A valid protocol header other than the refused one, then the socket closed; between
    them only frames of the announced protocol (an open, then a close, for AMQP)."""

    def __init__(self, refused: bytes | None, *, refused_protocol_id: int | None = None) -> None:
        self.refused = refused
        self.refused_protocol_id = refused_protocol_id

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        hdr = _first_header(obs)
        if hdr is None or not hdr.well_formed or not obs.closed or obs.framing_error:
            return False
        if (self.refused is not None and hdr.data == self.refused) or \
                (self.refused_protocol_id is not None and hdr.protocol_id == self.refused_protocol_id):
            return False
        rest = obs.frames()[1:]
        if any(isinstance(f, (ProtocolHeader, MalformedFrame)) or performative_name(f) is None for f in rest):
            return False
        return not rest or hdr.protocol_id != 0 or performative_name(rest[0]) == "open"

    def describe(self) -> str:
        other = "" if self.refused is None else f" other than {ProtocolHeader(self.refused).summary()}"
        if self.refused_protocol_id is not None:
            other = f" with a protocol id other than {self.refused_protocol_id}"
        return f"a valid protocol header{other}, then the socket closed"


class StartsAmqp091(Verifier):
    """The broker goes on in AMQP 0-9-1 (its first octets a connection.start frame): a
    multi-protocol server choosing the protocol the header asked for (2.2/5)."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        head = bytes(getattr(obs, "head", b""))
        return len(head) >= 11 and head[0] == 1 and head[1:3] == b"\x00\x00" and head[7:11] == b"\x00\x0a\x00\x0a"

    def describe(self) -> str:
        return "an AMQP 0-9-1 connection.start (the port also speaks 0-9-1)"


class Orderly(Verifier):
    """Any reaction but a bare socket close: what was sent after the stimulus is answered, or
    an error comes (end, detach, close), and the connection ends only after a close frame
    (2.4.3/1). Silence is refused (a hang)."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        if obs.close is not None:
            return True
        if obs.closed:
            return False
        return bool(obs.probe_ok) or any(error_condition(getattr(f, "performative", None)) for f in obs.performatives())

    def describe(self) -> str:
        return "any reaction, the connection ending only after a close frame (the spec names no reaction here)"


class Reacts(Verifier):
    """Any reaction at all before the connection is open: a close, an answer, the socket closed."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return bool(obs.closed or obs.close is not None or obs.probe_ok or obs.frames())

    def describe(self) -> str:
        return "any reaction: an answer, a close or the socket closed (the spec names none here)"


class Answered(Verifier):
    """Every awaited answer came (``probe_ok``), and no close: the broker took what was sent."""

    expects_close = False

    def __init__(self, what: str) -> None:
        self.what = what

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return bool(obs.probe_ok) and obs.close is None and not obs.closed

    def describe(self) -> str:
        return self.what


class OpenFirst(Verifier):
    """The broker's first AMQP frame is an open (2.4.1/1), and it answers -- with its open, or
    with its open and then a close; the socket ends only after a close (2.4.3/1)."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        perfs = [f for f in obs.frames() if isinstance(f, AMQPFrame)]
        if not perfs or performative_name(perfs[0]) != "open":
            return False
        return not obs.closed or obs.close is not None

    def describe(self) -> str:
        return "the broker's open first, then anything (a close before the socket ends)"


class FailedOutcome(Verifier):
    """A sasl-outcome with an authentication failure code (auth, sys, sys-perm, sys-temp)."""

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        out = obs.first("sasl-outcome")
        return out is not None and int(getattr(out, "code", 0) or 0) != 0

    def describe(self) -> str:
        return "a sasl-outcome with an authentication failure code"


class Quiet(Verifier):
    """No reaction to the stimulus yet: the broker may wait for the rest of a frame. Frames it
    sends on its own (flow, empty frames) do not count; a close or an error does."""

    expects_close = False

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return not obs.closed and obs.close is None and \
            not any(error_condition(getattr(f, "performative", None)) for f in obs.performatives())

    def describe(self) -> str:
        return "nothing yet (the broker may wait for the rest of the frame)"


class Within(Verifier):
    """``inner``, and no frame from the broker larger than ``limit`` octets (2.7.1/4)."""

    def __init__(self, inner: Verifier, limit: int) -> None:
        self.inner = inner
        self.limit = limit
        self.expects_close = inner.expects_close

    def accepts(self, obs: Observation) -> bool:  # type: ignore[override]
        return all(n <= self.limit for n in getattr(obs, "sizes", ())) and self.inner.accepts(obs)

    def describe(self) -> str:
        return f"{self.inner.describe()}; no frame from the broker over {self.limit} octets"


# ---------------------------------------------------------------------------- the walk

@dataclass
class _Decision:
    verifier: Verifier
    clauses: tuple[str, ...]
    why: str
    strict: bool = True


@dataclass
class _Walk:
    conn: Conn
    phase: str = ""
    sessions: dict[int, Session] = field(default_factory=dict)
    awaits: list[tuple[str, Any]] = field(default_factory=list)   # answers due: (performative, key)
    valid: list[str] = field(default_factory=list)                # clauses obliging the broker to take it
    uncertain: str = ""         # something sent has effects we do not model (why)
    opened_by_stimulus: bool = False
    peer_limit: int = 0         # our max-frame-size, when the stimulus sent an open
    done: bool = False          # every frame read, no decision before the end

    def __post_init__(self) -> None:
        self.phase = self.conn.phase
        self.sessions = {ch: Session(s.remote, s.handle_max, dict(s.links)) for ch, s in self.conn.sessions.items()}

    @property
    def limit(self) -> int:
        """The largest frame the broker must take now: 512 until its open is known (2.4.1)."""
        return self.conn.max_frame_size if self.phase == "open" and not self.opened_by_stimulus else MIN_MAX_FRAME_SIZE

    @property
    def channel_max(self) -> int:
        return self.conn.channel_max if self.phase == "open" and not self.opened_by_stimulus else 0

    def state(self) -> str:
        if self.phase != "open":
            return {"sasl": "sasl", "header": "before-open"}.get(self.phase, self.phase)
        if any(s.links for s in self.sessions.values()):
            return "link"
        return "session" if self.sessions else "open"

    def unspecified(self, why: str) -> _Decision:
        """The spec names no reaction: any, but no bare close once the connection is open."""
        if self.phase == "open" and not self.opened_by_stimulus:
            return _Decision(Orderly(), CLOSE_FIRST, why, strict=False)
        return _Decision(Anything(), (), why, strict=False)  # before open: the broker may wait, or go


def expect(conn: Conn, data: bytes) -> Expectation:
    """The expectation for the stimulus octets ``data`` sent on a connection in state ``conn``."""
    return expect_and_state(conn, data)[0]


def expect_and_state(conn: Conn, data: bytes) -> tuple[Expectation, dict[int, Session]]:
    """The expectation, and the sessions (our channel -> state) still open after ``data`` when
    it was read to the end without a decision: where the fuzzer's probes may go."""
    if conn.phase == "fresh":
        return _expect_header(conn, data), {}
    w = _Walk(conn)
    exp = _walk_frames(w, data)
    return exp, (w.sessions if w.done and w.phase == "open" and not w.opened_by_stimulus else {})


def _expect_header(conn: Conn, data: bytes) -> Expectation:
    head = data[:8]
    known = (AMQP_HEADER, SASL_HEADER, TLS_HEADER)
    if len(head) < 8:
        if any(k.startswith(head) for k in known) or b"AMQP".startswith(head[:4]) and head[:4] == b"AMQP"[:len(head[:4])]:
            return anything("before-header", f"{len(head)} octets of a protocol header: the broker waits for the rest")
        return Expectation(either(RefusesWithHeader(None), Waits()), UNPARSEABLE, "before-header",
                           f"{len(head)} octets that begin no AMQP header", may_wait=True, wants_close_method=True,
                           foreign=True)
    if len(data) > 8:
        return anything("before-header", "a protocol header followed by more octets", may_wait=True)
    extra = [StartsAmqp091()] if head[:4] == b"AMQP" else []
    if head == AMQP_HEADER:
        return Expectation(either(HeaderEcho(head), RefusesWithHeader(head, refused_protocol_id=0)), HEADER_ACCEPTED,
                           "before-header", "the AMQP 1.0 header", wants_close_method=True, awaits=(("header", 0),))
    if head == SASL_HEADER:
        return Expectation(either(HeaderEcho(head, "sasl-mechanisms"), RefusesWithHeader(head, refused_protocol_id=3)),
                           SASL_ACCEPTED, "before-header", "the SASL header", wants_close_method=True,
                           awaits=(("header", 3), ("sasl-mechanisms", 0)))
    if head == TLS_HEADER:  # on a port without TLS the broker may still take it; or refuse the protocol id
        return Expectation(either(HeaderEcho(head), RefusesWithHeader(head, refused_protocol_id=2)), HEADER_ACCEPTED,
                           "before-header", "the TLS header", wants_close_method=True, foreign=True,
                           awaits=(("header", 2),))
    if head[:4] == b"AMQP" and head[4] in (0, 2, 3):
        return Expectation(either(RefusesWithHeader(head), *extra), REFUSE + MULTI_PROTOCOL, "before-header",
                           f"protocol header {head!r}: a version AMQP 1.0 does not define", wants_close_method=True,
                           foreign=True)
    if head[:4] == b"AMQP":
        return Expectation(either(RefusesWithHeader(head, refused_protocol_id=head[4]), *extra),
                           PROTOCOL_ID + MULTI_PROTOCOL, "before-header", f"protocol header {head!r}: protocol id "
                           f"{head[4]} is not defined", wants_close_method=True, foreign=True)
    return Expectation(RefusesWithHeader(None), UNPARSEABLE, "before-header", f"octets {head!r}: no protocol header",
                       wants_close_method=True, foreign=True)


def _walk_frames(w: _Walk, data: bytes) -> Expectation:
    pos = 0
    while pos < len(data):
        rest = len(data) - pos
        if rest < 4:
            return _pending(w, f"{rest} octets of a frame header: the broker waits for the rest")
        size = int.from_bytes(data[pos:pos + 4], "big")
        if size > w.limit:
            return _oversized(w, size, rest)
        if size < FRAME_HEADER_SIZE:
            return _final(w, w.unspecified(f"a frame of SIZE {size}, below the 8-octet frame header (malformed)"))
        if rest < FRAME_HEADER_SIZE:
            return _pending(w, f"{rest} octets of a frame header: the broker waits for the rest")
        _, doff, ftype, channel = HEADER.unpack_from(data, pos)
        if doff < MIN_DOFF or doff * 4 > size:
            return _final(w, w.unspecified(f"a frame with DOFF {doff} (SIZE {size}): malformed"))
        if rest < size:
            return _pending(w, f"a frame announcing {size} octets, {rest} sent: the broker waits for the rest")
        body = data[pos + doff * 4: pos + size]
        pos += size
        decision = _frame(w, ftype, channel, body)
        if decision is None:
            continue
        if w.uncertain and decision.strict:
            decision = w.unspecified(f"{decision.why}, after {w.uncertain}")
        if not decision.strict and not _whole(data, pos):  # no probe can follow: the broker may wait for the rest
            return _pending(w, f"{decision.why}; the octets end inside a frame")
        return _final(w, decision)
    w.done = True
    return _valid(w)


def _frame(w: _Walk, ftype: int, channel: int, body: bytes) -> _Decision | None:
    """The decision a frame forces, or None when it is valid (the walk state is updated)."""
    if w.phase == "sasl":
        return _sasl(w, ftype, channel, body)
    if ftype != FRAME_AMQP:
        what = "a SASL frame" if ftype == FRAME_SASL else f"a frame of undefined TYPE {ftype}"
        return w.unspecified(f"{what} on an AMQP connection")
    if channel > w.channel_max and not (w.opened_by_stimulus and w.phase == "open"):
        when = "before the open exchange" if w.channel_max == 0 and w.phase == "header" else \
            f"above the broker's channel-max {w.channel_max}"
        return _Decision(ConnectionError(FRAMING_ERROR), CHANNEL_RANGE, f"a frame on channel {channel} {when}")
    if not body:  # an empty frame on a valid channel: a heartbeat (2.4.5/7)
        w.valid.extend(EMPTY_FRAMES)
        return None
    item = decode_body(ftype, channel, body)
    if isinstance(item, MalformedFrame):
        return w.unspecified(f"an AMQP frame whose body does not decode ({item.error})")
    perf = item.performative  # type: ignore[union-attr]
    if not (isinstance(perf, Composite) and "frame" in perf.PROVIDES):
        return w.unspecified("an AMQP frame whose body is not a performative")
    problems = problems_of(perf)
    if problems:
        return w.unspecified(f"{perf.NAME} with {problems[0]}")
    if w.phase == "header":
        return _open(w, channel, perf, bool(item.payload))  # type: ignore[union-attr]
    if w.opened_by_stimulus:  # the broker's limits and answers to what comes next are not ours to know
        w.uncertain = w.uncertain or "frames pipelined behind our open"
        return None
    return _performative(w, channel, perf, item)


def _whole(data: bytes, pos: int) -> bool:
    """Whether ``data[pos:]`` is whole frames by their SIZE fields."""
    while pos < len(data):
        size = int.from_bytes(data[pos:pos + 4], "big") if len(data) - pos >= 4 else 0
        if size < FRAME_HEADER_SIZE:
            return False
        pos += size
    return pos == len(data)


def problems_of(value: Any, depth: int = 0) -> list[str]:
    """What is wrong with a decoded value: its own problems and those of described values in it."""
    if depth > 8:
        return []
    out: list[str] = list(getattr(value, "problems", ())) if isinstance(value, DescribedBase) else []
    if isinstance(value, Composite):
        for f in value.FIELDS:
            out += problems_of(getattr(value, f.attr, None), depth + 1)
    elif isinstance(value, (list, tuple, Array)):
        for v in value:
            out += problems_of(v, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            out += problems_of(k, depth + 1) + problems_of(v, depth + 1)
    elif isinstance(value, Described):
        out += problems_of(value.value, depth + 1)
    return out


def _sasl(w: _Walk, ftype: int, channel: int, body: bytes) -> _Decision | None:
    if ftype != FRAME_SASL:
        return w.unspecified("an AMQP frame during the SASL exchange" if ftype == FRAME_AMQP
                             else f"a frame of undefined TYPE {ftype} during the SASL exchange")
    item = decode_body(ftype, channel, body)
    if isinstance(item, MalformedFrame):
        return w.unspecified(f"a SASL frame whose body does not decode ({item.error})")
    b = item.body  # type: ignore[union-attr]
    if not isinstance(b, spec.SaslInit) or problems_of(b) or item.trailing:  # type: ignore[union-attr]
        what = getattr(b, "NAME", "a value") if isinstance(b, DescribedBase) else "a value"
        return w.unspecified(f"{what} where sasl-init was due" if not isinstance(b, spec.SaslInit)
                             else f"sasl-init with {(problems_of(b) or ['octets after its body'])[0]}")
    mechanism = str(b.mechanism)
    if w.conn.mechanisms and mechanism not in w.conn.mechanisms:
        return _Decision(FailedOutcome(), MECHANISM, f"sasl-init with mechanism {mechanism!r}, which the broker did "
                                                     "not offer")
    if b.initial_response is None:  # the mechanism's next step may be the client's (SASL lets it wait)
        return _Decision(Anything(), (), f"sasl-init ({mechanism}) without an initial-response", strict=False)
    w.awaits.append(("sasl-outcome", 0))
    w.phase = "sasl-done"
    w.uncertain = "a sasl-init (its outcome is the broker's to decide)"
    return None


def _open(w: _Walk, channel: int, perf: Any, payload: bool) -> _Decision | None:
    if not isinstance(perf, spec.Open) or channel != 0 or payload:
        what = f"{perf.NAME} on channel {channel}" if not isinstance(perf, spec.Open) else \
            "an open with a payload" if payload else f"an open on channel {channel}"
        return w.unspecified(f"{what} where open was due")
    ours = int(perf.value_of("max-frame-size"))
    if ours < MIN_MAX_FRAME_SIZE:  # "Both peers MUST accept frames of up to 512": ours is not a valid open
        return w.unspecified(f"an open with max-frame-size {ours}, below {MIN_MAX_FRAME_SIZE}")
    w.phase, w.opened_by_stimulus = "open", True
    w.peer_limit = max(MIN_MAX_FRAME_SIZE, ours)
    w.awaits.append(("open", 0))
    return None


def _performative(w: _Walk, channel: int, perf: Any, item: AMQPFrame) -> _Decision | None:
    name = perf.NAME
    session = w.sessions.get(channel)
    if name == "close":
        return _Decision(ConnectionError(require_error=False), CLOSE_FIRST, "our close: the broker writes its close")
    if name == "open":
        return w.unspecified("a second open")
    if name == "begin":
        if perf.remote_channel is not None:
            return w.unspecified(f"a begin answering a session (remote-channel {perf.remote_channel}) the broker "
                                 "never began")
        if session is not None:
            return w.unspecified(f"a begin on channel {channel}, which already carries a session")
        w.sessions[channel] = Session()
        w.awaits.append(("begin", channel))
        w.valid.extend(BEGIN_ANSWER)
        return None
    if session is None:
        return w.unspecified(f"{name} on channel {channel}, which carries no session")
    if name == "end":
        w.uncertain = w.uncertain or "an end (the session's frames after it are discarded)"
        del w.sessions[channel]
        return None
    handle = getattr(perf, "handle", None)
    if handle is not None and session.handle_max is not None and int(handle) > session.handle_max:
        return _Decision(ConnectionError(FRAMING_ERROR), HANDLE_RANGE,
                         f"{name} with handle {int(handle)}, above the session's handle-max {session.handle_max}")
    if name == "attach":
        h = int(perf.handle)
        if h in session.links:
            return _Decision(either(SessionError(HANDLE_IN_USE), ConnectionError(HANDLE_IN_USE)), HANDLE_USED,
                             f"an attach on handle {h}, already used by link {session.links[h].name!r}")
        session.links[h] = Link(str(perf.name), bool(perf.role))
        w.awaits.append(("attach", str(perf.name)))
        w.uncertain = w.uncertain or "an attach (whether the broker takes the link is its choice)"
        return None
    if name == "flow":
        if handle is not None and int(handle) not in session.links:
            return _Decision(SessionError(UNATTACHED_HANDLE), FLOW_UNATTACHED,
                             f"a flow for handle {int(handle)}, which no link uses")
        w.uncertain = w.uncertain or "a flow (credit and windows are not modelled)"
        return None
    if name in ("transfer", "detach") and int(handle) not in session.links:
        return _Decision(SessionError(), SESSION_INPUT, f"a {name} on handle {int(handle)}, which no link uses")
    if name == "detach":
        del session.links[int(handle)]
        w.uncertain = w.uncertain or "a detach"
        return None
    # a transfer on an attached link, a disposition: the fate of deliveries is the broker's
    w.uncertain = w.uncertain or name
    return None


# ---------------------------------------------------------------------------- endings

def _pending(w: _Walk, why: str) -> Expectation:
    return anything(w.state(), why, may_wait=True)


def _oversized(w: _Walk, size: int, rest: int) -> Expectation:
    why = f"a frame of {size} octets, over the broker's max-frame-size {w.limit}"
    complete = rest >= size
    if w.uncertain:
        d = w.unspecified(f"{why}, after {w.uncertain}")
        exp = _final(w, d)
        exp.may_wait = exp.may_wait or not complete
        return exp
    options: list[Verifier] = [ConnectionError(FRAMING_ERROR)]
    if not complete:  # the broker may read on until the frame is whole before judging it
        options.append(Quiet())
    exp = _final(w, _Decision(either(*options), OVERSIZED, why))
    exp.may_wait = not complete
    return exp


def _final(w: _Walk, d: _Decision) -> Expectation:
    wants = isinstance(d.verifier, (ConnectionError, Orderly)) or w.phase == "open"
    verifier = d.verifier if not w.peer_limit else Within(d.verifier, w.peer_limit)
    return Expectation(verifier, d.clauses + (NO_LARGER if w.peer_limit else ()), w.state(), d.why, strict=d.strict,
                       wants_close_method=wants and w.phase != "sasl", awaits=tuple(w.awaits),
                       may_wait=isinstance(d.verifier, Anything))


def _valid(w: _Walk) -> Expectation:
    """Everything sent is valid (or its fate the broker's): what asks for an answer is answered."""
    awaits = tuple(w.awaits)
    if w.phase in ("sasl", "sasl-done"):
        return Expectation(Reacts(), (), "sasl", w.uncertain or "a valid sasl-init", strict=False, awaits=awaits)
    if w.opened_by_stimulus:
        verifier: Verifier = Within(OpenFirst(), w.peer_limit)
        return Expectation(verifier, OPEN_FIRST + CLOSE_FIRST + NO_LARGER, "before-open",
                           "a valid open" + (f", then {w.uncertain}" if w.uncertain else ""), awaits=awaits,
                           wants_close_method=True)
    if w.phase == "header":  # only empty frames: the broker waits for our open (or opens first)
        return Expectation(either(Waits(), OpenFirst()), EMPTY_FRAMES, "before-open", "empty frames before open: the broker waits for open",
                           may_wait=True)
    if w.uncertain:
        return Expectation(Orderly(), CLOSE_FIRST, w.state(), f"valid frames ({w.uncertain}: effect not modelled)",
                           strict=False, awaits=awaits, wants_close_method=True)
    clauses = tuple(dict.fromkeys(w.valid))
    if awaits:
        return Expectation(Answered("every answer due (begin), no close"), clauses, w.state(), "valid frames: answered",
                           awaits=awaits, wants_close_method=True)
    if not clauses:
        return Expectation(Orderly(), CLOSE_FIRST, w.state(), "valid frames", strict=False, wants_close_method=True)
    return Expectation(StaysOpen(), clauses, w.state(), "valid frames: the broker goes on", wants_close_method=True)


__all__ = ["Conn", "Session", "Link", "expect", "problems_of", "PHASES", "MIN_MAX_FRAME_SIZE", "HeaderEcho",
           "RefusesWithHeader", "StartsAmqp091", "Orderly", "Reacts", "Answered", "OpenFirst", "FailedOutcome", "Within"]
