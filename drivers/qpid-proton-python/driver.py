"""amqpspec driver for python-qpid-proton: runs one AMQP 1.0 workload of the driver contract
with proton's BlockingConnection (proton.utils), as a proton user writes it, and prints one
JSON event per line.

Usage: driver.py URL WORKLOAD [key=value ...]. Never prints the URL or its password; never
retries or reconnects (reconnect=False: proton's default for one URL is to try again).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import unquote, urlsplit

from proton import Message, ProtonException, Timeout
from proton.utils import BlockingConnection, ConnectionClosed, LinkDetached, SendException, SyncRequestResponse

OPTIONS: dict[str, str | None] = {"queue": "amqpspec-q", "address": None, "count": "1", "body": "hello",
                                  "ack": "true", "credit": None, "timeout": "5", "heartbeat": None,
                                  "rollback": "false"}
WORKLOADS = ("connect", "send", "receive", "rpc", "idle", "tx")
SECRETS: list[str] = []
OPEN: list[BlockingConnection] = []    # the connection, closed on the way out as a user's finally: would


def scrub(text: str) -> str:
    for s in SECRETS:
        text = text.replace(s, "***")
    return text


def emit(event: str, **fields: Any) -> None:
    record = {"event": event, **{k: scrub(v) if isinstance(v, str) else v for k, v in fields.items()}}
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def finish(code: int) -> None:
    sys.stdout.flush()
    os._exit(code)   # proton's reactor must not keep a finished driver alive


def parse(argv: list[str]) -> tuple[str, str, dict[str, str | None]]:
    if len(argv) < 2:
        print(f"driver: error: usage: driver.py URL WORKLOAD [key=value ...] ({', '.join(WORKLOADS)})", file=sys.stderr)
        sys.exit(2)
    url, workload = argv[0], argv[1]
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    SECRETS.extend([url] + ([password, unquote(password)] if password else []))
    opts = dict(OPTIONS)
    for item in argv[2:]:
        key, sep, value = item.partition("=")
        if not sep or not key:
            print(f"driver: error: option {scrub(item)!r} is not key=value", file=sys.stderr)
            sys.exit(2)
        opts[key] = value
    if opts["address"] is None:
        opts["address"] = opts["queue"]
    return url, workload, opts


def closed_event(exc: BaseException) -> None:
    """How the library told the application of the end: a condition the server sent, if any."""
    cond = getattr(exc, "condition", None)
    emit("closed", by="server", condition=str(getattr(cond, "name", "") or ""),
         text=str(getattr(cond, "description", "") or exc))


def run(url: str, workload: str, opts: dict[str, str | None]) -> int:
    if workload not in WORKLOADS:
        emit("unsupported")
        return 3
    timeout = float(opts["timeout"] or 5)
    count = int(opts["count"] or 1)
    address = str(opts["address"])
    body = str(opts["body"])
    heartbeat = None if opts["heartbeat"] in (None, "") else float(str(opts["heartbeat"]))
    if workload == "tx":
        from tx import run_tx   # proton's transactions live in its event API (Container), not BlockingConnection

        return run_tx(url, address, body, count, timeout, heartbeat,
                      rollback=str(opts["rollback"]).lower() in ("1", "true", "yes"), emit=emit)
    conn = BlockingConnection(url, timeout=timeout, heartbeat=heartbeat, reconnect=False)
    OPEN.append(conn)
    emit("connected")
    if workload == "send":
        sender = conn.create_sender(address)
        for n in range(1, count + 1):
            emit("published", n=n)
            try:
                sender.send(Message(body=body))   # waits for the outcome (settlement)
                emit("confirmed", n=n, ack=True)
            except SendException as exc:
                emit("confirmed", n=n, ack=False, state=str(exc.state))
        sender.close()
    elif workload == "receive":
        credit = None if opts["credit"] in (None, "") else int(str(opts["credit"]))
        receiver = conn.create_receiver(address, credit=credit) if credit is not None else conn.create_receiver(address)
        for n in range(1, count + 1):
            msg = receiver.receive(timeout=timeout)
            emit("delivered", n=n, body=str(msg.body), redelivered=bool(msg.delivery_count))
            if str(opts["ack"]).lower() in ("1", "true", "yes"):
                receiver.accept()
        receiver.close()
    elif workload == "rpc":
        client = SyncRequestResponse(conn, address)
        emit("published", n=1)
        reply = client.call(Message(body=body))
        emit("delivered", n=1, body=str(reply.body), redelivered=False)
        client.receiver.close()
        client.sender.close()
    elif workload == "idle":
        try:
            conn.wait(lambda: False, timeout=timeout, msg="idling")
        except Timeout:
            pass   # the idle time is over: the connection lived through it
    OPEN.clear()
    conn.close()
    emit("closed", by="client")
    return 0


def cleanup() -> None:
    """What a user's ``finally: conn.close()`` does after an error: lets the library finish its
    side of the closing (answer the server's close) before the process ends."""
    for conn in OPEN:
        try:
            conn.close()
        except (ProtonException, OSError):
            pass


def main() -> None:
    url, workload, opts = parse(sys.argv[1:])
    try:
        code = run(url, workload, opts)
    except (ConnectionClosed, LinkDetached) as exc:
        closed_event(exc)
        emit("error", type=type(exc).__name__, message=str(exc))
        cleanup()
        finish(1)
    except (ProtonException, OSError) as exc:   # the library's own errors; anything else is a crash
        emit("error", type=type(exc).__name__, message=str(exc))
        cleanup()
        finish(1)
    if code == 0:
        emit("done")
    finish(code)


if __name__ == "__main__":
    main()
