"""The AMQP 1.0 session/link layer against real brokers: RabbitMQ's 1.0 plugin and the Qpid Proton
example broker. A publish/fetch round trip, and a receiver given link-credit 2 on a queue of 5 gets
2 until it grants more."""
from __future__ import annotations

import random
import time
import uuid
from typing import Any

import pytest

from amqpspec import brokerops
from amqpspec.peer.amqp10 import Peer
from amqpspec.peer.session10 import begin, fetch, publish
from amqpspec.target import Target
from amqpspec.transcript import Transcript

pytestmark = pytest.mark.broker


class Ctx:
    """What publish and fetch need of a case context: handshaken connections, names, a seeded rng."""

    def __init__(self, url: str) -> None:
        self.target = Target.parse(url)
        self.rng = random.Random(7)
        self.peers: list[Peer] = []
        self.queues: list[str] = []

    def address(self) -> str:
        name = f"amqpspec-test-{uuid.uuid4().hex[:10]}"
        self.queues.append(name)
        return name

    def connect(self, **handshake: Any) -> Peer:
        peer = Peer.connect(self.target, Transcript(), time.monotonic() + 30)
        peer.handshake(**handshake)
        self.peers.append(peer)
        return peer

    def name(self, suffix: str = "") -> str:
        return f"amqpspec-test-{suffix}"

    def close(self) -> None:
        for peer in self.peers:
            peer.close()
        if brokerops.can_delete(self.target, "1.0"):   # RabbitMQ made a queue per address
            brokerops.delete(self.target, self.queues)


@pytest.fixture(params=["rabbitmq", "proton_broker"])
def ctx(request: pytest.FixtureRequest) -> Any:
    c = Ctx(request.getfixturevalue(request.param).url)
    yield c
    c.close()


def test_publish_then_fetch_round_trip(ctx: Ctx) -> None:
    addr = ctx.address()
    bodies = [f"m{i}-{uuid.uuid4().hex[:6]}" for i in range(3)]
    assert len(publish(ctx, addr, *bodies)) == 3
    got = fetch(ctx, addr, count=10, until=bodies[-1])
    assert [d.text() for d in got] == bodies


def test_receiver_credit_is_respected(ctx: Ctx) -> None:
    addr = ctx.address()
    publish(ctx, addr, *[f"c{i}" for i in range(5)])
    s = begin(ctx.connect())
    rcv = s.receiver(addr, name=f"rcv-{uuid.uuid4().hex[:8]}", credit=2)
    rcv.wait(5, timeout=1.5)
    assert len(rcv.deliveries()) == 2 and rcv.link_credit == 0
    rcv.grant(3)
    assert [d.text() for d in rcv.wait(5, timeout=3.0)] == [f"c{i}" for i in range(5)]
    assert rcv.delivery_count == (rcv.init + 5) % (1 << 32)
    rcv.accept(rcv.received[0], rcv.received[-1])
    assert s.next_incoming_id == (s.remote_next_outgoing_id + 5) % (1 << 32)
