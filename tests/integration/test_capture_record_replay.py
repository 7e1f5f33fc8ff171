"""Record real clients through the proxy, replay the recordings, export them to pcap.

pika (AMQP 0-9-1) and python-qpid-proton (AMQP 1.0) talk to the local RabbitMQ through
``amqpspec record``; each recording is replayed against RabbitMQ (the same answers: exit 0),
the 0-9-1 one also against garagemq (whatever it answers, a clear report and no crash), and
tshark reads the exported pcap.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path
from typing import Iterator

import pytest

CLI = [sys.executable, "-m", "amqpspec.capture.cli"]
SASL_GUEST = (b"\x00guest\x00guest").hex()


def capture_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _no_credentials(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.hostname}:{parts.port}"))


class Recorder:
    """``amqpspec record`` in a subprocess, stopped after one client connection."""

    def __init__(self, upstream: str, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen([*CLI, "record", "--listen", "127.0.0.1:0", "--upstream", _no_credentials(upstream),
                                      "--out", str(out), "--max-connections", "1", "--flush-interval", "0.5"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline()
        assert first.startswith("listening on 127.0.0.1:"), first + self.proc.stderr.read()
        self.port = int(first.split()[2].rstrip(",").rsplit(":", 1)[1])
        self.first = first

    def finish(self, timeout: float = 20) -> tuple[str, str]:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGINT)
            out, err = self.proc.communicate(timeout=10)
        return self.first + out, err

    def files(self) -> list[Path]:
        return sorted(self.out.glob("*.json"))


def _client_url(url: str, port: int) -> str:
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username}:{parts.password}@127.0.0.1:{port}"))


def pika_session(url: str, queue: str) -> None:
    """A typical application: a queue, publishes with properties, confirms, gets, an RPC over a server-named queue."""
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()
    ch.queue_declare(queue)
    ch.queue_purge(queue)
    for i in range(3):
        ch.basic_publish("", queue, f"task-{i}".encode(),
                         pika.BasicProperties(content_type="text/plain", message_id=f"m{i}", headers={"n": i}))
    ch.confirm_delivery()
    ch.basic_publish("", queue, b"confirmed")
    got = [ch.basic_get(queue, auto_ack=True)[2] for _ in range(4)]
    assert got == [b"task-0", b"task-1", b"task-2", b"confirmed"], got
    reply = ch.queue_declare("", exclusive=True).method.queue
    ch.basic_publish("", queue, b"request", pika.BasicProperties(reply_to=reply, correlation_id="c1"))
    method, props, body = ch.basic_get(queue, auto_ack=True)
    ch.basic_publish("", props.reply_to, b"response", pika.BasicProperties(correlation_id=props.correlation_id))
    assert ch.basic_get(reply, auto_ack=True)[2] == b"response"
    ch.queue_delete(queue)
    conn.close()


def proton_session(url: str, queue: str) -> None:
    from proton import Message
    from proton.utils import BlockingConnection

    parts = urllib.parse.urlsplit(url)
    conn = BlockingConnection(f"amqp://{parts.username}:{parts.password}@{parts.hostname}:{parts.port}", timeout=10)
    sender = conn.create_sender(queue)
    for i in range(3):
        sender.send(Message(body=f"hello-{i}", id=f"m{i}", properties={"n": i}))
    receiver = conn.create_receiver(queue, credit=10)
    for i in range(3):
        assert receiver.receive(timeout=5).body == f"hello-{i}"
        receiver.accept()
    conn.close()


def _declare(url: str, queue: str, delete: bool = False) -> None:
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()
    if delete:
        ch.queue_delete(queue)
    else:
        ch.queue_declare(queue)
        ch.queue_purge(queue)
    conn.close()


@pytest.fixture(scope="module")
def pika_recording(rabbitmq, tmp_path_factory) -> Iterator[tuple[Path, str, str]]:
    out = tmp_path_factory.mktemp("rec091")
    rec = Recorder(rabbitmq.url, out)
    pika_session(_client_url(rabbitmq.url, rec.port), f"amqpspec-capture-pika-{os.getpid()}")
    stdout, stderr = rec.finish()
    assert rec.proc.returncode == 0, stderr
    [path] = rec.files()
    yield path, stdout, stderr


@pytest.fixture(scope="module")
def proton_recording(rabbitmq, tmp_path_factory) -> Iterator[Path]:
    queue = f"amqpspec-capture-proton-{os.getpid()}"
    _declare(rabbitmq.url, queue)
    out = tmp_path_factory.mktemp("rec10")
    rec = Recorder(rabbitmq.url, out)
    try:
        proton_session(_client_url(rabbitmq.url, rec.port), queue)
        _, stderr = rec.finish()
        assert rec.proc.returncode == 0, stderr
        [path] = rec.files()
        yield path
    finally:
        _declare(rabbitmq.url, queue, delete=True)


def test_pika_recording_is_a_complete_masked_transcript(pika_recording) -> None:
    path, stdout, stderr = pika_recording
    doc = json.loads(path.read_text())
    assert doc["kind"] == "transcript" and doc["schema"] == 1 and doc["protocol"] == "0-9-1" and doc["complete"]
    assert "guest:guest" not in doc["upstream"]
    text = path.read_text()
    assert SASL_GUEST not in text and SASL_GUEST not in stdout + stderr
    names = [e["summary"].split("(")[0] for e in doc["entries"] if e["dir"] != "event"]
    for expected in ("ch=0 connection.start-ok", "ch=1 confirm.select", "ch=1 basic.ack", "ch=1 queue.declare-ok",
                     "ch=0 connection.close-ok"):
        assert expected in names
    assert [e for e in doc["entries"] if e.get("redacted")], "the SASL response is masked"
    assert "recorded" in stdout and "Traceback" not in stderr


@pytest.mark.parametrize("timing", ["fast", "original"])
def test_pika_recording_replays_the_same_against_rabbitmq(pika_recording, rabbitmq, timing) -> None:
    path, _, _ = pika_recording
    proc = capture_cli("replay", str(path), rabbitmq.url, "--timing", timing)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SAME:" in proc.stdout
    assert SASL_GUEST not in proc.stdout


def test_pika_recording_against_garagemq_reports_clearly(pika_recording, garagemq) -> None:
    path, _, _ = pika_recording
    proc = capture_cli("replay", str(path), garagemq.url, "-v")
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    if proc.returncode == 1:
        assert "DIVERGENCE on connection 1" in proc.stdout and "recorded" in proc.stdout and "live:" in proc.stdout
    else:
        assert "SAME:" in proc.stdout


def test_proton_recording_replays_the_same_against_rabbitmq(proton_recording, rabbitmq) -> None:
    doc = json.loads(proton_recording.read_text())
    assert doc["protocol"] == "1.0"
    assert any(e.get("redacted") for e in doc["entries"]) and SASL_GUEST not in proton_recording.read_text()
    assert any("transfer(" in e["summary"] for e in doc["entries"] if e["dir"] == "recv")
    proc = capture_cli("replay", str(proton_recording), rabbitmq.url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "SAME:" in proc.stdout


def test_wrong_credentials_diverge(pika_recording, rabbitmq) -> None:
    path, _, _ = pika_recording
    parts = urllib.parse.urlsplit(rabbitmq.url)
    wrong = urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.username}:not-the-password@{parts.hostname}:{parts.port}"))
    proc = capture_cli("replay", str(path), wrong, "--answer-timeout", "0.5")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "DIVERGENCE" in proc.stdout and "not-the-password" not in proc.stdout


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (Debian package tshark)")
def test_tshark_reads_the_exported_recording(pika_recording, proton_recording, tmp_path) -> None:
    from amqpspec.capture import transcripts
    from amqpspec.capture.codec import decode_one
    from amqpspec.wire.amqp091 import MethodFrame

    for path, fields in ((pika_recording[0], ["-e", "amqp.method.class", "-e", "amqp.method.method"]),
                         (proton_recording, ["-e", "amqp.performative"])):
        pcap = tmp_path / (path.stem + ".pcap")
        proc = capture_cli("capture", "export", str(path), "--out", str(pcap))
        assert proc.returncode == 0, proc.stderr
        tf = transcripts.load(path)
        ours = []
        for e in tf.entries:
            if e["dir"] == "event":
                continue
            item = decode_one(tf.protocol, bytes.fromhex(e["hex"]), client=e["dir"] == "send")
            if isinstance(item, MethodFrame):
                ours.append(f"{item.method.CLASS_ID},{item.method.METHOD_ID}")
            elif hasattr(item, "performative") and item.performative is not None:
                ours.append(str(int(item.performative.CODE)))
        out = subprocess.run(["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=,", *fields],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        assert [line for line in out.splitlines() if line.strip(",")] == ours
        back = transcripts.load(pcap)  # and the pcap reads back to the same frames
        assert [e["hex"] for e in back.entries if e["dir"] != "event"] == \
            [e["hex"] for e in tf.entries if e["dir"] != "event"]


def test_ctrl_c_stops_the_proxy_cleanly(rabbitmq, tmp_path) -> None:
    proc = subprocess.Popen([*CLI, "record", "--listen", "127.0.0.1:0", "--upstream", _no_credentials(rabbitmq.url),
                             "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()
    assert first.startswith("listening on")
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "stopped: 0 transcript(s)" in out and "Traceback" not in err


def test_record_refuses_a_public_listen_address(rabbitmq, tmp_path) -> None:
    proc = capture_cli("record", "--listen", "0.0.0.0:5999", "--upstream", rabbitmq.url, "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "loopback" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
