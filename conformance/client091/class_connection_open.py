"""connection.open: the virtual host the client opens is the one its URL names.

connection.open virtual-host: "The name of the virtual host to work with." The client is
given an amqp:// URL whose path is the virtual host, percent-encoded as a path segment (the
default virtual host "/" is written %2F); the connection.open it sends names that host,
decoded. (In the serve mode the client brings its own URL: the case is skipped.)
"""
from __future__ import annotations

from urllib.parse import quote

from amqpspec.case import Context, Skip, case
from amqpspec.client.session import client_target

from ._client import open_conversation

VIRTUAL_HOST = "The name of the virtual host to work with."


@case("amqp091/connection.open/client-opens-url-virtual-host", role="client",
      title="the client's connection.open names the virtual host of its URL, decoded (%2F is /)",
      guideline=VIRTUAL_HOST)
def opens_url_virtual_host(ctx: Context) -> None:
    target = client_target(ctx)
    if target.serve_mode:
        raise Skip("the client connects with a URL of its own: the virtual host it was given is unknown")
    p = open_conversation(ctx, "connect")
    opened = p.peer.negotiated.open
    vhost = str(opened.virtual_host) if opened is not None else None
    ctx.record(vhost == target.vhost, guideline=VIRTUAL_HOST,
               expected=f"virtual-host {target.vhost!r} (the URL's path segment {quote(target.vhost, safe='')!r})",
               observed=f"virtual-host {vhost!r}")
    p.serve()
    p.finish()
