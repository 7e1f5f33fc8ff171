"""A scripted in-memory AMQP 1.0 broker for the cases of the remaining MUSTs (issue 13): queues
that order by a chosen priority mapping, and links that can be suspended and resumed (2.6.13,
3.4.6) -- each with one deliberate fault on request, so every such case is shown able to fail.

Not a broker: it answers open, begin, attach, flow, transfer, disposition, detach, end and close
well enough for those cases, and nothing else. State (queues, suspended links) lives in a
:class:`Fake` shared by the connections of one ``HostileServer(fake.behaviour)``; run it with the
credential-less ``url_10`` URL (no SASL).

Faults (``Fake.fault``):
  * priority: ``levels`` maps a header priority to the effective one (None: arrival order);
  * sending (the broker's receiving-link side of resumption): ``no-unsettled`` (a reattach without
    the unsettled map), ``no-resume-flag`` (a delivery both ends hold resumed with resume=false),
    ``first-frame-unflagged`` (resume=true only on the last frame of a multi-frame resume),
    ``resume-unknown`` (a delivery the receiver forgot resent with resume=true), ``bogus`` (a tag
    only the receiver lists resumed), ``new-while-incomplete`` (new deliveries while the
    receiver's map is incomplete);
  * receiving: ``append`` (a resumed delivery's data appended whole, the part already received
    not ignored), ``unset-settled-true`` (a delivery whose settled field is unset taken as settled).
"""
from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.peer.amqp10 import performative_name
from amqpspec.wire.amqp10 import AMQPFrame, Message, UInt, spec
from amqpspec.wire.errors import DecodeError
from tests.support.hostile_fuzz10 import frames_after_header, url_10

CHUNK = 400        # payload octets per transfer frame (under the 512 octets the cases offer)
CREDIT = 100
TERMINAL = (spec.Accepted, spec.Rejected, spec.Released, spec.Modified)


@dataclass
class OutLink:
    """A link on which the fake sends (our receiving link)."""

    name: str
    handle: int
    address: str
    delivery_count: int = 0
    credit: int = 0
    unsettled: dict[bytes, bytes] = field(default_factory=dict)   # tag -> message octets
    theirs: dict[bytes, Any] | None = None                       # the receiver's unsettled map at (re)attach
    incomplete: bool = False
    resumed: bool = False


@dataclass
class InLink:
    """A link on which the fake receives (our sending link)."""

    name: str
    handle: int
    address: str
    partial: dict[bytes, bytearray] = field(default_factory=dict)   # tag -> octets received so far
    current: tuple[bytes, int] | None = None                        # (tag, octets still to ignore)


@dataclass
class Fake:
    levels: Callable[[int], int] | None = None
    recovery: bool = False
    fault: str = ""
    queues: dict[str, list[tuple[int, int, bytes]]] = field(default_factory=dict)
    suspended: dict[str, Any] = field(default_factory=dict)   # link name -> OutLink / InLink
    lock: threading.Lock = field(default_factory=threading.Lock)
    seq: int = 0

    # -- queues ------------------------------------------------------------------------------
    def put(self, address: str, octets: bytes) -> None:
        try:  # a faulty fake (one that keeps resumed data twice) stores octets that do not decode
            priority = Message.decode(octets).header
        except DecodeError:
            priority = None
        p = 4 if priority is None or priority.priority is None else int(priority.priority)
        level = 0 if self.levels is None else self.levels(p)
        with self.lock:
            self.seq += 1
            self.queues.setdefault(address, []).append((-level, self.seq, octets))

    def take(self, address: str) -> bytes | None:
        with self.lock:
            q = self.queues.get(address) or []
            if not q:
                return None
            q.sort(key=lambda e: (e[0], e[1]))
            return q.pop(0)[2]

    # -- a connection ---------------------------------------------------------------------------
    def behaviour(self, conn: socket.socket) -> None:
        _Connection(self, conn).run()


class _Connection:
    def __init__(self, fake: Fake, conn: socket.socket) -> None:
        self.fake = fake
        self.conn = conn
        self.out: dict[tuple[int, int], OutLink] = {}
        self.inl: dict[tuple[int, int], InLink] = {}
        self.delivery_id = 0
        self.tag = 0

    def send(self, frames: list[AMQPFrame]) -> None:
        if frames:
            self.conn.sendall(b"".join(f.encode() for f in frames))

    def run(self) -> None:
        for channel, item in frames_after_header(self.conn):
            if item is None or isinstance(item, Exception):
                continue
            name, p = performative_name(item), item.performative
            if name == "open":
                self.send([AMQPFrame(0, spec.Open(container_id="amqpspec-fake-musts", max_frame_size=65536))])
            elif name == "begin":
                self.send([AMQPFrame(channel, spec.Begin(remote_channel=channel, next_outgoing_id=0,
                                                         incoming_window=65536, outgoing_window=65536))])
            elif name == "attach":
                self.attach(channel, p)
            elif name == "flow" and p.handle is not None and (channel, int(p.handle)) in self.out:
                link = self.out[(channel, int(p.handle))]
                dc = link.delivery_count if p.delivery_count is None else int(p.delivery_count)
                link.credit = dc + int(p.link_credit or 0) - link.delivery_count
                self.pump(channel, link)
            elif name == "transfer":
                self.transfer(channel, item)
            elif name == "disposition" and p.settled:
                for link in self.out.values():
                    link.unsettled = {t: m for t, m in link.unsettled.items()
                                      if not (int(p.first) <= getattr(link, "ids", {}).get(t, -1)
                                              <= int(p.last if p.last is not None else p.first))}
            elif name == "detach":
                self.detach(channel, p)
            elif name == "end":
                self.send([AMQPFrame(channel, spec.End())])
            elif name == "close":
                self.send([AMQPFrame(0, spec.Close())])
                return

    # -- links -------------------------------------------------------------------------------------
    def attach(self, channel: int, p: Any) -> None:
        name, handle = str(p.name), int(p.handle)
        if bool(p.role):   # our receiving link: the fake sends
            source = p.source
            durable = spec.TerminusDurability.UNSETTLED_STATE if self.fake.recovery else spec.TerminusDurability.NONE
            src = spec.Source(address=source.address, durable=durable, expiry_policy=source.expiry_policy)
            old = self.fake.suspended.pop(name, None) if self.fake.recovery else None
            link = old if isinstance(old, OutLink) else OutLink(name, handle, str(source.address))
            link.handle = handle
            link.theirs = None if p.unsettled is None else {bytes(k): v for k, v in dict(p.unsettled).items()}
            link.incomplete = bool(p.incomplete_unsettled)
            link.resumed = old is None
            unsettled = None
            if old is not None and self.fake.fault != "no-unsettled":
                unsettled = {t: None for t in link.unsettled}
            self.out[(channel, handle)] = link
            self.send([AMQPFrame(channel, spec.Attach(name=name, handle=handle, role=spec.Role.SENDER, source=src,
                                                      target=p.target, initial_delivery_count=link.delivery_count,
                                                      unsettled=unsettled))])
            return
        old = self.fake.suspended.pop(name, None) if self.fake.recovery else None
        link_in = old if isinstance(old, InLink) else InLink(name, handle, str(p.target.address))
        link_in.handle = handle
        self.inl[(channel, handle)] = link_in
        unsettled = {t: None for t in link_in.partial} if old is not None else None
        self.send([AMQPFrame(channel, spec.Attach(name=name, handle=handle, role=spec.Role.RECEIVER, source=p.source,
                                                  target=p.target, unsettled=unsettled)),
                   AMQPFrame(channel, spec.Flow(next_incoming_id=0, incoming_window=65536, next_outgoing_id=0,
                                                outgoing_window=65536, handle=handle, delivery_count=0,
                                                link_credit=CREDIT))])

    def detach(self, channel: int, p: Any) -> None:
        key = (channel, int(p.handle))
        link: Any = self.out.pop(key, None) or self.inl.pop(key, None)
        suspend = self.fake.recovery and not p.closed and link is not None
        if suspend:
            if isinstance(link, InLink):
                link.current = None                    # a delivery cut short: resumed after the reattach
            self.fake.suspended[link.name] = link
        elif isinstance(link, OutLink):
            for octets in link.unsettled.values():
                self.fake.put(link.address, octets)
        self.send([AMQPFrame(channel, spec.Detach(handle=p.handle, closed=not suspend))])

    # -- sending ---------------------------------------------------------------------------------
    def deliver(self, channel: int, link: OutLink, tag: bytes, octets: bytes, *, resume: bool = False,
                state: Any = None, settled: bool = False, flag_first: bool = True) -> None:
        did = self.delivery_id
        self.delivery_id += 1
        link.ids = getattr(link, "ids", {})           # type: ignore[attr-defined]
        link.ids[tag] = did                            # type: ignore[attr-defined]
        chunks = [octets[i:i + CHUNK] for i in range(0, len(octets), CHUNK)] or [b""]
        frames = []
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            flag = resume and (i > 0 or flag_first)
            frames.append(AMQPFrame(channel, spec.Transfer(
                handle=link.handle, delivery_id=did if i == 0 else None, delivery_tag=tag if i == 0 else None,
                message_format=UInt(0) if i == 0 else None, settled=settled if i == 0 else None, more=not last,
                resume=flag or None, state=state if i == 0 else None), chunk))
        link.delivery_count += 1
        link.credit -= 1
        self.send(frames)

    def pump(self, channel: int, link: OutLink) -> None:
        fault = self.fake.fault
        if not link.resumed:
            link.resumed = True
            theirs = link.theirs or {}
            for tag, octets in list(link.unsettled.items()):
                if link.credit <= 0:
                    break
                if tag not in theirs:
                    if link.incomplete:
                        continue                       # absence is no settlement: wait for the next attempt
                    self.deliver(channel, link, tag, octets, resume=fault == "resume-unknown")
                elif isinstance(theirs[tag], TERMINAL):
                    self.deliver(channel, link, tag, b"", resume=True, state=theirs[tag], settled=True)
                    del link.unsettled[tag]
                else:
                    self.deliver(channel, link, tag, octets, resume=fault != "no-resume-flag",
                                 flag_first=fault != "first-frame-unflagged")
            if fault == "bogus":
                for tag in theirs:
                    if tag not in link.unsettled and link.credit > 0:
                        self.deliver(channel, link, tag, b"\x00Sw\xa1\x05bogus", resume=True)
            if link.incomplete and fault != "new-while-incomplete":
                return
        while link.credit > 0:
            octets = self.fake.take(link.address)
            if octets is None:
                return
            self.tag += 1
            tag = self.tag.to_bytes(4, "big")
            link.unsettled[tag] = octets
            self.deliver(channel, link, tag, octets)

    # -- receiving -------------------------------------------------------------------------------
    def transfer(self, channel: int, item: AMQPFrame) -> None:
        p = item.performative
        link = self.inl.get((channel, int(p.handle)))
        if link is None:
            return
        if p.delivery_tag is not None and link.current is None:
            tag = bytes(p.delivery_tag)
            skip = 0
            if p.resume and tag in link.partial and self.fake.fault != "append":
                have = len(link.partial[tag])
                offset = int(p.state.section_offset or 0) if isinstance(p.state, spec.Received) else 0
                skip = max(0, have - offset)
            link.partial.setdefault(tag, bytearray())
            link.current = (tag, skip)
            link.first_id = p.delivery_id                  # type: ignore[attr-defined]
            link.settled = p.settled                       # type: ignore[attr-defined]
        assert link.current is not None
        tag, skip = link.current
        data = bytes(item.payload)
        used = min(skip, len(data))
        link.partial[tag] += data[used:]
        link.current = (tag, skip - used)
        if p.more and not p.aborted:
            return
        link.current = None
        octets = bytes(link.partial.pop(tag))
        if p.aborted:
            return
        self.fake.put(link.address, octets)
        unset_true = self.fake.fault == "unset-settled-true"
        if link.settled or (link.settled is None and unset_true):   # type: ignore[attr-defined]
            return                                     # settled by the sender: nothing to answer
        self.send([AMQPFrame(channel, spec.Disposition(role=spec.Role.RECEIVER, first=link.first_id,  # type: ignore[attr-defined]
                                                       settled=True, state=spec.Accepted()))])


__all__ = ["Fake", "url_10"]
