"""Spec 2.1.5.3 Constructing a Pub-Sub Subscription Queue, driven by pika.

The spec's third example: a server-named exclusive queue bound to amq.topic with the pattern
"STOCK.USD.*", which "matches ... routing key values like STOCK.USD.NYSE"; a message published
to amq.topic with routing key STOCK.USD.ACME reaches it. The topic matching rules (3.1.3.3:
"* matches a single word, and # matches zero or more words") have no RFC 2119 keyword and are
checked as guidelines; amq.topic itself is a MUST once the broker implements the topic type.

amq.topic is shared by every client of the virtual host, so each case puts a random word in
front of the spec's keys and patterns ("T1a2b3c4d5e.STOCK.USD.*" for "STOCK.USD.*"): another case
publishing STOCK.USD.ACME at the same time cannot reach this case's queues.

Every publication ends with a marker message that matches every binding of the scenario:
contents through one path keep their order (4.7), so once the marker has arrived everything
published before it has been routed, and a missing message is missing, not late.
"""
from __future__ import annotations

import uuid
from typing import Any

from amqpspec.case import Context, case

from ._pika import WAIT, BrokerRefused, Client, Scenario, refused, run, shown

SECTION = "amqp091/scenario.pubsub-topic"
AMQ_TOPIC = ("amqp091:3.1.3.3/2",)
ORDER = ("amqp091:4.7/1",)
UNIQUE = ("amqp091:queue.bind/unique",)
UNCHANGED = ("amqp091:3.1.1/1", "amqp091:3.1.1/2")
TOPIC_DOC = ("The message is passed to the message queue if R matches P. ... The routing pattern follows the same "
             "rules as the routing key with the addition that * matches a single word, and # matches zero or more "
             "words. [3.1.3.3]")
END = "STOCK.USD.END"   # matches STOCK.USD.*, STOCK.# and *.USD.*: the marker closing each publication


class Keys:
    """The spec's keys and patterns behind a word unique to the case (letters and digits only)."""

    def __init__(self, sc: Scenario) -> None:
        self.word = "T" + uuid.uuid4().hex[:10]
        sc.ctx.note(f"keys and patterns are prefixed with the word {self.word!r}")

    def __call__(self, key: str) -> str:
        return f"{self.word}.{key}"

    def strip(self, key: str) -> str:
        return key.removeprefix(self.word + ".")


def _amq_topic(sc: Scenario, client: Client) -> None:
    """amq.topic must exist when the broker implements the topic type; skips when it does not."""
    ch = client.channel()
    missing = refused(lambda: client.declare_exchange(ch, "amq.topic", "topic", passive=True))
    if missing is None:
        sc.check(True, "amq.topic is pre-declared", expected="exchange.declare-ok (passive)", observed="declare-ok",
                 clauses=AMQ_TOPIC)
        return
    ch = client.channel()
    own = sc.name("topic")
    if refused(lambda: client.declare_exchange(ch, own, "topic", auto_delete=False)) is not None:
        sc.ctx.skip("the broker implements no topic exchange type (a SHOULD, checked elsewhere)")
    sc.check(False, "amq.topic is pre-declared", expected="exchange.declare-ok (passive): the broker implements "
             "the topic type", observed=f"amq.topic: {missing.observed}", clauses=AMQ_TOPIC)


def _subscription(sc: Scenario, keys: Keys, label: str, patterns: list[str]) -> tuple[Client, Any, str]:
    """Queue.Declare queue=<empty> exclusive=TRUE; Queue.Bind queue=tmp.2 TO amq.topic WHERE routing-key=P."""
    sub = sc.client(label)
    ch = sub.channel()
    try:
        queue = sub.declare_queue(ch, "", exclusive=True).queue
    except BrokerRefused as exc:  # server naming is checked by the reply-queue scenario
        sc.ctx.note(f"server-named queue refused ({exc.observed}); using a client-named exclusive queue")
        ch = sub.channel()
        queue = sub.declare_queue(ch, sc.name("sub"), exclusive=True).queue
    for p in patterns:
        sub.bind(ch, queue, "amq.topic", keys(p))
    sub.consume(ch, queue, auto_ack=True)
    return sub, ch, queue


def _publish_all(sc: Scenario, keys: Keys, routing_keys: list[str]) -> None:
    publisher = sc.client("publisher")
    ch = publisher.channel()
    sc.step("publisher sends to amq.topic (Basic.Publish exchange=amq.topic routing-key=...), then the end marker")
    for key in routing_keys + [END]:
        publisher.publish(ch, "amq.topic", keys(key), f"quote {key}".encode())


def _arrived(sub: Client, keys: Keys) -> list[str]:
    return [keys.strip(d.routing_key) for d in sub.inbox]


@case(f"{SECTION}/stock-usd", title="a subscription bound with STOCK.USD.* receives exactly the matching messages",
      clauses=AMQ_TOPIC + ORDER + ("amqp091:3.1.1/1",), timeout=12.0)
def pubsub_stock_usd(ctx: Context) -> None:
    """The 2.1.5.3 example with pika: a server-named exclusive queue bound to amq.topic with
    STOCK.USD.*; the publisher sends STOCK.USD.ACME, STOCK.EUR.ACME, STOCK.USD, STOCK.USD.NYSE.X,
    STOCK.USD.NYSE, USD.STOCK.ACME and the marker STOCK.USD.END. Passes when exactly
    STOCK.USD.ACME, STOCK.USD.NYSE and the marker arrive ("*" is one word: guideline), in that
    order (4.7), with their bodies unchanged (3.1.1)."""

    def body(sc: Scenario) -> None:
        sc.step("subscriber declares a server-named queue and binds it to amq.topic WHERE routing-key=STOCK.USD.*")
        sub_admin = sc.client("checker")
        _amq_topic(sc, sub_admin)
        keys = Keys(sc)
        sub, _, _ = _subscription(sc, keys, "subscriber", ["STOCK.USD.*"])
        _publish_all(sc, keys, ["STOCK.USD.ACME", "STOCK.EUR.ACME", "STOCK.USD", "STOCK.USD.NYSE.X", "STOCK.USD.NYSE",
                                "USD.STOCK.ACME"])
        sc.pump(lambda: END in _arrived(sub, keys), WAIT)
        got = _arrived(sub, keys)
        want = ["STOCK.USD.ACME", "STOCK.USD.NYSE", END]
        sc.check(sorted(got) == sorted(want), "STOCK.USD.* routes exactly the keys with one word after STOCK.USD",
                 expected=str(want), observed=str(got), guideline=TOPIC_DOC)
        matching = [k for k in got if k in want]
        sc.check(matching == [k for k in want if k in matching], "matching messages arrive in the order published",
                 expected=str(want), observed=str(matching), clauses=ORDER)
        altered = [d.routing_key for d in sub.inbox if d.body != f"quote {keys.strip(d.routing_key)}".encode()]
        sc.check(not altered, "bodies arrive unchanged", expected="body 'quote <routing key>' for each",
                 observed=f"changed: {altered}" if altered else "unchanged", clauses=("amqp091:3.1.1/1",))

    run(ctx, body)


@case(f"{SECTION}/two-subscriptions", title="each matching subscription gets one identical copy of a message",
      clauses=AMQ_TOPIC + UNIQUE + UNCHANGED, timeout=12.0)
def pubsub_two_subscriptions(ctx: Context) -> None:
    """Two subscription queues on amq.topic: A bound with STOCK.USD.*, B bound twice, with STOCK.#
    and *.USD.*. The publisher sends STOCK.USD.ACME (matches all three bindings), STOCK (only
    STOCK.#, "#" is zero or more words), STOCK.EUR.ACME.X (only STOCK.#), BOND.USD.X (only *.USD.*)
    and the marker. Passes when A gets STOCK.USD.ACME once, B gets it exactly once despite two
    matching bindings (queue.bind/unique, MUST), both copies are identical (3.1.1), and B gets the
    other matching keys (guideline)."""

    def body(sc: Scenario) -> None:
        _amq_topic(sc, sc.client("checker"))
        sc.step("subscriber A binds STOCK.USD.*; subscriber B binds STOCK.# and *.USD.*")
        keys = Keys(sc)
        a, _, _ = _subscription(sc, keys, "subscriber-A", ["STOCK.USD.*"])
        b, _, _ = _subscription(sc, keys, "subscriber-B", ["STOCK.#", "*.USD.*"])
        _publish_all(sc, keys, ["STOCK.USD.ACME", "STOCK", "STOCK.EUR.ACME.X", "BOND.USD.X"])
        sc.pump(lambda: END in _arrived(a, keys) and END in _arrived(b, keys), WAIT)
        got_a, got_b = _arrived(a, keys), _arrived(b, keys)
        sc.check(got_b.count("STOCK.USD.ACME") == 1, "a queue bound twice gets a message matching both bindings once",
                 expected="STOCK.USD.ACME once in B", observed=f"{got_b.count('STOCK.USD.ACME')} times: {got_b}",
                 clauses=UNIQUE)
        sc.check(sorted(got_a) == sorted(["STOCK.USD.ACME", END]), "subscription A gets its matching messages",
                 expected=str(["STOCK.USD.ACME", END]), observed=str(got_a), guideline=TOPIC_DOC)
        want_b = ["STOCK.USD.ACME", "STOCK", "STOCK.EUR.ACME.X", "BOND.USD.X", END]
        sc.check(sorted(set(got_b)) == sorted(want_b), "subscription B gets every message matching STOCK.# or *.USD.*",
                 expected=str(want_b), observed=str(got_b), guideline=TOPIC_DOC)
        copies = [d for d in a.inbox + b.inbox if keys.strip(d.routing_key) == "STOCK.USD.ACME"]
        if len(copies) >= 2:
            x, y = copies[0], copies[1]
            same = x.body == y.body and x.properties.__dict__ == y.properties.__dict__
            sc.check(same, "the copies on the two queues are identical", expected="same body and properties",
                     observed="identical" if same else f"{x.summary()} vs {y.summary()}", clauses=UNCHANGED)
        else:
            ctx.note(f"only {len(copies)} copy of STOCK.USD.ACME arrived: {shown(d.summary() for d in copies)}")

    run(ctx, body)
