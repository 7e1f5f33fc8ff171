"""Making untrusted text safe to show: one home for what every output does to a peer's strings.

A broker (or a file someone hands us) controls product names, reply texts, error descriptions
and decoded frames. Shown raw, such a string can retitle the terminal (OSC escapes), erase
lines, print a fake "all cases passed" line into a CI log (CR/LF), reorder text (bidi marks),
echo the user's password back, or cost megabytes per line. Everything printed goes through
:func:`printable` (controls made visible), everything a broker says on a one-line path through
:func:`safe_line` (also scrubbed of secrets and capped), and what is *stored* per result is
capped at the source with :func:`cap`.
"""
from __future__ import annotations

import json
import re
from typing import Any

from amqpspec.secrets import SCRUBBER

# A broker identity string (product, version, platform) or a close text kept in results:
# long enough for any real one, short enough that a hostile one cannot bloat every record.
IDENTITY_LIMIT = 256
# One line on stderr/stdout: long enough for any honest message (paths, URLs, a reply text).
LINE_LIMIT = 2000

# Characters that reorder or hide text on display (trojan-source style) are escaped like
# control characters: a broker must not be able to make a report lie about what it sent.
_INVISIBLE = {
    0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
    0x2066, 0x2067, 0x2068, 0x2069, 0x2028, 0x2029, 0xFEFF,
}


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


# Every character printable() rewrites: C0 and C1 controls (tab and newline among them), lone
# surrogates (surrogateescape'd bytes) and the invisible ones. One regular expression finds them:
# printable() runs over whole transcripts (JUnit, HTML), and a Python loop per character cost
# seconds per report; text with none of them is returned as it is.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff" + "".join(chr(c) for c in sorted(_INVISIBLE)) + "]")


def _multiline_repl(m: re.Match[str]) -> str:
    ch = m.group()
    if ch == "\n":
        return ch
    return "    " if ch == "\t" else _escape_char(ch)


def _single_line_repl(m: re.Match[str]) -> str:
    ch = m.group()
    return " " if ch == "\t" else _escape_char(ch)


def printable(value: Any, *, multiline: bool = False) -> str:
    """Any value as display-safe text: control and bidi characters shown as escapes.

    Non-string values (numbers, dicts from a JSON file, bytes) are rendered rather than
    rejected. With ``multiline`` newlines are kept (and ``\\r\\n`` folded to ``\\n``);
    otherwise they are escaped too so that one value stays on one line.
    """
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value
    elif isinstance(value, (bytes, bytearray, memoryview)):
        text = bytes(value).hex(" ")
    elif isinstance(value, (dict, list, tuple)):
        try:
            text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=False)
        except (TypeError, ValueError):
            text = repr(value)
    else:
        try:
            text = str(value)
        except Exception:  # a hostile __str__ must not take the report down
            text = f"<unprintable {type(value).__name__}>"
    if multiline:
        text = text.replace("\r\n", "\n")
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_multiline_repl if multiline else _single_line_repl, text)


def cap(text: Any, limit: int = IDENTITY_LIMIT) -> Any:
    """``text`` cut to ``limit`` characters with a marker saying how much was left out.

    Non-strings pass unchanged, so callers can cap whatever a decoder handed them.
    """
    if not isinstance(text, str) or len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def safe_line(text: Any, limit: int = LINE_LIMIT) -> str:
    """One display-safe line: secrets scrubbed, then capped, then control characters escaped.

    Scrubbing comes first so that a secret cut in two by the cap is still masked whole, and
    escaping last so that the cap never splits an escape sequence.
    """
    raw = text if isinstance(text, str) else printable(text)
    return printable(cap(SCRUBBER.scrub(raw), limit))


__all__ = ["IDENTITY_LIMIT", "LINE_LIMIT", "cap", "printable", "safe_line"]
