"""Run the client drivers (drivers/*/driver.toml) against real brokers and check their output.

The driver contract (docs/drivers.md) is what `amqpspec client` relies on; this module checks
it from outside, with no amqpspec framework in between: each driver is launched as the
framework would launch it, its stdout is read as JSON lines, and the lines are checked against
the contract (events known, "event" first, n counted 1, 2, ... per kind, connected before the
work, done last with exit 0, an error event with exit 1, unsupported with exit 3, the URL's
password nowhere on stdout or stderr).

    python3 -m bench.drivers_matrix                          # every installed driver, all workloads
    python3 -m bench.drivers_matrix --driver rhea --driver py-amqp
    python3 -m bench.drivers_matrix --url-091 amqp://u:p@127.0.0.1:5672/ --url-10 amqp://127.0.0.1:5674/

tests/integration/test_drivers.py runs a quick subset of the same checks in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

DRIVERS_DIR = Path(__file__).resolve().parent.parent / "drivers"

EVENTS = {"connected", "published", "confirmed", "delivered", "empty", "closed", "error", "done", "unsupported"}
COUNTED = ("published", "confirmed", "delivered")
EXIT_DONE, EXIT_ERROR, EXIT_UNSUPPORTED = 0, 1, 3


@dataclass(frozen=True)
class Driver:
    name: str
    protocol: str
    library: str
    directory: Path
    command: tuple[str, ...]
    check: str
    version: str


@dataclass
class Run:
    driver: str
    workload: str
    options: tuple[str, ...]
    returncode: int | None  # None: killed at the deadline
    stdout: str
    stderr: str
    seconds: float
    events: list[dict] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> list[str]:
        return [e.get("event", "?") for e in self.events]

    def summary(self) -> str:
        return f"{self.driver} {self.workload} {' '.join(self.options)}: exit {self.returncode}, events {self.kinds}"


def discover(directory: Path = DRIVERS_DIR) -> list[Driver]:
    drivers = []
    for toml in sorted(directory.glob("*/driver.toml")):
        with toml.open("rb") as fh:
            spec = tomllib.load(fh)
        drivers.append(Driver(
            name=spec["name"], protocol=spec["protocol"], library=spec.get("library", spec["name"]),
            directory=toml.parent, command=tuple(spec["command"]), check=spec.get("check", "true"),
            version=spec.get("version", "true"),
        ))
    return drivers


def _shell(driver: Driver, command: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", command], cwd=driver.directory, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def check(driver: Driver) -> str | None:
    """None when the driver's library is usable, else the reason its check gave."""
    try:
        result = _shell(driver, driver.check)
    except subprocess.TimeoutExpired:
        return "its check did not finish within 30 s"
    if result.returncode == 0:
        return None
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"its check exited {result.returncode}"


def version(driver: Driver) -> str:
    try:
        result = _shell(driver, driver.version)
    except subprocess.TimeoutExpired:
        return "?"
    return result.stdout.strip() if result.returncode == 0 else "?"


def run(driver: Driver, url: str, workload: str, *options: str, deadline: float = 20) -> Run:
    """Launch the driver as the framework does and check what it printed against the contract."""
    argv = [part.replace("{url}", url).replace("{workload}", workload) for part in driver.command]
    started = time.monotonic()
    proc = subprocess.Popen([*argv, *options], cwd=driver.directory, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=deadline)
        returncode: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        stdout, stderr = proc.communicate()
        returncode = None
    result = Run(driver.name, workload, options, returncode, stdout, stderr, time.monotonic() - started)
    result.problems = contract_problems(result, url)
    return result


def contract_problems(result: Run, url: str) -> list[str]:
    """What in one run breaks the driver contract (an empty list: nothing)."""
    problems: list[str] = []
    password = urlsplit(url).password
    if password:
        for stream, text in (("stdout", result.stdout), ("stderr", result.stderr)):
            if password in text:
                problems.append(f"the password appears on {stream}")
    if result.returncode is None:
        problems.append("did not end before the deadline (killed)")
    for number, line in enumerate(result.stdout.splitlines(), 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            problems.append(f"stdout line {number} is not JSON: {line[:80]!r}")
            continue
        if not isinstance(record, dict) or next(iter(record), None) != "event":
            problems.append(f"stdout line {number} is not an object with \"event\" first: {line[:80]!r}")
            continue
        if record["event"] not in EVENTS:
            problems.append(f"stdout line {number}: unknown event {record['event']!r}")
        result.events.append(record)
    kinds = result.kinds
    for kind in COUNTED:
        numbers = [e.get("n") for e in result.events if e.get("event") == kind]
        if numbers != list(range(1, len(numbers) + 1)):
            problems.append(f"{kind} events are not numbered 1, 2, ...: {numbers}")
    ending = kinds[-1] if kinds else None
    expected_exit = {"done": EXIT_DONE, "error": EXIT_ERROR, "unsupported": EXIT_UNSUPPORTED}.get(ending or "")
    if expected_exit is None:
        problems.append(f"the last event is {ending!r}, not done, error or unsupported")
    elif result.returncode is not None and result.returncode != expected_exit:
        problems.append(f"exit status {result.returncode} after {ending!r} (the contract: {expected_exit})")
    if "done" in kinds:
        if kinds[0] != "connected":
            problems.append(f"a completed workload starts with {kinds[0]!r}, not connected")
        if "error" in kinds:
            problems.append("done after an error event")
    return problems


def expect(result: Run, **counts: int) -> list[str]:
    """Problems when a run that should complete did not, or counted other than expected."""
    problems = list(result.problems)
    if result.returncode != EXIT_DONE or not result.kinds or result.kinds[-1] != "done":
        errors = [f"{e.get('type')}: {e.get('message')}" for e in result.events if e.get("event") == "error"]
        problems.append(f"did not complete: {result.summary()}; error: {errors[-1] if errors else None!r}; "
                        f"stderr: {result.stderr.strip()[-300:]!r}")
    for kind, wanted in counts.items():
        got = result.kinds.count(kind)
        if got != wanted:
            problems.append(f"{got} {kind} events, expected {wanted}")
    return problems


# --- the responders the rpc workloads need (a broker alone never answers a request) ---------

@contextmanager
def responder_091(url: str, queue: str) -> Iterator[None]:
    """Answer every request on `queue` to its reply-to with the same body (pika, in a thread)."""
    import pika

    connection = pika.BlockingConnection(pika.URLParameters(url))
    channel = connection.channel()
    channel.queue_declare(queue, auto_delete=True)

    def answer(ch, method, props, body):  # type: ignore[no-untyped-def]
        ch.basic_publish("", props.reply_to, b"reply:" + body,
                         pika.BasicProperties(correlation_id=props.correlation_id))
        ch.basic_ack(method.delivery_tag)

    channel.basic_consume(queue, answer)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            connection.process_data_events(time_limit=0.2)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
        connection.close()


@contextmanager
def responder_10(url: str, address: str) -> Iterator[None]:
    """Answer every request on `address` to its reply-to (python-qpid-proton, in a thread)."""
    from proton import Message
    from proton.utils import BlockingConnection

    connection = BlockingConnection(url, timeout=5, allowed_mechs="ANONYMOUS PLAIN",
                                    allow_insecure_mechs=True)
    receiver = connection.create_receiver(address, credit=10)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                request = receiver.receive(timeout=0.3)
            except Exception:  # noqa: BLE001 - proton's Timeout: nothing to answer yet
                continue
            receiver.accept()
            sender = connection.create_sender(request.reply_to)
            sender.send(Message(body=f"reply:{request.body}", correlation_id=request.correlation_id))
            sender.close()

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
        connection.close()


# --- the matrix ------------------------------------------------------------------------------

@contextmanager
def queue_091(url: str, queue: str) -> Iterator[None]:
    """An empty queue for one driver's 0-9-1 workloads, deleted afterwards (pika: the contract's
    workloads declare nothing, and pika is amqpspec's own dependency)."""
    import pika

    connection = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = connection.channel()
        channel.queue_declare(queue)
        channel.queue_purge(queue)
        yield
        channel.queue_delete(queue)
    finally:
        connection.close()


def verdict(result: Run, problems: list[str]) -> str:
    """ok; unsupported (said so, exit 3); refused (the broker closed with a code or condition: the
    driver followed the contract and the broker said no); FAIL."""
    if result.problems:
        return "FAIL"
    if result.kinds[-1:] == ["unsupported"]:
        return "unsupported"
    if not problems:
        return "ok"
    if "error" in result.kinds and any(e.get("event") == "closed" and e.get("by") == "server"
                                       for e in result.events):
        return "refused"
    return "FAIL"


def matrix_091(driver: Driver, url: str) -> list[tuple[Run, list[str]]]:
    q = f"amqpspec-drv-{driver.name}"
    out = []

    def step(workload: str, *options: str, **counts: int) -> bool:
        result = run(driver, url, workload, f"queue={q}", "timeout=5", *options)
        out.append((result, expect(result, **counts)))
        return result.kinds[-1:] != ["unsupported"]

    with queue_091(url, q):
        step("connect")
        step("publish", "count=3", published=3)
        step("get", "count=1", delivered=1)
        step("consume", "count=2", "prefetch=1", delivered=2)
        step("get", "count=1", empty=1)
        queued = 2 if step("tx", "count=2", published=2) else 0
        queued += 2 if step("confirm", "count=2", "persistent=true", published=2, confirmed=2) else 0
        step("get", f"count={queued}", delivered=queued)
        with responder_091(url, f"{q}-rpc"):
            step("rpc", f"queue={q}-rpc", published=1, delivered=1)
        step("idle", "timeout=3", "heartbeat=2")
    return out


def matrix_10(driver: Driver, url: str, address_prefix: str) -> list[tuple[Run, list[str]]]:
    address = f"{address_prefix}amqpspec-drv-{driver.name}"
    out = []

    def step(workload: str, *options: str, **counts: int) -> None:
        result = run(driver, url, workload, f"address={address}", "timeout=5", *options)
        out.append((result, expect(result, **counts)))

    step("connect")
    step("send", "count=2", published=2, confirmed=2)
    step("receive", "count=2", "credit=1", delivered=2)
    step("send", "count=1", published=1, confirmed=1)
    step("receive", "count=1", delivered=1)
    with responder_10(url, f"{address}-rpc"):
        step("rpc", f"address={address}-rpc", published=1, delivered=1)
    step("idle", "timeout=2", "heartbeat=2")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--driver", action="append", help="only these drivers (repeatable)")
    parser.add_argument("--url-091", default="amqp://guest:guest@127.0.0.1:5672/")
    parser.add_argument("--url-10", action="append",
                        help="1.0 brokers (default: the Proton example broker and RabbitMQ's plugin)")
    args = parser.parse_args(argv)
    urls_10 = args.url_10 or ["amqp://127.0.0.1:5674/", "amqp://guest:guest@127.0.0.1:5672/"]
    drivers = [d for d in discover() if not args.driver or d.name in args.driver]
    failures = 0
    jobs = []
    for driver in drivers:
        reason = check(driver)
        if reason is not None:
            print(f"{driver.name}: skipped ({reason})")
            continue
        if driver.protocol == "0-9-1":
            jobs.append((driver, args.url_091, lambda d=driver: matrix_091(d, args.url_091)))
        else:
            for url in urls_10:
                # RabbitMQ's 1.0 plugin wants /queue/NAME to create a queue; the example broker takes any
                prefix = "/queue/" if urlsplit(url).port == 5672 else ""
                jobs.append((driver, url, lambda d=driver, u=url, p=prefix: matrix_10(d, u, p)))
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = [(driver, url, pool.submit(job)) for driver, url, job in jobs]
        for driver, url, future in results:
            where = f"{urlsplit(url).hostname}:{urlsplit(url).port}"
            print(f"\n{driver.name} {version(driver)} ({driver.protocol}) against {where}")
            try:
                outcomes = future.result()
            except Exception as exc:  # noqa: BLE001 - a broker gone or a responder that failed: say so, go on
                failures += 1
                print(f"  FAIL        could not run: {type(exc).__name__}: {exc}")
                continue
            for result, problems in outcomes:
                said = verdict(result, problems)
                failures += said == "FAIL"
                shown = " ".join(o for o in result.options if not o.startswith(("queue=", "address=", "timeout=5")))
                print(f"  {said:11} {result.workload:8} {shown:28} {result.seconds:5.2f} s")
                if said != "ok":
                    for problem in problems:
                        print(f"      {problem}")
    print(f"\n{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
