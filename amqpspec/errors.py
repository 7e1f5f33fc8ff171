"""Errors that end a command with a one-line message and exit code 2."""
from __future__ import annotations


class AmqpspecError(Exception):
    """Base of errors reported to the user as one line (never a traceback)."""

    exit_code = 2


class UsageError(AmqpspecError):
    """Bad command-line input: a URL that does not parse, an unknown protocol, a bad glob."""


class ConnectError(AmqpspecError):
    """The broker could not be reached, refused the handshake or the credentials."""
