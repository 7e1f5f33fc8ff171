"""Recorded sessions as fuzz seeds: loading, renaming into the campaign's own names, mutating."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from amqpspec.errors import UsageError
from amqpspec.capture.codec import decode_one
from amqpspec.fuzz import seeds, targets, targets_seeded
from amqpspec.fuzz.stimulus import RawItem, Stimulus
from amqpspec.fuzz.targets import Env
from amqpspec.target import Target
from amqpspec.wire.amqp091 import FrameReader, MethodFrame

DATA = Path(__file__).resolve().parents[1] / "data" / "seeds"
SESSION = DATA / "pika-session.json"   # pika through `amqpspec record`: declare, bind, confirm, publish x3, get, ack
# python-qpid-proton through `amqpspec record` against RabbitMQ's 1.0 plugin: a sender and a
# receiver link on /queue/app-q, three transfers, credit, a disposition, a detach
SESSION_10 = DATA / "proton-session.json"


def _decode(data: bytes) -> list:
    reader = FrameReader(max_payload=len(data) + 16, expect_protocol_header=False)
    reader.feed(data)
    return list(reader)


def _env() -> Env:
    return Env(Target.parse("amqp://guest:guest@127.0.0.1:5672/"), "0-9-1", run_id="ab" * 16,
               seeds=(str(SESSION),))


def test_a_recording_gives_the_frames_after_connection_open() -> None:
    corpus = seeds.load([str(DATA)], "0-9-1")
    assert len(corpus.seeds) == 1 and len(corpus.skipped) == 1 and "AMQP 1.0, not 0-9-1" in corpus.skipped[0]
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
    with pytest.raises(UsageError, match="no AMQP 1.0 seeds"):   # a 0-9-1 recording is no 1.0 seed
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


# ---------------------------------------------------------------------------- AMQP 1.0 seeds

def _env10() -> Env:
    return Env(Target.parse("amqp://guest:guest@127.0.0.1:5672/"), "1.0", run_id="cd" * 16, seeds=(str(SESSION_10),))


def _frames10(items) -> list:
    return [decode_one("1.0", item.data) for item in items]


def test_a_1_0_recording_gives_the_frames_after_open() -> None:
    corpus = seeds.load([str(DATA)], "1.0")
    assert len(corpus.seeds) == 1 and any("pika-session" in s for s in corpus.skipped)   # the 0-9-1 one, said why
    frames = _frames10(corpus.seeds[0].frames)
    names = [type(f.performative).__name__ for f in frames]
    assert names[0] == "Begin"                              # SASL, header and open are left to the fuzzer
    assert {"Attach", "Transfer", "Flow", "Disposition", "Detach"} <= set(names)
    assert "Close" not in names and "Open" not in names
    assert b"".join(i.data for i in corpus.seeds[0].frames) in _sent_octets(SESSION_10)   # as recorded


def _sent_octets(path: Path) -> bytes:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return b"".join(bytes.fromhex(e.get("hex") or "") for e in doc["entries"] if e.get("dir") == "send")


@pytest.mark.parametrize("address, expected", [
    ("app-q", "P-app-q"),
    ("/queue/app-q", "/queue/P-app-q"),
    ("/amq/queue/app-q", "/amq/queue/P-app-q"),
    ("/exchange/amq.topic/a.b", "/exchange/amq.topic/P-a.b"),
    ("/exchange/app-x/key", "/exchange/P-app-x/key"),
    ("/queues/app-q", "/queues/P-app-q"),
    ("/topic/news", "/topic/P-news"),
    ("P-mine", "P-mine"),
    ("", ""),
    (None, None),
])
def test_own_address_keeps_keywords_and_amq_names(address, expected) -> None:
    assert targets_seeded.own_address(address, "P") == expected


def test_rename10_makes_attach_addresses_the_campaigns_and_keeps_the_rest() -> None:
    env = _env10()
    prefix = env.name("s")
    frames = seeds.load([str(SESSION_10)], "1.0").seeds[0].frames
    renamed = [targets_seeded.rename(x, prefix, "1.0") for x in frames]
    addresses = []
    for before, after in zip(frames, renamed):
        f = decode_one("1.0", after.data)
        assert f is not None, after.text
        if type(f.performative).__name__ != "Attach":
            assert after == before                           # nothing else is touched
            continue
        for end in (f.performative.source, f.performative.target):
            if getattr(end, "address", None):
                addresses.append(end.address)
    assert addresses and all(a == f"/queue/{prefix}-app-q" for a in addresses), addresses


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=targets_seeded.stimuli(_env10()))
def test_1_0_stimuli_keep_the_campaigns_addresses(data) -> None:
    assert data.protocol == "1.0" and data.octets()
    if not any(item.summary().startswith("octet") for item in data.items):
        assert b"\x0c/queue/app-q" not in data.octets()   # the address alone (str8 of 12): never sent


def test_the_1_0_target_deletes_the_queues_its_attaches_made() -> None:
    t = targets.get("seeded", "1.0")
    assert t.start == "open" and t.needs(_env10()) == ""
    env = _env10()
    prefix = env.name("s")
    items = [targets_seeded.rename(x, prefix, "1.0") for x in seeds.load([str(SESSION_10)], "1.0").seeds[0].frames]
    assert targets_seeded.made_queues(Stimulus("1.0", tuple(items))) == [f"{prefix}-app-q"]
    attach = next(i for i in items if "attach" in i.text)
    at = attach.data.index(b"amqpspec-")
    for j, expected in ((at + 2, 1), (at + len("amqpspec-fuzz"), 1)):   # one octet changed: still ours
        changed = attach.data[:j] + b"X" + attach.data[j + 1:]
        assert len(targets_seeded.made_queues(Stimulus("1.0", (RawItem(changed, "octet"),)))) == expected
    plain = targets_seeded.own_address("/queue/app-q", "someone-else")
    assert not targets_seeded._near_suite_name(plain.split("/")[-1])   # never anyone else's
