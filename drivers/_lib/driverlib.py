"""What every Python driver shares: the command line, the JSON-lines events, the deadlines.

A driver (docs/drivers.md) is run as ``driver.py URL WORKLOAD [key=value ...]`` and prints one
JSON object per line. This module keeps the contract in one place so that each driver.py holds
only the library calls its users would write. It depends on nothing but the standard library:
drivers must run with only their own library installed.

Why the password is scrubbed here: libraries put the URL (or parts of it) into exception text,
and the contract says a driver never prints it. Every string an event carries passes through
``scrub`` before it reaches stdout.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import unquote, urlsplit

EXIT_DONE = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_UNSUPPORTED = 3

#: option -> default (strings as given on the command line; types come from _convert)
DEFAULTS: dict[str, str | None] = {
    "queue": "amqpspec-q",
    "exchange": "",
    "routing_key": None,  # = queue
    "address": None,  # 1.0: = queue
    "count": "1",
    "body": "hello",
    "ack": "true",
    "prefetch": "0",
    "persistent": "false",
    "timeout": "5",
    "heartbeat": None,  # library default
    "credit": None,  # 1.0: library default
    "declare": "false",  # 0-9-1: declare `queue` first (publish/consume/get/tx/confirm)
}

WORKLOADS_091 = ("connect", "publish", "consume", "get", "rpc", "tx", "confirm", "idle")
WORKLOADS_10 = ("connect", "send", "receive", "rpc", "idle")

_secrets: list[str] = []
_out_lock = threading.Lock()


@dataclass
class Options:
    url: str
    workload: str
    queue: str
    exchange: str
    routing_key: str
    address: str
    count: int
    body: str
    ack: bool
    prefetch: int
    persistent: bool
    timeout: float
    heartbeat: float | None
    credit: int | None
    declare: bool
    extra: dict[str, str] = field(default_factory=dict)


def usage_error(message: str) -> NoReturn:
    """Bad input: one line on stderr, exit 2 (never a traceback)."""
    print(f"driver: error: {scrub(message)}", file=sys.stderr, flush=True)
    sys.exit(EXIT_USAGE)


def _bool(name: str, text: str) -> bool:
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    usage_error(f"{name}={text!r} is not a boolean (true/false)")


def _number(name: str, text: str, kind: type, minimum: float) -> Any:
    try:
        value = kind(text)
    except ValueError:
        usage_error(f"{name}={text!r} is not a {'whole ' if kind is int else ''}number")
    if value != value or value < minimum or value in (float("inf"),):  # NaN, negatives, inf
        usage_error(f"{name}={text!r} must be a finite number >= {minimum}")
    return value


def parse_args(argv: list[str], workloads: tuple[str, ...]) -> Options:
    """``URL WORKLOAD [key=value ...]`` -> Options, or a one-line usage error."""
    if len(argv) < 2:
        usage_error(f"usage: driver URL WORKLOAD [key=value ...]; workloads: {', '.join(workloads)}")
    url, workload, rest = argv[0], argv[1], argv[2:]
    remember_url_secret(url)
    raw: dict[str, str | None] = dict(DEFAULTS)
    extra: dict[str, str] = {}
    for item in rest:
        key, sep, value = item.partition("=")
        if not sep or not key:
            usage_error(f"option {item!r} is not key=value")
        if key in DEFAULTS:
            raw[key] = value
        else:
            extra[key] = value  # unknown options are kept: a driver may use its own
    queue = raw["queue"] or ""
    heartbeat = raw["heartbeat"]
    credit = raw["credit"]
    return Options(
        url=url,
        workload=workload,
        queue=queue,
        exchange=raw["exchange"] or "",
        routing_key=queue if raw["routing_key"] is None else raw["routing_key"],
        address=queue if raw["address"] is None else raw["address"],
        count=_number("count", raw["count"] or "", int, 0),
        body=raw["body"] or "",
        ack=_bool("ack", raw["ack"] or ""),
        prefetch=_number("prefetch", raw["prefetch"] or "", int, 0),
        persistent=_bool("persistent", raw["persistent"] or ""),
        timeout=_number("timeout", raw["timeout"] or "", float, 0),
        heartbeat=None if heartbeat in (None, "") else _number("heartbeat", heartbeat, float, 0),
        credit=None if credit in (None, "") else _number("credit", credit, int, 0),
        declare=_bool("declare", raw["declare"] or ""),
        extra=extra,
    )


@dataclass
class UrlParts:
    """An amqp(s):// URL split the way libraries without a URL parser are given it."""

    tls: bool
    host: str
    port: int
    user: str | None
    password: str | None
    vhost: str


def split_url(url: str) -> UrlParts:
    """amqp[s]://[user[:password]@]host[:port][/vhost]; an empty or "/" path is the vhost "/"."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        usage_error(f"the URL is not valid: {exc}")
    if parts.scheme not in ("amqp", "amqps") or not parts.hostname:
        usage_error("the URL must be amqp://host[:port]/ or amqps://host[:port]/")
    tls = parts.scheme == "amqps"
    path = parts.path[1:] if parts.path.startswith("/") else parts.path
    return UrlParts(
        tls=tls,
        host=parts.hostname,
        port=port or (5671 if tls else 5672),
        user=None if parts.username is None else unquote(parts.username),
        password=None if parts.password is None else unquote(parts.password),
        vhost=unquote(path) if path else "/",
    )


def remember_url_secret(url: str) -> None:
    """Keep the URL's password (raw and decoded) so that scrub can cut it out of any text."""
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        for form in {password, unquote(password)}:
            if form and form not in _secrets:
                _secrets.append(form)
    if url not in _secrets:
        _secrets.insert(0, url)  # the whole URL first: it contains the password


def scrub(text: str) -> str:
    for secret in _secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def emit(event: str, **fields: Any) -> None:
    """One event line, "event" first, flushed at once (the launcher reads as we go)."""
    record: dict[str, Any] = {"event": event}
    for key, value in fields.items():
        record[key] = scrub(value) if isinstance(value, str) else value
    line = json.dumps(record, ensure_ascii=False)
    with _out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def text_of(body: Any) -> str:
    """A delivered body as text for the event (bytes decoded, undecodable octets replaced)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body).decode("utf-8", errors="replace")
    return body if isinstance(body, str) else str(body)


def error(exc: BaseException) -> None:
    emit("error", type=type(exc).__name__, message=str(exc) or repr(exc))


def fail(exc: BaseException) -> NoReturn:
    """Report a caught library error and end with exit 1, whatever threads the library left."""
    error(exc)
    _exit(EXIT_ERROR)


def unsupported(what: str) -> NoReturn:
    emit("unsupported", workload=what)
    _exit(EXIT_UNSUPPORTED)


def done() -> NoReturn:
    emit("done")
    _exit(EXIT_DONE)


def _exit(code: int) -> NoReturn:
    # os._exit: a library's non-daemon I/O thread must not keep a finished driver alive
    with _out_lock:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


class Watchdog:
    """The driver's own deadline for each wait (the contract's ``timeout`` option).

    Sync libraries can block in a read that has no timeout of its own (a server that never
    answers the handshake); the watchdog then reports ``Timeout`` and ends the driver, so a
    silent peer makes an error event, never a hung process.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._timer: threading.Timer | None = None

    def arm(self, step: str, seconds: float | None = None) -> None:
        self.disarm()
        limit = self.seconds if seconds is None else seconds
        timer = threading.Timer(limit, self._expire, args=(step, limit))
        timer.daemon = True
        self._timer = timer
        timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @staticmethod
    def _expire(step: str, limit: float) -> None:
        emit("error", type="Timeout", message=f"no answer within {limit:g} s while {step}")
        _exit(EXIT_ERROR)


_watchdog = Watchdog(5.0)


def step(what: str, seconds: float | None = None) -> None:
    """Start the driver's deadline for one wait (``timeout`` seconds unless told)."""
    _watchdog.arm(what, seconds)


def rest() -> None:
    """No deadline while the workload waits on purpose (idle)."""
    _watchdog.disarm()


def run(opts: Options, workloads: dict[str, Any], on_error: Any = None) -> NoReturn:
    """Run one workload under the contract: done -> 0, a caught library error -> 1."""
    workload = workloads.get(opts.workload)
    if workload is None:
        unsupported(opts.workload)
    _watchdog.seconds = opts.timeout
    step("opening the connection")
    try:
        workload(opts)
    except Exception as exc:  # a library error: reported as the contract's error event
        if on_error is not None:
            on_error(exc)
        fail(exc)
    done()
