"""Fuzz seeds from recorded sessions: what real clients sent, as a corpus to mutate.

Any file :func:`amqpspec.capture.transcripts.load` reads can be a seed -- a recording of
``amqpspec record`` (pika, proton, kombu, an application), a result file of ``amqpspec run``,
a finding, a pcap. For each client connection in it, the client's octets are cut into frames
and the part after the opening handshake is kept: the AMQP 0-9-1 frames after
``connection.open``, the AMQP 1.0 frames after the client's ``open``. The handshake itself is
redone by the fuzzer with the campaign's own credentials (a recording holds them masked), and
connection-level endings (0-9-1 channel 0, a 1.0 ``close``) and heartbeats are left out so
that the probes after the stimulus still find a connection to talk on.

Loading never fails a campaign for one bad file: unreadable files and connections with
nothing after the handshake are listed in :attr:`Corpus.skipped`; only a corpus with no usable
seed at all is a usage error.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from amqpspec.capture import transcripts
from amqpspec.capture.codec import StreamDecoder
from amqpspec.errors import AmqpspecError, UsageError
from amqpspec.wire.amqp091 import spec as spec091
from amqpspec.wire.amqp10 import AMQPFrame, spec as spec10

from .stimulus import RawItem, split_recorded

MAX_SEED_FRAMES = 64            # a seed longer than this is cut: one example stays small and fast
SEED_SUFFIXES = (".json", ".jsonl", ".pcap", ".pcapng")
CONNECTION_OPEN_091 = (10, 40)  # (class-id, method-id) of connection.open


@dataclass(frozen=True)
class Seed:
    """One client connection's frames after its handshake, each as recorded."""

    source: str          # file name and connection number, for messages
    frames: tuple[RawItem, ...]


@dataclass
class Corpus:
    protocol: str
    seeds: list[Seed] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _files(paths: tuple[str, ...] | list[str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out += sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in SEED_SUFFIXES)
        elif path.is_file():
            out.append(path)
        else:
            raise UsageError(f"seed path {p} does not exist")
    return out


def _is_open_091(data: bytes) -> bool:
    # frame type 1 (method), channel 0, then class-id and method-id at payload offsets 0..3
    return (len(data) >= 11 and data[0] == spec091.FRAME_METHOD and data[1:3] == b"\0\0"
            and (int.from_bytes(data[7:9], "big"), int.from_bytes(data[9:11], "big")) == CONNECTION_OPEN_091)


def _after_handshake_091(items: list[RawItem]) -> list[RawItem]:
    for i, item in enumerate(items):
        if _is_open_091(item.data):
            rest = items[i + 1:]
            # channel 0 is the connection's own (close, close-ok, heartbeats): not replayed as input
            return [x for x in rest if len(x.data) >= 7 and x.data[1:3] != b"\0\0"]
    return []


def _after_open_10(data: bytes) -> list[RawItem]:
    """The client's AMQP frames after its open, less close (it would end the connection the
    probes need); the decoder knows that the client's AMQP header follows its SASL frames."""
    units = StreamDecoder("1.0", client=True).feed(data)
    for i, u in enumerate(units):
        if isinstance(u.item, AMQPFrame) and isinstance(u.item.performative, spec10.Open):
            return [RawItem(x.raw, x.summary) for x in units[i + 1:]
                    if isinstance(x.item, AMQPFrame) and x.item.performative is not None
                    and not isinstance(x.item.performative, spec10.Close)]
    return []


def _after_handshake(protocol: str, sent: bytes) -> list[RawItem]:
    if protocol == "0-9-1":
        return _after_handshake_091(split_recorded(protocol, sent, header_first=True))
    return _after_open_10(sent)


def load(paths: tuple[str, ...] | list[str], protocol: str) -> Corpus:
    """The seeds of ``protocol`` in the given files and directories."""
    if protocol not in ("0-9-1", "1.0"):
        raise UsageError(f"unknown protocol {protocol!r} for --seeds")
    corpus = Corpus(protocol)
    for path in _files(paths):
        try:
            tf = transcripts.load(path)
        except (AmqpspecError, OSError, ValueError) as exc:
            corpus.skipped.append(f"{path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            continue
        if tf.protocol != protocol:
            corpus.skipped.append(f"{path}: AMQP {tf.protocol}, not {protocol}")
            continue
        for conn, entries in transcripts.by_connection(tf.entries).items():
            sent = b"".join(transcripts.entry_bytes(e) for e in entries if e.get("dir") == "send")
            kept = _after_handshake(protocol, sent)
            where = f"{os.path.basename(path)}#{conn}"
            if not kept:
                corpus.skipped.append(f"{where}: nothing sent after the opening handshake")
                continue
            corpus.seeds.append(Seed(where, tuple(kept[:MAX_SEED_FRAMES])))
    if not corpus.seeds:
        why = "; ".join(corpus.skipped[:3]) or "no seed files found"
        raise UsageError(f"no AMQP {protocol} seeds in {', '.join(paths)} ({why})")
    return corpus
