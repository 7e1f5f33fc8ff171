"""amqpspec driver for pika: runs one workload of the driver contract with pika's
BlockingConnection, as a pika user writes it, and prints one JSON event per line.

Usage: driver.py URL WORKLOAD [key=value ...]. Never prints the URL; never retries.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Any

import pika
import pika.exceptions

OPTIONS = {"queue": "amqpspec-q", "exchange": "", "routing_key": None, "count": "1", "body": "hello",
           "ack": "true", "prefetch": "0", "persistent": "false", "timeout": "5", "heartbeat": None}


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


def flag(value: str | None) -> bool:
    return str(value).lower() in ("1", "true", "yes")


class Failed(Exception):
    """The workload could not go on (an error event was printed)."""


def connect(url: str, opts: dict[str, Any]) -> pika.BlockingConnection:
    params = pika.URLParameters(url)
    if opts["heartbeat"] is not None:
        params.heartbeat = int(opts["heartbeat"])
    params.connection_attempts = 1
    params.retry_delay = 0
    params.socket_timeout = float(opts["timeout"])
    params.blocked_connection_timeout = float(opts["timeout"])
    conn = pika.BlockingConnection(params)
    emit("connected")
    return conn


def properties(opts: dict[str, Any], **extra: Any) -> pika.BasicProperties:
    return pika.BasicProperties(delivery_mode=2 if flag(opts["persistent"]) else None, **extra)


def run(url: str, workload: str, opts: dict[str, Any]) -> int:
    count, timeout = int(opts["count"]), float(opts["timeout"])
    queue, exchange = opts["queue"], opts["exchange"]
    key = opts["routing_key"] if opts["routing_key"] is not None else queue
    body = opts["body"].encode()
    if workload not in ("connect", "publish", "consume", "get", "rpc", "tx", "confirm", "idle"):
        emit("unsupported")
        return 3
    conn = connect(url, opts)
    ch = conn.channel()
    if workload == "publish":
        for n in range(1, count + 1):
            ch.basic_publish(exchange, key, body, properties(opts))
            emit("published", n=n)
    elif workload == "tx":
        ch.tx_select()
        for n in range(1, count + 1):
            ch.basic_publish(exchange, key, body, properties(opts))
            emit("published", n=n)
        ch.tx_commit()
    elif workload == "confirm":
        ch.confirm_delivery()
        for n in range(1, count + 1):
            try:  # pika waits for each confirm in basic_publish
                ch.basic_publish(exchange, key, body, properties(opts), mandatory=False)
                emit("published", n=n)
                emit("confirmed", n=n, ack=True)
            except pika.exceptions.NackError:
                emit("published", n=n)
                emit("confirmed", n=n, ack=False)
    elif workload == "consume":
        ack = flag(opts["ack"])
        if int(opts["prefetch"]):
            ch.basic_qos(prefetch_count=int(opts["prefetch"]))
        got = 0
        for method, props, data in ch.consume(queue, auto_ack=not ack, inactivity_timeout=timeout):
            if method is None:
                emit("error", type="Timeout", message=f"no delivery within {timeout:g}s")
                raise Failed
            got += 1
            emit("delivered", n=got, body=data.decode("utf-8", "replace"), redelivered=bool(method.redelivered))
            if ack:
                ch.basic_ack(method.delivery_tag)
            if got >= count:
                break
        ch.cancel()
    elif workload == "get":
        ack = flag(opts["ack"])
        got = 0  # n counts deliveries 1, 2, ... as in consume (the contract)
        for _ in range(count):
            method, props, data = ch.basic_get(queue, auto_ack=not ack)
            if method is None:
                emit("empty")
                continue
            got += 1
            emit("delivered", n=got, body=data.decode("utf-8", "replace"), redelivered=bool(method.redelivered))
            if ack:
                ch.basic_ack(method.delivery_tag)
    elif workload == "rpc":
        reply_q = ch.queue_declare("", exclusive=True).method.queue
        answers: list[bytes] = []

        def on_reply(c: Any, method: Any, props: Any, data: bytes) -> None:
            answers.append(data)

        ch.basic_consume(reply_q, on_reply, auto_ack=True)
        ch.basic_publish(exchange, key, body, pika.BasicProperties(reply_to=reply_q, correlation_id="amqpspec-1"))
        emit("published", n=1)
        stop = time.monotonic() + timeout
        while not answers and time.monotonic() < stop:
            conn.process_data_events(time_limit=0.1)
        if not answers:
            emit("error", type="Timeout", message=f"no reply within {timeout:g}s")
            raise Failed
        emit("delivered", n=1, body=answers[0].decode("utf-8", "replace"), redelivered=False)
    elif workload == "idle":
        conn.sleep(timeout)
    if ch.is_open:
        ch.close()
    conn.close()
    emit("closed", by="client")
    emit("done")
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        sys.stderr.write("usage: driver.py URL WORKLOAD [key=value ...]\n")
        return 2
    opts = dict(OPTIONS)
    for arg in argv[3:]:
        k, sep, v = arg.partition("=")
        if not sep or k not in opts:
            sys.stderr.write(f"driver.py: unknown option {k!r}\n")
            return 2
        opts[k] = v
    try:
        return run(argv[1], argv[2], opts)
    except Failed:
        return 1
    except pika.exceptions.ConnectionClosedByBroker as exc:
        emit("closed", by="server", code=exc.reply_code, text=str(exc.reply_text))
        emit("error", type=type(exc).__name__, message=str(exc.reply_text))
        return 1
    except pika.exceptions.ChannelClosedByBroker as exc:
        emit("closed", by="server", code=exc.reply_code, text=str(exc.reply_text))
        emit("error", type=type(exc).__name__, message=str(exc.reply_text))
        return 1
    except (pika.exceptions.AMQPError, OSError) as exc:  # a library error, reported as such
        emit("error", type=type(exc).__name__, message=repr(exc)[:500])
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
