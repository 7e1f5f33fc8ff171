"""`amqpspec replay` of a crafted finding against RabbitMQ leaves the broker's own queues alone
(issue 11 item 3): a queue ``orders...`` holding a message before the replay -- which the finding
declares -- still holds it after; what the replay created is gone."""
from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from pathlib import Path

from amqpspec.peer.amqp091 import Peer
from amqpspec.target import Target
from amqpspec.transcript import Transcript
from amqpspec.wire.amqp091 import BodyFrame, HeaderFrame, MethodFrame, spec
from amqpspec.fuzz.findings import Signature, make_finding
from tests.unit.test_replay_cleanup import _finding


def _peer(url: str) -> tuple[Peer, int]:
    peer = Peer.connect(Target.parse(url), Transcript(), time.monotonic() + 10)
    peer.handshake()
    return peer, peer.open_channel()


def _message_count(url: str, queue: str) -> int | None:
    """The queue's message count (passive declare), None when it does not exist."""
    peer, ch = _peer(url)
    try:
        reply = peer.call(ch, spec.QueueDeclare(queue=queue, passive=True), ("queue.declare-ok", "channel.close"))
        return reply.method.message_count if reply.method.NAME == "queue.declare-ok" else None
    finally:
        peer.close()


def _exists(url: str, exchange: str) -> bool:
    peer, ch = _peer(url)
    try:
        reply = peer.call(ch, spec.ExchangeDeclare(exchange=exchange, passive=True),
                          ("exchange.declare-ok", "channel.close"))
        return reply.method.NAME == "exchange.declare-ok"
    finally:
        peer.close()


def test_replay_keeps_a_queue_it_did_not_create(rabbitmq, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    orders, new, own, exchange = f"orders.{tag}", f"created.{tag}", f"amqpspec-replay-{tag}", f"created-x.{tag}"
    peer, ch = _peer(rabbitmq.url)
    try:
        peer.call(ch, spec.QueueDeclare(queue=orders))
        peer.send(MethodFrame(ch, spec.BasicPublish(exchange="", routing_key=orders)),
                  HeaderFrame(ch, 60, 5, spec.BasicProperties()), BodyFrame(ch, b"order"))
        peer.call(ch, spec.QueueDeclare(queue=orders, passive=True))  # the publish has been handled
    finally:
        peer.close()
    try:
        tf = _finding([orders, own, new], [exchange])
        record = make_finding(Signature("0-9-1", "crafted", "wrong-code", None, None, "channel-open"),
                              broker={}, target_url=rabbitmq.url, seed=0, run_id="crafted", clauses=[],
                              input_hex="", input_summary="crafted", transcript=tf.entries)
        path = tmp_path / "finding.json"
        path.write_text(json.dumps(record))
        proc = subprocess.run([sys.executable, "-m", "amqpspec.capture.cli", "replay", str(path), rabbitmq.url],
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
        assert _message_count(rabbitmq.url, orders) == 1, proc.stdout
        assert _message_count(rabbitmq.url, own) is None
        assert _message_count(rabbitmq.url, new) is None
        assert not _exists(rabbitmq.url, exchange)
    finally:
        peer, ch = _peer(rabbitmq.url)
        for q in (orders, own, new):
            peer.call(ch, spec.QueueDelete(queue=q))
        peer.call(ch, spec.ExchangeDelete(exchange=exchange))
        peer.close()
