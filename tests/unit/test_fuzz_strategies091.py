"""The AMQP 0-9-1 fuzz strategies (fuzz/strategies091.py, fuzz/targets091.py).

Two promises are checked here: every stimulus a 0-9-1 target draws encodes (and the
expectation can be computed for it without raising), and every malformation is really
malformed -- the codec's own decoder, reading the octets as a correct receiver would, fails
or reads something other than what was written, for the reason the strategy names.
"""
from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpspec.fuzz import strategies091 as S
from amqpspec.fuzz.expect091 import Conn, expect
from amqpspec.fuzz.exec091 import FUZZ_FRAME_MAX, STIMULUS_CHANNEL
from amqpspec.fuzz.stimulus import Stimulus
from amqpspec.fuzz.targets import Env, for_protocol
from amqpspec.target import BrokerInfo, Target
from amqpspec.wire.amqp091 import RABBITMQ, SPEC, BodyFrame, HeaderFrame, MethodFrame, spec
from amqpspec.wire.amqp091.frames import (
    FRAME_OVERHEAD, FRAME_TYPE_NAMES, FrameReader, MalformedFrame, decode_frame, decode_method,
)
from amqpspec.wire.amqp091.primitives import INT_STRUCTS
from amqpspec.wire.amqp091.table import MAX_DEPTH, decode_array, decode_table, encode_table
from amqpspec.wire.errors import DecodeError
from amqpspec.wire.raw import Raw

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.filter_too_much])
MANY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: the single-stimulus targets of targets091 (stateful targets draw whole sequences elsewhere)
TARGETS = {t.name: t for t in for_protocol("0-9-1") if t.build.__module__.endswith("targets091")}


def env_for(product: str) -> Env:
    """A campaign's view of a broker as exec091 would have it after connection.start/tune."""
    broker = BrokerInfo(product=product, mechanisms=["PLAIN", "AMQPLAIN"], channel_max=2047, frame_max=131072,
                        heartbeat=60)
    target = Target.parse("amqp://guest:guest@127.0.0.1:5672/")
    return Env(target, "0-9-1", broker, run_id="0123456789abcdef" * 2)


START_CONN = {
    "fresh": Conn(phase="fresh"),
    "after-start": Conn(phase="after-start", mechanisms=("PLAIN", "AMQPLAIN")),
    "after-tune": Conn(phase="after-tune", proposed=(2047, 131072, 60)),
    "after-tune-ok": Conn(phase="after-tune-ok", frame_max=FUZZ_FRAME_MAX, channel_max=2047, proposed=(2047, 131072, 60)),
    "channel-open": Conn(phase="open", frame_max=FUZZ_FRAME_MAX, channel_max=2047,
                         channels=frozenset({STIMULUS_CHANNEL}), proposed=(2047, 131072, 60)),
}


def test_every_0_9_1_target_is_covered() -> None:
    assert set(TARGETS) >= {"protocol-header", "start-ok", "tune-ok", "open", "method-frame", "frame-header",
                            "content", "field-table", "heartbeat-channel", "ack"}
    assert {t.start for t in TARGETS.values()} <= set(START_CONN)


@pytest.mark.parametrize("product", ["RabbitMQ", "garagemq"])
@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_stimuli_encode_and_have_an_expectation(name: str, product: str) -> None:
    """Every drawn stimulus encodes in the broker's dialect, and expect091 judges its octets
    (plus a probe) without raising, whatever they hold."""
    env = env_for(product)
    target = TARGETS[name]
    conn = START_CONN[target.start]
    assert env.dialect is (RABBITMQ if product == "RabbitMQ" else SPEC)

    @FEW
    @given(target.strategy(env))
    def check(stimulus: Stimulus) -> None:
        octets = stimulus.octets(env.dialect)
        assert isinstance(octets, bytes) and octets
        probe = MethodFrame(1, spec.BasicQos(0, 0, False)).encode(env.dialect) if conn.phase == "open" else b""
        exp = expect(conn, octets + probe)
        assert exp.verifier.describe()
        assert not (exp.strict and not exp.verifier), "a strict expectation needs a verifier"

    check()


def test_credentials_never_encode_the_password() -> None:
    """start-ok stimuli carry the credentials as asterisks: the octets a finding keeps hold no
    password."""
    env = env_for("RabbitMQ")

    @FEW
    @given(TARGETS["start-ok"].build(env))
    def check(stimulus: Stimulus) -> None:
        assert b"\x00guest\x00guest" not in stimulus.octets(env.dialect)

    check()


# ---------------------------------------------------------------------------- malformations

@MANY
@given(st.integers(0, 300), st.sampled_from((8, 16, 32)), st.data())
def test_lying_length_never_tells_the_truth(actual: int, bits: int, data: st.DataObject) -> None:
    n = data.draw(S.lying_length(actual, bits))
    assert n != actual and 0 <= n < (1 << bits)


@MANY
@given(S.invalid_utf8())
def test_invalid_utf8_is_not_utf8(octets: bytes) -> None:
    with pytest.raises(UnicodeDecodeError):
        octets.decode("utf-8")


def _shortstr_problems(value: Any) -> list[str]:
    from amqpspec.wire.amqp091.primitives import enc_shortstr

    raw = enc_shortstr(value)
    problems = []
    if raw[0] != len(raw) - 1:
        problems.append("length")
    try:
        raw[1:].decode("utf-8")
    except UnicodeDecodeError:
        problems.append("utf-8")
    if b"\x00" in raw[1:]:
        problems.append("zero")
    return problems


@MANY
@given(S.bad_shortstr())
def test_bad_shortstr_is_wrong_in_a_named_way(value: Any) -> None:
    """A lying or wrapped length octet, invalid UTF-8, or a binary zero (4.2.5.3)."""
    assert _shortstr_problems(value)


@MANY
@given(S.bad_longstr())
def test_bad_longstr_length_lies(value: Any) -> None:
    from amqpspec.wire.amqp091.primitives import enc_longstr

    raw = enc_longstr(value)
    assert int.from_bytes(raw[:4], "big") != len(raw) - 4


@MANY
@given(st.sampled_from([RABBITMQ, SPEC]), st.data())
def test_bad_tables_do_not_read_back_as_written(dialect: Any, data: st.DataObject) -> None:
    """Every bad table, read by its own dialect, fails to decode, or does not end where its
    octets end (a lying length), or does not re-encode to them (a repeated name collapsed), or
    has a name 4.2.5.5/1 forbids. (The 's' conflict is checked on its own below.)"""
    table = data.draw(S.bad_table(dialect))
    if isinstance(table, Raw) and any(_is_written_in(table, code, w) for code, w, r in S.DIALECT_CONFLICTS
                                      if r is dialect):
        return
    raw = encode_table(table, dialect)
    try:
        value, end = decode_table(raw, 0, dialect)
    except DecodeError:
        return
    assert end != len(raw) or encode_table(value, dialect) != raw or not all(_legal_name(n) for n in value), \
        f"a bad table that is a valid one: {raw.hex()}"


def _is_written_in(raw: Raw, code: str, writer: Any) -> bool:
    """Whether ``raw`` is a one-entry table with ``code`` as ``writer`` writes it (from _written_in)."""
    try:
        value, end = decode_table(raw.data, 0, writer)
    except DecodeError:
        return False
    return end == len(raw.data) and len(value) == 1 and getattr(value, "codes", {}).get(next(iter(value))) == code


def _legal_name(name: str) -> bool:
    """4.2.5.5/1: a letter, '$' or '#' first; then letters, '$', '#', digits, underlines; <= 128."""
    return bool(re.fullmatch(r"[A-Za-z$#][A-Za-z0-9$#_]{0,127}", name))


@pytest.mark.parametrize("dialect", [SPEC, RABBITMQ], ids=["spec", "rabbitmq"])
@pytest.mark.parametrize("arrays", [False, True], ids=["tables", "tables-and-arrays"])
def test_nesting_past_the_limit_fails_for_its_depth_only(dialect: Any, arrays: bool) -> None:
    """regression: nested_bytes wrote array levels behind the wrong type code, so deep inputs
    failed for an undefined code, not for their depth. Now: up to MAX_DEPTH decodes, one level
    more is refused for its depth."""
    for depth in (0, 1, 2, 3, MAX_DEPTH):
        decode_table(S.nested_bytes(depth, dialect, arrays=arrays), 0, dialect)
    for depth in (MAX_DEPTH + 1, MAX_DEPTH + 2, 4 * MAX_DEPTH):
        with pytest.raises(DecodeError, match="nested deeper"):
            decode_table(S.nested_bytes(depth, dialect, arrays=arrays), 0, dialect)
    if arrays:  # bad_array's deep arrays: an array outermost
        decode_array(S.nested_bytes(MAX_DEPTH, dialect, arrays=True, outer="array"), 0, dialect)
        with pytest.raises(DecodeError, match="nested deeper"):
            decode_array(S.nested_bytes(MAX_DEPTH + 1, dialect, arrays=True, outer="array"), 0, dialect)


@FEW
@given(st.sampled_from([RABBITMQ, SPEC]), st.data())
def test_undefined_and_truncated_values_fail(dialect: Any, data: st.DataObject) -> None:
    name = data.draw(st.sampled_from("abc"))
    code = data.draw(st.sampled_from([chr(c) for c in range(256) if chr(c) not in dialect.codes]))
    undefined = {name: S.FieldValue(code, data.draw(st.binary(max_size=8)))}
    with pytest.raises(DecodeError):
        decode_table(encode_table(undefined, dialect), 0, dialect)
    truncated = {name: data.draw(S._truncated_value(dialect))}
    with pytest.raises(DecodeError):
        decode_table(encode_table(truncated, dialect), 0, dialect)


def test_dialect_conflicts_include_the_s_code() -> None:
    """errata 3: 's' is a short string in the spec and a signed 16-bit integer for RabbitMQ."""
    assert any(code == "s" for code, _, _ in S.DIALECT_CONFLICTS)


@FEW
@given(st.sampled_from(S.DIALECT_CONFLICTS), st.data())
def test_conflicting_codes_decode_in_the_writer_dialect(conflict: Any, data: st.DataObject) -> None:
    """A value written in the writer's reading of a code decodes there; in the reader's it fails
    or reads another value (that is the point of the conflict)."""
    code, writer, reader = conflict
    raw = data.draw(S._written_in(code, writer)).data
    written, _ = decode_table(raw, 0, writer)
    try:
        read, end = decode_table(raw, 0, reader)
    except DecodeError:
        return
    assert end != len(raw) or read != written or reader.codes.get(code) != writer.codes[code]


@MANY
@given(st.sampled_from(sorted(spec.METHODS.values(), key=lambda c: c.NAME)), st.data())
def test_truncated_methods_never_decode(cls: Any, data: st.DataObject) -> None:
    """truncated(): a method frame whose payload was cut decodes to a malformed frame."""
    frame = MethodFrame(1, data.draw(S.method(cls)))
    cut = data.draw(S.truncated(frame))
    assert len(cut.data) < len(frame.payload())
    assert isinstance(decode_frame(1, 1, cut.data), MalformedFrame)


@MANY
@given(S.unknown_method())
def test_unknown_methods_are_not_in_the_spec(m: Any) -> None:
    assert (m.class_id << 16 | m.method_id) not in spec.METHODS
    payload = MethodFrame(1, m).payload()
    try:
        decoded = decode_method(payload)
    except DecodeError:
        return
    assert decoded.NAME.startswith("unknown(")


def test_undefined_frame_types_are_undefined() -> None:
    """4.2.3: the frame types are METHOD, HEADER, BODY, HEARTBEAT; every other octet is undefined."""
    assert set(S.UNDEFINED_FRAME_TYPES).isdisjoint(FRAME_TYPE_NAMES)
    assert len(S.UNDEFINED_FRAME_TYPES) + len(FRAME_TYPE_NAMES) == 256
    assert 0 in S.UNDEFINED_FRAME_TYPES and 4 in S.UNDEFINED_FRAME_TYPES and 8 not in S.UNDEFINED_FRAME_TYPES


@MANY
@given(st.data())
def test_frame_overrides_break_the_envelope(data: st.DataObject) -> None:
    """frame_overrides(): followed by a valid frame and read back by a frame reader, the stream
    is not those two frames any more -- a frame-end is refused, a size reads other octets, the
    type is undefined, the channel changed, or an extra frame-end octet shifts the next frame."""
    frame = MethodFrame(1, spec.BasicQos(0, 0, False))
    after = MethodFrame(1, spec.BasicQosOk())
    broken = data.draw(S.frame_overrides(frame, channels_=st.integers(2, 9)))
    octets = broken.encode()
    assert octets != frame.encode(), "an override that changed nothing"
    reader = FrameReader(1 << 20)
    reader.feed(octets + after.encode())
    try:
        items = list(reader)
    except DecodeError:
        return  # frame-end refused, or a size beyond the reader's limit
    assert [(type(i), i.channel, getattr(i, "method", None)) for i in items] != \
        [(MethodFrame, 1, frame.method), (MethodFrame, 1, after.method)] or reader.pending, octets.hex()


@FEW
@given(S.content_sequence(1, FUZZ_FRAME_MAX, faults=False))
def test_valid_contents_are_complete(frames: list[Any]) -> None:
    """Without faults: publish, one header, bodies adding up to body-size, none over frame-max."""
    assert isinstance(frames[0], MethodFrame) and isinstance(frames[1], HeaderFrame)
    bodies = frames[2:]
    assert all(isinstance(b, BodyFrame) for b in bodies)
    assert sum(len(b.data) for b in bodies) == frames[1].body_size
    assert all(len(f.encode()) <= FUZZ_FRAME_MAX for f in frames)
    conn = START_CONN["channel-open"]
    exp = expect(conn, b"".join(f.encode() for f in frames) + MethodFrame(1, spec.BasicQos(0, 0, False)).encode())
    # with no properties nothing of the content is left to the broker's judgement: the broker
    # must go on (what properties mean, e.g. an expiration, is the broker's to judge)
    if frames[1].payload()[12:] == b"\x00\x00":
        assert exp.strict, exp.why


@FEW
@given(st.data())
def test_undefined_property_flags_do_not_decode(data: st.DataObject) -> None:
    flags = data.draw(S._undefined_flags())
    header = HeaderFrame(1, 60, 0, spec.BasicProperties(), property_flags=flags)
    for dialect in (SPEC, RABBITMQ):
        assert isinstance(decode_frame(2, 1, header.payload(dialect), dialect), MalformedFrame)


@pytest.mark.parametrize("native", sorted(INT_STRUCTS))
def test_integers_cut_short_are_shorter(native: str) -> None:
    """malformed_value for an integer is fewer octets than the type has."""
    from amqpspec.wire.amqp091.base import Field

    f = Field(attr="x", name="x", domain=native, type=native)

    @FEW
    @given(S.malformed_value(f))
    def check(raw: Any) -> None:
        assert len(raw.data) < INT_STRUCTS[native].size

    check()


def test_sized_body_frame_is_exactly_that_long() -> None:
    for total in (FRAME_OVERHEAD, FUZZ_FRAME_MAX, FUZZ_FRAME_MAX + 1):
        assert len(S.sized_body_frame(1, total).encode()) == total
