"""Reading the suite's JSON, JSON-lines and TOML files from untrusted sources.

Result files, findings, recordings, baselines, profiles and report bundles are handed from one
person or machine to another, so each may be crafted. Python's parsers recurse once per level
of nesting (100000 ``[`` is a RecursionError, not a ValueError) and read whatever size they
are given; every reader of such a file goes through here, and any problem is one
:class:`~amqpspec.errors.UsageError` saying ``FILE: line N: why``.

JSON lines are split on ``"\\n"`` only, never with ``str.splitlines``: older amqpspec wrote
U+2028, U+2029 and U+0085 unescaped inside strings, and ``splitlines`` breaks lines there.
"""
from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO

from amqpspec.errors import UsageError

MAX_DEPTH = 100                 # the suite's own files nest fewer than 10 levels
MAX_JSON_BYTES = 256 << 20      # a whole-file JSON document (a finding, a bundle, a transcript)
MAX_LINE_BYTES = 64 << 20       # one JSON line of a result file (a case's record with its transcript)
MAX_TOML_BYTES = 4 << 20        # a broker profile

# a JSON string (so brackets inside strings do not count), or one bracket
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_TOML_POSITION = re.compile(r"\s*\(at line (\d+), column \d+\)$")


class DataFileError(UsageError):
    """A file the suite reads cannot be used: too large, too deeply nested, or not parsable."""


class NotJSONError(DataFileError):
    """The text is not JSON at all (as opposed to JSON that is too large or too deep)."""


def _where(name: str, line: int | None) -> str:
    return f"{name}: line {line}" if line is not None else name


def _fail(name: str, line: int | None, why: str, kind: type[DataFileError] = DataFileError) -> DataFileError:
    return kind(f"{_where(name, line)}: {why}")


def _too_deep_at(text: str, limit: int) -> int | None:
    """Offset where JSON ``text`` first nests deeper than ``limit``, or None.

    The common case costs two C-level passes (strings removed, brackets kept) and a running
    sum; only a text that is too deep is walked token by token to find the offset."""
    if text.count("[") + text.count("{") <= limit:
        return None
    brackets = _NOT_BRACKETS.sub("", _JSON_STRING.sub("", text))
    if not brackets or max(accumulate(map(_DEPTH_STEP.__getitem__, brackets))) <= limit:
        return None
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        token = m.group()
        if token[0] == '"':
            continue
        depth += _DEPTH_STEP[token]
        if depth > limit:
            return m.start()
    return None  # unreachable for well-formed strings; a stray quote is the parser's to report


def parse_json(text: str, name: str = "<text>", *, line: int | None = None, max_depth: int = MAX_DEPTH) -> Any:
    """One JSON document from ``text``; ``name`` and ``line`` say where it came from in errors."""
    first = line if line is not None else 1
    offset = _too_deep_at(text, max_depth)
    if offset is not None:
        raise _fail(name, first + text.count("\n", 0, offset), f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(name, first + exc.lineno - 1, f"not JSON ({exc.msg}, column {exc.colno})", NotJSONError) from None
    except RecursionError:  # cannot happen below max_depth; kept so no parser path can escape
        raise _fail(name, line, f"nested deeper than {max_depth} levels") from None


def _read_text(path: str | os.PathLike[str], max_bytes: int, what: str) -> str:
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise _fail(str(path), None, f"{size} octets is more than a {what} may hold ({max_bytes})")
        with open(p, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise _fail(str(path), None, "no such file") from None
    except IsADirectoryError:
        raise _fail(str(path), None, f"is a directory, not a {what}") from None
    except OSError as exc:
        raise _fail(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:  # grew since stat, or not a regular file
        raise _fail(str(path), None, f"more than a {what} may hold ({max_bytes} octets)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise _fail(str(path), line, f"not UTF-8 text (octet 0x{data[exc.start]:02x})") from None


def load_json(path: str | os.PathLike[str], *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_DEPTH,
              what: str = "JSON file") -> Any:
    """The JSON document in the file at ``path``."""
    return parse_json(_read_text(path, max_bytes, what), str(path), max_depth=max_depth)


def iter_json_lines(source: str | os.PathLike[str], *, text: str | None = None,
                    max_line_bytes: int = MAX_LINE_BYTES, max_depth: int = MAX_DEPTH,
                    skip_bad_last: bool = True) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON-lines file, read as a stream
    (result files of long runs are large), split on ``"\\n"`` only.

    With ``text`` the lines come from it and ``source`` only names them in errors. A last line
    that is not JSON (the line in flight when a run was killed) is skipped when
    ``skip_bad_last``; a bad line anywhere else is an error."""
    name = str(source)
    lines = _split_text(text) if text is not None else _stream_lines(source, max_line_bytes)
    pending: tuple[int, bytes | str] | None = None  # the last non-blank line: it may be cut short
    for number, raw in lines:
        if not raw.strip():
            continue
        if pending is not None:
            yield pending[0], _parse_line(pending[1], name, pending[0], max_depth)
        pending = (number, raw)
    if pending is not None:
        try:
            value = _parse_line(pending[1], name, pending[0], max_depth)
        except NotJSONError:
            if skip_bad_last:
                return
            raise
        yield pending[0], value


def _split_text(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.split("\n"), 1):
        yield number, line


def _stream_lines(path: str | os.PathLike[str], max_line_bytes: int) -> Iterator[tuple[int, bytes]]:
    try:
        fh = open(path, "rb")
    except FileNotFoundError:
        raise _fail(str(path), None, "no such file") from None
    except IsADirectoryError:
        raise _fail(str(path), None, "is a directory, not a JSON-lines file") from None
    except OSError as exc:
        raise _fail(str(path), None, f"cannot read: {exc.strerror or exc}") from None
    with fh:
        for number, raw in raw_lines(fh, max_line_bytes):
            if raw is None:
                raise _fail(str(path), number, f"a line longer than {max_line_bytes} octets")
            yield number, raw


def raw_lines(fh: BinaryIO, max_line_bytes: int = MAX_LINE_BYTES) -> Iterator[tuple[int, bytes | None]]:
    """``(line number, octets)`` of a binary file split on ``"\n"`` only, never holding more than
    ``max_line_bytes`` of one line: a longer line is skipped to its end and given as None, so
    the numbering of the lines after it stays right."""
    number = 0
    while True:
        raw = fh.readline(max_line_bytes + 1)
        if not raw:
            return
        number += 1
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(1 << 20)
            yield number, None
            continue
        yield number, raw


def _parse_line(raw: bytes | str, name: str, number: int, max_depth: int) -> Any:
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _fail(name, number, f"not UTF-8 text (octet 0x{raw[exc.start]:02x})", NotJSONError) from None
    return parse_json(raw, name, line=number, max_depth=max_depth)


def load_toml(path: str | os.PathLike[str], *, max_bytes: int = MAX_TOML_BYTES, max_depth: int = MAX_DEPTH,
              what: str = "TOML file") -> dict[str, Any]:
    """The TOML document in the file at ``path``."""
    return parse_toml(_read_text(path, max_bytes, what), str(path), max_depth=max_depth)


def parse_toml(text: str, name: str = "<text>", *, max_depth: int = MAX_DEPTH) -> dict[str, Any]:
    """A TOML document; nesting (inline arrays and tables, dotted keys, table headers) is
    bounded after parsing, and tomllib's own recursion on inline values is caught."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        position = _TOML_POSITION.search(str(exc))
        why = _TOML_POSITION.sub("", str(exc))
        raise _fail(name, int(position.group(1)) if position else None, f"not TOML ({why})") from None
    except RecursionError:
        raise _fail(name, None, f"nested deeper than {max_depth} levels") from None
    if _depth_exceeds(data, max_depth):
        raise _fail(name, None, f"nested deeper than {max_depth} levels")
    return data


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether parsed data nests deeper than ``limit`` (iterative: it may already be deep)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


__all__ = ["DataFileError", "NotJSONError", "MAX_DEPTH", "MAX_LINE_BYTES", "raw_lines", "iter_json_lines", "load_json", "load_toml", "parse_json", "parse_toml"]
