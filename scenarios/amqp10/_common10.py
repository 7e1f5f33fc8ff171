"""Spec texts and small steps shared by the AMQP 1.0 scenario modules."""
from __future__ import annotations

from typing import Any

from ._proton import WAIT, Client, Received, Receiver, Scenario, ScenarioError, Sender, message

# ---------------------------------------------------------------------- clause ids
CREDIT = ("amqp10:2.6.7/9",)                        # no transfer beyond link-credit
NO_RESEND = ("amqp10:3.5.2/1",)                     # an accepted message is not sent again by the source
COPY_STATE = ("amqp10:3.5.2/1", "amqp10:3.5.2/2")   # ... which a copy link must keep state for
PROPERTIES_UNALTERED = ("amqp10:3.2.4/1",)
BARE_UNCHANGED = ("amqp10:3.2/1", "amqp10:3.2/2", "amqp10:3.2.4/1")  # body and properties as sent
PRESETTLED_TRANSFER = ("amqp10:2.7.5/9",)
REDUCED_TTL = ("amqp10:3.2.1/10",)
RELEASED_COUNT = ("amqp10:3.4.4/1",)
MODIFIED_COUNT = ("amqp10:3.4.5/3",)
DYNAMIC_ADDRESS = ("amqp10:3.5.3/2",)
REFUSAL_DETACH = ("amqp10:2.6.3/2",)

# ---------------------------------------------------------------------- spec texts without a keyword
MOVE_DOC = ("move: once successfully transferred over the link, the message will no longer be available to other "
            "links from the same node [3.5.7 Standard Distribution Mode]")
COPY_DOC = ("copy: once successfully transferred over the link, the message is still available for other links "
            "from the same node [3.5.7 Standard Distribution Mode]")
RELEASED_DOC = ("At the source the released outcome means that the message is no longer acquired by the receiver, "
                "and has been made available for (re-)delivery to the same or other targets receiving from the node. "
                "[3.4.4 Released]")
MODIFIED_DOC = ("At the source the modified outcome means that the message is no longer acquired by the receiver, "
                "and has been made available for (re-)delivery to the same or other targets receiving from the node. "
                "[3.4.5 Modified]")
TTL_DOC = ("Duration in milliseconds for which the message is to be considered \"live\". If this is set then a "
           "message expiration time will be computed based on the time of arrival at an intermediary. Messages that "
           "live longer than their expiration time will be discarded (or dead lettered). [3.2.1 header, ttl]")
DYNAMIC_DOC = ("When set to true by the receiving link endpoint, this field constitutes a request for the sending peer "
               "to dynamically create a node at the source. [3.5.3 source, dynamic]")


def tasks(sc: Scenario, n: int, what: str = "task") -> list[tuple[str, bytes]]:
    """``n`` (message-id, body) pairs unique to this run."""
    token = sc.token()
    return [(f"{what}-{i:02d}-{token}", f"{what} {i:02d} {token}".encode()) for i in range(n)]


def send_all(sc: Scenario, producer: Sender, items: list[tuple[str, bytes]], **fields: Any) -> None:
    """Sends each item unsettled and waits for the broker's outcome; anything but accepted is a
    set-up failure the spec does not decide (the node may refuse messages)."""
    for mid, body in items:
        outcome = producer.send(message(body, id=mid, **fields))
        if outcome not in ("accepted", "settled"):
            raise ScenarioError(f"[{producer.client.label}] the broker answered {outcome} to message {mid}: "
                                "the scenario needs the node to take its messages")


def check_mode(sc: Scenario, receivers: list[Receiver], wanted: str, *, unset_ok: bool) -> str | None:
    """The distribution-mode the broker put on the sources it attached. A receiver checks that the
    terminus meets its needs (2.6.3/6): a mode other than the one asked for, or (for copy) none at
    all, means the node does not offer the pattern and the scenario does not apply."""
    modes = {r.mode for r in receivers}
    stated = [m for m in modes if m is not None]
    if any(m != wanted for m in stated):
        sc.ctx.skip(f"the broker attached {receivers[0].address!r} with distribution-mode {sorted(stated)}, not the "
                    f"{wanted} this pattern needs (the receiver verifies the terminus, 2.6.3)")
    if not stated and not unset_ok:
        sc.ctx.skip(f"the broker did not confirm distribution-mode {wanted} for {receivers[0].address!r} (it left the "
                    "field unset: a node with a single distribution mode, 3.5.3); the pattern cannot be checked here")
    if not stated:
        sc.ctx.note(f"the broker left distribution-mode unset on {receivers[0].address!r} (one mode only, 3.5.3); "
                    f"the {wanted} request is taken as the node's behaviour")
    return stated[0] if stated else None


def by_id(received: list[Received]) -> dict[str, list[Received]]:
    out: dict[str, list[Received]] = {}
    for r in received:
        out.setdefault(str(r.message.id), []).append(r)
    return out


def altered(received: list[Received], sent: dict[str, bytes]) -> list[str]:
    """Deliveries whose body differs from what was sent with their message-id."""
    return [r.summary() for r in received if str(r.message.id) in sent and r.body != sent[str(r.message.id)]]


def workers(sc: Scenario, address: str, credits: list[int], *, mode: str = "move",
            labels: list[str] | None = None) -> list[Receiver]:
    """One receiving link per worker, each on its own connection, with the given credit."""
    out = []
    for i, credit in enumerate(credits):
        c: Client = sc.client(labels[i] if labels else f"worker-{i + 1}")
        out.append(c.receiver(address, mode=mode, credit=credit, timeout=WAIT))
    return out
