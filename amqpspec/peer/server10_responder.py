"""A correct AMQP 1.0 node's answers to a client, each replaceable by a case.

The server peer (:mod:`amqpspec.peer.server10`) hands every frame the client sends to a
:class:`Responder10`, which answers the way the specification asks the partner of a
client to: a begin for its begin (remote-channel set, 2.5.2), the opposite attach for its
attach (a client sender meets a receiver that grants credit; a client receiver meets a
sender that transfers within the credit it is given, 2.6.7), a disposition settling what
the client sent unsettled, the detach, end and close that answer its own. It stands on the
session/link layer (:mod:`amqpspec.peer.session10`) used from the node's side: our
:class:`~amqpspec.peer.session10.Session` learns the client's begin as its remote one, our
Receiver/Sender links take the client's attach as theirs, and the peer's watchers keep
transfer ids, delivery-count and credit whoever reads the frames.

A case changes the node's conduct at one point with ``on("attach", fn)``: ``fn`` gets the
frame and returns None to let the default answer run, False when it handled the frame,
True when the conversation is over. Messages are bodies put at an address beforehand
(``preload``) or sent by the client; a message with a reply-to is answered at that address
(the rpc workload's service) -- enough for the driver contract's workloads, not a broker.

A client attach whose target is a coordinator meets a transactional resource (section 4): our
attach back with the coordinator, credit, a declared outcome with a fresh txn-id for each declare
(4.2), accepted for the discharge of a txn it declared and not yet discharged, rejected with
amqp:transaction:unknown-id for any other (4.3) -- or, when the client's source does not allow the
rejected outcome, the control link detached with that error; a case replaces the answer with
``txn_outcome``.
Transfers carrying a transactional-state get theirs back with the outcome inside (4.4.1).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.peer.amqp10 import WINDOW, performative_name
from amqpspec.peer.server10 import ServerPeer10
from amqpspec.peer.session10 import RECEIVER, SENDER, Delivery, Link, Receiver, Sender, Session, seq_add, session_of
from amqpspec.wire.amqp10 import AMQPFrame, EmptyFrame, Message, SASLFrame, Symbol, spec

Handler = Callable[[AMQPFrame], "bool | None"]
MAX_KEPT = 10_000     # frames and deliveries kept per connection (a flooding client)
MAX_DELIVERIES = 1_000   # deliveries a receiving link keeps (their payloads included)
MAX_LOG = 20_000      # frames a session endpoint keeps in its log before the oldest half goes
MAX_MESSAGE = 16 << 20   # octets of one delivery kept while its frames arrive (more=true without end)
CREDIT = 100          # link-credit granted to a client sender (topped up when half is used)


@dataclass
class ClientSession:
    """A session the client began: our endpoint of it, and what the client did on it."""

    channel: int                          # the client's channel
    ours: Session                         # our endpoint (its channel is ours; remote = the client's)
    begin: spec.Begin
    ending: bool = False                  # we sent end and wait for the client's
    ended: bool = False
    after_end: list[AMQPFrame] = field(default_factory=list)   # the client's frames after our end
    links: dict[int, Link] = field(default_factory=dict)       # the client's handle -> our link
    transfers_at_flow: int = 0            # transfer frames received when we last opened the window


class Responder10:
    def __init__(self, peer: ServerPeer10) -> None:
        self.peer = peer
        self.overrides: dict[str, Handler] = {}
        self.sessions: dict[int, ClientSession] = {}         # by the client's channel
        self.queues: dict[str, deque[Any]] = {}                # address -> messages (Message or body)
        self.credit = CREDIT
        self.replenish = True               # top up a client sender's credit as a broker would
        self.open_window = True             # re-open the session incoming-window as transfers arrive
        self.settle_deliveries = True       # settle (accepted) what the client sends unsettled
        self.outcome: Callable[[Delivery], Any] = lambda d: spec.Accepted()
        self.begin_fields: dict[str, Any] = {}    # overrides of our begins (incoming_window, handle_max ...)
        self.attach_fields: dict[str, Any] = {}   # overrides of our attaches
        self.deliveries: list[tuple[Receiver, Delivery]] = []   # what the client sent, in order
        self.link_log: list[Link] = []       # every link of ours, detached ones too (cases judge them after the end)
        self.client_dispositions: list[tuple[int, spec.Disposition]] = []
        self.client_flows: list[tuple[int, spec.Flow]] = []
        self.client_detaches: list[tuple[int, spec.Detach]] = []
        self.client_ends: list[tuple[int, spec.End]] = []
        self.client_close: spec.Close | None = None
        self.after_close: list[Any] = []     # frames after our close
        self.detached_by_us: dict[tuple[int, int], list[AMQPFrame]] = {}   # (client ch, client handle) -> later frames
        self.replied_close = False
        self.stray: list[str] = []
        self.empty_frames = 0
        self._dynamic = 0
        self._done: dict[int, int] = {}     # id(receiver) -> deliveries already handled
        # transactions (section 4): txn-id -> "live" | "committed" | "rolled-back"
        self.transactions: dict[bytes, str] = {}
        self.txn_requests: list[tuple[Delivery, Any]] = []     # (delivery, Declare | Discharge | None)
        self.coordinator_capabilities: Any = None   # our coordinator's capabilities (None: local only)
        self.settle_transactional = True    # False: tell the transactional outcome without settling (4.4.4)
        # a case's answer to a declare or discharge: returns the delivery state to send (settled), or
        # the string "default" for the answer above, or None for no answer at all
        self.txn_outcome: Callable[[Delivery, Any], Any] | None = None
        self._txn_counter = 0

    # ------------------------------------------------------------------ setup by a case
    def on(self, name: str, handler: Handler) -> "Responder10":
        self.overrides[name] = handler
        return self

    def preload(self, address: str, bodies: list[Any]) -> "Responder10":
        self.queues.setdefault(address, deque()).extend(bodies)
        return self

    # ------------------------------------------------------------------ lookups
    def session(self, client_channel: int | None = None) -> ClientSession | None:
        if client_channel is None:
            return next(iter(self.sessions.values()), None)
        return self.sessions.get(client_channel)

    def links(self, kind: type | None = None) -> list[Link]:
        return [lk for cs in self.sessions.values() for lk in cs.links.values() if kind is None or isinstance(lk, kind)]

    def ever(self, kind: type) -> list[Any]:
        """Every link of ours of ``kind`` (Sender or Receiver) the conversation had, detached or not."""
        return [lk for lk in self.link_log if isinstance(lk, kind)]

    def senders(self) -> list[Sender]:
        """Our sending links (the client receives on them)."""
        return [lk for lk in self.links(Sender) if isinstance(lk, Sender)]

    def receivers(self) -> list[Receiver]:
        """Our receiving links (the client sends on them)."""
        return [lk for lk in self.links(Receiver) if isinstance(lk, Receiver)]

    def client_attaches(self) -> list[spec.Attach]:
        return [lk.remote for lk in self.links() if lk.remote is not None]

    # ------------------------------------------------------------------ node actions
    def end_session(self, cs: ClientSession, error: Any = None) -> None:
        """Ends a session from our side (the client must answer with end, 2.5.5)."""
        cs.ending = True
        self.peer.send(cs.ours.end_frame(error))

    def detach_link(self, link: Link, *, closed: bool = True, error: Any = None) -> None:
        """Detaches a link from our side (the client must answer with detach, 2.6.5)."""
        cs = self._session_of_link(link)
        if cs is not None and link.remote_handle is not None:
            self.detached_by_us.setdefault((cs.channel, link.remote_handle), [])
        self.peer.send(link.detach_frame(closed=closed, error=error))

    def transfer(self, sender: Sender, message: Any, **overrides: Any) -> int:
        """Sends one delivery on ``sender`` (unsettled by default); returns its delivery-id."""
        return sender.send(message, **overrides)

    def pump(self, sender: Sender) -> None:
        """Sends the messages at the sender's address within the client's link-credit and session window."""
        address = _sender_address(sender)
        q = self.queues.get(address) if address else None
        while q and sender.link_credit > 0 and not self._closing(sender):
            window = sender.session.remote_incoming_window
            if window is not None and window <= 0:
                return
            sender.send(q.popleft())
        if sender.drain and sender.link_credit > 0 and not q:
            # drain (2.6.7): no more messages -- use up the credit by advancing delivery-count
            sender.delivery_count = seq_add(sender.delivery_count, sender.link_credit)
            sender.link_credit = 0
            self.peer.send(sender.session.flow_frame(sender.handle, delivery_count=sender.delivery_count,
                                                      link_credit=0, available=0, drain=True))

    def _closing(self, link: Link) -> bool:
        cs = self._session_of_link(link)
        return self.peer.close_sent or cs is None or cs.ending or cs.ended

    def _session_of_link(self, link: Link) -> ClientSession | None:
        return next((cs for cs in self.sessions.values() if cs.ours is link.session), None)

    # ------------------------------------------------------------------ the conversation
    def handle(self, item: Any) -> bool:
        """Answers one item from the client; True when the closing handshake is over."""
        if isinstance(item, EmptyFrame):
            self.empty_frames += 1
            return False
        self._bound()
        if not isinstance(item, AMQPFrame) or item.performative is None:
            self._stray(f"unexpected here: {getattr(item, 'summary', lambda: repr(item))()}"
                        if not isinstance(item, SASLFrame) else f"SASL frame after the opening: {item.summary()}")
            return False
        name = performative_name(item) or ""
        if self.peer.close_sent:
            if name == "close":
                self.client_close = item.performative
                return True
            self._keep(self.after_close, item)
            return False
        cs = self.sessions.get(item.channel)
        if cs is not None and cs.ending and name not in ("end", "close"):
            self._keep(cs.after_end, item)
            return False
        handle = getattr(item.performative, "handle", None)
        if cs is not None and handle is not None and (cs.channel, int(handle)) in self.detached_by_us \
                and name != "detach":
            self._keep(self.detached_by_us[(cs.channel, int(handle))], item)
            return False
        handler = self.overrides.get(name)
        if handler is not None:
            handled = handler(item)
            if handled is not None:
                return bool(handled)
        return self._default(item, name, cs)

    def _default(self, f: AMQPFrame, name: str, cs: ClientSession | None) -> bool:
        p = f.performative
        if name == "close":
            self.client_close = p
            self.peer.send(AMQPFrame(0, spec.Close()))
            self.replied_close = True
            return True
        if name == "begin":
            self.answer_begin(f)
            return False
        if cs is None:
            self._stray(f"{name} on channel {f.channel}, where no session was begun")
            return False
        if name == "end":
            self._keep(self.client_ends, (f.channel, p))
            if not cs.ending:
                self.peer.send(cs.ours.end_frame())
            cs.ended, cs.ending = True, False
            return False
        if name == "attach":
            self.answer_attach(cs, f)
        elif name == "detach":
            self._detach(cs, p)
        elif name == "flow":
            self._keep(self.client_flows, (f.channel, p))
            self._flow(cs, p)
        elif name == "transfer":
            self._transfer(cs, p)
        elif name == "disposition":
            self._keep(self.client_dispositions, (f.channel, p))
            if bool(p.role) is bool(RECEIVER) and not p.settled:
                # the client (receiver) told the outcome without settling: as sender we settle (2.6.12)
                self.peer.send(AMQPFrame(cs.ours.channel, spec.Disposition(role=SENDER, first=p.first, last=p.last,
                                                                           settled=True, state=p.state)))
        else:
            self._stray(f"unexpected from a client here: {f.summary()}")
        return False

    # -- sessions ---------------------------------------------------------------------------
    def answer_begin(self, f: AMQPFrame, **overrides: Any) -> ClientSession:
        """Our begin for the client's (2.5.2: remote-channel names its channel); our session endpoint
        takes the client's begin as the remote one."""
        ours = self.free_channel()
        s = session_of(self.peer, ours)
        s.remote_channel, s.remote_begin = f.channel, f.performative
        self.peer.reserve_channel(ours)
        cs = ClientSession(f.channel, s, f.performative)
        self.sessions[f.channel] = cs
        fields = dict(remote_channel=f.channel)
        fields.update(self.begin_fields)
        fields.update(overrides)
        if "incoming_window" in fields:
            s.incoming_window = int(fields["incoming_window"])
        if "next_outgoing_id" in fields:   # our transfer ids start there (2.5.6: an arbitrary value)
            s.next_outgoing_id = s.initial_outgoing_id = int(fields["next_outgoing_id"])
        self.peer.send(s.begin_frame(**fields))
        return cs

    def free_channel(self) -> int:
        used = {cs.ours.channel for cs in self.sessions.values() if not cs.ended}
        ch = 0
        while ch in used:
            ch += 1
        return ch

    # -- links ------------------------------------------------------------------------------
    def answer_attach(self, cs: ClientSession, f: AMQPFrame, **overrides: Any) -> Link:
        """The node's attach for the client's: the opposite role, the terminus it asked for (a
        dynamic one gets an address of ours, 3.5.3/3.5.4); a client sender is granted credit."""
        p = f.performative
        s = cs.ours
        handle = self.peer.free_handle(s.channel)
        source, target = p.source, p.target
        link: Link
        if bool(p.role) is bool(RECEIVER):   # the client receives: we send
            start = {**self.attach_fields, **overrides}.get("initial_delivery_count", 0)
            link = Sender(s, str(p.name), handle, initial_delivery_count=int(start or 0))
            if source is not None and getattr(source, "dynamic", False):
                source = source.replace(address=self._dynamic_address()) if hasattr(source, "replace") else source
        else:
            link = Receiver(s, str(p.name), handle)
            if target is not None and getattr(target, "dynamic", False):
                target = target.replace(address=self._dynamic_address()) if hasattr(target, "replace") else target
        link.take_attach(p)
        if isinstance(target, spec.Coordinator) and isinstance(link, Receiver):
            link.fields["coordinator"] = True   # the client is a transaction controller (4.1)
            if self.coordinator_capabilities is not None:
                target = spec.Coordinator(capabilities=self.coordinator_capabilities)
        cs.links[int(p.handle)] = link
        self._keep(self.link_log, link)
        fields: dict[str, Any] = dict(source=source, target=target, snd_settle_mode=p.snd_settle_mode,
                                      rcv_settle_mode=p.rcv_settle_mode)
        if isinstance(link, Sender):
            fields["initial_delivery_count"] = link.init
        fields.update(self.attach_fields)
        fields.update(overrides)
        link.fields["our_source"], link.fields["our_target"] = fields.get("source"), fields.get("target")
        self.peer.send(AMQPFrame(s.channel, spec.Attach(name=link.name, handle=handle, role=link.role,
                                                         **{k: v for k, v in fields.items()})))
        if isinstance(link, Receiver) and self.credit:
            link.grant(self.credit)
        return link

    def _dynamic_address(self) -> str:
        self._dynamic += 1
        return f"amqpspec-dynamic-{self._dynamic}"

    def _detach(self, cs: ClientSession, p: spec.Detach) -> None:
        self._keep(self.client_detaches, (cs.channel, p))
        h = int(p.handle)
        link = cs.links.get(h)
        if (cs.channel, h) in self.detached_by_us:
            self.detached_by_us.pop((cs.channel, h), None)   # the client's answer to our detach
        elif link is not None:
            self.peer.send(link.detach_frame(closed=p.closed))
        else:
            self._stray(f"detach of handle {h}, which no attach named")
        cs.links.pop(h, None)

    def link_of(self, cs: ClientSession, handle: Any) -> Link | None:
        return None if handle is None else cs.links.get(int(handle))

    # -- flow and transfers --------------------------------------------------------------------
    def _flow(self, cs: ClientSession, p: spec.Flow) -> None:
        link = self.link_of(cs, p.handle)
        if isinstance(link, Sender):
            self.pump(link)
        if p.echo:
            if link is None:
                self.peer.send(cs.ours.flow_frame())
            elif isinstance(link, Sender):
                self.peer.send(cs.ours.flow_frame(link.handle, delivery_count=link.delivery_count,
                                                  link_credit=max(0, link.link_credit), available=len(
                                                      self.queues.get(_sender_address(link) or "", ()))))
            elif isinstance(link, Receiver):
                link.grant(link.link_credit)
        for sender in [lk for lk in cs.links.values() if isinstance(lk, Sender)]:
            if sender is not link:
                self.pump(sender)   # the session window may have opened

    def _transfer(self, cs: ClientSession, p: spec.Transfer) -> None:
        link = self.link_of(cs, p.handle)
        if not isinstance(link, Receiver):
            self._stray(f"transfer on handle {p.handle}, which is not a link the client sends on")
            return
        done = self._done.get(id(link), 0)
        for d in link.received[done:]:
            if len(self.deliveries) < MAX_DELIVERIES:
                self.deliveries.append((link, d))
            if link.fields.get("coordinator"):
                self._coordinate(link, d)
                continue
            if isinstance(d.transfer.state, spec.TransactionalState):
                self._transactional(link, d)
                self._route(link, d)
                continue
            if not d.transfer.settled and self.settle_deliveries and d.transfer.delivery_id is not None:
                self.peer.send(link.disposition_frame(int(d.transfer.delivery_id), settled=True,
                                                      state=self.outcome(d)))
            self._route(link, d)
        if len(link.received) > MAX_DELIVERIES:   # a flood: keep the newest deliveries only
            del link.received[:MAX_DELIVERIES // 2]
        self._done[id(link)] = len(link.received)
        if self.replenish and self.credit and link.link_credit <= self.credit // 2 and not link.drain:
            link.grant(self.credit)
        window_used = cs.ours.transfers_in - cs.transfers_at_flow
        if self.open_window and window_used >= max(1, cs.ours.incoming_window // 2):
            cs.transfers_at_flow = cs.ours.transfers_in
            self.peer.send(cs.ours.flow_frame())

    # -- transactions (section 4) ----------------------------------------------------------------
    def _coordinate(self, link: Receiver, d: Delivery) -> None:
        """Answers a declare or a discharge sent to our coordinator (settled: the control message
        is done with once its outcome is told, 4.2/4.3)."""
        request = txn_request(d)
        if len(self.txn_requests) < MAX_KEPT:
            self.txn_requests.append((d, request))
        state: Any = "default"
        if self.txn_outcome is not None:
            state = self.txn_outcome(d, request)
        if state == "default":
            state = self.default_txn_outcome(request)
            if isinstance(state, spec.Rejected) and not allows_rejected(link):
                # 4.2/4.3: a source without the rejected outcome gets the error on the detach instead
                self.detach_link(link, closed=True, error=state.error)
                return
        if state is not None and d.transfer.delivery_id is not None:
            self.peer.send(link.disposition_frame(int(d.transfer.delivery_id), settled=True, state=state))

    def default_txn_outcome(self, request: Any) -> Any:
        if isinstance(request, spec.Declare):
            if len(self.transactions) >= MAX_KEPT:   # a client declaring without end: refused, not kept
                return spec.Rejected(error=spec.Error(condition=Symbol("amqp:resource-limit-exceeded"),
                                                      description="too many transactions"))
            self._txn_counter += 1
            txn_id = f"amqpspec-txn-{self._txn_counter}".encode()
            self.transactions[txn_id] = "live"
            return spec.Declared(txn_id=txn_id)
        if isinstance(request, spec.Discharge):
            txn_id = _octets(request.txn_id)
            if txn_id is not None and self.transactions.get(txn_id) == "live":
                self.transactions[txn_id] = "rolled-back" if request.fail else "committed"
                return spec.Accepted()
            return spec.Rejected(error=spec.Error(condition=Symbol("amqp:transaction:unknown-id"),
                                                  description="no live transaction with this txn-id"))
        return spec.Rejected(error=spec.Error(condition=Symbol("amqp:decode-error"),
                                              description="neither a declare nor a discharge"))

    def _transactional(self, link: Receiver, d: Delivery) -> None:
        """A transfer posted in a transaction: its provisional outcome, in the transaction (4.4.1)."""
        state = d.transfer.state
        if d.transfer.settled or d.transfer.delivery_id is None or not self.settle_deliveries:
            return
        outcome = self.outcome(d)
        self.peer.send(link.disposition_frame(int(d.transfer.delivery_id), settled=self.settle_transactional,
                                              state=spec.TransactionalState(txn_id=state.txn_id, outcome=outcome)))

    def _route(self, link: Receiver, d: Delivery) -> None:
        """Keeps the message at its address; a request with reply-to is answered there."""
        try:
            message = d.message()
        except Exception:  # noqa: BLE001 - an undecodable message is evidence for a case, not a crash
            return
        props = message.properties
        reply_to = getattr(props, "reply_to", None) if props is not None else None
        if reply_to:
            request_id = getattr(props, "message_id", None)
            corr = request_id if request_id is not None else getattr(props, "correlation_id", None)
            reply = Message(properties=spec.Properties(correlation_id=corr), body="reply:" + d.text())
            self._enqueue(str(reply_to), reply)
            return
        address = _address(link.remote.target if link.remote is not None else None) \
            or (str(getattr(props, "to", "")) if props is not None and getattr(props, "to", None) else None)
        if address:
            self._enqueue(address, message)

    def _enqueue(self, address: str, message: Any) -> None:
        q = self.queues.setdefault(address, deque())
        if len(q) < MAX_KEPT:
            q.append(message)
        for sender in self.senders():
            if _sender_address(sender) == address:
                self.pump(sender)

    # -- bookkeeping ---------------------------------------------------------------------------
    def _bound(self) -> None:
        """A client that floods cannot make the node keep without end: session logs keep their
        newest frames, a delivery that never ends is dropped past MAX_MESSAGE octets."""
        for cs in self.sessions.values():
            if len(cs.ours.log) > MAX_LOG:
                del cs.ours.log[:MAX_LOG // 2]
            for link in cs.links.values():
                partial = getattr(link, "_partial", None)
                if partial is not None and len(partial[1]) > MAX_MESSAGE:
                    link._partial = None   # type: ignore[attr-defined]
                    self._stray(f"a delivery on link {link.name!r} past {MAX_MESSAGE} octets: dropped")

    def _keep(self, into: list, item: Any) -> None:  # type: ignore[type-arg]
        if len(into) < MAX_KEPT:
            into.append(item)

    def _stray(self, what: str) -> None:
        self._keep(self.stray, what)


def txn_request(d: Delivery) -> Any:
    """The declare or discharge a coordinator's delivery holds (an amqp-value), else None."""
    try:
        body = d.message().body
    except Exception:  # noqa: BLE001 - an undecodable control message is answered as neither
        return None
    value = getattr(body, "value", None) if isinstance(body, spec.AmqpValue) else None
    return value if isinstance(value, (spec.Declare, spec.Discharge)) else None


def allows_rejected(link: Link) -> bool:
    """The client's source lets the rejected outcome be chosen (3.5.3: listed in outcomes, or, with
    none listed, the default-outcome; neither means accepted alone)."""
    source = link.remote.source if link.remote is not None else None
    outcomes = getattr(source, "outcomes", None)
    listed = [str(o) for o in (outcomes if isinstance(outcomes, (list, tuple)) else [outcomes] if outcomes else [])]
    if listed:
        return "amqp:rejected:list" in listed
    return isinstance(getattr(source, "default_outcome", None), spec.Rejected)


def _octets(value: Any) -> bytes | None:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return None


def _sender_address(sender: Link) -> str | None:
    """The address a link of ours sends from: the one we gave a dynamic source, else the client's."""
    return _address(sender.fields.get("our_source")) or \
        _address(sender.remote.source if sender.remote is not None else None)


def _address(terminus: Any) -> str | None:
    address = getattr(terminus, "address", None) if terminus is not None else None
    return None if address is None else str(address)


__all__ = ["Responder10", "ClientSession", "CREDIT", "WINDOW", "txn_request", "allows_rejected"]
