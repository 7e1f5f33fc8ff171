"""Verdicts and result records, and the JSON-lines file they are appended to.

The record layout is a contract: reporters, the Spark pipeline and external tools read it.
Keys present in every record: case, clauses, protocol, verdict, close, target, broker,
duration_s, seed, evidence, transcript.
"""
from __future__ import annotations

import enum
import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

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


class ResultWriter:
    """Appends one JSON line per finished case and makes it durable at once.

    A crash or kill of the suite loses at most the case in flight: every record is
    flushed and fsync'ed before the next case result is accepted.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "w", encoding="utf-8")
        self._lock = threading.Lock()

    def write(self, result: Result) -> None:
        line = json.dumps(result.to_json(), ensure_ascii=False, default=str)
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
    """Reads a result file; a truncated last line (a killed run) is skipped, not fatal."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield Result.from_json(json.loads(line))
            except (ValueError, TypeError, KeyError):
                continue


def worst(verdicts: Iterable[Verdict]) -> Verdict:
    return max(verdicts, key=lambda v: v.severity, default=Verdict.PASSED)
