"""The AMQP 1.0 session/link layer (amqpspec.peer.session10) against a scripted broker end.

The peer is a real ``amqp10.Peer`` over a socket pair; the test plays the broker by writing
frames into the other end, so the layer is driven through the same recv path a case uses.
"""
from __future__ import annotations

import socket
import time
from typing import Any

import pytest

from amqpspec.peer import session10
from amqpspec.peer.amqp10 import Peer
from amqpspec.peer.base import Link as SocketLink
from amqpspec.peer.session10 import (
    SEQ, Delivery, Payload, Receiver, Sender, begin, fetch, publish, seq_add, seq_diff, seq_within, session_of,
)
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp10 import AMQPFrame, FrameReader, Message, spec, transfer_frames


class Broker:
    """The far end of the socket pair: writes the broker's frames, reads what the peer sent."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader(1 << 20, False)

    def send(self, *frames: AMQPFrame) -> None:
        self.sock.sendall(b"".join(f.encode() for f in frames))

    def received(self, timeout: float = 0.5) -> list[Any]:
        """Every frame the peer wrote so far."""
        out: list[Any] = []
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                break
            if not data:
                break
            self.reader.feed(data)
            while (item := self.reader.next()) is not None:
                out.append(item)
            self.sock.settimeout(0.05)
        return out


@pytest.fixture
def pair() -> Any:
    ours, theirs = socket.socketpair()
    peer = Peer(SocketLink(ours, Transcript(), time.monotonic() + 30), Target.parse("amqp://127.0.0.1:5672/"))
    peer.opened.max_frame_size = 512
    peer.stage = "open"
    yield peer, Broker(theirs)
    ours.close()
    theirs.close()


def begun(peer: Peer, broker: Broker, **overrides: Any) -> session10.Session:
    """A session whose begin the broker answered on its channel 3 (not ours, 0)."""
    broker.send(AMQPFrame(3, spec.Begin(remote_channel=0, next_outgoing_id=100, incoming_window=10,
                                        outgoing_window=10)))
    return begin(peer, 0, **overrides)


def attached(s: session10.Session, broker: Broker, role: bool, *, handle: int = 9, init: int = 0) -> Any:
    """A link of ours that the broker attached on its handle ``handle``."""
    name = f"l{len(s.links)}"
    broker.send(AMQPFrame(s.remote, spec.Attach(name=name, handle=handle, role=not role,
                                                initial_delivery_count=init if role else None)))
    return (s.sender if role is spec.Role.SENDER else s.receiver)("q", name=name)


# ---------------------------------------------------------------------------------------- serial arithmetic
def test_serial_arithmetic_wraps_at_2_32() -> None:
    assert seq_add(SEQ - 1) == 0
    assert seq_add(SEQ - 3, 5) == 2
    assert seq_diff(2, SEQ - 3) == 5
    assert seq_diff(SEQ - 3, 2) == -5
    assert seq_within(0, SEQ - 1, 1) and not seq_within(2, SEQ - 1, 1)


# ---------------------------------------------------------------------------------------- session
def test_begin_learns_the_broker_channel_and_next_incoming_id(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    assert (s.channel, s.remote, s.next_incoming_id) == (0, 3, 100)
    sent = broker.received()[0]
    assert sent.channel == 0 and sent.performative.next_outgoing_id == 0
    assert peer.free_channel() == 1, "the session's channel is reserved"
    assert session_of(peer, 0) is s


def test_transfer_ids_count_frames_and_delivery_ids_count_deliveries(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = attached(s, broker, spec.Role.SENDER)
    frames = snd.transfer_frames(b"x" * 1500)
    assert len(frames) > 1 and all(f.performative.delivery_id == 0 for f in frames[:1])
    assert all(len(f.encode()) <= 512 for f in frames), "split by the negotiated max-frame-size"
    assert [bool(f.performative.more) for f in frames] == [True] * (len(frames) - 1) + [False]
    assert s.next_outgoing_id == len(frames) and s.next_delivery_id == 1
    assert snd.send("small") == 1
    assert s.next_outgoing_id == len(frames) + 1
    assert snd.delivery_count == 2


def test_next_outgoing_id_wraps(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker, next_outgoing_id=SEQ - 2)
    snd = attached(s, broker, spec.Role.SENDER)
    frames = snd.transfer_frames(b"y" * 1200)
    assert s.next_outgoing_id == (SEQ - 2 + len(frames)) % SEQ
    assert s.flow_frame().performative.next_outgoing_id == s.next_outgoing_id
    assert s.remote_incoming_window == 10 - len(frames), "the broker's begin allowed 10 transfer frames"


def test_received_transfer_frames_advance_next_incoming_id_whoever_reads(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    rcv = attached(s, broker, spec.Role.RECEIVER, handle=4)
    payload = Message(body=b"z" * 1500).encode()
    frames = transfer_frames(3, spec.Transfer(handle=4, delivery_id=0, delivery_tag=b"a", message_format=0),
                             payload, 512)
    broker.send(*frames)
    peer.observe(0.3)                     # read by the raw peer, not through the layer
    assert s.next_incoming_id == 100 + len(frames)
    assert [d.payload for d in rcv.deliveries()] == [payload]
    assert rcv.received[0].frames == len(frames)
    assert s.flow_frame().performative.next_incoming_id == 100 + len(frames)


def test_session_flow_before_the_broker_begin_has_no_next_incoming_id(pair: Any) -> None:
    peer, _ = pair
    s = begin(peer, 0, wait=False)
    assert s.flow_frame().performative.next_incoming_id is None


def test_end_waits_for_the_broker_end(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    broker.send(AMQPFrame(3, spec.End()))
    got = s.end(spec.Error(condition=spec.AmqpError.INTERNAL_ERROR))
    assert got.channel == 3 and s.remote_end is not None
    ours = [f for f in broker.received() if getattr(f, "performative", None) is not None][-1]
    assert str(ours.performative.error.condition) == "amqp:internal-error"


# ---------------------------------------------------------------------------------------- links
def test_sender_credit_follows_the_formula(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = attached(s, broker, spec.Role.SENDER)
    broker.send(AMQPFrame(3, spec.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=100,
                                       outgoing_window=10, handle=9, delivery_count=0, link_credit=5)))
    assert snd.wait_credit(1.0) == 5
    for i in range(3):
        snd.send(f"m{i}")
    assert (snd.delivery_count, snd.link_credit) == (3, 2)
    # a flow written before our transfers arrived: delivery-count(rcv) 0 + link-credit 5 - delivery-count(snd) 3
    broker.send(AMQPFrame(3, spec.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=100,
                                       outgoing_window=10, handle=9, delivery_count=0, link_credit=5)))
    peer.observe(0.2)
    assert snd.link_credit == 2, "credit is set by the formula, not added"


def test_sender_credit_across_the_delivery_count_wrap(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = s.sender("q", name="w", initial_delivery_count=SEQ - 1, wait=False)
    broker.send(AMQPFrame(3, spec.Attach(name="w", handle=1, role=spec.Role.RECEIVER)),
                AMQPFrame(3, spec.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=100,
                                       outgoing_window=10, handle=1, delivery_count=None, link_credit=3)))
    assert snd.wait_credit(1.0) == 3, "no delivery-count from the receiver: our initial one"
    snd.send("a")
    snd.send("b")
    assert snd.delivery_count == 1 and snd.link_credit == 1
    assert broker.received()[1].performative.initial_delivery_count == SEQ - 1


def test_receiver_delivery_count_and_credit_after_transfers_and_flow(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    rcv = attached(s, broker, spec.Role.RECEIVER, handle=4, init=SEQ - 1)
    assert rcv.delivery_count == SEQ - 1
    rcv.grant(3)
    flow = broker.received()[-1].performative
    assert (flow.delivery_count, flow.link_credit, flow.handle) == (SEQ - 1, 3, rcv.handle)
    for i in range(2):
        broker.send(AMQPFrame(3, spec.Transfer(handle=4, delivery_id=i, delivery_tag=b"%d" % i, message_format=0),
                              Message(body=f"m{i}").encode()))
    assert len(rcv.receive(2, 1.0)) == 2
    assert rcv.delivery_count == 1 and rcv.link_credit == 1
    rcv.grant(5)
    assert broker.received()[-1].performative.delivery_count == 1


def test_receiver_drain_adopts_the_sender_delivery_count(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    rcv = attached(s, broker, spec.Role.RECEIVER, handle=4)
    rcv.grant(10, drain=True)
    assert broker.received()[-1].performative.drain is True
    broker.send(AMQPFrame(3, spec.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=100,
                                       outgoing_window=10, handle=4, delivery_count=10, link_credit=0, drain=True)))
    peer.observe(0.2)
    assert rcv.delivery_count == 10 and rcv.link_credit == 0 and rcv.drain


def test_credit_granted_before_the_broker_attach_counts_from_its_initial_delivery_count(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    rcv = s.receiver("q", name="early", wait=False)
    rcv.grant(4)
    broker.send(AMQPFrame(3, spec.Attach(name="early", handle=2, role=spec.Role.SENDER, initial_delivery_count=50)))
    rcv.await_attach(1.0)
    assert rcv.delivery_count == 50 and rcv.link_credit == 4


def test_overrides_win_over_tracked_values(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = attached(s, broker, spec.Role.SENDER)
    assert s.flow_frame(next_incoming_id=7, incoming_window=0).performative.incoming_window == 0
    assert s.begin_frame(handle_max=1).performative.handle_max == 1
    assert snd.attach_frame(role=spec.Role.RECEIVER).performative.role is spec.Role.RECEIVER
    t = snd.transfer_frames("x", delivery_id=42, settled=True, message_format=9)[0].performative
    assert (t.delivery_id, t.message_format, t.settled) == (42, 9, True)
    assert snd.detach_frame(closed=False, handle=77).performative.handle == 77
    rcv = attached(s, broker, spec.Role.RECEIVER, handle=4)
    assert rcv.grant_frame(1, link_credit=99).performative.link_credit == 99
    assert rcv.disposition_frame(1, 3, state=spec.Released()).performative.last == 3
    assert isinstance(rcv.disposition_frame(1).performative.state, spec.Accepted)


def test_payload_is_sent_as_given(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = attached(s, broker, spec.Role.SENDER)
    raw = Payload(b"\x00Sw\xa1\x01x")
    assert bytes(snd.transfer_frames(raw)[0].payload) == bytes(raw)


def test_dispositions_give_the_sender_its_outcomes(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = attached(s, broker, spec.Role.SENDER)
    ids = [snd.send(f"m{i}") for i in range(3)]
    broker.send(AMQPFrame(3, spec.Disposition(role=spec.Role.RECEIVER, first=ids[0], last=ids[2], settled=True,
                                              state=spec.Accepted())))
    got = snd.wait_outcomes(1.0)
    assert sorted(got) == ids and all(isinstance(v, spec.Accepted) for v in got.values())


def test_delivery_text() -> None:
    t = spec.Transfer(handle=0)
    assert Delivery(t, Message(body="hi").encode(), 1).text() == "hi"
    assert Delivery(t, Message(body=b"raw").encode(), 1).text() == "raw"
    assert Delivery(t, b"\xff", 1).text().startswith("<undecodable")


# ---------------------------------------------------------------------------------------- publish / fetch
class _Ctx:
    """The two things publish and fetch need of a case context: connections and names."""

    def __init__(self, peers: list[Peer]) -> None:
        import random
        self.peers = peers
        self.rng = random.Random(1)

    def connect(self, **_: Any) -> Peer:
        return self.peers.pop(0)

    def name(self, suffix: str = "") -> str:
        return f"t-{suffix}"


def test_publish_raises_when_a_message_is_not_accepted(pair: Any) -> None:
    peer, broker = pair
    broker.send(AMQPFrame(0, spec.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=10, outgoing_window=10)))
    broker.send(AMQPFrame(0, spec.Attach(name="t-pub-" + f"{_Ctx([]).rng.getrandbits(32):08x}", handle=0,
                                         role=spec.Role.RECEIVER, target=spec.Target(address="q"))),
                AMQPFrame(0, spec.Flow(next_incoming_id=0, incoming_window=10, next_outgoing_id=0, outgoing_window=10,
                                       handle=0, delivery_count=0, link_credit=10)),
                AMQPFrame(0, spec.Disposition(role=spec.Role.RECEIVER, first=0, last=1, settled=True,
                                              state=spec.Rejected())))
    with pytest.raises(session10.SetupError, match="not accepted"):
        publish(_Ctx([peer]), "q", "a", "b", timeout=1.0)


def test_fetch_accepts_what_it_got(pair: Any) -> None:
    peer, broker = pair
    name = "t-fetch-" + f"{_Ctx([]).rng.getrandbits(32):08x}"
    broker.send(AMQPFrame(0, spec.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=10, outgoing_window=10)),
                AMQPFrame(0, spec.Attach(name=name, handle=0, role=spec.Role.SENDER, source=spec.Source(address="q"),
                                         initial_delivery_count=0)))
    for i in range(2):
        broker.send(AMQPFrame(0, spec.Transfer(handle=0, delivery_id=i, delivery_tag=b"%d" % i, message_format=0),
                              Message(body=f"m{i}").encode()))
    got = fetch(_Ctx([peer]), "q", count=5, until="m1", timeout=1.0)
    assert [d.text() for d in got] == ["m0", "m1"]
    sent = [f.performative for f in broker.received() if getattr(f, "performative", None) is not None]
    flow = next(p for p in sent if isinstance(p, spec.Flow))
    assert flow.link_credit == 5
    disposition = next(p for p in sent if isinstance(p, spec.Disposition))
    assert (disposition.first, disposition.last, disposition.settled) == (0, 1, True)


def test_links_are_found_by_their_own_handles(pair: Any) -> None:
    peer, broker = pair
    s = begun(peer, broker)
    snd = attached(s, broker, spec.Role.SENDER, handle=9)
    rcv = attached(s, broker, spec.Role.RECEIVER, handle=4)
    assert isinstance(snd, Sender) and isinstance(rcv, Receiver)
    assert s.link_by_remote(9) is snd and s.link_by_remote(4) is rcv
    assert (snd.handle, rcv.handle) == (0, 1)
