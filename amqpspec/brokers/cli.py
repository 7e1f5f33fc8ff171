"""``amqpspec brokers …``: install, start, stop and describe the local test brokers.

Errors are one ``error:`` line on stderr (followed by the log tail when a start failed)
and exit code 2, the suite's code for "could not do what you asked" as opposed to
"the broker failed a check". ``list`` never shows passwords; ``env`` does, because its
output is meant for ``eval`` in scripts that need a working URL.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

import click

from amqpspec.brokers import Broker, BrokerError, broker_names, debian_packages, get_broker, redact_url

EXIT_ERROR = 2


def _fail(message: str) -> NoReturn:
    first, _, rest = message.partition("\n")
    click.echo(f"error: {first}", err=True)
    if rest:
        click.echo(rest, err=True)
    sys.exit(EXIT_ERROR)


def _select(names: Sequence[str]) -> list[Broker]:
    """Named brokers in the order given, or all of them; unknown names are an error."""
    try:
        return [get_broker(n) for n in dict.fromkeys(names or broker_names())]
    except BrokerError as exc:
        _fail(str(exc))


def _each(brokers: list[Broker], action: Callable[[Broker], str]) -> None:
    """Run ``action`` on every broker even if one fails, then fail once with all errors."""
    errors: list[str] = []
    for broker in brokers:
        try:
            click.echo(f"{broker.name}: {action(broker)}")
        except BrokerError as exc:
            text = str(exc)
            errors.append(text if text.startswith(broker.name) else f"{broker.name}: {text}")
    if errors:
        _fail("\n".join(errors))


names_argument = click.argument("names", nargs=-1, metavar="[NAME]...")


@click.group(name="brokers")
def brokers() -> None:
    """Local RabbitMQ, garagemq and Qpid Proton brokers on 127.0.0.1 (Debian packages, no systemd)."""


@brokers.command()
@names_argument
@click.option("--print-packages", is_flag=True, help="Only print the Debian package names, one per line.")
def install(names: tuple[str, ...], print_packages: bool) -> None:
    """Install the Debian packages of NAMEs (default: all); a no-op when present."""
    chosen = _select(names)
    if print_packages:
        try:
            click.echo("\n".join(debian_packages([b.name for b in chosen])))
        except BrokerError as exc:
            _fail(str(exc))
        return

    def run(broker: Broker) -> str:
        done = broker.install()
        return f"installed {' '.join(done)}" if done else "packages already installed"

    _each(chosen, run)


@brokers.command()
@names_argument
@click.option(
    "--timeout", type=float, default=None, help="Seconds to wait for each broker (default: per broker)."
)
def up(names: tuple[str, ...], timeout: float | None) -> None:
    """Start NAMEs (default: all) and wait until they accept connections."""

    def run(broker: Broker) -> str:
        began = time.monotonic()
        if not broker.start(timeout):
            return f"already running at {redact_url(broker.url)}"
        return f"started at {redact_url(broker.url)} in {time.monotonic() - began:.1f} s"

    _each(_select(names), run)


@brokers.command()
@names_argument
def down(names: tuple[str, ...]) -> None:
    """Stop NAMEs (default: all)."""
    _each(_select(names), lambda b: "stopped" if b.stop() else "was not running")


@brokers.command(name="list")
def list_() -> None:
    """Name, protocols, URL (without password) and state of every broker."""
    rows = [b.status() for b in _select(())]
    width = max(len(r.name) for r in rows)
    pwidth = max(len(",".join(r.protocols)) for r in rows)
    uwidth = max(len(r.url) for r in rows)
    for r in rows:
        state = "running" if r.running else "stopped"
        extra = "" if r.detail == state else f"  {r.detail}"
        line = f"{r.name:<{width}}  {','.join(r.protocols):<{pwidth}}  {r.url:<{uwidth}}  {state}{extra}"
        click.echo(line.rstrip())


@brokers.command()
@click.argument("name")
def env(name: str) -> None:
    """Print `export` lines for NAME (AMQPSPEC_URL, AMQPSPEC_TLS_URL, AMQPSPEC_CAFILE, …) for eval."""
    broker = _select((name,))[0]
    values = {
        "AMQPSPEC_BROKER": broker.name,
        "AMQPSPEC_PROTOCOLS": ",".join(broker.protocols),
        "AMQPSPEC_URL": broker.url,
        "AMQPSPEC_TLS_URL": broker.tls_url,
        "AMQPSPEC_CAFILE": broker.cafile,
        "AMQPSPEC_STATE_DIR": str(broker.state_dir.parent),
    }
    for key, value in values.items():
        if value is not None:
            click.echo(f"export {key}={shlex.quote(value)}")


@brokers.command()
@names_argument
def status(names: tuple[str, ...]) -> None:
    """Like `list` for NAMEs; exit code 0 when all of them run, 3 when one does not (as LSB status)."""
    rows = [b.status() for b in _select(names)]
    for r in rows:
        click.echo(f"{r.name}: {r.detail}")
    if not all(r.running for r in rows):
        sys.exit(3)


def main() -> None:
    brokers(prog_name="python3 -m amqpspec.brokers")
