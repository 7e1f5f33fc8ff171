"""AMQP 1.0 described types and restricted types, GENERATED from the spec XML: do not edit.

Source: amqpspec/specdata/amqp-1.0/amqp-core-{transport,messaging,security,transactions}-v1.0-os.xml.
Regenerate with: python -m amqpspec.wire.amqp10.gen
"""
# fmt: off
# ruff: noqa
from __future__ import annotations

from typing import Any, Iterable

from amqpspec.wire.amqp10.composite import Choices, Composite, Field, Restricted
from amqpspec.wire.amqp10.types import Symbol, UByte, UInt, ULong, UShort

# <definition> elements
PORT = 5672  # the IANA assigned port number for AMQP
SECURE_PORT = 5671  # the IANA assigned port number for secure AMQP (amqps)
MAJOR = 1  # major protocol version
MINOR = 0  # minor protocol version
REVISION = 0  # protocol revision
MIN_MAX_FRAME_SIZE = 512  # the lower bound for the agreed maximum frame size (in bytes)
MESSAGE_FORMAT = 0  # the format + revision for the messages defined by this document
TLS_MAJOR = 1  # major protocol version
TLS_MINOR = 0  # minor protocol version
TLS_REVISION = 0  # protocol revision
SASL_MAJOR = 1  # major protocol version
SASL_MINOR = 0  # minor protocol version
SASL_REVISION = 0  # protocol revision

# restricted type -> the type it restricts
RESTRICTED: dict[str, str] = {
    'role': 'boolean',
    'sender-settle-mode': 'ubyte',
    'receiver-settle-mode': 'ubyte',
    'handle': 'uint',
    'seconds': 'uint',
    'milliseconds': 'uint',
    'delivery-tag': 'binary',
    'delivery-number': 'sequence-no',
    'transfer-number': 'sequence-no',
    'sequence-no': 'uint',
    'message-format': 'uint',
    'ietf-language-tag': 'symbol',
    'fields': 'map',
    'amqp-error': 'symbol',
    'connection-error': 'symbol',
    'session-error': 'symbol',
    'link-error': 'symbol',
    'delivery-annotations': 'annotations',
    'message-annotations': 'annotations',
    'application-properties': 'map',
    'data': 'binary',
    'amqp-sequence': 'list',
    'amqp-value': '*',
    'footer': 'annotations',
    'annotations': 'map',
    'message-id-ulong': 'ulong',
    'message-id-uuid': 'uuid',
    'message-id-binary': 'binary',
    'message-id-string': 'string',
    'address-string': 'string',
    'terminus-durability': 'uint',
    'terminus-expiry-policy': 'symbol',
    'std-dist-mode': 'symbol',
    'filter-set': 'map',
    'node-properties': 'fields',
    'sasl-code': 'ubyte',
    'transaction-id': 'binary',
    'txn-capability': 'symbol',
    'transaction-error': 'symbol',
}

# archetype -> the types that provide it
PROVIDERS: dict[str, tuple[str, ...]] = {
    'frame': ('open', 'begin', 'attach', 'flow', 'transfer', 'disposition', 'detach', 'end', 'close'),
    'error-condition': ('amqp-error', 'connection-error', 'session-error', 'link-error', 'transaction-error'),
    'section': ('header', 'delivery-annotations', 'message-annotations', 'properties', 'application-properties', 'data', 'amqp-sequence', 'amqp-value', 'footer'),
    'message-id': ('message-id-ulong', 'message-id-uuid', 'message-id-binary', 'message-id-string'),
    'address': ('address-string',),
    'delivery-state': ('received', 'accepted', 'rejected', 'released', 'modified', 'declared', 'transactional-state'),
    'outcome': ('accepted', 'rejected', 'released', 'modified', 'declared'),
    'source': ('source',),
    'target': ('target', 'coordinator'),
    'distribution-mode': ('std-dist-mode',),
    'lifetime-policy': ('delete-on-close', 'delete-on-no-links', 'delete-on-no-messages', 'delete-on-no-links-or-messages'),
    'sasl-frame': ('sasl-mechanisms', 'sasl-init', 'sasl-challenge', 'sasl-response', 'sasl-outcome'),
    'txn-id': ('transaction-id',),
    'txn-capability': ('txn-capability',),
}


class Role(Choices):
    """role (2.8.1): link endpoint role."""

    NAME = 'role'
    SOURCE = 'boolean'
    NUMBER = '2.8.1'
    PROVIDES = ()
    SENDER = False
    RECEIVER = True
    NAMES = {
        False: 'sender',
        True: 'receiver',
    }


class SenderSettleMode(Choices):
    """sender-settle-mode (2.8.2): settlement policy for a sender."""

    NAME = 'sender-settle-mode'
    SOURCE = 'ubyte'
    NUMBER = '2.8.2'
    PROVIDES = ()
    UNSETTLED = UByte(0)
    SETTLED = UByte(1)
    MIXED = UByte(2)
    NAMES = {
        UByte(0): 'unsettled',
        UByte(1): 'settled',
        UByte(2): 'mixed',
    }


class ReceiverSettleMode(Choices):
    """receiver-settle-mode (2.8.3): settlement policy for a receiver."""

    NAME = 'receiver-settle-mode'
    SOURCE = 'ubyte'
    NUMBER = '2.8.3'
    PROVIDES = ()
    FIRST = UByte(0)
    SECOND = UByte(1)
    NAMES = {
        UByte(0): 'first',
        UByte(1): 'second',
    }


class AmqpError(Choices):
    """amqp-error (2.8.15): shared error conditions."""

    NAME = 'amqp-error'
    SOURCE = 'symbol'
    NUMBER = '2.8.15'
    PROVIDES = ('error-condition',)
    INTERNAL_ERROR = Symbol('amqp:internal-error')
    NOT_FOUND = Symbol('amqp:not-found')
    UNAUTHORIZED_ACCESS = Symbol('amqp:unauthorized-access')
    DECODE_ERROR = Symbol('amqp:decode-error')
    RESOURCE_LIMIT_EXCEEDED = Symbol('amqp:resource-limit-exceeded')
    NOT_ALLOWED = Symbol('amqp:not-allowed')
    INVALID_FIELD = Symbol('amqp:invalid-field')
    NOT_IMPLEMENTED = Symbol('amqp:not-implemented')
    RESOURCE_LOCKED = Symbol('amqp:resource-locked')
    PRECONDITION_FAILED = Symbol('amqp:precondition-failed')
    RESOURCE_DELETED = Symbol('amqp:resource-deleted')
    ILLEGAL_STATE = Symbol('amqp:illegal-state')
    FRAME_SIZE_TOO_SMALL = Symbol('amqp:frame-size-too-small')
    NAMES = {
        Symbol('amqp:internal-error'): 'internal-error',
        Symbol('amqp:not-found'): 'not-found',
        Symbol('amqp:unauthorized-access'): 'unauthorized-access',
        Symbol('amqp:decode-error'): 'decode-error',
        Symbol('amqp:resource-limit-exceeded'): 'resource-limit-exceeded',
        Symbol('amqp:not-allowed'): 'not-allowed',
        Symbol('amqp:invalid-field'): 'invalid-field',
        Symbol('amqp:not-implemented'): 'not-implemented',
        Symbol('amqp:resource-locked'): 'resource-locked',
        Symbol('amqp:precondition-failed'): 'precondition-failed',
        Symbol('amqp:resource-deleted'): 'resource-deleted',
        Symbol('amqp:illegal-state'): 'illegal-state',
        Symbol('amqp:frame-size-too-small'): 'frame-size-too-small',
    }


class AmqpConnectionError(Choices):
    """connection-error (2.8.16): symbols used to indicate connection error conditions."""

    NAME = 'connection-error'
    SOURCE = 'symbol'
    NUMBER = '2.8.16'
    PROVIDES = ('error-condition',)
    CONNECTION_FORCED = Symbol('amqp:connection:forced')
    FRAMING_ERROR = Symbol('amqp:connection:framing-error')
    REDIRECT = Symbol('amqp:connection:redirect')
    NAMES = {
        Symbol('amqp:connection:forced'): 'connection-forced',
        Symbol('amqp:connection:framing-error'): 'framing-error',
        Symbol('amqp:connection:redirect'): 'redirect',
    }


class SessionError(Choices):
    """session-error (2.8.17): symbols used to indicate session error conditions."""

    NAME = 'session-error'
    SOURCE = 'symbol'
    NUMBER = '2.8.17'
    PROVIDES = ('error-condition',)
    WINDOW_VIOLATION = Symbol('amqp:session:window-violation')
    ERRANT_LINK = Symbol('amqp:session:errant-link')
    HANDLE_IN_USE = Symbol('amqp:session:handle-in-use')
    UNATTACHED_HANDLE = Symbol('amqp:session:unattached-handle')
    NAMES = {
        Symbol('amqp:session:window-violation'): 'window-violation',
        Symbol('amqp:session:errant-link'): 'errant-link',
        Symbol('amqp:session:handle-in-use'): 'handle-in-use',
        Symbol('amqp:session:unattached-handle'): 'unattached-handle',
    }


class LinkError(Choices):
    """link-error (2.8.18): symbols used to indicate link error conditions."""

    NAME = 'link-error'
    SOURCE = 'symbol'
    NUMBER = '2.8.18'
    PROVIDES = ('error-condition',)
    DETACH_FORCED = Symbol('amqp:link:detach-forced')
    TRANSFER_LIMIT_EXCEEDED = Symbol('amqp:link:transfer-limit-exceeded')
    MESSAGE_SIZE_EXCEEDED = Symbol('amqp:link:message-size-exceeded')
    REDIRECT = Symbol('amqp:link:redirect')
    STOLEN = Symbol('amqp:link:stolen')
    NAMES = {
        Symbol('amqp:link:detach-forced'): 'detach-forced',
        Symbol('amqp:link:transfer-limit-exceeded'): 'transfer-limit-exceeded',
        Symbol('amqp:link:message-size-exceeded'): 'message-size-exceeded',
        Symbol('amqp:link:redirect'): 'redirect',
        Symbol('amqp:link:stolen'): 'stolen',
    }


class TerminusDurability(Choices):
    """terminus-durability (3.5.5): durability policy for a terminus."""

    NAME = 'terminus-durability'
    SOURCE = 'uint'
    NUMBER = '3.5.5'
    PROVIDES = ()
    NONE = UInt(0)
    CONFIGURATION = UInt(1)
    UNSETTLED_STATE = UInt(2)
    NAMES = {
        UInt(0): 'none',
        UInt(1): 'configuration',
        UInt(2): 'unsettled-state',
    }


class TerminusExpiryPolicy(Choices):
    """terminus-expiry-policy (3.5.6): expiry policy for a terminus."""

    NAME = 'terminus-expiry-policy'
    SOURCE = 'symbol'
    NUMBER = '3.5.6'
    PROVIDES = ()
    LINK_DETACH = Symbol('link-detach')
    SESSION_END = Symbol('session-end')
    CONNECTION_CLOSE = Symbol('connection-close')
    NEVER = Symbol('never')
    NAMES = {
        Symbol('link-detach'): 'link-detach',
        Symbol('session-end'): 'session-end',
        Symbol('connection-close'): 'connection-close',
        Symbol('never'): 'never',
    }


class StdDistMode(Choices):
    """std-dist-mode (3.5.7): Link distribution policy."""

    NAME = 'std-dist-mode'
    SOURCE = 'symbol'
    NUMBER = '3.5.7'
    PROVIDES = ('distribution-mode',)
    MOVE = Symbol('move')
    COPY = Symbol('copy')
    NAMES = {
        Symbol('move'): 'move',
        Symbol('copy'): 'copy',
    }


class SaslCode(Choices):
    """sasl-code (5.3.3.6): codes to indicate the outcome of the sasl dialog."""

    NAME = 'sasl-code'
    SOURCE = 'ubyte'
    NUMBER = '5.3.3.6'
    PROVIDES = ()
    OK = UByte(0)
    AUTH = UByte(1)
    SYS = UByte(2)
    SYS_PERM = UByte(3)
    SYS_TEMP = UByte(4)
    NAMES = {
        UByte(0): 'ok',
        UByte(1): 'auth',
        UByte(2): 'sys',
        UByte(3): 'sys-perm',
        UByte(4): 'sys-temp',
    }


class TxnCapability(Choices):
    """txn-capability (4.5.7): symbols indicating (desired/available) capabilities of a transaction coordinator."""

    NAME = 'txn-capability'
    SOURCE = 'symbol'
    NUMBER = '4.5.7'
    PROVIDES = ('txn-capability',)
    LOCAL_TRANSACTIONS = Symbol('amqp:local-transactions')
    DISTRIBUTED_TRANSACTIONS = Symbol('amqp:distributed-transactions')
    PROMOTABLE_TRANSACTIONS = Symbol('amqp:promotable-transactions')
    MULTI_TXNS_PER_SSN = Symbol('amqp:multi-txns-per-ssn')
    MULTI_SSNS_PER_TXN = Symbol('amqp:multi-ssns-per-txn')
    NAMES = {
        Symbol('amqp:local-transactions'): 'local-transactions',
        Symbol('amqp:distributed-transactions'): 'distributed-transactions',
        Symbol('amqp:promotable-transactions'): 'promotable-transactions',
        Symbol('amqp:multi-txns-per-ssn'): 'multi-txns-per-ssn',
        Symbol('amqp:multi-ssns-per-txn'): 'multi-ssns-per-txn',
    }


class TransactionError(Choices):
    """transaction-error (4.5.8): symbols used to indicate transaction errors."""

    NAME = 'transaction-error'
    SOURCE = 'symbol'
    NUMBER = '4.5.8'
    PROVIDES = ('error-condition',)
    UNKNOWN_ID = Symbol('amqp:transaction:unknown-id')
    TRANSACTION_ROLLBACK = Symbol('amqp:transaction:rollback')
    TRANSACTION_TIMEOUT = Symbol('amqp:transaction:timeout')
    NAMES = {
        Symbol('amqp:transaction:unknown-id'): 'unknown-id',
        Symbol('amqp:transaction:rollback'): 'transaction-rollback',
        Symbol('amqp:transaction:timeout'): 'transaction-timeout',
    }


class Open(Composite):
    """open (transport 2.7.1): negotiate connection parameters."""

    __slots__ = ('container_id', 'hostname', 'max_frame_size', 'channel_max', 'idle_time_out', 'outgoing_locales', 'incoming_locales', 'offered_capabilities', 'desired_capabilities', 'properties', )
    NAME = 'open'
    LABEL = 'negotiate connection parameters'
    DESCRIPTOR = Symbol('amqp:open:list')
    CODE = ULong(0x0000000000000010)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.1'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('container_id', 'container-id', 'string', 'string', mandatory=True, label='the id of the source container', accepts=('string',), coerce=('string',)),
        Field('hostname', 'hostname', 'string', 'string', label='the name of the target host', accepts=('string',), coerce=('string',)),
        Field('max_frame_size', 'max-frame-size', 'uint', 'uint', default=UInt(4294967295), label='proposed maximum frame size', accepts=('uint',), coerce=('uint',)),
        Field('channel_max', 'channel-max', 'ushort', 'ushort', default=UShort(65535), label='the maximum channel number that can be used on the connection', accepts=('ushort',), coerce=('ushort',)),
        Field('idle_time_out', 'idle-time-out', 'milliseconds', 'uint', label='idle time-out', accepts=('uint',), coerce=('uint',)),
        Field('outgoing_locales', 'outgoing-locales', 'ietf-language-tag', 'symbol', multiple=True, label='locales available for outgoing text', accepts=('symbol',), coerce=('symbol',)),
        Field('incoming_locales', 'incoming-locales', 'ietf-language-tag', 'symbol', multiple=True, label='desired locales for incoming text in decreasing level of preference', accepts=('symbol',), coerce=('symbol',)),
        Field('offered_capabilities', 'offered-capabilities', 'symbol', 'symbol', multiple=True, label='extension capabilities the sender supports', accepts=('symbol',), coerce=('symbol',)),
        Field('desired_capabilities', 'desired-capabilities', 'symbol', 'symbol', multiple=True, label='extension capabilities the sender can use if the receiver supports them', accepts=('symbol',), coerce=('symbol',)),
        Field('properties', 'properties', 'fields', 'map', label='connection properties', accepts=('map',), coerce=('map',), symbol_keys=True),
    )

    def __init__(self, container_id: Any = None, hostname: Any = None, max_frame_size: Any = None, channel_max: Any = None, idle_time_out: Any = None, outgoing_locales: Any = None, incoming_locales: Any = None, offered_capabilities: Any = None, desired_capabilities: Any = None, properties: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.container_id = container_id
        self.hostname = hostname
        self.max_frame_size = max_frame_size
        self.channel_max = channel_max
        self.idle_time_out = idle_time_out
        self.outgoing_locales = outgoing_locales
        self.incoming_locales = incoming_locales
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.properties = properties
        self._init(extra)


class Begin(Composite):
    """begin (transport 2.7.2): begin a session on a channel."""

    __slots__ = ('remote_channel', 'next_outgoing_id', 'incoming_window', 'outgoing_window', 'handle_max', 'offered_capabilities', 'desired_capabilities', 'properties', )
    NAME = 'begin'
    LABEL = 'begin a session on a channel'
    DESCRIPTOR = Symbol('amqp:begin:list')
    CODE = ULong(0x0000000000000011)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.2'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('remote_channel', 'remote-channel', 'ushort', 'ushort', label='the remote channel for this session', accepts=('ushort',), coerce=('ushort',)),
        Field('next_outgoing_id', 'next-outgoing-id', 'transfer-number', 'uint', mandatory=True, label='the transfer-id of the first transfer id the sender will send', accepts=('uint',), coerce=('uint',)),
        Field('incoming_window', 'incoming-window', 'uint', 'uint', mandatory=True, label='the initial incoming-window of the sender', accepts=('uint',), coerce=('uint',)),
        Field('outgoing_window', 'outgoing-window', 'uint', 'uint', mandatory=True, label='the initial outgoing-window of the sender', accepts=('uint',), coerce=('uint',)),
        Field('handle_max', 'handle-max', 'handle', 'uint', default=UInt(4294967295), label='the maximum handle value that can be used on the session', accepts=('uint',), coerce=('uint',)),
        Field('offered_capabilities', 'offered-capabilities', 'symbol', 'symbol', multiple=True, label='the extension capabilities the sender supports', accepts=('symbol',), coerce=('symbol',)),
        Field('desired_capabilities', 'desired-capabilities', 'symbol', 'symbol', multiple=True, label='the extension capabilities the sender can use if the receiver supports them', accepts=('symbol',), coerce=('symbol',)),
        Field('properties', 'properties', 'fields', 'map', label='session properties', accepts=('map',), coerce=('map',), symbol_keys=True),
    )

    def __init__(self, remote_channel: Any = None, next_outgoing_id: Any = None, incoming_window: Any = None, outgoing_window: Any = None, handle_max: Any = None, offered_capabilities: Any = None, desired_capabilities: Any = None, properties: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.remote_channel = remote_channel
        self.next_outgoing_id = next_outgoing_id
        self.incoming_window = incoming_window
        self.outgoing_window = outgoing_window
        self.handle_max = handle_max
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.properties = properties
        self._init(extra)


class Attach(Composite):
    """attach (transport 2.7.3): attach a link to a session."""

    __slots__ = ('name', 'handle', 'role', 'snd_settle_mode', 'rcv_settle_mode', 'source', 'target', 'unsettled', 'incomplete_unsettled', 'initial_delivery_count', 'max_message_size', 'offered_capabilities', 'desired_capabilities', 'properties', )
    NAME = 'attach'
    LABEL = 'attach a link to a session'
    DESCRIPTOR = Symbol('amqp:attach:list')
    CODE = ULong(0x0000000000000012)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.3'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('name', 'name', 'string', 'string', mandatory=True, label='the name of the link', accepts=('string',), coerce=('string',)),
        Field('handle', 'handle', 'handle', 'uint', mandatory=True, label='the handle for the link while attached', accepts=('uint',), coerce=('uint',)),
        Field('role', 'role', 'role', 'boolean', mandatory=True, label='role of the link endpoint', choices=Role, accepts=('boolean',), coerce=('boolean',)),
        Field('snd_settle_mode', 'snd-settle-mode', 'sender-settle-mode', 'ubyte', default=UByte(2), label='settlement policy for the sender', choices=SenderSettleMode, accepts=('ubyte',), coerce=('ubyte',)),
        Field('rcv_settle_mode', 'rcv-settle-mode', 'receiver-settle-mode', 'ubyte', default=UByte(0), label='the settlement policy of the receiver', choices=ReceiverSettleMode, accepts=('ubyte',), coerce=('ubyte',)),
        Field('source', 'source', '*', '*', requires=('source',), label='the source for messages', composites=('source',)),
        Field('target', 'target', '*', '*', requires=('target',), label='the target for messages', composites=('target', 'coordinator')),
        Field('unsettled', 'unsettled', 'map', 'map', label='unsettled delivery state', accepts=('map',), coerce=('map',)),
        Field('incomplete_unsettled', 'incomplete-unsettled', 'boolean', 'boolean', default=False, accepts=('boolean',), coerce=('boolean',)),
        Field('initial_delivery_count', 'initial-delivery-count', 'sequence-no', 'uint', label="the sender's initial value for delivery-count", accepts=('uint',), coerce=('uint',)),
        Field('max_message_size', 'max-message-size', 'ulong', 'ulong', label='the maximum message size supported by the link endpoint', accepts=('ulong',), coerce=('ulong',)),
        Field('offered_capabilities', 'offered-capabilities', 'symbol', 'symbol', multiple=True, label='the extension capabilities the sender supports', accepts=('symbol',), coerce=('symbol',)),
        Field('desired_capabilities', 'desired-capabilities', 'symbol', 'symbol', multiple=True, label='the extension capabilities the sender can use if the receiver supports them', accepts=('symbol',), coerce=('symbol',)),
        Field('properties', 'properties', 'fields', 'map', label='link properties', accepts=('map',), coerce=('map',), symbol_keys=True),
    )

    def __init__(self, name: Any = None, handle: Any = None, role: Any = None, snd_settle_mode: Any = None, rcv_settle_mode: Any = None, source: Any = None, target: Any = None, unsettled: Any = None, incomplete_unsettled: Any = None, initial_delivery_count: Any = None, max_message_size: Any = None, offered_capabilities: Any = None, desired_capabilities: Any = None, properties: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.name = name
        self.handle = handle
        self.role = role
        self.snd_settle_mode = snd_settle_mode
        self.rcv_settle_mode = rcv_settle_mode
        self.source = source
        self.target = target
        self.unsettled = unsettled
        self.incomplete_unsettled = incomplete_unsettled
        self.initial_delivery_count = initial_delivery_count
        self.max_message_size = max_message_size
        self.offered_capabilities = offered_capabilities
        self.desired_capabilities = desired_capabilities
        self.properties = properties
        self._init(extra)


class Flow(Composite):
    """flow (transport 2.7.4): update link state."""

    __slots__ = ('next_incoming_id', 'incoming_window', 'next_outgoing_id', 'outgoing_window', 'handle', 'delivery_count', 'link_credit', 'available', 'drain', 'echo', 'properties', )
    NAME = 'flow'
    LABEL = 'update link state'
    DESCRIPTOR = Symbol('amqp:flow:list')
    CODE = ULong(0x0000000000000013)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.4'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('next_incoming_id', 'next-incoming-id', 'transfer-number', 'uint', accepts=('uint',), coerce=('uint',)),
        Field('incoming_window', 'incoming-window', 'uint', 'uint', mandatory=True, accepts=('uint',), coerce=('uint',)),
        Field('next_outgoing_id', 'next-outgoing-id', 'transfer-number', 'uint', mandatory=True, accepts=('uint',), coerce=('uint',)),
        Field('outgoing_window', 'outgoing-window', 'uint', 'uint', mandatory=True, accepts=('uint',), coerce=('uint',)),
        Field('handle', 'handle', 'handle', 'uint', accepts=('uint',), coerce=('uint',)),
        Field('delivery_count', 'delivery-count', 'sequence-no', 'uint', label="the endpoint's value for the delivery-count sequence number", accepts=('uint',), coerce=('uint',)),
        Field('link_credit', 'link-credit', 'uint', 'uint', label='the current maximum number of messages that can be received', accepts=('uint',), coerce=('uint',)),
        Field('available', 'available', 'uint', 'uint', label='the number of available messages', accepts=('uint',), coerce=('uint',)),
        Field('drain', 'drain', 'boolean', 'boolean', default=False, label='indicates drain mode', accepts=('boolean',), coerce=('boolean',)),
        Field('echo', 'echo', 'boolean', 'boolean', default=False, label='request state from partner', accepts=('boolean',), coerce=('boolean',)),
        Field('properties', 'properties', 'fields', 'map', label='link state properties', accepts=('map',), coerce=('map',), symbol_keys=True),
    )

    def __init__(self, next_incoming_id: Any = None, incoming_window: Any = None, next_outgoing_id: Any = None, outgoing_window: Any = None, handle: Any = None, delivery_count: Any = None, link_credit: Any = None, available: Any = None, drain: Any = None, echo: Any = None, properties: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.next_incoming_id = next_incoming_id
        self.incoming_window = incoming_window
        self.next_outgoing_id = next_outgoing_id
        self.outgoing_window = outgoing_window
        self.handle = handle
        self.delivery_count = delivery_count
        self.link_credit = link_credit
        self.available = available
        self.drain = drain
        self.echo = echo
        self.properties = properties
        self._init(extra)


class Transfer(Composite):
    """transfer (transport 2.7.5): transfer a message."""

    __slots__ = ('handle', 'delivery_id', 'delivery_tag', 'message_format', 'settled', 'more', 'rcv_settle_mode', 'state', 'resume', 'aborted', 'batchable', )
    NAME = 'transfer'
    LABEL = 'transfer a message'
    DESCRIPTOR = Symbol('amqp:transfer:list')
    CODE = ULong(0x0000000000000014)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.5'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('handle', 'handle', 'handle', 'uint', mandatory=True, accepts=('uint',), coerce=('uint',)),
        Field('delivery_id', 'delivery-id', 'delivery-number', 'uint', label='alias for delivery-tag', accepts=('uint',), coerce=('uint',)),
        Field('delivery_tag', 'delivery-tag', 'delivery-tag', 'binary', accepts=('binary',), coerce=('binary',)),
        Field('message_format', 'message-format', 'message-format', 'uint', label='indicates the message format', accepts=('uint',), coerce=('uint',)),
        Field('settled', 'settled', 'boolean', 'boolean', accepts=('boolean',), coerce=('boolean',)),
        Field('more', 'more', 'boolean', 'boolean', default=False, label='indicates that the message has more content', accepts=('boolean',), coerce=('boolean',)),
        Field('rcv_settle_mode', 'rcv-settle-mode', 'receiver-settle-mode', 'ubyte', choices=ReceiverSettleMode, accepts=('ubyte',), coerce=('ubyte',)),
        Field('state', 'state', '*', '*', requires=('delivery-state',), label='the state of the delivery at the sender', composites=('received', 'accepted', 'rejected', 'released', 'modified', 'declared', 'transactional-state')),
        Field('resume', 'resume', 'boolean', 'boolean', default=False, label='indicates a resumed delivery', accepts=('boolean',), coerce=('boolean',)),
        Field('aborted', 'aborted', 'boolean', 'boolean', default=False, label='indicates that the message is aborted', accepts=('boolean',), coerce=('boolean',)),
        Field('batchable', 'batchable', 'boolean', 'boolean', default=False, label='batchable hint', accepts=('boolean',), coerce=('boolean',)),
    )

    def __init__(self, handle: Any = None, delivery_id: Any = None, delivery_tag: Any = None, message_format: Any = None, settled: Any = None, more: Any = None, rcv_settle_mode: Any = None, state: Any = None, resume: Any = None, aborted: Any = None, batchable: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.handle = handle
        self.delivery_id = delivery_id
        self.delivery_tag = delivery_tag
        self.message_format = message_format
        self.settled = settled
        self.more = more
        self.rcv_settle_mode = rcv_settle_mode
        self.state = state
        self.resume = resume
        self.aborted = aborted
        self.batchable = batchable
        self._init(extra)


class Disposition(Composite):
    """disposition (transport 2.7.6): inform remote peer of delivery state changes."""

    __slots__ = ('role', 'first', 'last', 'settled', 'state', 'batchable', )
    NAME = 'disposition'
    LABEL = 'inform remote peer of delivery state changes'
    DESCRIPTOR = Symbol('amqp:disposition:list')
    CODE = ULong(0x0000000000000015)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.6'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('role', 'role', 'role', 'boolean', mandatory=True, label='directionality of disposition', choices=Role, accepts=('boolean',), coerce=('boolean',)),
        Field('first', 'first', 'delivery-number', 'uint', mandatory=True, label='lower bound of deliveries', accepts=('uint',), coerce=('uint',)),
        Field('last', 'last', 'delivery-number', 'uint', label='upper bound of deliveries', accepts=('uint',), coerce=('uint',)),
        Field('settled', 'settled', 'boolean', 'boolean', default=False, label='indicates deliveries are settled', accepts=('boolean',), coerce=('boolean',)),
        Field('state', 'state', '*', '*', requires=('delivery-state',), label='indicates state of deliveries', composites=('received', 'accepted', 'rejected', 'released', 'modified', 'declared', 'transactional-state')),
        Field('batchable', 'batchable', 'boolean', 'boolean', default=False, label='batchable hint', accepts=('boolean',), coerce=('boolean',)),
    )

    def __init__(self, role: Any = None, first: Any = None, last: Any = None, settled: Any = None, state: Any = None, batchable: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.role = role
        self.first = first
        self.last = last
        self.settled = settled
        self.state = state
        self.batchable = batchable
        self._init(extra)


class Detach(Composite):
    """detach (transport 2.7.7): detach the link endpoint from the session."""

    __slots__ = ('handle', 'closed', 'error', )
    NAME = 'detach'
    LABEL = 'detach the link endpoint from the session'
    DESCRIPTOR = Symbol('amqp:detach:list')
    CODE = ULong(0x0000000000000016)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.7'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('handle', 'handle', 'handle', 'uint', mandatory=True, label='the local handle of the link to be detached', accepts=('uint',), coerce=('uint',)),
        Field('closed', 'closed', 'boolean', 'boolean', default=False, label='if true then the sender has closed the link', accepts=('boolean',), coerce=('boolean',)),
        Field('error', 'error', 'error', 'list', label='error causing the detach', composites=('error',)),
    )

    def __init__(self, handle: Any = None, closed: Any = None, error: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.handle = handle
        self.closed = closed
        self.error = error
        self._init(extra)


class End(Composite):
    """end (transport 2.7.8): end the session."""

    __slots__ = ('error', )
    NAME = 'end'
    LABEL = 'end the session'
    DESCRIPTOR = Symbol('amqp:end:list')
    CODE = ULong(0x0000000000000017)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.8'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('error', 'error', 'error', 'list', label='error causing the end', composites=('error',)),
    )

    def __init__(self, error: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.error = error
        self._init(extra)


class Close(Composite):
    """close (transport 2.7.9): signal a connection close."""

    __slots__ = ('error', )
    NAME = 'close'
    LABEL = 'signal a connection close'
    DESCRIPTOR = Symbol('amqp:close:list')
    CODE = ULong(0x0000000000000018)
    SOURCE = 'list'
    PROVIDES = ('frame',)
    NUMBER = '2.7.9'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('error', 'error', 'error', 'list', label='error causing the close', composites=('error',)),
    )

    def __init__(self, error: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.error = error
        self._init(extra)


class Error(Composite):
    """error (transport 2.8.14): details of an error."""

    __slots__ = ('condition', 'description', 'info', )
    NAME = 'error'
    LABEL = 'details of an error'
    DESCRIPTOR = Symbol('amqp:error:list')
    CODE = ULong(0x000000000000001d)
    SOURCE = 'list'
    PROVIDES = ()
    NUMBER = '2.8.14'
    DOCUMENT = 'transport'
    FIELDS = (
        Field('condition', 'condition', 'symbol', 'symbol', requires=('error-condition',), mandatory=True, label='error condition', accepts=('symbol',), coerce=('symbol',)),
        Field('description', 'description', 'string', 'string', label='descriptive text about the error condition', accepts=('string',), coerce=('string',)),
        Field('info', 'info', 'fields', 'map', label='map carrying information about the error condition', accepts=('map',), coerce=('map',), symbol_keys=True),
    )

    def __init__(self, condition: Any = None, description: Any = None, info: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.condition = condition
        self.description = description
        self.info = info
        self._init(extra)


class Header(Composite):
    """header (messaging 3.2.1): transport headers for a message."""

    __slots__ = ('durable', 'priority', 'ttl', 'first_acquirer', 'delivery_count', )
    NAME = 'header'
    LABEL = 'transport headers for a message'
    DESCRIPTOR = Symbol('amqp:header:list')
    CODE = ULong(0x0000000000000070)
    SOURCE = 'list'
    PROVIDES = ('section',)
    NUMBER = '3.2.1'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('durable', 'durable', 'boolean', 'boolean', default=False, label='specify durability requirements', accepts=('boolean',), coerce=('boolean',)),
        Field('priority', 'priority', 'ubyte', 'ubyte', default=UByte(4), label='relative message priority', accepts=('ubyte',), coerce=('ubyte',)),
        Field('ttl', 'ttl', 'milliseconds', 'uint', label='time to live in ms', accepts=('uint',), coerce=('uint',)),
        Field('first_acquirer', 'first-acquirer', 'boolean', 'boolean', default=False, accepts=('boolean',), coerce=('boolean',)),
        Field('delivery_count', 'delivery-count', 'uint', 'uint', default=UInt(0), label='the number of prior unsuccessful delivery attempts', accepts=('uint',), coerce=('uint',)),
    )

    def __init__(self, durable: Any = None, priority: Any = None, ttl: Any = None, first_acquirer: Any = None, delivery_count: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.durable = durable
        self.priority = priority
        self.ttl = ttl
        self.first_acquirer = first_acquirer
        self.delivery_count = delivery_count
        self._init(extra)


class DeliveryAnnotations(Restricted):
    """delivery-annotations (messaging 3.2.2): delivery-annotations."""

    __slots__ = ()
    NAME = 'delivery-annotations'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:delivery-annotations:map')
    CODE = ULong(0x0000000000000071)
    SOURCE = 'annotations'
    PROVIDES = ('section',)
    NUMBER = '3.2.2'
    DOCUMENT = 'messaging'
    PRIMITIVE = 'map'
    VALUE_FIELD = Field('value', 'value', 'annotations', 'map', accepts=('map',), coerce=('map',), symbol_keys=True)

    def __init__(self, value: Any = None) -> None:
        super().__init__({} if value is None else value)


class MessageAnnotations(Restricted):
    """message-annotations (messaging 3.2.3): message-annotations."""

    __slots__ = ()
    NAME = 'message-annotations'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:message-annotations:map')
    CODE = ULong(0x0000000000000072)
    SOURCE = 'annotations'
    PROVIDES = ('section',)
    NUMBER = '3.2.3'
    DOCUMENT = 'messaging'
    PRIMITIVE = 'map'
    VALUE_FIELD = Field('value', 'value', 'annotations', 'map', accepts=('map',), coerce=('map',), symbol_keys=True)

    def __init__(self, value: Any = None) -> None:
        super().__init__({} if value is None else value)


class Properties(Composite):
    """properties (messaging 3.2.4): immutable properties of the message."""

    __slots__ = ('message_id', 'user_id', 'to', 'subject', 'reply_to', 'correlation_id', 'content_type', 'content_encoding', 'absolute_expiry_time', 'creation_time', 'group_id', 'group_sequence', 'reply_to_group_id', )
    NAME = 'properties'
    LABEL = 'immutable properties of the message'
    DESCRIPTOR = Symbol('amqp:properties:list')
    CODE = ULong(0x0000000000000073)
    SOURCE = 'list'
    PROVIDES = ('section',)
    NUMBER = '3.2.4'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('message_id', 'message-id', '*', '*', requires=('message-id',), label='application message identifier', accepts=('ulong', 'uuid', 'binary', 'string'), coerce=('ulong', 'uuid', 'binary', 'string')),
        Field('user_id', 'user-id', 'binary', 'binary', label='creating user id', accepts=('binary',), coerce=('binary',)),
        Field('to', 'to', '*', '*', requires=('address',), label='the address of the node the message is destined for', accepts=('string',), coerce=('string',)),
        Field('subject', 'subject', 'string', 'string', label='the subject of the message', accepts=('string',), coerce=('string',)),
        Field('reply_to', 'reply-to', '*', '*', requires=('address',), label='the node to send replies to', accepts=('string',), coerce=('string',)),
        Field('correlation_id', 'correlation-id', '*', '*', requires=('message-id',), label='application correlation identifier', accepts=('ulong', 'uuid', 'binary', 'string'), coerce=('ulong', 'uuid', 'binary', 'string')),
        Field('content_type', 'content-type', 'symbol', 'symbol', label='MIME content type', accepts=('symbol',), coerce=('symbol',)),
        Field('content_encoding', 'content-encoding', 'symbol', 'symbol', label='MIME content type', accepts=('symbol',), coerce=('symbol',)),
        Field('absolute_expiry_time', 'absolute-expiry-time', 'timestamp', 'timestamp', label='the time when this message is considered expired', accepts=('timestamp',), coerce=('timestamp',)),
        Field('creation_time', 'creation-time', 'timestamp', 'timestamp', label='the time when this message was created', accepts=('timestamp',), coerce=('timestamp',)),
        Field('group_id', 'group-id', 'string', 'string', label='the group this message belongs to', accepts=('string',), coerce=('string',)),
        Field('group_sequence', 'group-sequence', 'sequence-no', 'uint', label='the sequence-no of this message within its group', accepts=('uint',), coerce=('uint',)),
        Field('reply_to_group_id', 'reply-to-group-id', 'string', 'string', label='the group the reply message belongs to', accepts=('string',), coerce=('string',)),
    )

    def __init__(self, message_id: Any = None, user_id: Any = None, to: Any = None, subject: Any = None, reply_to: Any = None, correlation_id: Any = None, content_type: Any = None, content_encoding: Any = None, absolute_expiry_time: Any = None, creation_time: Any = None, group_id: Any = None, group_sequence: Any = None, reply_to_group_id: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.message_id = message_id
        self.user_id = user_id
        self.to = to
        self.subject = subject
        self.reply_to = reply_to
        self.correlation_id = correlation_id
        self.content_type = content_type
        self.content_encoding = content_encoding
        self.absolute_expiry_time = absolute_expiry_time
        self.creation_time = creation_time
        self.group_id = group_id
        self.group_sequence = group_sequence
        self.reply_to_group_id = reply_to_group_id
        self._init(extra)


class ApplicationProperties(Restricted):
    """application-properties (messaging 3.2.5): application-properties."""

    __slots__ = ()
    NAME = 'application-properties'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:application-properties:map')
    CODE = ULong(0x0000000000000074)
    SOURCE = 'map'
    PROVIDES = ('section',)
    NUMBER = '3.2.5'
    DOCUMENT = 'messaging'
    PRIMITIVE = 'map'
    VALUE_FIELD = Field('value', 'value', 'map', 'map', accepts=('map',), coerce=('map',))

    def __init__(self, value: Any = None) -> None:
        super().__init__({} if value is None else value)


class Data(Restricted):
    """data (messaging 3.2.6): data."""

    __slots__ = ()
    NAME = 'data'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:data:binary')
    CODE = ULong(0x0000000000000075)
    SOURCE = 'binary'
    PROVIDES = ('section',)
    NUMBER = '3.2.6'
    DOCUMENT = 'messaging'
    PRIMITIVE = 'binary'
    VALUE_FIELD = Field('value', 'value', 'binary', 'binary', accepts=('binary',), coerce=('binary',))

    def __init__(self, value: Any = None) -> None:
        super().__init__(b'' if value is None else value)


class AmqpSequence(Restricted):
    """amqp-sequence (messaging 3.2.7): amqp-sequence."""

    __slots__ = ()
    NAME = 'amqp-sequence'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:amqp-sequence:list')
    CODE = ULong(0x0000000000000076)
    SOURCE = 'list'
    PROVIDES = ('section',)
    NUMBER = '3.2.7'
    DOCUMENT = 'messaging'
    PRIMITIVE = 'list'
    VALUE_FIELD = Field('value', 'value', 'list', 'list', accepts=('list',), coerce=('list',))

    def __init__(self, value: Any = None) -> None:
        super().__init__([] if value is None else value)


class AmqpValue(Restricted):
    """amqp-value (messaging 3.2.8): amqp-value."""

    __slots__ = ()
    NAME = 'amqp-value'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:amqp-value:*')
    CODE = ULong(0x0000000000000077)
    SOURCE = '*'
    PROVIDES = ('section',)
    NUMBER = '3.2.8'
    DOCUMENT = 'messaging'
    PRIMITIVE = '*'
    VALUE_FIELD = Field('value', 'value', '*', '*', accepts=(), coerce=())


class Footer(Restricted):
    """footer (messaging 3.2.9): transport footers for a message."""

    __slots__ = ()
    NAME = 'footer'
    LABEL = 'transport footers for a message'
    DESCRIPTOR = Symbol('amqp:footer:map')
    CODE = ULong(0x0000000000000078)
    SOURCE = 'annotations'
    PROVIDES = ('section',)
    NUMBER = '3.2.9'
    DOCUMENT = 'messaging'
    PRIMITIVE = 'map'
    VALUE_FIELD = Field('value', 'value', 'annotations', 'map', accepts=('map',), coerce=('map',), symbol_keys=True)

    def __init__(self, value: Any = None) -> None:
        super().__init__({} if value is None else value)


class Received(Composite):
    """received (messaging 3.4.1): received."""

    __slots__ = ('section_number', 'section_offset', )
    NAME = 'received'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:received:list')
    CODE = ULong(0x0000000000000023)
    SOURCE = 'list'
    PROVIDES = ('delivery-state',)
    NUMBER = '3.4.1'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('section_number', 'section-number', 'uint', 'uint', mandatory=True, accepts=('uint',), coerce=('uint',)),
        Field('section_offset', 'section-offset', 'ulong', 'ulong', mandatory=True, accepts=('ulong',), coerce=('ulong',)),
    )

    def __init__(self, section_number: Any = None, section_offset: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.section_number = section_number
        self.section_offset = section_offset
        self._init(extra)


class Accepted(Composite):
    """accepted (messaging 3.4.2): the accepted outcome."""

    __slots__ = ()
    NAME = 'accepted'
    LABEL = 'the accepted outcome'
    DESCRIPTOR = Symbol('amqp:accepted:list')
    CODE = ULong(0x0000000000000024)
    SOURCE = 'list'
    PROVIDES = ('delivery-state', 'outcome')
    NUMBER = '3.4.2'
    DOCUMENT = 'messaging'
    FIELDS = (
    )

    def __init__(self, *, extra: Iterable[Any] = ()) -> None:
        self._init(extra)


class Rejected(Composite):
    """rejected (messaging 3.4.3): the rejected outcome."""

    __slots__ = ('error', )
    NAME = 'rejected'
    LABEL = 'the rejected outcome'
    DESCRIPTOR = Symbol('amqp:rejected:list')
    CODE = ULong(0x0000000000000025)
    SOURCE = 'list'
    PROVIDES = ('delivery-state', 'outcome')
    NUMBER = '3.4.3'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('error', 'error', 'error', 'list', label='error that caused the message to be rejected', composites=('error',)),
    )

    def __init__(self, error: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.error = error
        self._init(extra)


class Released(Composite):
    """released (messaging 3.4.4): the released outcome."""

    __slots__ = ()
    NAME = 'released'
    LABEL = 'the released outcome'
    DESCRIPTOR = Symbol('amqp:released:list')
    CODE = ULong(0x0000000000000026)
    SOURCE = 'list'
    PROVIDES = ('delivery-state', 'outcome')
    NUMBER = '3.4.4'
    DOCUMENT = 'messaging'
    FIELDS = (
    )

    def __init__(self, *, extra: Iterable[Any] = ()) -> None:
        self._init(extra)


class Modified(Composite):
    """modified (messaging 3.4.5): the modified outcome."""

    __slots__ = ('delivery_failed', 'undeliverable_here', 'message_annotations', )
    NAME = 'modified'
    LABEL = 'the modified outcome'
    DESCRIPTOR = Symbol('amqp:modified:list')
    CODE = ULong(0x0000000000000027)
    SOURCE = 'list'
    PROVIDES = ('delivery-state', 'outcome')
    NUMBER = '3.4.5'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('delivery_failed', 'delivery-failed', 'boolean', 'boolean', label='count the transfer as an unsuccessful delivery attempt', accepts=('boolean',), coerce=('boolean',)),
        Field('undeliverable_here', 'undeliverable-here', 'boolean', 'boolean', label='prevent redelivery', accepts=('boolean',), coerce=('boolean',)),
        Field('message_annotations', 'message-annotations', 'fields', 'map', label='message attributes', accepts=('map',), coerce=('map',), symbol_keys=True),
    )

    def __init__(self, delivery_failed: Any = None, undeliverable_here: Any = None, message_annotations: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.delivery_failed = delivery_failed
        self.undeliverable_here = undeliverable_here
        self.message_annotations = message_annotations
        self._init(extra)


class Source(Composite):
    """source (messaging 3.5.3): source."""

    __slots__ = ('address', 'durable', 'expiry_policy', 'timeout', 'dynamic', 'dynamic_node_properties', 'distribution_mode', 'filter', 'default_outcome', 'outcomes', 'capabilities', )
    NAME = 'source'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:source:list')
    CODE = ULong(0x0000000000000028)
    SOURCE = 'list'
    PROVIDES = ('source',)
    NUMBER = '3.5.3'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('address', 'address', '*', '*', requires=('address',), label='the address of the source', accepts=('string',), coerce=('string',)),
        Field('durable', 'durable', 'terminus-durability', 'uint', default=UInt(0), label='indicates the durability of the terminus', choices=TerminusDurability, accepts=('uint',), coerce=('uint',)),
        Field('expiry_policy', 'expiry-policy', 'terminus-expiry-policy', 'symbol', default=Symbol('session-end'), label='the expiry policy of the source', choices=TerminusExpiryPolicy, accepts=('symbol',), coerce=('symbol',)),
        Field('timeout', 'timeout', 'seconds', 'uint', default=UInt(0), label='duration that an expiring source will be retained', accepts=('uint',), coerce=('uint',)),
        Field('dynamic', 'dynamic', 'boolean', 'boolean', default=False, label='request dynamic creation of a remote node', accepts=('boolean',), coerce=('boolean',)),
        Field('dynamic_node_properties', 'dynamic-node-properties', 'node-properties', 'map', label='properties of the dynamically created node', accepts=('map',), coerce=('map',), symbol_keys=True),
        Field('distribution_mode', 'distribution-mode', 'symbol', 'symbol', requires=('distribution-mode',), label='the distribution mode of the link', accepts=('symbol',), coerce=('symbol',)),
        Field('filter', 'filter', 'filter-set', 'map', label='a set of predicates to filter the messages admitted onto the link', accepts=('map',), coerce=('map',), symbol_keys=True),
        Field('default_outcome', 'default-outcome', '*', '*', requires=('outcome',), label='default outcome for unsettled transfers', composites=('accepted', 'rejected', 'released', 'modified', 'declared')),
        Field('outcomes', 'outcomes', 'symbol', 'symbol', multiple=True, label='descriptors for the outcomes that can be chosen on this link', accepts=('symbol',), coerce=('symbol',)),
        Field('capabilities', 'capabilities', 'symbol', 'symbol', multiple=True, label='the extension capabilities the sender supports/desires', accepts=('symbol',), coerce=('symbol',)),
    )

    def __init__(self, address: Any = None, durable: Any = None, expiry_policy: Any = None, timeout: Any = None, dynamic: Any = None, dynamic_node_properties: Any = None, distribution_mode: Any = None, filter: Any = None, default_outcome: Any = None, outcomes: Any = None, capabilities: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.address = address
        self.durable = durable
        self.expiry_policy = expiry_policy
        self.timeout = timeout
        self.dynamic = dynamic
        self.dynamic_node_properties = dynamic_node_properties
        self.distribution_mode = distribution_mode
        self.filter = filter
        self.default_outcome = default_outcome
        self.outcomes = outcomes
        self.capabilities = capabilities
        self._init(extra)


class Target(Composite):
    """target (messaging 3.5.4): target."""

    __slots__ = ('address', 'durable', 'expiry_policy', 'timeout', 'dynamic', 'dynamic_node_properties', 'capabilities', )
    NAME = 'target'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:target:list')
    CODE = ULong(0x0000000000000029)
    SOURCE = 'list'
    PROVIDES = ('target',)
    NUMBER = '3.5.4'
    DOCUMENT = 'messaging'
    FIELDS = (
        Field('address', 'address', '*', '*', requires=('address',), label='The address of the target.', accepts=('string',), coerce=('string',)),
        Field('durable', 'durable', 'terminus-durability', 'uint', default=UInt(0), label='indicates the durability of the terminus', choices=TerminusDurability, accepts=('uint',), coerce=('uint',)),
        Field('expiry_policy', 'expiry-policy', 'terminus-expiry-policy', 'symbol', default=Symbol('session-end'), label='the expiry policy of the target', choices=TerminusExpiryPolicy, accepts=('symbol',), coerce=('symbol',)),
        Field('timeout', 'timeout', 'seconds', 'uint', default=UInt(0), label='duration that an expiring target will be retained', accepts=('uint',), coerce=('uint',)),
        Field('dynamic', 'dynamic', 'boolean', 'boolean', default=False, label='request dynamic creation of a remote node', accepts=('boolean',), coerce=('boolean',)),
        Field('dynamic_node_properties', 'dynamic-node-properties', 'node-properties', 'map', label='properties of the dynamically created node', accepts=('map',), coerce=('map',), symbol_keys=True),
        Field('capabilities', 'capabilities', 'symbol', 'symbol', multiple=True, label='the extension capabilities the sender supports/desires', accepts=('symbol',), coerce=('symbol',)),
    )

    def __init__(self, address: Any = None, durable: Any = None, expiry_policy: Any = None, timeout: Any = None, dynamic: Any = None, dynamic_node_properties: Any = None, capabilities: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.address = address
        self.durable = durable
        self.expiry_policy = expiry_policy
        self.timeout = timeout
        self.dynamic = dynamic
        self.dynamic_node_properties = dynamic_node_properties
        self.capabilities = capabilities
        self._init(extra)


class DeleteOnClose(Composite):
    """delete-on-close (messaging 3.5.10): lifetime of dynamic node scoped to lifetime of link which caused creation."""

    __slots__ = ()
    NAME = 'delete-on-close'
    LABEL = 'lifetime of dynamic node scoped to lifetime of link which caused creation'
    DESCRIPTOR = Symbol('amqp:delete-on-close:list')
    CODE = ULong(0x000000000000002b)
    SOURCE = 'list'
    PROVIDES = ('lifetime-policy',)
    NUMBER = '3.5.10'
    DOCUMENT = 'messaging'
    FIELDS = (
    )

    def __init__(self, *, extra: Iterable[Any] = ()) -> None:
        self._init(extra)


class DeleteOnNoLinks(Composite):
    """delete-on-no-links (messaging 3.5.11): lifetime of dynamic node scoped to existence of links to the node."""

    __slots__ = ()
    NAME = 'delete-on-no-links'
    LABEL = 'lifetime of dynamic node scoped to existence of links to the node'
    DESCRIPTOR = Symbol('amqp:delete-on-no-links:list')
    CODE = ULong(0x000000000000002c)
    SOURCE = 'list'
    PROVIDES = ('lifetime-policy',)
    NUMBER = '3.5.11'
    DOCUMENT = 'messaging'
    FIELDS = (
    )

    def __init__(self, *, extra: Iterable[Any] = ()) -> None:
        self._init(extra)


class DeleteOnNoMessages(Composite):
    """delete-on-no-messages (messaging 3.5.12): lifetime of dynamic node scoped to existence of messages on the node."""

    __slots__ = ()
    NAME = 'delete-on-no-messages'
    LABEL = 'lifetime of dynamic node scoped to existence of messages on the node'
    DESCRIPTOR = Symbol('amqp:delete-on-no-messages:list')
    CODE = ULong(0x000000000000002d)
    SOURCE = 'list'
    PROVIDES = ('lifetime-policy',)
    NUMBER = '3.5.12'
    DOCUMENT = 'messaging'
    FIELDS = (
    )

    def __init__(self, *, extra: Iterable[Any] = ()) -> None:
        self._init(extra)


class DeleteOnNoLinksOrMessages(Composite):
    """delete-on-no-links-or-messages (messaging 3.5.13): lifetime of node scoped to existence of messages on or links to the node."""

    __slots__ = ()
    NAME = 'delete-on-no-links-or-messages'
    LABEL = 'lifetime of node scoped to existence of messages on or links to the node'
    DESCRIPTOR = Symbol('amqp:delete-on-no-links-or-messages:list')
    CODE = ULong(0x000000000000002e)
    SOURCE = 'list'
    PROVIDES = ('lifetime-policy',)
    NUMBER = '3.5.13'
    DOCUMENT = 'messaging'
    FIELDS = (
    )

    def __init__(self, *, extra: Iterable[Any] = ()) -> None:
        self._init(extra)


class SaslMechanisms(Composite):
    """sasl-mechanisms (security 5.3.3.1): advertise available sasl mechanisms."""

    __slots__ = ('sasl_server_mechanisms', )
    NAME = 'sasl-mechanisms'
    LABEL = 'advertise available sasl mechanisms'
    DESCRIPTOR = Symbol('amqp:sasl-mechanisms:list')
    CODE = ULong(0x0000000000000040)
    SOURCE = 'list'
    PROVIDES = ('sasl-frame',)
    NUMBER = '5.3.3.1'
    DOCUMENT = 'security'
    FIELDS = (
        Field('sasl_server_mechanisms', 'sasl-server-mechanisms', 'symbol', 'symbol', mandatory=True, multiple=True, label='supported sasl mechanisms', accepts=('symbol',), coerce=('symbol',)),
    )

    def __init__(self, sasl_server_mechanisms: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.sasl_server_mechanisms = sasl_server_mechanisms
        self._init(extra)


class SaslInit(Composite):
    """sasl-init (security 5.3.3.2): initiate sasl exchange."""

    __slots__ = ('mechanism', 'initial_response', 'hostname', )
    NAME = 'sasl-init'
    LABEL = 'initiate sasl exchange'
    DESCRIPTOR = Symbol('amqp:sasl-init:list')
    CODE = ULong(0x0000000000000041)
    SOURCE = 'list'
    PROVIDES = ('sasl-frame',)
    NUMBER = '5.3.3.2'
    DOCUMENT = 'security'
    FIELDS = (
        Field('mechanism', 'mechanism', 'symbol', 'symbol', mandatory=True, label='selected security mechanism', accepts=('symbol',), coerce=('symbol',)),
        Field('initial_response', 'initial-response', 'binary', 'binary', label='security response data', accepts=('binary',), coerce=('binary',), secret=True),
        Field('hostname', 'hostname', 'string', 'string', label='the name of the target host', accepts=('string',), coerce=('string',)),
    )

    def __init__(self, mechanism: Any = None, initial_response: Any = None, hostname: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.mechanism = mechanism
        self.initial_response = initial_response
        self.hostname = hostname
        self._init(extra)


class SaslChallenge(Composite):
    """sasl-challenge (security 5.3.3.3): security mechanism challenge."""

    __slots__ = ('challenge', )
    NAME = 'sasl-challenge'
    LABEL = 'security mechanism challenge'
    DESCRIPTOR = Symbol('amqp:sasl-challenge:list')
    CODE = ULong(0x0000000000000042)
    SOURCE = 'list'
    PROVIDES = ('sasl-frame',)
    NUMBER = '5.3.3.3'
    DOCUMENT = 'security'
    FIELDS = (
        Field('challenge', 'challenge', 'binary', 'binary', mandatory=True, label='security challenge data', accepts=('binary',), coerce=('binary',)),
    )

    def __init__(self, challenge: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.challenge = challenge
        self._init(extra)


class SaslResponse(Composite):
    """sasl-response (security 5.3.3.4): security mechanism response."""

    __slots__ = ('response', )
    NAME = 'sasl-response'
    LABEL = 'security mechanism response'
    DESCRIPTOR = Symbol('amqp:sasl-response:list')
    CODE = ULong(0x0000000000000043)
    SOURCE = 'list'
    PROVIDES = ('sasl-frame',)
    NUMBER = '5.3.3.4'
    DOCUMENT = 'security'
    FIELDS = (
        Field('response', 'response', 'binary', 'binary', mandatory=True, label='security response data', accepts=('binary',), coerce=('binary',), secret=True),
    )

    def __init__(self, response: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.response = response
        self._init(extra)


class SaslOutcome(Composite):
    """sasl-outcome (security 5.3.3.5): indicates the outcome of the sasl dialog."""

    __slots__ = ('code', 'additional_data', )
    NAME = 'sasl-outcome'
    LABEL = 'indicates the outcome of the sasl dialog'
    DESCRIPTOR = Symbol('amqp:sasl-outcome:list')
    CODE = ULong(0x0000000000000044)
    SOURCE = 'list'
    PROVIDES = ('sasl-frame',)
    NUMBER = '5.3.3.5'
    DOCUMENT = 'security'
    FIELDS = (
        Field('code', 'code', 'sasl-code', 'ubyte', mandatory=True, label='indicates the outcome of the sasl dialog', choices=SaslCode, accepts=('ubyte',), coerce=('ubyte',)),
        Field('additional_data', 'additional-data', 'binary', 'binary', label='additional data as specified in RFC-4422', accepts=('binary',), coerce=('binary',)),
    )

    def __init__(self, code: Any = None, additional_data: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.code = code
        self.additional_data = additional_data
        self._init(extra)


class Coordinator(Composite):
    """coordinator (transactions 4.5.1): target for communicating with a transaction coordinator."""

    __slots__ = ('capabilities', )
    NAME = 'coordinator'
    LABEL = 'target for communicating with a transaction coordinator'
    DESCRIPTOR = Symbol('amqp:coordinator:list')
    CODE = ULong(0x0000000000000030)
    SOURCE = 'list'
    PROVIDES = ('target',)
    NUMBER = '4.5.1'
    DOCUMENT = 'transactions'
    FIELDS = (
        Field('capabilities', 'capabilities', 'symbol', 'symbol', requires=('txn-capability',), multiple=True, label='the capabilities supported at the coordinator', accepts=('symbol',), coerce=('symbol',)),
    )

    def __init__(self, capabilities: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.capabilities = capabilities
        self._init(extra)


class Declare(Composite):
    """declare (transactions 4.5.2): message body for declaring a transaction id."""

    __slots__ = ('global_id', )
    NAME = 'declare'
    LABEL = 'message body for declaring a transaction id'
    DESCRIPTOR = Symbol('amqp:declare:list')
    CODE = ULong(0x0000000000000031)
    SOURCE = 'list'
    PROVIDES = ()
    NUMBER = '4.5.2'
    DOCUMENT = 'transactions'
    FIELDS = (
        Field('global_id', 'global-id', '*', '*', requires=('global-tx-id',), label='global transaction id'),
    )

    def __init__(self, global_id: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.global_id = global_id
        self._init(extra)


class Discharge(Composite):
    """discharge (transactions 4.5.3): message body for discharging a transaction."""

    __slots__ = ('txn_id', 'fail', )
    NAME = 'discharge'
    LABEL = 'message body for discharging a transaction'
    DESCRIPTOR = Symbol('amqp:discharge:list')
    CODE = ULong(0x0000000000000032)
    SOURCE = 'list'
    PROVIDES = ()
    NUMBER = '4.5.3'
    DOCUMENT = 'transactions'
    FIELDS = (
        Field('txn_id', 'txn-id', '*', '*', requires=('txn-id',), mandatory=True, label='identifies the transaction to be discharged', accepts=('binary',), coerce=('binary',)),
        Field('fail', 'fail', 'boolean', 'boolean', label='indicates the transaction has failed', accepts=('boolean',), coerce=('boolean',)),
    )

    def __init__(self, txn_id: Any = None, fail: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.txn_id = txn_id
        self.fail = fail
        self._init(extra)


class Declared(Composite):
    """declared (transactions 4.5.5): declared."""

    __slots__ = ('txn_id', )
    NAME = 'declared'
    LABEL = ''
    DESCRIPTOR = Symbol('amqp:declared:list')
    CODE = ULong(0x0000000000000033)
    SOURCE = 'list'
    PROVIDES = ('delivery-state', 'outcome')
    NUMBER = '4.5.5'
    DOCUMENT = 'transactions'
    FIELDS = (
        Field('txn_id', 'txn-id', '*', '*', requires=('txn-id',), mandatory=True, label='the allocated transaction id', accepts=('binary',), coerce=('binary',)),
    )

    def __init__(self, txn_id: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.txn_id = txn_id
        self._init(extra)


class TransactionalState(Composite):
    """transactional-state (transactions 4.5.6): the state of a transactional message transfer."""

    __slots__ = ('txn_id', 'outcome', )
    NAME = 'transactional-state'
    LABEL = 'the state of a transactional message transfer'
    DESCRIPTOR = Symbol('amqp:transactional-state:list')
    CODE = ULong(0x0000000000000034)
    SOURCE = 'list'
    PROVIDES = ('delivery-state',)
    NUMBER = '4.5.6'
    DOCUMENT = 'transactions'
    FIELDS = (
        Field('txn_id', 'txn-id', '*', '*', requires=('txn-id',), mandatory=True, label='identifies the transaction with which the state is associated', accepts=('binary',), coerce=('binary',)),
        Field('outcome', 'outcome', '*', '*', requires=('outcome',), label='provisional outcome', composites=('accepted', 'rejected', 'released', 'modified', 'declared')),
    )

    def __init__(self, txn_id: Any = None, outcome: Any = None, *, extra: Iterable[Any] = ()) -> None:
        self.txn_id = txn_id
        self.outcome = outcome
        self._init(extra)


# every described type, in the order of the XML
DESCRIBED = (
    Open,
    Begin,
    Attach,
    Flow,
    Transfer,
    Disposition,
    Detach,
    End,
    Close,
    Error,
    Header,
    DeliveryAnnotations,
    MessageAnnotations,
    Properties,
    ApplicationProperties,
    Data,
    AmqpSequence,
    AmqpValue,
    Footer,
    Received,
    Accepted,
    Rejected,
    Released,
    Modified,
    Source,
    Target,
    DeleteOnClose,
    DeleteOnNoLinks,
    DeleteOnNoMessages,
    DeleteOnNoLinksOrMessages,
    SaslMechanisms,
    SaslInit,
    SaslChallenge,
    SaslResponse,
    SaslOutcome,
    Coordinator,
    Declare,
    Discharge,
    Declared,
    TransactionalState,
)
BY_NAME: dict[str, Any] = {cls.NAME: cls for cls in DESCRIBED}
BY_CODE: dict[int, Any] = {int(cls.CODE): cls for cls in DESCRIBED}
# descriptor (ulong code or symbol) -> class, for the decoder
REGISTRY: dict[Any, Any] = {**{cls.CODE: cls for cls in DESCRIBED}, **{cls.DESCRIPTOR: cls for cls in DESCRIBED}}

PERFORMATIVES = (Open, Begin, Attach, Flow, Transfer, Disposition, Detach, End, Close, )
SASL_FRAMES = (SaslMechanisms, SaslInit, SaslChallenge, SaslResponse, SaslOutcome, )
SECTIONS = (Header, DeliveryAnnotations, MessageAnnotations, Properties, ApplicationProperties, Data, AmqpSequence, AmqpValue, Footer, )
DELIVERY_STATES = (Received, Accepted, Rejected, Released, Modified, Declared, TransactionalState, )
OUTCOMES = (Accepted, Rejected, Released, Modified, Declared, )
