"""5.1 Security layers, from the client's side: a SASL layer that ends in failure.

"When a security layer terminates (either before or after a secure tunnel is established),
the TCP connection MUST be closed by first shutting down the outgoing stream and then reading
the incoming stream until it is terminated" (5.1/1). A sasl-outcome with code 1 (auth) ends
the SASL layer without establishing it: the next thing the client does on its outgoing
stream is to shut it -- no AMQP header (that follows only "successful completion of the SASL
dialog", 5.3.3.5/1), no frame, no second sasl-init. The playing broker sends nothing more
and keeps its side open, so the client's own shutdown is what the case waits for.
"""
from __future__ import annotations

from amqpspec.case import Context, Skip, case
from amqpspec.wire.amqp10 import EmptyFrame

from ._client import QUICK, play

AUTH = 1   # sasl-code auth: authentication failed due to bad credentials (5.3.3.6)


@case("amqp10/5.1/client-closes-after-failed-sasl", role="client",
      title="after a sasl-outcome with code 1 (auth) the client sends nothing more and shuts its outgoing stream",
      clauses=("amqp10:5.1/1",))
def closes_after_failed_sasl(ctx: Context) -> None:
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    if n.first_header is None or n.first_header.protocol_id != 3:
        p.finish(0.2)
        raise Skip("the client does not use SASL (it opened with the AMQP header)")
    p.handshake(upto="sasl", outcome_code=AUTH)
    obs = p.peer.observe(QUICK * 2, reply_close=False)
    sent = [item for item in obs.received if not isinstance(item, EmptyFrame)]
    ok = obs.closed and not sent
    shown = "; ".join(getattr(i, "summary", lambda: repr(i))()[:80] for i in sent[:3])
    ctx.record(ok, expected=f"nothing after our failed outcome, the client's outgoing stream shut within {QUICK * 2:g} s",
               observed=(f"sent {shown}; " if sent else "") + obs.describe().replace("by broker", "by the client"))
    p.finish()
