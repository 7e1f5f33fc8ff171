"""``amqpspec brokers …``: install, start, stop and describe the test brokers.

Two kinds of broker: the local OS-package brokers (RabbitMQ, garagemq, the Qpid Proton example
broker; :mod:`amqpspec.brokers.local`) and the Docker brokers of ``docker-compose.yml``
(:mod:`amqpspec.brokers.docker`). ``--backend auto`` (the default, or ``$AMQPSPEC_BROKERS_BACKEND``)
manages the Docker brokers when a Docker engine answers and the local ones otherwise;
``up``/``down``/``list``/``status`` say on stderr which one they use ("backend: …"), so stdout
stays as before. Without an engine every command behaves as it did before Docker support.

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

from amqpspec.brokers import (
    BACKENDS,
    BackendChoice,
    Broker,
    BrokerError,
    BrokerStatus,
    ComposeError,
    DockerBroker,
    broker_names,
    choose_backend,
    debian_packages,
    docker_brokers,
    get_broker,
    redact_url,
)
from amqpspec.brokers.docker import Backend, find_compose_file
from amqpspec.cliutil import Seconds
from amqpspec.sanitize import safe_line

EXIT_ERROR = 2
BACKEND_ENV = "AMQPSPEC_BROKERS_BACKEND"


def _fail(message: str) -> NoReturn:
    """The error line, then the log tail it may carry: a broker's own log (or a Docker engine's
    answer) is shown line by line through safe_line, never as raw terminal input."""
    first, _, rest = message.partition("\n")
    click.echo(f"error: {safe_line(first)}", err=True)
    for line in rest.splitlines() if rest else ():
        click.echo(safe_line(line), err=True)
    sys.exit(EXIT_ERROR)


def _select(names: Sequence[str]) -> list[Broker]:
    """Named brokers in the order given, or all local ones; unknown names are an error."""
    try:
        return [get_broker(n) for n in dict.fromkeys(names or broker_names())]
    except BrokerError as exc:
        _fail(str(exc))


def _choose(backend: Backend) -> BackendChoice:
    """Probe the engine once, say which backend is in use (stderr), fail cleanly on --backend docker."""
    try:
        choice = choose_backend(backend)
    except BrokerError as exc:
        _fail(str(exc))
    click.echo(safe_line(f"backend: {choice.message}"), err=True)
    return choice


def _compose_brokers(choice: BackendChoice) -> list[DockerBroker]:
    try:
        return docker_brokers(choice.engine)
    except ComposeError as exc:
        _fail(str(exc))


def _resolve(choice: BackendChoice, names: Sequence[str], *, need_engine: bool) -> list[Broker]:
    """The brokers a command acts on under ``choice``.

    No names: every broker of the chosen backend. Named local brokers are allowed unless
    ``--backend docker`` was asked for; named Docker brokers need ``auto`` or ``docker``, and,
    for commands that start or stop them (``need_engine``), a reachable engine.
    """
    if not names:
        if choice.kind == "local":
            return _select(())
        return list(_compose_brokers(choice))
    local = set(broker_names())
    chosen: list[Broker] = []
    for name in dict.fromkeys(names):
        if name in local:
            if choice.requested == "docker":
                _fail(f"{name} is a local OS-package broker; use --backend local or --backend auto")
            chosen.append(get_broker(name))
            continue
        broker = _select((name,))[0]  # unknown names fail here, with the list of known ones
        if isinstance(broker, DockerBroker):
            if choice.requested == "local":
                _fail(f"{name} is a Docker broker (docker-compose.yml); use --backend docker or --backend auto")
            engine = choice.engine
            if need_engine and (engine is None or not engine.reachable):
                where = f" at {engine.where} ({engine.detail})" if engine is not None else ""
                _fail(
                    f"{name} is a Docker broker from {find_compose_file()}, and no Docker engine is "
                    f"reachable{where}; start Docker or set DOCKER_HOST, or use a local broker "
                    f"({', '.join(broker_names())})"
                )
            broker = DockerBroker(broker.service, engine)
        chosen.append(broker)
    return chosen


def _each(brokers: list[Broker], action: Callable[[Broker], str]) -> None:
    """Run ``action`` on every broker even if one fails, then fail once with all errors."""
    errors: list[str] = []
    for broker in brokers:
        try:
            click.echo(safe_line(f"{broker.name}: {action(broker)}"))
        except BrokerError as exc:
            text = str(exc)
            errors.append(text if text.startswith(broker.name) else f"{broker.name}: {text}")
    if errors:
        _fail("\n".join(errors))


def _statuses(brokers: list[Broker]) -> list[BrokerStatus]:
    rows: list[BrokerStatus] = []
    for broker in brokers:
        try:
            rows.append(broker.status())
        except BrokerError as exc:
            url = redact_url(broker.url)
            rows.append(BrokerStatus(broker.name, broker.protocols, url, False, None, f"error: {exc}"))
    return rows


def _state_word(broker: Broker, row: BrokerStatus) -> str:
    if isinstance(broker, DockerBroker) and not broker.engine.reachable:
        return "unavailable"
    return "running" if row.running else "stopped"


names_argument = click.argument("names", nargs=-1, metavar="[NAME]...")
backend_option = click.option(
    "--backend",
    type=click.Choice(BACKENDS),
    default="auto",
    show_default=True,
    envvar=BACKEND_ENV,
    help="auto: the Docker brokers of docker-compose.yml when a Docker engine is reachable, else the "
    f"local OS-package brokers; docker / local: only those. Also ${BACKEND_ENV}.",
)


@click.group(name="brokers")
def brokers() -> None:
    """Test brokers on 127.0.0.1: local RabbitMQ, garagemq and Qpid Proton (Debian packages,
    no systemd), or the Docker brokers of docker-compose.yml when a Docker engine is reachable."""


@brokers.command()
@names_argument
@click.option("--print-packages", is_flag=True, help="Only print the Debian package names, one per line.")
def install(names: tuple[str, ...], print_packages: bool) -> None:
    """Install the Debian packages of local brokers NAMEs (default: all); a no-op when present."""
    chosen = _select(names)
    docker = [b.name for b in chosen if isinstance(b, DockerBroker)]
    if docker:
        _fail(
            f"{', '.join(docker)}: Docker broker(s), no Debian packages to install; "
            "`amqpspec brokers up NAME` pulls the image"
        )
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
@backend_option
@click.option(
    "--timeout", type=Seconds(0.1), default=None, help="Seconds to wait for each broker (default: per broker)."
)
def up(names: tuple[str, ...], backend: Backend, timeout: float | None) -> None:
    """Start NAMEs (default: all of the backend's brokers) and wait until they accept connections."""
    choice = _choose(backend)

    def run(broker: Broker) -> str:
        began = time.monotonic()
        if not broker.start(timeout):
            return f"already running at {redact_url(broker.url)}"
        return f"started at {redact_url(broker.url)} in {time.monotonic() - began:.1f} s"

    _each(_resolve(choice, names, need_engine=True), run)


@brokers.command()
@names_argument
@backend_option
def down(names: tuple[str, ...], backend: Backend) -> None:
    """Stop NAMEs (default: all of the backend's brokers)."""
    choice = _choose(backend)
    _each(_resolve(choice, names, need_engine=True), lambda b: "stopped" if b.stop() else "was not running")


@brokers.command(name="list")
@backend_option
def list_(backend: Backend) -> None:
    """Name, protocols, URL (without password) and state of every broker.

    Local brokers first, then the Docker brokers ("unavailable" when no engine is reachable).
    """
    choice = _choose(backend)
    chosen: list[Broker] = []
    if choice.requested != "docker":
        chosen.extend(_select(()))
    if choice.requested != "local":
        try:
            chosen.extend(docker_brokers(choice.engine))
        except ComposeError as exc:
            if choice.requested == "docker":
                _fail(str(exc))
            click.echo(safe_line(f"warning: Docker brokers not listed: {exc}"), err=True)
    rows = _statuses(chosen)
    states = [_state_word(b, r) for b, r in zip(chosen, rows, strict=True)]
    width = max(len(r.name) for r in rows)
    pwidth = max(len(",".join(r.protocols)) for r in rows)
    uwidth = max(len(r.url) for r in rows)
    for r, state in zip(rows, states, strict=True):
        detail = r.detail.removeprefix(f"{state}: ")
        extra = "" if detail == state else f"  {detail}"
        line = f"{r.name:<{width}}  {','.join(r.protocols):<{pwidth}}  {r.url:<{uwidth}}  {state}{extra}"
        click.echo(safe_line(line.rstrip()))


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
@backend_option
def status(names: tuple[str, ...], backend: Backend) -> None:
    """Like `list` for NAMEs; exit code 0 when all of them run, 3 when one does not (as LSB status)."""
    choice = _choose(backend)
    rows = _statuses(_resolve(choice, names, need_engine=False))
    for r in rows:
        click.echo(safe_line(f"{r.name}: {r.detail}"))
    if not all(r.running for r in rows):
        sys.exit(3)


def main() -> None:
    brokers(prog_name="python3 -m amqpspec.brokers")
