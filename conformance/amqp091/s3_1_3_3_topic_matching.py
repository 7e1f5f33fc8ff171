"""Spec 3.1.3.3 The Topic Exchange Type: how routing patterns match routing keys.

A routing key is zero or more words delimited by dots; in a pattern, * matches a single word
and # matches zero or more words ("*.stock.# matches the routing keys usd.stock and
eur.stock.db but not stock.nasdaq"). The matching itself is stated without an RFC 2119
keyword (the topic type is a SHOULD), so these cases weigh as guidelines; the one MUST of the
section (3.1.3.3/1) is about what a routing key consists of, and is cited where a case uses
keys of zero or of many words. The cases bind to amq.topic (pre-declared, 3.1.3.3) and count only
their own messages (a "#" binding there also sees other cases' messages); a broker without
amq.topic skips.

Whether a routing key may hold an empty word ("a..c") is not settled by the text ("Each word
may contain the letters A-Z and a-z and digits 0-9"): that case is informational.
"""
from __future__ import annotations

from typing import Any

from amqpspec.case import Context, case
from amqpspec.clauses import Level

from ._routing import check_routes, routing_table


WORDS = ("amqp091:3.1.3.3/1",)
TOPIC = ("The topic exchange type works as follows: 1. A message queue binds to the exchange using a routing "
         "pattern, P. 2. A publisher sends the exchange a message with the routing key R. 3. The message is "
         "passed to the message queue if R matches P. [...] The routing pattern follows the same rules as the "
         "routing key with the addition that * matches a single word, and # matches zero or more words. Thus the "
         "routing pattern *.stock.# matches the routing keys usd.stock and eur.stock.db but not stock.nasdaq.")
WORD_TEXT = ("The routing key used for a topic exchange MUST consist of zero or more words delimited by dots. Each "
             "word may contain the letters A-Z and a-z and digits 0-9.")


def topic_case(ctx: Context, patterns: dict[str, str], keys: list[str], want: dict[str, list[int]]) -> None:
    """One queue per pattern (label = pattern), every key published once; checks who got what."""
    pubs: list[tuple[str, Any]] = [(k, None) for k in keys]
    got = routing_table(ctx, "topic", {label: [(pattern, None)] for label, pattern in patterns.items()}, pubs)
    check_routes(ctx, got, want, pubs, guideline=TOPIC)


@case("amqp091/3.1.3.3/spec-example", title="*.stock.# matches usd.stock and eur.stock.db but not stock.nasdaq",
      guideline=TOPIC)
def spec_example(ctx: Context) -> None:
    """Binds a queue with the pattern of the spec's example and publishes its three routing keys:
    the queue must receive usd.stock and eur.stock.db, each once, and not stock.nasdaq."""
    topic_case(ctx, {"*.stock.#": "*.stock.#"}, ["usd.stock", "eur.stock.db", "stock.nasdaq"],
               {"*.stock.#": [0, 1]})


@case("amqp091/3.1.3.3/star-matches-one-word", title="* in a pattern matches exactly one word",
      guideline=TOPIC)
def star_one_word(ctx: Context) -> None:
    """Binds queues with a.*.c, a.* and * and publishes a.b.c, a.c, a.b.b.c, x.b.c, a.bc.c, a, a.b:
    a.*.c gets a.b.c and a.bc.c; a.* gets a.c and a.b; * gets a (one word each, never zero or two)."""
    keys = ["a.b.c", "a.c", "a.b.b.c", "x.b.c", "a.bc.c", "a", "a.b"]
    topic_case(ctx, {"a.*.c": "a.*.c", "a.*": "a.*", "*": "*"}, keys,
               {"a.*.c": [0, 4], "a.*": [1, 6], "*": [5]})


@case("amqp091/3.1.3.3/hash-matches-zero-or-more-words", title="# in a pattern matches zero or more words",
      guideline=TOPIC)
def hash_zero_or_more(ctx: Context) -> None:
    """Binds queues with a.#, a.#.z and #.z and publishes a, a.b, a.b.c.d, b.a, ab, a.z, a.b.z,
    a.b.c.z, a.z.b, z. # takes zero words (a.# gets a; a.#.z gets a.z; #.z gets z), one, or
    several; whole words only (a.# does not get ab)."""
    keys = ["a", "a.b", "a.b.c.d", "b.a", "ab", "a.z", "a.b.z", "a.b.c.z", "a.z.b", "z"]
    topic_case(ctx, {"a.#": "a.#", "a.#.z": "a.#.z", "#.z": "#.z"}, keys,
               {"a.#": [0, 1, 2, 5, 6, 7, 8], "a.#.z": [5, 6, 7], "#.z": [5, 6, 7, 9]})


@case("amqp091/3.1.3.3/hash-alone-matches-every-key",
      title="the pattern # matches every routing key, including the empty key of zero words",
      clauses=WORDS)
def hash_alone(ctx: Context) -> None:
    """Binds a queue with # and publishes the keys "" (zero words), a, a.b.c and x.y: all four must
    arrive, each once."""
    topic_case(ctx, {"#": "#"}, ["", "a", "a.b.c", "x.y"], {"#": [0, 1, 2, 3]})


@case("amqp091/3.1.3.3/pattern-without-wildcards", title="a pattern without wildcards matches only the same words",
      guideline=TOPIC)
def exact_words(ctx: Context) -> None:
    """Binds a queue with a.b and publishes a.b, a.b.c, a, a.bb, x.a.b, ab: only a.b matches."""
    topic_case(ctx, {"a.b": "a.b"}, ["a.b", "a.b.c", "a", "a.bb", "x.a.b", "ab"], {"a.b": [0]})


@case("amqp091/3.1.3.3/combined-wildcards", title="*.#, #.*, *.*.# and #.# match the numbers of words they say",
      guideline=TOPIC)
def combined_wildcards(ctx: Context) -> None:
    """Binds queues with *.# and #.* (one or more words), *.*.# (two or more) and #.# (zero or
    more) and publishes a, a.b, a.b.c: *.#, #.* and #.# get all three; *.*.# gets a.b and a.b.c."""
    topic_case(ctx, {"*.#": "*.#", "#.*": "#.*", "*.*.#": "*.*.#", "#.#": "#.#"}, ["a", "a.b", "a.b.c"],
               {"*.#": [0, 1, 2], "#.*": [0, 1, 2], "*.*.#": [1, 2], "#.#": [0, 1, 2]})


@case("amqp091/3.1.3.3/many-words", title="routing keys of 40 words are matched word by word",
      clauses=WORDS)
def many_words(ctx: Context) -> None:
    """Publishes a key of 40 words (w0.w1...w39) and the key w0.w39, to queues bound with #, w0.#,
    #.w39, w0.#.w20.#.w39, *, w0.*, forty *'s and thirty-nine *'s. The long key must reach #, w0.#,
    #.w39, w0.#.w20.#.w39 and the forty *'s; w0.w39 reaches #, w0.#, #.w39 and w0.*."""
    long_key = ".".join(f"w{i}" for i in range(40))
    patterns = {"#": "#", "w0.#": "w0.#", "#.w39": "#.w39", "w0.#.w20.#.w39": "w0.#.w20.#.w39", "*": "*",
                "w0.*": "w0.*", "40 x *": ".".join(["*"] * 40), "39 x *": ".".join(["*"] * 39)}
    want = {"#": [0, 1], "w0.#": [0, 1], "#.w39": [0, 1], "w0.#.w20.#.w39": [0], "*": [], "w0.*": [1],
            "40 x *": [0], "39 x *": []}
    pubs: list[tuple[str, Any]] = [(long_key, None), ("w0.w39", None)]
    got = routing_table(ctx, "topic", {label: [(p, None)] for label, p in patterns.items()}, pubs)
    check_routes(ctx, got, want, [("<40 words>", None), ("w0.w39", None)], level=Level.SHOULD,
                 guideline=WORD_TEXT + " " + TOPIC)


@case("amqp091/3.1.3.3/empty-word", title="a routing key a..c is read as three words, the middle one empty",
      level=Level.MAY, guideline=WORD_TEXT)
def empty_word(ctx: Context) -> None:
    """Publishes a..c and a.c to queues bound with a.*.c and a.c. If a word may be empty ("may
    contain" letters and digits), a..c is three words: a.*.c gets a..c, a.c gets a.c. The text
    does not exclude the other reading (a..c is no valid key at all), so the outcome is
    informational."""
    pubs: list[tuple[str, Any]] = [("a..c", None), ("a.c", None)]
    got = routing_table(ctx, "topic", {"a.*.c": [("a.*.c", None)], "a.c": [("a.c", None)]}, pubs)
    check_routes(ctx, got, {"a.*.c": [0], "a.c": [1]}, pubs)
