"""A scripted AMQP 1.0 broker with a transaction coordinator, for the 4.4.2 and 4.4.3 cases of
issue 13: it declares and discharges transactions, acquires transactionally (a flow's txn-id),
honours the session incoming-window of its peer (so a multi-frame delivery can be held after
its first frame), and has one deliberate fault on request, so each case is shown able to fail.

Not a broker: open, begin, attach, flow, transfer, disposition, detach, end and close, well
enough for those cases. Queues live in the :class:`FakeTxn` shared by the connections of one
``HostileServer(fake.behaviour)``; connect with the credential-less ``url_10`` URL.

Faults (``FakeTxn.fault``):
  * ``other-txn-ignored``: an outcome in another transaction than the delivery's is taken;
  * ``discharge-first``: a rollback is completed before the rest of a partly sent delivery;
  * ``keep-acquired``: a rolled-back acquisition keeps the message (not made available again);
  * ``no-coordinator``: a coordinator target is attached as an ordinary target (the Proton example
    broker's answer): the broker offers no transactions;
  * ``abort``: no fault -- the partly sent delivery is aborted rather than completed.
"""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Any

from amqpspec.peer.amqp10 import performative_name
from amqpspec.wire.amqp10 import AMQPFrame, Message, Symbol, UInt, spec
from tests.support.hostile_fuzz10 import frames_after_header, url_10

CHUNK = 300     # payload octets per transfer frame: under the 512 octets the case offers
ROLLBACK = Symbol("amqp:transaction:rollback")


@dataclass
class FakeTxn:
    fault: str = ""
    queues: dict[str, list[bytes]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def put(self, address: str, octets: bytes) -> None:
        with self.lock:
            self.queues.setdefault(address, []).append(octets)

    def take(self, address: str) -> bytes | None:
        with self.lock:
            q = self.queues.get(address) or []
            return q.pop(0) if q else None

    def behaviour(self, conn: socket.socket) -> None:
        _Connection(self, conn).run()


@dataclass
class _Out:
    """A link on which the fake sends (the case's receiving link)."""

    handle: int
    address: str
    credit: int = 0
    delivery_count: int = 0
    txn: bytes | None = None


class _Connection:
    def __init__(self, fake: FakeTxn, conn: socket.socket) -> None:
        self.fake, self.conn = fake, conn
        self.control: tuple[int, int] | None = None             # (channel, handle) of the control link
        self.inbound: dict[tuple[int, int], tuple[str, bytearray]] = {}
        self.out: dict[tuple[int, int], _Out] = {}
        self.txns: dict[bytes, list[tuple[str, bytes]]] = {}    # open txn -> its acquisitions (address, message)
        self.acquired: dict[int, bytes] = {}                   # delivery-id -> the txn it was acquired in
        self.pending: list[AMQPFrame] = []                     # transfer frames held by the peer's window
        self.after: list[AMQPFrame] = []                       # frames to send once ``pending`` is out
        self.next_out, self.limit = 0, 0                       # our next transfer-id; the peer's window edge
        self.delivery_id, self.txn_seq = 0, 0
        self.in_ids: dict[int, int] = {}

    def send(self, *frames: AMQPFrame) -> None:
        if frames:
            self.conn.sendall(b"".join(f.encode() for f in frames))

    def flush(self) -> None:
        while self.pending and self.next_out < self.limit:
            self.send(self.pending.pop(0))
            self.next_out += 1
        if not self.pending and self.after:
            self.send(*self.after)
            self.after = []

    def run(self) -> None:
        for channel, item in frames_after_header(self.conn):
            if item is None or isinstance(item, Exception):
                continue
            name, p = performative_name(item), item.performative
            if name == "open":
                self.send(AMQPFrame(0, spec.Open(container_id="amqpspec-fake-txn", max_frame_size=65536)))
            elif name == "begin":
                self.limit = int(p.incoming_window)
                self.send(AMQPFrame(channel, spec.Begin(remote_channel=channel, next_outgoing_id=0,
                                                        incoming_window=65536, outgoing_window=65536)))
            elif name == "attach":
                self.attach(channel, p)
            elif name == "flow":
                self.flow(channel, p)
            elif name == "transfer":
                self.transfer(channel, item)
            elif name == "disposition":
                self.disposition(channel, p)
            elif name == "detach":
                self.send(AMQPFrame(channel, spec.Detach(handle=p.handle, closed=True)))
            elif name == "end":
                self.send(AMQPFrame(channel, spec.End()))
            elif name == "close":
                self.send(AMQPFrame(0, spec.Close()))
                return

    def attach(self, channel: int, p: Any) -> None:
        handle = int(p.handle)
        if bool(p.role):     # the case receives: we send
            self.out[(channel, handle)] = _Out(handle, str(p.source.address))
            self.send(AMQPFrame(channel, spec.Attach(name=p.name, handle=handle, role=spec.Role.SENDER,
                                                     source=spec.Source(address=p.source.address), target=p.target,
                                                     initial_delivery_count=0)))
            return
        target = p.target
        if isinstance(target, spec.Coordinator) and self.fake.fault == "no-coordinator":
            target = spec.Target()
            address = ""
        elif isinstance(target, spec.Coordinator):
            self.control = (channel, handle)
            address = ""
        else:
            address = str(p.target.address)
        self.inbound[(channel, handle)] = (address, bytearray())
        self.send(AMQPFrame(channel, spec.Attach(name=p.name, handle=handle, role=spec.Role.RECEIVER,
                                                 source=p.source, target=target)),
                  AMQPFrame(channel, spec.Flow(next_incoming_id=0, incoming_window=65536, next_outgoing_id=0,
                                               outgoing_window=65536, handle=handle, delivery_count=0,
                                               link_credit=100)))

    def flow(self, channel: int, p: Any) -> None:
        base = self.next_out if p.next_incoming_id is None else int(p.next_incoming_id)
        if p.next_incoming_id is not None or p.incoming_window is not None:
            self.limit = base + int(p.incoming_window or 0)
        link = self.out.get((channel, int(p.handle))) if p.handle is not None else None
        if link is not None:
            dc = link.delivery_count if p.delivery_count is None else int(p.delivery_count)
            link.credit = dc + int(p.link_credit or 0) - link.delivery_count
            txn = (p.properties or {}).get(Symbol("txn-id"))
            link.txn = None if txn is None else bytes(txn)
            while link.credit > 0:
                octets = self.fake.take(link.address)
                if octets is None:
                    break
                self.deliver(channel, link, octets)
        self.flush()

    def deliver(self, channel: int, link: _Out, octets: bytes) -> None:
        did, self.delivery_id = self.delivery_id, self.delivery_id + 1
        state = None if link.txn is None else spec.TransactionalState(txn_id=link.txn)
        if link.txn is not None:
            self.acquired[did] = link.txn
            self.txns[link.txn].append((link.address, octets))
        chunks = [octets[i:i + CHUNK] for i in range(0, len(octets), CHUNK)] or [b""]
        for i, chunk in enumerate(chunks):
            first = i == 0
            self.pending.append(AMQPFrame(channel, spec.Transfer(
                handle=link.handle, delivery_id=did if first else None,
                delivery_tag=did.to_bytes(4, "big") if first else None, message_format=UInt(0) if first else None,
                more=i < len(chunks) - 1, state=state if first else None), chunk))
        link.delivery_count += 1
        link.credit -= 1

    def transfer(self, channel: int, item: AMQPFrame) -> None:
        p = item.performative
        key = (channel, int(p.handle))
        if key not in self.inbound:
            return
        address, data = self.inbound[key]
        if p.delivery_id is not None:
            self.in_ids[p.handle] = int(p.delivery_id)
        data += bytes(item.payload)
        if p.more:
            return
        octets, did = bytes(data), self.in_ids[p.handle]
        data.clear()
        if key == self.control:
            self.coordinate(channel, did, Message.decode(octets).body.value)
            return
        self.fake.put(address, octets)
        self.send(AMQPFrame(channel, spec.Disposition(role=spec.Role.RECEIVER, first=did, settled=True,
                                                      state=spec.Accepted())))

    def coordinate(self, channel: int, did: int, body: Any) -> None:
        def answer(state: Any) -> AMQPFrame:
            return AMQPFrame(channel, spec.Disposition(role=spec.Role.RECEIVER, first=did, settled=True, state=state))
        if isinstance(body, spec.Declare):
            self.txn_seq += 1
            txn = b"txn-%d" % self.txn_seq
            self.txns[txn] = []
            self.send(answer(spec.Declared(txn_id=txn)))
            return
        txn = bytes(body.txn_id)
        work = self.txns.pop(txn, [])
        if body.fail and self.fake.fault != "keep-acquired":
            for address, octets in work:
                self.fake.put(address, octets)
        if self.pending and self.fake.fault == "abort":
            head = self.pending[0].performative
            self.pending = [AMQPFrame(self.pending[0].channel, spec.Transfer(handle=head.handle, more=False,
                                                                             aborted=True))]
        if self.pending and self.fake.fault != "discharge-first":
            self.after.append(answer(spec.Accepted()))
            self.flush()
        else:
            self.send(answer(spec.Accepted()))

    def disposition(self, channel: int, p: Any) -> None:
        state = p.state
        if not isinstance(state, spec.TransactionalState) or self.control is None:
            return
        held = self.acquired.get(int(p.first))
        other = held is not None and held in self.txns and bytes(state.txn_id) != held
        if other and self.fake.fault != "other-txn-ignored":
            ch, handle = self.control
            self.send(AMQPFrame(ch, spec.Detach(handle=handle, closed=True,
                                                error=spec.Error(condition=ROLLBACK,
                                                                 description="outcome in another transaction"))))


__all__ = ["FakeTxn", "url_10"]
