"""amqpspec driver for py-amqp (PyPI ``amqp``, the transport under kombu/celery), AMQP 0-9-1.

Written the way py-amqp's own documentation shows it: a Connection built from host/userid/
password/virtual_host, ``connect()``, channels, ``drain_events(timeout=...)`` to let the library
read, and ``heartbeat_tick()`` from the application's loop (py-amqp sends heartbeats only when
the application calls it). The contract: docs/drivers.md.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "_lib"))
import driverlib as d  # noqa: E402

import amqp  # noqa: E402
from amqp import exceptions as amqp_exc  # noqa: E402


def open_connection(opts: d.Options, **extra: object) -> amqp.Connection:
    url = d.split_url(opts.url)
    kwargs: dict[str, object] = {
        "host": f"{url.host}:{url.port}",
        "virtual_host": url.vhost,
        "ssl": url.tls,
        "connect_timeout": opts.timeout,
        **extra,
    }
    if url.user is not None:
        kwargs["userid"] = url.user
    if url.password is not None:
        kwargs["password"] = url.password
    if opts.heartbeat is not None:
        kwargs["heartbeat"] = opts.heartbeat
    conn = amqp.Connection(**kwargs)
    _opened.append(conn)
    conn.connect()
    d.emit("connected")
    d.step(f"running {opts.workload}")
    return conn


_opened: list[amqp.Connection] = []  # for report_close: was it the connection that closed?


def declare(opts: d.Options, channel: amqp.Channel) -> None:
    if opts.declare:
        channel.queue_declare(opts.queue, durable=False, exclusive=False, auto_delete=False)


def message(opts: d.Options, **properties: object) -> amqp.Message:
    if opts.persistent:
        properties["delivery_mode"] = 2
    return amqp.Message(opts.body, **properties)


def delivered(n: int, msg: amqp.Message) -> None:
    redelivered = bool(msg.delivery_info.get("redelivered", False))
    d.emit("delivered", n=n, body=d.text_of(msg.body), redelivered=redelivered)


def drain(conn: amqp.Connection, until: Callable[[], bool], opts: d.Options, step: str) -> None:
    """Let the library read frames until ``until()`` holds or ``timeout`` passes without it."""
    deadline = time.monotonic() + opts.timeout
    while not until():
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no answer within {opts.timeout:g} s while {step}")
        try:
            conn.drain_events(timeout=min(left, 1.0))
        except socket.timeout:
            conn.heartbeat_tick()


def close(conn: amqp.Connection, channel: amqp.Channel | None) -> None:
    d.step("closing")
    if channel is not None:
        channel.close()
    conn.close()
    d.emit("closed", by="client")


def w_connect(opts: d.Options) -> None:
    conn = open_connection(opts)
    channel = conn.channel()
    close(conn, channel)


def w_publish(opts: d.Options, tx: bool = False) -> None:
    conn = open_connection(opts)
    channel = conn.channel()
    declare(opts, channel)
    if tx:
        channel.tx_select()
    for n in range(1, opts.count + 1):
        d.step(f"publishing message {n}")
        channel.basic_publish(message(opts), exchange=opts.exchange, routing_key=opts.routing_key)
        d.emit("published", n=n)
    if tx:
        channel.tx_commit()
    close(conn, channel)


def w_confirm(opts: d.Options) -> None:
    # confirm_publish=True: py-amqp selects confirms and each basic_publish waits for its ack
    conn = open_connection(opts, confirm_publish=True)
    channel = conn.channel()
    declare(opts, channel)
    for n in range(1, opts.count + 1):
        d.step(f"waiting for the confirm of message {n}")
        try:
            channel.basic_publish(message(opts), exchange=opts.exchange, routing_key=opts.routing_key,
                                  timeout=opts.timeout)
            d.emit("published", n=n)
            d.emit("confirmed", n=n, ack=True)
        except amqp_exc.MessageNacked:
            d.emit("published", n=n)
            d.emit("confirmed", n=n, ack=False)
    d.rest()
    close(conn, channel)


def w_consume(opts: d.Options) -> None:
    conn = open_connection(opts)
    channel = conn.channel()
    declare(opts, channel)
    if opts.prefetch:
        channel.basic_qos(0, opts.prefetch, False)
    got: list[amqp.Message] = []

    def on_message(msg: amqp.Message) -> None:
        if len(got) >= opts.count:
            return  # beyond the workload's count: left unacked, the broker requeues it at close
        got.append(msg)
        delivered(len(got), msg)
        if opts.ack:
            channel.basic_ack(msg.delivery_tag)

    tag = channel.basic_consume(opts.queue, callback=on_message, no_ack=not opts.ack)
    for n in range(1, opts.count + 1):
        d.step(f"waiting for delivery {n}", opts.timeout + 1)
        drain(conn, lambda: len(got) >= n, opts, f"waiting for delivery {n}")
    d.rest()
    channel.basic_cancel(tag)
    close(conn, channel)


def w_get(opts: d.Options) -> None:
    conn = open_connection(opts)
    channel = conn.channel()
    declare(opts, channel)
    n = 0
    for i in range(1, opts.count + 1):
        d.step(f"waiting for the answer to basic.get {i}")
        msg = channel.basic_get(opts.queue, no_ack=not opts.ack)
        if msg is None:
            d.emit("empty")
            continue
        n += 1
        delivered(n, msg)
        if opts.ack:
            channel.basic_ack(msg.delivery_tag)
    close(conn, channel)


def w_rpc(opts: d.Options) -> None:
    conn = open_connection(opts)
    channel = conn.channel()
    reply_queue, _, _ = channel.queue_declare("", exclusive=True)
    replies: list[amqp.Message] = []
    channel.basic_consume(reply_queue, callback=replies.append, no_ack=True)
    correlation = "amqpspec-1"
    channel.basic_publish(message(opts, reply_to=reply_queue, correlation_id=correlation),
                          exchange=opts.exchange, routing_key=opts.routing_key)
    d.emit("published", n=1)
    d.step("waiting for the reply", opts.timeout + 1)
    drain(conn, lambda: bool(replies), opts, "waiting for the reply")
    d.rest()
    delivered(1, replies[0])
    close(conn, channel)


def w_idle(opts: d.Options) -> None:
    conn = open_connection(opts)
    channel = conn.channel()
    d.rest()
    end = time.monotonic() + opts.timeout
    while (left := end - time.monotonic()) > 0:
        try:  # what a py-amqp application's loop does: read, and tick heartbeats
            conn.drain_events(timeout=min(left, 0.5))
        except socket.timeout:
            pass
        conn.heartbeat_tick()
    close(conn, channel)


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


def report_close(exc: BaseException) -> None:
    """A close the server sent (py-amqp raises it as an AMQPError with its code and text)."""
    if isinstance(exc, amqp_exc.AMQPError) and getattr(exc, "reply_code", None):
        # py-amqp raises both kinds with one class per code; a closed connection tells them apart
        scope = "channel" if _opened and _opened[-1].connected else "connection"
        d.emit("closed", by="server", scope=scope, code=exc.reply_code, text=str(exc.reply_text or ""))


def main(argv: list[str]) -> None:
    d.run(d.parse_args(argv, d.WORKLOADS_091), WORKLOADS, on_error=report_close)


if __name__ == "__main__":
    main(sys.argv[1:])
