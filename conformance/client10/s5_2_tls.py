"""5.2 TLS, from the client's side: the client checks the server's certificate, and names the
host it wants.

"The TLS client MUST validate the certificate presented by the TLS server" (5.2/3): the
playing broker presents a certificate signed by a CA of its own that the client was never
given; a validating client refuses it -- during the handshake, or at the latest by closing
before it sends a single AMQP octet over the session. Sending its protocol header over it,
or keeping the session open, is accepting a server it cannot have validated.
"The TLS client peer SHOULD use the server name indication extension as described in
RFC-4366" (5.2/2): launched with a URL naming the host localhost (which resolves to the
listener's 127.0.0.1 here), the ClientHello carries the server name localhost. (A URL with
an IP address takes no SNI: RFC 6066 forbids literal addresses in it.)
Both cases use the pure TLS port convention of an amqps:// URL (5.2.1: TLS from the first
octet, "without an AMQP header"); the TLS-invoking protocol header of 5.2/1 is not played.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.clauses import Level

from ._tls import meet

NAME = "localhost"


@case("amqp10/5.2/client-validates-certificate", role="client",
      title="presented a certificate from a CA it was never given, the client refuses it and sends no AMQP octet over TLS",
      clauses=("amqp10:5.2/3",))
def validates_certificate(ctx: Context) -> None:
    met = meet(ctx, "connect")
    ok = met.refused is not None or (met.closed and not met.sent)
    ctx.record(ok, expected="the TLS handshake refused (or the session closed with nothing sent over it)",
               observed=met.describe())
    met.finish(ctx)


@case("amqp10/5.2/client-sends-sni", role="client",
      title="given the host name localhost, the client's TLS ClientHello carries server name indication 'localhost'",
      clauses=("amqp10:5.2/2",))
def sends_sni(ctx: Context) -> None:
    met = meet(ctx, "connect", hostname=NAME)
    if not met.hello:
        met.finish(ctx)
        raise Skip(f"no TLS ClientHello from the client to read ({met.describe()})")
    ctx.record(met.server_name == NAME, expected=f"SNI {NAME!r}",
               observed=f"SNI {met.server_name!r}" if met.server_name else "no SNI in the ClientHello",
               guideline="The TLS client peer SHOULD use the server name indication extension as described in "
                         "RFC-4366 [RFC4366].", level=Level.SHOULD)
    met.finish(ctx)
