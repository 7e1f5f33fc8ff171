"""The probes after a 0-9-1 example: which frames ask the broker whether it still serves."""
from __future__ import annotations

from amqpspec.fuzz import exec091, expect091
from amqpspec.fuzz.stimulus import RawItem, Stimulus
from amqpspec.wire.amqp091 import MethodFrame, spec


def _conn() -> expect091.Conn:
    return expect091.Conn(phase="open", frame_max=131072, channel_max=2047,
                          channels=frozenset(exec091.HOME_CHANNELS), vhost="/")


def _stim(*channels: int) -> Stimulus:
    return Stimulus("0-9-1", tuple(MethodFrame(ch, spec.QueueDeclare(queue="q", passive=True)) for ch in channels))


def test_the_standing_probe_channel_is_asked_when_the_stimulus_left_it_alone() -> None:
    frames, awaits = exec091.probes(_conn(), _stim(exec091.STIMULUS_CHANNEL))
    assert awaits == (("basic.qos-ok", exec091.STIMULUS_CHANNEL), ("basic.qos-ok", exec091.PROBE_CHANNEL))
    assert [f.channel for f in frames] == [exec091.STIMULUS_CHANNEL, exec091.PROBE_CHANNEL]


def test_a_fresh_channel_is_opened_when_the_stimulus_went_to_the_probe_channel() -> None:
    frames, awaits = exec091.probes(_conn(), _stim(exec091.STIMULUS_CHANNEL, exec091.PROBE_CHANNEL))
    fresh = awaits[-1]
    assert fresh[0] == "channel.open-ok" and fresh[1] not in exec091.HOME_CHANNELS
    assert isinstance(frames[-1].method, spec.ChannelOpen)


def test_recorded_octets_get_the_probes_their_frames_got() -> None:
    # a replay sends the recorded octets as raw items: the probes must be the campaign's
    for channels in ((exec091.STIMULUS_CHANNEL,), (exec091.STIMULUS_CHANNEL, exec091.PROBE_CHANNEL), (3,)):
        built = _stim(*channels)
        recorded = Stimulus("0-9-1", tuple(RawItem(data, "raw") for data in built.encoded()))
        assert exec091.probes(_conn(), recorded) == exec091.probes(_conn(), built)
    assert exec091.frame_channels(_stim(1, 5).octets()) == {1, 5}
    assert exec091.frame_channels(_stim(1).octets()[:-1]) is None      # not whole frames


def test_a_slow_header_refusal_is_watched_until_its_close() -> None:
    # two octets are no header: the broker may wait for more (watched for PENDING_WINDOW), or
    # answer with its own header and close; one that answers just before that window ends must
    # be seen closing, not judged as one that keeps the connection open
    from amqpspec.fuzz.targets import Env, get
    from amqpspec.target import Target
    from tests.support import hostile

    with hostile.HostileServer(hostile.slow_header_refusal) as server:
        target = Target.parse(server.url)
        example = get("protocol-header", "0-9-1").run(Env(target, "0-9-1"), Stimulus("0-9-1", (RawItem(b"L\x8d", "raw"),)))
    assert example.observation.end == "fin", example.observation
    assert example.verdict.ok, example.verdict
