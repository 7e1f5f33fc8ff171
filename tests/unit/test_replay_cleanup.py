"""A replay deletes only what it created (issue 11 item 3): the suite's own names, and other names
only when the broker said they did not exist before the replay, or made them up for it -- and
those with if-unused and if-empty. A crafted finding that declares ``orders`` leaves ``orders``."""
from __future__ import annotations

from amqpspec.capture import cleanup
from amqpspec.capture.cleanup import Declared
from amqpspec.capture.replay import ReplayOptions, replay
from amqpspec.target import Target
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader, spec
from tests.support import hostile
from tests.support import hostile_handshake as hh
from tests.unit.test_capture_support import PASSWORD, Builder, sasl_plain


def test_split_keeps_the_suites_names_apart_and_drops_amq_names() -> None:
    own, others = cleanup.split(Declared(["amqpspec-q", "orders", "amq.gen-x"], ["amqpspec-x", "amq.topic", "ex"]))
    assert own == Declared(["amqpspec-q"], ["amqpspec-x"])
    assert others == Declared(["orders"], ["ex"])


def test_created_is_only_what_was_absent_before_or_named_by_the_broker() -> None:
    others = Declared(["orders", "new", "unknown"], ["ex-old", "ex-new"])
    made = cleanup.created(others, {"new"}, {"ex-new"}, ["amq.gen-1", "amq.gen-1"])
    assert made == Declared(["new", "amq.gen-1"], ["ex-new"])


def test_created_is_nothing_when_existence_is_unknown() -> None:
    assert not cleanup.created(Declared(["orders"], ["ex"]), set(), set())


def _finding(queues: list[str], exchanges: list[str]) -> object:
    """A crafted finding: one connection declaring ``queues`` (an empty name asks the broker for
    one) and ``exchanges``, every declare answered declare-ok in the recording."""
    b = Builder("0-9-1")
    b.event(1, "connected to 127.0.0.1:5672")
    b.send(1, ProtocolHeader())
    b.recv(1, MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "FakeBroker"}, b"PLAIN", b"en_US")))
    b.send(1, MethodFrame(0, spec.ConnectionStartOk({"product": "test"}, "PLAIN", sasl_plain("guest", PASSWORD),
                                                    "en_US")))
    b.recv(1, MethodFrame(0, spec.ConnectionTune(2047, 131072, 0)))
    b.send(1, MethodFrame(0, spec.ConnectionTuneOk(2047, 131072, 0)))
    b.send(1, MethodFrame(0, spec.ConnectionOpen("/")))
    b.recv(1, MethodFrame(0, spec.ConnectionOpenOk()))
    b.send(1, MethodFrame(1, spec.ChannelOpen()))
    b.recv(1, MethodFrame(1, spec.ChannelOpenOk()))
    for q in queues:
        b.send(1, MethodFrame(1, spec.QueueDeclare(queue=q)))
        b.recv(1, MethodFrame(1, spec.QueueDeclareOk(q or "amq.gen-recorded", 0, 0)))
    for x in exchanges:
        b.send(1, MethodFrame(1, spec.ExchangeDeclare(exchange=x, type="fanout")))
        b.recv(1, MethodFrame(1, spec.ExchangeDeclareOk()))
    b.send(1, MethodFrame(0, spec.ConnectionClose(200, "bye", 0, 0)))
    b.recv(1, MethodFrame(0, spec.ConnectionCloseOk()))
    return b.build(source="finding crafted")


def test_replay_of_a_crafted_finding_deletes_only_what_it_created() -> None:
    log = hh.DeleteLog()
    broker = hh.deleting_broker(log, lambda method, name: "ok", existing=frozenset({"orders", "ex-old"}))
    tf = _finding(["orders", "amqpspec-own", "new", ""], ["ex-old", "ex-new", "amq.direct"])
    with hostile.HostileServer(broker) as server:
        report = replay(tf, Target.parse(server.url), ReplayOptions(answer_timeout=0.5, deadline=10.0))
    deletes = [c for c in log.calls if c[1].endswith(".delete")]
    deleted = {c[2] for c in deletes}
    assert "orders" not in deleted and "ex-old" not in deleted and "amq.direct" not in deleted
    assert {"amqpspec-own", "new", "ex-new"} <= deleted
    assert any(name.startswith("amq.gen-fake") for name in deleted), deletes  # the queue the broker named
    for _, method, name, if_unused, if_empty in deletes:
        if name == "amqpspec-own":
            assert not if_unused and not if_empty
        else:  # not the suite's: only if nobody uses it and it holds nothing
            assert if_unused and (if_empty or method == "exchange.delete")
    assert [c[2] for c in deletes].count("amqpspec-own") == 2  # before and after
    assert any("cleanup:" in n and "kept" in n for n in report.notes), report.notes


def test_replay_without_cleanup_deletes_nothing() -> None:
    log = hh.DeleteLog()
    broker = hh.deleting_broker(log, lambda method, name: "ok")
    with hostile.HostileServer(broker) as server:
        replay(_finding(["amqpspec-own", "new"], []), Target.parse(server.url),
               ReplayOptions(answer_timeout=0.5, deadline=10.0, cleanup=False))
    assert not [c for c in log.calls if c[1].endswith(".delete")]
