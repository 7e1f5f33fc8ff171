"""AMQP 1.0 sessions and links over the raw peer: the numbers a correct endpoint keeps.

A :class:`Session` (transport 2.5) keeps its transfer ids -- next-outgoing-id counts the
transfer FRAMES we send, next-incoming-id the ones the broker sent (2.5.6) -- its windows, and
the delivery ids of our deliveries (one per delivery, not per frame). :class:`Sender` and
:class:`Receiver` links (2.6) keep delivery-count, link-credit, available and drain by the
formulas of 2.6.7, with RFC-1982 serial arithmetic (everything wraps at 2^32). The broker's
frames are accounted as they come off the wire (``Peer.watchers``), whoever reads them -- a
case may go on using ``peer.observe`` or ``peer.recv`` -- so flows built from this state are
right at any time.

Every builder (``begin_frame``, ``flow_frame``, ``attach_frame``, ``transfer_frames``,
``disposition_frame``, ``detach_frame``, ``end_frame``) takes keyword overrides that win over
the tracked values, so a case can break any field on purpose; raw frames still go out with
``peer.send`` and are not counted (the case that sends them says what it wants).

:func:`publish` and :func:`fetch` fill a node and read it back on connections of their own:
the one way cases get a queue holding messages.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from amqpspec.peer.amqp10 import WINDOW, Peer, performative_name
from amqpspec.peer.base import Closed, PeerError
from amqpspec.wire.amqp10 import AMQPFrame, Message, describe, encode, show, spec, transfer_frames

SEQ = 1 << 32      # transfer ids, delivery ids and delivery-count are RFC-1982 serial numbers of 32 bits
HALF = 1 << 31
WAIT = 3.0         # seconds for something a correct broker sends at once
QUIET = 0.7        # seconds of silence after which a sender has sent what its credit allowed

SENDER = spec.Role.SENDER
RECEIVER = spec.Role.RECEIVER

__all__ = ["SEQ", "Session", "Link", "Sender", "Receiver", "Delivery", "Payload", "SetupError", "begin",
           "begin_frame", "session_of", "seq_add", "seq_diff", "seq_within", "covers", "publish", "fetch",
           "message_octets"]


class SetupError(PeerError):
    """What a case needs could not be set up (a link not attached, messages not accepted ...)."""


# ---------------------------------------------------------------------------------------- serial numbers
def seq_add(a: int, n: int = 1) -> int:
    """a + n modulo 2^32 (RFC-1982 addition)."""
    return (int(a) + n) % SEQ


def seq_diff(a: int, b: int) -> int:
    """a - b in RFC-1982 serial arithmetic, as a signed number (|result| < 2^31)."""
    d = (int(a) - int(b)) % SEQ
    return d - SEQ if d >= HALF else d


def seq_within(value: int, first: int, last: int) -> bool:
    """first <= value <= last in serial arithmetic (a disposition's range, 2.7.6)."""
    return seq_diff(value, first) >= 0 and seq_diff(last, value) >= 0


def covers(disposition: Any, delivery_id: int) -> bool:
    """A disposition's range first..last (last absent: first alone, 2.7.6) holds ``delivery_id``."""
    first = int(disposition.first)
    return seq_within(delivery_id, first, first if disposition.last is None else int(disposition.last))


# ---------------------------------------------------------------------------------------- messages
class Payload(bytes):
    """Message octets sent exactly as given (sections out of order, duplicated, missing ...)."""


def message_octets(message: Message | Payload | bytes | str) -> bytes:
    """The bare message of a delivery: a Message encoded, a Payload as is, octets as a data section,
    a string as an amqp-value."""
    if isinstance(message, Payload):
        return bytes(message)
    return (message if isinstance(message, Message) else Message(body=message)).encode()


@dataclass
class Delivery:
    """A delivery received: its first transfer, the payload joined over its frames, the frame count."""

    transfer: spec.Transfer
    payload: bytes
    frames: int

    def message(self) -> Message:
        return Message.decode(self.payload)

    def text(self) -> str:
        """The body as text: an amqp-value string, or data octets decoded (shown, never raised)."""
        try:
            body = self.message().body
        except Exception as exc:  # noqa: BLE001 - an undecodable message is something to report, not a crash
            return f"<undecodable message of {len(self.payload)} octets: {exc}>"
        if isinstance(body, spec.AmqpValue):
            return str(body.value)
        if isinstance(body, spec.Data):
            return bytes(body.value).decode("utf-8", "replace")
        return f"<body {show(body)}>"


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


# ---------------------------------------------------------------------------------------- sessions
_TABLES: "weakref.WeakKeyDictionary[Peer, dict[int, Session]]" = weakref.WeakKeyDictionary()


def _table(peer: Peer) -> dict[int, "Session"]:
    """The peer's sessions by our channel; the first call hooks the accounting into the peer."""
    table = _TABLES.get(peer)
    if table is None:
        table = _TABLES[peer] = {}
        peer.watchers.append(lambda frame: _account(table, frame))
    return table


def _account(table: dict[int, "Session"], frame: AMQPFrame) -> None:
    name = performative_name(frame)
    if name == "begin":
        ours = _int(getattr(frame.performative, "remote_channel", None))
        s = table.get(ours) if ours is not None else None
        if s is not None and s.remote_begin is None:
            s.remote_channel = frame.channel
            s.remote_begin = frame.performative
    for s in list(table.values()):
        s.account(frame)


def session_of(peer: Peer, channel: int) -> "Session":
    """The layer's session on our ``channel``: the one begun through it, or one made now for a
    session the case began itself (``Peer.begin`` or a raw begin; its counters start from here)."""
    table = _table(peer)
    s = table.get(channel)
    if s is None:
        s = Session(peer, channel)
        remote = peer.begun.get(channel)
        if remote is not None:
            s.remote_begin = remote
        table[channel] = s
    return s


def begin_frame(channel: int, **overrides: Any) -> AMQPFrame:
    """A begin on ``channel`` with the ordinary numbers (next-outgoing-id 0, windows of 2048)."""
    fields = dict(next_outgoing_id=0, incoming_window=WINDOW, outgoing_window=WINDOW)
    fields.update(overrides)
    return AMQPFrame(channel, spec.Begin(**fields))


def begin(peer: Peer, channel: int | None = None, *, wait: bool = True, timeout: float = WAIT,
          **overrides: Any) -> "Session":
    """Begins a session on ``channel`` (the next free one by default, reserved either way) and, with
    ``wait``, waits for the broker's begin naming it. ``overrides`` are begin fields (next-outgoing-id,
    incoming-window, outgoing-window, handle-max ...): the session's counters start from them."""
    ch = peer.free_channel() if channel is None else channel
    peer.reserve_channel(ch)
    s = Session(peer, ch, next_outgoing_id=overrides.get("next_outgoing_id", 0),
                incoming_window=overrides.get("incoming_window", WINDOW),
                outgoing_window=overrides.get("outgoing_window", WINDOW))
    _table(peer)[ch] = s
    peer.send(s.begin_frame(**overrides))
    if wait:
        s.await_begin(timeout)
    return s


class Session:
    """One session endpoint of ours (2.5): channels, transfer ids, windows, delivery ids, its links."""

    def __init__(self, peer: Peer, channel: int, *, next_outgoing_id: int = 0, incoming_window: int = WINDOW,
                 outgoing_window: int = WINDOW) -> None:
        self.peer = peer
        self.channel = channel
        self.remote_channel: int | None = None
        self.remote_begin: spec.Begin | None = None
        self.next_outgoing_id = int(next_outgoing_id) % SEQ   # transfer-id of our next transfer frame
        self.initial_outgoing_id = self.next_outgoing_id      # what our begin said
        self.incoming_window = incoming_window                # what our flows advertise
        self.outgoing_window = outgoing_window
        self.next_delivery_id = 0                             # delivery-id of our next delivery
        self.transfers_in = 0                                 # transfer frames the broker sent on the session
        self.remote_flow: spec.Flow | None = None             # the broker's last flow (session state)
        self.remote_end: Any = None
        self.ended: Any = None          # the close, end, detach with an error, or Closed that stops reading
        self.log: list[AMQPFrame] = []  # every AMQP frame received on the connection since the session began
        self.links: dict[int, Link] = {}                      # our handle -> link
        self.dispositions: list[spec.Disposition] = []        # the broker's, as receiver: our deliveries' fate

    # -- names the catalog's session representations used -------------------------------
    @property
    def ch(self) -> int:
        return self.channel

    @property
    def remote(self) -> int:
        """The broker's channel for the session (ours until its begin is known)."""
        return self.channel if self.remote_channel is None else self.remote_channel

    @property
    def begin(self) -> spec.Begin | None:
        """The broker's begin."""
        return self.remote_begin

    @property
    def remote_next_outgoing_id(self) -> int:
        return int(self.remote_begin.next_outgoing_id) if self.remote_begin is not None else 0

    @property
    def next_incoming_id(self) -> int | None:
        """The transfer-id we expect next: the broker's begin's next-outgoing-id plus the transfer frames
        it sent since (None before its begin: 2.7.4 says it MUST NOT be set then)."""
        if self.remote_begin is None:
            return None
        return seq_add(int(self.remote_begin.next_outgoing_id or 0), self.transfers_in)

    @property
    def remote_incoming_window(self) -> int | None:
        """How many more transfer frames the broker said it can take (2.5.6), from its last flow or begin."""
        if self.remote_flow is not None and self.remote_flow.next_incoming_id is not None:
            return seq_diff(seq_add(int(self.remote_flow.next_incoming_id), int(self.remote_flow.incoming_window)),
                            self.next_outgoing_id)
        if self.remote_begin is not None:
            return int(self.remote_begin.incoming_window) - seq_diff(self.next_outgoing_id, self.initial_outgoing_id)
        return None

    # -- frames --------------------------------------------------------------------------
    def begin_frame(self, **overrides: Any) -> AMQPFrame:
        fields = dict(next_outgoing_id=self.next_outgoing_id, incoming_window=self.incoming_window,
                      outgoing_window=self.outgoing_window)
        fields.update(overrides)
        return begin_frame(self.channel, **fields)

    def flow_frame(self, handle: int | None = None, **overrides: Any) -> AMQPFrame:
        """A flow with the session's current state (and the link fields given: delivery_count,
        link_credit, available, drain, echo ...); any field can be overridden."""
        fields = dict(next_incoming_id=self.next_incoming_id, incoming_window=self.incoming_window,
                      next_outgoing_id=self.next_outgoing_id, outgoing_window=self.outgoing_window, handle=handle)
        fields.update(overrides)
        return AMQPFrame(self.channel, spec.Flow(**fields))

    def flow(self, handle: int | None = None, **overrides: Any) -> None:
        self.peer.send(self.flow_frame(handle, **overrides))

    def end_frame(self, error: Any = None, **overrides: Any) -> AMQPFrame:
        fields = dict(error=error)
        fields.update(overrides)
        return AMQPFrame(self.channel, spec.End(**fields))

    def end(self, error: Any = None, *, wait: bool = True, timeout: float = WAIT, **overrides: Any) -> Any:
        """Ends the session (with ``error`` when given); with ``wait``, returns the broker's end frame."""
        self.peer.send(self.end_frame(error, **overrides))
        if not wait:
            return None
        return self.peer.await_frame("end", channel=self.remote, timeout=timeout)

    def take_delivery_id(self, frames: int = 1) -> int:
        """The next delivery-id, counting ``frames`` transfer frames for it (for a transfer the case
        builds itself)."""
        did = self.next_delivery_id
        self.next_delivery_id = seq_add(did)
        self.next_outgoing_id = seq_add(self.next_outgoing_id, frames)
        return did

    def send_together(self, frames: list[AMQPFrame]) -> None:
        """Frames in one socket write, so the broker reads them together (nothing of its own in between)."""
        self.peer.link.send_bytes(b"".join(encode(f) for f in frames),
                                  f"{len(frames)} frames in one write: " + " + ".join(describe(f) for f in frames))

    # -- waiting ---------------------------------------------------------------------------
    def await_begin(self, timeout: float = WAIT) -> spec.Begin:
        got = self.peer.await_frame("begin", timeout=timeout,
                                    match=lambda f: _int(getattr(f.performative, "remote_channel", None)) == self.channel)
        self.remote_channel, self.remote_begin = got.channel, got.performative
        self.peer.begun[self.channel] = got.performative
        return got.performative

    def read(self, timeout: float, until: Callable[[AMQPFrame], bool] | None = None) -> list[AMQPFrame]:
        """Frames for up to ``timeout`` seconds, or until ``until(frame)``, a close, an end of this
        session, a detach with an error on it, or the socket closing (a close is answered)."""
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
            if not isinstance(item, AMQPFrame) or item.performative is None:
                continue
            new.append(item)
            if performative_name(item) == "close" and not self.peer.close_sent:
                self.peer.send(AMQPFrame(0, spec.Close()))
            if self.ended is not None or (until is not None and until(item)):
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

    def frames(self, name: str, handle: int | None = None, since: int = 0) -> list[AMQPFrame]:
        """The broker's frames on this session named ``name`` (about its link ``handle`` when given)."""
        return [f for f in self.log[since:] if f.channel == self.remote and performative_name(f) == name
                and (handle is None or _int(getattr(f.performative, "handle", None)) == handle)]

    def error_frames(self) -> list[AMQPFrame]:
        return [f for f in self.log if performative_name(f) in ("close", "end", "detach")
                and getattr(f.performative, "error", None) is not None]

    # -- links -----------------------------------------------------------------------------
    def sender(self, address: str | None = None, *, name: str, handle: int | None = None, wait: bool = True,
               timeout: float = WAIT, **fields: Any) -> "Sender":
        """Attaches a sending link to ``address``; ``fields`` are attach fields (a ``target`` or ``source``
        given, even None, replaces the default)."""
        link = Sender(self, name, self._handle(handle), initial_delivery_count=fields.pop("initial_delivery_count", 0))
        fields.setdefault("source", spec.Source())
        fields.setdefault("target", spec.Target(address=address))
        link.attach(wait=wait, timeout=timeout, **fields)
        return link

    def receiver(self, address: str | None = None, *, name: str, handle: int | None = None,
                 credit: int | None = None, wait: bool = True, timeout: float = WAIT, **fields: Any) -> "Receiver":
        """Attaches a receiving link from ``address`` (``fields`` as for :meth:`sender`); grants ``credit``
        when given."""
        link = Receiver(self, name, self._handle(handle))
        fields.setdefault("source", spec.Source(address=address))
        fields.setdefault("target", spec.Target())
        link.attach(wait=wait, timeout=timeout, **fields)
        if credit is not None:
            link.grant(credit)
        return link

    def _handle(self, handle: int | None) -> int:
        return self.peer.free_handle(self.channel) if handle is None else handle

    def link_by_remote(self, handle: Any) -> "Link | None":
        h = _int(handle)
        for link in reversed(list(self.links.values())):
            if link.remote is not None and link.remote_detach is None and link.remote_handle == h:
                return link
        return None

    # -- accounting ------------------------------------------------------------------------
    def account(self, frame: AMQPFrame) -> None:
        """Takes in one frame of the broker (called for each as it arrives)."""
        self.log.append(frame)
        name = performative_name(frame)
        p = frame.performative
        if name == "close":
            self.ended = self.ended or frame
            return
        if frame.channel != self.remote or name == "begin":
            return
        if name == "transfer":
            self.transfers_in += 1
            link = self.link_by_remote(p.handle)
            if isinstance(link, Receiver):
                link.take(frame)
        elif name == "flow":
            self.remote_flow = p
            link = self.link_by_remote(p.handle) if p.handle is not None else None
            if link is not None:
                link.take_flow(p)
        elif name == "attach":
            for link in reversed(list(self.links.values())):
                if link.name == str(p.name) and link.remote is None:
                    link.take_attach(p)
                    break
        elif name == "detach":
            link = self.link_by_remote(p.handle)
            if link is not None:
                link.remote_detach = p
            if p.error is not None:
                self.ended = self.ended or frame
        elif name == "disposition":
            if bool(p.role) is bool(RECEIVER):
                self.dispositions.append(p)
        elif name == "end":
            self.remote_end = p
            self.ended = self.ended or frame

    def outcome(self, delivery_id: int) -> Any:
        """The broker's last disposition (as receiver) covering our delivery ``delivery_id``, or None."""
        return next((d for d in reversed(self.dispositions) if covers(d, delivery_id)), None)


# ---------------------------------------------------------------------------------------- links
class Link:
    """One link endpoint of ours (2.6) and what the broker said about it."""

    role: bool = SENDER

    def __init__(self, session: Session, name: str, handle: int) -> None:
        self.session = session
        self.name = name
        self.handle = handle
        self.remote: Any = None          # the broker's attach
        self.remote_detach: Any = None   # the broker's detach
        self.fields: dict[str, Any] = {}
        session.links[handle] = self

    @property
    def s(self) -> Session:
        return self.session

    @property
    def remote_handle(self) -> int | None:
        return None if self.remote is None else _int(self.remote.handle)

    def attach_frame(self, **overrides: Any) -> AMQPFrame:
        fields = dict(name=self.name, handle=self.handle, role=self.role)
        fields.update(self.fields)
        fields.update(overrides)
        return AMQPFrame(self.session.channel, spec.Attach(**fields))

    def attach(self, *, wait: bool = True, timeout: float = WAIT, **fields: Any) -> Any:
        """Sends our attach (``fields`` are kept for a re-attach); with ``wait``, returns the broker's."""
        self.fields.update(fields)
        self.remote = self.remote_detach = None
        self.session.peer.send(self.attach_frame())
        return self.await_attach(timeout) if wait else None

    def await_attach(self, timeout: float = WAIT) -> Any:
        """The broker's attach of this link (the broker answers on its channel of the session)."""
        if self.remote is None:
            s = self.session
            got = s.peer.await_frame("attach", timeout=timeout, match=lambda f: str(f.performative.name) == self.name
                                     and (s.remote_channel is None or f.channel == s.remote_channel))
            if self.remote is None:
                self.take_attach(got.performative)
        return self.remote

    def take_attach(self, attach: Any) -> None:
        self.remote = attach

    def take_flow(self, flow: Any) -> None:
        pass

    def flows(self) -> list[Any]:
        """The broker's flows about this link."""
        return [f.performative for f in self.session.frames("flow", self.remote_handle)]

    def detach_frame(self, *, closed: bool | None = True, error: Any = None, **overrides: Any) -> AMQPFrame:
        fields = dict(handle=self.handle, closed=closed, error=error)
        fields.update(overrides)
        return AMQPFrame(self.session.channel, spec.Detach(**fields))

    def detach(self, *, closed: bool | None = True, error: Any = None, wait: bool = False, timeout: float = WAIT,
               **overrides: Any) -> Any:
        """Detaches (closing by default); with ``wait``, returns the broker's detach of the link."""
        s = self.session
        theirs = self.remote_handle
        s.peer.send(self.detach_frame(closed=closed, error=error, **overrides))
        if not wait:
            return None
        got = s.peer.await_frame("detach", channel=s.remote, timeout=timeout,
                                 match=lambda f: _int(f.performative.handle) == theirs)
        return got.performative


class Sender(Link):
    """A link on which we send (the broker receives): delivery-count and link-credit by 2.6.7."""

    role = SENDER

    def __init__(self, session: Session, name: str, handle: int, *, initial_delivery_count: int = 0) -> None:
        super().__init__(session, name, handle)
        self.init = int(initial_delivery_count) % SEQ
        self.delivery_count = self.init
        self.link_credit = 0
        self.available: int | None = None
        self.drain = False
        self.ids: list[int] = []          # delivery-ids of our deliveries on the link

    @property
    def sent(self) -> int:
        return len(self.ids)

    def attach_frame(self, **overrides: Any) -> AMQPFrame:
        overrides.setdefault("initial_delivery_count", self.init)
        return super().attach_frame(**overrides)

    def take_flow(self, flow: Any) -> None:
        """link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd) (2.6.7); a receiver
        that does not know our delivery-count yet means our initial one."""
        dc_rcv = self.init if flow.delivery_count is None else int(flow.delivery_count)
        self.link_credit = seq_diff(seq_add(dc_rcv, int(flow.link_credit or 0)), self.delivery_count)
        self.drain = bool(flow.drain)

    def credit(self) -> int:
        return self.link_credit

    def transfer_frames(self, message: Message | Payload | bytes | str, *, settled: bool | None = False,
                        tag: bytes | None = None, state: Any = None, max_frame_size: int | None = None,
                        **overrides: Any) -> list[AMQPFrame]:
        """The transfer frame(s) of one new delivery, split by the negotiated max-frame-size and counted
        (delivery-id, transfer ids, delivery-count, link-credit); the caller writes them. A ``state``
        goes on every frame (4.4.1: all frames of a transactional delivery name the transaction)."""
        s = self.session
        payload = message_octets(message)
        did = s.next_delivery_id
        fields = dict(handle=self.handle, delivery_id=did, delivery_tag=tag or f"t{did}".encode(), message_format=0,
                      settled=settled, state=state)
        fields.update(overrides)
        transfer = spec.Transfer(**fields)
        room = (max_frame_size or s.peer.opened.max_frame_size) - \
            (0 if state is None else len(AMQPFrame(0, state).encode()))
        frames = transfer_frames(s.channel, transfer, payload, room)
        if state is not None:
            frames = [frames[0]] + [AMQPFrame(s.channel, f.performative.replace(state=state), f.payload)
                                    for f in frames[1:]]
        s.take_delivery_id(len(frames))
        self.ids.append(did)
        self.delivery_count = seq_add(self.delivery_count)
        self.link_credit -= 1
        return frames

    def send(self, message: Message | Payload | bytes | str, *, settled: bool | None = False,
             tag: bytes | None = None, **overrides: Any) -> int:
        """Sends one delivery; returns its delivery-id."""
        self.session.peer.send(*self.transfer_frames(message, settled=settled, tag=tag, **overrides))
        return self.ids[-1]

    frames_for = transfer_frames

    def outcomes(self) -> dict[int, Any]:
        """delivery-id -> the state of the broker's last disposition covering it."""
        got: dict[int, Any] = {}
        for did in self.ids:
            d = self.session.outcome(did)
            if d is not None:
                got[did] = d.state
        return got

    def settled_ids(self) -> list[int]:
        return [did for did in self.ids if (d := self.session.outcome(did)) is not None and d.settled]

    def wait_credit(self, timeout: float = WAIT) -> int:
        stop = time.monotonic() + timeout
        while self.link_credit <= 0 and self.session.ended is None and time.monotonic() < stop:
            self.session.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "flow")
        return self.link_credit

    def wait_outcomes(self, timeout: float = WAIT) -> dict[int, Any]:
        stop = time.monotonic() + timeout
        while len(self.outcomes()) < len(self.ids) and self.session.ended is None and time.monotonic() < stop:
            self.session.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "disposition")
        return self.outcomes()

    def send_within_credit(self, messages: Iterable[Any], timeout: float = 2 * WAIT) -> list[int]:
        """Sends ``messages`` unsettled, never beyond the credit the broker granted; raises SetupError when
        the credit does not come."""
        todo = list(messages)
        ids: list[int] = []
        stop = time.monotonic() + timeout
        while todo:
            if self.wait_credit(max(0.0, stop - time.monotonic())) <= 0:
                raise SetupError(f"the broker granted no credit for {len(todo)} more message(s) "
                                 f"(its flows: {self.flows() or 'none'}; ended: {self.session.ended})")
            for _ in range(min(self.link_credit, len(todo))):
                ids.append(self.send(todo.pop(0)))
        return ids


class Receiver(Link):
    """A link on which we receive (the broker sends): delivery-count, link-credit, drain, available."""

    role = RECEIVER

    def __init__(self, session: Session, name: str, handle: int) -> None:
        super().__init__(session, name, handle)
        self.delivery_count = 0          # ours: the sender's initial one, plus each delivery, or its flows' value
        self.credit_limit = 0            # delivery-count + link-credit of our last grant (serial)
        self.drain = False
        self.available: int | None = None
        self.received: list[Delivery] = []        # complete deliveries, aborted ones left out
        self._partial: tuple[spec.Transfer, bytearray, int] | None = None

    @property
    def init(self) -> int:
        """The broker's initial-delivery-count (2.6.7: the sender's arbitrary starting point)."""
        return int(getattr(self.remote, "initial_delivery_count", None) or 0) if self.remote is not None else 0

    @property
    def link_credit(self) -> int:
        return max(0, seq_diff(self.credit_limit, self.delivery_count))

    def take_attach(self, attach: Any) -> None:
        """The sender's attach sets delivery-count; credit granted before it counts from there (2.6.7)."""
        granted = max(0, seq_diff(self.credit_limit, self.delivery_count))
        super().take_attach(attach)
        self.delivery_count = self.init
        self.credit_limit = seq_add(self.init, granted)

    def take(self, frame: AMQPFrame) -> None:
        """One transfer frame of the broker on this link: a delivery starts with the first frame (it
        takes one credit then), ends with the frame without ``more``."""
        t = frame.performative
        if self._partial is None:
            self._partial = (t, bytearray(), 0)
            self.delivery_count = seq_add(self.delivery_count)
        first, data, n = self._partial
        data += bytes(frame.payload)
        if t.more and not t.aborted:
            self._partial = (first, data, n + 1)
            return
        self._partial = None
        if not t.aborted:
            self.received.append(Delivery(first, bytes(data), n + 1))

    def take_flow(self, flow: Any) -> None:
        """The sender's flow: its delivery-count is the one to count from (after a drain it moved on)."""
        if flow.delivery_count is not None:
            self.delivery_count = int(flow.delivery_count)
        if flow.available is not None:
            self.available = int(flow.available)

    def grant_frame(self, credit: int, *, delivery_count: int | None = None, drain: bool | None = None,
                    echo: bool | None = None, **overrides: Any) -> AMQPFrame:
        """A flow setting link-credit (it is set, not added: 2.6.7) with our delivery-count unless given."""
        dc = self.delivery_count if delivery_count is None else delivery_count
        self.credit_limit = seq_add(self.delivery_count if dc is None else dc, credit)
        self.drain = bool(drain)
        fields = dict(delivery_count=dc, link_credit=credit, drain=drain, echo=echo)
        fields.update(overrides)
        return self.session.flow_frame(self.handle, **fields)

    def grant(self, credit: int, **kw: Any) -> None:
        self.session.peer.send(self.grant_frame(credit, **kw))

    def transfers(self, since: int = 0) -> list[AMQPFrame]:
        return self.session.frames("transfer", self.remote_handle, since)

    def deliveries(self) -> list[Delivery]:
        """The complete deliveries received on the link so far (multi-frame transfers joined)."""
        return list(self.received)

    def receive(self, count: int = 1, timeout: float = WAIT) -> list[Delivery]:
        """Reads until ``count`` more deliveries arrived on the link (or ``timeout``, or the session's end);
        returns the new ones."""
        start = len(self.received)
        self.wait(start + count, timeout)
        return self.received[start:]

    def wait(self, count: int, timeout: float = WAIT) -> list[Delivery]:
        """Reads until the link has ``count`` deliveries in all (or the timeout); returns them all."""
        stop = time.monotonic() + timeout
        while len(self.received) < count and self.session.ended is None and time.monotonic() < stop:
            self.session.read(stop - time.monotonic(), until=lambda f: performative_name(f) == "transfer")
        return list(self.received)

    def disposition_frame(self, first: int | Delivery, last: int | Delivery | None = None, *, settled: bool = True,
                          state: Any = None, **overrides: Any) -> AMQPFrame:
        """A disposition of deliveries ``first``..``last`` (ids or deliveries) as receiver, accepted
        unless a ``state`` is given."""
        fields = dict(role=RECEIVER, first=_delivery_id(first), last=None if last is None else _delivery_id(last),
                      settled=settled, state=spec.Accepted() if state is None else state)
        fields.update(overrides)
        return AMQPFrame(self.session.channel, spec.Disposition(**fields))

    def settle(self, first: int | Delivery, state: Any = None, *, last: int | Delivery | None = None,
               settled: bool = True) -> None:
        self.session.peer.send(self.disposition_frame(first, last, settled=settled, state=state))

    def accept(self, first: int | Delivery, last: int | Delivery | None = None) -> None:
        self.settle(first, spec.Accepted(), last=last)

    def reject(self, first: int | Delivery, error: Any = None, last: int | Delivery | None = None) -> None:
        self.settle(first, spec.Rejected(error=error), last=last)

    def release(self, first: int | Delivery, last: int | Delivery | None = None) -> None:
        self.settle(first, spec.Released(), last=last)

    def modify(self, first: int | Delivery, *, delivery_failed: bool | None = None,
               undeliverable_here: bool | None = None, last: int | Delivery | None = None) -> None:
        self.settle(first, spec.Modified(delivery_failed=delivery_failed, undeliverable_here=undeliverable_here),
                    last=last)


def _delivery_id(d: int | Delivery) -> int:
    return int(d.transfer.delivery_id) if isinstance(d, Delivery) else int(d)


# ---------------------------------------------------------------------------------------- filling and reading nodes
def publish(ctx: Any, address: str, *bodies: Message | Payload | bytes | str, timeout: float = 2 * WAIT,
            **handshake: Any) -> list[int]:
    """Puts ``bodies`` into the node at ``address``, on a connection of its own: sent unsettled within the
    broker's credit, and returns once the broker accepted every one (the node holds them then).
    Raises SetupError otherwise. Returns the delivery-ids."""
    peer = ctx.connect(**handshake)
    try:
        s = begin(peer)
        snd = s.sender(address, name=ctx.name(f"pub-{ctx.rng.getrandbits(32):08x}"))
        if snd.remote is None or snd.remote.target is None:
            raise SetupError(f"the broker did not attach a sending link to {address}")
        ids = snd.send_within_credit(bodies, timeout)
        got = snd.wait_outcomes(timeout)
        refused = {did: st for did, st in got.items() if getattr(st, "NAME", None) != "accepted"}
        if len(got) < len(ids) or refused:
            ended = describe(s.ended) if isinstance(s.ended, AMQPFrame) else s.ended
            raise SetupError(f"could not fill {address}: {len(got)} of {len(ids)} messages settled by the broker, "
                             f"not accepted: {refused or 'none'}; ended: {ended}")
        return ids
    finally:
        peer.close()


def fetch(ctx: Any, address: str, *, count: int = 10, until: str | None = None, timeout: float = WAIT,
          **handshake: Any) -> list[Delivery]:
    """The messages a fresh receiving link from ``address`` gets with link-credit ``count``, on a connection
    of its own: until the one whose body text is ``until`` came, ``count`` came, or ``timeout`` passed with
    nothing new. Accepts them, detaches, closes the connection."""
    peer = ctx.connect(**handshake)
    try:
        s = begin(peer)
        rcv = s.receiver(address, name=ctx.name(f"fetch-{ctx.rng.getrandbits(32):08x}"), credit=count)
        while len(rcv.received) < count:
            more = rcv.receive(1, timeout)
            if not more or (until is not None and more[0].text() == until):
                break
        got = rcv.deliveries()
        ids = [int(d.transfer.delivery_id) for d in got if d.transfer.delivery_id is not None and not d.transfer.settled]
        if ids:
            rcv.accept(min(ids), max(ids))
        rcv.detach()
        return got
    finally:
        peer.close()
