"""What every amqpspec command shares: one-line errors and their exit codes.

A module of its own (not ``amqpspec.cli``) so that the commands of other parts can import it
without importing the main command group, which imports them (``python -m amqpspec.cli``
would otherwise load the group twice and meet a half-initialised module).
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, NoReturn

import click

from amqpspec.errors import AmqpspecError


def fail(message: str, code: int = 2) -> NoReturn:
    click.echo(f"amqpspec: error: {message}", err=True)
    sys.exit(code)


def guarded(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turns the suite's own errors into one line and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except AmqpspecError as exc:
            fail(str(exc), exc.exit_code)
        except OSError as exc:
            fail(f"{exc.strerror or exc}{': ' + exc.filename if getattr(exc, 'filename', None) else ''}")
        except KeyboardInterrupt:
            click.echo("amqpspec: interrupted; what finished is in the output files", err=True)
            sys.exit(130)

    return wrapper
