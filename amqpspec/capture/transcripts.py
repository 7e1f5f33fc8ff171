"""Transcript files: the one format ``record`` writes, and loading every file that holds a transcript.

A transcript is the list of entries a :class:`amqpspec.transcript.Transcript` produces --
``{"t", "dir": "send"|"recv"|"event", "conn", "summary", "hex", "redacted"?}`` -- where
``send`` is what the client sent, ``recv`` what the broker sent, and ``event`` a note
(connected, who closed the socket and how, entries not recorded). Four kinds of files carry
one, and :func:`load` accepts all of them, telling them apart by content, not by name:

* a transcript file written by ``amqpspec record``::

      {"schema": 1, "kind": "transcript", "protocol": "0-9-1" | "1.0",
       "upstream": "<URL without password>", "started": "<ISO-8601 UTC>", "entries": [...]}

  (optional keys: ``client`` -- the client's address, ``source``, ``complete`` -- false
  while the connection is still being recorded);
* a result file of ``amqpspec run --json`` (JSON lines; ``case`` picks the record, needed
  when the file holds more than one) or a single result record;
* a finding file of ``amqpspec fuzz`` (``"kind": "finding"``);
* a pcap or pcapng capture (see :mod:`amqpspec.capture.pcap`).

Events the capture tools understand (the peer and the proxy write them):
``connected to HOST:PORT`` (a connection starts), ``socket closed (fin|rst...)`` (the
broker ended the connection), ``client closed (fin|rst)`` (the client did: recordings),
``N further entries not recorded`` and ``[only the first N of M octets kept]`` in a summary
(the transcript is incomplete: a flood hit the bounds).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from amqpspec.atomicfile import write_atomically
from amqpspec.capture.codec import PROTOCOLS, protocol_of_header
from amqpspec.datafile import NotJSONError, iter_json_lines, parse_json
from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER

SCHEMA = 1
KIND = "transcript"
PCAP_MAGICS = (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d", b"\x0a\x0d\x0d\x0a")
DIRECTIONS = ("send", "recv", "event")
_TRUNCATED = re.compile(r"\[only the first \d+ of \d+ octets kept\]")
_ELIDED = re.compile(r"^\d+ further entries not recorded")
_BROKER_CLOSED = re.compile(r"^socket closed \((fin|rst|tls-error)")
_CLIENT_CLOSED = re.compile(r"^client closed \((fin|rst)")
MAX_FILE_BYTES = 512 << 20  # a transcript file larger than this is refused, not read into memory


@dataclass
class TranscriptFile:
    """A transcript with what is known about where it came from."""

    protocol: str
    entries: list[dict[str, Any]]
    upstream: str = ""                  # broker URL without password
    started: str = ""                   # ISO-8601 UTC of t=0, when known
    source: str = ""                    # "record", "result amqp091/...", "finding <id>", "pcap <file>"
    case: str | None = None             # the case id of a result record
    replay: str | None = None           # the replay command stored with it, if any
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"schema": SCHEMA, "kind": KIND, "protocol": self.protocol, "upstream": self.upstream,
                               "started": self.started, "entries": self.entries}
        if self.source:
            out["source"] = self.source
        if self.case:
            out["case"] = self.case
        out.update(self.extra)
        return out

    def connections(self) -> list[int]:
        return sorted({int(e.get("conn", 0)) for e in self.entries if e.get("dir") in ("send", "recv")})

    def incomplete(self) -> str | None:
        """Why the transcript is not the whole conversation, or None."""
        return incomplete(self.entries)


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# ---------------------------------------------------------------------------- entries

def entry_bytes(entry: dict[str, Any]) -> bytes:
    return bytes.fromhex(entry.get("hex") or "")


def check_entries(entries: Any, where: str) -> list[dict[str, Any]]:
    """The entries, or a one-line UsageError naming the first bad one (a hand-edited file)."""
    if not isinstance(entries, list):
        raise UsageError(f"{where}: the transcript is not a list of entries")
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or e.get("dir") not in DIRECTIONS:
            raise UsageError(f"{where}: entry #{i + 1} has no dir of send/recv/event")
        try:
            entry_bytes(e)
            float(e.get("t", 0.0))
            int(e.get("conn", 0))
        except (ValueError, TypeError):
            raise UsageError(f"{where}: entry #{i + 1} has a bad hex, t or conn value") from None
    return entries


def by_connection(entries: Iterable[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {}
    for e in entries:
        out.setdefault(int(e.get("conn", 0)), []).append(e)
    return out


def close_event(entry: dict[str, Any]) -> tuple[str, str] | None:
    """(who, how) when the entry records the end of a connection: ("broker"|"client", "fin"|"rst"|...)."""
    if entry.get("dir") != "event":
        return None
    text = str(entry.get("summary", ""))
    m = _BROKER_CLOSED.match(text)
    if m:
        return "broker", m.group(1)
    m = _CLIENT_CLOSED.match(text)
    if m:
        return "client", m.group(1)
    return None


def incomplete(entries: Iterable[dict[str, Any]]) -> str | None:
    for e in entries:
        text = str(e.get("summary", ""))
        if e.get("dir") == "event" and _ELIDED.match(text):
            return text
        if e.get("dir") in ("send", "recv") and _TRUNCATED.search(text):
            return f"entry at t={e.get('t')} kept only a prefix of its octets"
    return None


def guess_protocol(entries: Iterable[dict[str, Any]]) -> str | None:
    """From the first octets the client sent (its protocol header)."""
    for e in entries:
        if e.get("dir") == "send":
            found = protocol_of_header(entry_bytes(e)[:8])
            if found:
                return found
    return None


def format_lines(entries: Iterable[dict[str, Any]]) -> list[str]:
    """One line per entry, the way ``run -v`` prints a transcript."""
    arrows = {"send": "->", "recv": "<-", "event": "**"}
    out = []
    for e in entries:
        mark = " [redacted]" if e.get("redacted") else ""
        out.append(f"{float(e.get('t', 0.0)):8.3f} c{e.get('conn', 0)} {arrows.get(e.get('dir', ''), '??')} "
                   f"{e.get('summary', '')}{mark}")
    return out


# ---------------------------------------------------------------------------- saving

def save(path: str | os.PathLike[str], tf: TranscriptFile) -> None:
    """Writes atomically (temporary file, fsync, rename): a reader never sees half a file.

    Summaries pass the secret scrubber once more (the hex octets are masked structurally).
    """
    data = tf.to_json()
    data["entries"] = [dict(e, summary=SCRUBBER.scrub(str(e.get("summary", "")))) for e in tf.entries]
    text = json.dumps(data, ensure_ascii=True, indent=1)  # ASCII: no broker octet can fail the write
    write_atomically(path, text + "\n")


# ---------------------------------------------------------------------------- loading

def load(path: str | os.PathLike[str], case: str | None = None) -> TranscriptFile:
    """The transcript held by any of the accepted files (see the module docstring)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            head = fh.read(4)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not a transcript file") from None
    if head in PCAP_MAGICS:
        from amqpspec.capture.pcap import read_pcap

        return read_pcap(p)
    if size > MAX_FILE_BYTES:
        raise UsageError(f"{path}: {size} octets is more than any transcript file should hold")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{path}: neither JSON nor a pcap/pcapng capture") from None
    try:
        doc = parse_json(text, str(path))
    except NotJSONError:
        records = _json_lines(text, path)
        return _from_results(records, path, case)
    if isinstance(doc, dict) and doc.get("kind") == KIND:
        return _from_transcript(doc, path)
    if isinstance(doc, dict) and doc.get("kind") == "finding":
        return _from_finding(doc, path)
    if isinstance(doc, dict) and "transcript" in doc and "case" in doc:
        return _from_results([doc], path, case)
    if isinstance(doc, list):
        entries = check_entries(doc, str(path))
        return _with_protocol(TranscriptFile("", entries, source=f"entries {path}"), path)
    raise UsageError(f"{path}: JSON, but not a transcript, a result record or a finding "
                     "(expected \"kind\": \"transcript\" or \"finding\", or a record with \"case\" and \"transcript\")")


def _json_lines(text: str, path: Any) -> list[dict[str, Any]]:
    # split on "\n" only: U+2028 / U+0085 inside a record written by an older amqpspec are not
    # line ends; a killed run's truncated last line is skipped
    records = []
    try:
        for _, rec in iter_json_lines(path, text=text):
            if isinstance(rec, dict):
                records.append(rec)
    except NotJSONError as exc:
        raise UsageError(f"{exc} (not a transcript, result file, finding or pcap)") from None
    if not records:
        raise UsageError(f"{path}: no result records in this JSON-lines file")
    return records


def _with_protocol(tf: TranscriptFile, path: Any) -> TranscriptFile:
    if tf.protocol not in PROTOCOLS:
        guessed = guess_protocol(tf.entries)
        if guessed is None:
            raise UsageError(f"{path}: cannot tell the protocol of the transcript (no protocol key, no AMQP header sent)")
        tf.protocol = guessed
    return tf


def _from_transcript(doc: dict[str, Any], path: Any) -> TranscriptFile:
    schema = doc.get("schema")
    if schema != SCHEMA:
        raise UsageError(f"{path}: transcript schema {schema!r}, this amqpspec reads schema {SCHEMA}")
    entries = check_entries(doc.get("entries"), str(path))
    known = {"schema", "kind", "protocol", "upstream", "started", "entries", "source", "case"}
    tf = TranscriptFile(str(doc.get("protocol") or ""), entries, str(doc.get("upstream") or ""),
                        str(doc.get("started") or ""), str(doc.get("source") or "transcript"), doc.get("case"),
                        extra={k: v for k, v in doc.items() if k not in known})
    return _with_protocol(tf, path)


def _from_finding(doc: dict[str, Any], path: Any) -> TranscriptFile:
    sig = doc.get("signature") or {}
    entries = check_entries(doc.get("transcript"), str(path))
    tf = TranscriptFile(str(sig.get("protocol") or ""), entries, str(doc.get("target_url") or ""),
                        str(doc.get("first_seen") or ""), f"finding {doc.get('signature_id', '?')}",
                        replay=doc.get("replay"))
    return _with_protocol(tf, path)


def _from_results(records: list[dict[str, Any]], path: Any, case: str | None) -> TranscriptFile:
    if case is None:
        if len(records) != 1:
            failing = [r.get("case") for r in records if r.get("verdict") in ("failed", "error", "warning")][:5]
            hint = f" (failing cases: {', '.join(str(c) for c in failing)})" if failing else ""
            raise UsageError(f"{path}: {len(records)} result records: pick one with --case ID{hint}")
        rec = records[0]
    else:
        found = [r for r in records if r.get("case") == case]
        if not found:
            raise UsageError(f"{path}: no result record for case {case!r}")
        rec = found[0]
    transcript = rec.get("transcript")
    if isinstance(transcript, str):  # stored beside the result file
        linked = Path(transcript)
        if not linked.is_absolute():
            linked = Path(path).parent / linked
        inner = load(linked)
        transcript = inner.entries
    entries = check_entries(transcript, f"{path} case {rec.get('case')}")
    if not any(e.get("dir") == "send" for e in entries):
        raise UsageError(f"{path}: case {rec.get('case')} has no frames sent in its transcript: nothing to replay")
    tf = TranscriptFile(str(rec.get("protocol") or ""), entries, str(rec.get("target") or ""),
                        str(rec.get("started_at") or ""), f"result {rec.get('case')}", case=rec.get("case"),
                        replay=rec.get("replay"))
    return _with_protocol(tf, path)


def replay_command(path: str | os.PathLike[str], url: str, case: str | None = None, timing: str | None = None) -> str:
    """The ``amqpspec replay`` command for a transcript-bearing file (URL without password)."""
    args = ["amqpspec", "replay", str(path), url]
    if case:
        args += ["--case", case]
    if timing:
        args += ["--timing", timing]
    return shlex.join(args)
