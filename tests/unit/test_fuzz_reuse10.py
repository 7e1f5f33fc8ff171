"""The AMQP 1.0 executor reuses connections across examples and watches silence briefly when
asked: against a scripted peer (tests/support/hostile_fuzz10.py) whose behaviour is exact."""
from __future__ import annotations

import time
from typing import Any

import pytest

from amqpspec.fuzz import exec10
from amqpspec.fuzz.exec091 import POOL, Connections
from amqpspec.fuzz.oracles import classify
from amqpspec.fuzz.stimulus import Stimulus
from amqpspec.target import Target
from amqpspec.wire.amqp10 import AMQPFrame, spec
from tests.support.hostile import HostileServer
from tests.support.hostile_fuzz10 import Log, scripted_broker, url_10

ADDRESS = "amqpspec-fuzz-test-0-t"


def _flow() -> Stimulus:
    """A valid flow for our sending link: the broker's reaction is its own, the probes are answered."""
    return Stimulus("1.0", (AMQPFrame(0, spec.Flow(next_incoming_id=0, incoming_window=2048, next_outgoing_id=0,
                                                   outgoing_window=2048, handle=0, delivery_count=0,
                                                   link_credit=10)),))


def _run(url: str, start: str, stimulus: Stimulus, **kw: Any) -> exec10.Run:
    return exec10.run(Target.parse(url), start, stimulus, window=kw.pop("window", 2.0), address=ADDRESS,
                      marker="amqpspec-fuzz-test-0-mark", **kw)


@pytest.fixture()
def pool() -> Any:
    connections = Connections()
    token = POOL.set(connections)
    yield connections
    POOL.reset(token)
    connections.close()


def test_link_examples_share_one_connection(pool: Connections) -> None:
    log = Log()
    with HostileServer(scripted_broker(log)) as server:
        runs = [_run(url_10(server.port), "link", _flow()) for _ in range(12)]
    assert log.connections == 1, log.connections           # one connection for all twelve examples
    assert [bool(getattr(r.observation, "reused", False)) for r in runs] == [False] + [True] * 11
    assert all(classify(r.expectation, r.observation, "1.0").ok for r in runs)
    assert all(r.observation.probe_ok for r in runs)
    # every reuse ended the session and made the home session and both links again; the probe is
    # an attach on the session the flow went to (no begin of a session of its own to end again)
    # (the connection is reset after each of the 12, so the home session is made 13 times)
    assert log.performatives.count("begin") == 13 and log.performatives.count("end") == 12
    assert log.performatives.count("attach") == 2 * 13 + 12


def test_a_session_the_stimulus_began_is_ended_before_the_next_example(pool: Connections) -> None:
    # the same begin on channel 3 twice: valid both times only if the reset ended the first session
    log = Log()
    begin3 = Stimulus("1.0", (AMQPFrame(3, spec.Begin(next_outgoing_id=0, incoming_window=10, outgoing_window=10)),))
    with HostileServer(scripted_broker(log)) as server:
        first = _run(url_10(server.port), "open", begin3)
        second = _run(url_10(server.port), "open", begin3)
    assert log.connections == 1
    assert second.expectation.why == first.expectation.why == "valid frames: answered"
    assert classify(second.expectation, second.observation, "1.0").ok


def test_an_example_that_only_attached_links_keeps_the_home_session(pool: Connections) -> None:
    # the same new link twice: valid both times only if the reset detached the first; the home
    # session is begun once (the links the example and its probe made are detached instead)
    log = Log()
    attach = Stimulus("1.0", (AMQPFrame(0, spec.Attach(name=f"{ADDRESS}-new", handle=5, role=spec.Role.SENDER,
                                                       source=spec.Source(), target=spec.Target(address=ADDRESS),
                                                       initial_delivery_count=0)),))
    with HostileServer(scripted_broker(log)) as server:
        runs = [_run(url_10(server.port), "link", attach) for _ in range(3)]
    assert log.connections == 1
    assert all(r.observation.probe_ok and classify(r.expectation, r.observation, "1.0").ok for r in runs)
    assert runs[2].expectation.why == runs[0].expectation.why
    assert log.performatives.count("begin") == 1 and log.performatives.count("end") == 0
    assert log.performatives.count("detach") == 2 * 3      # the example's link and the probe's, each time


def test_without_a_pool_every_example_gets_a_fresh_connection() -> None:
    log = Log()
    with HostileServer(scripted_broker(log)) as server:
        for _ in range(3):
            _run(url_10(server.port), "link", _flow())
    assert log.connections == 3


def test_silence_is_provisional_after_the_hang_window(pool: Connections) -> None:
    log = Log()
    silent = scripted_broker(log, silent_when=lambda ch, item: type(getattr(item, "performative", None)) is spec.Flow)
    with HostileServer(silent) as server:
        t0 = time.monotonic()
        quick = _run(url_10(server.port), "link", _flow(), window=10.0, hang_window=0.2)
        took = time.monotonic() - t0
        whole = _run(url_10(server.port), "link", _flow(), window=1.0)
    assert took < 6.0, took                                  # not the 10 s window (slack for a loaded machine)
    assert quick.observation.quick is True
    assert classify(quick.expectation, quick.observation, "1.0").violation == "hang"
    # without a hang window the whole window is watched and the silence is final
    assert whole.observation.elapsed >= 0.9 and whole.observation.quick is False
    assert classify(whole.expectation, whole.observation, "1.0").violation == "hang"
    assert log.connections == 2                              # a silent broker's connection is never reused


def test_the_home_frames_are_encoded_once_and_as_built() -> None:
    from amqpspec.fuzz import exec10
    from amqpspec.fuzz.stimulus import describe

    for start in ("session", "link"):
        parts = exec10._home_parts(start, "amqpspec-fuzz-x-t")
        frames = exec10.home_frames(start, "amqpspec-fuzz-x-t")
        assert [p[0] for p in parts] == [p[2] for p in parts] == [f.encode() for f in frames]
        assert [p[1] for p in parts] == [describe("1.0", f) for f in frames]
        assert exec10._home_parts(start, "amqpspec-fuzz-x-t") is parts


def test_send_with_the_octets_given_writes_what_it_encodes_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """The octets run() already has (the stimulus's, the probes' built once per slot) are what
    send() would have encoded: the same parts are written and recorded."""
    from amqpspec.fuzz import expect10

    written: list[Any] = []
    monkeypatch.setattr(exec10, "write", lambda peer, parts: written.append(parts) or True)
    attach = AMQPFrame(0, spec.Attach(name="n", handle=5, role=spec.Role.SENDER, source=spec.Source(),
                                      target=spec.Target(address="a"), initial_delivery_count=0))
    stim = Stimulus("1.0", (attach, b"\x00\x00\x00\x08\x02\x00\x00\x00"))
    session = expect10.Session(remote=0, handle_max=None)
    conn = expect10.Conn(phase="open", max_frame_size=65536, channel_max=255, sessions={0: session})
    sent = exec10.probes(conn, stim, {0: session}, "mark", "a", stim.octets())
    assert sent.frames and sent.octets() == b"".join(f.encode() for f in sent.frames)
    assert exec10.probes(conn, stim, {0: session}, "mark", "a", stim.octets()).frames[0] is sent.frames[0]
    exec10.send(None, stim, None, stim.encoded(), sent)  # type: ignore[arg-type]
    encoded = [(exec10._encode(i), exec10.describe_item("1.0", i)) for i in (*stim.items, *sent.frames)]
    assert written[0] == [(data, text, data, False) for data, text in encoded] and len(written[0]) == 3
