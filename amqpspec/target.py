"""The Target: where the broker is, how to reach it, and what it told us about itself."""
from __future__ import annotations

import socket
import ssl
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Mapping

from amqpspec.errors import UsageError
from amqpspec.sanitize import IDENTITY_LIMIT, cap
from amqpspec.secrets import SCRUBBER, Secret

DEFAULT_PORTS = {"amqp": 5672, "amqps": 5671}
SHORT_STRING_OCTETS = 255        # connection.open virtual-host is a short string (AMQP 0-9-1 4.2.5.3)
CREDENTIAL_OCTETS = 65535        # far beyond any real user name or token, short of megabytes echoed in errors


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

    def take_properties(self, props: Mapping[Any, Any]) -> None:
        """Keeps the server properties a broker announced, and its product, version and platform
        from them, each string capped: the identity is stored in every result record and printed
        in headers, so a 900 kB product name must not cost 900 kB a line."""
        self.server_properties = {cap(str(k)): _capped(v) for k, v in props.items()}
        self.product, self.version, self.platform = (
            cap(str(props.get(key, "") or "")) for key in ("product", "version", "platform"))

    def identity(self) -> dict[str, str]:
        return {"product": cap(self.product), "version": cap(self.version), "platform": cap(self.platform)}

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
    def parse(cls, url: str, *, cafile: str | None = None, insecure: bool = False,
              password: str | None = None) -> "Target":
        """Parses amqp[s]://user:pass@host:port/vhost (vhost "/" when the path is empty or "/").

        ``password`` is one given apart from the URL (``--password-file``, ``$AMQPSPEC_PASSWORD``),
        so that it is not on a command line every local user sees in ``ps``; a URL that carries
        a password too is refused rather than one of the two silently preferred. No error
        message echoes any part of the user information.
        """
        given_apart = password is not None
        _refuse_split_userinfo(url)
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise UsageError(f"bad broker URL: {_why_unparsable(exc)} (example: amqp://guest:guest@localhost:5672/)") from None
        scheme = parts.scheme.lower()
        if scheme not in DEFAULT_PORTS:
            raise UsageError(f"bad broker URL: scheme must be amqp:// or amqps://, got {parts.scheme or 'none'}:// "
                             "(example: amqp://guest:guest@localhost:5672/)")
        if not parts.hostname:
            raise UsageError("bad broker URL: no host (example: amqp://guest:guest@localhost:5672/)")
        path = parts.path or ""
        vhost = "/" if path in ("", "/") else urllib.parse.unquote(path[1:])
        user = urllib.parse.unquote(parts.username) if parts.username is not None else "guest"
        if password is not None and parts.password is not None:
            raise UsageError("the password is given twice: in the URL and in --password-file or $AMQPSPEC_PASSWORD; "
                             "leave it out of the URL")
        if password is None:
            password = urllib.parse.unquote(parts.password) if parts.password is not None else "guest"
        _check_length("virtual host", vhost, SHORT_STRING_OCTETS, "it travels as an AMQP short string")
        _check_length("user name", user, CREDENTIAL_OCTETS, "no broker takes one that long")
        _check_length("password", password, CREDENTIAL_OCTETS, "no broker takes one that long")
        if cafile and scheme != "amqps":
            raise UsageError("--cafile needs an amqps:// URL")
        secret = Secret(password)
        if password != user:  # the user name is shown on purpose; masking it would break replay commands
            SCRUBBER.register(secret)
        return cls(scheme, parts.hostname, port or DEFAULT_PORTS[scheme], vhost, user, secret, cafile, insecure,
                   credentials_given=parts.username is not None or given_apart)

    def url_with_password(self) -> str:
        """The URL with the password in it, percent-encoded: only for handing the target to a
        worker process of the suite, never for output (that is :meth:`url`)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        vhost = "" if self.vhost == "/" else urllib.parse.quote(self.vhost, safe="")
        userinfo = ""
        if self.credentials_given:
            userinfo = (f"{urllib.parse.quote(self.username, safe='')}:"
                        f"{urllib.parse.quote(self.password.reveal(), safe='')}@")
        return f"{self.scheme}://{userinfo}{host}:{self.port}/{vhost}"

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


def _refuse_split_userinfo(url: str) -> None:
    """An unencoded / ? # in the user information ends the authority early: urlsplit then
    reads a prefix of the password as the host or the port and the rest as the path, and an
    error about either would show it. Seen as an authority without "@" followed by text that
    has one. Nothing of the URL is echoed."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return
    rest = url.split("://", 1)[1] if "://" in url else ""
    if "@" not in parts.netloc and "@" in rest:
        raise UsageError("bad broker URL: the user name or password holds a character that must be percent-encoded "
                         "in a URL (/ ? # @ ...): encode it (/ is %2F, @ is %40), or leave the password out of the "
                         "URL and give it with --password-file FILE or $AMQPSPEC_PASSWORD")


def _why_unparsable(exc: ValueError) -> str:
    """urlsplit's complaint without the value it quotes (which may be part of a password)."""
    text = str(exc)
    if "Port" in text or "port" in text:
        return "the port must be a number from 0 to 65535"
    if "IPv6" in text:
        return "a [ or ] outside an IPv6 address in brackets"
    return "it does not parse as a URL"


def _check_length(what: str, value: str, limit: int, why: str) -> None:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise UsageError(f"the {what} is {size} octets long; at most {limit} are allowed ({why})")


def _capped(value: Any, depth: int = 0) -> Any:
    """A property value with every string in it capped (tables and arrays nest; a few levels are
    kept, deeper ones dropped: no broker announces more)."""
    if isinstance(value, str):
        return cap(value, IDENTITY_LIMIT)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value[:IDENTITY_LIMIT])
    if depth >= 4 and isinstance(value, (dict, list, tuple)):
        return None
    if isinstance(value, dict):
        return {cap(str(k)): _capped(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_capped(v, depth + 1) for v in value]
    return value
