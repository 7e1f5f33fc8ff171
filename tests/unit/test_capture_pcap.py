"""Transcripts to pcap and back: the synthetic TCP is sane, the round trip loses nothing, tshark agrees."""
from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("scapy")

from scapy.layers.inet import IP, TCP  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402
from scapy.packet import Raw  # noqa: E402
from scapy.utils import PcapWriter  # noqa: E402

from amqpspec.capture import transcripts  # noqa: E402
from amqpspec.capture.codec import PROTOCOL_091, decode_one, sasl_plain  # noqa: E402
from amqpspec.capture.pcap import (  # noqa: E402
    CLIENT_IP,
    MSS,
    SERVER_IP,
    SERVER_PORT,
    read_pcap,
    to_packets,
    write_pcap,
)
from amqpspec.errors import UsageError  # noqa: E402
from amqpspec.wire.amqp091 import MethodFrame, ProtocolHeader, spec  # noqa: E402
from tests.unit.test_capture_support import PASSWORD, session_091, session_10  # noqa: E402


def _frames(tf: transcripts.TranscriptFile) -> list[tuple]:
    return [(e["dir"], e["conn"], e["hex"], bool(e.get("redacted")), e["summary"])
            for e in tf.entries if e["dir"] != "event"]


def _closes(tf: transcripts.TranscriptFile) -> list[tuple]:
    return [(e["conn"], transcripts.close_event(e)) for e in tf.entries if transcripts.close_event(e)]


@pytest.mark.parametrize("make", [lambda: session_091(conns=2), lambda: session_091(close="client"), session_10])
def test_round_trip_transcript_pcap_transcript(make, tmp_path: Path) -> None:
    tf = make()
    path = tmp_path / "t.pcap"
    write_pcap(tf, path)
    back = read_pcap(path)
    assert back.protocol == tf.protocol
    assert _frames(back) == _frames(tf)
    assert _closes(back) == _closes(tf)
    # times come back to the microsecond, shifted so that the first packet is t=0
    shift = tf.entries[0]["t"]
    assert [round(e["t"] + shift, 6) for e in back.entries] == [e["t"] for e in tf.entries]
    assert back.upstream == f"amqp://{SERVER_IP}:{SERVER_PORT}/"


def test_synthetic_tcp_is_consistent() -> None:
    tf = session_091(conns=2, body=b"y" * 5000)
    packets = to_packets(tf)
    streams: dict[int, list] = defaultdict(list)
    for p in packets:
        assert p.haslayer(Ether) and p[IP].src in (CLIENT_IP, SERVER_IP)
        port = p[TCP].sport if p[IP].src == CLIENT_IP else p[TCP].dport
        streams[port].append(p)
    assert len(streams) == 2                               # one TCP stream per connection
    times = [p.time for p in packets]
    assert times == sorted(times) and len(set(times)) == len(times)
    for ps in streams.values():
        assert [str(p[TCP].flags) for p in ps[:3]] == ["S", "SA", "A"]   # three-way handshake
        nxt = {CLIENT_IP: ps[0][TCP].seq, SERVER_IP: ps[1][TCP].seq}
        for p in ps:
            src = p[IP].src
            other = SERVER_IP if src == CLIENT_IP else CLIENT_IP
            tcp = p[TCP]
            assert tcp.seq == nxt[src] % (1 << 32), "sequence numbers add up"
            payload = bytes(tcp.payload)
            assert len(payload) <= MSS
            if "A" in str(tcp.flags):
                assert tcp.ack == nxt[other] % (1 << 32), "acknowledgements name the other side's next octet"
            nxt[src] += len(payload) + (1 if "S" in str(tcp.flags) or "F" in str(tcp.flags) else 0)
            assert (p[TCP].sport if src == SERVER_IP else p[TCP].dport) == SERVER_PORT
        flags = [str(p[TCP].flags) for p in ps]
        assert "FA" in flags[-2:], "the recorded close becomes a FIN"
    sizes = [len(bytes(p[TCP].payload)) for p in packets if len(bytes(p[TCP].payload)) > 0]
    assert max(sizes) == MSS  # the 5000-octet body was split


def test_reset_becomes_rst_and_nothing_follows() -> None:
    tf = session_091(close="none")
    tf.entries.append({"t": tf.entries[-1]["t"] + 0.001, "dir": "event", "conn": 1,
                       "summary": "socket closed (rst: Connection reset by peer)", "hex": ""})
    packets = to_packets(tf)
    assert str(packets[-1][TCP].flags) == "RA" and packets[-1][IP].src == SERVER_IP


@pytest.mark.parametrize("make", [lambda: session_091(conns=2, body=b"z" * 5000), session_10,
                                  lambda: session_091(close="client")])
def test_written_octets_are_scapys_own(make, tmp_path: Path) -> None:
    """write_pcap patches header templates instead of building each packet with scapy: the
    file must be what scapy's PcapWriter writes for to_packets' packets, octet for octet."""
    tf = make()
    ours, scapys = tmp_path / "ours.pcap", tmp_path / "scapy.pcap"
    n = write_pcap(tf, ours)
    packets = to_packets(tf)
    writer = PcapWriter(str(scapys), linktype=1, nano=True, sync=False)
    for p in packets:
        writer.write(p)
    writer.close()
    assert n == len(packets) > 10
    assert ours.read_bytes() == scapys.read_bytes()


def test_capture_never_holds_the_password(tmp_path: Path) -> None:
    path = tmp_path / "t.pcap"
    write_pcap(session_091(), path)
    data = path.read_bytes()
    assert PASSWORD.encode() not in data and b"*" * len(sasl_plain("guest", PASSWORD)) in data


def _handcrafted(path: Path, segments: list[tuple[bool, int, bytes]], client_isn: int = 1000, server_isn: int = 5000,
                 port: int = 40000) -> None:
    """A capture as tcpdump would write one: Ethernet, our order of segments (seq relative to the ISNs)."""
    w = PcapWriter(str(path), linktype=1)
    t = 1_700_000_000.0

    def pkt(from_client: bool, flags: str, seq: int, ack: int, payload: bytes = b"") -> None:
        nonlocal t
        t += 0.001
        src, dst = ("127.0.0.1", "127.0.0.2") if from_client else ("127.0.0.2", "127.0.0.1")
        sport, dport = (port, 5672) if from_client else (5672, port)
        p = Ether() / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags, seq=seq, ack=ack)
        if payload:
            p = p / Raw(payload)
        p.time = t
        w.write(p)

    pkt(True, "S", client_isn, 0)
    pkt(False, "SA", server_isn, client_isn + 1)
    for from_client, rel, payload in segments:
        isn = client_isn if from_client else server_isn
        pkt(from_client, "PA", isn + 1 + rel, 0, payload)
    w.close()


def test_reading_reassembles_out_of_order_and_retransmitted_segments(tmp_path: Path) -> None:
    header = ProtocolHeader().encode()
    start_ok = MethodFrame(0, spec.ConnectionStartOk({"product": "x"}, "PLAIN", sasl_plain("bob", PASSWORD), "en_US")).encode()
    open_ = MethodFrame(0, spec.ConnectionOpen("/")).encode()
    client = header + start_ok + open_
    a, b = 8 + 10, 8 + len(start_ok)
    segments = [(True, 0, client[:a]), (True, b, client[b:]), (True, a, client[a:b]),  # gap filled late
                (True, 0, client[:a]),                                                   # a retransmission
                (False, 0, MethodFrame(0, spec.ConnectionOpenOk()).encode())]
    path = tmp_path / "real.pcap"
    _handcrafted(path, segments)
    tf = read_pcap(path)
    sent = [e for e in tf.entries if e["dir"] == "send"]
    assert [e["summary"].split("(")[0] for e in sent] == ["protocol-header AMQP 0-0-9-1", "ch=0 connection.start-ok",
                                                          "ch=0 connection.open"]
    # a real capture holds the password in clear: it is masked on the way in
    assert sent[1].get("redacted") is True
    assert PASSWORD.encode().hex() not in repr(tf.entries) and PASSWORD not in repr(tf.entries)
    masked = decode_one(PROTOCOL_091, bytes.fromhex(sent[1]["hex"]))
    assert masked.method.response == b"*" * len(sasl_plain("bob", PASSWORD))
    assert [e["summary"] for e in tf.entries if e["dir"] == "recv"] == ["ch=0 connection.open-ok()"]


def test_non_amqp_streams_are_skipped_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "http.pcap"
    _handcrafted(path, [(True, 0, b"GET / HTTP/1.1\r\n\r\n")])
    with pytest.raises(UsageError, match="no AMQP conversation"):
        read_pcap(path)


def test_a_damaged_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.pcap"
    path.write_bytes(b"\xd4\xc3\xb2\xa1" + b"\x00" * 10)
    with pytest.raises(UsageError):
        transcripts.load(path)


TSHARK = shutil.which("tshark")


@pytest.mark.skipif(TSHARK is None, reason="tshark is not installed (Debian package tshark)")
@pytest.mark.parametrize("make", [lambda: session_091(conns=2), session_10])
def test_tshark_decodes_the_methods_we_recorded(make, tmp_path: Path) -> None:
    tf = make()
    path = tmp_path / "t.pcap"
    write_pcap(tf, path)
    ours = []
    for e in tf.entries:
        if e["dir"] == "event":
            continue
        item = decode_one(tf.protocol, bytes.fromhex(e["hex"]), client=e["dir"] == "send")
        if tf.protocol == PROTOCOL_091 and isinstance(item, MethodFrame):
            ours.append(f"{item.method.CLASS_ID},{item.method.METHOD_ID}")
        elif tf.protocol != PROTOCOL_091 and hasattr(item, "performative"):
            ours.append(str(int(item.performative.CODE)))
    fields = ["-e", "amqp.method.class", "-e", "amqp.method.method"] if tf.protocol == PROTOCOL_091 \
        else ["-e", "amqp.performative"]
    out = subprocess.run([TSHARK, "-r", str(path), "-T", "fields", "-E", "separator=,", *fields],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    theirs = [line for line in out.splitlines() if line.strip(",")]
    assert theirs == ours
