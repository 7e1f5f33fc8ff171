"""0.2 Conformance, from the client's side: a client can reach a server that follows the
security recommendations.

Servers are "strongly RECOMMENDED to implement sasl and to support commonly used SASL
mechanisms", "In particular such implementations SHOULD support the PLAIN [RFC4616] and
SCRAM-SHA1 [RFC5802] mechanisms" (0.2/17, 0.2/18); and "Conformant implementations acting in
the TCP client role SHOULD be capable of being configured to connect to an implementation in
the TCP server role that is following the recommendations above" (0.2/19). PLAIN alone is
the case 5.3.2/client-chooses-offered-mechanism; here the playing broker offers SCRAM-SHA-1
alone (IANA's name for RFC 5802's SCRAM with SHA-1), and plays the server side of RFC 5802
with the password the driver was given: the client must carry the exchange through (a
client-final whose proof verifies), after which the opening goes on as usual. A client that
declines (closes, or names another mechanism) is not able to reach such a server.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import os
from typing import Any

from amqpspec.case import Context, Skip, case
from amqpspec.client.session import client_target
from amqpspec.clauses import Level
from amqpspec.wire.amqp10 import ProtocolHeader, SASLFrame, Symbol, frame, spec

from ._client import QUICK, play

MECHANISM = "SCRAM-SHA-1"
ITERATIONS = 4096
GUIDELINE = ("Conformant implementations acting in the TCP client role SHOULD be capable of being configured to "
             "connect to an implementation in the TCP server role that is following the recommendations above.")


def _next_sasl(p: Any, name: str) -> SASLFrame | None:
    obs = p.peer.observe(QUICK * 1.5, reply_close=False, stop=lambda f: isinstance(f, SASLFrame))
    got = [f for f in obs.received if isinstance(f, SASLFrame)]
    return got[0] if got else None   # the caller checks it is the ``name`` it waits for


def _attrs(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split(",") if "=" in kv)


def _scram(p: Any, password: str) -> tuple[bool, str]:
    """Plays RFC 5802's server side after our mechanisms; returns whether the client's proof
    verified, and what happened."""
    init = _next_sasl(p, "sasl-init")
    if init is None:
        return False, "no sasl-init (the client closed or stayed silent)"
    mechanism = str(getattr(init.body, "mechanism", ""))
    if getattr(init.body, "NAME", "") != "sasl-init" or mechanism != MECHANISM:
        return False, f"{init.summary()[:100]} instead of a sasl-init naming {MECHANISM}"
    first = bytes(init.body.initial_response or b"").decode("utf-8", "replace")
    parts = first.split(",", 2)   # gs2 header (two fields), then client-first-message-bare
    bare = parts[2] if len(parts) == 3 else ""
    client_nonce = _attrs(bare).get("r", "")
    if not client_nonce:
        return False, f"a client-first message without a nonce ({len(first)} octets)"
    salt = os.urandom(16)
    server_first = f"r={client_nonce}{base64.b64encode(os.urandom(18)).decode()}," \
                   f"s={base64.b64encode(salt).decode()},i={ITERATIONS}"
    p.peer.send(frame(spec.SaslChallenge(challenge=server_first.encode())))
    reply = _next_sasl(p, "sasl-response")
    if reply is None or getattr(reply.body, "NAME", "") != "sasl-response":
        return False, "no sasl-response to our server-first challenge" + (f" ({reply.summary()[:80]})" if reply else "")
    final = bytes(reply.body.response or b"").decode("utf-8", "replace")
    without_proof, _, proof = final.rpartition(",p=")
    salted = hashlib.pbkdf2_hmac("sha1", password.encode(), salt, ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", "sha1").digest()
    auth = f"{bare},{server_first},{without_proof}".encode()
    signature = hmac.new(hashlib.sha1(client_key).digest(), auth, "sha1").digest()
    expected = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()
    if not hmac.compare_digest(proof, expected):
        p.peer.send(frame(spec.SaslOutcome(code=1)))
        return False, "a client-final message whose proof does not verify"
    server_signature = hmac.new(hmac.new(salted, b"Server Key", "sha1").digest(), auth, "sha1").digest()
    p.peer.send(frame(spec.SaslOutcome(code=0, additional_data=b"v=" + base64.b64encode(server_signature))))
    return True, f"{MECHANISM} carried through: client-first, client-final with a proof that verifies"


@case("amqp10/0.2/client-authenticates-with-scram-sha-1", role="client",
      title="offered only SCRAM-SHA-1 (one of the two mechanisms servers are asked to support), the client authenticates with it",
      clauses=("amqp10:0.2/19",))
def scram_sha_1(ctx: Context) -> None:
    target = client_target(ctx)
    if target.serve_mode:
        raise Skip("the proof is checked against the password the driver is given: run with amqpspec client --driver")
    p = play(ctx, "connect")
    n = p.handshake(upto="header")
    if n.first_header is None or n.first_header.protocol_id != 3:
        p.finish(0.2)
        raise Skip("the client does not use SASL (it opened with the AMQP header)")
    p.peer.send(ProtocolHeader.sasl(), frame(spec.SaslMechanisms(sasl_server_mechanisms=[Symbol(MECHANISM)])))
    ok, what = _scram(p, target.password.reveal())
    ctx.record(ok, expected=f"a {MECHANISM} exchange whose client proof verifies", observed=what,
               guideline=GUIDELINE, level=Level.SHOULD)
    if ok:
        p.peer.reader.expect_header()   # its AMQP header follows (5.3.2); the opening resumes from there
        p.peer.stage = "sasl"
        p.peer.negotiated.mechanism = MECHANISM
        p.handshake()
        p.serve()
    p.finish()
