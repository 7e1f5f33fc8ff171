"""What the warm Spark's client and server share: where it lives, what it is keyed on, framing.

The socket lives in a folder only this user can enter (``$XDG_RUNTIME_DIR/amqpspec`` or
``/tmp/amqpspec-UID``); a folder that is a symlink, someone else's, or open to others is
refused, and the server also checks each caller's uid (``SO_PEERCRED``). Messages are JSON
objects, one per line, at most ``MAX_MESSAGE`` octets: a peer that sends more, or garbage, is
cut off with a ``ChannelError``, never a hang or a traceback.
"""
from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from amqpspec.errors import AmqpspecError

MAX_MESSAGE = 1 << 20
#: a trimmed real run: what a service warms up on, sized as a small report's session (its size
#: picks the session's settings), and what `amqpspec spark prepare` reports to write the archive
WARMUP_SAMPLE = Path(__file__).with_name("warmup.jsonl")
IDLE_MINUTES = 10.0
# the environment read when the JVM starts: a service started under other values is another one
KEY_ENV = ("JAVA_HOME", "SPARK_HOME", "SPARK_CONF_DIR", "SPARK_LOCAL_IP", "PYSPARK_PYTHON",
           "PYSPARK_SUBMIT_ARGS", "AMQPSPEC_SPARK_DRIVER_MEMORY", "AMQPSPEC_SPARK_LOG_LEVEL",
           "AMQPSPEC_SPARK_CDS")
# the client's environment applied for the length of a report: what the output depends on
JOB_ENV = ("COLUMNS", "LINES", "TERM", "NO_COLOR", "FORCE_COLOR", "CI")


class ChannelError(AmqpspecError):
    """The warm Spark cannot be used (no private folder, a broken or foreign peer)."""


@dataclass(frozen=True)
class Place:
    """The service's files: its socket, its log (the JVM's own lines) and its lock."""

    folder: Path

    @property
    def socket(self) -> Path:
        return self.folder / "spark.sock"

    @property
    def log(self) -> Path:
        return self.folder / "spark.log"

    @property
    def lock(self) -> Path:
        return self.folder / "spark.lock"


def place() -> Place:
    """The private folder, made if missing; ChannelError if it is not private."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        folder = Path(runtime) / "amqpspec"
    else:
        folder = Path(tempfile.gettempdir()) / f"amqpspec-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError as exc:
        raise ChannelError(f"{folder}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ChannelError(f"{folder} is not a private folder of this user (a symlink, another owner, "
                           "or open to others): not used")
    if len(os.fsencode(folder / "spark.sock")) > 100:   # sun_path holds 108 octets
        raise ChannelError(f"{folder}: path too long for a socket")
    return Place(folder)


def key(master: str, conf: Mapping[str, str]) -> str:
    """What a service must share with a report to run it: interpreter, master, --conf, JVM env."""
    from amqpspec import __version__

    parts = {"python": sys.executable, "version": __version__, "master": master,
             "conf": sorted(conf.items()), "env": [(k, os.environ.get(k)) for k in KEY_ENV]}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a Unix socket (Linux)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


def send(conn: socket.socket, message: Mapping[str, Any]) -> None:
    data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
    if len(data) > MAX_MESSAGE:
        raise ChannelError(f"message of {len(data)} octets, more than {MAX_MESSAGE}")
    conn.sendall(data)


class Reader:
    """Messages from a socket, one JSON object per line, bounded in size."""

    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buf = b""

    def next(self) -> dict[str, Any] | None:
        """The next message; None when the peer has closed cleanly between messages."""
        while b"\n" not in self.buf:
            if len(self.buf) > MAX_MESSAGE:
                raise ChannelError(f"a message longer than {MAX_MESSAGE} octets")
            chunk = self.conn.recv(65536)
            if not chunk:
                if self.buf:
                    raise ChannelError("the peer closed in the middle of a message")
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        try:
            message = json.loads(line)
        except (UnicodeDecodeError, ValueError):
            raise ChannelError("a message that is not JSON") from None
        if not isinstance(message, dict):
            raise ChannelError("a message that is not a JSON object")
        return message
