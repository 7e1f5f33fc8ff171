"""Verdicts and result records, and the JSON-lines file they are appended to.

The record layout is a contract: reporters, the Spark pipeline and external tools read it.
Keys present in every record: case, clauses, protocol, verdict, close, target, broker,
duration_s, seed, evidence, transcript.

Records carry broker text (reply-text, product, frame summaries), and a broker can send any
octets. Strings are decoded with surrogateescape so that nothing is lost; before a record
leaves the suite :func:`valid_text` turns those escapes into visible ``\\xNN`` (the exact
octets stay in the transcript's hex), and the file is written ASCII-only JSON: no broker
string can make a write fail, and no U+2028 / U+0085 in a record can split a JSON line for a
reader that splits on every Unicode line break.
"""
from __future__ import annotations

import enum
import json
import os
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from amqpspec.datafile import iter_json_lines
from amqpspec.secrets import SCRUBBER

RESULT_SCHEMA_VERSION = 1


class Verdict(str, enum.Enum):
    PASSED = "passed"
    FAILED = "failed"            # a MUST / MUST NOT violated
    WARNING = "warning"          # a SHOULD not met (fails only with --strict)
    INFORMATIONAL = "informational"  # MAY / implementation choice, recorded
    SKIPPED = "skipped"          # feature not offered or not applicable, with the reason
    ERROR = "error"              # the suite could not decide; never a broker failure

    @property
    def severity(self) -> int:
        """Order used to combine several checks of one case: the worst wins."""
        return _SEVERITY[self]


_SEVERITY = {
    Verdict.PASSED: 0,
    Verdict.INFORMATIONAL: 1,
    Verdict.SKIPPED: 2,
    Verdict.WARNING: 3,
    Verdict.FAILED: 4,
    Verdict.ERROR: 5,
}


@dataclass
class CloseInfo:
    """Who ended the connection of a case and how: the separate close verdict."""

    who: str = "none"            # "broker", "suite", "none" (still open at the end)
    how: str = "none"            # "connection.close", "channel.close", "fin", "rst", "none"
    code: int | None = None      # reply code when closed by a close method (AMQP 0-9-1)
    condition: str | None = None  # error condition of a close/end/detach (AMQP 1.0), e.g. "amqp:invalid-field"
    text: str | None = None      # reply text of that close method
    expected_codes: list[int] | None = None  # codes the case accepts, when it expected a close
    matched: bool | None = None  # whether the code (or the absence of one) was acceptable


@dataclass
class Check:
    """One verification inside a case, with the clauses it decides."""

    description: str
    clauses: list[str]
    verdict: Verdict
    expected: str
    observed: str


@dataclass
class Result:
    case: str
    title: str
    section: str
    section_title: str
    clauses: list[str]
    protocol: str
    verdict: Verdict
    reason: str = ""              # one line: why skipped / errored / failed
    close: CloseInfo = field(default_factory=CloseInfo)
    target: str = ""               # URL without password
    broker: dict[str, Any] = field(default_factory=dict)   # product, version, platform
    duration_s: float = 0.0
    seed: int = 0
    evidence: dict[str, Any] = field(default_factory=dict)  # expected, observed, checks
    transcript: list[dict[str, Any]] | str = field(default_factory=list)  # inline frames, or a path
    replay: str = ""               # the command that re-runs this case
    run_id: str = ""
    started_at: str = ""           # ISO-8601 UTC
    deviation: str | None = None   # set by a broker profile when the failure is documented
    schema: int = RESULT_SCHEMA_VERSION

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        for check in data["evidence"].get("checks", []):
            if isinstance(check.get("verdict"), Verdict):
                check["verdict"] = check["verdict"].value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Result":
        data = dict(data)
        data["verdict"] = Verdict(data["verdict"])
        close_known = set(CloseInfo.__dataclass_fields__)
        data["close"] = CloseInfo(**{k: v for k, v in (data.get("close") or {}).items() if k in close_known})
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _octet_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    # surrogateescape maps the undecodable octet 0xNN to U+DCNN; any other lone surrogate
    # (from a peer's \\u escape, say) has no octet: show its code point
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def valid_text(text: str) -> str:
    """``text`` as valid Unicode (encodable as UTF-8): lone surrogates become visible escapes."""
    return _LONE_SURROGATE.sub(_octet_escape, text) if _LONE_SURROGATE.search(text) else text


def clean_record(value: Any) -> Any:
    """A copy of a record (dicts, lists, scalars) as it may leave the suite: every string, keys
    included, made valid Unicode (:func:`valid_text`) and scrubbed of registered secrets; other
    leaves stored as the JSON writer would (``str``). Strings are cleaned one by one, not as one
    JSON text, where a secret holding a quote or backslash would be escaped and slip through.
    Iterative, so no record can nest deeper than the stack."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]
    while stack:
        item, parent, key = stack.pop()
        if isinstance(item, str):
            parent[key] = _clean_text(item)
        elif isinstance(item, dict):
            out: dict[str, Any] = {}
            parent[key] = out
            for k, v in item.items():
                ck = _clean_text(k if isinstance(k, str) else str(k))
                out[ck] = None
                stack.append((v, out, ck))
        elif isinstance(item, (list, tuple)):
            seq: list[Any] = [None] * len(item)
            parent[key] = seq
            stack.extend((v, seq, i) for i, v in enumerate(item))
        elif item is None or isinstance(item, (bool, int, float)):
            parent[key] = item
        else:
            parent[key] = _clean_text(str(item))
    return root[0]


def _clean_text(text: str) -> str:
    return SCRUBBER.scrub(valid_text(text))


def record_line(record: dict[str, Any]) -> str:
    """One JSON line of a JSON-lines file: ASCII only, so it always encodes, and it holds no
    character that any reader could take for a line break."""
    return json.dumps(record, ensure_ascii=True, default=str)


class ResultWriter:
    """Appends one JSON line per finished case and makes it durable at once.

    A crash or kill of the suite loses at most the case in flight: every record is
    flushed and fsync'ed before the next case result is accepted.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # open() honours the umask, as an ordinary file should; the lines are ASCII
        self._fh: IO[str] = open(self.path, "w", encoding="utf-8", newline="\n")
        self._lock = threading.Lock()

    def write(self, result: Result) -> None:
        # cleaned again here: a record that did not pass the runner's scrub (another producer)
        # is still written as valid Unicode without registered secrets
        line = record_line(clean_record(result.to_json()))
        with self._lock:
            self._fh.write(line + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            self._fh.close()

    def __enter__(self) -> "ResultWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_results(path: str | os.PathLike[str]) -> Iterator[Result]:
    """Reads a result file; a truncated last line (a killed run) is skipped, not fatal, and so
    is a record that is JSON but not a result. A file that is not JSON lines, or a line too
    large or too deep, is a :class:`~amqpspec.errors.UsageError` naming the line."""
    for _, data in iter_json_lines(path):
        try:
            yield Result.from_json(data)
        except (ValueError, TypeError, KeyError, AttributeError):
            continue


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    return max(verdicts, key=lambda v: v.severity, default=Verdict.PASSED)
