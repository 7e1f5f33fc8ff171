"""The codecs seen from a capture: octet streams cut into frames, secrets masked and refilled.

Captures (proxy recordings, pcaps, replays) never choose what is on the wire, they find it:
a stream may start with either protocol's header, switch to a new header after SASL, turn
into TLS records, or stop decoding half-way (a fuzz input, a hostile broker). A
:class:`StreamDecoder` follows one direction of one connection through all of that with the
wire codecs and never raises: what does not decode is kept as opaque octets, so nothing
that passed through is lost and nothing grows without bound.

Secrets: the client's SASL response is the only secret AMQP carries. :func:`mask` replaces
it by asterisks of the same length (what transcripts store, flagged ``redacted``) and
:func:`substitute_credentials` puts the replay URL's credentials back into such a frame,
re-encoded with the codec so that every length and the frame size are right again.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp091.table import RABBITMQ, SPEC, encode_table
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10
from amqpspec.wire.amqp10.composite import Composite
from amqpspec.wire.amqp10.types import Symbol
from amqpspec.wire.errors import DecodeError, EncodeError, FrameError

PROTOCOL_091 = "0-9-1"
PROTOCOL_10 = "1.0"
PROTOCOLS = (PROTOCOL_091, PROTOCOL_10)
MAX_FRAME = 16 << 20       # no frame beyond this is buffered (either protocol): memory stays bounded
HEADER_LEN = 8


def protocol_of_header(data: bytes) -> str | None:
    """Which AMQP a client's first eight octets ask for; None when they are no AMQP header.

    1.0 headers read ``AMQP id 1 0 0`` (id 0 AMQP, 2 TLS, 3 SASL); everything else that
    starts with ``AMQP`` is taken as 0-9-1 (``AMQP 0 0 9 1``, and the older ``AMQP 1 1 0 9``
    forms a 0-9-1 broker must answer with its own header).
    """
    if len(data) < HEADER_LEN or data[:4] != b"AMQP":
        return None
    if data[5] == 1 and data[6:8] == b"\x00\x00":
        return PROTOCOL_10
    return PROTOCOL_091


@dataclass
class Unit:
    """One decoded piece of a stream: a frame or header, or octets that did not decode."""

    raw: bytes
    item: Any            # the decoded frame/header, or None for opaque octets
    summary: str

    @property
    def decoded(self) -> bool:
        return self.item is not None


@dataclass
class StreamDecoder:
    """Cuts one direction of one connection into frames; never raises, never buffers past MAX_FRAME.

    ``client`` tells the direction: in AMQP 1.0 the client's AMQP header follows its own SASL
    frames (the broker's reader learns that from the sasl-outcome it decodes itself).
    """

    protocol: str
    client: bool
    max_frame: int = MAX_FRAME
    broken: str | None = None      # why the stream stopped decoding
    opaque: str | None = None      # why the rest is not AMQP (TLS inside a 1.0 header)
    _reader: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"unknown protocol {self.protocol!r}")
        if self.protocol == PROTOCOL_091:
            self._reader = f091.FrameReader(self.max_frame, SPEC)
        else:
            self._reader = f10.FrameReader(self.max_frame)

    @property
    def pending(self) -> int:
        return 0 if self.broken or self.opaque else self._reader.pending

    def feed(self, data: bytes) -> list[Unit]:
        """The units completed by ``data`` (in order)."""
        data = bytes(data)
        if not data:
            return []
        if self.broken is not None:
            return [Unit(data, None, f"raw {len(data)} octets after undecodable data")]
        if self.opaque is not None:
            return [Unit(data, None, f"{len(data)} octets of {self.opaque}, not decoded")]
        self._reader.feed(data)
        out: list[Unit] = []
        while True:
            try:
                item = self._reader.next()
            except FrameError as exc:
                rest = self._reader.pending_bytes()
                self.broken = str(exc)
                out.append(Unit(rest, None, f"undecodable stream ({len(rest)} octets): {exc}"))
                return out
            if item is None:
                return out
            raw = self._reader.last_raw
            item = self._redecode(item)
            out.append(Unit(raw, item, describe(self.protocol, item)))
            self._after(item)
            if self.opaque is not None:
                rest = self._reader.pending_bytes()
                if rest:
                    out.append(Unit(rest, None, f"{len(rest)} octets of {self.opaque}, not decoded"))
                return out

    def flush(self) -> list[Unit]:
        """What is left when the stream ends: the octets of an incomplete frame."""
        if self.broken is not None or self.opaque is not None or not self._reader.pending:
            return []
        rest = self._reader.pending_bytes()
        self.broken = "stream ended inside a frame"
        return [Unit(rest, None, f"{len(rest)} octets of an incomplete frame")]

    def _redecode(self, item: Any) -> Any:
        """0-9-1 field tables come in two readings (the 's' conflict): try the other before giving up."""
        if self.protocol == PROTOCOL_091 and isinstance(item, f091.MalformedFrame):
            other = f091.decode_frame(item.type, item.channel, item.data, RABBITMQ)
            if not isinstance(other, f091.MalformedFrame):
                return other
        return item

    def _after(self, item: Any) -> None:
        if self.protocol != PROTOCOL_10:
            return
        if isinstance(item, f10.ProtocolHeader) and item.protocol_id == f10.PROTOCOL_TLS:
            self.opaque = "TLS records"
        elif self.client and isinstance(item, f10.SASLFrame):
            self._reader.expect_header()  # the client's AMQP header may follow (security 5.3.2)


def decode_one(protocol: str, raw: bytes, client: bool = True) -> Any:
    """The frame or header that ``raw`` holds exactly, or None when it is anything else."""
    dec = StreamDecoder(protocol, client)
    units = dec.feed(raw)
    if len(units) == 1 and units[0].decoded and dec.pending == 0:
        return units[0].item
    return None


def describe(protocol: str, item: Any) -> str:
    return f091.describe(item) if protocol == PROTOCOL_091 else f10.describe(item)


def encode(protocol: str, item: Any) -> bytes:
    return f091.encode(item) if protocol == PROTOCOL_091 else f10.encode(item)


# ---------------------------------------------------------------------------- secrets

def _secret_fields_091(item: Any) -> list[Any]:
    if not isinstance(item, f091.MethodFrame):
        return []
    return [fd for fd in item.method.FIELDS if fd.secret
            and isinstance(getattr(item.method, fd.attr), (bytes, bytearray, str))]


def has_secret(protocol: str, item: Any) -> bool:
    if protocol == PROTOCOL_091:
        return bool(_secret_fields_091(item))
    return isinstance(item, f10.SASLFrame) and isinstance(item.body, Composite) and item.body.has_secrets()


def mask(protocol: str, raw: bytes, item: Any) -> bytes | None:
    """``raw`` with the SASL response replaced by as many asterisks, or None when it holds none.

    The masked frame is re-encoded with the codec; it keeps the length of the original (only
    octets change), and if the codec cannot reproduce the frame the whole payload is masked:
    a capture may lose a frame's detail, never a secret.
    """
    if not has_secret(protocol, item):
        return None
    try:
        if protocol == PROTOCOL_091:
            changes = {fd.attr: b"*" * len(getattr(item.method, fd.attr)) for fd in _secret_fields_091(item)}
            masked = replace(item, method=item.method.replace(**changes)).encode(_dialect_of(raw, item))
        else:
            masked = item.masked().encode()
        if len(masked) == len(raw):
            return masked
    except (EncodeError, DecodeError, ValueError, TypeError):
        pass
    head = 7 if protocol == PROTOCOL_091 else 8
    tail = 1 if protocol == PROTOCOL_091 else 0
    return raw[:head] + b"*" * (len(raw) - head - tail) + raw[len(raw) - tail:]


def _dialect_of(raw: bytes, item: Any) -> Any:
    """The table dialect that reproduces ``raw`` (the one it was decoded with)."""
    for dialect in (SPEC, RABBITMQ):
        try:
            if item.encode(dialect) == raw:
                return dialect
        except (EncodeError, ValueError, TypeError):
            continue
    return SPEC


@dataclass
class SaslState:
    """What a connection's SASL exchange chose so far (a later secure-ok/sasl-response needs it)."""

    mechanism: str = ""


def sasl_plain(username: str, password: str) -> bytes:
    return b"\x00" + username.encode() + b"\x00" + password.encode()


def _response_091(mechanism: str, step: str, username: str, password: str) -> bytes | None:
    if mechanism == "PLAIN":
        return sasl_plain(username, password) if step == "start-ok" else None
    if mechanism == "AMQPLAIN":  # a field table without its length prefix (RabbitMQ, py-amqp)
        return encode_table({"LOGIN": username, "PASSWORD": password}, SPEC, 0, "AMQPLAIN response")[4:] \
            if step == "start-ok" else None
    if mechanism == "RABBIT-CR-DEMO":  # the user name first, the password in answer to the challenge
        return username.encode() if step == "start-ok" else b"My password is " + password.encode()
    return None


WRONG_PASSWORD = "amqpspec-wrong-password"


def wrong_password(password: str) -> str:
    """A password that is not ``password``: for logins the recording shows refused."""
    return WRONG_PASSWORD if password != WRONG_PASSWORD else WRONG_PASSWORD + "-2"


def substitute_credentials(protocol: str, raw: bytes, username: str, password: str,
                           state: SaslState, refused: bool = False, anonymous: bool = False) -> tuple[bytes, str]:
    """A recorded (masked) client frame with these credentials in its SASL response.

    Returns the octets to send and a note for the user (never the password). Mechanisms
    without credentials (ANONYMOUS, EXTERNAL) keep the recorded response; one the suite cannot
    answer for is sent as recorded, and the note says so. With ``refused`` (the recording shows
    this login refused: a case sending a wrong password on purpose) the response is well
    formed but carries a wrong password, so that the broker refuses it the same way again.
    With ``anonymous`` (an AMQP 1.0 replay URL without a user, the suite's convention for
    ANONYMOUS) a PLAIN sasl-init becomes an ANONYMOUS one.
    """
    how = "a wrong password (the recording shows this login refused)" if refused else "the replay URL"
    if refused:
        password = wrong_password(password)
    item = decode_one(protocol, raw, client=True)
    if item is None:
        return raw, "masked frame does not decode: sent as recorded"
    if protocol == PROTOCOL_091:
        if not isinstance(item, f091.MethodFrame):
            return raw, "masked octets are no method frame: sent as recorded"
        method = item.method
        dialect = _dialect_of(raw, item)
        if method.NAME == "connection.start-ok":
            state.mechanism = str(method.mechanism)
            step = "start-ok"
        elif method.NAME == "connection.secure-ok":
            step = "secure-ok"
        else:
            return raw, f"{method.NAME}: no credentials to put in (sent as recorded)"
        response = _response_091(state.mechanism, step, username, password)
        if response is None:
            if state.mechanism in ("EXTERNAL", "ANONYMOUS"):
                return raw, f"{method.NAME}: {state.mechanism} carries no password (sent as recorded)"
            return raw, f"{method.NAME}: cannot answer for mechanism {state.mechanism or '?'} (masked response sent as recorded)"
        frame = replace(item, method=method.replace(response=response), size=None)
        return frame.encode(dialect), f"{method.NAME}: {state.mechanism} response for user {username!r} with {how}"
    if not isinstance(item, f10.SASLFrame):
        return raw, "masked octets are no SASL frame: sent as recorded"
    body = item.body
    if isinstance(body, spec10.SaslInit):
        state.mechanism = str(body.mechanism or "")
        if state.mechanism == "PLAIN" and anonymous and not refused:
            data = f10.SASLFrame(spec10.SaslInit(mechanism=Symbol("ANONYMOUS"), hostname=body.hostname)).encode()
            return data, "sasl-init: ANONYMOUS instead of the recorded PLAIN (the replay URL names no user)"
        if state.mechanism != "PLAIN":
            return raw, f"sasl-init: {state.mechanism or '?'} carries no password the suite knows (sent as recorded)"
        new_body = body.replace(initial_response=sasl_plain(username, password))
        try:
            data = replace(item, body=new_body, size=None).encode()
        except EncodeError:  # the remembered element constructors do not fit: a fresh sasl-init
            data = f10.SASLFrame(spec10.SaslInit(mechanism=Symbol("PLAIN"), initial_response=sasl_plain(username, password),
                                                 hostname=body.hostname)).encode()
        return data, f"sasl-init: PLAIN response for user {username!r} with {how}"
    return raw, f"{getattr(body, 'NAME', 'sasl frame')}: cannot answer for mechanism {state.mechanism or '?'} (sent as recorded)"


def plain_password(protocol: str, item: Any) -> str | None:
    """The password inside a PLAIN response (the proxy registers it with the scrubber), or None."""
    response: Any = None
    if protocol == PROTOCOL_091 and isinstance(item, f091.MethodFrame) and item.method.NAME == "connection.start-ok":
        if str(item.method.mechanism) == "PLAIN":
            response = item.method.response
    elif protocol == PROTOCOL_10 and isinstance(item, f10.SASLFrame) and isinstance(item.body, spec10.SaslInit):
        if str(item.body.mechanism) == "PLAIN":
            response = item.body.initial_response
    if not isinstance(response, (bytes, bytearray)):
        return None
    parts = bytes(response).split(b"\x00")
    return parts[2].decode("utf-8", "replace") if len(parts) == 3 else None
