"""Cases read by hand after no mutation made them fail: why each is right, and why the generic
mutations cannot reach it.

The list's ``why`` is classified from what the mutations did (:data:`bench.mutation.run.WHY`); it
says how a case behaved, not whether the case is sound. Each entry here is the result of reading
the case against the text it cites: the case can fail by its own text (a broker that did what it
forbids would fail it), and what that broker would have to send is something no generic mutation
of a correct broker's frames produces. A case found defective is fixed in the catalog instead,
never listed here. The report writes the entry as ``reviewed`` beside the case while it is not
shown able to fail.
"""
from __future__ import annotations

REVIEWED: dict[str, str] = {
    "amqp10/2.7.1/broker-max-frame-size-at-least-512":
        "right: fails when the broker's open announces a max-frame-size under 512 (2.7.1/6). RabbitMQ announces "
        "65536 and Proton none (4294967295); a flip changes one of the low eight bits, which never takes those "
        "under 512, and a cut before the open only stops the case (error)",
    "amqp10/2.7.4/drain-flag-from-sender":
        "right: fails when a broker flow on the link carries a drain=true the receiver never asked for. drain is "
        "the ninth field of a flow three frames before the check (two transfers came after it), past the six "
        "fields per frame the 24-mutation plan flips; `flip c2#7/8` (flow.drain false -> true), run by hand "
        "against RabbitMQ 3.10.8, made it informational (its level: a guideline). Skipped against Proton",
    "amqp10/2.7.6/last-defaults-to-first":
        "right: fails when a second link gets the 1st or 3rd message after disposition(first=2nd, no last, "
        "released), i.e. a message the broker was not asked to release; the mutations change, drop or repeat the "
        "broker's frames, and a copy of the second link's transfer is the released message itself, so none "
        "produces a delivery of another message",
    "amqp10/3.4/no-received-state-from-sender":
        "right: fails when a broker transfer or disposition (role sender) carries the received state (3.4.1/1) "
        "or a rejected state it reached on its own (3.4.3/1). Neither broker sends either state; a flip changes "
        "a value inside what is present (never the type of a state) and unset removes one, so a mutation would "
        "have to add or retype a state",
    "amqp10/3.5.8/filter-set-well-formed":
        "right: fails when the broker's source reports a filter with a key that is not a symbol or a value neither "
        "null nor described (3.5.8/1). Every mutation keeps the type of what it changes (a symbol stays a "
        "symbol, a described value stays described); only a change of type would reach it",
    "amqp10/5.3.1/broker-sasl-frame-header":
        "right: fails when the broker's SASL frames carry channel octets other than 0, an extended header "
        "(DOFF > 2), more than 512 octets, or a body that is not one sasl-frame value (5.3.1). That is the frame "
        "envelope, which every mutation keeps intact so that the stream stays framed; a flip inside a SASL body "
        "stops the handshake (error)",
    "amqp10/scenario.work-queue/accepted-not-redelivered":
        "right: fails when a task comes a second time on a worker's link (3.5.2/1) or reaches a worker attached "
        "later. The scenario's client is python-qpid-proton, which does not surface a repeated transfer frame "
        "(same delivery-id) as a second delivery (`dup c1#12`, tried: passed); a resend with a new delivery-id "
        "is what no mutation makes",
}
