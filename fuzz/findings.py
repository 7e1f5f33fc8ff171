"""Findings: one JSON file per distinct problem, named after its signature.

A finding is deduplicated by its signature -- protocol, target, violation kind, close code,
error condition, state, and the clauses the verdict cites (two causes that end alike, say in a
hang after a link was attached, but break different clauses are two findings) -- and stored as ``<signature_id>.json`` in the findings directory, in
the FINDINGS FORMAT shared with the report pipeline (see :func:`validate`). Writes are atomic
(a temporary file renamed over the old one) and serialised by a lock file, so several worker
processes and a kill at any moment leave every file whole. Finding the same signature again
updates ``count`` and ``last_seen`` only: the input, the minimal one found first, stays (the
stateful machines, whose later examples can be shorter, ask for the shorter input to win).

This is the one writer of finding files: campaigns and stateful runs both store through
:class:`FindingStore`. Finding files are read back by ``replay`` and by the next campaign, and
may come from elsewhere: they are read through :mod:`amqpspec.datafile` (bounded, no
traceback), and written as ASCII JSON with every string cleaned (:func:`clean_record`), so a
broker's invalid UTF-8 or a U+2028 cannot fail the write or break a reader.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import hashlib
import json
import os
import shlex
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from amqpspec.atomicfile import write_atomically
from amqpspec.datafile import DataFileError, load_json
from amqpspec.result import clean_record

SCHEMA = 1
KIND = "finding"
VIOLATIONS = ("hang", "reset-without-close", "wrong-code", "liveness", "memory", "control-loss", "invariant",
              "decode-error-by-broker", "crash")
KEYS = ("schema", "kind", "signature", "signature_id", "broker", "target_url", "seed", "first_seen", "last_seen",
        "count", "clauses", "input", "transcript", "replay", "run_id")
SIGNATURE_KEYS = ("protocol", "target", "violation", "code", "condition", "state")
#: optional in a signature (files written before it was added have none; an empty one is left
#: out, so those files keep their ids and merge with what a campaign finds now)
CLAUSES_KEY = "clauses"
LOCK_NAME = ".lock"


@dataclass(frozen=True)
class Signature:
    protocol: str
    target: str
    violation: str
    code: int | None
    condition: str | None
    state: str
    clauses: tuple[str, ...] = ()      # the verdict's clauses, kept sorted and unique

    def __post_init__(self) -> None:
        object.__setattr__(self, "clauses", tuple(sorted({str(c) for c in self.clauses or ()})))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"protocol": self.protocol, "target": self.target, "violation": self.violation,
                               "code": self.code, "condition": self.condition, "state": self.state}
        if self.clauses:
            out[CLAUSES_KEY] = list(self.clauses)
        return out

    @property
    def id(self) -> str:
        return signature_id(self.to_json())

    def describe(self) -> str:
        what = self.violation + (f" {self.code}" if self.code is not None else "") + \
            (f" {self.condition}" if self.condition else "")
        return f"{self.target}: {what} ({self.state})"


def signature_id(signature: dict[str, Any]) -> str:
    """A short stable hash of a signature (16 hex digits of SHA-256 over its canonical JSON; the
    clauses count only where there are some, so a signature without them keeps its old id)."""
    canonical_sig = {k: signature.get(k) for k in SIGNATURE_KEYS}
    clauses = signature.get(CLAUSES_KEY)
    if clauses and isinstance(clauses, (list, tuple)):
        canonical_sig[CLAUSES_KEY] = sorted({str(c) for c in clauses})
    canonical = json.dumps(canonical_sig, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def replay_command(path: str | os.PathLike[str], target_url: str) -> str:
    """The command that replays a finding (``amqpspec replay <finding-file> <URL>``)."""
    return shlex.join(["amqpspec", "replay", str(path), target_url])


def make_finding(sig: Signature, *, broker: dict[str, str], target_url: str, seed: int, run_id: str,
                 clauses: list[str] | tuple[str, ...], input_hex: str, input_summary: str,
                 transcript: list[dict[str, Any]], count: int = 1, seen: str | None = None) -> dict[str, Any]:
    """A finding record (``replay`` is filled in when it is stored: it names the file)."""
    when = seen or now_iso()
    return {
        "schema": SCHEMA, "kind": KIND, "signature": sig.to_json(), "signature_id": sig.id,
        "broker": {"product": broker.get("product", ""), "version": broker.get("version", ""),
                   "platform": broker.get("platform", "")},
        "target_url": target_url, "seed": int(seed), "first_seen": when, "last_seen": when, "count": int(count),
        "clauses": list(dict.fromkeys(clauses)), "input": {"hex": input_hex, "summary": input_summary},
        "transcript": transcript, "replay": "", "run_id": run_id,
    }


def validate(record: Any) -> list[str]:
    """Problems with a finding record against the FINDINGS FORMAT (empty when it conforms)."""
    if not isinstance(record, dict):
        return ["not a JSON object"]
    problems = [f"missing key {k!r}" for k in KEYS if k not in record]
    if problems:
        return problems
    if record["schema"] != SCHEMA:
        problems.append(f"schema is {record['schema']!r}, not {SCHEMA}")
    if record["kind"] != KIND:
        problems.append(f"kind is {record['kind']!r}, not {KIND!r}")
    sig = record["signature"]
    if not isinstance(sig, dict) or not set(SIGNATURE_KEYS) <= set(sig) <= {*SIGNATURE_KEYS, CLAUSES_KEY}:
        problems.append(f"signature keys must be exactly {SIGNATURE_KEYS}, and optionally {CLAUSES_KEY!r}")
    else:
        clauses = sig.get(CLAUSES_KEY, [])
        if not isinstance(clauses, list) or not all(isinstance(c, str) for c in clauses):
            problems.append("signature.clauses must be a list of clause ids")
        if sig["protocol"] not in ("0-9-1", "1.0"):
            problems.append(f"signature.protocol {sig['protocol']!r}")
        if sig["violation"] not in VIOLATIONS:
            problems.append(f"signature.violation {sig['violation']!r}")
        if sig["code"] is not None and not isinstance(sig["code"], int):
            problems.append("signature.code must be an integer or null")
        if sig["condition"] is not None and not isinstance(sig["condition"], str):
            problems.append("signature.condition must be a string or null")
        for k in ("target", "state"):
            if not isinstance(sig[k], str) or not sig[k]:
                problems.append(f"signature.{k} must be a non-empty string")
        if isinstance(clauses, list) and record["signature_id"] != signature_id(sig):
            problems.append("signature_id does not match the signature")
    broker = record["broker"]
    if not isinstance(broker, dict) or not {"product", "version", "platform"} <= set(broker):
        problems.append("broker needs product, version, platform")
    netloc = str(record["target_url"]).split("//", 1)[-1].split("/", 1)[0]
    if "@" in netloc and ":" in netloc.rsplit("@", 1)[0]:   # user:password@ (a port alone is no password)
        problems.append("target_url carries a password")
    for k in ("seed", "count"):
        if not isinstance(record[k], int) or isinstance(record[k], bool):
            problems.append(f"{k} must be an integer")
    if isinstance(record["count"], int) and record["count"] < 1:
        problems.append("count must be at least 1")
    for k in ("first_seen", "last_seen"):
        try:
            _dt.datetime.fromisoformat(str(record[k]).replace("Z", "+00:00"))
        except ValueError:
            problems.append(f"{k} is not ISO-8601")
    if not isinstance(record["clauses"], list) or not all(isinstance(c, str) for c in record["clauses"]):
        problems.append("clauses must be a list of clause ids")
    inp = record["input"]
    if not isinstance(inp, dict) or set(inp) != {"hex", "summary"}:
        problems.append("input needs exactly hex and summary")
    else:
        try:
            bytes.fromhex(inp["hex"])
        except (TypeError, ValueError):
            problems.append("input.hex is not hex")
    if not isinstance(record["transcript"], list):
        problems.append("transcript must be a list")
    else:
        for i, e in enumerate(record["transcript"]):
            if not isinstance(e, dict) or not {"t", "dir", "conn", "summary", "hex"} <= set(e):
                problems.append(f"transcript entry {i} needs t, dir, conn, summary, hex")
                break
    if not str(record["replay"]).startswith("amqpspec replay "):
        problems.append("replay is not an 'amqpspec replay' command")
    return problems


class FindingStore:
    """The findings directory: load what is there, add or update findings atomically."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, sig_id: str) -> Path:
        return self.dir / f"{sig_id}.json"

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.dir / LOCK_NAME, "a+") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def load(self, sig_id: str) -> dict[str, Any] | None:
        return _read(self.path(sig_id))

    def known(self) -> dict[str, dict[str, Any]]:
        """signature_id -> record of every readable finding in the directory (a file that is
        not one -- unreadable, not JSON, too large or too deep -- is passed over)."""
        out = {}
        for p in sorted(self.dir.glob("*.json")):
            rec = _read(p)
            if isinstance(rec, dict) and rec.get("kind") == KIND and isinstance(rec.get("signature_id"), str):
                out[rec["signature_id"]] = rec
        return out

    def _write(self, record: dict[str, Any]) -> Path:
        path = self.path(record["signature_id"])
        write_atomically(path, json.dumps(clean_record(record), ensure_ascii=True, indent=2) + "\n")
        return path

    def record(self, finding: dict[str, Any], *, shorter_input_wins: bool = False) -> tuple[dict[str, Any], bool]:
        """Stores a new finding, or merges it into the existing one of its signature (count
        added, last_seen moved on; input, transcript, first_seen and run kept -- or, with
        ``shorter_input_wins``, input and transcript replaced by a shorter input's). Returns
        the stored record and whether it was new."""
        with self._locked():
            old = self.load(finding["signature_id"])
            if old is not None and old.get("signature_id") != finding["signature_id"]:
                old = None  # not a finding of this signature: replaced, not merged
            if old is None:
                rec = dict(finding)
                rec["replay"] = replay_command(self.path(rec["signature_id"]), rec["target_url"])
                self._write(rec)
                return rec, True
            if shorter_input_wins and len(_input_hex(finding)) < len(_input_hex(old)):
                old["input"], old["transcript"] = finding.get("input"), finding.get("transcript")
            old["count"] = _count(old) + int(finding.get("count", 1))
            old["last_seen"] = finding.get("last_seen") or now_iso()
            old["replay"] = replay_command(self.path(old["signature_id"]), old.get("target_url", finding["target_url"]))
            self._write(old)
            return old, False

    def hit(self, sig_id: str, count: int = 1, when: str | None = None) -> dict[str, Any] | None:
        """Adds ``count`` hits to an existing finding; None when there is no such finding."""
        with self._locked():
            old = self.load(sig_id)
            if old is None:
                return None
            old["count"] = _count(old) + count
            old["last_seen"] = when or now_iso()
            self._write(old)
            return old


def _read(path: Path) -> dict[str, Any] | None:
    try:
        rec = load_json(path, max_bytes=64 << 20, what="finding")
    except DataFileError:
        return None
    return rec if isinstance(rec, dict) else None


def _input_hex(record: dict[str, Any]) -> str:
    inp = record.get("input")
    return str(inp.get("hex", "")) if isinstance(inp, dict) else ""


def _count(record: dict[str, Any]) -> int:
    """The stored count, 0 when a crafted or damaged file holds something else."""
    count = record.get("count", 0)
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else 0


__all__ = ["Signature", "FindingStore", "make_finding", "validate", "signature_id", "replay_command", "now_iso",
           "VIOLATIONS", "SCHEMA"]
