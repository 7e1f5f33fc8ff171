"""Streams cut into frames, SASL responses masked, and credentials put back for a replay."""
from __future__ import annotations

import pytest

from amqpspec.capture.codec import (
    PROTOCOL_091,
    PROTOCOL_10,
    SaslState,
    StreamDecoder,
    decode_one,
    mask,
    plain_password,
    protocol_of_header,
    sasl_plain,
    substitute_credentials,
    wrong_password,
)
from amqpspec.wire.amqp091 import (
    FrameReader,
    HeartbeatFrame,
    MethodFrame,
    ProtocolHeader,
    spec,
)
from amqpspec.wire.amqp091.table import decode_table
from amqpspec.wire.amqp10 import (
    AMQP_HEADER,
    SASL_HEADER,
    TLS_HEADER,
    AMQPFrame,
    SASLFrame,
    Symbol,
)
from amqpspec.wire.amqp10 import ProtocolHeader as Header10
from amqpspec.wire.amqp10 import spec as spec10
from tests.unit.test_capture_support import PASSWORD


def _start_ok(mechanism: str = "PLAIN", response: bytes = sasl_plain("guest", PASSWORD)) -> bytes:
    return MethodFrame(0, spec.ConnectionStartOk({"product": "t", "n": 1}, mechanism, response, "en_US")).encode()


def test_protocol_from_the_client_header() -> None:
    assert protocol_of_header(ProtocolHeader().encode()) == PROTOCOL_091
    assert protocol_of_header(AMQP_HEADER) == PROTOCOL_10
    assert protocol_of_header(SASL_HEADER) == PROTOCOL_10
    assert protocol_of_header(b"GET / HTTP/1.1") is None
    assert protocol_of_header(b"AMQP") is None


def test_stream_decoder_follows_sasl_then_the_amqp_header_in_any_pieces() -> None:
    init = SASLFrame(spec10.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"\0a\0b")).encode()
    opening = AMQPFrame(0, spec10.Open(container_id="c")).encode()
    stream = SASL_HEADER + init + AMQP_HEADER + opening
    for size in (1, 3, 7, len(stream)):
        dec = StreamDecoder(PROTOCOL_10, client=True)
        units = [u for i in range(0, len(stream), size) for u in dec.feed(stream[i:i + size])]
        assert [type(u.item).__name__ for u in units] == ["ProtocolHeader", "SASLFrame", "ProtocolHeader", "AMQPFrame"]
        assert b"".join(u.raw for u in units) == stream


def test_stream_decoder_keeps_undecodable_octets_and_never_raises() -> None:
    dec = StreamDecoder(PROTOCOL_091, client=False)
    units = dec.feed(HeartbeatFrame().encode() + b"\x01\x00\x00\xff\xff\xff\xff" + b"junk")
    assert isinstance(units[0].item, HeartbeatFrame)
    assert units[1].item is None and "undecodable" in units[1].summary
    assert dec.feed(b"more")[0].summary.startswith("raw 4 octets")
    tail = StreamDecoder(PROTOCOL_091, client=False)
    tail.feed(MethodFrame(0, spec.ConnectionOpenOk()).encode()[:5])
    assert "incomplete frame" in tail.flush()[0].summary


def test_tls_inside_a_10_header_is_opaque() -> None:
    dec = StreamDecoder(PROTOCOL_10, client=True)
    units = dec.feed(TLS_HEADER + b"\x16\x03\x01\x00\x05hello")
    assert isinstance(units[0].item, Header10)
    assert units[1].item is None and "TLS records" in units[1].summary


def test_masking_keeps_the_length_and_flags_the_frame() -> None:
    raw = _start_ok()
    item = decode_one(PROTOCOL_091, raw)
    masked = mask(PROTOCOL_091, raw, item)
    assert masked is not None and len(masked) == len(raw) and PASSWORD.encode() not in masked
    assert decode_one(PROTOCOL_091, masked).method.response == b"*" * len(sasl_plain("guest", PASSWORD))
    assert mask(PROTOCOL_091, MethodFrame(0, spec.ConnectionOpen("/")).encode(),
                decode_one(PROTOCOL_091, MethodFrame(0, spec.ConnectionOpen("/")).encode())) is None
    init = SASLFrame(spec10.SaslInit(mechanism=Symbol("PLAIN"), initial_response=sasl_plain("guest", PASSWORD))).encode()
    masked10 = mask(PROTOCOL_10, init, decode_one(PROTOCOL_10, init))
    assert masked10 is not None and len(masked10) == len(init) and PASSWORD.encode() not in masked10
    assert plain_password(PROTOCOL_091, item) == PASSWORD
    assert plain_password(PROTOCOL_10, decode_one(PROTOCOL_10, init)) == PASSWORD


@pytest.mark.parametrize("user,password", [("guest", "guest"), ("a-much-longer-user-name", "p" * 300), ("u", "")])
def test_plain_is_refilled_with_the_replay_credentials_and_sizes_fixed(user: str, password: str) -> None:
    raw = _start_ok()
    masked = mask(PROTOCOL_091, raw, decode_one(PROTOCOL_091, raw))
    out, note = substitute_credentials(PROTOCOL_091, masked, user, password, SaslState())
    reader = FrameReader(expect_protocol_header=False)
    reader.feed(out)
    frame = reader.next()
    assert reader.pending == 0 and frame.method.response == sasl_plain(user, password)
    assert frame.method.client_properties == {"product": "t", "n": 1}
    assert password not in note or password in user  # the note names the user, never the password
    assert user in note


def test_amqplain_and_cr_demo_are_answered() -> None:
    state = SaslState()
    out, _ = substitute_credentials(PROTOCOL_091, _start_ok("AMQPLAIN", b"*" * 30), "bob", "pw", state)
    response = decode_one(PROTOCOL_091, out).method.response
    table, _ = decode_table(len(response).to_bytes(4, "big") + response, 0)
    assert {k: bytes(v).decode() if isinstance(v, (bytes, bytearray)) else str(v) for k, v in table.items()} \
        == {"LOGIN": "bob", "PASSWORD": "pw"}
    state = SaslState()
    out, _ = substitute_credentials(PROTOCOL_091, _start_ok("RABBIT-CR-DEMO", b"***"), "bob", "pw", state)
    assert decode_one(PROTOCOL_091, out).method.response == b"bob"
    secure_ok = MethodFrame(0, spec.ConnectionSecureOk(b"*" * 18)).encode()
    out, _ = substitute_credentials(PROTOCOL_091, secure_ok, "bob", "pw", state)
    assert decode_one(PROTOCOL_091, out).method.response == b"My password is pw"


def test_mechanisms_without_a_password_are_sent_as_recorded() -> None:
    raw = _start_ok("EXTERNAL", b"")
    out, note = substitute_credentials(PROTOCOL_091, raw, "bob", "pw", SaslState())
    assert out == raw and "EXTERNAL" in note
    init = SASLFrame(spec10.SaslInit(mechanism=Symbol("ANONYMOUS"), initial_response=b"****")).encode()
    out, note = substitute_credentials(PROTOCOL_10, init, "bob", "pw", SaslState())
    assert out == init and "ANONYMOUS" in note


def test_sasl_init_is_refilled() -> None:
    init = SASLFrame(spec10.SaslInit(mechanism=Symbol("PLAIN"), initial_response=b"*" * 12, hostname="h")).encode()
    out, _ = substitute_credentials(PROTOCOL_10, init, "alice", "longer-password-here", SaslState())
    frame = decode_one(PROTOCOL_10, out)
    assert frame.body.initial_response == sasl_plain("alice", "longer-password-here")
    assert frame.body.hostname == "h" and int.from_bytes(out[:4], "big") == len(out)


def test_a_refused_login_is_refused_again_with_a_wrong_password() -> None:
    masked = mask(PROTOCOL_091, _start_ok(), decode_one(PROTOCOL_091, _start_ok()))
    out, note = substitute_credentials(PROTOCOL_091, masked, "guest", "guest", SaslState(), refused=True)
    assert decode_one(PROTOCOL_091, out).method.response == sasl_plain("guest", wrong_password("guest"))
    assert "refused" in note
    assert wrong_password(wrong_password("x")) != wrong_password("x")
