"""Part 1 Types: the broker writes valid encodings, reads every valid one, and refuses invalid ones.

Three kinds of checks:

* what the broker sends: every frame of an ordinary exchange (SASL, open, begin, attach both
  ways, transfer, flow, disposition, detach, end, close) decodes without a problem -- no
  undecodable octets (arrays laid out per 1.2.4, maps with an even item count per 1.6.23), no
  null mandatory field and no empty mandatory multiple field (1.4), no value of the wrong type;
* what the broker must read: the same exchange with our performatives written in other valid
  ways the type system allows -- trailing null fields kept (1.4 lets them be omitted or not),
  the widest encodings (list32, uint/ulong without the compact forms, str32, sym32),
  symbolic descriptors instead of numeric codes (1.5), zero-length arrays in multiple fields
  (which 1.4 makes identical to null) and single values in multiple fields (1.4);
* what the broker should not take for valid: a null mandatory field, a map with an odd number
  of items, a string that is not UTF-8, a symbol that is not ASCII. No sentence names a
  reaction to such a frame (nor demands one in so many words), so these are guideline checks
  (the type definition as text) passed by an error of any scope; the condition that the
  error definitions suggest (amqp:decode-error, amqp:invalid-field) is a separate guideline
  check. The open with a null container-id is amqp10/2.7.1/no-container-id.

Map order (1.6.23: two maps differing only in order are not equal) is checked on the
application-properties of a message, which the broker must deliver unchanged.
"""
from __future__ import annotations

from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Observation, Peer, UnexpectedReply, error_condition, performative_name
from amqpspec.peer.base import Closed, DeadlineExceeded
from amqpspec.peer.session10 import Link, Receiver, Sender, begin, session_of
from amqpspec.wire.amqp10 import (
    AMQPFrame, Array, Encoded, Message, ProtocolHeader, Raw, Symbol, describe, spec, types,
)
from amqpspec.wire.amqp10.composite import Composite, DescribedBase, coerce, show

from ._common import REACTION_WINDOW, WAIT, address, link_name
from ._connection import mark_opened, to_header

DECODE_ERROR = "amqp:decode-error"
INVALID_FIELD = "amqp:invalid-field"
CONDITION_DOC = ("amqp:decode-error: Data could not be decoded. / amqp:invalid-field: An invalid field was passed in a "
                 "frame body, and the operation could not proceed.")
WIDE = {"uint": 0x70, "ulong": 0x80, "string": 0xB1, "symbol": 0xB3, "binary": 0xB0, "boolean": 0x56,
        "map": 0xD1, "array": 0xF0}
MAX_FRAME = 65536

Transform = Callable[[Any], Any]


# ============================================================================ the exchange driver

class Exchange:
    """An ordinary exchange written by hand, each performative we send passed through ``transform``.

    Every item the broker sends is kept (``received``) so its encoding can be checked; the
    steps completed and the first failure are kept for the report.
    """

    def __init__(self, ctx: Context, transform: Transform = lambda p: p, open_fields: dict | None = None) -> None:
        self.ctx = ctx
        self.transform = transform
        self.open_fields = open_fields or {}
        self.received: list[Any] = []
        self.steps: list[str] = []
        self.failure: str | None = None
        self.peer: Peer | None = None

    # -- recording ---------------------------------------------------------------------
    def _wrap(self, peer: Peer) -> None:
        seen: set[int] = set()
        original = peer.recv

        def recv(timeout: float = 5.0) -> Any:
            item = original(timeout)
            if item is not None and not isinstance(item, Closed) and id(item) not in seen:
                seen.add(id(item))
                self.received.append(item)
            return item

        peer.recv = recv  # type: ignore[method-assign]

    def send(self, frame: AMQPFrame) -> None:
        """A frame of the session layer (or a close) as ``transform`` writes its performative."""
        assert self.peer is not None
        self.peer.send(AMQPFrame(frame.channel, deep(frame.performative, self.transform), frame.payload))

    def wait(self, what: str, name: str, ch: int | None, match: Callable[[Any], bool] | None = None) -> Any:
        assert self.peer is not None
        try:
            got = self.peer.await_frame(name, channel=ch, match=match, timeout=WAIT)
        except (UnexpectedReply, DeadlineExceeded) as exc:
            self.failure = f"{what}: {exc}"
            return None
        self.steps.append(what)
        return got

    # -- the exchange --------------------------------------------------------------------
    def run(self) -> bool:
        ctx = self.ctx
        peer = ctx.connect(handshake=False)
        self.peer = peer
        self._wrap(peer)
        if ctx.target.credentials_given:
            outcome = peer.sasl()
            if int(getattr(outcome, "code", 1) or 0) != 0:
                ctx.skip(f"SASL authentication failed: {show(outcome)}")
        peer.send(ProtocolHeader.amqp())
        peer.expect_header()
        self.send(AMQPFrame(0, spec.Open(container_id=ctx.name("types"), hostname=ctx.target.host,
                                         max_frame_size=MAX_FRAME, **self.open_fields)))
        remote = self.wait("open answered", "open", 0)
        if remote is None:
            return False
        mark_opened(peer, remote.performative, MAX_FRAME)
        peer.reader.max_frame_size = MAX_FRAME
        s = session_of(peer, 0)   # the layer counts from here: its frames are built, the transform applied
        peer.reserve_channel(0)
        self.send(s.begin_frame())
        if self.wait("begin answered", "begin", None) is None:
            return False
        ch = s.remote
        addr = address(ctx)
        snd = Sender(s, link_name(ctx, "snd"), 0)
        self.send(snd.attach_frame(source=spec.Source(), target=spec.Target(address=addr)))
        if self.wait("sending link attached", "attach", ch, lambda f: str(f.performative.name) == snd.name) is None:
            return False
        if self.wait("credit granted", "flow", ch, lambda f: f.performative.handle is not None
                     and int(f.performative.handle) == snd.remote_handle
                     and int(f.performative.link_credit or 0) > 0) is None:
            return False
        tag = f"body-{ctx.rng.getrandbits(48):012x}".encode()
        for frame in snd.transfer_frames(Message(body=tag), tag=b"\x00\x01"):
            self.send(frame)
        if self.wait("transfer accepted", "disposition", ch, lambda f: f.performative.role is spec.Role.RECEIVER
                     and int(f.performative.first) == snd.ids[-1]) is None:
            return False
        rcv = Receiver(s, link_name(ctx, "rcv"), 1)
        self.send(rcv.attach_frame(source=spec.Source(address=addr), target=spec.Target()))
        if self.wait("receiving link attached", "attach", ch, lambda f: str(f.performative.name) == rcv.name) is None:
            return False
        self.send(rcv.grant_frame(1))
        got = self.wait("message delivered", "transfer", ch, lambda f: int(f.performative.handle)
                        == rcv.remote_handle and tag in bytes(f.payload))
        if got is None:
            return False
        self.send(rcv.disposition_frame(int(got.performative.delivery_id)))
        links: tuple[tuple[Link, str], ...] = ((snd, "sending"), (rcv, "receiving"))
        for link, what in links:
            self.send(link.detach_frame(closed=True))
            if self.wait(f"{what} link detached", "detach", ch,
                         lambda f, theirs=link.remote_handle: int(f.performative.handle) == theirs) is None:
                return False
        self.send(s.end_frame())
        if self.wait("session ended", "end", ch) is None:
            return False
        self.send(AMQPFrame(0, spec.Close()))
        peer.close_sent = True
        return self.wait("connection closed", "close", 0) is not None

    def describe(self) -> str:
        done = ", ".join(self.steps) or "nothing"
        return f"completed: {done}" + (f"; failed at {self.failure}" if self.failure else "")


def deep(value: Any, fn: Transform) -> Any:
    """``fn`` applied to a composite and, first, to the composites in its fields (source, target, states)."""
    if not isinstance(value, Composite):
        return value
    changes = {f.attr: deep(getattr(value, f.attr), fn) for f in value.FIELDS
               if isinstance(getattr(value, f.attr), Composite)}
    return fn(value.replace(**changes) if changes else value)


def check_exchange(ctx: Context, ex: Exchange, expected: str, **record: Any) -> None:
    ok = ex.run()
    errors = [describe(f) for f in ex.received if performative_name(f) in ("close", "end", "detach")
              and error_condition(f.performative)]
    ctx.record(ok and not errors, expected=expected,
               observed=ex.describe() + ("; errors: " + "; ".join(errors) if errors else ""), **record)


# ---------------------------------------------------------------------------- transforms

def keep_trailing_nulls(p: Any) -> Any:
    return p.override(nulls=True)


def widest(p: Any) -> Any:
    changes = {}
    for f in p.FIELDS:
        v = getattr(p, f.attr)
        if v is None or isinstance(v, DescribedBase):
            continue
        cv = coerce(f, v, p.NAME)
        code = WIDE.get(types.type_of(cv))
        if code is not None:
            changes[f.attr] = Encoded(cv, code)
    return p.replace(**changes).override(encoding="list32")


def symbolic_descriptor(p: Any) -> Any:
    return p.override(descriptor=Symbol(p.DESCRIPTOR))


def empty_arrays(p: Any) -> Any:
    changes = {f.attr: Array([], type=f.primitive) for f in p.FIELDS
               if f.multiple and not f.mandatory and getattr(p, f.attr) is None and f.primitive in types.BY_TYPE}
    return p.replace(**changes)


def single_values(p: Any) -> Any:
    values = {"offered-capabilities": Symbol("amqpspec-unused"), "desired-capabilities": Symbol("amqpspec-unused"),
              "outgoing-locales": Symbol("en-US"), "incoming-locales": Symbol("en-US")}
    if not isinstance(p, (spec.Open, spec.Begin, spec.Attach)):
        return p
    changes = {f.attr: values[f.name] for f in p.FIELDS if f.name in values and getattr(p, f.attr) is None}
    return p.replace(**changes)


# ============================================================================ what the broker sends

@case("amqp10/1.4/broker-frames-well-formed", title="every frame the broker sends in an ordinary exchange is well formed",
      clauses=("amqp10:0.2/1", "amqp10:0.2/2", "amqp10:0.2/3", "amqp10:0.2/4", "amqp10:0.2/6", "amqp10:0.2/8",
               "amqp10:1.2.4/1", "amqp10:1.4/3", "amqp10:1.6.23/1"))
def broker_frames_well_formed(ctx: Context) -> None:
    """Runs an ordinary exchange using nothing beyond the specification (SASL when the URL names
    credentials, open, begin, a sending and a receiving link, one message each way, detach,
    end, close). Passes when it completes and every frame the broker sent decodes without a
    problem: no undecodable octets (array and map layouts), no null mandatory field or empty
    mandatory multiple field, no field of the wrong type, no element beyond a type's fields."""
    ex = Exchange(ctx)
    ok = ex.run()
    peer = ex.peer
    problems = []
    for item in ex.received:
        found = item.problems() if hasattr(item, "problems") else []
        problems += [f"{performative_name(item) or type(item).__name__}: {p}" for p in found]
    if peer is not None and peer.framing_error:
        problems.append(f"undecodable stream: {peer.framing_error}")
    ctx.record(ok, what="the exchange completes", clauses=("amqp10:0.2/1", "amqp10:0.2/2", "amqp10:0.2/4",
                                                          "amqp10:0.2/6", "amqp10:0.2/8"),
               expected="every step answered", observed=ex.describe())
    ctx.record(not problems, what="the broker's frames are valid encodings",
               clauses=("amqp10:0.2/1", "amqp10:0.2/3", "amqp10:1.2.4/1", "amqp10:1.4/3", "amqp10:1.6.23/1"),
               expected="no problem in any frame received",
               observed="; ".join(problems) or f"{len(ex.received)} items received, all well formed")


# ============================================================================ what the broker must read

@case("amqp10/1.4/trailing-nulls-accepted", title="performatives whose trailing null fields are written are understood",
      clauses=("amqp10:1.4/1", "amqp10:0.2/1"))
def trailing_nulls_accepted(ctx: Context) -> None:
    """The ordinary exchange with every performative (and source, target, outcome) written with
    all its fields, trailing nulls included (1.4: they MAY be omitted, so they may be present).
    Passes when every step is answered without error."""
    check_exchange(ctx, Exchange(ctx, keep_trailing_nulls), "the exchange completes without error")


@case("amqp10/1.2/widest-encodings-accepted", title="performatives in the widest valid encodings are understood",
      clauses=("amqp10:0.2/3", "amqp10:0.2/1"))
def widest_encodings_accepted(ctx: Context) -> None:
    """The ordinary exchange with every performative as list32, integers as uint (0x70) and ulong
    (0x80) instead of their compact forms, strings as str32, symbols as sym32, binaries as
    vbin32, booleans as 0x56, maps as map32. Passes when every step is answered without error."""
    check_exchange(ctx, Exchange(ctx, widest), "the exchange completes without error")


@case("amqp10/1.5/symbolic-descriptors-accepted", title="performatives with symbolic descriptors are understood",
      clauses=("amqp10:0.2/3", "amqp10:0.2/1"))
def symbolic_descriptors_accepted(ctx: Context) -> None:
    """The ordinary exchange with every described type (performatives, source, target, accepted,
    message sections excepted) identified by its symbolic descriptor ("amqp:open:list" ...)
    instead of its numeric code; 1.5 defines both forms. Passes when every step is answered
    without error."""
    check_exchange(ctx, Exchange(ctx, symbolic_descriptor), "the exchange completes without error")


@case("amqp10/1.4/empty-array-as-null", title="a zero-length array in a multiple field is treated as null",
      clauses=("amqp10:1.4/2",))
def empty_array_as_null(ctx: Context) -> None:
    """The ordinary exchange with every absent multiple field (capabilities, locales, source
    outcomes, ...) sent as a zero-length array of its type, which 1.4 makes semantically
    identical to null. Passes when every step is answered without error."""
    check_exchange(ctx, Exchange(ctx, empty_arrays), "the exchange completes without error, as with nulls")


@case("amqp10/1.4/single-value-in-multiple-field", title="a single value in a multiple field is understood",
      guideline="The multiple attribute of a field description controls whether multiple element values are "
                "permitted in the representation. A single element of the type specified in the field description "
                "is always permitted.")
def single_value_in_multiple(ctx: Context) -> None:
    """The ordinary exchange with offered/desired-capabilities of open, begin and attach sent as a
    single symbol (not an array), and open's locales as the single symbol en-US. Passes when
    every step is answered without error."""
    check_exchange(ctx, Exchange(ctx, single_values), "the exchange completes without error")


# ============================================================================ what the broker must refuse

MANDATORY_DOC = ("The mandatory attribute of a field description controls whether a null element value is permitted "
                 "in the representation. [attach: <field name=\"role\" type=\"role\" mandatory=\"true\"/>]")
ODD_MAP_DOC = ("A map is encoded as a compound value where the constituent elements form alternating key value pairs. "
               "Map encodings MUST contain an even number of items (i.e. an equal number of keys and values).")
UTF8_DOC = "str8-utf8: up to 2^8 - 1 octets worth of UTF-8 Unicode (with no byte order mark)"
ASCII_DOC = "sym8: up to 2^8 - 1 seven bit ASCII characters representing a symbolic value"


def _refusal_checks(ctx: Context, obs: Observation, guideline: str) -> None:
    """The broker does not take the frame for valid: an error of any scope (guideline: no sentence
    names a reaction), and separately the condition the error definitions suggest."""
    errors = [f for f in obs.frames() if performative_name(f) in ("close", "end", "detach")
              and error_condition(f.performative)]
    # level=SHOULD is a ceiling (no sentence names a reaction, even to a MUST): a weaker text weighs less
    ctx.record(bool(errors) or obs.closed, what="the broker refuses the frame", level=Level.SHOULD, guideline=guideline,
               expected="an error: detach, end or close carrying an error (or the connection closed)",
               observed=obs.describe())
    if errors:
        ctx.record(error_condition(errors[0].performative) in (DECODE_ERROR, INVALID_FIELD),
                   what="the error condition names the invalid data", expected=f"{DECODE_ERROR} or {INVALID_FIELD}",
                   observed=describe(errors[0]), guideline=CONDITION_DOC)


def _open_with(ctx: Context, open_perf: Any) -> Peer:
    peer = to_header(ctx)
    peer.send(AMQPFrame(0, open_perf))
    return peer


def _open_reaction(peer: Peer) -> Observation:
    """Observes the answer to a (wrong) open: until a close, or -- when the broker answered with
    open -- until a liveness probe (a begin) shows the connection still serving."""
    obs = peer.observe(REACTION_WINDOW, stop=lambda f: performative_name(f) in ("open", "close"))
    if obs.close is None and not obs.closed and obs.first("open") is not None:
        peer.opened.opened = True
        peer.stage = "open"
        more = peer.observe(REACTION_WINDOW, probe=True)
        obs.received += more.received
        obs.end, obs.probe_ok, obs.elapsed = more.end, more.probe_ok, obs.elapsed + more.elapsed
    return obs


def _attach_reaction(peer: Peer, ch: int) -> Observation:
    """Observes the answer to a (wrong) attach: until an error, or a little after the broker's attach
    (a refusal is an attach with a null terminus followed by a detach, 2.6.3)."""
    def refused(f: Any) -> bool:
        return performative_name(f) == "close" or (performative_name(f) in ("end", "detach")
                                                   and bool(error_condition(f.performative)))
    obs = peer.observe(REACTION_WINDOW, stop=lambda f: refused(f) or (performative_name(f) == "attach"
                                                                       and f.channel == ch))
    if not obs.closed and not any(refused(f) for f in obs.frames()):
        more = peer.observe(1.0, stop=refused)
        obs.received += more.received
        obs.end = more.end
        obs.elapsed += more.elapsed
    return obs


@case("amqp10/1.4/null-mandatory-field-refused", title="an attach whose mandatory role is null is refused",
      guideline=MANDATORY_DOC)
def null_mandatory_field(ctx: Context) -> None:
    """Attaches a link whose role, a mandatory field, is null (1.4 does not permit a null there; the
    open with a null container-id is amqp10/2.7.1/no-container-id). Passes when the broker
    answers with an error of any scope (detach, end or close carrying an error, or the socket
    closed); amqp:invalid-field or amqp:decode-error is a separate guideline check."""
    s = begin(ctx.connect(), timeout=5.0)
    s.sender(address(ctx), name=link_name(ctx, "null-role"), role=None, wait=False)
    _refusal_checks(ctx, _attach_reaction(s.peer, s.remote), MANDATORY_DOC)


@case("amqp10/1.6.23/odd-map-refused", title="an open whose properties map has an odd number of items is refused",
      level=Level.SHOULD, guideline=ODD_MAP_DOC)
def odd_map_refused(ctx: Context) -> None:
    """Sends open whose properties are a map8 holding three items (key, value, key): no valid map
    (1.6.23: a map encoding MUST hold an even number of items). Passes when the broker closes
    the connection with an error (or closes the socket); amqp:decode-error (or invalid-field)
    is a separate guideline check."""
    items = types.encode(Symbol("product")) + types.encode("amqpspec") + types.encode(Symbol("orphan"))
    odd = Raw(bytes([0xC1, len(items) + 1, 3]) + items)
    peer = _open_with(ctx, spec.Open(container_id=ctx.name("odd"), hostname=ctx.target.host,
                                     max_frame_size=MAX_FRAME, properties=odd))
    _refusal_checks(ctx, _open_reaction(peer), ODD_MAP_DOC)


@case("amqp10/1.6.20/invalid-utf8-refused", title="an attach whose name is not UTF-8 is refused",
      guideline=UTF8_DOC)
def invalid_utf8_refused(ctx: Context) -> None:
    """Attaches a link whose name is a str8 holding the octets ff fe 80 (no UTF-8 sequence; 1.6.20:
    a string is UTF-8). Passes when the broker answers with an error of any scope (detach, end
    or close carrying an error, or the socket closed), not by attaching the link."""
    s = begin(ctx.connect(), timeout=5.0)
    s.sender(address(ctx), name=Raw(b"\xa1\x03\xff\xfe\x80"), wait=False)  # type: ignore[arg-type]
    _refusal_checks(ctx, _attach_reaction(s.peer, s.remote), UTF8_DOC)


@case("amqp10/1.6.21/non-ascii-symbol-refused", title="a distribution-mode symbol with non-ASCII octets is refused",
      guideline=ASCII_DOC)
def non_ascii_symbol_refused(ctx: Context) -> None:
    """Attaches a receiving link whose source's distribution-mode is a sym8 holding the octets
    6d c3 b6 76 65 ("m\u00f6ve" in UTF-8; 1.6.21: a symbol is seven-bit ASCII). Passes when the
    broker answers with an error of any scope, not by attaching the link as if the symbol were
    valid."""
    s = begin(ctx.connect(), timeout=5.0)
    bad = Raw(b"\xa3\x05m\xc3\xb6ve")
    s.receiver(name=link_name(ctx, "rcv"), source=spec.Source(address=address(ctx), distribution_mode=bad), wait=False)
    _refusal_checks(ctx, _attach_reaction(s.peer, s.remote), ASCII_DOC)


# ============================================================================ map order

@case("amqp10/1.6.23/map-order-kept", title="the order of a message's application-properties is kept",
      clauses=("amqp10:1.6.23/2",))
def map_order_kept(ctx: Context) -> None:
    """Sends a message whose application-properties hold eight keys in a shuffled (not sorted)
    order and receives it back: maps are ordered (two maps differing only in order are not
    equal), so the delivered application-properties must list the keys in the order sent."""
    keys = [f"k{i}-{ctx.rng.getrandbits(16):04x}" for i in range(8)]
    ctx.rng.shuffle(keys)
    if keys == sorted(keys):
        keys.reverse()
    props = {k: i for i, k in enumerate(keys)}
    s = begin(ctx.connect(), timeout=5.0)
    addr = address(ctx)
    snd = _attached(ctx, lambda: s.sender(addr, name=link_name(ctx, "snd")), "a sending link to a fresh node")
    tag = f"order-{ctx.rng.getrandbits(48):012x}".encode()
    did = snd.send(Message(application_properties=props, body=tag))
    if not isinstance(snd.wait_outcomes().get(did), spec.Accepted):
        ctx.skip("the broker did not accept the message")
    rcv = _attached(ctx, lambda: s.receiver(addr, name=link_name(ctx, "rcv")), f"a receiving link from {addr}")
    rcv.grant(1)
    got = [d for d in rcv.receive(1, WAIT) if tag in d.payload]
    if not got:
        ctx.skip(f"the message was not delivered: {len(rcv.deliveries())} deliveries; "
                 f"{'; '.join(describe(f) for f in s.error_frames()) or 'no error'}")
    props_got = got[0].message().application_properties
    received = [str(k) for k in props_got.value.keys()] if props_got is not None and hasattr(props_got.value, "keys") \
        else None
    ctx.record(received == keys, expected=f"application-properties keys in the order sent: {keys}",
               observed=f"keys received: {received}")


def _attached(ctx: Context, attach: Callable[[], Any], what: str) -> Any:
    """The link ``attach`` makes; skips the case when the broker does not attach it to a terminus."""
    try:
        link = attach()
    except (UnexpectedReply, DeadlineExceeded) as exc:
        ctx.skip(f"cannot set up {what}: {exc}")
    terminus = link.remote.target if link.role is spec.Role.SENDER else link.remote.source
    if terminus is None or link.remote_detach is not None or link.s.ended is not None:
        ctx.skip(f"cannot set up {what}: the broker attached it without a terminus")
    return link
