"""The AMQP 0-9-1 stateful model, driven with hand-made methods (no broker).

Each test plays a short exchange a broker could send and checks the verdict: the violations
(with clauses) the model must report and the legitimate behaviours it must accept.
"""
from __future__ import annotations

from amqpspec.fuzz.model091 import Model091
from amqpspec.wire.amqp091 import spec

NOW = 100.0


def _open(m: Model091, ch: int = 1) -> None:
    m.sent_channel_open(ch, NOW)
    m.on_method(ch, "channel.open-ok", spec.ChannelOpenOk(), NOW)


def _queue(m: Model091, ch: int = 1, name: str = "q1") -> None:
    m.sent_queue_declare(ch, name, NOW)
    m.on_method(ch, "queue.declare-ok", spec.QueueDeclareOk(queue=name), NOW)


def _consume(m: Model091, ch: int = 1, tag: str = "c1", queue: str = "q1", no_ack: bool = False) -> None:
    m.sent_consume(ch, tag, queue, no_ack, NOW)
    m.on_method(ch, "basic.consume-ok", spec.BasicConsumeOk(consumer_tag=tag), NOW)


def _publish(m: Model091, mid: str, ch: int = 1, queue: str = "q1", body: bytes = b"body") -> None:
    m.sent_publish(ch, mid, queue, body, {"message_id": mid})


def _deliver(m: Model091, tag: int, mid: str, ch: int = 1, ctag: str = "c1", body: bytes = b"body") -> None:
    m.on_content(ch, "basic.deliver", spec.BasicDeliver(consumer_tag=ctag, delivery_tag=tag, routing_key="q1"),
                 spec.BasicProperties(message_id=mid), body, NOW)


def _clauses(m: Model091) -> list[tuple[str, ...]]:
    return [v.clauses for v in m.violations]


def test_ordinary_exchange_has_no_violation() -> None:
    m = Model091()
    _open(m)
    _queue(m)
    _consume(m)
    _publish(m, "m1")
    _deliver(m, 1, "m1")
    assert m.sent_ack(1, 1, False, NOW)
    assert m.violations == [] and not m.busy()


def test_ack_of_unknown_tag_requires_406_and_another_code_is_wrong() -> None:
    m = Model091()
    _open(m)
    assert not m.sent_ack(1, 99, False, NOW)
    m.on_method(1, "channel.close", spec.ChannelClose(reply_code=406, reply_text="PRECONDITION_FAILED"), NOW)
    assert m.violations == []
    m2 = Model091()
    _open(m2)
    m2.sent_ack(1, 99, False, NOW)
    m2.on_method(1, "channel.close", spec.ChannelClose(reply_code=541, reply_text="INTERNAL_ERROR"), NOW)
    assert [(v.kind, v.code, v.clauses) for v in m2.violations] == \
        [("wrong-code", 541, ("amqp091:basic.ack.multiple/exists",))]


def test_missing_channel_exception_is_reported_after_the_deadline() -> None:
    m = Model091()
    _open(m)
    m.sent_ack(1, 99, False, NOW)
    found = m.overdue(NOW + 10)
    assert [v.clauses for v in found] == [("amqp091:basic.ack.multiple/exists",)]


def test_reply_after_the_brokers_own_channel_close_violates_channel_close_stability() -> None:
    m = Model091()
    _open(m)
    m.sent_ack(1, 99, False, NOW)
    m.sent_sync_probe(1, NOW)
    m.on_method(1, "channel.close", spec.ChannelClose(reply_code=406), NOW)
    m.on_method(1, "exchange.declare-ok", spec.ExchangeDeclareOk(), NOW)
    assert _clauses(m) == [("amqp091:channel.close/stability",)]


def test_delivery_in_flight_after_the_brokers_close_is_only_an_anomaly() -> None:
    m = Model091()
    _open(m)
    _queue(m)
    _consume(m)
    _publish(m, "m1")
    m.on_method(1, "channel.close", spec.ChannelClose(reply_code=406), NOW)
    _deliver(m, 1, "m1")
    assert m.violations == [] and any("after the broker's channel.close" in a for a in m.anomalies)


def test_crossed_closes_each_answered_with_close_ok_is_no_violation() -> None:
    m = Model091()
    _open(m)
    m.sent_channel_close(1, NOW)
    m.on_method(1, "channel.close", spec.ChannelClose(reply_code=406), NOW)
    m.on_method(1, "channel.close-ok", spec.ChannelCloseOk(), NOW)   # answers ours: required
    assert m.violations == []
    m.on_method(1, "basic.qos-ok", spec.BasicQosOk(), NOW)
    assert _clauses(m) == [("amqp091:2.3.7/1", "amqp091:2.3.7/2")]


def test_frame_after_the_close_handshake_violates_2_3_7() -> None:
    m = Model091()
    _open(m)
    m.sent_channel_close(1, NOW)
    m.on_method(1, "channel.close-ok", spec.ChannelCloseOk(), NOW)
    m.on_method(1, "basic.qos-ok", spec.BasicQosOk(), NOW)
    assert _clauses(m) == [("amqp091:2.3.7/1", "amqp091:2.3.7/2")]


def test_unknown_message_zero_tag_and_reused_tag() -> None:
    m = Model091()
    _open(m)
    _queue(m)
    _consume(m)
    _deliver(m, 1, "never-published")
    assert _clauses(m) == [("amqp091:3.1.1/1",)]
    _publish(m, "m1")
    _publish(m, "m2")
    _deliver(m, 0, "m1")
    assert _clauses(m)[-1] == ("amqp091:domain.delivery-tag/non-zero",)
    _deliver(m, 5, "m2")
    _publish(m, "m3")
    _deliver(m, 5, "m3")
    assert _clauses(m)[-1] == ("amqp091:basic.ack.multiple/exists",)


def test_changed_body_violates_3_1_1() -> None:
    m = Model091()
    _open(m)
    _queue(m)
    _consume(m)
    _publish(m, "m1", body=b"abc")
    _deliver(m, 1, "m1", body=b"abd")
    assert _clauses(m) == [("amqp091:3.1.1/1",)]


def test_prefetch_window_is_per_channel_after_qos_ok() -> None:
    m = Model091()
    _open(m)
    _queue(m)
    _consume(m)
    m.sent_qos(1, 1, NOW)
    m.on_method(1, "basic.qos-ok", spec.BasicQosOk(), NOW)
    for i in (1, 2):
        _publish(m, f"m{i}")
    _deliver(m, 1, "m1")
    assert m.violations == []
    _deliver(m, 2, "m2")
    assert _clauses(m) == [("amqp091:basic.qos.prefetch-count/01",)]


def test_socket_closed_without_handshake_violates_2_3_7_1() -> None:
    m = Model091()
    _open(m)
    m.on_socket_closed("rst")
    assert [(v.kind, v.clauses) for v in m.violations] == [("reset-without-close", ("amqp091:2.3.7/1",))]
