"""The AMQP 0-9-1 fuzz expectation (fuzz/expect091.py) on hand-made octets.

Each case builds the octets a fuzz example sends (stimulus, then the probes exec091 appends),
computes the expectation, and judges hand-made observations with the campaign's own oracle
(:func:`amqpspec.fuzz.oracles.classify`): the reactions the cited spec text allows pass, the
others are violations. Cases marked "regression" reproduce, from a finding's input octets, a
reaction the suite once wrongly reported; cases marked "finding" pin a real deviation
(RabbitMQ 3.10) that must stay reported.
"""
from __future__ import annotations

from typing import Any

import pytest

from amqpspec.fuzz import expect091
from amqpspec.fuzz.expect091 import Conn, expect, whole_frames
from amqpspec.fuzz.oracles import classify
from amqpspec.peer.amqp091 import Observation
from amqpspec.wire.amqp091 import (
    PROTOCOL_HEADER, BodyFrame, HeaderFrame, HeartbeatFrame, MethodFrame, ProtocolHeader, RawFrame, spec,
)

FRAME_MAX = 4096
# what exec091 reaches for the channel-open targets (RabbitMQ's proposal, our frame-max)
OPEN = Conn(phase="open", frame_max=FRAME_MAX, channel_max=2047, channels=frozenset({1}), proposed=(2047, 131072, 60))
AFTER_TUNE = Conn(phase="after-tune", proposed=(2047, 131072, 60))
AFTER_TUNE_OK = Conn(phase="after-tune-ok", frame_max=FRAME_MAX, channel_max=2047, proposed=(2047, 131072, 60))
AFTER_START = Conn(phase="after-start", mechanisms=("PLAIN", "AMQPLAIN"))


def probes_open() -> bytes:
    """exec091's probes on an open connection: basic.qos on the stimulus channel, channel.open on 2."""
    return MethodFrame(1, spec.BasicQos(0, 0, False)).encode() + MethodFrame(2, spec.ChannelOpen()).encode()


def probe_open_vhost() -> bytes:
    """exec091's probe after a tune-ok stimulus: connection.open of the target's virtual host."""
    return MethodFrame(0, spec.ConnectionOpen("/")).encode()


def enc(*frames: Any) -> bytes:
    return b"".join(f.encode() for f in frames)


# ---------------------------------------------------------------------------- observations

def close(code: int, end: str = "rst") -> Observation:
    """The broker sent connection.close with ``code`` (we answered close-ok, it then closed)."""
    return Observation(received=[MethodFrame(0, spec.ConnectionClose(code, "x", 0, 0))], end=end, replied_close_ok=True)


def silent(end: str = "fin") -> Observation:
    """The socket closed without any data."""
    return Observation(end=end)


def probes_answered(*extra: Any) -> Observation:
    """The broker went on: the probes came back (exec091 sets probe_ok)."""
    return Observation(received=[*extra, MethodFrame(1, spec.BasicQosOk()), MethodFrame(2, spec.ChannelOpenOk())],
                       probe_ok=True)


def nothing(elapsed: float = 2.0) -> Observation:
    """Silence until the window ended."""
    return Observation(elapsed=elapsed)


def verdict(exp: Any, obs: Observation) -> str | None:
    return classify(exp, obs, "0-9-1").violation


# ---------------------------------------------------------------------------- frame envelope (4.2.3)

def test_undefined_frame_type_needs_a_silent_close() -> None:
    """finding (RabbitMQ answers 501): 4.2.3/2 "If a peer receives a frame with a type that is not
    one of these defined types, it MUST ... close the connection without sending any further data"."""
    data = bytes.fromhex("00000100000000ce") + probes_open()  # frame-header finding b82a088022a956b7
    exp = expect(OPEN, data)
    assert exp.strict and "amqp091:4.2.3/2" in exp.clauses
    assert verdict(exp, silent("rst")) is None
    assert verdict(exp, silent("fin")) is None
    assert verdict(exp, close(501)) == "wrong-code"
    assert verdict(exp, probes_answered()) is not None


def test_undefined_frame_type_on_channel_zero_and_with_payload() -> None:
    """finding: the heartbeat-channel and method-frame targets send type 0 with channel 0 or a
    payload; 4.2.3/2 still applies."""
    for hexdata in ("00000000000000ce", "00000100000004000a0033ce"):
        exp = expect(OPEN, bytes.fromhex(hexdata) + probes_open())
        assert exp.clauses == ("amqp091:4.2.3/2",)
        assert verdict(exp, close(501)) == "wrong-code"
        assert verdict(exp, silent()) is None


def test_type_4_is_heartbeat_in_the_prose_only() -> None:
    """4.2.3 lists Type = 4 "HEARTBEAT", the XML frame-heartbeat is 8: a type-4 frame may be
    discarded (4.2.7/3) or be an undefined type (4.2.3/2): going on and a silent close both pass."""
    exp = expect(OPEN, RawFrame(0, type=4).encode() + probes_open())
    assert verdict(exp, probes_answered()) is None
    assert verdict(exp, silent()) is None
    assert verdict(exp, close(501)) is not None


def test_bad_frame_end_needs_a_silent_close() -> None:
    """4.2.3/3, /4: the frame-end is checked first; if not valid, close without further data."""
    frame = MethodFrame(1, spec.BasicQos(0, 0, False), end=0x00)
    exp = expect(OPEN, frame.encode() + probes_open())
    assert {"amqp091:4.2.3/3", "amqp091:4.2.3/4"} <= set(exp.clauses)
    assert verdict(exp, silent()) is None
    assert verdict(exp, close(501)) == "wrong-code"


def test_bad_frame_end_checked_before_the_type() -> None:
    """4.2.3/3: the frame-end decides before the (undefined) type or the payload is looked at."""
    exp = expect(OPEN, RawFrame(1, type=0, data=b"\x00\x0a", end=0xCD).encode() + probes_open())
    assert exp.clauses[:2] == ("amqp091:4.2.3/3", "amqp091:4.2.3/4")


def test_oversized_frame_needs_501() -> None:
    """finding (RabbitMQ accepts frames up to frame-max + 8): 4.2.3/7 "A peer that receives an
    oversized frame MUST signal a connection exception with reply code 501"; frame-max includes
    the frame header and end octet (connection.tune frame-max). Input of finding 3e176694ea556cda
    is a 4097-octet exchange.declare, frame-max 4096."""
    from amqpspec.fuzz.targets091 import padded_declare

    frame = padded_declare(1, FRAME_MAX + 1)
    assert len(frame.encode()) == FRAME_MAX + 1
    exp = expect(OPEN, frame.encode() + probes_open())
    assert exp.strict and set(exp.clauses) == {"amqp091:4.2.3/7", "amqp091:2.3.3/3"}
    assert verdict(exp, close(501)) is None
    assert verdict(exp, close(505)) == "wrong-code"
    assert verdict(exp, probes_answered(MethodFrame(1, spec.ExchangeDeclareOk()))) == "wrong-code"
    assert exp.wants_close_method and verdict(exp, silent("rst")) == "reset-without-close"


def test_frame_of_exactly_frame_max_is_not_oversized() -> None:
    """A frame of frame-max octets obeys the agreed limit (2.3.3/3): no 501 demanded."""
    from amqpspec.fuzz.targets091 import padded_declare

    exp = expect(OPEN, padded_declare(1, FRAME_MAX).encode() + probes_open())
    assert "amqp091:4.2.3/7" not in exp.clauses
    assert verdict(exp, probes_answered(MethodFrame(1, spec.ExchangeDeclareOk()))) is None


def test_oversized_frame_cut_short_may_wait() -> None:
    """An oversized frame whose octets were not all sent: the broker may wait for the rest."""
    data = padded_declare_octets(2 * FRAME_MAX)[:FRAME_MAX]
    exp = expect(OPEN, data)
    assert exp.may_wait and verdict(exp, nothing()) is None
    assert verdict(exp, close(501)) is None


def padded_declare_octets(total: int) -> bytes:
    from amqpspec.fuzz.targets091 import padded_declare

    return padded_declare(1, total).encode()


def test_frame_cut_short_lets_the_broker_wait() -> None:
    """A size field announcing more octets than sent: the frame is not complete, nothing is due."""
    exp = expect(OPEN, bytes.fromhex("0100010000001000"))
    assert not exp.strict and exp.may_wait
    assert verdict(exp, nothing(0.5)) is None
    assert not whole_frames(bytes.fromhex("0100010000001000"))
    assert whole_frames(probes_open()) and not whole_frames(probes_open() + b"\x01")


# ---------------------------------------------------------------------------- channels (4.2.3/8, /9; 4.2.7)

def test_heartbeat_on_a_channel_allows_501_or_503_only() -> None:
    """finding (RabbitMQ answers 505): 4.2.3/9 names 503 for a heartbeat on a non-zero channel,
    4.2.7/2 names 501 for an invalid heartbeat; either passes, nothing else."""
    exp = expect(OPEN, bytes.fromhex("08000100000000ce") + probes_open())  # finding de834fa5bdc9a766
    assert verdict(exp, close(501)) is None
    assert verdict(exp, close(503)) is None
    assert verdict(exp, close(505)) == "wrong-code"
    assert verdict(exp, probes_answered()) == "wrong-code"


def test_heartbeat_with_payload_needs_501() -> None:
    """4.2.7/2: an invalid heartbeat frame (a payload) is a connection exception 501."""
    exp = expect(OPEN, HeartbeatFrame(0, data=b"\x01").encode() + probes_open())
    assert exp.clauses == ("amqp091:4.2.7/2",)
    assert verdict(exp, close(501)) is None and verdict(exp, close(503)) == "wrong-code"


def test_heartbeat_on_channel_zero_is_discarded() -> None:
    """4.2.7/3: a heartbeat is discarded without any error (the probes are answered)."""
    exp = expect(OPEN, HeartbeatFrame(0).encode() + probes_open())
    assert exp.strict and exp.clauses == ("amqp091:4.2.7/3",)
    assert verdict(exp, probes_answered()) is None
    assert verdict(exp, close(501)) == "wrong-code"


def test_connection_method_on_a_channel_needs_503() -> None:
    """finding (RabbitMQ answers 504, after the probes): 4.2.3/9 "A peer that receives a non-zero
    channel number for one of these frames MUST signal a connection exception with reply code 503".
    Input of finding 0aea9f728b344647: connection.close on channel 4."""
    exp = expect(OPEN, bytes.fromhex("0100040000000b000a0032000000fffffffece") + probes_open())
    assert set(exp.clauses) == {"amqp091:4.2.3/8", "amqp091:4.2.3/9"}
    assert verdict(exp, close(503)) is None
    assert verdict(exp, close(504)) == "wrong-code"
    assert verdict(exp, probes_answered()) == "wrong-code"


# ---------------------------------------------------------------------------- negotiation (2.2.4/1)

@pytest.mark.parametrize("hexdata", [
    "01000000000008000a001400000000ce",  # connection.secure on channel 0 (finding 94a3d0ba79184fbc, RabbitMQ: 504)
    "01000100000006003c001e0000ce",      # basic.cancel on channel 1 (finding 65c11b049ce2b44d, RabbitMQ: 505)
    "01000000000000ce",                  # an empty method frame (finding c40dad3cc46362e5, RabbitMQ: 501)
])
def test_errors_before_open_need_a_silent_close(hexdata: str) -> None:
    """finding: 2.2.4/1 "prior to sending or receiving Open or Open-Ok, a peer that detects an
    error MUST close the socket without sending any further data" -- a close method is not
    allowed, whatever its code; a silent close, or a pause first (4.10.2), is."""
    exp = expect(AFTER_TUNE_OK, bytes.fromhex(hexdata))
    assert "amqp091:2.2.4/1" in exp.clauses and exp.strict and exp.may_wait
    assert verdict(exp, silent("rst")) is None
    assert verdict(exp, nothing(2.0)) is None
    for code in (501, 503, 504, 505):
        assert verdict(exp, close(code)) == "wrong-code"


def test_connection_method_on_a_channel_before_open() -> None:
    """4.2.3/9 (503) and 2.2.4/1 (silent close) disagree before Open: either passes."""
    exp = expect(AFTER_TUNE_OK, MethodFrame(3, spec.ConnectionOpen("/")).encode())
    assert verdict(exp, close(503)) is None and verdict(exp, silent()) is None
    assert verdict(exp, close(504)) == "wrong-code"


def test_tune_ok_zero_answering_a_limit_may_be_refused_after_a_pause() -> None:
    """regression (finding f62710a334448cae, reported as a hang): tune-ok with channel-max 0,
    frame-max 0 answering RabbitMQ's limits. 0 means "no limit" (connection.tune), which is
    higher than the proposal in one reading of the upper-limit rules ("the server MUST close the
    connection without attempting a negotiated close"; RabbitMQ's errata 10), and 4.10.2 has the
    server "pause that connection ... for a period of several seconds and then close" on a
    negotiation error. So silence past the window is allowed, as are open-ok and a silent close."""
    data = bytes.fromhex("0100000000000c000a001f0000000000000000ce") + probe_open_vhost()
    exp = expect(AFTER_TUNE, data)
    assert exp.may_wait and exp.state == "after-tune"
    assert verdict(exp, nothing(2.0)) is None
    assert verdict(exp, silent()) is None
    assert verdict(exp, Observation(received=[MethodFrame(0, spec.ConnectionOpenOk())], probe_ok=True)) is None


def test_tune_ok_within_the_proposal_then_open_is_answered() -> None:
    """A valid tune-ok: connection.open (the probe) gets an answer; silence is a hang."""
    data = MethodFrame(0, spec.ConnectionTuneOk(2047, 4096, 0)).encode() + probe_open_vhost()
    exp = expect(AFTER_TUNE, data)
    assert verdict(exp, Observation(received=[MethodFrame(0, spec.ConnectionOpenOk())], probe_ok=True)) is None
    assert verdict(exp, nothing(2.0)) == "hang"


@pytest.mark.parametrize("tune_ok, clause", [
    (spec.ConnectionTuneOk(2047, 131073, 0), "amqp091:connection.tune-ok.frame-max/upper-limit"),
    (spec.ConnectionTuneOk(2047, 4095, 0), "amqp091:connection.tune-ok.frame-max/minimum"),
    (spec.ConnectionTuneOk(2048, 4096, 0), "amqp091:connection.tune-ok.channel-max/upper-limit"),
])
def test_tune_ok_limits_need_a_close_without_negotiation(tune_ok: Any, clause: str) -> None:
    """connection.tune-ok rules: limits above the proposal, or frame-max below frame-min-size:
    "the server MUST close the connection without attempting a negotiated close"."""
    exp = expect(AFTER_TUNE, MethodFrame(0, tune_ok).encode() + probe_open_vhost())
    assert clause in exp.clauses
    assert verdict(exp, silent()) is None and verdict(exp, nothing()) is None
    assert verdict(exp, close(501)) == "wrong-code"
    assert verdict(exp, Observation(received=[MethodFrame(0, spec.ConnectionOpenOk())], probe_ok=True)) == "wrong-code"


def test_start_ok_with_a_mechanism_not_offered() -> None:
    """start-ok mechanism rule: a mechanism the server did not offer is an error before Open."""
    frame = MethodFrame(0, spec.ConnectionStartOk({}, "EXTERNAL", b"x", "en_US"))
    exp = expect(AFTER_START, frame.encode())
    assert "amqp091:connection.start-ok.mechanism/validity" in exp.clauses
    assert verdict(exp, silent()) is None and verdict(exp, close(530)) == "wrong-code"


def test_start_ok_valid_is_answered_by_tune_or_secure() -> None:
    exp = expect(AFTER_START, MethodFrame(0, spec.ConnectionStartOk({}, "AMQPLAIN", b"x", "en_US")).encode())
    tune = Observation(received=[MethodFrame(0, spec.ConnectionTune(2047, 131072, 60))], probe_ok=True)
    assert verdict(exp, tune) is None
    assert verdict(exp, silent()) is None  # wrong credentials: closed without a close method
    assert verdict(exp, close(403)) == "wrong-code"


# ---------------------------------------------------------------------------- contents (4.2.6)

def publish(channel: int = 1) -> MethodFrame:
    return MethodFrame(channel, spec.BasicPublish(exchange="", routing_key="amqpspec-none"))


def test_complete_content_is_accepted() -> None:
    """A whole content to the default exchange goes on (basic.publish default-exchange)."""
    data = enc(publish(), HeaderFrame(1, 60, 3, spec.BasicProperties()), BodyFrame(1, b"abc")) + probes_open()
    exp = expect(OPEN, data)
    assert exp.strict and "amqp091:basic.publish.exchange/default-exchange" in exp.clauses
    assert verdict(exp, probes_answered()) is None
    assert verdict(exp, close(505)) == "wrong-code"


def test_body_beyond_body_size_needs_505() -> None:
    """4.2.6/1: a badly-formatted content (more body octets than the header's body-size) is 505."""
    data = enc(publish(), HeaderFrame(1, 60, 2, spec.BasicProperties()), BodyFrame(1, b"abc")) + probes_open()
    exp = expect(OPEN, data)
    assert exp.clauses == ("amqp091:4.2.6/1",)
    assert verdict(exp, close(505)) is None and verdict(exp, close(501)) == "wrong-code"


def test_body_without_header_needs_505() -> None:
    exp = expect(OPEN, enc(publish(), BodyFrame(1, b"abc")) + probes_open())
    assert verdict(exp, close(505)) is None and verdict(exp, probes_answered()) == "wrong-code"


def test_header_of_another_class_allows_501_or_505() -> None:
    """4.2.6.1/2 names 501 for an invalid class-id, 4.2.6/1 505 for a badly-formatted content."""
    exp = expect(OPEN, enc(publish(), HeaderFrame(1, 50, 0, None)) + probes_open())
    assert verdict(exp, close(501)) is None and verdict(exp, close(505)) is None
    assert verdict(exp, close(504)) == "wrong-code"


def test_content_on_channel_zero_allows_504_or_505() -> None:
    """4.2.6.1/4 names 504 for content frames on channel 0 (505: 4.2.6/1)."""
    exp = expect(OPEN, enc(publish(), HeaderFrame(0, 60, 0, spec.BasicProperties())) + probes_open())
    assert verdict(exp, close(504)) is None and verdict(exp, close(505)) is None
    assert verdict(exp, close(501)) == "wrong-code"


def test_method_inside_a_content_aborts_it_or_is_505() -> None:
    """4.2.6: "any non-content frame explicitly marks the end of the content ... this allows for a
    sender to abort the sending of content without the need to close the channel"; 4.2.6/1 505
    for an incomplete content. The probes (basic.qos) interrupt a content left at 10 of 3 octets."""
    exp = expect(OPEN, enc(publish(), HeaderFrame(1, 60, 10, spec.BasicProperties()), BodyFrame(1, b"abc"))
                 + probes_open())
    assert verdict(exp, close(505)) is None
    assert verdict(exp, probes_answered()) is None
    assert verdict(exp, close(501)) == "wrong-code"


def test_heartbeat_inside_a_content_is_no_error() -> None:
    """A heartbeat (channel 0) between content frames is no frame of that channel (4.2.6: content
    frames "may be mixed with frames for other channels")."""
    data = enc(publish(), HeaderFrame(1, 60, 3, spec.BasicProperties()), HeartbeatFrame(0), BodyFrame(1, b"abc"))
    exp = expect(OPEN, data + probes_open())
    assert verdict(exp, probes_answered()) is None
    assert verdict(exp, close(505)) == "wrong-code"


# ---------------------------------------------------------------------------- methods, acks, headers

def test_ack_of_a_tag_never_delivered_needs_a_channel_exception() -> None:
    """basic.ack multiple/exists: "The server MUST validate that a non-zero delivery-tag refers to
    a delivered message, and raise a channel exception if this is not the case"."""
    exp = expect(OPEN, MethodFrame(1, spec.BasicAck(5, False)).encode() + probes_open())
    assert exp.clauses == ("amqp091:basic.ack.multiple/exists",)
    refused = Observation(received=[MethodFrame(1, spec.ChannelClose(406, "unknown delivery tag", 60, 80)),
                                    MethodFrame(2, spec.ChannelOpenOk())], probe_ok=True)
    assert verdict(exp, refused) is None
    assert verdict(exp, probes_answered()) == "wrong-code"


def test_unknown_method_is_not_strict() -> None:
    """No reaction is named for class/method ids the spec does not define: any reaction passes,
    only silence (a hang) does not."""
    exp = expect(OPEN, RawFrame(1, type=1, data=b"\x12\x34\x00\x01").encode() + probes_open())
    assert not exp.strict
    assert verdict(exp, close(540)) is None and verdict(exp, probes_answered()) is None
    assert verdict(exp, nothing()) == "hang"


def test_method_that_decodes_only_in_rabbitmq_reading_is_valid() -> None:
    """The 's' conflict (errata 3): a table value 's' is a short string in the spec and a signed
    16-bit integer for RabbitMQ; octets valid in either reading are not judged malformed."""
    table = b"\x01as\x00\x07"           # name 'a', 's' + int16 7 (RabbitMQ's reading)
    args = (b"\x00\x00" + b"\x00" + b"\x00" + b"\x00" + len(table).to_bytes(4, "big") + table)
    payload = b"\x00\x3c\x00\x14" + args  # basic.consume: reserved-1, queue '', consumer-tag '', bits, table
    exp = expect(OPEN, RawFrame(1, type=1, data=payload).encode() + probes_open())
    assert "does not decode" not in exp.why


# ---------------------------------------------------------------------------- protocol header (4.2.2)

def test_protocol_header_valid_and_other_versions() -> None:
    """4.2.2/3: an unsupported version gets a valid protocol header, then the socket closes."""
    fresh = Conn(phase="fresh")
    exp = expect(fresh, PROTOCOL_HEADER)
    start = Observation(received=[MethodFrame(0, spec.ConnectionStart(0, 9, {}, b"PLAIN", b"en_US"))])
    assert verdict(exp, start) is None
    exp = expect(fresh, b"AMQP\x01\x01\x00\x0a")
    answer = Observation(received=[ProtocolHeader(PROTOCOL_HEADER)], end="fin")
    assert verdict(exp, answer) is None
    assert verdict(exp, silent()) == "reset-without-close"


def test_protocol_header_cut_short_may_wait() -> None:
    exp = expect(Conn(phase="fresh"), b"AMQP")
    assert exp.may_wait and verdict(exp, nothing()) is None


def test_phases_cover_exec091_start_states() -> None:
    """Every negotiation step exec091 can stop at is a phase the walk knows."""
    assert set(expect091.HANDSHAKE) <= set(expect091.PHASES)


def test_connection_open_out_of_order_lifts_the_silence_rule() -> None:
    """regression (garagemq finding c090aa13ad50b118): connection.open where tune-ok was due.
    2.2.4/1 demands a silent close only "prior to sending or receiving Open or Open-Ok"; this
    error *is* an Open, so a close method (garagemq: 402) is allowed, and no other text names a
    reaction."""
    data = MethodFrame(0, spec.ConnectionOpen("")).encode() + probe_open_vhost()
    exp = expect(AFTER_TUNE, data)
    assert not exp.strict and exp.may_wait
    assert verdict(exp, close(402)) is None
    assert verdict(exp, silent()) is None
    assert verdict(exp, nothing()) is None


def test_other_methods_out_of_order_before_open_still_need_silence() -> None:
    """finding (garagemq answers 540): channel.flow-ok on channel 0 where tune-ok was due is an
    error detected before Open: close without sending anything (2.2.4/1)."""
    data = MethodFrame(0, spec.ChannelFlowOk(False)).encode() + probe_open_vhost()
    exp = expect(AFTER_TUNE, data)
    assert exp.strict and "amqp091:2.2.4/1" in exp.clauses
    assert verdict(exp, close(540)) == "wrong-code"
    assert verdict(exp, silent()) is None


def test_probe_on_a_channel_the_stimulus_closed_may_go_unanswered() -> None:
    """regression (RabbitMQ finding 01c2dc1d23b24c64, reported as a hang): the stimulus is
    channel.close on channel 1, so the basic.qos probe behind it lands on a closing channel.
    RabbitMQ answers close-ok and discards the qos; no text names another reaction to a method
    on a closed channel, so its silence is no hang."""
    data = bytes.fromhex("0100010000000b0014002800000000000000ce") + probes_open()
    exp = expect(OPEN, data)
    assert not exp.strict and exp.may_wait
    discarded = Observation(received=[MethodFrame(1, spec.ChannelCloseOk()), MethodFrame(2, spec.ChannelOpenOk())],
                            elapsed=2.0)
    assert verdict(exp, discarded) is None
    assert verdict(exp, close(504)) is None


def test_method_on_a_channel_never_opened_still_needs_a_reaction() -> None:
    """Not the closing case: a method on a channel nobody opened gets no pass for silence."""
    exp = expect(OPEN, MethodFrame(5, spec.BasicQos(0, 0, False)).encode() + probes_open())
    assert verdict(exp, nothing()) == "hang"
    assert verdict(exp, close(504)) is None


def test_deep_tables_from_the_broker_are_not_its_fault() -> None:
    """regression (RabbitMQ finding be2ca4142b4188ed): a basic.return echoing our 65-deep headers
    table was reported as undecodable broker output. 0-9-1 sets no nesting limit (4.2.5.5): only
    our decoder's bound refuses it. An undefined property-flag bit, which no receiver can decode,
    stays the broker's (finding 96035de39be3ece8)."""
    from amqpspec.fuzz import strategies091 as S
    from amqpspec.wire.amqp091.frames import decode_frame
    from amqpspec.wire.amqp091.table import MAX_DEPTH

    exp = expect(OPEN, enc(publish(), HeaderFrame(1, 60, 0, spec.BasicProperties())) + probes_open())
    deep = b"\x00\x3c\x00\x00" + bytes(8) + b"\x20\x00" + S.nested_bytes(MAX_DEPTH + 1)
    undefined = b"\x00\x3c\x00\x00" + bytes(8) + b"\x00\x02"
    for payload, problem in ((deep, False), (undefined, True)):
        echoed = decode_frame(2, 1, payload)
        assert "MalformedFrame" in type(echoed).__name__
        obs = probes_answered(echoed)
        assert (verdict(exp, obs) == "decode-error-by-broker") is problem


def test_the_stimulus_own_connection_close_is_answered_by_close_ok() -> None:
    """regression (RabbitMQ, method-frame hang after-open): the stimulus is connection.close on
    channel 0; RabbitMQ answers close-ok and discards the probes behind it (it waits for our
    socket close, as the close shake of 2.2.4 has the peers do). That is no hang."""
    data = bytes.fromhex("0100000000000b000a003200000000000000ce") + probes_open()
    exp = expect(OPEN, data)
    assert ("connection.close-ok", 0) in exp.awaits and not exp.strict
    close_ok = Observation(received=[MethodFrame(0, spec.ConnectionCloseOk())], probe_ok=True, elapsed=0.01)
    assert verdict(exp, close_ok) is None
    assert verdict(exp, silent()) is None
    assert verdict(exp, nothing()) == "hang"
