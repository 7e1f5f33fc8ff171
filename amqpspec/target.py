"""The Target: where the broker is, how to reach it, and what it told us about itself."""
from __future__ import annotations

import socket
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from amqpspec.errors import UsageError
from amqpspec.secrets import SCRUBBER, Secret

DEFAULT_PORTS = {"amqp": 5672, "amqps": 5671}


@dataclass
class BrokerInfo:
    """Identity and capabilities from connection.start (and the proposals of connection.tune)."""

    product: str = ""
    version: str = ""
    platform: str = ""
    protocol: str = ""                 # "0-9-1" or "1.0"
    server_properties: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    mechanisms: list[str] = field(default_factory=list)
    locales: list[str] = field(default_factory=list)
    channel_max: int | None = None     # proposed in connection.tune
    frame_max: int | None = None
    heartbeat: int | None = None

    def identity(self) -> dict[str, str]:
        return {"product": self.product, "version": self.version, "platform": self.platform}

    def has_capability(self, name: str) -> bool:
        return bool(self.capabilities.get(name))


@dataclass
class Target:
    scheme: str
    host: str
    port: int
    vhost: str
    username: str
    password: Secret
    cafile: str | None = None
    insecure: bool = False
    broker: BrokerInfo = field(default_factory=BrokerInfo)
    credentials_given: bool = True   # the URL named a user: AMQP 1.0 then uses SASL PLAIN, else ANONYMOUS

    @classmethod
    def parse(cls, url: str, *, cafile: str | None = None, insecure: bool = False) -> "Target":
        """Parses amqp[s]://user:pass@host:port/vhost (vhost "/" when the path is empty or "/")."""
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise UsageError(f"bad broker URL: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise UsageError(f"bad broker URL: scheme must be amqp:// or amqps://, got {parts.scheme or 'none'}:// "
                             "(example: amqp://guest:guest@localhost:5672/)")
        if not parts.hostname:
            raise UsageError("bad broker URL: no host (example: amqp://guest:guest@localhost:5672/)")
        path = parts.path or ""
        vhost = "/" if path in ("", "/") else urllib.parse.unquote(path[1:])
        user = urllib.parse.unquote(parts.username) if parts.username is not None else "guest"
        password = urllib.parse.unquote(parts.password) if parts.password is not None else "guest"
        if cafile and scheme != "amqps":
            raise UsageError("--cafile needs an amqps:// URL")
        secret = Secret(password)
        if password != user:  # the user name is shown on purpose; masking it would break replay commands
            SCRUBBER.register(secret)
        return cls(scheme, parts.hostname, port or DEFAULT_PORTS[scheme], vhost, user, secret, cafile, insecure,
                   credentials_given=parts.username is not None)

    @property
    def tls(self) -> bool:
        return self.scheme == "amqps"

    def url(self) -> str:
        """The URL without the password: safe for output, reports and captures."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        vhost = "" if self.vhost == "/" else urllib.parse.quote(self.vhost, safe="")
        return f"{self.scheme}://{urllib.parse.quote(self.username, safe='')}@{host}:{self.port}/{vhost}"

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=self.cafile)
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        return ctx

    def open_socket(self, timeout: float) -> socket.socket:
        """TCP (and TLS) connection; raises OSError/ssl.SSLError for the caller to explain."""
        sock = socket.create_connection((self.host, self.port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if not self.tls:
            return sock
        try:
            return self.ssl_context().wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise

    def features(self) -> set[str]:
        """Features a case may require: the broker's capabilities plus what the suite knows."""
        feats = {name for name, on in self.broker.capabilities.items() if on}
        if self.tls:
            feats.add("tls")
        return feats
