"""A throw-away CA and a server certificate for local TLS listeners, made with ``openssl``.

Why a CA and not one self-signed leaf: tests pass the CA file to clients
(``--cafile``), exactly as users do with a real deployment, and a client *without* the CA
must fail verification, which is a check worth having. The extensions follow what strict
verifiers (Python 3.13's ``VERIFY_X509_STRICT``, Erlang's ssl) expect: the CA has
keyCertSign and a subject key id, the leaf has serverAuth, an authority key id and SANs
for ``localhost`` and ``127.0.0.1``.
"""

from __future__ import annotations

import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

from amqpspec.brokers.errors import BrokerError

_OPENSSL_CONFIG = """\
[req]
distinguished_name = dn
prompt = no
x509_extensions = v3_ca

[dn]
CN = amqpspec local test CA

[v3_ca]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid:always

[server]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid, issuer
subjectAltName = {san}
"""


@dataclass(frozen=True)
class TLSFiles:
    """PEM files of one TLS identity; ``cafile`` is what clients need to trust it."""

    cafile: Path
    certfile: Path
    keyfile: Path
    ca_keyfile: Path


def _openssl(*args: str, cwd: Path) -> str:
    try:
        proc = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError as exc:
        raise BrokerError("openssl not found; install the Debian package `openssl`") from exc
    if proc.returncode != 0:
        raise BrokerError(f"`openssl {' '.join(args)}` failed: {proc.stderr.strip()}")
    return proc.stdout


def _still_valid(files: TLSFiles, directory: Path) -> bool:
    if not all(p.is_file() for p in (files.cafile, files.certfile, files.keyfile)):
        return False
    try:
        _openssl("verify", "-CAfile", str(files.cafile), str(files.certfile), cwd=directory)
        _openssl("x509", "-checkend", "86400", "-noout", "-in", str(files.certfile), cwd=directory)
        _openssl("x509", "-checkend", "86400", "-noout", "-in", str(files.cafile), cwd=directory)
        cert_key = _openssl("x509", "-noout", "-pubkey", "-in", str(files.certfile), cwd=directory)
        key = _openssl("pkey", "-pubout", "-in", str(files.keyfile), cwd=directory)
    except BrokerError:
        return False
    return cert_key.strip() == key.strip()


def ensure_server_identity(
    directory: Path,
    *,
    dns_names: tuple[str, ...] = ("localhost",),
    ip_addresses: tuple[str, ...] = ("127.0.0.1",),
    days: int = 825,
) -> TLSFiles:
    """Make (or keep) ``ca.pem``, ``server.pem`` and ``server.key`` in ``directory``.

    Existing files are reused while the certificate verifies, matches the key and does
    not expire within a day, so restarting a broker does not invalidate a CA file a client
    already holds.
    """
    directory.mkdir(parents=True, exist_ok=True)
    files = TLSFiles(
        cafile=directory / "ca.pem",
        certfile=directory / "server.pem",
        keyfile=directory / "server.key",
        ca_keyfile=directory / "ca.key",
    )
    if _still_valid(files, directory):
        return files
    san = ", ".join([*(f"DNS:{d}" for d in dns_names), *(f"IP:{ip}" for ip in ip_addresses)])
    config = directory / "openssl.cnf"
    config.write_text(_OPENSSL_CONFIG.format(san=san))
    csr = directory / "server.csr"
    d = str(directory)
    _openssl(
        "req",
        "-x509",
        "-config",
        str(config),
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        str(files.ca_keyfile),
        "-out",
        str(files.cafile),
        "-days",
        str(days + 1),
        cwd=directory,
    )
    _openssl(
        "req",
        "-new",
        "-config",
        str(config),
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        f"/CN={dns_names[0] if dns_names else ip_addresses[0]}",
        "-keyout",
        str(files.keyfile),
        "-out",
        str(csr),
        cwd=directory,
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        str(csr),
        "-CA",
        str(files.cafile),
        "-CAkey",
        str(files.ca_keyfile),
        "-set_serial",
        "0x" + secrets.token_hex(15),
        "-days",
        str(days),
        "-extfile",
        str(config),
        "-extensions",
        "server",
        "-out",
        str(files.certfile),
        cwd=directory,
    )
    csr.unlink(missing_ok=True)
    files.ca_keyfile.chmod(0o600)
    files.cafile.chmod(0o644)
    files.certfile.chmod(0o644)
    files.keyfile.chmod(0o600)
    if not _still_valid(files, directory):
        raise BrokerError(f"the certificate made in {d} does not verify against its own CA")
    return files
