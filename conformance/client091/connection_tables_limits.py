"""connection.start and connection.tune with values at the edges: field types, duplicate names, a frame-max too small.

Field tables: "The valid field types for tables are an extension of the native integer, bit,
string, and timestamp types, and are shown in the grammar." A client reads every one of them
in the server-properties of connection.start and goes on with the handshake. The grammar and
the deployed code (RabbitMQ's errata) give some codes different meanings (s, U, L, l, x): the
table sent uses only the codes both readings agree on -- t b B u I i f d D S A T F V.
"Duplicate fields are illegal": no table the client writes (client-properties, method
arguments, message headers) names a field twice.

frame-max: "Until the frame-max has been negotiated, both peers MUST accept frames of up to
frame-min-size octets large, and the minimum negotiated value for frame-max is also
frame-min-size." A connection.tune proposing 1024 leaves the client no conformant tune-ok --
1024 is below frame-min-size, anything above it exceeds the proposal (connection.tune-ok
frame-max upper-limit) -- so the proposal is an error detected before open, and "a peer that
detects an error MUST close the socket without sending any further data" (2.2.4/1).
"""
from __future__ import annotations

import datetime
import decimal
from typing import Any

from amqpspec.case import Context, case
from amqpspec.peer.server091 import server_properties
from amqpspec.wire.amqp091 import HeaderFrame, MethodFrame, spec
from amqpspec.wire.amqp091.table import FieldArray, FieldTable, FieldValue

from ._client import closes_silently_on, handshake_goes_on, open_conversation, unmet

FIELD_TYPES = ("The valid field types for tables are an extension of the native integer, bit, string, and "
               "timestamp types, and are shown in the grammar.")
DUPLICATES = "Duplicate fields are illegal."
#: one value of each type code the spec grammar and RabbitMQ's errata read alike
EVERY_TYPE = {
    "bool": FieldValue("t", True), "int8": FieldValue("b", -5), "uint8": FieldValue("B", 200),
    "uint16": FieldValue("u", 60000), "int32": FieldValue("I", -70000), "uint32": FieldValue("i", 4_000_000_000),
    "float": FieldValue("f", 1.5), "double": FieldValue("d", 2.25), "decimal": FieldValue("D", decimal.Decimal("3.14")),
    "longstr": FieldValue("S", "amqpspec"), "array": FieldValue("A", [1, "two", True]),
    "timestamp": FieldValue("T", datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)),
    "table": FieldValue("F", {"inner": "x"}), "void": FieldValue("V", None),
}


@case("amqp091/4.2.5.5/client-reads-every-field-type", role="client",
      title="a connection.start whose server-properties hold one value of every field type (t b B u I i f d D S A T F V) "
            "is read: the handshake goes on",
      guideline=FIELD_TYPES)
def reads_every_field_type(ctx: Context) -> None:
    props = server_properties()
    props["amqpspec-field-types"] = dict(EVERY_TYPE)
    handshake_goes_on(ctx, props, "the handshake goes on after connection.start", FIELD_TYPES)


def _duplicates(value: Any, where: str, out: list[str]) -> None:
    if isinstance(value, FieldTable):
        out.extend(f"{where}: {name[:40]!r}" for name in value.duplicates)
    if isinstance(value, dict):
        for k, v in value.items():
            _duplicates(v, f"{where}.{str(k)[:20]}", out)
    elif isinstance(value, (list, FieldArray)):
        for i, v in enumerate(value):
            _duplicates(v, f"{where}[{i}]", out)


@case("amqp091/4.2.5.5/client-tables-without-duplicate-fields", role="client",
      title="no table the client writes (client-properties, arguments, headers) names a field twice (rpc workload)",
      guideline=DUPLICATES)
def no_duplicate_fields(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    start_ok = p.peer.negotiated.start_ok
    if start_ok is None:
        unmet("connection.start-ok", obs)
    found: list[str] = []
    tables = 1
    _duplicates(start_ok.client_properties, "client-properties", found)
    for f in obs.received:
        if isinstance(f, MethodFrame):
            for fld in f.method.FIELDS:
                if fld.domain == "table" or fld.type == "table":
                    value = getattr(f.method, fld.attr, None)
                    if value is not None:
                        tables += 1
                        _duplicates(value, f"{f.method.NAME}.{fld.name}", found)
        elif isinstance(f, HeaderFrame) and getattr(f.properties, "headers", None) is not None:
            tables += 1
            _duplicates(f.properties.headers, "headers", found)
    ctx.record(not found, guideline=DUPLICATES, expected="every field name once per table",
               observed="; ".join(found[:5]) or f"{tables} table(s), no name twice")
    p.finish()


@case("amqp091/connection.tune/client-refuses-frame-max-below-minimum", role="client",
      title="a connection.tune proposing frame-max 1024 (below frame-min-size 4096) makes the client close the "
            "socket without sending anything",
      clauses=("amqp091:connection.tune.frame-max/minimum", "amqp091:2.2.4/1"))
def refuses_small_frame_max(ctx: Context) -> None:
    closes_silently_on(ctx, "start-ok", MethodFrame(0, spec.ConnectionTune(2047, 1024, 0)))
