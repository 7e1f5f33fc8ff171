"""Spec 3.1.3.4 The Headers Exchange Type, as a routing scenario driven by pika.

Queues bind to a headers exchange with a table of arguments; a message reaches a queue when its
'headers' property matches: x-match=all needs every other pair to match (AND), x-match=any one
of them (OR); a binding field without a value matches when the header is present at all; fields
starting with 'x-' other than x-match are ignored; the routing key is not used. None of these
sentences carries an RFC 2119 keyword: they are checked as guidelines. The pre-declared
instance is a MUST once the type is implemented -- named amq.match by 3.1.3.4 but
"amq." + type name (amq.headers) by the exchange class rule, so either name passes.

The routing is done through an exchange of type headers declared by the scenario, so that
bindings never outlive the case; every queue's publication ends with a marker that matches
every binding (4.7 keeps the order of one path), so a missing message is missing, not late.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level

from ._pika import WAIT, BrokerRefused, Client, Scenario, props, refused, run

SECTION = "amqp091/scenario.headers-routing"
PREDECLARED = ("amqp091:3.1.3.4/1", "amqp091:exchange/required-instances")
HEADERS_DOC = ("The message is passed to the queue if the headers property matches the arguments with which the "
               "queue was bound. ... 'all' implies that all the other pairs must match the headers property of a "
               "message for that message to be routed (i.e. and AND match) 'any' implies that the message should "
               "be routed if any of the fields in the headers property match one of the fields in the arguments "
               "table (i.e. an OR match) [3.1.3.4]")
PRESENCE_DOC = ("A field in the bind arguments matches a field in the message if either the field in the bind "
                "arguments has no value and a field of the same name is present in the message headers or if the "
                "field in the bind arguments has a value and a field of the same name exists in the message headers "
                "and has that same value. [3.1.3.4]")
X_FIELDS_DOC = "Any field starting with 'x-' other than 'x-match' is reserved for future use and will be ignored. [3.1.3.4]"

# binding label -> (arguments, the guideline it checks)
BINDINGS: dict[str, tuple[dict[str, Any], str]] = {
    "all": ({"x-match": "all", "format": "pdf", "type": "report"}, HEADERS_DOC),
    "any": ({"x-match": "any", "format": "pdf", "type": "report"}, HEADERS_DOC),
    "present": ({"x-match": "all", "urgent": None}, PRESENCE_DOC),
    "x-ignored": ({"x-match": "all", "format": "pdf", "x-reserved": "zzz"}, X_FIELDS_DOC),
}
# message name -> (headers, routing key: not used by the exchange)
MESSAGES: list[tuple[str, dict[str, Any] | None]] = [
    ("pdf-report", {"format": "pdf", "type": "report"}),
    ("pdf-log", {"format": "pdf", "type": "log"}),
    ("zip-report", {"format": "zip", "type": "report"}),
    ("zip", {"format": "zip"}),
    ("urgent-zip", {"format": "zip", "urgent": 1}),
    ("none", None),
    ("end", {"format": "pdf", "type": "report", "urgent": "yes"}),  # matches every binding: the marker
]
EXPECTED = {
    "all": ["pdf-report", "end"],
    "any": ["pdf-report", "pdf-log", "zip-report", "end"],
    "present": ["urgent-zip", "end"],
    "x-ignored": ["pdf-report", "pdf-log", "end"],
}


def _predeclared(sc: Scenario, client: Client) -> None:
    seen = {}
    for name in ("amq.match", "amq.headers"):
        ch = client.channel()
        refusal = refused(lambda: client.declare_exchange(ch, name, "headers", passive=True))
        seen[name] = "declare-ok" if refusal is None else refusal.observed
    sc.check(any(v == "declare-ok" for v in seen.values()),
             "a headers exchange is pre-declared (amq.match per 3.1.3.4, amq.headers per the exchange class rule)",
             expected="amq.match or amq.headers exists", clauses=PREDECLARED,
             observed=", ".join(f"{k}: {v}" for k, v in seen.items()))


@case(f"{SECTION}/match", title="a headers exchange routes by x-match all/any, presence and ignores x- fields and the key",
      clauses=PREDECLARED, timeout=12.0)
def headers_match(ctx: Context) -> None:
    """Declares a headers exchange (skips when the type is refused) and four queues bound with
    x-match=all {format: pdf, type: report}, x-match=any of the same, x-match=all {urgent: no
    value} and x-match=all {format: pdf, x-reserved: zzz}; publishes seven messages with varied
    headers (and routing keys that match nothing) ending with a marker matching every binding.
    Passes when each queue receives exactly the messages 3.1.3.4 routes to it, and amq.match or
    amq.headers exists (MUST)."""

    def body(sc: Scenario) -> None:
        admin = sc.client("admin")
        ch = admin.channel()
        exchange = sc.name("hdr")
        sc.step("declare a headers exchange for the scenario")
        try:
            admin.declare_exchange(ch, exchange, "headers", auto_delete=False)
        except BrokerRefused as exc:
            ctx.skip(f"the broker refuses the headers exchange type (a SHOULD, checked elsewhere): {exc.observed}")
        _predeclared(sc, admin)

        consumers: dict[str, Client] = {}
        for label, (arguments, _) in BINDINGS.items():
            sc.step(f"queue '{label}' binds with {arguments}")
            c = sc.client(f"queue-{label}")
            cch = c.channel()
            q = c.declare_queue(cch, sc.name(label[:3]), exclusive=True).queue
            c.bind(cch, q, exchange, routing_key=f"unused-{label}", arguments=arguments)
            c.consume(cch, q, auto_ack=True)
            consumers[label] = c

        sc.step("publisher sends messages with various headers, routing keys that match no binding, then the marker")
        pub = sc.client("publisher")
        pch = pub.channel()
        for i, (name, headers) in enumerate(MESSAGES):
            pub.publish(pch, exchange, f"key-{i}", name.encode(), properties=props(headers=headers))

        def names(c: Client) -> list[str]:
            return [d.body.decode() for d in c.inbox]

        sc.pump(lambda: all("end" in names(c) for c in consumers.values()), WAIT)
        for label, c in consumers.items():
            arguments, guideline = BINDINGS[label]
            got, want = names(c), EXPECTED[label]
            sc.check(sorted(got) == sorted(want), f"binding {label} {arguments} gets exactly its matching messages",
                     expected=str(want), observed=str(got), level=Level.SHOULD,
                     guideline=guideline)  # SHOULD is a ceiling: the quoted text's level decides when weaker

    run(ctx, body)
