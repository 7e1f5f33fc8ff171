"""Recorded sessions as fuzz seeds: loading, renaming into the campaign's own names, mutating."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from amqpspec.errors import UsageError
from amqpspec.fuzz import seeds, targets_seeded
from amqpspec.fuzz.targets import Env
from amqpspec.target import Target
from amqpspec.wire.amqp091 import FrameReader, MethodFrame

DATA = Path(__file__).resolve().parents[1] / "data" / "seeds"
SESSION = DATA / "pika-session.json"   # pika through `amqpspec record`: declare, bind, confirm, publish x3, get, ack


def _decode(data: bytes) -> list:
    reader = FrameReader(max_payload=len(data) + 16, expect_protocol_header=False)
    reader.feed(data)
    return list(reader)


def _env() -> Env:
    return Env(Target.parse("amqp://guest:guest@127.0.0.1:5672/"), "0-9-1", run_id="ab" * 16,
               seeds=(str(SESSION),))


def test_a_recording_gives_the_frames_after_connection_open() -> None:
    corpus = seeds.load([str(DATA)], "0-9-1")
    assert len(corpus.seeds) == 1 and not corpus.skipped
    frames = [f for item in corpus.seeds[0].frames for f in _decode(item.data)]
    names = [f.method.NAME for f in frames if isinstance(f, MethodFrame)]
    assert names[0] == "channel.open"                        # the handshake is left to the fuzzer
    assert "exchange.declare" in names and "basic.publish" in names and "basic.ack" in names
    assert all(f.channel != 0 for f in frames)                # no connection.close: the probes need the connection


def test_rename_makes_every_name_the_campaigns() -> None:
    env = _env()
    prefix = env.name("s")
    corpus = seeds.load([str(SESSION)], "0-9-1")
    renamed = [targets_seeded.rename(x, prefix) for x in corpus.seeds[0].frames]
    seen = []
    for item in renamed:
        for f in _decode(item.data):
            if not isinstance(f, MethodFrame):
                continue
            for field in f.method.FIELDS:
                if field.domain in targets_seeded.NAME_DOMAINS or field.attr in targets_seeded.NAME_FIELDS:
                    value = getattr(f.method, field.attr)
                    if value:
                        seen.append(value)
                        assert value.startswith((prefix, "amq.")), (f.method.NAME, value)
    assert any("app-q" in v for v in seen) and any("app-x" in v for v in seen)


def test_no_seed_is_a_one_line_usage_error(tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UsageError, match="no AMQP 0-9-1 seeds"):
        seeds.load([str(tmp_path)], "0-9-1")
    with pytest.raises(UsageError, match="does not exist"):
        seeds.load([str(tmp_path / "missing")], "0-9-1")
    with pytest.raises(UsageError, match="0-9-1 campaigns only"):
        seeds.load([str(SESSION)], "1.0")


def test_the_target_needs_seeds() -> None:
    env = _env()
    assert targets_seeded._needs(env) == ""
    assert "--seeds" in targets_seeded._needs(Env(env.target, "0-9-1"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=targets_seeded.stimuli(_env()))
def test_stimuli_are_encodable_and_keep_the_campaigns_names(data) -> None:
    octets = data.octets()
    assert octets                              # something is always sent
    if not any(item.summary().startswith("octet") for item in data.items):   # an octet may land in a name
        assert b"app-q" not in octets.replace(_env().name("s").encode() + b"-app-q", b"")


def test_the_committed_seed_holds_no_secret() -> None:
    # the committed seed holds no secret: the SASL response is masked by the recorder
    doc = json.loads(SESSION.read_text(encoding="utf-8"))
    assert "guest:guest" not in json.dumps(doc) and "\\x00guest\\x00guest" not in json.dumps(doc)
