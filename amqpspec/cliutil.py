"""What every amqpspec command shares: one-line errors and their exit codes, option types that
refuse hostile values, the password given apart from the URL, and output paths checked early.

A module of its own (not ``amqpspec.cli``) so that the commands of other parts can import it
without importing the main command group, which imports them (``python -m amqpspec.cli``
would otherwise load the group twice and meet a half-initialised module).
"""
from __future__ import annotations

import functools
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, NoReturn

import click

from amqpspec.errors import AmqpspecError, UsageError
from amqpspec.sanitize import safe_line

PASSWORD_ENV = "AMQPSPEC_PASSWORD"
DAY = 86400.0


def fail(message: str, code: int = 2) -> NoReturn:
    """One line on stderr, then exit. The message may quote a broker (a close reply-text, a
    product name) or echo the password: it is scrubbed, capped and made display-safe here,
    wherever it was built."""
    click.echo(f"amqpspec: error: {safe_line(message)}", err=True)
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
            fail(f"{exc.strerror or exc}{': ' + str(exc.filename) if getattr(exc, 'filename', None) else ''}")
        except KeyboardInterrupt:
            click.echo("amqpspec: interrupted; what finished is in the output files", err=True)
            sys.exit(130)

    return wrapper


# ---------------------------------------------------------------------------- seconds

def parse_seconds(value: Any, low: float = 0.0, high: float = DAY, *, low_open: bool = False) -> float:
    """``value`` as a finite number of seconds within [low, high]; ValueError with a one-line
    reason otherwise (shared by :class:`Seconds` and the pytest plugin's options)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a number of seconds") from None
    if not math.isfinite(seconds):
        raise ValueError(f"{value!r} is not a finite number of seconds")
    too_low = seconds <= low if low_open else seconds < low
    if too_low or seconds > high:
        lower = f"more than {low:g}" if low_open else f"at least {low:g}"
        raise ValueError(f"{seconds:g} is out of range: give {lower} and at most {high:g} seconds")
    return seconds


class Seconds(click.ParamType):
    """A number of seconds: finite, within [low, high] (by default at most a day).

    click's FloatRange lets ``nan`` through (every comparison with it is false) and ``inf``
    or ``1e300`` through an open upper end; each then fails deep inside as a traceback
    (``time.monotonic() + inf`` deadlines, ``sleep(nan)``). One type for every
    seconds-valued option keeps them all refused the same way, as a usage error.
    """

    name = "SECONDS"

    def __init__(self, low: float = 0.0, high: float = DAY, *, low_open: bool = False) -> None:
        self.low, self.high, self.low_open = low, high, low_open

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        try:
            return parse_seconds(value, self.low, self.high, low_open=self.low_open)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)

    def __repr__(self) -> str:
        return f"Seconds({self.low:g}, {self.high:g})"


# ---------------------------------------------------------------------------- password

def password_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--password-file FILE``: the broker password kept off the command line (``ps`` shows
    every local user the arguments); ``$AMQPSPEC_PASSWORD`` is the other way."""
    return click.option(
        "--password-file", type=click.Path(dir_okay=False), metavar="FILE",
        help=f"Read the broker password from the first line of FILE (else ${PASSWORD_ENV}); the URL then "
             "carries none. Keeps it out of `ps`.")(func)


def broker_password(password_file: str | None) -> str | None:
    """The password given apart from the URL: ``--password-file`` (first line, its line end
    stripped) before ``$AMQPSPEC_PASSWORD`` (an empty variable counts as unset); None when
    neither is given. Target.parse refuses it when the URL carries a password as well."""
    if password_file:
        try:
            with open(password_file, encoding="utf-8", errors="strict") as fh:
                first = fh.readline()
        except UnicodeDecodeError:
            raise UsageError(f"--password-file {password_file}: not UTF-8 text") from None
        except OSError as exc:
            raise UsageError(f"--password-file {password_file}: {exc.strerror or exc}") from None
        password = first.rstrip("\r\n") if first.endswith("\n") else first
        if not password:
            raise UsageError(f"--password-file {password_file}: the first line is empty")
        return password
    return os.environ.get(PASSWORD_ENV) or None


def parse_target(url: str, *, cafile: str | None = None, insecure: bool = False,
                 password_file: str | None = None) -> Any:
    """The Target of a command's URL argument, with the password from wherever it was given."""
    from amqpspec.target import Target

    return Target.parse(url, cafile=cafile, insecure=insecure, password=broker_password(password_file))


# ---------------------------------------------------------------------------- output paths

def check_output_file(path: str | None, option: str) -> None:
    """Refuses, before any connection, an output file the run could not write at its end.

    Missing parent directories are made for the test and removed again (the writers make
    them themselves); a file is created and deleted there, because ``os.access`` answers
    yes to root on file systems that refuse the write anyway (/proc, read-only mounts).
    """
    if not path:
        return
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{option} {path}: is a directory; give a file name")
    _check_dir_writable(target.parent if str(target.parent) else Path("."), f"{option} {path}")
    if target.exists() and not os.access(target, os.W_OK):
        raise UsageError(f"{option} {path}: the file is not writable")


def check_output_dir(path: str | None, option: str) -> None:
    """Like :func:`check_output_file` for an output directory."""
    if not path:
        return
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise UsageError(f"{option} {path}: is a file, not a directory")
    _check_dir_writable(target, f"{option} {path}")


def _check_dir_writable(directory: Path, label: str) -> None:
    made: list[Path] = []
    try:
        missing = [p for p in (directory, *directory.parents) if not p.exists()]
        for parent in reversed(missing):
            parent.mkdir()
            made.append(parent)
        if not directory.is_dir():
            raise UsageError(f"{label}: {directory} is not a directory")
        fd, probe = tempfile.mkstemp(prefix=".amqpspec-write-test-", dir=directory)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{label}: cannot write there ({exc.strerror or exc}); choose another path") from None
    finally:
        for parent in reversed(made):
            try:
                parent.rmdir()
            except OSError:
                pass
