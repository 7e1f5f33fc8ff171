"""Encode/decode throughput of the AMQP 0-9-1 codec, ours against pamqp, in one run.

Run from the repository root (needs pamqp, ``pip install -e .[bench]``)::

    python -m bench.codec_amqp091            # all scenarios
    python -m bench.codec_amqp091 deliver    # only the named ones
    python -m bench.codec_amqp091 --repeat 9 --seconds 0.5

Each scenario is a short frame sequence a broker or client handles all the time; it is
encoded to bytes and decoded back to frame objects. Ours decodes with ``FrameReader``
(the stream decoder the peer uses, framing checks included); pamqp with
``pamqp.frame.unmarshal`` in a loop over the same bytes, the way its clients call it.
Numbers are the best of ``--repeat`` timeit runs, in operations (whole sequences) per
second. Both codecs use RabbitMQ's field-table dialect.
"""
from __future__ import annotations

import argparse
import datetime
import platform
import sys
import timeit
from dataclasses import dataclass
from typing import Any, Callable

from amqpspec.wire.amqp091 import (
    RABBITMQ, BodyFrame, FrameReader, HeaderFrame, MethodFrame, MalformedFrame, spec,
)

try:
    from pamqp import body as pbody
    from pamqp import commands as pcommands
    from pamqp import frame as pframe
    from pamqp import header as pheader
except ImportError:  # pragma: no cover
    sys.exit("the benchmark compares against pamqp: pip install -e '.[bench]'")

BODY = bytes(range(256)) * 4  # 1 KiB
TIMESTAMP = 1_700_000_000
HEADERS = {"x-retry": 3, "trace-id": "4bf92f3577b34da6a3ce929d0e0e4736", "x-first": True}


@dataclass
class Scenario:
    name: str
    what: str
    ours: list[Any]   # our frames
    theirs: list[tuple[Any, int]]  # pamqp (frame object, channel)


def _publish() -> Scenario:
    props = dict(content_type="application/json", delivery_mode=2, message_id="m-000042", app_id="bench")
    ours = [
        MethodFrame(1, spec.BasicPublish(exchange="amq.direct", routing_key="orders.created")),
        HeaderFrame(1, 60, len(BODY), spec.BasicProperties(headers=dict(HEADERS), timestamp=TIMESTAMP, **props)),
        BodyFrame(1, BODY),
    ]
    ts = datetime.datetime.fromtimestamp(TIMESTAMP, tz=datetime.timezone.utc)
    theirs = [
        (pcommands.Basic.Publish(exchange="amq.direct", routing_key="orders.created"), 1),
        (pheader.ContentHeader(0, len(BODY), pcommands.Basic.Properties(headers=dict(HEADERS), timestamp=ts, **props)), 1),
        (pbody.ContentBody(BODY), 1),
    ]
    return Scenario("publish", "basic.publish + header (5 properties, 3-entry headers) + 1 KiB body", ours, theirs)


def _deliver() -> Scenario:
    args = dict(consumer_tag="amq.ctag-Vx3k2Lq", delivery_tag=123456, redelivered=False,
                exchange="amq.direct", routing_key="orders.created")
    props = dict(content_type="application/json", delivery_mode=2, message_id="m-000042", app_id="bench")
    ours = [
        MethodFrame(1, spec.BasicDeliver(**args)),
        HeaderFrame(1, 60, len(BODY), spec.BasicProperties(headers=dict(HEADERS), timestamp=TIMESTAMP, **props)),
        BodyFrame(1, BODY),
    ]
    ts = datetime.datetime.fromtimestamp(TIMESTAMP, tz=datetime.timezone.utc)
    theirs = [
        (pcommands.Basic.Deliver(**args), 1),
        (pheader.ContentHeader(0, len(BODY), pcommands.Basic.Properties(headers=dict(HEADERS), timestamp=ts, **props)), 1),
        (pbody.ContentBody(BODY), 1),
    ]
    return Scenario("deliver", "basic.deliver + header (5 properties, 3-entry headers) + 1 KiB body", ours, theirs)


def server_properties() -> dict[str, Any]:
    """~50 entries, like RabbitMQ's: strings, a nested capabilities table, numbers, an array."""
    caps = {name: True for name in (
        "publisher_confirms", "exchange_exchange_bindings", "basic.nack", "consumer_cancel_notify",
        "connection.blocked", "consumer_priorities", "authentication_failure_close", "per_consumer_qos",
        "direct_reply_to")}
    props: dict[str, Any] = {
        "capabilities": caps,
        "cluster_name": "rabbit@bench-host.example.com",
        "copyright": "Copyright (c) 2007-2024 Broadcom Inc and/or its subsidiaries",
        "information": "Licensed under the MPL 2.0. Website: https://rabbitmq.com",
        "platform": "Erlang/OTP 26.2.5",
        "product": "RabbitMQ",
        "version": "3.13.7",
        "supported": ["0-9-1", "1.0", "mqtt", "stomp"],
    }
    for i in range(20):
        props[f"x-setting-{i:02d}"] = f"value number {i} of the benchmark table"
    for i in range(14):
        props[f"x-limit-{i:02d}"] = i * 1000 + 7
    return props


def _start() -> Scenario:
    sp = server_properties()
    args = dict(version_major=0, version_minor=9, mechanisms="PLAIN AMQPLAIN", locales="en_US")
    ours = [MethodFrame(0, spec.ConnectionStart(server_properties=sp, **{k: v.encode() if isinstance(v, str) else v
                                                                         for k, v in args.items()}))]
    theirs = [(pcommands.Connection.Start(server_properties=sp, **args), 0)]
    n = len(sp) + len(sp["capabilities"])
    return Scenario("start", f"connection.start, server-properties of {n} entries (nested capabilities)", ours, theirs)


SCENARIOS: dict[str, Callable[[], Scenario]] = {"publish": _publish, "deliver": _deliver, "start": _start}


def ours_encode(frames: list[Any]) -> bytes:
    return b"".join([f.encode(RABBITMQ) for f in frames])


def ours_decode(data: bytes) -> list[Any]:
    reader = FrameReader(dialect=RABBITMQ, expect_protocol_header=False)
    reader.feed(data)
    return list(reader)


def theirs_encode(objs: list[tuple[Any, int]]) -> bytes:
    return b"".join([pframe.marshal(obj, ch) for obj, ch in objs])


def theirs_decode(data: bytes) -> list[Any]:
    out = []
    while data:
        n, _, obj = pframe.unmarshal(data)
        out.append(obj)
        data = data[n:]
    return out


def best_rate(fn: Callable[[], Any], repeat: int, seconds: float) -> float:
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * seconds / 0.2))
    return number / min(timer.repeat(repeat=repeat, number=number))


def check(s: Scenario) -> tuple[bytes, bytes]:
    ours_bytes, theirs_bytes = ours_encode(s.ours), theirs_encode(s.theirs)
    decoded = ours_decode(theirs_bytes)
    assert not any(isinstance(f, MalformedFrame) for f in decoded), decoded
    assert len(decoded) == len(s.ours) and len(theirs_decode(ours_bytes)) == len(s.theirs)
    return ours_bytes, theirs_bytes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", metavar="scenario", help=f"scenarios to run: {', '.join(SCENARIOS)} (default: all)")
    ap.add_argument("--repeat", type=int, default=7, help="timeit repeats; the best is kept (default 7)")
    ap.add_argument("--seconds", type=float, default=0.2, help="approximate duration of one repeat (default 0.2)")
    opts = ap.parse_args(argv)
    names = opts.names or list(SCENARIOS)
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        ap.error(f"unknown scenario(s) {', '.join(unknown)}; choose from {', '.join(SCENARIOS)}")
    print(f"python {platform.python_version()} on {platform.machine()}, best of {opts.repeat}; ops/s = sequences per second")
    head = f"{'scenario':<9} {'octets':>6} | {'enc ours':>10} {'enc pamqp':>10} {'ratio':>6} | {'dec ours':>10} {'dec pamqp':>10} {'ratio':>6}"
    print(head)
    print("-" * len(head))
    slower = []
    for name in names:
        s = SCENARIOS[name]()
        ours_bytes, theirs_bytes = check(s)
        enc_o = best_rate(lambda: ours_encode(s.ours), opts.repeat, opts.seconds)
        enc_t = best_rate(lambda: theirs_encode(s.theirs), opts.repeat, opts.seconds)
        dec_o = best_rate(lambda: ours_decode(ours_bytes), opts.repeat, opts.seconds)
        dec_t = best_rate(lambda: theirs_decode(theirs_bytes), opts.repeat, opts.seconds)
        print(f"{name:<9} {len(ours_bytes):>6} | {enc_o:>10,.0f} {enc_t:>10,.0f} {enc_o / enc_t:>5.2f}x |"
              f" {dec_o:>10,.0f} {dec_t:>10,.0f} {dec_o / dec_t:>5.2f}x")
        if dec_o < dec_t:
            slower.append(name)
    for name in names:
        print(f"  {name}: {SCENARIOS[name]().what}")
    if slower:
        print(f"decode slower than pamqp in: {', '.join(slower)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
