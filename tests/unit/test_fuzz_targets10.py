"""The AMQP 1.0 fuzz targets: registered, their stimuli encodable and judged, our names only (no broker)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from amqpspec.fuzz import expect10, targets
from amqpspec.fuzz.stimulus import Credentials, resolve
from amqpspec.fuzz.targets10 import padded_begin
from amqpspec.target import BrokerInfo, Target
from amqpspec.wire.amqp10 import AMQPFrame, SASLFrame, spec
from amqpspec.wire.amqp10.frames import FrameReader

NAMES = ("protocol-header", "sasl-init", "open", "begin", "attach", "transfer", "flow-disposition", "frame-header",
         "types")


def env() -> targets.Env:
    b = BrokerInfo(protocol="1.0")
    b.frame_max, b.channel_max, b.mechanisms = 65536, 255, ["PLAIN", "ANONYMOUS"]
    return targets.Env(Target.parse("amqp://fuzzuser:s3cret@127.0.0.1:5672/"), "1.0", b, run_id="ab" * 16)


def start_conn(start: str) -> expect10.Conn:
    if start in ("fresh", "header"):
        return expect10.Conn(phase=start)
    if start == "sasl":
        return expect10.Conn(phase="sasl", mechanisms=("PLAIN", "ANONYMOUS"))
    conn = expect10.Conn(phase="open", max_frame_size=65536, channel_max=255)
    if start in ("session", "link"):
        s = expect10.Session(remote=0, handle_max=0xFFFFFFFF)
        if start == "link":
            s.links = {0: expect10.Link("snd", False), 1: expect10.Link("rcv", True)}
        conn.sessions[0] = s
    return conn


def test_every_target_is_registered_for_1_0_beside_the_0_9_1_ones() -> None:
    mine = {t.name for t in targets.for_protocol("1.0")}
    assert set(NAMES) <= mine
    assert targets.get("protocol-header", "1.0").protocol == "1.0"
    assert targets.get("protocol-header", "0-9-1").protocol == "0-9-1"


@pytest.mark.parametrize("name", NAMES)
def test_stimuli_encode_and_are_judged(name: str) -> None:
    e = env()
    t = targets.get(name, "1.0")
    seen: list[bool] = []

    @settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(t.strategy(e))
    def check(stimulus: object) -> None:
        octets = stimulus.octets()  # type: ignore[attr-defined]
        assert octets
        exp = expect10.expect(start_conn(t.start), octets)
        assert exp.describe()
        assert all(c.startswith("amqp10:") for c in exp.clauses)
        seen.append(exp.strict)

    check()
    assert seen


def test_strict_expectations_are_reached_by_the_session_targets() -> None:
    """A target that could never meet a strict expectation could never fail on a rule."""
    e = env()
    for name in ("attach", "flow-disposition", "frame-header"):
        t = targets.get(name, "1.0")
        strict: list[bool] = []

        @settings(max_examples=120, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(t.strategy(e))
        def check(stimulus: object) -> None:
            strict.append(expect10.expect(start_conn(t.start), stimulus.octets()).strict)  # type: ignore[attr-defined]

        check()
        assert any(strict), name


def test_addresses_carry_the_campaign_prefix() -> None:
    e = env()
    prefix = "amqpspec-fuzz-abababab-0-"

    @settings(max_examples=80, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(targets.get("attach", "1.0").strategy(e))
    def check(stimulus: object) -> None:
        for item in stimulus.items:  # type: ignore[attr-defined]
            perf = getattr(item, "performative", None)
            if isinstance(perf, spec.Attach) and not perf.problems:
                for term in (perf.source, perf.target):
                    address = getattr(term, "address", None)
                    if isinstance(term, (spec.Source, spec.Target)) and isinstance(address, str):
                        assert address.startswith(prefix), address

    check()


def test_sasl_credentials_are_asterisks_when_recorded() -> None:
    e = env()
    creds = Credentials(e.credentials_length)
    frame = SASLFrame(spec.SaslInit(mechanism="PLAIN", initial_response=creds))
    assert b"s3cret" not in frame.encode()
    real = b"\x00fuzzuser\x00s3cret"
    assert len(real) == len(creds) and resolve(frame, real).encode().endswith(real)


def test_padded_begin_has_the_exact_size() -> None:
    for n in (512, 513, 65537):
        f = padded_begin(1, n)
        assert len(f.encode()) == n
        reader = FrameReader(max_frame_size=n, expect_header=False)
        reader.feed(f.encode())
        assert isinstance(reader.next(), AMQPFrame)



def test_recorded_octets_get_the_probes_their_frames_got() -> None:
    # a replay sends the recorded octets as raw items: the probes must be the campaign's
    from amqpspec.fuzz import exec10, expect10
    from amqpspec.fuzz.stimulus import RawItem, Stimulus
    from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

    conn = expect10.Conn(phase="open", max_frame_size=65536, channel_max=255)
    conn.sessions[0] = expect10.Session(remote=0, handle_max=None)
    built = Stimulus("1.0", (AMQPFrame(0, spec10.Attach(name="x", handle=0, role=spec10.Role.SENDER)),
                             AMQPFrame(1, spec10.Begin(next_outgoing_id=0, incoming_window=1, outgoing_window=1))))
    recorded = Stimulus("1.0", tuple(RawItem(data, "raw") for data in built.encoded()))
    args = ({}, "mark", "addr")
    assert exec10.probes(conn, recorded, *args) == exec10.probes(conn, built, *args)
    assert ("attach", "mark-0") in exec10.probes(conn, recorded, *args).awaits   # session 0 was touched
    assert exec10.frame_channels(built.octets()) == {0, 1}
