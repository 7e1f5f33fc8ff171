"""3.2.4 Properties of the messages the client sends.

"The content-encoding MUST NOT be set when the application-data section is other than data"
(3.2.4/7); "Implementations MUST NOT use the identity encoding. Instead, implementations SHOULD
NOT set this property" (3.2.4/8, 3.2.4/9); "When using an
application-data section with a section code other than data, content-type SHOULD NOT be
set" (3.2.4/6); "Implementations SHOULD NOT use the compress encoding" (3.2.4/10) and "SHOULD NOT
specify multiple content-encoding values" (3.2.4/11) -- both allowed for messages from other
protocols, which a client's own message is not. Each message the client sends in its send workload is decoded and checked.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.wire.amqp10 import spec

from ._client import open_conversation, unmet


def _messages(ctx: Context):  # type: ignore[no-untyped-def]
    p = open_conversation(ctx, "send", count=2)
    obs = p.serve()
    got = [d for _, d in p.responder.deliveries]
    if not got:
        unmet("messages from the client", obs)
    p.finish()
    out = []
    for d in got:
        try:
            out.append(d.message())
        except Exception as exc:  # noqa: BLE001 - an undecodable message is a finding of another case
            unmet(f"a decodable message ({exc})")
    return out


def _not_data(m) -> bool:  # type: ignore[no-untyped-def]
    return m.body is not None and not isinstance(m.body, spec.Data) and not (
        isinstance(m.body, list) and all(isinstance(s, spec.Data) for s in m.body))


@case("amqp10/3.2.4/client-content-encoding", role="client",
      title="the client sets no content-encoding on a message whose body is not data, and never 'identity'",
      clauses=("amqp10:3.2.4/7", "amqp10:3.2.4/8", "amqp10:3.2.4/9"))
def content_encoding(ctx: Context) -> None:
    msgs = _messages(ctx)
    encodings = [(getattr(m.properties, "content_encoding", None), _not_data(m)) for m in msgs]
    wrong = [(e, nd) for e, nd in encodings if e is not None and (nd or str(e) == "identity")]
    ctx.record(not wrong, expected="content-encoding absent (body not data) and never identity",
               observed=f"content-encoding {[str(e) for e, _ in wrong]}" if wrong else
               f"{len(msgs)} message(s): content-encoding {[None if e is None else str(e) for e, _ in encodings]}")


@case("amqp10/3.2.4/client-content-type", role="client",
      title="the client sets no content-type on a message whose body is not data",
      clauses=("amqp10:3.2.4/6",))
def content_type(ctx: Context) -> None:
    msgs = _messages(ctx)
    wrong = [str(m.properties.content_type) for m in msgs if _not_data(m) and m.properties is not None
             and getattr(m.properties, "content_type", None) is not None]
    ctx.record(not wrong, expected="content-type absent when the body is amqp-value or amqp-sequence",
               observed=f"content-type {wrong}" if wrong else f"{len(msgs)} message(s) checked")


@case("amqp10/3.2.4/client-content-encoding-values", role="client",
      title="a content-encoding the client sets is neither compress nor a list of several encodings",
      clauses=("amqp10:3.2.4/10", "amqp10:3.2.4/11"))
def content_encoding_values(ctx: Context) -> None:
    msgs = _messages(ctx)
    values = [str(m.properties.content_encoding) for m in msgs if m.properties is not None
              and getattr(m.properties, "content_encoding", None) is not None]
    tokens = [[t.strip().lower() for t in v.split(",")] for v in values]
    wrong = [v for v, t in zip(values, tokens) if "compress" in t or len(t) > 1]
    ctx.record(not wrong, expected="no compress encoding, no list of encodings",
               observed=f"content-encoding {wrong}" if wrong else
               f"{len(msgs)} message(s), content-encoding {values or 'never set'}")
