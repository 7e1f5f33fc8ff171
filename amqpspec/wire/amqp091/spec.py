"""AMQP 0-9-1 methods and content properties, GENERATED from the spec XML: do not edit.

Source: amqpspec/specdata/amqp-0-9-1/amqp0-9-1.extended.xml (RabbitMQ's superset of
amqp0-9-1.xml; methods absent from the base specification have EXTENSION = True).
Regenerate with: python -m amqpspec.wire.amqp091.gen
"""
# fmt: off
# ruff: noqa
from __future__ import annotations

import struct

from amqpspec.wire.errors import DecodeError
from amqpspec.wire.raw import Raw, Sized
from amqpspec.wire.amqp091.base import (
    Field, Method, Properties, generic_decode_args, generic_decode_properties,
    generic_encode_args, generic_encode_properties,
)
from amqpspec.wire.amqp091.table import SPEC, Dialect, TableInput, decode_table, encode_table
from amqpspec.wire.amqp091.fast import fast_longstr as _ls, fast_shortstr as _ss

PROTOCOL_VERSION = (0, 9, 1)
DEFAULT_PORT = 5672

# constants of the spec (frame types, sizes, reply codes)
FRAME_METHOD = 1
FRAME_HEADER = 2
FRAME_BODY = 3
FRAME_HEARTBEAT = 8
FRAME_MIN_SIZE = 4096
FRAME_END = 206
REPLY_SUCCESS = 200
CONTENT_TOO_LARGE = 311
NO_ROUTE = 312
NO_CONSUMERS = 313
CONNECTION_FORCED = 320
INVALID_PATH = 402
ACCESS_REFUSED = 403
NOT_FOUND = 404
RESOURCE_LOCKED = 405
PRECONDITION_FAILED = 406
FRAME_ERROR = 501
SYNTAX_ERROR = 502
COMMAND_INVALID = 503
CHANNEL_ERROR = 504
UNEXPECTED_FRAME = 505
RESOURCE_ERROR = 506
NOT_ALLOWED = 530
NOT_IMPLEMENTED = 540
INTERNAL_ERROR = 541

# reply code -> (name, 'soft-error' | 'hard-error' | '')
REPLY_CODES = {
    200: ('reply-success', ''),
    311: ('content-too-large', 'soft-error'),
    312: ('no-route', 'soft-error'),
    313: ('no-consumers', 'soft-error'),
    320: ('connection-forced', 'hard-error'),
    402: ('invalid-path', 'hard-error'),
    403: ('access-refused', 'soft-error'),
    404: ('not-found', 'soft-error'),
    405: ('resource-locked', 'soft-error'),
    406: ('precondition-failed', 'soft-error'),
    501: ('frame-error', 'hard-error'),
    502: ('syntax-error', 'hard-error'),
    503: ('command-invalid', 'hard-error'),
    504: ('channel-error', 'hard-error'),
    505: ('unexpected-frame', 'hard-error'),
    506: ('resource-error', 'hard-error'),
    530: ('not-allowed', 'hard-error'),
    540: ('not-implemented', 'hard-error'),
    541: ('internal-error', 'hard-error'),
}

_BIT = {False: 0, True: 1}
_U16 = struct.Struct('>H')
_U32 = struct.Struct('>I')
_S_B = struct.Struct('>B')
_S_BB = struct.Struct('>BB')
_S_H = struct.Struct('>H')
_S_HH = struct.Struct('>HH')
_S_HIH = struct.Struct('>HIH')
_S_I = struct.Struct('>I')
_S_IHB = struct.Struct('>IHB')
_S_II = struct.Struct('>II')
_S_Q = struct.Struct('>Q')
_S_QB = struct.Struct('>QB')


# ==================== class connection (10)

class ConnectionStart(Method):
    """connection.start: start connection negotiation."""

    __slots__ = ('version_major', 'version_minor', 'server_properties', 'mechanisms', 'locales', )
    NAME = 'connection.start'
    LABEL = 'start connection negotiation'
    CLASS_ID = 10
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('connection.start-ok', )
    EXTENSION = False
    FIELDS = (
        Field('version_major', 'version-major', 'octet', 'octet', reserved=False, secret=False),
        Field('version_minor', 'version-minor', 'octet', 'octet', reserved=False, secret=False),
        Field('server_properties', 'server-properties', 'peer-properties', 'table', reserved=False, secret=False),
        Field('mechanisms', 'mechanisms', 'longstr', 'longstr', reserved=False, secret=False),
        Field('locales', 'locales', 'longstr', 'longstr', reserved=False, secret=False),
    )

    def __init__(self, version_major: int = 0, version_minor: int = 0, server_properties: TableInput = None, mechanisms: bytes | str | Raw | Sized = b'', locales: bytes | str | Raw | Sized = b'') -> None:
        self.version_major = version_major
        self.version_minor = version_minor
        self.server_properties = server_properties
        self.mechanisms = mechanisms
        self.locales = locales

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_BB.pack(self.version_major, self.version_minor),
                encode_table(self.server_properties, dialect, 0, 'server-properties'),
                _ls(self.mechanisms),
                _ls(self.locales),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionStart', int]:
        o = offset
        try:
            a0, a1 = _S_BB.unpack_from(buf, o)
            o += 2
            a2, o = decode_table(buf, o, dialect, 0, 'server-properties')
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e]
            o = e
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a4 = buf[o:e]
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4), o


class ConnectionStartOk(Method):
    """connection.start-ok: select security mechanism and locale."""

    __slots__ = ('client_properties', 'mechanism', 'response', 'locale', )
    NAME = 'connection.start-ok'
    LABEL = 'select security mechanism and locale'
    CLASS_ID = 10
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('client_properties', 'client-properties', 'peer-properties', 'table', reserved=False, secret=False),
        Field('mechanism', 'mechanism', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('response', 'response', 'longstr', 'longstr', reserved=False, secret=True),
        Field('locale', 'locale', 'shortstr', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, client_properties: TableInput = None, mechanism: str | bytes | Raw | Sized = '', response: bytes | str | Raw | Sized = b'', locale: str | bytes | Raw | Sized = '') -> None:
        self.client_properties = client_properties
        self.mechanism = mechanism
        self.response = response
        self.locale = locale

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                encode_table(self.client_properties, dialect, 0, 'client-properties'),
                _ss(self.mechanism),
                _ls(self.response),
                _ss(self.locale),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionStartOk', int]:
        o = offset
        try:
            a0, o = decode_table(buf, o, dialect, 0, 'client-properties')
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e]
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3), o


class ConnectionSecure(Method):
    """connection.secure: security mechanism challenge."""

    __slots__ = ('challenge', )
    NAME = 'connection.secure'
    LABEL = 'security mechanism challenge'
    CLASS_ID = 10
    METHOD_ID = 20
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('connection.secure-ok', )
    EXTENSION = False
    FIELDS = (
        Field('challenge', 'challenge', 'longstr', 'longstr', reserved=False, secret=False),
    )

    def __init__(self, challenge: bytes | str | Raw | Sized = b'') -> None:
        self.challenge = challenge

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ls(self.challenge)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionSecure', int]:
        o = offset
        try:
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e]
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ConnectionSecureOk(Method):
    """connection.secure-ok: security mechanism response."""

    __slots__ = ('response', )
    NAME = 'connection.secure-ok'
    LABEL = 'security mechanism response'
    CLASS_ID = 10
    METHOD_ID = 21
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('response', 'response', 'longstr', 'longstr', reserved=False, secret=True),
    )

    def __init__(self, response: bytes | str | Raw | Sized = b'') -> None:
        self.response = response

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ls(self.response)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionSecureOk', int]:
        o = offset
        try:
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e]
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ConnectionTune(Method):
    """connection.tune: propose connection tuning parameters."""

    __slots__ = ('channel_max', 'frame_max', 'heartbeat', )
    NAME = 'connection.tune'
    LABEL = 'propose connection tuning parameters'
    CLASS_ID = 10
    METHOD_ID = 30
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('connection.tune-ok', )
    EXTENSION = False
    FIELDS = (
        Field('channel_max', 'channel-max', 'short', 'short', reserved=False, secret=False),
        Field('frame_max', 'frame-max', 'long', 'long', reserved=False, secret=False),
        Field('heartbeat', 'heartbeat', 'short', 'short', reserved=False, secret=False),
    )

    def __init__(self, channel_max: int = 0, frame_max: int = 0, heartbeat: int = 0) -> None:
        self.channel_max = channel_max
        self.frame_max = frame_max
        self.heartbeat = heartbeat

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_HIH.pack(self.channel_max, self.frame_max, self.heartbeat)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionTune', int]:
        o = offset
        try:
            a0, a1, a2 = _S_HIH.unpack_from(buf, o)
            o += 8
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class ConnectionTuneOk(Method):
    """connection.tune-ok: negotiate connection tuning parameters."""

    __slots__ = ('channel_max', 'frame_max', 'heartbeat', )
    NAME = 'connection.tune-ok'
    LABEL = 'negotiate connection tuning parameters'
    CLASS_ID = 10
    METHOD_ID = 31
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('channel_max', 'channel-max', 'short', 'short', reserved=False, secret=False),
        Field('frame_max', 'frame-max', 'long', 'long', reserved=False, secret=False),
        Field('heartbeat', 'heartbeat', 'short', 'short', reserved=False, secret=False),
    )

    def __init__(self, channel_max: int = 0, frame_max: int = 0, heartbeat: int = 0) -> None:
        self.channel_max = channel_max
        self.frame_max = frame_max
        self.heartbeat = heartbeat

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_HIH.pack(self.channel_max, self.frame_max, self.heartbeat)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionTuneOk', int]:
        o = offset
        try:
            a0, a1, a2 = _S_HIH.unpack_from(buf, o)
            o += 8
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class ConnectionOpen(Method):
    """connection.open: open connection to virtual host."""

    __slots__ = ('virtual_host', 'reserved_1', 'reserved_2', )
    NAME = 'connection.open'
    LABEL = 'open connection to virtual host'
    CLASS_ID = 10
    METHOD_ID = 40
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('connection.open-ok', )
    EXTENSION = False
    FIELDS = (
        Field('virtual_host', 'virtual-host', 'path', 'shortstr', reserved=False, secret=False),
        Field('reserved_1', 'reserved-1', 'shortstr', 'shortstr', reserved=True, secret=False),
        Field('reserved_2', 'reserved-2', 'bit', 'bit', reserved=True, secret=False),
    )

    def __init__(self, virtual_host: str | bytes | Raw | Sized = '', reserved_1: str | bytes | Raw | Sized = '', reserved_2: bool = False) -> None:
        self.virtual_host = virtual_host
        self.reserved_1 = reserved_1
        self.reserved_2 = reserved_2

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _ss(self.virtual_host),
                _ss(self.reserved_1),
                _S_B.pack(_BIT[self.reserved_2]),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionOpen', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b2, = _S_B.unpack_from(buf, o)
            o += 1
            a2 = bool(b2 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class ConnectionOpenOk(Method):
    """connection.open-ok: signal that connection is ready."""

    __slots__ = ('reserved_1', )
    NAME = 'connection.open-ok'
    LABEL = 'signal that connection is ready'
    CLASS_ID = 10
    METHOD_ID = 41
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'shortstr', 'shortstr', reserved=True, secret=False),
    )

    def __init__(self, reserved_1: str | bytes | Raw | Sized = '') -> None:
        self.reserved_1 = reserved_1

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ss(self.reserved_1)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionOpenOk', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ConnectionClose(Method):
    """connection.close: request a connection close."""

    __slots__ = ('reply_code', 'reply_text', 'class_id', 'method_id', )
    NAME = 'connection.close'
    LABEL = 'request a connection close'
    CLASS_ID = 10
    METHOD_ID = 50
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('connection.close-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reply_code', 'reply-code', 'reply-code', 'short', reserved=False, secret=False),
        Field('reply_text', 'reply-text', 'reply-text', 'shortstr', reserved=False, secret=False),
        Field('class_id', 'class-id', 'class-id', 'short', reserved=False, secret=False),
        Field('method_id', 'method-id', 'method-id', 'short', reserved=False, secret=False),
    )

    def __init__(self, reply_code: int = 0, reply_text: str | bytes | Raw | Sized = '', class_id: int = 0, method_id: int = 0) -> None:
        self.reply_code = reply_code
        self.reply_text = reply_text
        self.class_id = class_id
        self.method_id = method_id

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reply_code),
                _ss(self.reply_text),
                _S_HH.pack(self.class_id, self.method_id),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionClose', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            a2, a3 = _S_HH.unpack_from(buf, o)
            o += 4
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3), o


class ConnectionCloseOk(Method):
    """connection.close-ok: confirm a connection close."""

    __slots__ = ()
    NAME = 'connection.close-ok'
    LABEL = 'confirm a connection close'
    CLASS_ID = 10
    METHOD_ID = 51
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionCloseOk', int]:
        return cls(), offset


class ConnectionBlocked(Method):
    """connection.blocked: indicate that connection is blocked."""

    __slots__ = ('reason', )
    NAME = 'connection.blocked'
    LABEL = 'indicate that connection is blocked'
    CLASS_ID = 10
    METHOD_ID = 60
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
        Field('reason', 'reason', 'shortstr', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, reason: str | bytes | Raw | Sized = '') -> None:
        self.reason = reason

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ss(self.reason)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionBlocked', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ConnectionUnblocked(Method):
    """connection.unblocked: indicate that connection is unblocked."""

    __slots__ = ()
    NAME = 'connection.unblocked'
    LABEL = 'indicate that connection is unblocked'
    CLASS_ID = 10
    METHOD_ID = 61
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionUnblocked', int]:
        return cls(), offset


class ConnectionUpdateSecret(Method):
    """connection.update-secret: update secret."""

    __slots__ = ('new_secret', 'reason', )
    NAME = 'connection.update-secret'
    LABEL = 'update secret'
    CLASS_ID = 10
    METHOD_ID = 70
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('connection.update-secret-ok', )
    EXTENSION = True
    FIELDS = (
        Field('new_secret', 'new-secret', 'longstr', 'longstr', reserved=False, secret=True),
        Field('reason', 'reason', 'shortstr', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, new_secret: bytes | str | Raw | Sized = b'', reason: str | bytes | Raw | Sized = '') -> None:
        self.new_secret = new_secret
        self.reason = reason

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _ls(self.new_secret),
                _ss(self.reason),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionUpdateSecret', int]:
        o = offset
        try:
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e]
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1), o


class ConnectionUpdateSecretOk(Method):
    """connection.update-secret-ok: update secret response."""

    __slots__ = ()
    NAME = 'connection.update-secret-ok'
    LABEL = 'update secret response'
    CLASS_ID = 10
    METHOD_ID = 71
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConnectionUpdateSecretOk', int]:
        return cls(), offset


# ==================== class channel (20)

class ChannelOpen(Method):
    """channel.open: open a channel for use."""

    __slots__ = ('reserved_1', )
    NAME = 'channel.open'
    LABEL = 'open a channel for use'
    CLASS_ID = 20
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('channel.open-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'shortstr', 'shortstr', reserved=True, secret=False),
    )

    def __init__(self, reserved_1: str | bytes | Raw | Sized = '') -> None:
        self.reserved_1 = reserved_1

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ss(self.reserved_1)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ChannelOpen', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ChannelOpenOk(Method):
    """channel.open-ok: signal that the channel is ready."""

    __slots__ = ('reserved_1', )
    NAME = 'channel.open-ok'
    LABEL = 'signal that the channel is ready'
    CLASS_ID = 20
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'longstr', 'longstr', reserved=True, secret=False),
    )

    def __init__(self, reserved_1: bytes | str | Raw | Sized = b'') -> None:
        self.reserved_1 = reserved_1

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ls(self.reserved_1)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ChannelOpenOk', int]:
        o = offset
        try:
            n = _U32.unpack_from(buf, o)[0]
            o += 4
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e]
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ChannelFlow(Method):
    """channel.flow: enable/disable flow from peer."""

    __slots__ = ('active', )
    NAME = 'channel.flow'
    LABEL = 'enable/disable flow from peer'
    CLASS_ID = 20
    METHOD_ID = 20
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('channel.flow-ok', )
    EXTENSION = False
    FIELDS = (
        Field('active', 'active', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, active: bool = False) -> None:
        self.active = active

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_B.pack(_BIT[self.active])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ChannelFlow', int]:
        o = offset
        try:
            b0, = _S_B.unpack_from(buf, o)
            o += 1
            a0 = bool(b0 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ChannelFlowOk(Method):
    """channel.flow-ok: confirm a flow method."""

    __slots__ = ('active', )
    NAME = 'channel.flow-ok'
    LABEL = 'confirm a flow method'
    CLASS_ID = 20
    METHOD_ID = 21
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('active', 'active', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, active: bool = False) -> None:
        self.active = active

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_B.pack(_BIT[self.active])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ChannelFlowOk', int]:
        o = offset
        try:
            b0, = _S_B.unpack_from(buf, o)
            o += 1
            a0 = bool(b0 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ChannelClose(Method):
    """channel.close: request a channel close."""

    __slots__ = ('reply_code', 'reply_text', 'class_id', 'method_id', )
    NAME = 'channel.close'
    LABEL = 'request a channel close'
    CLASS_ID = 20
    METHOD_ID = 40
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('channel.close-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reply_code', 'reply-code', 'reply-code', 'short', reserved=False, secret=False),
        Field('reply_text', 'reply-text', 'reply-text', 'shortstr', reserved=False, secret=False),
        Field('class_id', 'class-id', 'class-id', 'short', reserved=False, secret=False),
        Field('method_id', 'method-id', 'method-id', 'short', reserved=False, secret=False),
    )

    def __init__(self, reply_code: int = 0, reply_text: str | bytes | Raw | Sized = '', class_id: int = 0, method_id: int = 0) -> None:
        self.reply_code = reply_code
        self.reply_text = reply_text
        self.class_id = class_id
        self.method_id = method_id

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reply_code),
                _ss(self.reply_text),
                _S_HH.pack(self.class_id, self.method_id),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ChannelClose', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            a2, a3 = _S_HH.unpack_from(buf, o)
            o += 4
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3), o


class ChannelCloseOk(Method):
    """channel.close-ok: confirm a channel close."""

    __slots__ = ()
    NAME = 'channel.close-ok'
    LABEL = 'confirm a channel close'
    CLASS_ID = 20
    METHOD_ID = 41
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ChannelCloseOk', int]:
        return cls(), offset


# ==================== class exchange (40)

class ExchangeDeclare(Method):
    """exchange.declare: verify exchange exists, create if needed."""

    __slots__ = ('reserved_1', 'exchange', 'type', 'passive', 'durable', 'auto_delete', 'internal', 'no_wait', 'arguments', )
    NAME = 'exchange.declare'
    LABEL = 'verify exchange exists, create if needed'
    CLASS_ID = 40
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('exchange.declare-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('type', 'type', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('passive', 'passive', 'bit', 'bit', reserved=False, secret=False),
        Field('durable', 'durable', 'bit', 'bit', reserved=False, secret=False),
        Field('auto_delete', 'auto-delete', 'bit', 'bit', reserved=False, secret=False),
        Field('internal', 'internal', 'bit', 'bit', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, exchange: str | bytes | Raw | Sized = '', type: str | bytes | Raw | Sized = '', passive: bool = False, durable: bool = False, auto_delete: bool = False, internal: bool = False, no_wait: bool = False, arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.exchange = exchange
        self.type = type
        self.passive = passive
        self.durable = durable
        self.auto_delete = auto_delete
        self.internal = internal
        self.no_wait = no_wait
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.exchange),
                _ss(self.type),
                _S_B.pack(_BIT[self.passive] | _BIT[self.durable] << 1 | _BIT[self.auto_delete] << 2 | _BIT[self.internal] << 3 | _BIT[self.no_wait] << 4),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeDeclare', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b3, = _S_B.unpack_from(buf, o)
            o += 1
            a3 = bool(b3 & 1)
            a4 = bool(b3 & 2)
            a5 = bool(b3 & 4)
            a6 = bool(b3 & 8)
            a7 = bool(b3 & 16)
            a8, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5, a6, a7, a8), o


class ExchangeDeclareOk(Method):
    """exchange.declare-ok: confirm exchange declaration."""

    __slots__ = ()
    NAME = 'exchange.declare-ok'
    LABEL = 'confirm exchange declaration'
    CLASS_ID = 40
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeDeclareOk', int]:
        return cls(), offset


class ExchangeDelete(Method):
    """exchange.delete: delete an exchange."""

    __slots__ = ('reserved_1', 'exchange', 'if_unused', 'no_wait', )
    NAME = 'exchange.delete'
    LABEL = 'delete an exchange'
    CLASS_ID = 40
    METHOD_ID = 20
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('exchange.delete-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('if_unused', 'if-unused', 'bit', 'bit', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, exchange: str | bytes | Raw | Sized = '', if_unused: bool = False, no_wait: bool = False) -> None:
        self.reserved_1 = reserved_1
        self.exchange = exchange
        self.if_unused = if_unused
        self.no_wait = no_wait

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.exchange),
                _S_B.pack(_BIT[self.if_unused] | _BIT[self.no_wait] << 1),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeDelete', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b2, = _S_B.unpack_from(buf, o)
            o += 1
            a2 = bool(b2 & 1)
            a3 = bool(b2 & 2)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3), o


class ExchangeDeleteOk(Method):
    """exchange.delete-ok: confirm deletion of an exchange."""

    __slots__ = ()
    NAME = 'exchange.delete-ok'
    LABEL = 'confirm deletion of an exchange'
    CLASS_ID = 40
    METHOD_ID = 21
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeDeleteOk', int]:
        return cls(), offset


class ExchangeBind(Method):
    """exchange.bind: bind exchange to an exchange."""

    __slots__ = ('reserved_1', 'destination', 'source', 'routing_key', 'no_wait', 'arguments', )
    NAME = 'exchange.bind'
    LABEL = 'bind exchange to an exchange'
    CLASS_ID = 40
    METHOD_ID = 30
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('exchange.bind-ok', )
    EXTENSION = True
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('destination', 'destination', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('source', 'source', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, destination: str | bytes | Raw | Sized = '', source: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '', no_wait: bool = False, arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.destination = destination
        self.source = source
        self.routing_key = routing_key
        self.no_wait = no_wait
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.destination),
                _ss(self.source),
                _ss(self.routing_key),
                _S_B.pack(_BIT[self.no_wait]),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeBind', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b4, = _S_B.unpack_from(buf, o)
            o += 1
            a4 = bool(b4 & 1)
            a5, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5), o


class ExchangeBindOk(Method):
    """exchange.bind-ok: confirm bind successful."""

    __slots__ = ()
    NAME = 'exchange.bind-ok'
    LABEL = 'confirm bind successful'
    CLASS_ID = 40
    METHOD_ID = 31
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeBindOk', int]:
        return cls(), offset


class ExchangeUnbind(Method):
    """exchange.unbind: unbind an exchange from an exchange."""

    __slots__ = ('reserved_1', 'destination', 'source', 'routing_key', 'no_wait', 'arguments', )
    NAME = 'exchange.unbind'
    LABEL = 'unbind an exchange from an exchange'
    CLASS_ID = 40
    METHOD_ID = 40
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('exchange.unbind-ok', )
    EXTENSION = True
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('destination', 'destination', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('source', 'source', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, destination: str | bytes | Raw | Sized = '', source: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '', no_wait: bool = False, arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.destination = destination
        self.source = source
        self.routing_key = routing_key
        self.no_wait = no_wait
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.destination),
                _ss(self.source),
                _ss(self.routing_key),
                _S_B.pack(_BIT[self.no_wait]),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeUnbind', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b4, = _S_B.unpack_from(buf, o)
            o += 1
            a4 = bool(b4 & 1)
            a5, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5), o


class ExchangeUnbindOk(Method):
    """exchange.unbind-ok: confirm unbind successful."""

    __slots__ = ()
    NAME = 'exchange.unbind-ok'
    LABEL = 'confirm unbind successful'
    CLASS_ID = 40
    METHOD_ID = 51
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ExchangeUnbindOk', int]:
        return cls(), offset


# ==================== class queue (50)

class QueueDeclare(Method):
    """queue.declare: declare queue, create if needed."""

    __slots__ = ('reserved_1', 'queue', 'passive', 'durable', 'exclusive', 'auto_delete', 'no_wait', 'arguments', )
    NAME = 'queue.declare'
    LABEL = 'declare queue, create if needed'
    CLASS_ID = 50
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('queue.declare-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('passive', 'passive', 'bit', 'bit', reserved=False, secret=False),
        Field('durable', 'durable', 'bit', 'bit', reserved=False, secret=False),
        Field('exclusive', 'exclusive', 'bit', 'bit', reserved=False, secret=False),
        Field('auto_delete', 'auto-delete', 'bit', 'bit', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', passive: bool = False, durable: bool = False, exclusive: bool = False, auto_delete: bool = False, no_wait: bool = False, arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.passive = passive
        self.durable = durable
        self.exclusive = exclusive
        self.auto_delete = auto_delete
        self.no_wait = no_wait
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _S_B.pack(_BIT[self.passive] | _BIT[self.durable] << 1 | _BIT[self.exclusive] << 2 | _BIT[self.auto_delete] << 3 | _BIT[self.no_wait] << 4),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueDeclare', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b2, = _S_B.unpack_from(buf, o)
            o += 1
            a2 = bool(b2 & 1)
            a3 = bool(b2 & 2)
            a4 = bool(b2 & 4)
            a5 = bool(b2 & 8)
            a6 = bool(b2 & 16)
            a7, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5, a6, a7), o


class QueueDeclareOk(Method):
    """queue.declare-ok: confirms a queue definition."""

    __slots__ = ('queue', 'message_count', 'consumer_count', )
    NAME = 'queue.declare-ok'
    LABEL = 'confirms a queue definition'
    CLASS_ID = 50
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('message_count', 'message-count', 'message-count', 'long', reserved=False, secret=False),
        Field('consumer_count', 'consumer-count', 'long', 'long', reserved=False, secret=False),
    )

    def __init__(self, queue: str | bytes | Raw | Sized = '', message_count: int = 0, consumer_count: int = 0) -> None:
        self.queue = queue
        self.message_count = message_count
        self.consumer_count = consumer_count

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _ss(self.queue),
                _S_II.pack(self.message_count, self.consumer_count),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueDeclareOk', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            a1, a2 = _S_II.unpack_from(buf, o)
            o += 8
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class QueueBind(Method):
    """queue.bind: bind queue to an exchange."""

    __slots__ = ('reserved_1', 'queue', 'exchange', 'routing_key', 'no_wait', 'arguments', )
    NAME = 'queue.bind'
    LABEL = 'bind queue to an exchange'
    CLASS_ID = 50
    METHOD_ID = 20
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('queue.bind-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', exchange: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '', no_wait: bool = False, arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.exchange = exchange
        self.routing_key = routing_key
        self.no_wait = no_wait
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _ss(self.exchange),
                _ss(self.routing_key),
                _S_B.pack(_BIT[self.no_wait]),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueBind', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b4, = _S_B.unpack_from(buf, o)
            o += 1
            a4 = bool(b4 & 1)
            a5, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5), o


class QueueBindOk(Method):
    """queue.bind-ok: confirm bind successful."""

    __slots__ = ()
    NAME = 'queue.bind-ok'
    LABEL = 'confirm bind successful'
    CLASS_ID = 50
    METHOD_ID = 21
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueBindOk', int]:
        return cls(), offset


class QueueUnbind(Method):
    """queue.unbind: unbind a queue from an exchange."""

    __slots__ = ('reserved_1', 'queue', 'exchange', 'routing_key', 'arguments', )
    NAME = 'queue.unbind'
    LABEL = 'unbind a queue from an exchange'
    CLASS_ID = 50
    METHOD_ID = 50
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('queue.unbind-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', exchange: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '', arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.exchange = exchange
        self.routing_key = routing_key
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _ss(self.exchange),
                _ss(self.routing_key),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueUnbind', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            a4, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4), o


class QueueUnbindOk(Method):
    """queue.unbind-ok: confirm unbind successful."""

    __slots__ = ()
    NAME = 'queue.unbind-ok'
    LABEL = 'confirm unbind successful'
    CLASS_ID = 50
    METHOD_ID = 51
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueUnbindOk', int]:
        return cls(), offset


class QueuePurge(Method):
    """queue.purge: purge a queue."""

    __slots__ = ('reserved_1', 'queue', 'no_wait', )
    NAME = 'queue.purge'
    LABEL = 'purge a queue'
    CLASS_ID = 50
    METHOD_ID = 30
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('queue.purge-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', no_wait: bool = False) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.no_wait = no_wait

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _S_B.pack(_BIT[self.no_wait]),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueuePurge', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b2, = _S_B.unpack_from(buf, o)
            o += 1
            a2 = bool(b2 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class QueuePurgeOk(Method):
    """queue.purge-ok: confirms a queue purge."""

    __slots__ = ('message_count', )
    NAME = 'queue.purge-ok'
    LABEL = 'confirms a queue purge'
    CLASS_ID = 50
    METHOD_ID = 31
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('message_count', 'message-count', 'message-count', 'long', reserved=False, secret=False),
    )

    def __init__(self, message_count: int = 0) -> None:
        self.message_count = message_count

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_I.pack(self.message_count)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueuePurgeOk', int]:
        o = offset
        try:
            a0, = _S_I.unpack_from(buf, o)
            o += 4
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class QueueDelete(Method):
    """queue.delete: delete a queue."""

    __slots__ = ('reserved_1', 'queue', 'if_unused', 'if_empty', 'no_wait', )
    NAME = 'queue.delete'
    LABEL = 'delete a queue'
    CLASS_ID = 50
    METHOD_ID = 40
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('queue.delete-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('if_unused', 'if-unused', 'bit', 'bit', reserved=False, secret=False),
        Field('if_empty', 'if-empty', 'bit', 'bit', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', if_unused: bool = False, if_empty: bool = False, no_wait: bool = False) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.if_unused = if_unused
        self.if_empty = if_empty
        self.no_wait = no_wait

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _S_B.pack(_BIT[self.if_unused] | _BIT[self.if_empty] << 1 | _BIT[self.no_wait] << 2),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueDelete', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b2, = _S_B.unpack_from(buf, o)
            o += 1
            a2 = bool(b2 & 1)
            a3 = bool(b2 & 2)
            a4 = bool(b2 & 4)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4), o


class QueueDeleteOk(Method):
    """queue.delete-ok: confirm deletion of a queue."""

    __slots__ = ('message_count', )
    NAME = 'queue.delete-ok'
    LABEL = 'confirm deletion of a queue'
    CLASS_ID = 50
    METHOD_ID = 41
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('message_count', 'message-count', 'message-count', 'long', reserved=False, secret=False),
    )

    def __init__(self, message_count: int = 0) -> None:
        self.message_count = message_count

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_I.pack(self.message_count)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['QueueDeleteOk', int]:
        o = offset
        try:
            a0, = _S_I.unpack_from(buf, o)
            o += 4
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


# ==================== class basic (60)

class BasicQos(Method):
    """basic.qos: specify quality of service."""

    __slots__ = ('prefetch_size', 'prefetch_count', 'global_', )
    NAME = 'basic.qos'
    LABEL = 'specify quality of service'
    CLASS_ID = 60
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('basic.qos-ok', )
    EXTENSION = False
    FIELDS = (
        Field('prefetch_size', 'prefetch-size', 'long', 'long', reserved=False, secret=False),
        Field('prefetch_count', 'prefetch-count', 'short', 'short', reserved=False, secret=False),
        Field('global_', 'global', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, prefetch_size: int = 0, prefetch_count: int = 0, global_: bool = False) -> None:
        self.prefetch_size = prefetch_size
        self.prefetch_count = prefetch_count
        self.global_ = global_

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_IHB.pack(self.prefetch_size, self.prefetch_count, _BIT[self.global_])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicQos', int]:
        o = offset
        try:
            a0, a1, b2 = _S_IHB.unpack_from(buf, o)
            o += 7
            a2 = bool(b2 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class BasicQosOk(Method):
    """basic.qos-ok: confirm the requested qos."""

    __slots__ = ()
    NAME = 'basic.qos-ok'
    LABEL = 'confirm the requested qos'
    CLASS_ID = 60
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicQosOk', int]:
        return cls(), offset


class BasicConsume(Method):
    """basic.consume: start a queue consumer."""

    __slots__ = ('reserved_1', 'queue', 'consumer_tag', 'no_local', 'no_ack', 'exclusive', 'no_wait', 'arguments', )
    NAME = 'basic.consume'
    LABEL = 'start a queue consumer'
    CLASS_ID = 60
    METHOD_ID = 20
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('basic.consume-ok', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('consumer_tag', 'consumer-tag', 'consumer-tag', 'shortstr', reserved=False, secret=False),
        Field('no_local', 'no-local', 'no-local', 'bit', reserved=False, secret=False),
        Field('no_ack', 'no-ack', 'no-ack', 'bit', reserved=False, secret=False),
        Field('exclusive', 'exclusive', 'bit', 'bit', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
        Field('arguments', 'arguments', 'table', 'table', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', consumer_tag: str | bytes | Raw | Sized = '', no_local: bool = False, no_ack: bool = False, exclusive: bool = False, no_wait: bool = False, arguments: TableInput = None) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.consumer_tag = consumer_tag
        self.no_local = no_local
        self.no_ack = no_ack
        self.exclusive = exclusive
        self.no_wait = no_wait
        self.arguments = arguments

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _ss(self.consumer_tag),
                _S_B.pack(_BIT[self.no_local] | _BIT[self.no_ack] << 1 | _BIT[self.exclusive] << 2 | _BIT[self.no_wait] << 3),
                encode_table(self.arguments, dialect, 0, 'arguments'),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicConsume', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b3, = _S_B.unpack_from(buf, o)
            o += 1
            a3 = bool(b3 & 1)
            a4 = bool(b3 & 2)
            a5 = bool(b3 & 4)
            a6 = bool(b3 & 8)
            a7, o = decode_table(buf, o, dialect, 0, 'arguments')
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5, a6, a7), o


class BasicConsumeOk(Method):
    """basic.consume-ok: confirm a new consumer."""

    __slots__ = ('consumer_tag', )
    NAME = 'basic.consume-ok'
    LABEL = 'confirm a new consumer'
    CLASS_ID = 60
    METHOD_ID = 21
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('consumer_tag', 'consumer-tag', 'consumer-tag', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, consumer_tag: str | bytes | Raw | Sized = '') -> None:
        self.consumer_tag = consumer_tag

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ss(self.consumer_tag)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicConsumeOk', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class BasicCancel(Method):
    """basic.cancel: end a queue consumer."""

    __slots__ = ('consumer_tag', 'no_wait', )
    NAME = 'basic.cancel'
    LABEL = 'end a queue consumer'
    CLASS_ID = 60
    METHOD_ID = 30
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('basic.cancel-ok', )
    EXTENSION = False
    FIELDS = (
        Field('consumer_tag', 'consumer-tag', 'consumer-tag', 'shortstr', reserved=False, secret=False),
        Field('no_wait', 'no-wait', 'no-wait', 'bit', reserved=False, secret=False),
    )

    def __init__(self, consumer_tag: str | bytes | Raw | Sized = '', no_wait: bool = False) -> None:
        self.consumer_tag = consumer_tag
        self.no_wait = no_wait

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _ss(self.consumer_tag),
                _S_B.pack(_BIT[self.no_wait]),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicCancel', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b1, = _S_B.unpack_from(buf, o)
            o += 1
            a1 = bool(b1 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1), o


class BasicCancelOk(Method):
    """basic.cancel-ok: confirm a cancelled consumer."""

    __slots__ = ('consumer_tag', )
    NAME = 'basic.cancel-ok'
    LABEL = 'confirm a cancelled consumer'
    CLASS_ID = 60
    METHOD_ID = 31
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('consumer_tag', 'consumer-tag', 'consumer-tag', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, consumer_tag: str | bytes | Raw | Sized = '') -> None:
        self.consumer_tag = consumer_tag

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ss(self.consumer_tag)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicCancelOk', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class BasicPublish(Method):
    """basic.publish: publish a message."""

    __slots__ = ('reserved_1', 'exchange', 'routing_key', 'mandatory', 'immediate', )
    NAME = 'basic.publish'
    LABEL = 'publish a message'
    CLASS_ID = 60
    METHOD_ID = 40
    SYNCHRONOUS = False
    CONTENT = True
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('mandatory', 'mandatory', 'bit', 'bit', reserved=False, secret=False),
        Field('immediate', 'immediate', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, exchange: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '', mandatory: bool = False, immediate: bool = False) -> None:
        self.reserved_1 = reserved_1
        self.exchange = exchange
        self.routing_key = routing_key
        self.mandatory = mandatory
        self.immediate = immediate

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.exchange),
                _ss(self.routing_key),
                _S_B.pack(_BIT[self.mandatory] | _BIT[self.immediate] << 1),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicPublish', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b3, = _S_B.unpack_from(buf, o)
            o += 1
            a3 = bool(b3 & 1)
            a4 = bool(b3 & 2)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4), o


class BasicReturn(Method):
    """basic.return: return a failed message."""

    __slots__ = ('reply_code', 'reply_text', 'exchange', 'routing_key', )
    NAME = 'basic.return'
    LABEL = 'return a failed message'
    CLASS_ID = 60
    METHOD_ID = 50
    SYNCHRONOUS = False
    CONTENT = True
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('reply_code', 'reply-code', 'reply-code', 'short', reserved=False, secret=False),
        Field('reply_text', 'reply-text', 'reply-text', 'shortstr', reserved=False, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, reply_code: int = 0, reply_text: str | bytes | Raw | Sized = '', exchange: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '') -> None:
        self.reply_code = reply_code
        self.reply_text = reply_text
        self.exchange = exchange
        self.routing_key = routing_key

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reply_code),
                _ss(self.reply_text),
                _ss(self.exchange),
                _ss(self.routing_key),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicReturn', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3), o


class BasicDeliver(Method):
    """basic.deliver: notify the client of a consumer message."""

    __slots__ = ('consumer_tag', 'delivery_tag', 'redelivered', 'exchange', 'routing_key', )
    NAME = 'basic.deliver'
    LABEL = 'notify the client of a consumer message'
    CLASS_ID = 60
    METHOD_ID = 60
    SYNCHRONOUS = False
    CONTENT = True
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('consumer_tag', 'consumer-tag', 'consumer-tag', 'shortstr', reserved=False, secret=False),
        Field('delivery_tag', 'delivery-tag', 'delivery-tag', 'longlong', reserved=False, secret=False),
        Field('redelivered', 'redelivered', 'redelivered', 'bit', reserved=False, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
    )

    def __init__(self, consumer_tag: str | bytes | Raw | Sized = '', delivery_tag: int = 0, redelivered: bool = False, exchange: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '') -> None:
        self.consumer_tag = consumer_tag
        self.delivery_tag = delivery_tag
        self.redelivered = redelivered
        self.exchange = exchange
        self.routing_key = routing_key

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _ss(self.consumer_tag),
                _S_QB.pack(self.delivery_tag, _BIT[self.redelivered]),
                _ss(self.exchange),
                _ss(self.routing_key),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicDeliver', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            a1, b2 = _S_QB.unpack_from(buf, o)
            o += 9
            a2 = bool(b2 & 1)
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a4 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4), o


class BasicGet(Method):
    """basic.get: direct access to a queue."""

    __slots__ = ('reserved_1', 'queue', 'no_ack', )
    NAME = 'basic.get'
    LABEL = 'direct access to a queue'
    CLASS_ID = 60
    METHOD_ID = 70
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('basic.get-ok', 'basic.get-empty', )
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'short', 'short', reserved=True, secret=False),
        Field('queue', 'queue', 'queue-name', 'shortstr', reserved=False, secret=False),
        Field('no_ack', 'no-ack', 'no-ack', 'bit', reserved=False, secret=False),
    )

    def __init__(self, reserved_1: int = 0, queue: str | bytes | Raw | Sized = '', no_ack: bool = False) -> None:
        self.reserved_1 = reserved_1
        self.queue = queue
        self.no_ack = no_ack

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_H.pack(self.reserved_1),
                _ss(self.queue),
                _S_B.pack(_BIT[self.no_ack]),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicGet', int]:
        o = offset
        try:
            a0, = _S_H.unpack_from(buf, o)
            o += 2
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a1 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            b2, = _S_B.unpack_from(buf, o)
            o += 1
            a2 = bool(b2 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class BasicGetOk(Method):
    """basic.get-ok: provide client with a message."""

    __slots__ = ('delivery_tag', 'redelivered', 'exchange', 'routing_key', 'message_count', )
    NAME = 'basic.get-ok'
    LABEL = 'provide client with a message'
    CLASS_ID = 60
    METHOD_ID = 71
    SYNCHRONOUS = True
    CONTENT = True
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('delivery_tag', 'delivery-tag', 'delivery-tag', 'longlong', reserved=False, secret=False),
        Field('redelivered', 'redelivered', 'redelivered', 'bit', reserved=False, secret=False),
        Field('exchange', 'exchange', 'exchange-name', 'shortstr', reserved=False, secret=False),
        Field('routing_key', 'routing-key', 'shortstr', 'shortstr', reserved=False, secret=False),
        Field('message_count', 'message-count', 'message-count', 'long', reserved=False, secret=False),
    )

    def __init__(self, delivery_tag: int = 0, redelivered: bool = False, exchange: str | bytes | Raw | Sized = '', routing_key: str | bytes | Raw | Sized = '', message_count: int = 0) -> None:
        self.delivery_tag = delivery_tag
        self.redelivered = redelivered
        self.exchange = exchange
        self.routing_key = routing_key
        self.message_count = message_count

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return b''.join((
                _S_QB.pack(self.delivery_tag, _BIT[self.redelivered]),
                _ss(self.exchange),
                _ss(self.routing_key),
                _S_I.pack(self.message_count),
            ))
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicGetOk', int]:
        o = offset
        try:
            a0, b1 = _S_QB.unpack_from(buf, o)
            o += 9
            a1 = bool(b1 & 1)
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a2 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a3 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
            a4, = _S_I.unpack_from(buf, o)
            o += 4
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4), o


class BasicGetEmpty(Method):
    """basic.get-empty: indicate no messages available."""

    __slots__ = ('reserved_1', )
    NAME = 'basic.get-empty'
    LABEL = 'indicate no messages available'
    CLASS_ID = 60
    METHOD_ID = 72
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('reserved_1', 'reserved-1', 'shortstr', 'shortstr', reserved=True, secret=False),
    )

    def __init__(self, reserved_1: str | bytes | Raw | Sized = '') -> None:
        self.reserved_1 = reserved_1

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _ss(self.reserved_1)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicGetEmpty', int]:
        o = offset
        try:
            n = buf[o]
            o += 1
            e = o + n
            if e > len(buf):
                raise IndexError
            a0 = buf[o:e].decode('utf-8', 'surrogateescape')
            o = e
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class BasicAck(Method):
    """basic.ack: acknowledge one or more messages."""

    __slots__ = ('delivery_tag', 'multiple', )
    NAME = 'basic.ack'
    LABEL = 'acknowledge one or more messages'
    CLASS_ID = 60
    METHOD_ID = 80
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('delivery_tag', 'delivery-tag', 'delivery-tag', 'longlong', reserved=False, secret=False),
        Field('multiple', 'multiple', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, delivery_tag: int = 0, multiple: bool = False) -> None:
        self.delivery_tag = delivery_tag
        self.multiple = multiple

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_QB.pack(self.delivery_tag, _BIT[self.multiple])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicAck', int]:
        o = offset
        try:
            a0, b1 = _S_QB.unpack_from(buf, o)
            o += 9
            a1 = bool(b1 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1), o


class BasicReject(Method):
    """basic.reject: reject an incoming message."""

    __slots__ = ('delivery_tag', 'requeue', )
    NAME = 'basic.reject'
    LABEL = 'reject an incoming message'
    CLASS_ID = 60
    METHOD_ID = 90
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('delivery_tag', 'delivery-tag', 'delivery-tag', 'longlong', reserved=False, secret=False),
        Field('requeue', 'requeue', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, delivery_tag: int = 0, requeue: bool = False) -> None:
        self.delivery_tag = delivery_tag
        self.requeue = requeue

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_QB.pack(self.delivery_tag, _BIT[self.requeue])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicReject', int]:
        o = offset
        try:
            a0, b1 = _S_QB.unpack_from(buf, o)
            o += 9
            a1 = bool(b1 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1), o


class BasicRecoverAsync(Method):
    """basic.recover-async: redeliver unacknowledged messages."""

    __slots__ = ('requeue', )
    NAME = 'basic.recover-async'
    LABEL = 'redeliver unacknowledged messages'
    CLASS_ID = 60
    METHOD_ID = 100
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('requeue', 'requeue', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, requeue: bool = False) -> None:
        self.requeue = requeue

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_B.pack(_BIT[self.requeue])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicRecoverAsync', int]:
        o = offset
        try:
            b0, = _S_B.unpack_from(buf, o)
            o += 1
            a0 = bool(b0 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class BasicRecover(Method):
    """basic.recover: redeliver unacknowledged messages."""

    __slots__ = ('requeue', )
    NAME = 'basic.recover'
    LABEL = 'redeliver unacknowledged messages'
    CLASS_ID = 60
    METHOD_ID = 110
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
        Field('requeue', 'requeue', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, requeue: bool = False) -> None:
        self.requeue = requeue

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_B.pack(_BIT[self.requeue])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicRecover', int]:
        o = offset
        try:
            b0, = _S_B.unpack_from(buf, o)
            o += 1
            a0 = bool(b0 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class BasicRecoverOk(Method):
    """basic.recover-ok: confirm recovery."""

    __slots__ = ()
    NAME = 'basic.recover-ok'
    LABEL = 'confirm recovery'
    CLASS_ID = 60
    METHOD_ID = 111
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicRecoverOk', int]:
        return cls(), offset


class BasicNack(Method):
    """basic.nack: reject one or more incoming messages."""

    __slots__ = ('delivery_tag', 'multiple', 'requeue', )
    NAME = 'basic.nack'
    LABEL = 'reject one or more incoming messages'
    CLASS_ID = 60
    METHOD_ID = 120
    SYNCHRONOUS = False
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
        Field('delivery_tag', 'delivery-tag', 'delivery-tag', 'longlong', reserved=False, secret=False),
        Field('multiple', 'multiple', 'bit', 'bit', reserved=False, secret=False),
        Field('requeue', 'requeue', 'bit', 'bit', reserved=False, secret=False),
    )

    def __init__(self, delivery_tag: int = 0, multiple: bool = False, requeue: bool = False) -> None:
        self.delivery_tag = delivery_tag
        self.multiple = multiple
        self.requeue = requeue

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_QB.pack(self.delivery_tag, _BIT[self.multiple] | _BIT[self.requeue] << 1)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['BasicNack', int]:
        o = offset
        try:
            a0, b1 = _S_QB.unpack_from(buf, o)
            o += 9
            a1 = bool(b1 & 1)
            a2 = bool(b1 & 2)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0, a1, a2), o


class BasicProperties(Properties):
    """Content header properties of class basic; None means absent."""

    __slots__ = ('content_type', 'content_encoding', 'headers', 'delivery_mode', 'priority', 'correlation_id', 'reply_to', 'expiration', 'message_id', 'timestamp', 'type', 'user_id', 'app_id', 'reserved', )
    CLASS_ID = 60
    CLASS_NAME = 'basic'
    FIELDS = (
        Field('content_type', 'content-type', 'shortstr', 'shortstr'),
        Field('content_encoding', 'content-encoding', 'shortstr', 'shortstr'),
        Field('headers', 'headers', 'table', 'table'),
        Field('delivery_mode', 'delivery-mode', 'octet', 'octet'),
        Field('priority', 'priority', 'octet', 'octet'),
        Field('correlation_id', 'correlation-id', 'shortstr', 'shortstr'),
        Field('reply_to', 'reply-to', 'shortstr', 'shortstr'),
        Field('expiration', 'expiration', 'shortstr', 'shortstr'),
        Field('message_id', 'message-id', 'shortstr', 'shortstr'),
        Field('timestamp', 'timestamp', 'timestamp', 'timestamp'),
        Field('type', 'type', 'shortstr', 'shortstr'),
        Field('user_id', 'user-id', 'shortstr', 'shortstr'),
        Field('app_id', 'app-id', 'shortstr', 'shortstr'),
        Field('reserved', 'reserved', 'shortstr', 'shortstr'),
    )

    def __init__(self, content_type: str | bytes | Raw | Sized | None = None, content_encoding: str | bytes | Raw | Sized | None = None, headers: TableInput | None = None, delivery_mode: int | None = None, priority: int | None = None, correlation_id: str | bytes | Raw | Sized | None = None, reply_to: str | bytes | Raw | Sized | None = None, expiration: str | bytes | Raw | Sized | None = None, message_id: str | bytes | Raw | Sized | None = None, timestamp: int | None = None, type: str | bytes | Raw | Sized | None = None, user_id: str | bytes | Raw | Sized | None = None, app_id: str | bytes | Raw | Sized | None = None, reserved: str | bytes | Raw | Sized | None = None) -> None:
        self.content_type = content_type
        self.content_encoding = content_encoding
        self.headers = headers
        self.delivery_mode = delivery_mode
        self.priority = priority
        self.correlation_id = correlation_id
        self.reply_to = reply_to
        self.expiration = expiration
        self.message_id = message_id
        self.timestamp = timestamp
        self.type = type
        self.user_id = user_id
        self.app_id = app_id
        self.reserved = reserved

    def encode(self, dialect: Dialect = SPEC, flags: list[int] | None = None) -> bytes:
        if flags is not None:
            return generic_encode_properties(self, dialect, flags)
        try:
            f = 0
            parts = []
            v = self.content_type
            if v is not None:
                f |= 0x8000
                parts.append(_ss(v))
            v = self.content_encoding
            if v is not None:
                f |= 0x4000
                parts.append(_ss(v))
            v = self.headers
            if v is not None:
                f |= 0x2000
                parts.append(encode_table(v, dialect, 0, 'headers'))
            v = self.delivery_mode
            if v is not None:
                f |= 0x1000
                parts.append(_S_B.pack(v))
            v = self.priority
            if v is not None:
                f |= 0x0800
                parts.append(_S_B.pack(v))
            v = self.correlation_id
            if v is not None:
                f |= 0x0400
                parts.append(_ss(v))
            v = self.reply_to
            if v is not None:
                f |= 0x0200
                parts.append(_ss(v))
            v = self.expiration
            if v is not None:
                f |= 0x0100
                parts.append(_ss(v))
            v = self.message_id
            if v is not None:
                f |= 0x0080
                parts.append(_ss(v))
            v = self.timestamp
            if v is not None:
                f |= 0x0040
                parts.append(_S_Q.pack(v))
            v = self.type
            if v is not None:
                f |= 0x0020
                parts.append(_ss(v))
            v = self.user_id
            if v is not None:
                f |= 0x0010
                parts.append(_ss(v))
            v = self.app_id
            if v is not None:
                f |= 0x0008
                parts.append(_ss(v))
            v = self.reserved
            if v is not None:
                f |= 0x0004
                parts.append(_ss(v))
            return _U16.pack(f) + b''.join(parts)
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_properties(self, dialect, None)

    @classmethod
    def decode(cls, buf: bytes, offset: int, dialect: Dialect = SPEC) -> tuple['BasicProperties', int]:
        o = offset
        try:
            f = _U16.unpack_from(buf, o)[0]
            o += 2
            if f & 0x0003:  # continuation or undefined property bits
                raise IndexError
            if f & 0x8000:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a0 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a0 = None
            if f & 0x4000:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a1 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a1 = None
            if f & 0x2000:
                a2, o = decode_table(buf, o, dialect, 0, 'headers')
            else:
                a2 = None
            if f & 0x1000:
                a3, = _S_B.unpack_from(buf, o)
                o += 1
            else:
                a3 = None
            if f & 0x0800:
                a4, = _S_B.unpack_from(buf, o)
                o += 1
            else:
                a4 = None
            if f & 0x0400:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a5 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a5 = None
            if f & 0x0200:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a6 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a6 = None
            if f & 0x0100:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a7 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a7 = None
            if f & 0x0080:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a8 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a8 = None
            if f & 0x0040:
                a9, = _S_Q.unpack_from(buf, o)
                o += 8
            else:
                a9 = None
            if f & 0x0020:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a10 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a10 = None
            if f & 0x0010:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a11 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a11 = None
            if f & 0x0008:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a12 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a12 = None
            if f & 0x0004:
                n = buf[o]
                o += 1
                e = o + n
                if e > len(buf):
                    raise IndexError
                a13 = buf[o:e].decode('utf-8', 'surrogateescape')
                o = e
            else:
                a13 = None
        except (IndexError, struct.error, DecodeError):
            return generic_decode_properties(cls, buf, offset, dialect)
        return cls(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13), o


# ==================== class tx (90)

class TxSelect(Method):
    """tx.select: select standard transaction mode."""

    __slots__ = ()
    NAME = 'tx.select'
    LABEL = 'select standard transaction mode'
    CLASS_ID = 90
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('tx.select-ok', )
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['TxSelect', int]:
        return cls(), offset


class TxSelectOk(Method):
    """tx.select-ok: confirm transaction mode."""

    __slots__ = ()
    NAME = 'tx.select-ok'
    LABEL = 'confirm transaction mode'
    CLASS_ID = 90
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['TxSelectOk', int]:
        return cls(), offset


class TxCommit(Method):
    """tx.commit: commit the current transaction."""

    __slots__ = ()
    NAME = 'tx.commit'
    LABEL = 'commit the current transaction'
    CLASS_ID = 90
    METHOD_ID = 20
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('tx.commit-ok', )
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['TxCommit', int]:
        return cls(), offset


class TxCommitOk(Method):
    """tx.commit-ok: confirm a successful commit."""

    __slots__ = ()
    NAME = 'tx.commit-ok'
    LABEL = 'confirm a successful commit'
    CLASS_ID = 90
    METHOD_ID = 21
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['TxCommitOk', int]:
        return cls(), offset


class TxRollback(Method):
    """tx.rollback: abandon the current transaction."""

    __slots__ = ()
    NAME = 'tx.rollback'
    LABEL = 'abandon the current transaction'
    CLASS_ID = 90
    METHOD_ID = 30
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('tx.rollback-ok', )
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['TxRollback', int]:
        return cls(), offset


class TxRollbackOk(Method):
    """tx.rollback-ok: confirm successful rollback."""

    __slots__ = ()
    NAME = 'tx.rollback-ok'
    LABEL = 'confirm successful rollback'
    CLASS_ID = 90
    METHOD_ID = 31
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = False
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['TxRollbackOk', int]:
        return cls(), offset


# ==================== class confirm (85) -- RabbitMQ extension

class ConfirmSelect(Method):
    """confirm.select: ."""

    __slots__ = ('nowait', )
    NAME = 'confirm.select'
    LABEL = ''
    CLASS_ID = 85
    METHOD_ID = 10
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ('confirm.select-ok', )
    EXTENSION = True
    FIELDS = (
        Field('nowait', 'nowait', 'no-wait', 'bit', reserved=False, secret=False),
    )

    def __init__(self, nowait: bool = False) -> None:
        self.nowait = nowait

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        try:
            return _S_B.pack(_BIT[self.nowait])
        except Exception:  # unusual values: the generic codec handles or explains them
            return generic_encode_args(self, dialect)

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConfirmSelect', int]:
        o = offset
        try:
            b0, = _S_B.unpack_from(buf, o)
            o += 1
            a0 = bool(b0 & 1)
        except (IndexError, struct.error, DecodeError):  # malformed: let the generic codec say where
            return generic_decode_args(cls, buf, offset, dialect)
        return cls(a0), o


class ConfirmSelectOk(Method):
    """confirm.select-ok: ."""

    __slots__ = ()
    NAME = 'confirm.select-ok'
    LABEL = ''
    CLASS_ID = 85
    METHOD_ID = 11
    SYNCHRONOUS = True
    CONTENT = False
    RESPONSES = ()
    EXTENSION = True
    FIELDS = (
    )

    def __init__(self) -> None:
        pass

    def encode_args(self, dialect: Dialect = SPEC) -> bytes:
        return b''

    @classmethod
    def decode_args(cls, buf: bytes, offset: int = 4, dialect: Dialect = SPEC) -> tuple['ConfirmSelectOk', int]:
        return cls(), offset



# index (class-id << 16 | method-id) -> method class
METHODS: dict[int, type[Method]] = {
    0x000a000a: ConnectionStart,
    0x000a000b: ConnectionStartOk,
    0x000a0014: ConnectionSecure,
    0x000a0015: ConnectionSecureOk,
    0x000a001e: ConnectionTune,
    0x000a001f: ConnectionTuneOk,
    0x000a0028: ConnectionOpen,
    0x000a0029: ConnectionOpenOk,
    0x000a0032: ConnectionClose,
    0x000a0033: ConnectionCloseOk,
    0x000a003c: ConnectionBlocked,
    0x000a003d: ConnectionUnblocked,
    0x000a0046: ConnectionUpdateSecret,
    0x000a0047: ConnectionUpdateSecretOk,
    0x0014000a: ChannelOpen,
    0x0014000b: ChannelOpenOk,
    0x00140014: ChannelFlow,
    0x00140015: ChannelFlowOk,
    0x00140028: ChannelClose,
    0x00140029: ChannelCloseOk,
    0x0028000a: ExchangeDeclare,
    0x0028000b: ExchangeDeclareOk,
    0x00280014: ExchangeDelete,
    0x00280015: ExchangeDeleteOk,
    0x0028001e: ExchangeBind,
    0x0028001f: ExchangeBindOk,
    0x00280028: ExchangeUnbind,
    0x00280033: ExchangeUnbindOk,
    0x0032000a: QueueDeclare,
    0x0032000b: QueueDeclareOk,
    0x00320014: QueueBind,
    0x00320015: QueueBindOk,
    0x00320032: QueueUnbind,
    0x00320033: QueueUnbindOk,
    0x0032001e: QueuePurge,
    0x0032001f: QueuePurgeOk,
    0x00320028: QueueDelete,
    0x00320029: QueueDeleteOk,
    0x003c000a: BasicQos,
    0x003c000b: BasicQosOk,
    0x003c0014: BasicConsume,
    0x003c0015: BasicConsumeOk,
    0x003c001e: BasicCancel,
    0x003c001f: BasicCancelOk,
    0x003c0028: BasicPublish,
    0x003c0032: BasicReturn,
    0x003c003c: BasicDeliver,
    0x003c0046: BasicGet,
    0x003c0047: BasicGetOk,
    0x003c0048: BasicGetEmpty,
    0x003c0050: BasicAck,
    0x003c005a: BasicReject,
    0x003c0064: BasicRecoverAsync,
    0x003c006e: BasicRecover,
    0x003c006f: BasicRecoverOk,
    0x003c0078: BasicNack,
    0x005a000a: TxSelect,
    0x005a000b: TxSelectOk,
    0x005a0014: TxCommit,
    0x005a0015: TxCommitOk,
    0x005a001e: TxRollback,
    0x005a001f: TxRollbackOk,
    0x0055000a: ConfirmSelect,
    0x0055000b: ConfirmSelectOk,
}

METHODS_BY_NAME: dict[str, type[Method]] = {cls.NAME: cls for cls in METHODS.values()}

# class-id -> content properties class
PROPERTIES: dict[int, type[Properties]] = {
    60: BasicProperties,
}

CLASS_NAMES: dict[int, str] = {
    10: 'connection',
    20: 'channel',
    40: 'exchange',
    50: 'queue',
    60: 'basic',
    90: 'tx',
    85: 'confirm',
}
