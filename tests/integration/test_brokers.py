"""The local brokers really serve AMQP: raw sockets, real handshakes, no mocks.

These are the first thing to look at when a conformance run reports every case as
``error``: if a protocol header does not get a protocol answer here, the broker setup is
broken, not the suite.
"""

from __future__ import annotations

import os
import socket
import ssl
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from amqpspec.brokers import Broker, broker_names, get_broker, port_accepts, redact_url

AMQP091_HEADER = b"AMQP\x00\x00\x09\x01"
AMQP10_HEADER = b"AMQP\x00\x01\x00\x00"
FRAME_METHOD = 0x01
CONNECTION_START = (10, 10)  # class connection, method start
REPO_ROOT = Path(__file__).resolve().parents[2]


def _recv_at_least(sock: socket.socket, n: int, timeout: float = 10.0) -> bytes:
    sock.settimeout(timeout)
    data = b""
    while len(data) < n:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def _assert_connection_start(reply: bytes) -> None:
    """A 0-9-1 server answers a good header with connection.start on channel 0."""
    assert len(reply) >= 11, f"short reply to the 0-9-1 header: {reply!r}"
    frame_type, channel, size = struct.unpack("!BHI", reply[:7])
    assert frame_type == FRAME_METHOD, f"expected a method frame, got type {frame_type}: {reply[:16]!r}"
    assert channel == 0
    assert size > 4
    assert struct.unpack("!HH", reply[7:11]) == CONNECTION_START


def _amqp091_reply(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(AMQP091_HEADER)
        return _recv_at_least(sock, 11)


@pytest.mark.parametrize(
    "fixture_name",
    [
        pytest.param("rabbitmq", marks=pytest.mark.broker("rabbitmq")),
        pytest.param("garagemq", marks=pytest.mark.broker("garagemq")),
        pytest.param("proton_broker", marks=pytest.mark.broker("proton")),
    ],
)
def test_fixture_yields_a_listening_broker(request: pytest.FixtureRequest, fixture_name: str) -> None:
    broker: Broker = request.getfixturevalue(fixture_name)
    assert broker.is_running()
    assert port_accepts(broker.port)
    assert broker.status().running


@pytest.mark.broker("rabbitmq")
def test_rabbitmq_answers_amqp091_header(rabbitmq: Broker) -> None:
    _assert_connection_start(_amqp091_reply(rabbitmq.port))


@pytest.mark.broker("garagemq")
def test_garagemq_answers_amqp091_header(garagemq: Broker) -> None:
    _assert_connection_start(_amqp091_reply(garagemq.port))


@pytest.mark.broker("proton")
def test_proton_answers_amqp10_header(proton_broker: Broker) -> None:
    with socket.create_connection(("127.0.0.1", proton_broker.port), timeout=10) as sock:
        sock.sendall(AMQP10_HEADER)
        reply = _recv_at_least(sock, 8)
    assert reply[:8] == AMQP10_HEADER


@pytest.mark.broker("rabbitmq")
def test_rabbitmq_amqp10_plugin_answers_on_the_same_port(rabbitmq: Broker) -> None:
    # rabbitmq_amqp1_0 insists on SASL first: a bare 1.0 header gets the SASL header back
    with socket.create_connection(("127.0.0.1", rabbitmq.port), timeout=10) as sock:
        sock.sendall(b"AMQP\x03\x01\x00\x00")
        reply = _recv_at_least(sock, 8)
    assert reply[:8] == b"AMQP\x03\x01\x00\x00"


@pytest.mark.broker("rabbitmq")
@pytest.mark.parametrize("server_hostname", ["localhost", "127.0.0.1"])
def test_rabbitmq_tls_with_ca(rabbitmq: Broker, server_hostname: str) -> None:
    assert rabbitmq.cafile and os.path.isfile(rabbitmq.cafile)
    assert rabbitmq.tls_url and rabbitmq.tls_url.startswith("amqps://")
    port = rabbitmq.ports["tls_port"]
    context = ssl.create_default_context(cafile=rabbitmq.cafile)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=server_hostname) as sock:
            assert sock.version() in ("TLSv1.2", "TLSv1.3")
            sock.sendall(AMQP091_HEADER)
            reply = _recv_at_least(sock, 11)
    _assert_connection_start(reply)


@pytest.mark.broker("rabbitmq")
def test_rabbitmq_tls_certificate_satisfies_strict_verification(rabbitmq: Broker) -> None:
    """Python 3.13 turns VERIFY_X509_STRICT on by default; the test CA must pass it already."""
    context = ssl.create_default_context(cafile=rabbitmq.cafile)
    context.verify_flags |= ssl.VERIFY_X509_STRICT
    with socket.create_connection(("127.0.0.1", rabbitmq.ports["tls_port"]), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as sock:
            assert sock.getpeercert()


@pytest.mark.broker("rabbitmq")
def test_rabbitmq_tls_without_ca_fails_verification(rabbitmq: Broker) -> None:
    context = ssl.create_default_context()  # system CAs only
    with socket.create_connection(("127.0.0.1", rabbitmq.ports["tls_port"]), timeout=10) as raw:
        with pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname="localhost")


@pytest.mark.broker("rabbitmq")
def test_rabbitmqctl_helper_passes_arguments_unchanged(rabbitmq: Broker) -> None:
    """Shell metacharacters survive the Debian wrapper's ``su -c``, so odd names can be tested."""
    from amqpspec.brokers import RabbitMQ

    assert isinstance(rabbitmq, RabbitMQ)
    vhost = 'amqpspec-$HOME`id`\\"x'
    rabbitmq.ctl("add_vhost", vhost)
    try:
        listed = rabbitmq.ctl("list_vhosts", "--quiet", "--no-table-headers").stdout.splitlines()
        assert vhost in listed
    finally:
        rabbitmq.ctl("delete_vhost", vhost)


@pytest.mark.broker("garagemq")
def test_start_is_idempotent(garagemq: Broker) -> None:
    again = get_broker(garagemq.name)
    assert again.start() is False  # already running: a no-op
    assert again.is_running()


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "amqpspec.brokers", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_list_hides_passwords() -> None:
    proc = _run_cli("list")
    assert proc.returncode == 0, proc.stderr
    for name in broker_names():
        broker = get_broker(name)
        assert name in proc.stdout
        assert redact_url(broker.url) in proc.stdout
        if broker.credentials:
            assert f":{broker.credentials[1]}@" not in proc.stdout
    assert "guest:guest" not in proc.stdout + proc.stderr


def test_cli_unknown_broker_is_a_usage_error() -> None:
    proc = _run_cli("env", "no-such-broker")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown broker 'no-such-broker'")
    assert proc.stdout == ""


def test_cli_env_prints_what_scripts_need() -> None:
    proc = _run_cli("env", "rabbitmq")
    assert proc.returncode == 0, proc.stderr
    exports = dict(line.removeprefix("export ").split("=", 1) for line in proc.stdout.splitlines())
    broker = get_broker("rabbitmq")
    assert exports["AMQPSPEC_URL"] == broker.url
    assert exports["AMQPSPEC_TLS_URL"] == broker.tls_url
    assert exports["AMQPSPEC_CAFILE"] == broker.cafile
