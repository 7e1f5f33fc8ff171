"""Transcripts to pcap and back, with scapy, so Wireshark and tshark can show a conversation.

Writing: every connection of a transcript becomes its own TCP stream from a synthetic client
``10.0.0.1:<port>`` to a synthetic broker ``10.0.0.2:5672`` (the AMQP port, where Wireshark's
dissector looks), with a three-way handshake, sequence and acknowledgement numbers that add
up, segments of at most 1400 octets, an ACK for every burst, and FIN (or RST) where the
transcript shows the connection ending. The addresses exist only inside the file: nothing is
sent anywhere. Timestamps are the transcript's, written with nanosecond resolution so that
segments of one entry keep its microsecond when read back. What a transcript holds masked
(SASL responses) stays masked in the capture.

Reading: any pcap or pcapng (a synthetic one, or tcpdump/Wireshark's of a real client) is
cut into TCP streams, each direction reassembled by sequence number (retransmissions and
reordering handled), and every stream that starts with an AMQP protocol header is split into
frames with the codecs: a transcript with one connection per stream. Credentials a real
capture holds in clear are masked on the way in.
"""
from __future__ import annotations

import datetime as _dt
import random
import socket
import struct
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from amqpspec.capture.codec import (
    StreamDecoder,
    mask,
    plain_password,
    protocol_of_header,
)
from amqpspec.capture.transcripts import (
    TranscriptFile,
    by_connection,
    close_event,
    entry_bytes,
)
from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER

CLIENT_IP = "10.0.0.1"
SERVER_IP = "10.0.0.2"
SERVER_PORT = 5672
MAC_CLIENT = "02:00:00:00:00:01"
MAC_SERVER = "02:00:00:00:00:02"
ETHER_LEN, IP_LEN, TCP_LEN = 14, 20, 20
AMQP_PORTS = (5672, 5671)
MSS = 1400
NS = Decimal("0.000000001")
DEFAULT_EPOCH = Decimal(946684800)   # 2000-01-01T00:00:00Z: used when the transcript has no start time
MAX_PACKETS = 2_000_000              # reading stops here: a capture is not read into memory without bound
MAX_STREAM_BYTES = 64 << 20          # per direction of a stream
MAX_OUT_OF_ORDER = 4096              # buffered segments waiting for a gap to fill, per direction


def _scapy() -> Any:
    try:
        from scapy.layers.inet import IP, TCP
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw
        from scapy.utils import PcapReader, PcapWriter
    except ImportError:  # pragma: no cover - depends on the installation
        raise UsageError("pcap support needs scapy: pip install scapy") from None
    return IP, TCP, Ether, Raw, PcapReader, PcapWriter


def _epoch(started: str) -> Decimal:
    if started:
        try:
            when = _dt.datetime.fromisoformat(started.replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=_dt.timezone.utc)
            return Decimal(str(round(when.timestamp(), 6)))
        except ValueError:
            pass
    return DEFAULT_EPOCH


# ---------------------------------------------------------------------------- writing

@dataclass
class _Stream:
    """Sequence state of one synthetic TCP connection."""

    sport: int
    cseq: int          # the client's next sequence number
    sseq: int          # the server's
    open: bool = False
    client_fin: bool = False
    server_fin: bool = False
    reset: bool = False


@dataclass(frozen=True)
class _Segment:
    """One synthetic TCP segment, before it becomes a scapy packet or raw octets."""

    from_client: bool
    flags: str
    seq: int
    ack: int
    payload: bytes
    time: Decimal


class _Writer:
    """Plays the transcript's connections as TCP segments (numbers only, no packets built)."""

    def __init__(self, epoch: Decimal, seed: int) -> None:
        self.epoch = epoch
        self.rng = random.Random(seed)
        self.segments: list[tuple[_Stream, _Segment]] = []
        self.last = Decimal(0)
        self.used_ports: set[int] = set()

    def stream(self) -> _Stream:
        port = self.rng.randrange(49152, 65535)
        while port in self.used_ports:
            port = self.rng.randrange(49152, 65535)
        self.used_ports.add(port)
        return _Stream(port, self.rng.randrange(1, 1 << 31), self.rng.randrange(1, 1 << 31))

    def _emit(self, st: _Stream, from_client: bool, flags: str, t: Decimal, payload: bytes = b"") -> None:
        seq, ack = (st.cseq, st.sseq) if from_client else (st.sseq, st.cseq)
        t = max(t, self.last + NS)   # strictly increasing: Wireshark shows the order we mean
        self.last = t
        self.segments.append((st, _Segment(from_client, flags, seq % (1 << 32),
                                           (ack % (1 << 32)) if "A" in flags else 0, payload, self.epoch + t)))
        advance = len(payload) + (1 if "S" in flags or "F" in flags else 0)
        if from_client:
            st.cseq += advance
        else:
            st.sseq += advance

    def handshake(self, st: _Stream, t: Decimal) -> None:
        st.cseq -= 1
        st.sseq -= 1
        self._emit(st, True, "S", t)
        self._emit(st, False, "SA", t)
        self._emit(st, True, "A", t)
        st.open = True

    def data(self, st: _Stream, from_client: bool, payload: bytes, t: Decimal) -> None:
        for i in range(0, len(payload), MSS):
            chunk = payload[i:i + MSS]
            last = i + MSS >= len(payload)
            self._emit(st, from_client, "PA" if last else "A", t, chunk)
        self._emit(st, not from_client, "A", t)   # the other side acknowledges the burst

    def fin(self, st: _Stream, from_client: bool, t: Decimal) -> None:
        self._emit(st, from_client, "FA", t)
        self._emit(st, not from_client, "A", t)
        if from_client:
            st.client_fin = True
        else:
            st.server_fin = True

    def rst(self, st: _Stream, from_client: bool, t: Decimal) -> None:
        self._emit(st, from_client, "RA", t)
        st.reset = True


def _segments(tf: TranscriptFile, seed: int) -> list[tuple[_Stream, _Segment]]:
    w = _Writer(_epoch(tf.started), seed)
    streams: dict[int, _Stream] = {}
    for conn in by_connection(tf.entries):
        streams[conn] = w.stream()
    for e in tf.entries:
        conn = int(e.get("conn", 0))
        st = streams[conn]
        t = Decimal(str(e.get("t", 0.0)))
        d = e.get("dir")
        if st.reset:
            continue
        if d == "event":
            text = str(e.get("summary", ""))
            ce = close_event(e)
            if text.startswith("connected to") and not st.open:
                w.handshake(st, t)
            elif ce is not None and st.open:
                who, how = ce
                from_client = who == "client"
                if how == "rst":
                    w.rst(st, from_client, t)
                elif not (st.client_fin if from_client else st.server_fin):
                    w.fin(st, from_client, t)
            continue
        data = entry_bytes(e)
        if not data:
            continue
        if not st.open:
            w.handshake(st, t)
        if d == "send" and not st.client_fin:
            w.data(st, True, data, t)
        elif d == "recv" and not st.server_fin:
            w.data(st, False, data, t)
    return w.segments


def _ends(st: _Stream, from_client: bool) -> tuple[tuple[str, int], tuple[str, int]]:
    client, server = (CLIENT_IP, st.sport), (SERVER_IP, SERVER_PORT)
    return (client, server) if from_client else (server, client)


def to_packets(tf: TranscriptFile, seed: int = 0) -> list[Any]:
    """The scapy packets of a transcript (see the module docstring)."""
    IP, TCP, Ether, Raw, _, _ = _scapy()
    packets = []
    for st, seg in _segments(tf, seed):
        (src, sport), (dst, dport) = _ends(st, seg.from_client)
        mac_src, mac_dst = (MAC_CLIENT, MAC_SERVER) if seg.from_client else (MAC_SERVER, MAC_CLIENT)
        pkt = Ether(src=mac_src, dst=mac_dst) / IP(src=src, dst=dst, ttl=64) / TCP(
            sport=sport, dport=dport, flags=seg.flags, seq=seg.seq, ack=seg.ack, window=65535)
        if seg.payload:
            pkt = pkt / Raw(load=seg.payload)
        pkt.time = seg.time
        packets.append(pkt)
    return packets


class _RawFrames:
    """The octets of ``to_packets``' packets without building one scapy packet per segment.

    scapy builds the Ethernet/IPv4/TCP header of each direction once (``template``); a segment
    then only needs its lengths, numbers, flags and the two checksums patched in, which is
    about a hundred times quicker than scapy's per-packet build (~3 ms a packet): a report
    writes thousands. The octets are the same (tests compare them with scapy's).
    """

    _FLAGS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10}

    def __init__(self) -> None:
        from scapy.utils import checksum

        IP, TCP, Ether, _, _, _ = _scapy()
        self.checksum = checksum
        self.templates = {}
        for from_client in (True, False):
            src, dst = (CLIENT_IP, SERVER_IP) if from_client else (SERVER_IP, CLIENT_IP)
            mac_src, mac_dst = (MAC_CLIENT, MAC_SERVER) if from_client else (MAC_SERVER, MAC_CLIENT)
            self.templates[from_client] = bytes(
                Ether(src=mac_src, dst=mac_dst) / IP(src=src, dst=dst, ttl=64) / TCP(window=65535))
        self.pseudo = {fc: socket.inet_aton(CLIENT_IP if fc else SERVER_IP) + socket.inet_aton(SERVER_IP if fc else CLIENT_IP)
                       for fc in (True, False)}

    def frame(self, st: _Stream, seg: _Segment) -> bytes:
        (_, sport), (_, dport) = _ends(st, seg.from_client)
        head = bytearray(self.templates[seg.from_client])
        ip, tcp = ETHER_LEN, ETHER_LEN + IP_LEN
        struct.pack_into("!H", head, ip + 2, IP_LEN + TCP_LEN + len(seg.payload))
        struct.pack_into("!H", head, ip + 10, 0)
        struct.pack_into("!H", head, ip + 10, self.checksum(bytes(head[ip:tcp])))
        flags = 0
        for f in seg.flags:
            flags |= self._FLAGS[f]
        struct.pack_into("!HHIIBB", head, tcp, sport, dport, seg.seq, seg.ack, 5 << 4, flags)
        struct.pack_into("!H", head, tcp + 16, 0)
        segment = bytes(head[tcp:]) + seg.payload
        pseudo = self.pseudo[seg.from_client] + struct.pack("!BBH", 0, 6, len(segment))
        struct.pack_into("!H", head, tcp + 16, self.checksum(pseudo + segment))
        return bytes(head) + seg.payload


def write_pcap(tf: TranscriptFile, path: str | Path, seed: int = 0) -> int:
    """Writes the capture (nanosecond pcap, Ethernet); returns the number of packets.

    The records are those of ``to_packets``, octet for octet, written from raw frames (see
    ``_RawFrames``)."""
    *_, PcapWriter = _scapy()
    frames = _RawFrames()
    segments = _segments(tf, seed)
    writer = PcapWriter(str(path), linktype=1, nano=True, sync=False)
    try:
        writer.write_header(None)   # write_packet, unlike write, does not
        for st, seg in segments:
            whole = int(seg.time)   # as scapy splits a packet's time: seconds, then nanoseconds
            writer.write_packet(frames.frame(st, seg), sec=float(seg.time),
                                usec=int(round((seg.time - whole) * 1_000_000_000)))
    finally:
        writer.close()
    return len(segments)


# ---------------------------------------------------------------------------- reading

@dataclass
class _Half:
    """One direction of a TCP stream, reassembled by sequence number."""

    next_seq: int | None = None
    held: dict[int, bytes] = field(default_factory=dict)
    total: int = 0
    overflow: bool = False

    def add(self, seq: int, payload: bytes) -> bytes:
        """The octets that became contiguous with this segment (retransmissions trimmed)."""
        if self.next_seq is None:
            self.next_seq = seq
        out = bytearray()
        if payload:
            if len(self.held) < MAX_OUT_OF_ORDER:
                self.held.setdefault(seq, payload)
        while True:
            progressed = False
            for s in sorted(self.held):
                data = self.held[s]
                off = (self.next_seq - s) % (1 << 32)
                if off >= (1 << 31):  # still ahead of us: a gap
                    break
                del self.held[s]
                progressed = True
                if off < len(data):
                    out += data[off:]
                    self.next_seq = (self.next_seq + len(data) - off) % (1 << 32)
            if not progressed:
                break
        if self.total + len(out) > MAX_STREAM_BYTES:
            self.overflow = True
            out = out[: max(0, MAX_STREAM_BYTES - self.total)]
        self.total += len(out)
        return bytes(out)


@dataclass
class _Conn:
    conn: int
    client: tuple[str, int]
    server: tuple[str, int]
    halves: dict[bool, _Half] = field(default_factory=lambda: {True: _Half(), False: _Half()})
    protocol: str | None = None
    head: bytes = b""
    held: list[tuple[Decimal, bool, bytes]] = field(default_factory=list)
    decoders: dict[bool, StreamDecoder] = field(default_factory=dict)
    skipped: str | None = None
    ended: set[bool] = field(default_factory=set)


class _Reader:
    def __init__(self) -> None:
        self.streams: dict[tuple[Any, ...], _Conn] = {}
        self.entries: list[tuple[Decimal, dict[str, Any]]] = []
        self.notes: list[str] = []
        self.first_time: Decimal | None = None
        self.count = 0
        self.archive: list[_Conn] = []   # every stream, in order of appearance
        self.secrets: set[bytes] = set()  # passwords seen in clear in PLAIN responses

    def _key(self, a: tuple[str, int], b: tuple[str, int]) -> tuple[Any, ...]:
        return tuple(sorted((a, b)))

    def packet(self, pkt: Any, IP: Any, TCP: Any) -> None:
        from scapy.layers.inet6 import IPv6

        ip = pkt.getlayer(IP) if pkt.haslayer(IP) else pkt.getlayer(IPv6) if pkt.haslayer(IPv6) else None
        if ip is None or not pkt.haslayer(TCP):
            return
        tcp = pkt.getlayer(TCP)
        t = Decimal(str(pkt.time))
        if self.first_time is None:
            self.first_time = t
        src, dst = (str(ip.src), int(tcp.sport)), (str(ip.dst), int(tcp.dport))
        flags = str(tcp.flags)
        key = self._key(src, dst)
        c = self.streams.get(key)
        if "S" in flags and "A" not in flags and (c is None or c.ended):
            c = self._new(key, src, dst, t)
        if c is None:
            client_is_src = dst[1] in AMQP_PORTS or src[1] not in AMQP_PORTS and bytes(tcp.payload)[:4] == b"AMQP"
            c = self._new(key, src if client_is_src else dst, dst if client_is_src else src, t)
        from_client = src == c.client
        half = c.halves[from_client]
        seq = int(tcp.seq)
        if "S" in flags:
            half.next_seq = (seq + 1) % (1 << 32)
            return
        payload = bytes(tcp.payload)
        if half.next_seq is None and not payload and ("F" in flags or "R" in flags):
            half.next_seq = seq
        data = half.add(seq, payload) if payload else b""
        if data:
            self._data(c, from_client, data, t)
        if "R" in flags:
            self._end(c, from_client, "rst", t)
        elif "F" in flags:
            self._end(c, from_client, "fin", t)

    def _new(self, key: tuple[Any, ...], client: tuple[str, int], server: tuple[str, int], t: Decimal) -> _Conn:
        c = _Conn(len(self.archive) + 1, client, server)
        self.streams[key] = c
        self.archive.append(c)
        host = f"[{server[0]}]" if ":" in server[0] else server[0]
        self.entries.append((t, {"dir": "event", "conn": c.conn, "summary": f"connected to {host}:{server[1]}", "hex": ""}))
        return c

    def _data(self, c: _Conn, from_client: bool, data: bytes, t: Decimal) -> None:
        if c.skipped:
            return
        if c.protocol is None:
            if not from_client:
                c.held.append((t, from_client, data))
                if sum(len(d) for _, _, d in c.held) > 65536:
                    c.skipped = "the server spoke first and it is not AMQP"
                return
            c.head += data
            if len(c.head) < 8:
                c.held.append((t, from_client, data))
                return
            c.protocol = protocol_of_header(c.head[:8])
            if c.protocol is None:
                c.skipped = f"not AMQP (the client's first octets are {c.head[:8]!r})"
                self.notes.append(f"stream {c.client[0]}:{c.client[1]} -> {c.server[0]}:{c.server[1]} skipped: {c.skipped}")
                return
            c.decoders = {True: StreamDecoder(c.protocol, client=True), False: StreamDecoder(c.protocol, client=False)}
            held, c.held = c.held, []
            for ht, hc, hd in held:
                self._units(c, hc, hd, ht)
        self._units(c, from_client, data, t)

    def _units(self, c: _Conn, from_client: bool, data: bytes, t: Decimal) -> None:
        assert c.protocol is not None
        for u in c.decoders[from_client].feed(data):
            self._unit(c, from_client, u, t)

    def _unit(self, c: _Conn, from_client: bool, u: Any, t: Decimal) -> None:
        assert c.protocol is not None
        entry: dict[str, Any] = {"dir": "send" if from_client else "recv", "conn": c.conn,
                                 "summary": u.summary, "hex": u.raw.hex()}
        raw = u.raw
        if from_client and u.item is not None:
            password = plain_password(c.protocol, u.item)
            if password:
                SCRUBBER.register(password)
                if len(password) >= 4:
                    self.secrets.add(password.encode())
            masked = mask(c.protocol, raw, u.item)
            if masked is not None:
                raw = masked
                entry["redacted"] = True
        for secret in self.secrets:  # the password anywhere else in the octets: same length, masked
            if secret in raw:
                raw = raw.replace(secret, b"*" * len(secret))
                entry["redacted"] = True
        entry["hex"] = raw.hex()
        entry["summary"] = SCRUBBER.scrub(entry["summary"])
        self.entries.append((t, entry))

    def _end(self, c: _Conn, from_client: bool, how: str, t: Decimal) -> None:
        if from_client in c.ended:
            return
        if c.protocol is not None and not c.skipped:
            for u in c.decoders[from_client].flush():
                self._unit(c, from_client, u, t)
        c.ended.add(from_client)
        if how == "rst":
            c.ended.update((True, False))
        summary = f"client closed ({how})" if from_client else f"socket closed ({how})"
        self.entries.append((t, {"dir": "event", "conn": c.conn, "summary": summary, "hex": ""}))


def read_pcap(path: str | Path) -> TranscriptFile:
    """The AMQP conversations of a capture as one transcript, one connection per TCP stream."""
    IP, TCP, _, _, PcapReader, _ = _scapy()
    r = _Reader()
    try:
        reader = PcapReader(str(path))
    except Exception as exc:  # scapy raises its own exception types for damaged files
        raise UsageError(f"{path}: not a readable pcap/pcapng capture: {exc}") from None
    try:
        while r.count < MAX_PACKETS:
            try:
                pkt = reader.read_packet()
            except EOFError:
                break
            except Exception as exc:  # a damaged record: keep what came before
                r.notes.append(f"capture damaged after packet {r.count}: {exc}")
                break
            if pkt is None:
                break
            r.count += 1
            r.packet(pkt, IP, TCP)
        else:
            r.notes.append(f"only the first {MAX_PACKETS} packets were read")
    finally:
        reader.close()
    conns = [c for c in r.archive if c.protocol is not None and not c.skipped]
    if not conns:
        extra = f" ({'; '.join(r.notes[:3])})" if r.notes else ""
        raise UsageError(f"{path}: no AMQP conversation found in the capture{extra}")
    protocol = conns[0].protocol
    keep = {c.conn for c in conns if c.protocol == protocol}
    dropped = [c for c in conns if c.protocol != protocol]
    if dropped:
        r.notes.append(f"{len(dropped)} stream(s) of the other AMQP version left out")
    renumber = {old: new for new, old in enumerate(sorted(keep), start=1)}
    base = r.first_time or Decimal(0)
    entries = []
    for t, e in sorted(((t, e) for t, e in r.entries if e["conn"] in keep), key=lambda te: te[0]):
        e["t"] = float(round(t - base, 6))
        e["conn"] = renumber[e["conn"]]
        entries.append({"t": e["t"], "dir": e["dir"], "conn": e["conn"], "summary": e["summary"], "hex": e["hex"],
                        **({"redacted": True} if e.get("redacted") else {})})
    first = conns[0]
    host = f"[{first.server[0]}]" if ":" in first.server[0] else first.server[0]
    started = _dt.datetime.fromtimestamp(float(base), _dt.timezone.utc).isoformat(timespec="microseconds")
    tf = TranscriptFile(protocol or "", entries, f"amqp://{host}:{first.server[1]}/", started.replace("+00:00", "Z"),
                        f"pcap {Path(path).name}")
    if r.notes:
        tf.extra["notes"] = r.notes
    return tf
