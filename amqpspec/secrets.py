"""Keeping credentials out of every output.

Passwords travel inside a :class:`Secret` whose ``str``/``repr`` never show the value,
the SASL response is masked structurally when frames are recorded, and every record is
scrubbed of known secret strings as a last line of defence before it is written.
"""
from __future__ import annotations

import threading

MASK = "***"
_MIN_SCRUB_LEN = 4  # shorter secrets are masked structurally only; scrubbing them would mangle text


class Secret:
    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(("Secret", self._value))


class Scrubber:
    """Replaces registered secret strings (and their hex forms) in text."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    def register(self, secret: str | Secret) -> None:
        value = secret.reveal() if isinstance(secret, Secret) else secret
        if len(value) < _MIN_SCRUB_LEN:
            return
        with self._lock:
            self._secrets.add(value)
            self._secrets.add(value.encode("utf-8").hex())

    def scrub(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for s in secrets:
            if s in text:
                text = text.replace(s, MASK)
        return text


SCRUBBER = Scrubber()
