"""Spec 3.1.3.4 The Headers Exchange Type: how binding arguments match message headers.

A queue is bound with a table of header names and optional values; 'x-match' = 'all' asks for
every other pair to match (AND), 'any' for at least one (OR). A binding field without a value
matches when the message has a header of that name; with a value, when the header has that
value. Fields starting with 'x-' other than 'x-match' are "reserved for future use and will be
ignored". The routing key is not used. None of this carries an RFC 2119 keyword (the headers
type is itself a SHOULD), so the cases weigh as guidelines. The cases bind to amq.match
(pre-declared, 3.1.3.4) and count only their own messages; a broker without amq.match skips.
Values are 32-bit integers ('I') and long strings ('S'), read alike in the spec's and RabbitMQ's
field-type tables; a field "with no value" is sent as void ('V').
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case

from ._routing import check_routes, routing_table


ALL = ("'all' implies that all the other pairs must match the headers property of a message for that message to "
       "be routed (i.e. and AND match)")
ANY = ("'any' implies that the message should be routed if any of the fields in the headers property match one "
       "of the fields in the arguments table (i.e. an OR match)")
FIELD = ("A field in the bind arguments matches a field in the message if either the field in the bind arguments "
         "has no value and a field of the same name is present in the message headers or if the field in the bind "
         "arguments has a value and a field of the same name exists in the message headers and has that same value.")
X_FIELDS = "Any field starting with 'x-' other than 'x-match' is reserved for future use and will be ignored."
NO_KEY = ("A message queue is bound to the exchange with a table of arguments containing the headers to be matched "
          "for that binding and optionally the values they should hold. The routing key is not used.")


def headers_case(ctx: Context, bindings: dict[str, Any], publications: list[tuple[str, Any]],
                 want: dict[str, list[int]], routing_key: str = "") -> None:
    """One queue per label bound with its arguments table; each publication (key, headers) once."""
    got = routing_table(ctx, "headers", {label: [(routing_key, args)] for label, args in bindings.items()},
                        publications)
    check_routes(ctx, got, want, publications)


@case("amqp091/3.1.3.4/x-match-all", title="x-match all routes a message only when every bound field matches",
      guideline=ALL + " / " + FIELD)
def match_all(ctx: Context) -> None:
    """Binds with x-match=all, a=1, b="x" and publishes headers {a:1,b:x}, {a:1,b:x,c:2}, {a:1},
    {a:1,b:y}, {} and no headers property: only the first two arrive (extra headers do not matter)."""
    pubs: list[tuple[str, Any]] = [("", {"a": 1, "b": "x"}), ("", {"a": 1, "b": "x", "c": 2}), ("", {"a": 1}),
                                   ("", {"a": 1, "b": "y"}), ("", {}), ("", None)]
    headers_case(ctx, {"all a=1 b=x": {"x-match": "all", "a": 1, "b": "x"}}, pubs, {"all a=1 b=x": [0, 1]})


@case("amqp091/3.1.3.4/x-match-any", title="x-match any routes a message when at least one bound field matches",
      guideline=ANY + " " + FIELD)
def match_any(ctx: Context) -> None:
    """Binds with x-match=any, a=1, b="x" and publishes headers {a:1}, {b:x,z:1}, {a:2}, {a:2,b:y},
    {}, no headers property, and {a:1,b:x}: {a:1}, {b:x,z:1} and {a:1,b:x} arrive, each once."""
    pubs: list[tuple[str, Any]] = [("", {"a": 1}), ("", {"b": "x", "z": 1}), ("", {"a": 2}), ("", {"a": 2, "b": "y"}),
                                   ("", {}), ("", None), ("", {"a": 1, "b": "x"})]
    headers_case(ctx, {"any a=1 b=x": {"x-match": "any", "a": 1, "b": "x"}}, pubs, {"any a=1 b=x": [0, 1, 6]})


@case("amqp091/3.1.3.4/field-without-value-matches-presence",
      title="a bound field with no value (void) matches any message having a header of that name",
      guideline=FIELD)
def void_matches_presence(ctx: Context) -> None:
    """Binds one queue with x-match=all, a=<void> and another with x-match=any, a=<void>, b=<void>,
    and publishes headers {a:5}, {a:"text"}, {b:1}, {}: the first queue gets {a:5} and {a:text};
    the second gets those and {b:1}."""
    pubs: list[tuple[str, Any]] = [("", {"a": 5}), ("", {"a": "text"}), ("", {"b": 1}), ("", {})]
    headers_case(ctx, {"all a": {"x-match": "all", "a": None}, "any a b": {"x-match": "any", "a": None, "b": None}},
                 pubs, {"all a": [0, 1], "any a b": [0, 1, 2]})


@case("amqp091/3.1.3.4/x-fields-ignored-with-all",
      title="with x-match all, a bound x- field is ignored: messages without it still match",
      guideline=X_FIELDS)
def x_fields_all(ctx: Context) -> None:
    """Binds with x-match=all, a=1, x-amqpspec="v" and publishes headers {a:1}, {a:1,x-amqpspec:v},
    {x-amqpspec:v}: the first two arrive (the x- field is no condition), the third does not."""
    pubs: list[tuple[str, Any]] = [("", {"a": 1}), ("", {"a": 1, "x-amqpspec": "v"}), ("", {"x-amqpspec": "v"})]
    headers_case(ctx, {"all a=1 x-amqpspec=v": {"x-match": "all", "a": 1, "x-amqpspec": "v"}}, pubs,
                 {"all a=1 x-amqpspec=v": [0, 1]})


@case("amqp091/3.1.3.4/x-fields-ignored-with-any",
      title="with x-match any, a bound x- field is ignored: matching only it does not route",
      guideline=X_FIELDS)
def x_fields_any(ctx: Context) -> None:
    """Binds with x-match=any, a=1, x-amqpspec="v" and publishes headers {x-amqpspec:v}, {a:1},
    {x-amqpspec:other,b:2}: only {a:1} arrives (the x- field can make no match)."""
    pubs: list[tuple[str, Any]] = [("", {"x-amqpspec": "v"}), ("", {"a": 1}), ("", {"x-amqpspec": "other", "b": 2})]
    headers_case(ctx, {"any a=1 x-amqpspec=v": {"x-match": "any", "a": 1, "x-amqpspec": "v"}}, pubs,
                 {"any a=1 x-amqpspec=v": [1]})


@case("amqp091/3.1.3.4/routing-key-not-used", title="a headers exchange ignores the routing key",
      guideline=NO_KEY)
def routing_key_not_used(ctx: Context) -> None:
    """Binds with routing key "bound-key" and x-match=all, a=1, and publishes ("other-key", {a:1}),
    ("bound-key", {a:2}) and ("bound-key", no headers): only the first arrives."""
    pubs: list[tuple[str, Any]] = [("other-key", {"a": 1}), ("bound-key", {"a": 2}), ("bound-key", None)]
    got = routing_table(ctx, "headers", {"a=1": [("bound-key", {"x-match": "all", "a": 1})]}, pubs)
    check_routes(ctx, got, {"a=1": [0]}, [(f"{k} {h}", None) for k, h in pubs])
