"""The mutation bench's proxy and mutations (bench/mutation): each kind does what it says.

No broker: a scripted server (tests/support/hostile.HostileServer) plays one, sending fixed
frames after the client's protocol header and keeping what the client sent.
"""
from __future__ import annotations

import random
import socket
import time
from typing import Callable

import pytest

from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp091 import spec as s091
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as s10
from amqpspec.wire.amqp10.types import Symbol
from bench.mutation import mutations as mut
from bench.mutation.plan import plan
from bench.mutation.proxy import ConnLog, MutatingProxy, Received
from bench.mutation.run import Outcome, Tried, classify
from tests.support.hostile import HostileServer

HEADER_091 = b"AMQP\x00\x00\x09\x01"

START = f091.MethodFrame(0, s091.ConnectionStart(0, 9, {}, b"PLAIN", b"en_US")).encode()
DECLARE_OK = f091.MethodFrame(1, s091.QueueDeclareOk("q", 5, 1)).encode()
CLOSE_404 = f091.MethodFrame(1, s091.ChannelClose(404, "NOT_FOUND", 50, 10)).encode()
SCRIPT = [START, DECLARE_OK, CLOSE_404]


def scripted(frames: list[bytes], *, linger: float = 0.3, got: list[bytes] | None = None) -> Callable[[socket.socket], None]:
    """Reads the client's header, sends ``frames`` (one write), keeps reading for ``linger``
    seconds (what it reads goes to ``got``), then closes (FIN)."""
    def behaviour(conn: socket.socket) -> None:
        head = conn.recv(8)
        if got is not None:
            got.append(head)
        conn.sendall(b"".join(frames))
        conn.settimeout(linger)
        try:
            while True:
                data = conn.recv(4096)
                if not data:
                    return
                if got is not None:
                    got.append(data)
        except OSError:
            return
    return behaviour


def client(port: int, header: bytes = HEADER_091, *, wait: float = 2.0, then: bytes = b"") -> tuple[bytes, str]:
    """Connects through the proxy, sends the header (and ``then``), reads until the stream
    ends; returns the octets and how it ended: 'eof', 'reset' or 'timeout'."""
    s = socket.create_connection(("127.0.0.1", port), timeout=wait)
    s.sendall(header + then)
    out = b""
    try:
        while True:
            data = s.recv(65536)
            if not data:
                return out, "eof"
            out += data
    except ConnectionResetError:
        return out, "reset"
    except socket.timeout:
        return out, "timeout"
    finally:
        s.close()


def frames091(data: bytes) -> list[f091.Frame]:
    reader = f091.FrameReader(expect_protocol_header=False)
    reader.feed(data)
    return list(reader)


@pytest.fixture()
def server() -> Callable[..., HostileServer]:
    started: list[HostileServer] = []

    def make(behaviour: Callable[[socket.socket], None]) -> HostileServer:
        srv = HostileServer(behaviour).__enter__()
        started.append(srv)
        return srv
    yield make
    for srv in started:
        srv.__exit__(None, None, None)


def through(srv: HostileServer, mutation: mut.Mutation | None, protocol: str = "0-9-1", **kw: object) -> tuple[bytes, str, MutatingProxy]:
    proxy = MutatingProxy(("127.0.0.1", srv.port), protocol, delay_s=0.4, reorder_wait_s=0.3)
    proxy.arm(mutation)
    header = b"AMQP\x00\x01\x00\x00" if protocol == "1.0" else HEADER_091
    try:
        data, how = client(proxy.port, header, **kw)  # type: ignore[arg-type]
    finally:
        proxy.case_ended()
        proxy.close()
    return data, how, proxy


# ------------------------------------------------------------------ relay unchanged
def test_relays_both_ways_unchanged_and_logs_what_the_broker_sent(server) -> None:
    got: list[bytes] = []
    srv = server(scripted(SCRIPT, got=got))
    data, how, proxy = through(srv, None, then=b"client octets")
    assert data == b"".join(SCRIPT) and how == "eof"
    assert b"".join(got) == HEADER_091 + b"client octets"
    [log] = proxy.log
    assert [r.index for r in log.received] == [0, 1, 2]
    assert [r.closes for r in log.received] == [False, False, True]
    assert "queue.declare-ok" in log.received[1].summary
    assert log.applied == []


def test_a_mutation_of_another_connection_or_frame_changes_nothing(server) -> None:
    srv = server(scripted(SCRIPT))
    data, _, proxy = through(srv, mut.Mutation("drop", 2, 1))
    assert data == b"".join(SCRIPT) and proxy.applied() == []


def test_connections_after_the_case_ended_are_neither_counted_nor_mutated(server) -> None:
    srv = server(scripted(SCRIPT))
    proxy = MutatingProxy(("127.0.0.1", srv.port), "0-9-1")
    try:
        proxy.arm(mut.Mutation("drop", 1, 1))
        proxy.case_ended()
        data, _ = client(proxy.port)
    finally:
        proxy.close()
    assert data == b"".join(SCRIPT) and proxy.log == []


# ------------------------------------------------------------------ each kind
def test_code_changes_the_reply_code_of_a_close_to_another_of_its_severity(server) -> None:
    srv = server(scripted(SCRIPT))
    data, _, proxy = through(srv, mut.Mutation("code", 1, 2, seed=7))
    start, ok, close = frames091(data)
    assert (start.encode(), ok.encode()) == (START, DECLARE_OK)
    assert isinstance(close.method, s091.ChannelClose)
    assert close.method.reply_code != 404
    assert s091.REPLY_CODES[close.method.reply_code][1] == "soft-error"
    assert close.method.reply_text == "NOT_FOUND" and close.method.class_id == 50
    assert "reply-code 404 ->" in proxy.applied()[0]


def test_flip_changes_one_bit_of_one_field(server) -> None:
    srv = server(scripted(SCRIPT))
    data, _, _ = through(srv, mut.Mutation("flip", 1, 1, seed=3))
    _, ok, _ = frames091(data)
    before = s091.QueueDeclareOk("q", 5, 1)
    changed = [k for k, v in ok.method.values().items() if v != before.values()[k]]
    assert len(changed) == 1
    old, new = before.values()[changed[0]], ok.method.values()[changed[0]]
    if isinstance(old, int):
        assert bin(old ^ new).count("1") == 1
    else:
        assert len(old) == len(new) and sum(bin(a ^ b).count("1") for a, b in zip(old.encode(), new.encode())) == 1


def test_flipall_flips_the_same_field_in_every_later_frame_of_the_same_sort(server) -> None:
    srv = server(scripted([START, DECLARE_OK, CLOSE_404, DECLARE_OK]))
    data, _, proxy = through(srv, mut.Mutation("flipall", 1, 1, seed=3, variant=1, sort="queue.declare-ok"))
    _, ok1, close, ok2 = frames091(data)
    assert close.encode() == CLOSE_404
    assert ok1.method.message_count == ok2.method.message_count != 5
    assert ok1.method.queue == ok2.method.queue == "q"
    assert len(proxy.applied()) == 2 and "at #3" in proxy.applied()[1]


def test_drop_leaves_one_frame_out(server) -> None:
    srv = server(scripted(SCRIPT))
    data, how, _ = through(srv, mut.Mutation("drop", 1, 1))
    assert data == START + CLOSE_404 and how == "eof"


def test_dup_sends_a_frame_twice(server) -> None:
    srv = server(scripted(SCRIPT))
    data, _, _ = through(srv, mut.Mutation("dup", 1, 1))
    assert data == START + DECLARE_OK + DECLARE_OK + CLOSE_404


def test_reorder_swaps_a_frame_with_the_next(server) -> None:
    srv = server(scripted(SCRIPT))
    data, _, _ = through(srv, mut.Mutation("reorder", 1, 1))
    assert data == START + CLOSE_404 + DECLARE_OK


def test_reorder_of_the_last_frame_sends_it_after_waiting(server) -> None:
    srv = server(scripted(SCRIPT, linger=1.0))
    data, _, _ = through(srv, mut.Mutation("reorder", 1, 2))
    assert data == b"".join(SCRIPT)


def test_delay_holds_a_frame_and_what_follows(server) -> None:
    srv = server(scripted(SCRIPT, linger=2.0))
    proxy = MutatingProxy(("127.0.0.1", srv.port), "0-9-1", delay_s=0.5)
    proxy.arm(mut.Mutation("delay", 1, 1))
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=3)
    try:
        s.sendall(HEADER_091)
        t0 = time.monotonic()
        first = s.recv(65536)
        got = first
        while len(got) < len(b"".join(SCRIPT)):
            got += s.recv(65536)
        late = time.monotonic() - t0
    finally:
        s.close()
        proxy.close()
    assert first == START
    assert got == b"".join(SCRIPT) and late >= 0.45


def test_withhold_sends_nothing_from_that_frame_on_not_even_the_close(server) -> None:
    srv = server(scripted(SCRIPT, linger=0.1))
    data, how, _ = through(srv, mut.Mutation("withhold", 1, 1), wait=1.0)
    assert data == START and how == "timeout"


def test_fin_closes_the_clients_socket_in_place_of_the_frame(server) -> None:
    srv = server(scripted(SCRIPT, linger=2.0))
    data, how, _ = through(srv, mut.Mutation("fin", 1, 1), wait=1.5)
    assert data == START and how == "eof"


def test_rst_resets_the_clients_socket_in_place_of_the_frame(server) -> None:
    srv = server(scripted(SCRIPT, linger=2.0))
    data, how, _ = through(srv, mut.Mutation("rst", 1, 1), wait=1.5)
    assert data == START and how == "reset"


# ------------------------------------------------------------------ AMQP 1.0
def test_code_on_amqp10_adds_or_changes_the_error_condition(server) -> None:
    header = b"AMQP\x00\x01\x00\x00"
    plain_close = f10.frame(s10.Close()).encode()
    err_detach = f10.frame(s10.Detach(handle=0, closed=True, error=s10.Error(condition=Symbol("amqp:not-found"))),
                           channel=1).encode()
    srv = server(scripted([header, err_detach, plain_close]))
    data, _, proxy = through(srv, mut.Mutation("code", 1, 1, seed=1), "1.0")
    assert "detach error condition amqp:not-found ->" in proxy.applied()[0]
    srv2 = server(scripted([header, err_detach, plain_close]))
    data, _, _ = through(srv2, mut.Mutation("code", 1, 2, seed=1), "1.0")
    reader = f10.FrameReader()
    reader.feed(data)
    items = list(reader)
    assert items[1].encode() == err_detach
    close = items[2].performative
    assert isinstance(close, s10.Close) and close.error is not None and close.error.condition


def test_flip_on_amqp10_changes_one_field_of_the_performative() -> None:
    raw = f10.frame(s10.Flow(next_incoming_id=3, incoming_window=100, next_outgoing_id=1, outgoing_window=50)).encode()
    new, note = mut.rewrite("flip", raw, "1.0", seed=5)
    before = f10.decode_frame(raw).performative.values()
    after = f10.decode_frame(new).performative.values()
    assert sum(before[k] != after[k] for k in before) == 1 and note.startswith("flow.")


# ------------------------------------------------------------------ rewrites without a field
def test_rewrites_fall_back_to_a_payload_bit_when_nothing_decodes_to_change() -> None:
    rng = random.Random(1)
    heartbeat = f091.HeartbeatFrame(0).encode()
    new, _ = mut.flip_payload_bit(heartbeat, "0-9-1", rng)
    assert len(new) == len(heartbeat) and new != heartbeat and new[0] != heartbeat[0]
    body = f091.BodyFrame(1, b"hello").encode()
    new, note = mut.rewrite("flip", body, "0-9-1", seed=2)
    assert new[:7] == body[:7] and new[-1] == body[-1] and new != body and "bit" in note
    new, note = mut.rewrite("code", DECLARE_OK, "0-9-1", seed=2)  # no reply code: a bit flipped instead
    assert new != DECLARE_OK and len(new) == len(DECLARE_OK)


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError):
        mut.Mutation("explode", 1, 0)


# ------------------------------------------------------------------ planning and classifying
def _log() -> list[ConnLog]:
    c1 = ConnLog(1, [Received(0, 1, "start", False, 10), Received(1, 2, "declare-ok", False, 10),
                     Received(2, 4, "channel.close", True, 10)])
    c2 = ConnLog(2, [Received(0, 3, "start", False, 10)])
    return [c1, c2]


def test_plan_tries_codes_first_then_the_latest_frames_within_the_budget() -> None:
    got = plan("amqp091/x/y", _log(), budget=6)
    assert [m.describe() for m in got] == ["code c1#2", "flip c1#2", "rst c1#2", "fin c1#2", "dup c1#2", "dup c2#0"]
    assert plan("amqp091/x/y", _log(), budget=500)[-1].describe() == "fin c1#0"
    assert plan("amqp091/x/y", [], budget=10) == []
    assert plan("a/b/c", _log(), 5, run_seed=1) == plan("a/b/c", _log(), 5, run_seed=1)


def test_plan_leaves_out_frames_after_the_last_check_and_flips_each_field_of_the_latest() -> None:
    log = _log()
    log[0].received[1].fields = 3
    got = plan("amqp091/x/y", log, budget=5, judged_seq=2)  # c1#1 came before the last check, c2#0 and c1#2 after
    assert [m.describe() for m in got] == ["flip c1#1", "flip c1#1/1", "flip c1#1/2", "rst c1#1", "fin c1#1"]
    assert mut.flippable_fields(DECLARE_OK, "0-9-1") == 3 and mut.flippable_fields(START, "0-9-1") >= 2
    notes = {mut.rewrite("flip", DECLARE_OK, "0-9-1", seed=1, variant=v)[1].split(" ")[0] for v in range(3)}
    assert notes == {"queue.declare-ok.queue", "queue.declare-ok.message-count", "queue.declare-ok.consumer-count"}


def test_classify_names_why_nothing_flipped() -> None:
    def outcome(passing: list[str]) -> Outcome:
        o = Outcome("c", "passed", "", frames=3)
        o.tried = [Tried(mut.Mutation(k, 1, 0), [], "passed", "") for k in passing]
        return o
    assert classify(Outcome("c", "passed", "", frames=0)) == "nothing-received"
    everything = outcome(["rst", "withhold", "flip"])
    everything.exhausted = True
    assert classify(everything) == "insensitive"
    assert classify(outcome(["rst", "withhold", "flip"])) == "accepts-silence"
    assert classify(outcome(["drop", "flip"])) == "accepts-silence"
    assert classify(outcome(["fin", "flip"])) == "accepts-close"
    assert classify(outcome(["flip", "code"])) == "tolerant"
