"""4.2.5.5 Field tables, as the client writes them.

"Field names MUST start with a letter, '$' or '#' and may continue with letters, '$' or
'#', digits, or underlines, to a maximum length of 128 characters" (4.2.5.5/1) binds every
encoder of a table: here the client's client-properties (nested tables included) and every
table it sends in an rpc workload (queue.declare and basic.consume arguments, message
headers).

Two names conflict with another text: RabbitMQ's extensions ask a client to announce them
in its capabilities table as ``connection.blocked`` and ``basic.nack`` -- names with a dot,
which 4.2.5.5/1 does not allow. A client must use the vendor's names for the extensions to
work at all, so those two keys of ``capabilities`` are accepted (and noted), as a case
accepts the set of outcomes two conflicting texts allow.
"""
from __future__ import annotations

import re
from typing import Any

from amqpspec.case import Context, case
from amqpspec.wire.amqp091 import HeaderFrame, MethodFrame, to_plain

from ._client import open_conversation, unmet

NAME = re.compile(r"^[A-Za-z$#][A-Za-z0-9$#_]{0,127}$")


VENDOR_NAMES = {("client-properties.capabilities", "connection.blocked"),
                ("client-properties.capabilities", "basic.nack")}


def _bad_names(table: Any, where: str, out: list[str], noted: list[str] | None = None) -> None:
    if isinstance(table, dict):
        for k, v in table.items():
            key = k.decode("utf-8", "replace") if isinstance(k, (bytes, bytearray)) else str(k)
            if (where, key) in VENDOR_NAMES:
                if noted is not None:
                    noted.append(f"{where}: {key!r} (the RabbitMQ extension's own name)")
            elif not NAME.match(key):
                out.append(f"{where}: {key[:40]!r}")
            _bad_names(v, f"{where}.{key[:20]}", out, noted)
    elif isinstance(table, list):
        for i, v in enumerate(table):
            _bad_names(v, f"{where}[{i}]", out, noted)


@case("amqp091/4.2.5.5/client-field-names-valid", role="client",
      title="every field name in the client's tables starts with a letter, $ or # and is at most 128 characters",
      clauses=("amqp091:4.2.5.5/1",))
def field_names(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc")
    obs = p.serve()
    bad: list[str] = []
    noted: list[str] = []
    tables = 0
    start_ok = p.peer.negotiated.start_ok
    if start_ok is None:
        unmet("connection.start-ok", obs)
    _bad_names(to_plain(start_ok.client_properties or {}), "client-properties", bad, noted)
    for n in noted:
        ctx.note(f"accepted despite 4.2.5.5/1: {n}")
    tables += 1
    for f in obs.received:
        if isinstance(f, MethodFrame):
            for fld in f.method.FIELDS:
                if fld.domain == "table" or fld.type == "table":
                    value = getattr(f.method, fld.attr, None)
                    if value:
                        tables += 1
                        _bad_names(to_plain(value), f"{f.method.NAME}.{fld.name}", bad)
        elif isinstance(f, HeaderFrame) and f.properties is not None and getattr(f.properties, "headers", None):
            tables += 1
            _bad_names(to_plain(f.properties.headers), "headers", bad)
    ctx.record(not bad, expected="field names matching [A-Za-z$#][A-Za-z0-9$#_]{0,127}",
               observed="; ".join(bad[:5]) or f"{tables} table(s), every name valid")
    p.finish()
