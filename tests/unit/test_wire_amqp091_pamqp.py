"""Cross-check of the AMQP 0-9-1 codec against pamqp, an independent implementation.

Both directions, for every method the two codecs share (matched by class-id/method-id),
the basic content header, body and heartbeat frames and the protocol header:

* ours encodes, ``pamqp.frame.unmarshal`` decodes, the values agree;
* pamqp marshals (``pamqp.frame.marshal``), our ``FrameReader`` decodes, the values agree,
  and re-encoding what we decoded gives pamqp's bytes exactly (remembered table codes).

pamqp reads field tables the RabbitMQ way, so our ``RABBITMQ`` dialect is used throughout.
Values are normalised before comparing: pamqp gives timestamps as ``datetime``, byte arrays
(``x``) as ``bytearray``, and long strings as ``str`` when they are valid UTF-8.

Where pamqp and the specification XML disagree (documented here, asserted below so that a
change in pamqp is noticed):

* Field names. pamqp keeps names of older AMQP versions or renames Python keywords:
  ``reserved-1`` is ``ticket`` / ``out_of_band`` / ``channel_id`` / ``known_hosts`` /
  ``capabilities`` / ``cluster_id``, ``reserved-2`` of connection.open is ``insist``,
  ``no-wait`` is ``nowait``, exchange.declare ``type`` is ``exchange_type``, and the basic
  properties ``type`` / ``reserved`` are ``message_type`` / ``cluster_id``. Fields are
  matched by position; the native types agree position by position.
* ``longlong`` (delivery-tag): unsigned 64-bit in the spec, pamqp packs and reads it signed,
  so tags >= 2**63 come back negative and cannot be marshalled.
* Reserved fields: pamqp insists on values of its own: channel.open ``reserved-1`` = "0"
  (a one-octet short string), channel.open-ok ``reserved-1`` = "0"; the spec only reserves them.
* Timestamps above 0xFFFFFFFF are read by pamqp as milliseconds (and overflow ``datetime``
  beyond year 9999), so timestamps are kept to 32 bits here.
* Short strings: pamqp decodes strict UTF-8 (ours keeps any octets), and marshals only
  ``str``; long strings are marshalled only from ``str``.
* Basic properties: pamqp treats an empty short string as absent when marshalling, and
  validates delivery-mode in {1, 2} and cluster-id (``reserved``) empty.
* ``synchronous``: pamqp means "expects a reply", the XML also marks the replies
  synchronous. basic.recover has no ``synchronous``/response in the XML (RabbitMQ errata,
  section 28); pamqp gives it basic.recover-ok.
* A content body frame of zero octets is valid, but ``pamqp.frame.unmarshal`` refuses it.
* Field tables: pamqp marshals keys sorted, picks the smallest integer code, marshals
  Python floats as float32 (``f``) and cannot marshal ``bytes`` (only ``bytearray``).
"""
from __future__ import annotations

import datetime
import decimal
import functools
import inspect
import string
import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amqpspec.wire.amqp091 import (
    PROTOCOL_HEADER, BodyFrame, FrameReader, HeaderFrame, HeartbeatFrame, MethodFrame, ProtocolHeader,
    spec, to_plain,
)
from amqpspec.wire.amqp091.base import Field
from amqpspec.wire.amqp091.table import RABBITMQ

from . import strategies_amqp091 as S

pamqp = pytest.importorskip("pamqp")
from pamqp import body as pbody  # noqa: E402
from pamqp import commands as pcommands  # noqa: E402
from pamqp import constants as pconstants  # noqa: E402
from pamqp import frame as pframe  # noqa: E402
from pamqp import header as pheader  # noqa: E402
from pamqp import heartbeat as pheartbeat  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pamqp warns on basic.recover-async

SHARED = [(spec.METHODS[i], pcommands.INDEX_MAPPING[i]) for i in sorted(set(spec.METHODS) & set(pcommands.INDEX_MAPPING))]
CHECK = settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # x 64 classes
MANY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# spec field name -> pamqp attribute, where they differ (see the module docstring)
NAME_DIFFERENCES = {
    "connection.open": {"reserved-1": "capabilities", "reserved-2": "insist"},
    "connection.open-ok": {"reserved-1": "known_hosts"},
    "channel.open": {"reserved-1": "out_of_band"},
    "channel.open-ok": {"reserved-1": "channel_id"},
    "exchange.declare": {"reserved-1": "ticket", "type": "exchange_type", "no-wait": "nowait"},
    "exchange.delete": {"reserved-1": "ticket", "no-wait": "nowait"},
    "exchange.bind": {"reserved-1": "ticket", "no-wait": "nowait"},
    "exchange.unbind": {"reserved-1": "ticket", "no-wait": "nowait"},
    "queue.declare": {"reserved-1": "ticket", "no-wait": "nowait"},
    "queue.bind": {"reserved-1": "ticket", "no-wait": "nowait"},
    "queue.purge": {"reserved-1": "ticket", "no-wait": "nowait"},
    "queue.delete": {"reserved-1": "ticket", "no-wait": "nowait"},
    "queue.unbind": {"reserved-1": "ticket"},
    "basic.consume": {"reserved-1": "ticket", "no-wait": "nowait"},
    "basic.cancel": {"no-wait": "nowait"},
    "basic.publish": {"reserved-1": "ticket"},
    "basic.get": {"reserved-1": "ticket"},
    "basic.get-empty": {"reserved-1": "cluster_id"},
    "basic properties": {"type": "message_type", "reserved": "cluster_id"},
}
PAMQP_NAME_PATTERN = string.ascii_letters + string.digits + "-_.:@#,/+ "  # pamqp's exchange/queue-name regex
MAX_TS32 = 0xFFFFFFFF
MAX_I64 = (1 << 63) - 1


def pairs(ours: Any, theirs: Any) -> list[tuple[Field, str]]:
    """Our fields with pamqp's attribute at the same position."""
    slots = list(theirs.__slots__)
    assert len(slots) == len(ours.FIELDS)
    return list(zip(ours.FIELDS, slots))


# ------------------------------------------------------------------------------ normalising

def from_pamqp(value: Any) -> Any:
    """pamqp's decoded (or input) values in our decoded form."""
    if isinstance(value, dict):
        return {k: from_pamqp(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_pamqp(v) for v in value]
    if isinstance(value, datetime.datetime):
        return int(value.timestamp())
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def ours_plain(field: Field, value: Any) -> Any:
    if field.type == "table":
        return to_plain(value)
    return value


def pamqp_as_ours(field: Field, value: Any) -> Any:
    if field.type == "longstr" and isinstance(value, str):
        return value.encode("utf-8")  # pamqp decodes long strings to str when they are UTF-8
    if field.type == "table" and value is None:
        return {}
    return from_pamqp(value)


# ------------------------------------------------------------------------------ strategies

def _names() -> st.SearchStrategy[str]:
    return S.utf8_shortstr(64)


# what pamqp can *read*: our values, minus invalid UTF-8 short strings and 64-bit timestamps
READABLE_TYPES = {
    "shortstr": S.utf8_shortstr(),
    "table": S.field_table(RABBITMQ, names=_names(), kinds={"timestamp": st.integers(0, MAX_TS32)}),
    "timestamp": st.integers(0, MAX_TS32),
}


def _pamqp_table() -> st.SearchStrategy[dict[str, Any]]:
    """Plain values pamqp can marshal into a table (its encoder infers the codes)."""
    scalars = st.one_of(
        st.booleans(), st.integers(-(1 << 63), MAX_I64), st.floats(width=32, allow_nan=False),
        st.builds(S.decimal_from, st.integers(0, 255), st.integers(-(1 << 31), (1 << 31) - 1)),
        st.text(max_size=64), st.binary(max_size=32).map(bytearray), st.none(),
        st.integers(0, MAX_TS32).map(lambda t: datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc)),
    )
    value = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(S.utf8_shortstr(32), c, max_size=4)),
                         max_leaves=10)
    return st.dictionaries(S.utf8_shortstr(128), value, max_size=6)


def _pamqp_value(field: Field) -> st.SearchStrategy[Any]:
    """A value pamqp accepts for our field (pamqp validates on construction)."""
    if field.domain in ("exchange-name", "queue-name"):
        return st.text(PAMQP_NAME_PATTERN, max_size=127)
    if field.type == "shortstr":
        return S.utf8_shortstr(127)
    if field.type == "longstr":
        return st.text(max_size=128)
    if field.type == "longlong":
        return st.integers(0, MAX_I64)
    if field.type == "table":
        return _pamqp_table()
    return S.native(field.type)


@functools.cache
def _pamqp_kwargs(ours: Any, theirs: Any) -> st.SearchStrategy[dict[str, Any]]:
    params = inspect.signature(theirs.__init__).parameters
    fixed = {}
    for field, attr in pairs(ours, theirs):
        if field.reserved:  # pamqp insists on its own value: leave its default
            continue
        fixed[attr] = _pamqp_value(field)
    assert set(fixed) <= set(params)
    return st.fixed_dictionaries(fixed)


def _pamqp_properties() -> st.SearchStrategy[Any]:
    kw: dict[str, st.SearchStrategy[Any]] = {}
    for field, attr in pairs(spec.BasicProperties, pcommands.Basic.Properties):
        if field.reserved or attr == "cluster_id":
            continue
        if attr == "delivery_mode":
            value: st.SearchStrategy[Any] = st.sampled_from([1, 2])
        elif field.type == "timestamp":
            value = st.integers(0, MAX_TS32).map(lambda t: datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc))
        elif field.type == "shortstr":
            value = S.utf8_shortstr(127)
        else:
            value = _pamqp_value(field)
        kw[attr] = st.one_of(st.none(), value)
    return st.fixed_dictionaries(kw).map(lambda k: pcommands.Basic.Properties(**k))


# ------------------------------------------------------------------------------ metadata agreement

def test_pamqp_and_we_have_the_same_methods_with_the_same_types() -> None:
    assert set(spec.METHODS) == set(pcommands.INDEX_MAPPING), "method sets differ: update the docstring"
    differences = {}
    for ours, theirs in SHARED:
        diff = {}
        for field, attr in pairs(ours, theirs):
            assert theirs.amqp_type(attr) == field.type, (ours.NAME, field.name)
            if field.attr != attr:
                diff[field.name] = attr
        if diff:
            differences[ours.NAME] = diff
        # pamqp's "synchronous" means "expects a reply"; the XML marks replies synchronous too
        expected = [f"{c.NAME.split('.')[0].capitalize()}.{c.__name__[len(c.NAME.split('.')[0]):]}"
                    for c in map(spec.METHODS_BY_NAME.get, ours.RESPONSES)]
        if ours.NAME == "basic.recover":  # the XML gives it no response (RabbitMQ errata, section 28)
            assert theirs.valid_responses == ["Basic.RecoverOk"] and not ours.RESPONSES
        else:
            assert sorted(getattr(theirs, "valid_responses", [])) == sorted(expected), ours.NAME
    props = {f.name: a for f, a in pairs(spec.BasicProperties, pcommands.Basic.Properties) if f.attr != a}
    for field, attr in pairs(spec.BasicProperties, pcommands.Basic.Properties):
        assert pcommands.Basic.Properties.amqp_type(attr) == field.type
    differences["basic properties"] = props
    assert differences == NAME_DIFFERENCES


# ------------------------------------------------------------------------------ ours -> pamqp

@functools.cache
def _readable_method(cls: Any) -> st.SearchStrategy[Any]:
    return S.method(cls, RABBITMQ, types=READABLE_TYPES)


def _unmarshal(wire: bytes) -> tuple[int, Any]:
    consumed, channel, obj = pframe.unmarshal(wire)
    assert consumed == len(wire)
    return channel, obj


@pytest.mark.parametrize("ours,theirs", SHARED, ids=[o.NAME for o, _ in SHARED])
@CHECK
@given(data=st.data())
def test_pamqp_reads_our_methods(ours: Any, theirs: Any, data: st.DataObject) -> None:
    method = data.draw(_readable_method(ours), label="method")
    channel = data.draw(S.channels(), label="channel")
    got_channel, obj = _unmarshal(MethodFrame(channel, method).encode(RABBITMQ))
    assert got_channel == channel and type(obj) is theirs
    for field, attr in pairs(ours, theirs):
        mine = ours_plain(field, getattr(method, field.attr))
        theirs_value = pamqp_as_ours(field, getattr(obj, attr))
        if field.type == "longlong" and mine > MAX_I64:  # pamqp reads longlong signed
            mine -= 1 << 64
        assert theirs_value == mine, (ours.NAME, field.name)


def test_pamqp_reads_delivery_tags_signed() -> None:
    _, obj = _unmarshal(MethodFrame(1, spec.BasicAck(delivery_tag=(1 << 64) - 1)).encode())
    assert obj.delivery_tag == -1  # the spec's longlong is unsigned: a pamqp deviation


@MANY
@given(frame=S.header_frame(RABBITMQ, types=READABLE_TYPES))
def test_pamqp_reads_our_content_headers(frame: HeaderFrame) -> None:
    channel, obj = _unmarshal(frame.encode(RABBITMQ))
    assert channel == frame.channel and isinstance(obj, pheader.ContentHeader)
    assert (obj.class_id, obj.weight, obj.body_size) == (frame.class_id, frame.weight, frame.body_size)
    for field, attr in pairs(spec.BasicProperties, pcommands.Basic.Properties):
        mine = getattr(frame.properties, field.attr)
        theirs_value = getattr(obj.properties, attr)
        if mine is None and attr == "cluster_id":
            assert theirs_value == ""  # pamqp's default for the absent reserved property
            continue
        assert from_pamqp(theirs_value) == (to_plain(mine) if field.type == "table" else mine), field.name


@MANY
@given(frame=S.body_frame().filter(lambda f: f.data))
def test_pamqp_reads_our_body_frames(frame: BodyFrame) -> None:
    channel, obj = _unmarshal(frame.encode())
    assert channel == frame.channel and isinstance(obj, pbody.ContentBody) and obj.value == frame.data


def test_pamqp_refuses_an_empty_body_frame() -> None:
    with pytest.raises(pamqp.exceptions.UnmarshalingException):
        pframe.unmarshal(BodyFrame(1, b"").encode())


def test_pamqp_reads_our_heartbeat_and_protocol_header() -> None:
    channel, obj = _unmarshal(HeartbeatFrame().encode())
    assert channel == 0 and isinstance(obj, pheartbeat.Heartbeat)
    consumed, _, obj = pframe.unmarshal(ProtocolHeader().encode())
    assert consumed == 8 and isinstance(obj, pheader.ProtocolHeader)
    assert (obj.major_version, obj.minor_version, obj.revision) == spec.PROTOCOL_VERSION


# ------------------------------------------------------------------------------ pamqp -> ours

def _read_one(wire: bytes) -> Any:
    reader = FrameReader(dialect=RABBITMQ)
    reader.feed(wire)
    items = list(reader)
    assert len(items) == 1 and reader.pending == 0
    return items[0]


@pytest.mark.parametrize("ours,theirs", SHARED, ids=[o.NAME for o, _ in SHARED])
@CHECK
@given(data=st.data())
def test_we_read_pamqp_methods(ours: Any, theirs: Any, data: st.DataObject) -> None:
    kwargs = data.draw(_pamqp_kwargs(ours, theirs), label="kwargs")
    channel = data.draw(S.channels(), label="channel")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        obj = theirs(**kwargs)
    wire = pframe.marshal(obj, channel)
    frame = _read_one(wire)
    assert isinstance(frame, MethodFrame) and frame.channel == channel, getattr(frame, "error", frame)
    method = frame.method
    assert type(method) is ours
    for field, attr in pairs(ours, theirs):
        assert ours_plain(field, getattr(method, field.attr)) == pamqp_as_ours(field, getattr(obj, attr)), field.name
    assert frame.encode(RABBITMQ) == wire, "re-encoding what we decoded changed pamqp's bytes"


def test_pamqp_reserved_values_are_read_as_given() -> None:
    frame = _read_one(pframe.marshal(pcommands.Channel.Open(), 1))
    assert frame.method == spec.ChannelOpen(reserved_1="0")
    frame = _read_one(pframe.marshal(pcommands.Channel.OpenOk(), 1))
    assert frame.method == spec.ChannelOpenOk(reserved_1=b"0")


@MANY
@given(props=_pamqp_properties(), body_size=S.unsigned(64), channel=S.channels())
def test_we_read_pamqp_content_headers(props: Any, body_size: int, channel: int) -> None:
    wire = pframe.marshal(pheader.ContentHeader(0, body_size, props), channel)
    frame = _read_one(wire)
    assert isinstance(frame, HeaderFrame), getattr(frame, "error", frame)
    assert (frame.channel, frame.class_id, frame.weight, frame.body_size) == (channel, 60, 0, body_size)
    for field, attr in pairs(spec.BasicProperties, pcommands.Basic.Properties):
        theirs_value = getattr(props, attr)
        if theirs_value == "":  # pamqp does not send empty short strings
            theirs_value = None
        mine = getattr(frame.properties, field.attr)
        assert (to_plain(mine) if field.type == "table" else mine) == from_pamqp(theirs_value), field.name
    assert frame.encode(RABBITMQ) == wire


@MANY
@given(data=st.binary(max_size=2048), channel=S.channels())
def test_we_read_pamqp_bodies(data: bytes, channel: int) -> None:
    wire = pframe.marshal(pbody.ContentBody(data), channel)
    assert _read_one(wire) == BodyFrame(channel, data)


def test_we_read_pamqp_heartbeat_and_protocol_header() -> None:
    assert _read_one(pframe.marshal(pheartbeat.Heartbeat(), 0)) == HeartbeatFrame(0)
    wire = pframe.marshal(pheader.ProtocolHeader(), 0)
    assert wire == PROTOCOL_HEADER and _read_one(wire) == ProtocolHeader()
    assert pconstants.FRAME_END == spec.FRAME_END and pconstants.FRAME_MIN_SIZE == spec.FRAME_MIN_SIZE


def test_decimal_and_float_tables_agree() -> None:
    """Spot checks of the value kinds where representations differ most."""
    table = {"d": decimal.Decimal("-1.25"), "z": decimal.Decimal("0E-3"), "f": 0.5, "big": MAX_I64, "neg": -(1 << 40)}
    wire = pframe.marshal(pcommands.Queue.Declare(arguments=table), 1)
    frame = _read_one(wire)
    assert frame.method.arguments == table
    assert frame.method.arguments.codes == {"d": "D", "z": "D", "f": "f", "big": "l", "neg": "l"}
    _, obj = _unmarshal(MethodFrame(1, spec.QueueDeclare(arguments=frame.method.arguments)).encode(RABBITMQ))
    assert obj.arguments == table
