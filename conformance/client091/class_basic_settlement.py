"""The basic class, as the client settles what it is given: basic.ack and basic.reject.

"A message MUST not be acknowledged more than once" -- in the 0-9-1 XML's words "a client
MUST not acknowledge the same message more than once" (basic.ack.multiple/exists, whose first
sentence binds the server). The ledger below follows the client's settlements in the order
they came: a single ack, reject or nack naming a delivery already settled, or a multiple one
whose named tag is already settled, settles a message twice. A message taken with no-ack is
settled when it is delivered ("If this field is set the server does not expect
acknowledgements for messages. That is, when a message is delivered to the client the server
assumes the delivery will succeed and immediately dequeues it" [domain.no-ack]): an ack for it
acknowledges it a second time.

"The client MUST NOT use this method as a means of selecting messages to process"
(basic.reject/03). The workloads here process every message they receive (the consume
workload preloaded with exactly as many messages as it asks for, the get workload fetching
each one): a client that rejects any of them turned one away while taking the others -- the
selection the rule forbids. A client that never rejects holds the rule.
"""
from __future__ import annotations

from amqpspec.case import Context, case
from amqpspec.peer.amqp091 import Observation

from ._client import open_conversation, unmet
from ._settle import no_turning_away, serve_preloaded, settled_twice

ONCE = ("amqp091:basic.ack.multiple/exists",)
NOT_SELECTING = ("amqp091:basic.reject/03",)


def _ledger(ctx: Context, p, obs: Observation, *, no_ack: bool) -> None:  # type: ignore[no-untyped-def]
    delivered = set(p.responder.delivered)
    if not delivered:
        unmet("a delivery", obs)
    taking = obs.methods("basic.consume") + obs.methods("basic.get")
    if any(bool(f.method.no_ack) != no_ack for f in taking):
        unmet(f"taking messages with no-ack={no_ack}", obs)
    acks = [(ch, f) for ch, f in p.responder.acks]
    wrong = settled_twice(acks, delivered if no_ack else set(), delivered)
    expected = ("no acknowledgement of messages taken with no-ack (they are acknowledged on delivery)" if no_ack
                else "each delivery acknowledged once: " + ", ".join(f"ch={c} tag={t}" for c, t in sorted(delivered)))
    ctx.record(not wrong, expected=expected,
               observed="acknowledged again: " + "; ".join(wrong[:4]) if wrong
               else f"{len(acks)} settlement(s), none of a message already settled")


@case("amqp091/basic.ack/client-acks-each-delivery-once", role="client",
      title="three consumed deliveries are each acknowledged once, never twice",
      clauses=ONCE)
def acks_delivery_once(ctx: Context) -> None:
    serve_preloaded(ctx, "consume", 3, True, lambda p, obs: _ledger(ctx, p, obs, no_ack=False))


@case("amqp091/basic.ack/client-acks-each-get-once", role="client",
      title="two messages fetched with basic.get are each acknowledged once, never twice",
      clauses=ONCE)
def acks_get_once(ctx: Context) -> None:
    serve_preloaded(ctx, "get", 2, True, lambda p, obs: _ledger(ctx, p, obs, no_ack=False))


@case("amqp091/basic.ack/client-no-ack-for-no-ack-consumer", role="client",
      title="deliveries to a no-ack consumer (already acknowledged) are not acknowledged again",
      clauses=ONCE)
def no_ack_consumer(ctx: Context) -> None:
    serve_preloaded(ctx, "consume", 2, False, lambda p, obs: _ledger(ctx, p, obs, no_ack=True))


@case("amqp091/basic.ack/client-no-ack-for-no-ack-get", role="client",
      title="messages fetched with basic.get no-ack (already acknowledged) are not acknowledged again",
      clauses=ONCE)
def no_ack_get(ctx: Context) -> None:
    serve_preloaded(ctx, "get", 2, False, lambda p, obs: _ledger(ctx, p, obs, no_ack=True))


@case("amqp091/basic.reject/client-rejects-no-consumed-message", role="client",
      title="a consumer given exactly the three messages it asks for rejects none of them",
      clauses=NOT_SELECTING)
def rejects_no_consumed(ctx: Context) -> None:
    serve_preloaded(ctx, "consume", 3, True, lambda p, obs: no_turning_away(ctx, p, obs, "basic.reject"))


@case("amqp091/basic.reject/client-rejects-no-fetched-message", role="client",
      title="two messages fetched with basic.get to be processed are not rejected",
      clauses=NOT_SELECTING)
def rejects_no_fetched(ctx: Context) -> None:
    serve_preloaded(ctx, "get", 2, True, lambda p, obs: no_turning_away(ctx, p, obs, "basic.reject"))


@case("amqp091/basic.ack/client-no-ack-for-rpc-reply", role="client",
      title="the reply of the rpc workload, consumed with no-ack, is not acknowledged again",
      clauses=ONCE)
def no_ack_rpc_reply(ctx: Context) -> None:
    p = open_conversation(ctx, "rpc", ack=False)
    obs = p.serve()
    _ledger(ctx, p, obs, no_ack=True)
    p.finish()
