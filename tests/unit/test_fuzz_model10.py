"""The AMQP 1.0 stateful model, driven with hand-made frames (no broker).

Each test plays a short exchange a broker could send and checks the model's verdict: the
violations it must report (with their clauses) and the legitimate behaviours it must accept.
"""
from __future__ import annotations

from amqpspec.fuzz.model10 import Model10, Sent, bare_of, message_id
from amqpspec.wire.amqp10 import Message, spec

NOW = 100.0


def _msg(mid: str, body: bytes = b"hello", props: dict | None = None) -> bytes:
    return Message(properties=spec.Properties(message_id=mid), application_properties=props, body=body).encode()


def _session(m: Model10, ch: int = 0, remote: int = 5) -> None:
    m.sent_begin(ch, NOW)
    m.on_frame(remote, "begin", spec.Begin(remote_channel=ch, next_outgoing_id=0, incoming_window=100,
                                           outgoing_window=100), b"", NOW)


def _receiver(m: Model10, ch: int = 0, remote: int = 5, handle: int = 1, rh: int = 7, node: str = "n0") -> None:
    m.sent_attach(ch, handle, f"r{handle}", "receiver", node, NOW)
    m.on_frame(remote, "attach", spec.Attach(name=f"r{handle}", handle=rh, role=spec.Role.SENDER,
                                             source=spec.Source(address=node), target=spec.Target(),
                                             initial_delivery_count=0), b"", NOW)


def _sender(m: Model10, ch: int = 0, remote: int = 5, handle: int = 0, rh: int = 3, node: str = "n0") -> None:
    m.sent_attach(ch, handle, f"s{handle}", "sender", node, NOW)
    m.on_frame(remote, "attach", spec.Attach(name=f"s{handle}", handle=rh, role=spec.Role.RECEIVER,
                                             source=spec.Source(), target=spec.Target(address=node)), b"", NOW)


def _transfer(m: Model10, did: int, payload: bytes, *, remote: int = 5, rh: int = 7, tag: bytes | None = None,
              more: bool = False, settled: bool = False) -> None:
    m.on_frame(remote, "transfer", spec.Transfer(handle=rh, delivery_id=did, delivery_tag=tag or b"t%d" % did,
                                                 message_format=0, settled=settled, more=more), payload, NOW)


def _publish(m: Model10, mid: str, node: str = "n0", **kw: object) -> bytes:
    """A message as we would have sent it to ``node`` (recorded in the model)."""
    data = _msg(mid, **kw)  # type: ignore[arg-type]
    m.sent[mid] = Sent(mid, node, bare_of(data))
    return data


def _clauses(m: Model10) -> list[tuple[str, ...]]:
    return [v.clauses for v in m.violations]


def test_begin_attach_and_answers_settle_requests() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    assert not m.busy() and not m.violations
    assert m.links("receiver") == [(0, 1)]


def test_unanswered_attach_is_a_hang_after_the_deadline() -> None:
    m = Model10()
    _session(m)
    m.sent_attach(0, 0, "x", "sender", "n0", NOW)
    assert m.overdue(NOW + 1) == []
    found = m.overdue(NOW + 10)
    assert [v.kind for v in found] == ["hang"] and found[0].state == "after-attach"


def test_delivery_within_credit_is_fine_and_beyond_it_violates_2_6_7_9() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 1, False, NOW)
    _transfer(m, 0, _publish(m, "a"))
    assert m.violations == []
    _transfer(m, 1, _publish(m, "b"))
    assert _clauses(m) == [("amqp10:2.6.7/9", "amqp10:2.6.7/3")]


def test_delivery_before_any_credit_violates() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    _transfer(m, 0, _publish(m, "a"))
    assert m.violations and m.violations[0].clauses[0] == "amqp10:2.6.7/9"


def test_lowered_credit_leaves_in_flight_transfers_allowed_until_the_broker_shows_the_new_limit() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 3, False, NOW)
    m.sent_flow(0, 1, 0, False, NOW)      # withdrawn while transfers may be in flight (2.6.7/10)
    _transfer(m, 0, _publish(m, "a"))
    assert m.violations == []
    # the broker's flow shows it took the new limit (delivery-count + link-credit = 0): no more grace
    m.on_frame(5, "flow", spec.Flow(next_incoming_id=0, incoming_window=100, next_outgoing_id=1, outgoing_window=100,
                                    handle=7, delivery_count=0, link_credit=0), b"", NOW)
    _transfer(m, 1, _publish(m, "b"))
    assert _clauses(m) == [("amqp10:2.6.7/9", "amqp10:2.6.7/3")]


def test_multi_frame_delivery_is_reassembled_and_compared_octet_for_octet() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 5, False, NOW)
    data = _publish(m, "a", body=b"x" * 100)
    _transfer(m, 0, data[:30], more=True)
    m.on_frame(5, "transfer", spec.Transfer(handle=7), data[30:], NOW)   # continuation: handle only
    assert m.violations == [] and m.deliveries == 1


def test_annotations_added_by_the_broker_are_allowed_but_a_reencoded_bare_message_is_not() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 5, False, NOW)
    data = _publish(m, "a", props={"k": 1})
    annotations = Message(header=spec.Header(durable=False),
                          message_annotations={"x-opt-a": 1}).encode()   # sections a broker may add (3.2)
    _transfer(m, 0, annotations + data)
    assert m.violations == []
    # the same message with its application-properties map re-encoded as map32 (what a broker that
    # decodes and re-encodes messages sends): the bare message changed (3.2/2)
    data2 = _publish(m, "b", props={"k": 1})
    i = data2.index(bytes.fromhex("005374c1"))
    size, count = data2[i + 4], data2[i + 5]
    body = data2[i + 6:i + 6 + size - 1]
    reencoded = data2[:i] + bytes.fromhex("005374d1") + (size + 3).to_bytes(4, "big") + count.to_bytes(4, "big") + \
        body + data2[i + 6 + size - 1:]
    assert message_id(reencoded) == "b"
    _transfer(m, 1, reencoded)
    assert _clauses(m) == [("amqp10:3.2/2", "amqp10:3.2.4/1")]


def test_a_message_we_never_sent_violates_3_2() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 5, False, NOW)
    _transfer(m, 0, _msg("not-ours"))
    assert _clauses(m) == [("amqp10:3.2/2", "amqp10:3.2.4/1")] and "never sent" in m.violations[0].message


def test_duplicate_unsettled_delivery_id_violates_2_6_12_and_settling_frees_it() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 5, False, NOW)
    _transfer(m, 0, _publish(m, "a"), tag=b"x")
    m.sent_disposition(0, 0, 0)
    _transfer(m, 0, _publish(m, "b"), tag=b"y")   # id 0 was settled: may be used again
    assert m.violations == []
    _transfer(m, 0, _publish(m, "c"), tag=b"z")
    assert _clauses(m) == [("amqp10:2.6.12/2",)]


def test_new_delivery_inside_an_incomplete_one_on_the_same_link_violates_2_6_14_3() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 5, False, NOW)
    data = _publish(m, "a")
    _transfer(m, 0, data[:10], more=True)
    _transfer(m, 1, _publish(m, "b"))
    assert ("amqp10:2.6.14/3",) in _clauses(m)


def test_frames_after_the_brokers_end_or_detach_or_close() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_detach(0, 1, True, NOW)
    m.on_frame(5, "detach", spec.Detach(handle=7, closed=True), b"", NOW)
    assert not m.busy() and m.violations == []
    m.on_frame(5, "flow", spec.Flow(next_incoming_id=0, incoming_window=1, next_outgoing_id=0, outgoing_window=1,
                                    handle=7, delivery_count=0, link_credit=0), b"", NOW)
    assert _clauses(m) == [("amqp10:2.6.4/1",)]
    m.sent_end(0, NOW)
    m.on_frame(5, "end", spec.End(), b"", NOW)
    m.on_frame(5, "flow", spec.Flow(next_incoming_id=0, incoming_window=1, next_outgoing_id=0, outgoing_window=1),
               b"", NOW)
    assert _clauses(m)[-1] == ("amqp10:2.5.5/4",)
    m.on_frame(0, "close", spec.Close(error=spec.Error(condition="amqp:internal-error")), b"", NOW)
    m.on_frame(0, "begin", spec.Begin(remote_channel=1, next_outgoing_id=0, incoming_window=1, outgoing_window=1),
               b"", NOW)
    assert _clauses(m)[-1] == ("amqp10:2.4.3/2",)


def test_a_session_begun_again_on_the_brokers_channel_is_not_after_end() -> None:
    m = Model10()
    _session(m, 0, 5)
    m.sent_end(0, NOW)
    m.on_frame(5, "end", spec.End(), b"", NOW)
    _session(m, 1, 5)   # the broker reuses its channel 5 for our new session
    _receiver(m, 1, 5)
    assert m.violations == []


def test_drain_must_use_up_the_credit_in_time() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.sent_flow(0, 1, 2, True, NOW)
    assert m.busy()
    found = m.overdue(NOW + 10)
    assert [v.clauses for v in found] == [("amqp10:2.6.7/11",)]
    # honoured: the broker advances delivery-count to the limit in a flow
    m2 = Model10()
    _session(m2)
    _receiver(m2)
    m2.sent_flow(0, 1, 2, True, NOW)
    m2.on_frame(5, "flow", spec.Flow(next_incoming_id=0, incoming_window=100, next_outgoing_id=0, outgoing_window=100,
                                     handle=7, delivery_count=2, link_credit=0, drain=True), b"", NOW)
    assert not m2.busy() and m2.violations == []


def test_processing_errors_are_violations_and_policy_errors_anomalies() -> None:
    m = Model10()
    _session(m)
    _receiver(m)
    m.on_frame(5, "detach", spec.Detach(handle=7, closed=True,
                                        error=spec.Error(condition="amqp:resource-limit-exceeded")), b"", NOW)
    assert m.violations == [] and m.anomalies
    m.on_frame(5, "end", spec.End(error=spec.Error(condition="amqp:internal-error", description="crash")), b"", NOW)
    assert [(v.kind, v.condition, v.clauses) for v in m.violations] == \
        [("wrong-code", "amqp:internal-error", ("amqp10:0.2/1",))]


def test_flow_to_our_sender_without_delivery_count_violates_2_7_4_5_and_credit_is_computed() -> None:
    m = Model10()
    _session(m)
    _sender(m)
    m.on_frame(5, "flow", spec.Flow(next_incoming_id=0, incoming_window=100, next_outgoing_id=0, outgoing_window=100,
                                    handle=3, delivery_count=0, link_credit=4), b"", NOW)
    assert m.violations == [] and m.sessions[0].links[0].credit == 4 and m.room_to_send(0, 0)
    m.on_frame(5, "flow", spec.Flow(next_incoming_id=0, incoming_window=100, next_outgoing_id=0, outgoing_window=100,
                                    handle=3, link_credit=4), b"", NOW)
    assert _clauses(m) == [("amqp10:2.7.4/5",)]


def test_socket_closed_without_close_frame_violates_2_4_3_1_but_after_close_exchange_does_not() -> None:
    m = Model10()
    m.on_socket_closed("fin")
    assert _clauses(m) == [("amqp10:2.4.3/1",)]
    m2 = Model10()
    m2.sent_close(NOW)
    m2.on_frame(0, "close", spec.Close(), b"", NOW)
    m2.on_socket_closed("fin")
    assert m2.violations == [] and not m2.busy()
