"""The server peer and the driver process are bounded against a hostile client: one that
floods, never reads, sends garbage, connects a hundred times, or a driver that never ends."""
from __future__ import annotations

import socket
import sys
import threading
import time

import pytest

from amqpspec.client.drivers import MAX_EVENTS, DriverProcess
from amqpspec.peer.amqp091 import UnexpectedReply
from amqpspec.peer.base import DeadlineExceeded
from amqpspec.peer.server091 import Listener, ServerPeer
from amqpspec.peer.server091_responder import MAX_KEPT, Responder
from amqpspec.transcript import MAX_BYTES, MAX_ENTRIES, Transcript
from amqpspec.wire.amqp091 import PROTOCOL_HEADER, MethodFrame, RawFrame, spec


@pytest.fixture
def listener():  # type: ignore[no-untyped-def]
    lst = Listener()
    yield lst
    lst.close()


def _client(listener: Listener) -> socket.socket:
    return socket.create_connection((listener.host, listener.port), timeout=5)


def _accept(listener: Listener, seconds: float) -> ServerPeer:
    return listener.accept(Transcript(), time.monotonic() + seconds)


def test_listens_on_loopback_by_default(listener: Listener) -> None:
    assert listener.host == "127.0.0.1" and listener.port > 0


def test_flooding_client_is_served_for_the_window_only_and_kept_small(listener: Listener) -> None:
    c = _client(listener)
    stop = threading.Event()
    frame = RawFrame(1, type=9, data=b"x" * 100).encode()  # stray frames: kept as evidence up to a cap

    def flood() -> None:
        c.sendall(PROTOCOL_HEADER)
        try:
            while not stop.is_set():
                c.sendall(frame * 500)
        except OSError:
            pass

    t = threading.Thread(target=flood, daemon=True)
    t.start()
    peer = _accept(listener, 6.0)
    peer.handshake(upto="header")
    responder = Responder(peer)
    t0 = time.monotonic()
    obs = peer.serve(2.0, responder)
    took = time.monotonic() - t0
    stop.set()
    c.close()
    assert took < 6.0  # the 2 s serve deadline; the flooding thread shares the GIL on a loaded machine
    assert len(peer.link.transcript.entries) <= MAX_ENTRIES
    assert peer.link.transcript.kept_bytes <= MAX_BYTES + 64 * MAX_ENTRIES
    assert len(responder.stray) <= MAX_KEPT and len(obs.received) > 0
    assert len(peer.sizes) <= 10_000


def test_client_that_never_reads_cannot_block_a_send(listener: Listener) -> None:
    c = _client(listener)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    c.sendall(PROTOCOL_HEADER)
    peer = listener.accept(Transcript(), time.monotonic() + 2.0)
    peer.handshake(upto="header")
    t0 = time.monotonic()
    ok = peer.send(*peer.content_frames(1, b"z" * (32 << 20)))
    assert time.monotonic() - t0 < 4.0
    assert not ok and peer.link.send_failed
    c.close()


def test_garbage_instead_of_a_protocol_header_ends_the_handshake(listener: Listener) -> None:
    c = _client(listener)
    c.sendall(b"GET / HTTP/1.1\r\n\r\n")
    peer = _accept(listener, 3.0)
    t0 = time.monotonic()
    with pytest.raises(UnexpectedReply):
        peer.handshake()
    assert time.monotonic() - t0 < 3.5
    c.close()


def test_a_frame_announcing_gigabytes_is_refused_before_it_is_buffered(listener: Listener) -> None:
    c = _client(listener)
    c.sendall(PROTOCOL_HEADER + bytes((1, 0, 0, 0x7F, 0xFF, 0xFF, 0xFF)) + b"\x00" * 1000)
    peer = _accept(listener, 3.0)
    peer.handshake(upto="header")
    obs = peer.serve(1.0)
    assert obs.framing_error and "announces" in obs.framing_error
    assert peer.reader.pending < 2 << 20
    c.close()


def test_slow_client_cannot_hold_the_handshake_past_the_deadline(listener: Listener) -> None:
    c = _client(listener)
    c.sendall(PROTOCOL_HEADER[:3])  # and nothing more
    peer = _accept(listener, 1.5)
    t0 = time.monotonic()
    with pytest.raises(UnexpectedReply):
        peer.handshake()
    assert time.monotonic() - t0 < 1.5 + 5.0  # the deadline, with slack for a loaded machine: bounded, not fast
    c.close()


def test_a_hundred_connections_are_drained_and_the_next_case_gets_a_fresh_one(listener: Listener) -> None:
    stale = []
    for _ in range(100):
        try:
            stale.append(socket.create_connection((listener.host, listener.port), timeout=0.5))
        except OSError:
            break  # the backlog is full: the kernel refuses the rest, the suite holds nothing for them
    time.sleep(0.1)
    t0 = time.monotonic()
    drained = listener.drain()
    assert time.monotonic() - t0 < 10.0 and drained >= 1  # not a wait per stale connection (100 x 0.5 s)
    fresh = _client(listener)
    fresh.sendall(PROTOCOL_HEADER)
    peer = _accept(listener, 2.0)
    assert peer.handshake(upto="header").header is not None
    for s in stale + [fresh]:
        s.close()


def test_no_connection_is_a_deadline_not_a_hang(listener: Listener) -> None:
    t0 = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        _accept(listener, 0.5)
    assert time.monotonic() - t0 < 0.5 + 5.0


def test_sasl_response_is_masked_in_the_transcript(listener: Listener) -> None:
    c = _client(listener)
    c.sendall(PROTOCOL_HEADER)
    peer = _accept(listener, 3.0)

    def client_side() -> None:
        c.recv(65536)
        c.sendall(MethodFrame(0, spec.ConnectionStartOk({}, "PLAIN", b"\0user\0s3cr3t-pw", "en_US")).encode())

    threading.Thread(target=client_side, daemon=True).start()
    peer.handshake(upto="start-ok")
    assert peer.negotiated.start_ok.response == b"\0user\0s3cr3t-pw"  # type: ignore[union-attr]
    recorded = b"".join(e.data for e in peer.link.transcript.entries)
    assert b"s3cr3t-pw" not in recorded
    c.close()


def test_driver_that_prints_without_end_is_capped_and_killed() -> None:
    code = "import sys\nwhile True: sys.stdout.write('{\"event\":\"published\",\"n\":1}\\n' + 'x' * 100 + '\\n')"
    proc = DriverProcess([sys.executable, "-c", code], cwd=__import__("pathlib").Path("."))
    time.sleep(1.0)
    out = proc.wait(0.5)
    assert out.killed and len(out.events) <= MAX_EVENTS and out.dropped > 0
    assert not out.crashed


def test_driver_that_hangs_is_killed_and_a_traceback_is_a_crash() -> None:
    hang = DriverProcess([sys.executable, "-c", "import time; time.sleep(60)"], cwd=__import__("pathlib").Path("."))
    t0 = time.monotonic()
    assert hang.wait(0.5).killed and time.monotonic() - t0 < 4.0
    crash = DriverProcess([sys.executable, "-c", "raise SystemExit(1 / 0)"], cwd=__import__("pathlib").Path("."))
    out = crash.wait(5.0)
    assert out.returncode == 1 and out.crashed


def _one_case(command: str, case_id: str, timeout: float):  # type: ignore[no-untyped-def]
    from amqpspec.case import discover
    from amqpspec.client.drivers import DriverSpec
    from amqpspec.client.runner import ClientRunner
    from amqpspec.client.session import ClientTarget
    from amqpspec.runner import RunOptions

    cases = [c for c in discover("0-9-1", role="client") if c.id == case_id]
    lst = Listener()
    try:
        target = ClientTarget.create(lst, DriverSpec.from_command(command, "0-9-1"), "test")
        t0 = time.monotonic()
        result = ClientRunner(target, cases, RunOptions(timeout=timeout)).run()[0]
        return result, time.monotonic() - t0
    finally:
        lst.close()


def test_a_driver_that_never_connects_is_an_error_within_the_deadline() -> None:
    cmd = f"{sys.executable} -c 'import time; time.sleep(60)' {{url}} {{workload}}"
    result, took = _one_case(cmd, "amqp091/4.2.2/client-sends-protocol-header", 2.0)
    assert result.verdict.value == "error" and "never connected" in result.reason
    assert took < 10.0  # the 2 s deadline, the grace, the kill -- never the driver's 60 s


def test_a_client_that_floods_garbage_cannot_stall_a_case() -> None:
    flood = ("import socket,sys,urllib.parse as u; p=u.urlsplit(sys.argv[1]); "
             "s=socket.create_connection((p.hostname,p.port)); s.sendall(b'AMQP\\x00\\x00\\x09\\x01')\n"
             "while True: s.sendall(b'\\x08\\x00\\x00' * 10000)")
    cmd = f"{sys.executable} -c \"{flood}\" {{url}} {{workload}}"
    result, took = _one_case(cmd, "amqp091/connection.start-ok/client-properties-fields", 3.0)
    assert result.verdict.value in ("error", "failed")
    assert took < 8.0
    assert len(result.transcript) <= 5001


def test_a_logged_traceback_is_no_crash_but_a_dead_thread_is() -> None:
    from amqpspec.client.drivers import DriverOutcome
    logged = ("Cancelling cause reader exited abnormally\nTraceback (most recent call last):\n"
              "  File \"x\", line 1\nInvalidFrameError: no frame size\n")
    error = [{"event": "error", "type": "InvalidFrameError"}]
    assert not DriverOutcome(events=error, returncode=1, stderr_tail=logged).crashed
    thread = "Exception in thread reader:\nTraceback (most recent call last):\nIndexError: x\n"
    assert DriverOutcome(events=[{"event": "done"}], returncode=0, stderr_tail=thread).crashed
    task = "Task exception was never retrieved\nfuture: <Task ...>\nTraceback (most recent call last):\nKeyError\n"
    assert DriverOutcome(events=error, returncode=1, stderr_tail=task).crashed
    assert DriverOutcome(returncode=1, stderr_tail=logged).crashed  # exit 1 without the error event
