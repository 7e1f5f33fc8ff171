"""Spec 2.6.7 Flow Control (transport): link-credit, delivery-count, drain, available.

The receiver sets link-credit, it does not add to it: the sender keeps
``link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)``,
so two flows of 5 sent before any transfer arrives allow 5 transfers, not 10, and a flow
carrying an old delivery-count allows only what is left once the transfers in flight are
counted. delivery-count is an RFC-1982 serial number: it wraps at 2^32. A sender with zero
credit stops; with drain set and nothing left to send it advances delivery-count until the
credit is used up and says so in a flow.

The broker is the sender when we receive from a queue (we fill it first, on a sending link
whose transfers the broker settles), and the receiver when we send to one: then its flows
must carry our delivery-count (2.7.4), also across the wrap.

The first part of this module holds helpers the 2.7.4, 3.2 and 3.4 modules share: a session
that counts what it receives (so our flows carry correct session numbers), links that track
their delivery-count and credit, and ``publish`` (fill a queue, respecting the broker's
credit, until the broker settled every message).
"""
from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.case import Context, case
from amqpspec.clauses import Level
from amqpspec.peer.amqp10 import Peer, performative_name
from amqpspec.peer.base import Closed, PeerError
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, describe, encode, spec, transfer_frames

from ._common import WAIT, Received, address, counters

SEQ = 1 << 32            # delivery-count and transfer ids are RFC-1982 serial numbers modulo 2^32
HALF = 1 << 31
QUIET = 0.7              # seconds of silence after which a sender has sent what its credit allowed
SESSION_WINDOW = 2048    # the incoming-window our flows advertise


class Inconclusive(PeerError):
    """The case could not set up what it checks (e.g. the broker never accepted the messages)."""


def seq_add(a: int, n: int = 1) -> int:
    return (int(a) + n) % SEQ


def seq_diff(a: int, b: int) -> int:
    """a - b in RFC-1982 serial arithmetic, as a signed number."""
    d = (int(a) - int(b)) % SEQ
    return d - SEQ if d >= HALF else d


class Payload(bytes):
    """Message octets sent exactly as given (sections out of order, duplicated, missing ...)."""


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


# ============================================================================ session


@dataclass
class Sess:
    """One session of a raw peer; keeps every AMQP frame it read, in order."""

    peer: Peer
    ch: int
    begin: Any
    transfers_in: int = 0      # transfer frames received on this session
    transfers_out: int = 0     # transfer frames sent (our begin's next-outgoing-id is 0)
    log: list[AMQPFrame] = field(default_factory=list)
    ended: Any = None          # the close / end / detach-with-error, or Closed, that ended reading

    @property
    def next_outgoing_id(self) -> int:
        return self.transfers_out % SEQ

    def next_incoming_id(self) -> int:
        return seq_add(int(self.begin.next_outgoing_id or 0), self.transfers_in)

    def read(self, timeout: float, until: Callable[[AMQPFrame], bool] | None = None) -> list[AMQPFrame]:
        """Frames for up to ``timeout`` seconds, or until ``until(frame)``, a close, an end, a
        detach with an error, or the socket closing."""
        new: list[AMQPFrame] = []
        stop = time.monotonic() + timeout
        while self.ended is None:
            left = stop - time.monotonic()
            if left <= 0:
                break
            item = self.peer.recv(left)
            if item is None:
                break
            if isinstance(item, Closed):
                self.ended = item
                break
            if isinstance(item, EmptyFrame) or not isinstance(item, AMQPFrame):
                continue
            new.append(item)
            self.log.append(item)
            name = performative_name(item)
            if name == "transfer" and item.channel == self.ch:
                self.transfers_in += 1
            if name == "close" or (name == "end" and item.channel == self.ch) or \
                    (name == "detach" and item.channel == self.ch and getattr(item.performative, "error", None)):
                self.ended = item
                if name == "close" and not self.peer.close_sent:
                    self.peer.send(AMQPFrame(0, spec.Close()))
                break
            if until is not None and until(item):
                break
        return new

    def quiet(self, window: float = QUIET, *, limit: float = 4.0) -> list[AMQPFrame]:
        """Reads until nothing but empty frames came for ``window`` seconds (at most ``limit``)."""
        new: list[AMQPFrame] = []
        stop = time.monotonic() + limit
        while self.ended is None and time.monotonic() < stop:
            got = self.read(min(window, max(0.0, stop - time.monotonic())))
            if not got:
                break
            new += got
        return new

    def flow_frame(self, handle: int | None = None, *, delivery_count: int | None = None,
                   link_credit: int | None = None, drain: bool | None = None, echo: bool | None = None,
                   available: int | None = None) -> AMQPFrame:
        """A flow with this session's current numbers (and the given link state)."""
        return AMQPFrame(self.ch, spec.Flow(
            next_incoming_id=self.next_incoming_id(), incoming_window=SESSION_WINDOW,
            next_outgoing_id=self.next_outgoing_id, outgoing_window=SESSION_WINDOW, handle=handle,
            delivery_count=delivery_count, link_credit=link_credit, available=available, drain=drain, echo=echo))

    def flow(self, handle: int | None = None, **link_state: Any) -> None:
        self.peer.send(self.flow_frame(handle, **link_state))

    def send_together(self, frames: list[AMQPFrame]) -> None:
        """Frames in one socket write, so the broker reads them together (nothing of its own in between)."""
        self.peer.link.send_bytes(b"".join(encode(f) for f in frames),
                                  f"{len(frames)} frames in one write: " + " + ".join(describe(f) for f in frames))

    def frames(self, name: str, handle: int | None = None, since: int = 0) -> list[AMQPFrame]:
        """This session's frames named ``name`` (on link ``handle`` of the broker when given)."""
        return [f for f in self.log[since:] if f.channel == self.ch and performative_name(f) == name
                and (handle is None or _int(getattr(f.performative, "handle", None)) == handle)]

    def error_frames(self) -> list[AMQPFrame]:
        return [f for f in self.log if performative_name(f) in ("close", "end", "detach")
                and getattr(f.performative, "error", None) is not None]


def open_session(ctx: Context, peer: Peer | None = None) -> Sess:
    peer = peer or ctx.connect()
    ch, remote = peer.begin()
    return Sess(peer, ch, remote)


def describe_frames(frames: list[AMQPFrame], limit: int = 12) -> str:
    shown = [describe(f) for f in frames[:limit]]
    if len(frames) > limit:
        shown.append(f"... {len(frames) - limit} more")
    return "; ".join(shown) or "nothing"


# ============================================================================ links


@dataclass
class Rcv:
    """A link on which we receive (the broker sends)."""

    s: Sess
    handle: int
    name: str
    remote: Any = None

    @property
    def remote_handle(self) -> int | None:
        return None if self.remote is None else _int(self.remote.handle)

    @property
    def init(self) -> int:
        """The broker's initial-delivery-count (2.6.7: the sender's arbitrary starting point)."""
        value = None if self.remote is None else self.remote.initial_delivery_count
        return int(value or 0)

    def transfers(self, since: int = 0) -> list[AMQPFrame]:
        return self.s.frames("transfer", self.remote_handle, since)

    def deliveries(self) -> list[Received]:
        """Complete deliveries on this link (frames of a multi-frame transfer joined)."""
        out: list[Received] = []
        first: Any = None
        data = bytearray()
        n = 0
        for f in self.transfers():
            t = f.performative
            if first is None:
                first, data, n = t, bytearray(), 0
            data += bytes(f.payload)
            n += 1
            if not t.more:
                if not t.aborted:
                    out.append(Received(first, bytes(data), n))
                first = None
        return out

    @property
    def delivery_count(self) -> int:
        """Our (receiver's) delivery-count: the broker's initial one plus the deliveries seen."""
        return seq_add(self.init, len(self.deliveries()))

    def grant_frame(self, credit: int, *, delivery_count: int | None = None, drain: bool | None = None,
                    echo: bool | None = None) -> AMQPFrame:
        """A flow setting link-credit (with our current delivery-count unless told otherwise)."""
        return self.s.flow_frame(self.handle, link_credit=credit, drain=drain, echo=echo,
                                 delivery_count=self.delivery_count if delivery_count is None else delivery_count)

    def grant(self, credit: int, **kw: Any) -> None:
        self.s.peer.send(self.grant_frame(credit, **kw))

    def flows(self) -> list[Any]:
        return [f.performative for f in self.s.frames("flow", self.remote_handle)]

    def wait(self, count: int, timeout: float = WAIT) -> list[Received]:
        """Reads until ``count`` deliveries arrived on this link (or the timeout)."""
        stop = time.monotonic() + timeout
        while len(self.deliveries()) < count and self.s.ended is None and time.monotonic() < stop:
            self.s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "transfer")
        return self.deliveries()

    def settle(self, delivery: Received, state: Any) -> None:
        did = int(delivery.transfer.delivery_id)
        self.s.peer.send(AMQPFrame(self.s.ch, spec.Disposition(role=spec.Role.RECEIVER, first=did, last=did,
                                                              settled=True, state=state)))


def attach_receiver(s: Sess, addr: str, *, name: str | None = None, wait: bool = True,
                    source: Any = None, **attach: Any) -> Rcv:
    """Attaches a receiving link from ``addr``; grants no credit."""
    name = name or f"rcv-{uuid.uuid4().hex[:8]}"
    h, remote = s.peer.attach(s.ch, name=name, role=spec.Role.RECEIVER,
                              source=source or spec.Source(address=addr), target=spec.Target(), wait=wait,
                              timeout=WAIT, **attach)
    return Rcv(s, h, name, remote)


def await_attach(link: Any) -> None:
    """For a link attached with wait=False: reads until the broker's attach of that name."""
    stop = time.monotonic() + WAIT
    while link.remote is None and link.s.ended is None and time.monotonic() < stop:
        for f in link.s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "attach"):
            if performative_name(f) == "attach" and str(f.performative.name) == link.name:
                link.remote = f.performative
    if link.remote is None:
        raise Inconclusive(f"the broker did not attach link {link.name}: {describe_frames(link.s.log)}")


@dataclass
class Snd:
    """A link on which we send (the broker receives)."""

    s: Sess
    handle: int
    name: str
    init: int
    remote: Any = None
    sent: int = 0
    ids: list[int] = field(default_factory=list)

    @property
    def remote_handle(self) -> int | None:
        return None if self.remote is None else _int(self.remote.handle)

    @property
    def delivery_count(self) -> int:
        return seq_add(self.init, self.sent)

    def flows(self) -> list[Any]:
        return [f.performative for f in self.s.frames("flow", self.remote_handle)]

    def credit(self) -> int:
        """link-credit(snd) from the broker's last flow (2.6.7 formula; its delivery-count assumed to be
        our initial one when absent, as 2.6.7 says for a receiver that does not know it yet)."""
        flows = self.flows()
        if not flows:
            return 0
        last = flows[-1]
        dc_rcv = self.init if last.delivery_count is None else int(last.delivery_count)
        return seq_diff(seq_add(dc_rcv, int(last.link_credit or 0)), self.delivery_count)

    def frames_for(self, message: Message | Payload | bytes, *, settled: bool = False) -> list[AMQPFrame]:
        """The transfer frame(s) of one new delivery (a Message, a Payload sent as given, or bytes as a data
        body), counted as sent; the caller writes them. delivery-ids come from _common's per-session counter
        (one per delivery), transfer-ids from the session (one per frame)."""
        c = counters(self.s.peer, self.s.ch)
        did = c.next_outgoing_id
        c.next_outgoing_id += 1
        payload = bytes(message) if isinstance(message, Payload) else \
            (message if isinstance(message, Message) else Message(body=message)).encode()
        transfer = spec.Transfer(handle=self.handle, delivery_id=did, delivery_tag=uuid.uuid4().bytes[:8],
                                 message_format=0, settled=settled)
        self.sent += 1
        self.ids.append(did)
        frames = transfer_frames(self.s.ch, transfer, payload, self.s.peer.opened.max_frame_size)
        self.s.transfers_out += len(frames)
        return frames

    def send(self, message: Message | Payload | bytes, *, settled: bool = False) -> int:
        self.s.peer.send(*self.frames_for(message, settled=settled))
        return self.ids[-1]

    def outcomes(self) -> dict[int, Any]:
        """delivery-id -> the state of the broker's dispositions (role receiver) for our deliveries."""
        got: dict[int, Any] = {}
        for f in self.s.frames("disposition"):
            d = f.performative
            if not d.role:
                continue
            first = int(d.first)
            last = first if d.last is None else int(d.last)
            for did in self.ids:
                if seq_diff(did, first) >= 0 and seq_diff(last, did) >= 0:
                    got[did] = d.state
        return got

    def wait_credit(self, timeout: float = WAIT) -> int:
        stop = time.monotonic() + timeout
        while self.credit() <= 0 and self.s.ended is None and time.monotonic() < stop:
            self.s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "flow")
        return self.credit()

    def wait_outcomes(self, timeout: float = WAIT) -> dict[int, Any]:
        stop = time.monotonic() + timeout
        while len(self.outcomes()) < len(self.ids) and self.s.ended is None and time.monotonic() < stop:
            self.s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "disposition")
        return self.outcomes()


def attach_sender(s: Sess, addr: str, *, init: int = 0, name: str | None = None, wait: bool = True,
                  target: Any = None, **attach: Any) -> Snd:
    name = name or f"snd-{uuid.uuid4().hex[:8]}"
    h, remote = s.peer.attach(s.ch, name=name, role=spec.Role.SENDER, source=spec.Source(),
                              target=target or spec.Target(address=addr), initial_delivery_count=init, wait=wait,
                              timeout=WAIT, **attach)
    return Snd(s, h, name, init, remote)


def send_within_credit(snd: Snd, messages: list[Any], timeout: float = 2 * WAIT) -> None:
    """Sends ``messages`` unsettled, never beyond the credit the broker granted."""
    todo = list(messages)
    stop = time.monotonic() + timeout
    while todo:
        if snd.wait_credit(max(0.0, stop - time.monotonic())) <= 0:
            raise Inconclusive(f"the broker granted no credit for {len(todo)} more message(s) "
                               f"(its flows: {snd.flows() or 'none'}; ended: {snd.s.ended})")
        for _ in range(min(snd.credit(), len(todo))):
            snd.send(todo.pop(0))


def publish(s: Sess, addr: str, messages: list[Any], *, init: int = 0) -> Snd:
    """Fills ``addr`` with ``messages`` (sent unsettled within the broker's credit) and waits until the
    broker accepted each: afterwards the node holds them. Raises Inconclusive otherwise."""
    snd = attach_sender(s, addr, init=init)
    send_within_credit(snd, messages)
    got = snd.wait_outcomes(2 * WAIT)
    refused = {did: st for did, st in got.items() if getattr(st, "NAME", None) != "accepted"}
    if len(got) < len(snd.ids) or refused:
        raise Inconclusive(f"could not fill {addr}: {len(got)} of {len(snd.ids)} messages settled by the broker, "
                           f"not accepted: {refused or 'none'}; ended: {describe_frames([s.ended]) if isinstance(s.ended, AMQPFrame) else s.ended}")
    return snd


def bodies(ctx: Context, n: int, tag: str = "m") -> list[Message]:
    """``n`` small messages whose data bodies say their position."""
    return [Message(body=f"{tag}{i}-{ctx.rng.randrange(1 << 30)}".encode()) for i in range(n)]


def body_of(delivery: Received) -> bytes | None:
    try:
        msg = delivery.message()
    except Exception:  # noqa: BLE001 - an undecodable message is shown, not raised
        return None
    body = msg.body
    value = getattr(body, "value", None)
    return bytes(value) if isinstance(value, (bytes, bytearray)) else None


def filled(ctx: Context, n: int, messages: list[Any] | None = None) -> tuple[Sess, Rcv, str]:
    """A session, a queue holding ``n`` messages (or ``messages``), and a receiving link from it without
    credit; returns the session, the link and the queue's address."""
    s = open_session(ctx)
    addr = address(ctx)
    publish(s, addr, messages if messages is not None else bodies(ctx, n))
    return s, attach_receiver(s, addr), addr


ROUNDS = 5   # links on which a race-prone stimulus is repeated, for a stable verdict


def filled_links(ctx: Context, rounds: int, n: int) -> tuple[Sess, list[Rcv]]:
    """One session with ``rounds`` queues of ``n`` messages each and a receiving link (no credit) from each."""
    s = open_session(ctx)
    addrs = [address(ctx) for _ in range(rounds)]
    for addr in addrs:
        publish(s, addr, bodies(ctx, n))
    return s, [attach_receiver(s, addr) for addr in addrs]


def _count_note(ctx: Context, rcv: Rcv, expected: int) -> None:
    got = len(rcv.deliveries())
    if got < expected:
        ctx.note(f"the broker sent {got} of the {expected} messages the credit allowed (sending fewer is not a "
                 "violation of the clauses checked)")


# ============================================================================ cases


@case("amqp10/2.6.7/credit-is-set-not-added", title="two flows of link-credit 5 allow 5 transfers, not 10",
      clauses=("amqp10:2.6.7/2", "amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_is_set_not_added(ctx: Context) -> None:
    """On each of ROUNDS links (one session, one queue of 10 messages per link) we send two flows, both
    with the broker's initial delivery-count and link-credit 5, back to back (all in one write). link-credit(snd) :=
    delivery-count(rcv) + link-credit(rcv) - delivery-count(snd): passes when at most 5 transfers arrive on
    every link. (Repeated because a broker that adds the credits may do so only when the second flow
    overtakes its own deliveries.)"""
    s, links = filled_links(ctx, ROUNDS, 10)
    s.send_together([f for rcv in links for f in (rcv.grant_frame(5, delivery_count=rcv.init),
                                                   rcv.grant_frame(5, delivery_count=rcv.init))])
    for rcv in links:
        rcv.wait(5)
    s.quiet()
    counts = [len(rcv.deliveries()) for rcv in links]
    ctx.record(all(n <= 5 for n in counts), expected="at most 5 transfers per link (credit is set to 5 twice, not "
               "added up to 10)", observed=f"transfers per link after two flows of link-credit 5: {counts}")
    for rcv in links:
        _count_note(ctx, rcv, 5)


@case("amqp10/2.6.7/no-credit-no-transfer", title="without link-credit the broker sends no message",
      clauses=("amqp10:2.6.7/9",))
def no_credit_no_transfer(ctx: Context) -> None:
    """A queue holds 3 messages; we attach a receiving link and grant nothing (link-credit starts at zero),
    then send a flow with link-credit 0. Passes when no transfer arrives; a flow with link-credit 1
    afterwards checks that the messages were there to be sent."""
    s, rcv, _ = filled(ctx, 3)
    s.quiet()
    before = len(rcv.transfers())
    rcv.grant(0)
    s.quiet()
    zero = len(rcv.transfers())
    ctx.record(zero == 0, expected="no transfer while link-credit is zero",
               observed=f"{before} transfer(s) before any flow, {zero - before} after a flow with link-credit 0")
    rcv.grant(1)
    if not rcv.wait(1):
        ctx.note("no message arrived even with link-credit 1: the absence of transfers proves less")


@case("amqp10/2.6.7/sender-stops-at-zero-credit", title="the broker sends as many messages as the credit, then stops",
      clauses=("amqp10:2.6.7/5", "amqp10:2.6.7/9"))
def sender_stops_at_zero_credit(ctx: Context) -> None:
    """A queue holds 10 messages; we grant link-credit 3. Each transfer uses one credit; at zero the sender
    MUST NOT send more: passes when at most 3 transfers arrive."""
    s, rcv, _ = filled(ctx, 10)
    rcv.grant(3)
    rcv.wait(3)
    s.quiet()
    got = len(rcv.deliveries())
    ctx.record(got <= 3, expected="at most 3 transfers for link-credit 3", observed=f"{got} transfer(s)")
    _count_note(ctx, rcv, 3)


@case("amqp10/2.6.7/credit-formula-current-delivery-count",
      title="a flow with the current delivery-count allows exactly its link-credit more",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_formula_current(ctx: Context) -> None:
    """A queue holds 10 messages; we grant 3, receive 3, then send a flow with delivery-count = initial + 3
    and link-credit 4. By the formula the sender's credit becomes 4: passes when at most 4 more arrive
    (at most 7 in all)."""
    s, rcv, _ = filled(ctx, 10)
    rcv.grant(3)
    first = len(rcv.wait(3))
    s.quiet(0.3)
    if first != 3:
        raise Inconclusive(f"expected 3 messages for link-credit 3 before the second flow, got {first}")
    rcv.grant(4)
    rcv.wait(7)
    s.quiet()
    more = len(rcv.deliveries()) - 3
    ctx.record(more <= 4, expected="at most 4 more transfers (link-credit 4 with the current delivery-count)",
               observed=f"{more} more transfer(s) after the flow (delivery-count {rcv.init + 3}, link-credit 4)")
    _count_note(ctx, rcv, 7)


@case("amqp10/2.6.7/credit-formula-in-flight",
      title="a flow with an older delivery-count counts the transfers already sent against its credit",
      clauses=("amqp10:2.6.7/2", "amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def credit_formula_in_flight(ctx: Context) -> None:
    """A queue holds 10 messages; we grant 4 and receive 4, then send a flow with the *initial*
    delivery-count (as if written before those transfers arrived) and link-credit 6. The sender computes
    initial + 6 - (initial + 4) = 2: passes when at most 2 more transfers arrive (6 in all, not 10)."""
    s, rcv, _ = filled(ctx, 10)
    rcv.grant(4)
    first = len(rcv.wait(4))
    s.quiet(0.3)
    if first != 4:
        raise Inconclusive(f"expected 4 messages for link-credit 4 before the second flow, got {first}")
    rcv.grant(6, delivery_count=rcv.init)
    rcv.wait(6)
    s.quiet()
    more = len(rcv.deliveries()) - 4
    ctx.record(more <= 2, expected="at most 2 more transfers: delivery-count(rcv) + link-credit(rcv) - "
               "delivery-count(snd) = 6 - 4",
               observed=f"{more} more transfer(s) after the flow (delivery-count {rcv.init}, link-credit 6)")
    _count_note(ctx, rcv, 6)


@case("amqp10/2.6.7/unknown-delivery-count-assumes-initial",
      title="a flow without delivery-count is counted from the sender's initial delivery-count",
      clauses=("amqp10:2.6.7/4", "amqp10:2.6.7/9"))
def unknown_delivery_count(ctx: Context) -> None:
    """A queue holds 10 messages; we send the attach of a receiving link and, before the broker's attach
    can arrive, a flow with no delivery-count (2.7.4: it MUST NOT be set before the sender's attach is
    seen) and link-credit 3. The sender MUST take delivery-count(rcv) as its initial delivery-count:
    passes when the link is attached and at most 3 transfers arrive."""
    s = open_session(ctx)
    addr = address(ctx)
    publish(s, addr, bodies(ctx, 10))
    rcv = attach_receiver(s, addr, wait=False)
    s.flow(rcv.handle, delivery_count=None, link_credit=3)
    await_attach(rcv)
    rcv.wait(3)
    s.quiet()
    got = len(rcv.deliveries())
    errors = s.error_frames()
    ctx.record(got <= 3 and not errors, expected="the link serves at most 3 transfers (credit counted from the "
               "initial delivery-count), no error",
               observed=f"{got} transfer(s); errors: {describe_frames(errors)}")
    _count_note(ctx, rcv, 3)


def _drain_flow(rcv: Rcv, target: int) -> Any:
    for f in rcv.flows():
        if f.delivery_count is not None and int(f.delivery_count) == target and int(f.link_credit or 0) == 0:
            return f
    return None


@case("amqp10/2.6.7/drain-uses-up-credit",
      title="drain with more credit than messages: the broker advances delivery-count to use the credit and sends a flow",
      clauses=("amqp10:2.6.7/11", "amqp10:2.6.7/8"))
def drain_uses_up_credit(ctx: Context) -> None:
    """A queue holds 2 messages; we grant link-credit 10 with drain=true. After the 2 transfers there are
    no available messages: the sender MUST advance delivery-count until link-credit is zero and send its
    flow state. Passes when a flow with delivery-count = initial + 10 and link-credit 0 arrives (and at
    most 2 transfers). A separate SHOULD-level check: that flow carries drain=true (the sender's drain is
    the receiver's last value)."""
    s, rcv, _ = filled(ctx, 2)
    rcv.grant(10, drain=True)
    target = seq_add(rcv.init, 10)
    stop = time.monotonic() + WAIT
    while _drain_flow(rcv, target) is None and s.ended is None and time.monotonic() < stop:
        s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "flow")
    s.quiet(0.3)
    flow = _drain_flow(rcv, target)
    got = len(rcv.deliveries())
    ctx.record(flow is not None and got <= 2,
               expected=f"at most 2 transfers, then a flow with delivery-count {target} and link-credit 0",
               observed=f"{got} transfer(s); flows: {rcv.flows() or 'none'}; ended: {s.ended or 'no'}")
    if flow is not None:
        ctx.record(bool(flow.drain), expected="the sender's flow carries drain=true",
                   observed=f"{flow}", what="the drain flag of the sender's flow is the receiver's last value",
                   clauses=(), level=Level.SHOULD,
                   guideline="The sender's value is always the last known value indicated by the receiver.")


@case("amqp10/2.6.7/drain-empty-source",
      title="drain on an empty queue: the broker consumes the credit at once and sends a flow",
      clauses=("amqp10:2.6.7/11",))
def drain_empty_source(ctx: Context) -> None:
    """A queue received one message that we consumed and accepted, so it exists and is empty; on a new
    receiving link we grant link-credit 5 with drain=true. Passes when no transfer arrives and a flow with
    delivery-count = initial + 5 and link-credit 0 does."""
    s, first, addr = filled(ctx, 1)
    first.grant(1)
    got = first.wait(1)
    if not got:
        raise Inconclusive("the one message put in the queue was not delivered")
    first.settle(got[0], spec.Accepted())
    rcv = attach_receiver(s, addr)
    rcv.grant(5, drain=True)
    target = seq_add(rcv.init, 5)
    stop = time.monotonic() + WAIT
    while _drain_flow(rcv, target) is None and s.ended is None and time.monotonic() < stop:
        s.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "flow")
    flow = _drain_flow(rcv, target)
    ctx.record(flow is not None and not rcv.transfers(),
               expected=f"no transfer, a flow with delivery-count {target} and link-credit 0",
               observed=f"{len(rcv.transfers())} transfer(s); flows: {rcv.flows() or 'none'}; ended: {s.ended or 'no'}")


@case("amqp10/2.6.7/stop-with-zero-credit", title="after link-credit 0 and the broker's flow, no more transfers arrive",
      clauses=("amqp10:2.6.7/3", "amqp10:2.6.7/9"))
def stop_with_zero_credit(ctx: Context) -> None:
    """Figure 2.46 (stopping incoming messages), on each of ROUNDS links (one queue of 30 messages per link):
    we grant 30 and at once send a flow with the initial delivery-count, link-credit 0 and echo=true.
    Transfers sent before the broker read the second flow may still arrive; once its flow state is
    updated the sender has no credit: passes when, on every link, no transfer arrives after a broker flow
    showing link-credit 0, and none once the link has been quiet. (Answering echo is checked in 2.7.4.)"""
    s, links = filled_links(ctx, ROUNDS, 30)
    s.send_together([f for rcv in links for f in (rcv.grant_frame(30),
                                                   rcv.grant_frame(0, delivery_count=rcv.init, echo=True))])
    s.quiet()
    quiet_at = [len(rcv.transfers()) for rcv in links]
    for rcv in links:
        rcv.grant(0, echo=True)
    s.quiet()
    late = [len(rcv.transfers()) - q for rcv, q in zip(links, quiet_at)]
    after_zero = [_after_zero_credit(rcv) for rcv in links]
    ctx.record(not any(after_zero) and not any(late),
               expected="on every link no transfer after the broker's flow with link-credit 0, none after a quiet "
                        "period",
               observed=f"per link: transfers before quiet {quiet_at}, after {late}, after a broker flow with "
                        f"link-credit 0 {after_zero}; broker flows on the first link: {links[0].flows() or 'none'}")


def _after_zero_credit(rcv: Rcv) -> int:
    """Transfers on the link that follow a broker flow on it showing link-credit 0."""
    count = 0
    seen_zero = False
    for f in rcv.s.log:
        if f.channel != rcv.s.ch or _int(getattr(f.performative, "handle", None)) != rcv.remote_handle:
            continue
        name = performative_name(f)
        if name == "flow" and f.performative.link_credit is not None and int(f.performative.link_credit) == 0:
            seen_zero = True
        elif name == "transfer" and seen_zero:
            count += 1
    return count


@case("amqp10/2.6.7/transfer-beyond-credit",
      title="a transfer beyond the broker's credit is handled or refused with transfer-limit-exceeded",
      clauses=("amqp10:2.6.7/10",))
def transfer_beyond_credit(ctx: Context) -> None:
    """We attach a sending link, read the broker's link-credit C and send C+1 transfers in one socket write,
    so the broker reads the excess one before it can grant more (the excess violates our side of 2.6.7). The text lets a receiver handle excess messages normally or
    detach the link with transfer-limit-exceeded: any reaction is recorded (MAY), and a SHOULD-level check
    requires that if the broker reacts with an error, it is a detach with
    amqp:link:transfer-limit-exceeded. Skipped when C+1 transfers would also exceed the broker's session
    incoming-window, or C exceeds 1000."""
    s = open_session(ctx)
    snd = attach_sender(s, address(ctx))
    credit = snd.wait_credit()
    window = int(s.begin.incoming_window or 0)
    if credit <= 0:
        ctx.skip("the broker granted no link-credit")
    if credit > 1000 or credit + 1 > window:
        ctx.skip(f"the broker grants link-credit {credit} (session incoming-window {window}): sending {credit + 1} "
                 "transfers would cost too much or also exceed the session window")
    s.send_together([f for i in range(credit + 1) for f in snd.frames_for(Message(body=f"x{i}".encode()))])
    s.quiet(1.0)
    errors = s.error_frames()
    outcomes = snd.outcomes()
    reaction = f"errors: {describe_frames(errors)}" if errors else \
        f"no error; {len(outcomes)} of {credit + 1} deliveries settled by the broker"
    ctx.record(True, expected="excess transfer handled normally, or the link detached with transfer-limit-exceeded",
               observed=f"link-credit was {credit}; {reaction}")
    ok = all(performative_name(f) == "detach" and str(f.performative.error.condition) ==
             "amqp:link:transfer-limit-exceeded" for f in errors)
    ctx.record(ok, expected="no error, or a detach with amqp:link:transfer-limit-exceeded",
               observed=reaction, what="an error for exceeding link-credit is transfer-limit-exceeded",
               clauses=(), level=Level.SHOULD,
               guideline="The peer sent more message transfers than currently allowed on the link.")


@case("amqp10/2.6.7/delivery-count-wrap-broker-receiving",
      title="messages sent with a delivery-count crossing 2^32 arrive, and the broker's flows follow the wrap",
      clauses=("amqp10:2.7.4/5",))
def delivery_count_wrap(ctx: Context) -> None:
    """We attach a sending link with initial-delivery-count 2^32-3 and send 5 messages within the broker's
    credit (our delivery-count goes 4294967293 ... 4294967295, 0, 1, 2), then a flow with echo=true.
    Checks: every flow of the broker on the link carries delivery-count, the last known value of ours,
    i.e. initial + k (mod 2^32) for the k transfers it had received, and after the echo it is 2 (MUST);
    a SHOULD-level check that the link stays usable and the 5 messages arrive in order at a receiver."""
    s = open_session(ctx)
    addr = address(ctx)
    init = SEQ - 3
    snd = attach_sender(s, addr, init=init)
    msgs = bodies(ctx, 5)
    problem = ""
    mark = None
    try:
        send_within_credit(snd, msgs)
        snd.wait_outcomes(2 * WAIT)
        mark = len(s.log)
        snd.s.flow(snd.handle, delivery_count=snd.delivery_count, link_credit=max(0, snd.credit()), echo=True)
        s.quiet(0.5)
    except Inconclusive as exc:
        problem = str(exc)
    flows = snd.flows()
    allowed = {seq_add(init, k) for k in range(6)}
    bad = [f for f in flows if f.delivery_count is None or int(f.delivery_count) not in allowed]
    final = seq_add(init, 5)
    if mark is not None:  # flows written after our echo follow all 5 transfers
        bad += [f.performative for f in s.frames("flow", snd.remote_handle, mark)
                if f.performative.delivery_count is None or int(f.performative.delivery_count) != final]
    ctx.record(bool(flows) and not bad,
               expected=f"every broker flow on the link carries delivery-count in {sorted(allowed)}, "
                        f"{final} after the echo",
               observed=f"broker flows: {flows or 'none'}" + (f"; {problem}" if problem else ""))
    rcv = attach_receiver(s, addr)
    rcv.grant(10)
    rcv.wait(5)
    s.quiet(0.3)
    got = [body_of(d) for d in rcv.deliveries()]
    want = [m.body for m in msgs]
    ctx.record(got == want and not s.error_frames(), expected="the 5 messages arrive, in order, without error",
               observed=f"received bodies {got}; outcomes {snd.outcomes()}; errors {describe_frames(s.error_frames())}",
               what="a delivery-count that wraps at 2^32 does not disturb the link", clauses=(), level=Level.SHOULD,
               guideline="While the value itself is conceptually unbounded, it is encoded as a 32-bit integer that "
                         "wraps around and compares according to RFC-1982 [RFC1982] serial number arithmetic.")
