"""Transcripts built from codec frames, for the capture tests (and a check that they are what they claim).

Every entry is made the way the peer makes one: the exact octets of an encoded frame, the
codec's one-line summary, and the SASL response masked with ``redacted`` set.
"""
from __future__ import annotations

from typing import Any

from amqpspec.capture.codec import (
    PROTOCOL_091,
    PROTOCOL_10,
    decode_one,
    describe,
    mask,
    sasl_plain,
)
from amqpspec.capture.transcripts import TranscriptFile
from amqpspec.wire.amqp091 import (
    BodyFrame,
    HeaderFrame,
    MethodFrame,
    ProtocolHeader,
    spec,
)
from amqpspec.wire.amqp10 import AMQP_HEADER, SASL_HEADER, AMQPFrame, SASLFrame, Symbol
from amqpspec.wire.amqp10 import ProtocolHeader as Header10
from amqpspec.wire.amqp10 import spec as spec10

PASSWORD = "s3cret-Passw0rd"


class Builder:
    """Appends entries in time order; ``t`` advances by a small step per entry."""

    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.entries: list[dict[str, Any]] = []
        self.t = 0.0

    def _tick(self, dt: float) -> float:
        self.t = round(self.t + dt, 6)
        return self.t

    def event(self, conn: int, text: str, dt: float = 0.0001) -> "Builder":
        self.entries.append({"t": self._tick(dt), "dir": "event", "conn": conn, "summary": text, "hex": ""})
        return self

    def frame(self, conn: int, direction: str, data: bytes, dt: float = 0.0001) -> "Builder":
        item = decode_one(self.protocol, data, client=direction == "send")
        assert item is not None, data.hex()
        entry: dict[str, Any] = {"t": self._tick(dt), "dir": direction, "conn": conn,
                                 "summary": describe(self.protocol, item), "hex": data.hex()}
        if direction == "send":
            masked = mask(self.protocol, data, item)
            if masked is not None:
                entry["hex"] = masked.hex()
                entry["redacted"] = True
        self.entries.append(entry)
        return self

    def send(self, conn: int, item: Any, dt: float = 0.0001) -> "Builder":
        return self.frame(conn, "send", item.encode(), dt)

    def recv(self, conn: int, item: Any, dt: float = 0.0001) -> "Builder":
        return self.frame(conn, "recv", item.encode(), dt)

    def build(self, **kw: Any) -> TranscriptFile:
        return TranscriptFile(self.protocol, self.entries, upstream="amqp://guest@127.0.0.1:5672/",
                              started="2024-01-02T03:04:05.000Z", source=kw.pop("source", "transcript"), **kw)


def session_091(conns: int = 1, body: bytes = b"x" * 3000, close: str = "broker") -> TranscriptFile:
    """A 0-9-1 session per connection: handshake (PLAIN login), declare, publish a large body, get it back."""
    b = Builder(PROTOCOL_091)
    for c in range(1, conns + 1):
        b.event(c, "connected to 127.0.0.1:5672")
        b.send(c, ProtocolHeader())
        b.recv(c, MethodFrame(0, spec.ConnectionStart(0, 9, {"product": "RabbitMQ", "version": "3.10.8"},
                                                      b"PLAIN AMQPLAIN", b"en_US")))
        b.send(c, MethodFrame(0, spec.ConnectionStartOk({"product": "test"}, "PLAIN", sasl_plain("guest", PASSWORD),
                                                        "en_US")))
        b.recv(c, MethodFrame(0, spec.ConnectionTune(2047, 131072, 60)))
        b.send(c, MethodFrame(0, spec.ConnectionTuneOk(2047, 131072, 0)))
        b.send(c, MethodFrame(0, spec.ConnectionOpen("/")))
        b.recv(c, MethodFrame(0, spec.ConnectionOpenOk()))
        b.send(c, MethodFrame(1, spec.ChannelOpen()))
        b.recv(c, MethodFrame(1, spec.ChannelOpenOk()))
        b.send(c, MethodFrame(1, spec.QueueDeclare(queue=f"q{c}")))
        b.recv(c, MethodFrame(1, spec.QueueDeclareOk(f"q{c}", 0, 0)))
        b.send(c, MethodFrame(1, spec.BasicPublish(exchange="", routing_key=f"q{c}")))
        b.send(c, HeaderFrame(1, 60, len(body), spec.BasicProperties(content_type="text/plain")))
        b.send(c, BodyFrame(1, body))
        b.send(c, MethodFrame(1, spec.BasicGet(queue=f"q{c}", no_ack=True)))
        b.recv(c, MethodFrame(1, spec.BasicGetOk(1, False, "", f"q{c}", 0)))
        b.recv(c, HeaderFrame(1, 60, len(body), spec.BasicProperties(content_type="text/plain")))
        b.recv(c, BodyFrame(1, body))
        b.send(c, MethodFrame(0, spec.ConnectionClose(200, "bye", 0, 0)))
        b.recv(c, MethodFrame(0, spec.ConnectionCloseOk()))
        if close == "broker":
            b.event(c, "socket closed (fin)")
        elif close == "client":
            b.event(c, "client closed (fin)")
    return b.build()


def session_10() -> TranscriptFile:
    """A 1.0 session: SASL PLAIN, open, begin, attach a sender, one transfer settled, close."""
    b = Builder(PROTOCOL_10)
    b.event(1, "connected to 127.0.0.1:5672")
    b.send(1, Header10(SASL_HEADER))
    b.recv(1, Header10(SASL_HEADER))
    b.recv(1, SASLFrame(spec10.SaslMechanisms(sasl_server_mechanisms=[Symbol("PLAIN"), Symbol("ANONYMOUS")])))
    b.send(1, SASLFrame(spec10.SaslInit(mechanism=Symbol("PLAIN"), initial_response=sasl_plain("guest", PASSWORD))))
    b.recv(1, SASLFrame(spec10.SaslOutcome(code=0)))
    b.send(1, Header10(AMQP_HEADER))
    b.recv(1, Header10(AMQP_HEADER))
    b.send(1, AMQPFrame(0, spec10.Open(container_id="client", max_frame_size=65536)))
    b.recv(1, AMQPFrame(0, spec10.Open(container_id="broker", max_frame_size=65536)))
    b.send(1, AMQPFrame(0, spec10.Begin(next_outgoing_id=0, incoming_window=100, outgoing_window=100)))
    b.recv(1, AMQPFrame(0, spec10.Begin(remote_channel=0, next_outgoing_id=0, incoming_window=100, outgoing_window=100)))
    b.send(1, AMQPFrame(0, spec10.Attach(name="l", handle=0, role=False, source=spec10.Source(),
                                         target=spec10.Target(address="q"), initial_delivery_count=0)))
    b.recv(1, AMQPFrame(0, spec10.Attach(name="l", handle=0, role=True, source=spec10.Source(),
                                         target=spec10.Target(address="q"))))
    b.send(1, AMQPFrame(0, spec10.Transfer(handle=0, delivery_id=0, delivery_tag=b"t0", message_format=0),
                        payload=b"\x00\x53\x77\xa1\x05hello"))
    b.recv(1, AMQPFrame(0, spec10.Disposition(role=True, first=0, settled=True, state=spec10.Accepted())))
    b.send(1, AMQPFrame(0, spec10.Close()))
    b.recv(1, AMQPFrame(0, spec10.Close()))
    b.event(1, "client closed (fin)")
    return b.build()


def test_builders_mask_the_password() -> None:
    for tf in (session_091(), session_10()):
        text = repr(tf.entries)
        assert PASSWORD not in text and PASSWORD.encode().hex() not in text
        assert sum(1 for e in tf.entries if e.get("redacted")) == 1
