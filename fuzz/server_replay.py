"""``amqpspec replay FINDING --driver NAME``: a hostile-broker finding played again, byte for byte.

The listening peer starts, the driver is launched with the finding's workload and options,
and the broker's recorded octets (``recv`` entries of the finding's transcript) go out as
recorded, each once the client has sent as many frames as it had in the recording before it
(heartbeats not counted: their number depends on timing), or a bounded wait passed. Then the
client's reaction is collected until its driver ends or the deadline, and judged by the same
oracle with the same required reaction as in the campaign. The finding reproduces when the
verdict's violation (and its clauses) are the finding's.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from amqpspec.client.drivers import DriverProcess, DriverSpec
from amqpspec.datafile import DataFileError, load_json
from amqpspec.errors import UsageError
from amqpspec.peer.base import Closed, PeerError
from amqpspec.secrets import SCRUBBER
from amqpspec.transcript import Transcript

from .server_campaign import SERVER_KEY
from .server_example import Expect
from .server_exec import release
from .server_oracles import RssWatch, Run, judge

ANSWER_WAIT_S = 2.0


@dataclass
class ReplayResult:
    reproduced: bool
    expected: str               # the finding's violation, as stored
    observed: str               # the replay's verdict
    reason: str = ""
    notes: list[str] = field(default_factory=list)
    sent: int = 0               # broker entries sent


def load_server_finding(path: str) -> dict[str, Any]:
    try:
        doc = load_json(path, max_bytes=64 << 20, what="finding")
    except DataFileError as exc:
        raise UsageError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("kind") != "finding":
        raise UsageError(f"{path}: not a finding file")
    server = doc.get(SERVER_KEY)
    if not isinstance(server, dict) or not isinstance(server.get("workload"), str):
        raise UsageError(f"{path}: a finding of the broker-side campaign; replay it with a broker URL, not --driver")
    if not isinstance(doc.get("transcript"), list):
        raise UsageError(f"{path}: the finding has no transcript")
    return doc


_KEEPALIVE = re.compile(r"^(ch=\d+ heartbeat\b|ch=\d+ empty frame|empty frame)")


def _heartbeat(summary: str) -> bool:
    """A keep-alive entry of the recording (0-9-1 heartbeat, 1.0 empty frame), by its summary."""
    return bool(_KEEPALIVE.match(summary))


def replay_server_finding(path: str, driver: DriverSpec, *, rss_limit: int = 512 << 20,
                          on_line: Callable[[str], None] | None = None) -> ReplayResult:
    doc = load_server_finding(path)
    server = doc[SERVER_KEY]
    protocol = str(doc["signature"].get("protocol", "0-9-1"))
    if driver.protocol != protocol:
        raise UsageError(f"the finding is of AMQP {protocol}; driver {driver.name} speaks {driver.protocol}")
    expect = Expect.from_json(server.get("expect"))
    inject_entry = int(server.get("inject_entry", -1))
    deadline_s = float(server.get("deadline_s", 8.0))
    options = {str(k): v for k, v in (server.get("options") or {}).items()}
    entries = [e for e in doc["transcript"] if isinstance(e, dict)]
    conns = sorted({int(e.get("conn", 0)) for e in entries if e.get("dir") in ("send", "recv")})
    if not conns:
        raise UsageError(f"{path}: the transcript holds no frames")
    first = conns[0]
    say = on_line or (lambda s: None)

    from amqpspec.client.session import server_role
    from amqpspec.peer.server091 import Listener

    peer_class, _ = server_role(protocol)
    password = _password()
    transcript = Transcript()
    deadline = time.monotonic() + deadline_s + 4.0
    listener = Listener("127.0.0.1", 0)
    proc: DriverProcess | None = None
    watch: RssWatch | None = None
    peer = None
    notes: list[str] = []
    try:
        proc = driver.launch(listener.url("guest", password), str(server["workload"]), options)
        watch = RssWatch(proc.proc.pid).start()
        try:
            conn, addr = listener.accept_socket(max(0.1, deadline - time.monotonic() - 1.0))
        except PeerError as exc:
            out = proc.wait(0.5)
            return ReplayResult(False, _stored(doc), "the client never connected", f"{exc}; {out.summary()}")
        peer = peer_class.on_socket(conn, addr, transcript, deadline)
        received: list[Any] = []
        end = "open"
        client_seen = 0
        expected_client = 0
        recorded_ids: list[list[bytes]] = []     # identifiers the client chose, per recorded client frame
        renames: dict[bytes, bytes] = {}         # recorded identifier -> the one the client chose now
        mark: int | None = None
        sent = 0
        for i, e in enumerate(entries):
            if int(e.get("conn", 0)) != first:
                continue
            summary = str(e.get("summary", ""))
            if e.get("dir") == "send":          # the client's, in the recording
                if not _heartbeat(summary):
                    expected_client += 1
                    recorded_ids.append(_identifiers(protocol, bytes.fromhex(str(e.get("hex") or ""))))
                continue
            if e.get("dir") != "recv":
                continue
            wait_until = min(deadline - 1.0, time.monotonic() + ANSWER_WAIT_S)
            while client_seen < expected_client and end == "open" and time.monotonic() < wait_until:
                item = peer.recv(max(0.01, wait_until - time.monotonic()))
                if item is None:
                    if peer.framing_error is not None:
                        end = "framing-error"
                    continue
                if isinstance(item, Closed):
                    end = item.how if item.how != "local" else "fin"
                    break
                received.append(item)
                if not _is_keepalive(item):
                    if client_seen < len(recorded_ids):
                        _pair(recorded_ids[client_seen], _item_identifiers(item), renames, notes)
                    client_seen += 1
            watch.sample()
            if end != "open":
                notes.append(f"the client ended the connection before recorded broker entry {i}")
                break
            if i >= inject_entry >= 0 and mark is None:
                mark = len(received)
            data = _renamed(bytes.fromhex(str(e.get("hex") or "")), renames)
            if data:
                peer.link.send_bytes(data, summary)
                sent += 1
                if protocol == "1.0" and "sasl-outcome" in summary:
                    peer.reader.expect_header()   # the client's AMQP header follows the outcome (5.3.2)
        # the client's reaction, until its driver ends or the deadline
        exited_at: float | None = None
        while end == "open" and time.monotonic() < deadline - 0.5:
            item = peer.recv(0.2)
            watch.sample()
            if isinstance(item, Closed):
                end = item.how if item.how != "local" else "fin"
                break
            if item is None:
                if peer.framing_error is not None:
                    end = "framing-error"
                    break
                if not proc.running():
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at > 0.3:
                        break
                continue
            received.append(item)
        out = proc.wait(max(0.1, deadline - time.monotonic()))
        watch.sample()
        after = received[mark:] if mark is not None else []
        obs = _observation(protocol, after, end, peer.framing_error)
        frame_max, channel_max = _limits(protocol, received)
        run = Run(out, obs, mark is not None, frame_max=frame_max, channel_max=channel_max, rss_peak=watch.peak,
                  notes=notes)
        verdict = judge(run, expect, rss_limit, protocol)
        say(f"replayed {sent} broker entries; driver: {out.summary()}")
        stored = _stored(doc)
        observed = str(verdict.violation or "no problem")
        same = verdict.violation == doc["signature"].get("violation") and \
            sorted(verdict.clauses) == sorted(doc["signature"].get("clauses") or [])
        return ReplayResult(same, stored, observed, verdict.reason or obs.describe(), notes, sent)
    finally:
        release(listener, proc, watch, peer)


def _identifiers(protocol: str, data: bytes) -> list[bytes]:
    """Names the client chose in one recorded frame, which the broker's frames echo: a 0-9-1
    consumer tag (basic.consume), a 1.0 link name (attach). Libraries make them up per run
    (a UUID), so the recorded broker octets must carry the new ones."""
    if data.startswith(b"AMQP"):
        return []
    try:
        if protocol == "1.0":
            from amqpspec.wire.amqp10 import FrameReader as Reader10

            reader: Any = Reader10(len(data) + 8, False)
        else:
            from amqpspec.wire.amqp091 import FrameReader as Reader091

            reader = Reader091(len(data) + 8, expect_protocol_header=False)
        reader.feed(data)
        return _item_identifiers(reader.next())
    except Exception:  # noqa: BLE001 - a recorded frame that does not decode names nothing
        return []


def _item_identifiers(item: Any) -> list[bytes]:
    method = getattr(item, "method", None)
    if method is not None and getattr(method, "NAME", "") == "basic.consume" and method.consumer_tag:
        return [str(method.consumer_tag).encode("utf-8", "surrogateescape")]
    perf = getattr(item, "performative", None)
    if getattr(perf, "NAME", "") == "attach" and perf.name is not None:
        return [str(perf.name).encode("utf-8", "surrogateescape")]
    return []


def _pair(recorded: list[bytes], live: list[bytes], renames: dict[bytes, bytes], notes: list[str]) -> None:
    for old, new in zip(recorded, live):
        if old == new or old in renames:
            continue
        if len(old) != len(new):   # a plain octet swap would break the length fields around it
            notes.append(f"the client chose a name of another length this time ({len(old)} -> {len(new)} octets): "
                         "the recorded frames that echo it are sent unchanged")
            continue
        renames[old] = new


def _renamed(data: bytes, renames: dict[bytes, bytes]) -> bytes:
    for old, new in renames.items():
        data = data.replace(old, new)
    return data


def _stored(doc: dict[str, Any]) -> str:
    return str(doc["signature"].get("violation"))


def _password() -> str:
    import secrets

    pw = secrets.token_urlsafe(12)
    SCRUBBER.register(pw)
    return pw


def _is_keepalive(item: Any) -> bool:
    from amqpspec.wire.amqp091 import HeartbeatFrame

    if isinstance(item, HeartbeatFrame):
        return True
    return type(item).__name__ == "EmptyFrame" or getattr(item, "performative", "missing") is None


def _observation(protocol: str, received: list[Any], end: str, framing_error: str | None) -> Any:
    if protocol == "1.0":
        from .server_oracles10 import observation10

        return observation10(received, end, framing_error)
    from amqpspec.peer.amqp091 import Observation

    return Observation(received=received, end=end, framing_error=framing_error)


def _limits(protocol: str, received: list[Any]) -> tuple[int, int]:
    """(frame-max, channel-max) the client settled (0-9-1 tune-ok) or announced (1.0 open)."""
    for item in received:
        method = getattr(item, "method", None)
        if protocol == "0-9-1" and method is not None and method.NAME == "connection.tune-ok":
            return int(method.frame_max), int(method.channel_max)
        perf = getattr(item, "performative", None)
        if protocol == "1.0" and getattr(perf, "NAME", None) == "open":
            return int(perf.value_of("max-frame-size")), int(perf.value_of("channel-max"))
    return 0, 65535


__all__ = ["replay_server_finding", "ReplayResult", "load_server_finding"]
