"""amqpspec driver for aio-pika (PyPI ``aio-pika``, asyncio, over aiormq), AMQP 0-9-1.

Written as aio-pika's documentation shows it: ``aio_pika.connect(url)`` (not connect_robust:
the contract forbids reconnecting unless the library does so by default), channels, queue
objects, ``Message`` and the default exchange. aio-pika opens channels with publisher confirms
on by default; the plain ``publish`` and ``tx`` workloads turn them off (a transaction needs
that), ``confirm`` keeps them. The contract: docs/drivers.md.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_lib"))
import driverlib as d  # noqa: E402

import aio_pika  # noqa: E402
import aiormq.exceptions as amqp_exc  # noqa: E402
from aiormq.channel import EXCEPTION_MAPPING  # noqa: E402
from pamqp import commands as spec  # noqa: E402


async def open_connection(opts: d.Options) -> aio_pika.abc.AbstractConnection:
    kwargs: dict[str, Any] = {"timeout": opts.timeout}
    if opts.heartbeat is not None:
        kwargs["heartbeat"] = int(opts.heartbeat)  # aio-pika passes it on as the URL's query
    conn = await aio_pika.connect(opts.url, **kwargs)
    d.emit("connected")
    d.step(f"running {opts.workload}")
    return conn


async def declare(opts: d.Options, channel: aio_pika.abc.AbstractChannel) -> None:
    if opts.declare:
        await channel.declare_queue(opts.queue, durable=False, exclusive=False, auto_delete=False)


async def exchange_of(opts: d.Options, channel: aio_pika.abc.AbstractChannel) -> Any:
    if opts.exchange == "":
        return channel.default_exchange
    return await channel.get_exchange(opts.exchange, ensure=False)


def message(opts: d.Options, **properties: Any) -> aio_pika.Message:
    mode = aio_pika.DeliveryMode.PERSISTENT if opts.persistent else aio_pika.DeliveryMode.NOT_PERSISTENT
    return aio_pika.Message(body=opts.body.encode(), delivery_mode=mode, **properties)


def delivered(n: int, msg: aio_pika.abc.AbstractIncomingMessage) -> None:
    d.emit("delivered", n=n, body=d.text_of(msg.body), redelivered=bool(msg.redelivered))


async def within(awaitable: Any, opts: d.Options, what: str) -> Any:
    try:
        return await asyncio.wait_for(awaitable, opts.timeout)
    except asyncio.TimeoutError:
        raise TimeoutError(f"no answer within {opts.timeout:g} s while {what}") from None


async def close(conn: aio_pika.abc.AbstractConnection, channel: aio_pika.abc.AbstractChannel | None) -> None:
    d.step("closing")
    if channel is not None:
        await channel.close()
    await conn.close()
    d.emit("closed", by="client")


async def w_connect(opts: d.Options) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel()
    await close(conn, channel)


async def w_publish(opts: d.Options, tx: bool = False) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel(publisher_confirms=False)
    await declare(opts, channel)
    exchange = await exchange_of(opts, channel)
    transaction = channel.transaction() if tx else None
    if transaction is not None:
        await transaction.select()
    for n in range(1, opts.count + 1):
        d.step(f"publishing message {n}")
        await exchange.publish(message(opts), routing_key=opts.routing_key)
        d.emit("published", n=n)
    if transaction is not None:
        d.step("waiting for tx.commit-ok")
        await transaction.commit()
    await close(conn, channel)


async def w_confirm(opts: d.Options) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel(publisher_confirms=True)
    await declare(opts, channel)
    exchange = await exchange_of(opts, channel)
    for n in range(1, opts.count + 1):
        d.step(f"waiting for the confirm of message {n}")
        try:
            confirmation = await exchange.publish(message(opts), routing_key=opts.routing_key,
                                                  timeout=opts.timeout)
            ack = isinstance(confirmation, spec.Basic.Ack)
        except amqp_exc.DeliveryError:  # a basic.nack (or a returned mandatory message)
            ack = False
        d.emit("published", n=n)
        d.emit("confirmed", n=n, ack=ack)
    await close(conn, channel)


async def w_consume(opts: d.Options) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel(publisher_confirms=False)
    await declare(opts, channel)
    if opts.prefetch:
        await channel.set_qos(prefetch_count=opts.prefetch)
    queue = await channel.get_queue(opts.queue, ensure=False)
    async with queue.iterator(no_ack=not opts.ack) as deliveries:  # basic.cancel on leaving
        for n in range(1, opts.count + 1):
            d.step(f"waiting for delivery {n}", opts.timeout + 1)
            msg = await within(deliveries.__anext__(), opts, f"waiting for delivery {n}")
            delivered(n, msg)
            if opts.ack:
                await msg.ack()
        d.step("cancelling the consumer")
    await close(conn, channel)


async def w_get(opts: d.Options) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel(publisher_confirms=False)
    await declare(opts, channel)
    queue = await channel.get_queue(opts.queue, ensure=False)
    n = 0
    for i in range(1, opts.count + 1):
        d.step(f"waiting for the answer to basic.get {i}")
        msg = await queue.get(no_ack=not opts.ack, fail=False, timeout=opts.timeout)
        if msg is None:
            d.emit("empty")
            continue
        n += 1
        delivered(n, msg)
        if opts.ack:
            await msg.ack()
    await close(conn, channel)


async def w_rpc(opts: d.Options) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel(publisher_confirms=False)
    replies = await channel.declare_queue(exclusive=True)  # server-named
    exchange = await exchange_of(opts, channel)
    async with replies.iterator(no_ack=True) as incoming:
        await exchange.publish(message(opts, reply_to=replies.name, correlation_id="amqpspec-1"),
                               routing_key=opts.routing_key)
        d.emit("published", n=1)
        d.step("waiting for the reply", opts.timeout + 1)
        reply = await within(incoming.__anext__(), opts, "waiting for the reply")
        delivered(1, reply)
        d.step("cancelling the consumer")
    await close(conn, channel)


async def w_idle(opts: d.Options) -> None:
    conn = await open_connection(opts)
    channel = await conn.channel()
    d.rest()
    await asyncio.sleep(opts.timeout)  # the event loop lets aiormq answer heartbeats meanwhile
    await close(conn, channel)


WORKLOADS = {
    "connect": w_connect,
    "publish": w_publish,
    "tx": lambda opts: w_publish(opts, tx=True),
    "confirm": w_confirm,
    "consume": w_consume,
    "get": w_get,
    "rpc": w_rpc,
    "idle": w_idle,
}


_MAPPED_CODES = {cls: code for code, cls in EXCEPTION_MAPPING.items()}


def report_close(exc: BaseException) -> None:
    """aiormq raises a server's close as ChannelClosed / ConnectionClosed with (code, text), or,
    for the channel codes it maps to a subclass (403-406), with the text alone."""
    code = _MAPPED_CODES.get(type(exc))
    if code is not None and len(exc.args) == 1:
        d.emit("closed", by="server", scope="channel", code=code, text=str(exc.args[0]))
    elif isinstance(exc, (amqp_exc.ChannelClosed, amqp_exc.ConnectionClosed)) and len(exc.args) >= 2:
        code, text = exc.args[0], exc.args[1]
        if isinstance(code, int) and code:
            scope = "connection" if isinstance(exc, amqp_exc.ConnectionClosed) else "channel"
            d.emit("closed", by="server", scope=scope, code=code, text=str(text))


def main(argv: list[str]) -> None:
    opts = d.parse_args(argv, d.WORKLOADS_091)
    workload = WORKLOADS.get(opts.workload)
    runner = {opts.workload: lambda o: asyncio.run(workload(o))} if workload else {}
    d.run(opts, runner, on_error=report_close)


if __name__ == "__main__":
    main(sys.argv[1:])
