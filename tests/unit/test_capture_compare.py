"""Recorded and live frames compared by meaning: what is ignored, what is paired, what differs."""
from __future__ import annotations

import pytest

from amqpspec.capture.codec import PROTOCOL_091, PROTOCOL_10, Unit, decode_one
from amqpspec.capture.compare import (
    IGNORED_091,
    IGNORED_10,
    SOFT_091,
    Comparator,
    check_ignore,
    explain,
)
from amqpspec.capture.replay import plan
from amqpspec.capture.settle import Ledger
from amqpspec.errors import UsageError
from amqpspec.wire.amqp091 import HeaderFrame, MethodFrame, spec
from amqpspec.wire.amqp10 import AMQPFrame
from amqpspec.wire.amqp10 import spec as spec10
from tests.unit.test_capture_support import Builder, session_091


def _u(protocol: str, frame, client: bool = False) -> Unit:
    data = frame.encode()
    return Unit(data, decode_one(protocol, data, client), "")


def _diff(protocol: str, rec, live, cmp: Comparator | None = None) -> list[str]:
    cmp = cmp or Comparator(protocol)
    return cmp.differences(1, _u(protocol, rec), _u(protocol, live))


def test_broker_identity_and_limits_are_ignored_behaviour_is_not() -> None:
    rabbit = MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "RabbitMQ", "version": "3.10.8"}, b"PLAIN AMQPLAIN", b"en_US"))
    other = MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "garagemq"}, b"PLAIN", b"en_US"))
    assert _diff(PROTOCOL_091, rabbit, other) == []
    newer = MethodFrame(0, spec.ConnectionStart(1, 0, {"product": "RabbitMQ"}, b"PLAIN", b"en_US"))
    assert _diff(PROTOCOL_091, rabbit, newer) == ["version-major: recorded 0, live 1", "version-minor: recorded 9, live 0"]
    assert _diff(PROTOCOL_091, MethodFrame(0, spec.ConnectionTune(2047, 131072, 60)),
                 MethodFrame(0, spec.ConnectionTune(4096, 65536, 10))) == []
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.BasicGetOk(1, False, "", "q", 0)),
                 MethodFrame(1, spec.BasicGetOk(2, False, "", "q", 0))) == ["delivery-tag: recorded 1, live 2"]
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.ChannelOpenOk()), MethodFrame(2, spec.ChannelOpenOk()))
    assert _diff(PROTOCOL_10, AMQPFrame(0, spec10.Open(container_id="rabbit@a", max_frame_size=65536)),
                 AMQPFrame(0, spec10.Open(container_id="x", max_frame_size=512, idle_time_out=1))) == []
    begin = dict(next_outgoing_id=0, incoming_window=5, outgoing_window=5)
    assert _diff(PROTOCOL_10, AMQPFrame(0, spec10.Begin(remote_channel=0, **begin)),
                 AMQPFrame(0, spec10.Begin(remote_channel=1, **begin)))
    # session windows are configuration, next-outgoing-id is behaviour
    assert _diff(PROTOCOL_10, AMQPFrame(0, spec10.Begin(remote_channel=0, **begin)),
                 AMQPFrame(0, spec10.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=9, outgoing_window=9))) == []


def test_uint_is_not_ulong_in_10() -> None:
    from amqpspec.wire.amqp10 import ULong

    assert _diff(PROTOCOL_10, AMQPFrame(0, spec10.Flow(incoming_window=1, next_outgoing_id=0, outgoing_window=1, handle=0)),
                 AMQPFrame(0, spec10.Flow(incoming_window=1, next_outgoing_id=0, outgoing_window=1, handle=ULong(0))))


def test_flows_have_a_lane_per_link_and_their_counters_are_notes() -> None:
    from amqpspec.capture.compare import CONNECTION_LANE, lane_label, lane_of

    def flow(channel: int, handle: int | None, credit: int | None, drain: bool = False) -> AMQPFrame:
        return AMQPFrame(channel, spec10.Flow(incoming_window=1, next_outgoing_id=0, outgoing_window=1, handle=handle,
                                              delivery_count=0 if handle is not None else None, link_credit=credit,
                                              drain=drain))

    lanes = {lane_of(PROTOCOL_10, flow(c, h, 1)) for c in (0, 1) for h in (None, 0, 1)}
    assert len(lanes) == 6 and all(lane < CONNECTION_LANE for lane in lanes)
    assert lane_label(lane_of(PROTOCOL_10, flow(1, 0, 1))) == "the flows of channel 1 link handle 0"
    assert lane_label(lane_of(PROTOCOL_10, flow(2, None, None))) == "the flows of channel 2 (session)"
    assert lane_of(PROTOCOL_10, AMQPFrame(3, spec10.End())) == 3
    cmp = Comparator(PROTOCOL_10)
    assert _diff(PROTOCOL_10, flow(0, 1, 19), flow(0, 1, 18), cmp) == [] and len(cmp.soft) == 1
    assert _diff(PROTOCOL_10, flow(0, 1, 19), flow(0, 1, 18), Comparator(PROTOCOL_10, strict=True))
    assert _diff(PROTOCOL_10, flow(0, 1, 19), flow(0, 1, 19, drain=True), cmp)  # drain is behaviour


def test_texts_for_people_and_racy_counts_are_notes_unless_strict() -> None:
    rec = MethodFrame(0, spec.ConnectionClose(505, "UNEXPECTED_FRAME - pid <0.1.0>", 0, 0))
    live = MethodFrame(0, spec.ConnectionClose(505, "UNEXPECTED_FRAME - pid <0.2.0>", 0, 0))
    cmp = Comparator(PROTOCOL_091)
    assert _diff(PROTOCOL_091, rec, live, cmp) == [] and len(cmp.soft) == 1
    assert _diff(PROTOCOL_091, rec, live, Comparator(PROTOCOL_091, strict=True))
    assert _diff(PROTOCOL_091, rec, MethodFrame(0, spec.ConnectionClose(501, "x", 0, 0)), cmp)  # the code counts
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.QueueDeclareOk("q", 5, 0)), MethodFrame(1, spec.QueueDeclareOk("q", 3, 0)),
                 cmp) == []
    err = spec10.Error(condition=spec10.Symbol("amqp:internal-error"), description="stack <0.1.0>")
    err2 = spec10.Error(condition=spec10.Symbol("amqp:internal-error"), description="stack <0.9.0>")
    cmp10 = Comparator(PROTOCOL_10)
    assert _diff(PROTOCOL_10, AMQPFrame(0, spec10.Close(error=err)), AMQPFrame(0, spec10.Close(error=err2)), cmp10) == []
    assert cmp10.soft and "description" in cmp10.soft[0]


def test_generated_names_are_paired_and_translated_both_ways() -> None:
    cmp = Comparator(PROTOCOL_091)
    cmp.sent(1, MethodFrame(1, spec.QueueDeclare(queue="", exclusive=True)))
    rec, live = "amq.gen-RECORDED", "amq.gen-live-name-of-another-length"
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.QueueDeclareOk(rec, 0, 0)), MethodFrame(1, spec.QueueDeclareOk(live, 0, 0)),
                 cmp) == []
    assert cmp.names == {rec: live}
    bind = MethodFrame(1, spec.QueueBind(queue=rec, exchange="amq.direct", routing_key=rec)).encode()
    out = decode_one(PROTOCOL_091, cmp.rewrite(PROTOCOL_091, bind), True)
    assert out.method.queue == live and out.method.routing_key == live
    header = HeaderFrame(1, 60, 0, spec.BasicProperties(reply_to=rec)).encode()
    assert decode_one(PROTOCOL_091, cmp.rewrite(PROTOCOL_091, header), True).properties.reply_to == live
    # later answers naming the recorded queue match the live one
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.BasicGetOk(1, False, "", rec, 0)),
                 MethodFrame(1, spec.BasicGetOk(1, False, "", live, 0)), cmp) == []
    # a name the client chose itself is compared, not paired
    cmp.sent(1, MethodFrame(1, spec.QueueDeclare(queue="mine")))
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.QueueDeclareOk("mine", 0, 0)),
                 MethodFrame(1, spec.QueueDeclareOk("other", 0, 0)), cmp)


def test_dynamic_10_nodes_are_paired() -> None:
    cmp = Comparator(PROTOCOL_10)
    cmp.sent(1, AMQPFrame(0, spec10.Attach(name="r", handle=0, role=True, source=spec10.Source(dynamic=True),
                                          target=spec10.Target())))
    rec = AMQPFrame(0, spec10.Attach(name="r", handle=0, role=False, source=spec10.Source(address="tmp-AAAA", dynamic=True),
                                     target=spec10.Target()))
    live = AMQPFrame(0, spec10.Attach(name="r", handle=0, role=False, source=spec10.Source(address="tmp-BBBB", dynamic=True),
                                      target=spec10.Target()))
    assert _diff(PROTOCOL_10, rec, live, cmp) == [] and cmp.names == {"tmp-AAAA": "tmp-BBBB"}
    transfer = AMQPFrame(0, spec10.Transfer(handle=0, delivery_id=0, delivery_tag=b"t", message_format=0),
                         payload=b"reply-to tmp-AAAA").encode()
    assert b"tmp-BBBB" in cmp.rewrite(PROTOCOL_10, transfer)


def test_batched_settlements_are_the_same_set() -> None:
    def disposition(first: int, last: int | None = None) -> AMQPFrame:
        return AMQPFrame(0, spec10.Disposition(role=True, first=first, last=last, settled=True, state=spec10.Accepted()))

    one, many = Ledger(PROTOCOL_10), Ledger(PROTOCOL_10)
    assert one.expand(0, decode_one(PROTOCOL_10, disposition(0, 9).encode())).ids == tuple(range(10))
    for i in range(10):
        many.expand(0, decode_one(PROTOCOL_10, disposition(i).encode()))
    assert one.seen == many.seen
    confirms, singles = Ledger(PROTOCOL_091), Ledger(PROTOCOL_091)
    confirms.expand(1, MethodFrame(1, spec.BasicAck(2, False)))
    assert confirms.expand(1, MethodFrame(1, spec.BasicAck(5, True))).ids == (1, 3, 4, 5)
    for tag in range(1, 6):
        singles.expand(1, MethodFrame(1, spec.BasicAck(tag, False)))
    assert confirms.seen == singles.seen
    assert Ledger(PROTOCOL_091).expand(1, MethodFrame(1, spec.BasicAck(1 << 40, True))) is None  # bounded


def test_ignore_set_is_documented_and_extendable() -> None:
    text = "\n".join(explain())
    for method, fields in {**IGNORED_091, **SOFT_091}.items():
        for name in fields:
            assert f"{method}.{name}" in text
    for perf, fields in IGNORED_10.items():
        for name in fields:
            assert f"{perf}.{name}" in text
    assert check_ignore(PROTOCOL_091, ["queue.declare-ok.message-count", "content-header.timestamp"])
    assert check_ignore(PROTOCOL_10, ["attach.properties"])
    with pytest.raises(UsageError, match="no AMQP 0-9-1 frame"):
        check_ignore(PROTOCOL_091, ["queue.nonsense.x"])
    with pytest.raises(UsageError, match="has no field"):
        check_ignore(PROTOCOL_10, ["attach.colour"])
    cmp = Comparator(PROTOCOL_091, ignore={"basic.get-ok.delivery-tag"})
    assert _diff(PROTOCOL_091, MethodFrame(1, spec.BasicGetOk(1, False, "", "q", 0)),
                 MethodFrame(1, spec.BasicGetOk(2, False, "", "q", 0)), cmp) == []


def test_plan_orders_steps_and_expects_answers() -> None:
    tf = session_091(conns=2)
    steps, expected = plan(tf)
    assert [s.kind for s in steps[:3]] == ["connect", "send", "send"]
    assert sorted(expected) == [1, 2]
    exp = expected[1]
    assert exp.broker_close is not None and exp.broker_close[0] == "fin"
    assert [fr.unit.item.method.NAME for fr in exp.lanes[0]][:2] == ["connection.start", "connection.tune"]
    login = next(s for s in steps if s.redacted)
    assert not login.refused and exp.before(login.index) == 1


def test_plan_sees_a_refused_login() -> None:
    b = Builder(PROTOCOL_091)
    b.event(1, "connected to h:5672")
    from amqpspec.capture.codec import sasl_plain
    from amqpspec.wire.amqp091 import ProtocolHeader

    b.send(1, ProtocolHeader())
    b.recv(1, MethodFrame(0, spec.ConnectionStart(0, 9, {}, b"PLAIN", b"en_US")))
    b.send(1, MethodFrame(0, spec.ConnectionStartOk({}, "PLAIN", sasl_plain("guest", "wrong"), "en_US")))
    b.recv(1, MethodFrame(0, spec.ConnectionClose(403, "ACCESS_REFUSED", 0, 0)))
    steps, _ = plan(b.build())
    assert next(s for s in steps if s.redacted).refused


def test_truncated_sends_cannot_be_replayed() -> None:
    tf = session_091()
    send = next(e for e in tf.entries if e["dir"] == "send" and "basic.publish" in e["summary"])
    send["summary"] += " [only the first 64 of 900 octets kept]"
    with pytest.raises(UsageError, match="prefix"):
        plan(tf)


def test_stream_units_time() -> None:
    from amqpspec.capture.compare import units_of

    tf = session_091()
    units = units_of(PROTOCOL_091, 1, tf.entries, "recv")
    assert len(units) == sum(1 for e in tf.entries if e["dir"] == "recv")
    assert [t for t, _ in units] == [e["t"] for e in tf.entries if e["dir"] == "recv"]
