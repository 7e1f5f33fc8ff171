"""A replay against servers that misbehave ends by its deadline with a divergence, never a hang or a crash.

The servers (tests/support/hostile.py) are no brokers: they only lie, flood, reset or stay
silent, to show that the replay's waits and reads are bounded.
"""
from __future__ import annotations

import socket
import time

import pytest

from amqpspec.capture.replay import ReplayOptions, replay
from amqpspec.errors import ConnectError
from amqpspec.target import Target
from tests.support import hostile
from tests.unit.test_capture_support import session_091, session_10

BEHAVIOURS = [hostile.silent, hostile.huge_frame, hostile.heartbeat_flood, hostile.reset_mid_frame,
              hostile.garbage_stream]


@pytest.mark.parametrize("behaviour", BEHAVIOURS, ids=lambda b: b.__name__)
@pytest.mark.parametrize("make", [session_091, session_10], ids=["0-9-1", "1.0"])
def test_replay_against_hostile_server_diverges_in_bounded_time(behaviour, make) -> None:
    tf = make()
    with hostile.HostileServer(behaviour) as server:
        t0 = time.monotonic()
        report = replay(tf, Target.parse(server.url), ReplayOptions(answer_timeout=0.2, max_gap=0.5, deadline=3.0))
        took = time.monotonic() - t0
    assert report.divergence is not None
    assert took < 3.0 + 12.0  # the 3 s deadline plus slack for a loaded CI machine: bounded, not fast
    text = "\n".join(report.divergence.lines())
    assert "DIVERGENCE" in text and len(text) < 20000


def test_unreachable_broker_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConnectError, match="cannot connect"):
        replay(session_091(), Target.parse(f"amqp://guest:guest@127.0.0.1:{port}/"), ReplayOptions(deadline=3.0))
