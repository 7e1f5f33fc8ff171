"""The broker's management HTTP API, for the fuzz memory oracle -- only when the user names it.

The memory oracle once guessed ``http://<broker host>:15672/`` and sent the AMQP user and
password there in clear every two seconds (also for an ``amqps://`` broker), and urllib handed the
``Authorization`` header on to wherever a redirect pointed. Now the API is used only when the
user gives its URL (``--management-url``) and credentials of its own (``--management-user``, the
password from ``--management-password-file`` or ``$AMQPSPEC_MANAGEMENT_PASSWORD``; never the AMQP
URL's), and:

* a plain ``http://`` URL is refused for a TLS (``amqps://``) broker: credentials the user
  protects on the AMQP side must not travel in clear on the side channel;
* one request per reading, over :mod:`http.client`: a redirect is not followed (an error for the
  oracle: the credentials never reach a second server), the answer is bounded in size and time;
* the password is a :class:`~amqpspec.secrets.Secret` registered with the scrubber, never printed.
"""
from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER, Secret

PASSWORD_ENV = "AMQPSPEC_MANAGEMENT_PASSWORD"
NODES_PATH = "api/nodes"
MAX_ANSWER = 1 << 20          # /api/nodes of a large cluster is tens of kB; anything past this is refused
MAX_PASSWORD_FILE = 4096


class ManagementError(Exception):
    """Why one reading of the management API gave no figure (said in the oracle's description)."""


@dataclass(frozen=True)
class ManagementAPI:
    """A management API the user named: base URL (no credentials in it) and its own credentials.

    Picklable (fuzz workers may be processes): the child registers the password with its own
    scrubber in :meth:`register`."""

    url: str
    username: str
    password: Secret
    cafile: str | None = None
    insecure: bool = False

    @property
    def nodes_url(self) -> str:
        return urllib.parse.urljoin(self.url if self.url.endswith("/") else self.url + "/", NODES_PATH)

    def register(self) -> None:
        SCRUBBER.register(self.password)

    def describe(self) -> str:
        return f"management API {self.nodes_url} mem_used"


def from_options(url: str | None, username: str | None, password_file: str | None, broker_tls: bool,
                 cafile: str | None = None, insecure: bool = False) -> ManagementAPI | None:
    """The API the options name, or None when ``--management-url`` is not given; a UsageError
    (one line, exit 2) for anything unsafe or incomplete, before any connection."""
    if url is None:
        if username is not None or password_file is not None:
            raise UsageError("--management-user and --management-password-file need --management-url")
        return None
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise UsageError(f"--management-url {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise UsageError(f"--management-url {url!r}: expected http(s)://HOST:PORT/, e.g. https://broker:15671/")
    if parts.username is not None or parts.password is not None:
        raise UsageError("--management-url must not hold credentials: give --management-user and the password in "
                         f"--management-password-file or ${PASSWORD_ENV}")
    if parts.query or parts.fragment:
        raise UsageError(f"--management-url {url!r}: expected the API's base URL, without ?query or #fragment")
    if broker_tls and scheme != "https":
        raise UsageError("--management-url is plain http:// but the broker is amqps://: its management credentials "
                         "would travel in clear; use the https:// listener (RabbitMQ: port 15671)")
    if not username:
        raise UsageError("--management-url needs --management-user (the management API's own user)")
    password = _password(password_file)
    if cafile and scheme != "https":
        cafile = None  # the broker's CA file; meaningless for plain http
    api = ManagementAPI(urllib.parse.urlunsplit((scheme, parts.netloc, parts.path or "/", "", "")), username,
                        Secret(password), cafile, insecure)
    api.register()
    return api


def _password(password_file: str | None) -> str:
    if password_file is not None:
        try:
            with open(password_file, "rb") as fh:
                data = fh.read(MAX_PASSWORD_FILE + 1)
        except OSError as exc:
            raise UsageError(f"--management-password-file {password_file}: {exc.strerror or exc}") from None
        if len(data) > MAX_PASSWORD_FILE:
            raise UsageError(f"--management-password-file {password_file}: more than {MAX_PASSWORD_FILE} octets; "
                             "expected the password alone")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"--management-password-file {password_file}: not UTF-8 text") from None
        lines = text.splitlines()   # the password is the first line; a trailing newline is not part of it
        return lines[0] if lines else ""
    value = os.environ.get(PASSWORD_ENV)
    if value is None:
        raise UsageError(f"--management-url needs the password: --management-password-file FILE or ${PASSWORD_ENV} "
                         "(never on the command line, where every local user sees it)")
    return value


def mem_used(api: ManagementAPI, timeout: float = 1.0) -> int:
    """The sum of ``mem_used`` over the nodes of ``/api/nodes``: one GET, no redirect followed,
    at most :data:`MAX_ANSWER` octets read within about ``timeout`` seconds. Raises
    :class:`ManagementError` saying why there is no figure."""
    parts = urllib.parse.urlsplit(api.nodes_url)
    host, port = parts.hostname or "", parts.port
    deadline = time.monotonic() + timeout
    conn: http.client.HTTPConnection
    if parts.scheme == "https":
        ctx = ssl.create_default_context(cafile=api.cafile)
        if api.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=ctx)
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    auth = base64.b64encode(f"{api.username}:{api.password.reveal()}".encode()).decode()
    try:
        conn.request("GET", parts.path or "/", headers={"Authorization": f"Basic {auth}", "Accept": "application/json"})
        resp = conn.getresponse()
        if 300 <= resp.status < 400:
            raise ManagementError(f"HTTP {resp.status} redirect not followed (credentials go to the named URL only)")
        if resp.status != 200:
            raise ManagementError(f"HTTP {resp.status}")
        body = _read_bounded(resp, deadline)
    except ManagementError:
        raise
    except (OSError, http.client.HTTPException) as exc:
        raise ManagementError(f"{type(exc).__name__}: {exc}") from None
    finally:
        conn.close()
    return _sum_mem_used(body)


def _read_bounded(resp: http.client.HTTPResponse, deadline: float) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if time.monotonic() > deadline:
            raise ManagementError("answer not complete within the timeout")
        chunk = resp.read1(65536)
        if not chunk:
            return b"".join(chunks)
        size += len(chunk)
        if size > MAX_ANSWER:
            raise ManagementError(f"answer larger than {MAX_ANSWER} octets")
        chunks.append(chunk)


def _sum_mem_used(body: bytes) -> int:
    try:
        nodes = json.loads(body)
        if not isinstance(nodes, list):
            raise ManagementError("answer is not a list of nodes")
        total = sum(int(n.get("mem_used", 0)) for n in nodes if isinstance(n, dict))
    except (ValueError, TypeError, RecursionError, OverflowError):
        raise ManagementError("answer is not the JSON of /api/nodes") from None
    if total <= 0:
        raise ManagementError("no mem_used in the answer")
    return total


__all__ = ["ManagementAPI", "ManagementError", "PASSWORD_ENV", "from_options", "mem_used"]
