"""A small model of an AMQP 1.0 broker, as seen by one client connection.

The stateful machine (``stateful10``) tells the model what it sends (``sent_*``) and feeds
it every frame the broker sends (``on_frame``, ``on_socket_closed``); the model records a
:class:`~amqpspec.fuzz.model.Violation` whenever the broker does something the spec text
forbids. No sockets here: the unit tests drive the model with hand-made frames.

What is modelled, and the rule each check stands on (transport and messaging parts):

* sessions by our channel, mapped to the broker's channel by the remote-channel of its
  answering begin; after the broker's end on its channel nothing more may come on that
  channel until it begins a new session there (END_SENT: "MAY receive frames, but cannot
  send them", 2.5.5/4); after the broker's close nothing at all (2.4.3/2);
* links by our handle, mapped to the broker's handle by the name in its answering attach;
  after the broker's detach nothing may use its handle until it attaches a link with it
  again (the detach tells us the handle "is no longer attached", 2.6.4/1);
* link credit on links we receive on: the broker may deliver up to
  ``delivery-count + link-credit`` as we last set them (2.6.7/3); one delivery more breaks
  2.6.7/9. A flow that lowers the limit cannot bind transfers already in flight (2.6.7/10):
  the higher limit stays allowed until a flow from the broker shows it took the new one;
* drain: once the broker knows drain is set it MUST use up the credit, by transfers or by
  advancing delivery-count and saying so in a flow (2.6.7/11), within the deadline;
* deliveries: delivery-ids of unsettled deliveries on a session, and delivery-tags of
  unsettled deliveries on a link, never repeat (2.6.12/2); a multi-frame delivery is not
  interleaved with another on the same link (2.6.14/3);
* messages: every message delivered from one of our nodes is one we sent to that node,
  its bare message octet for octet as we sent it (3.2/2, 3.2.4/1);
* a flow from the broker receiving on a link whose attach it answered carries the
  delivery-count it knows (2.7.4/5);
* every begin, attach, detach, end and close we send is answered within the deadline (a
  hang), and the broker never drops the socket without a close frame (2.4.3/1);
* an end, detach or close with an error after input the model holds valid is a violation
  when the condition blames the protocol handling itself (decode-error, internal-error,
  framing-error, unattached-handle, ...: a conformant implementation processes frames as
  parts 1-5 define, 0.2/1); conditions that can be policy (not-found, resource-limit-
  exceeded, unauthorized-access ...) are anomalies: counted, not findings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from amqpspec.wire.amqp10 import Decoder, spec
from amqpspec.wire.amqp10.message import BARE_SECTIONS
from amqpspec.wire.errors import DecodeError

from .model import Violation

REPLY_TIMEOUT = 5.0
SEQ = 1 << 32

C_AFTER_CLOSE = ("amqp10:2.4.3/2",)
C_SOCKET = ("amqp10:2.4.3/1",)
C_AFTER_END = ("amqp10:2.5.5/4",)
C_AFTER_DETACH = ("amqp10:2.6.4/1",)
C_CREDIT = ("amqp10:2.6.7/9", "amqp10:2.6.7/3")
C_DRAIN = ("amqp10:2.6.7/11",)
C_UNIQUE = ("amqp10:2.6.12/2",)
C_INTERLEAVE = ("amqp10:2.6.14/3",)
C_MESSAGE = ("amqp10:3.2/2", "amqp10:3.2.4/1")
C_PROCESS = ("amqp10:0.2/1",)
C_FLOW_DC = ("amqp10:2.7.4/5",)
#: violations after which the model still predicts the broker: the example goes on
SOFT = frozenset({C_FLOW_DC, C_MESSAGE})
#: error conditions that say the broker could not process well-formed input (not a policy)
PROCESSING_ERRORS = frozenset({
    "amqp:internal-error", "amqp:decode-error", "amqp:invalid-field", "amqp:connection:framing-error",
    "amqp:session:unattached-handle", "amqp:session:errant-link", "amqp:session:handle-in-use",
})


_DECODER = Decoder(spec.REGISTRY)


def sections(data: bytes) -> list[tuple[Any, bytes]]:
    """The message's sections with their exact octets; what does not decode ends the list."""
    out: list[tuple[Any, bytes]] = []
    o = 0
    while o < len(data):
        try:
            _, value, end = _DECODER.item(data, o, len(data))
        except DecodeError:
            out.append((None, data[o:]))
            break
        out.append((value, data[o:end]))
        o = end
    return out


def bare_of(data: bytes) -> bytes:
    """The bare message (3.2): the octets of properties, application-properties and body sections."""
    return b"".join(raw for value, raw in sections(data) if getattr(value, "NAME", None) in BARE_SECTIONS)


def message_id(data: bytes) -> str | None:
    """The message-id of the properties section, as text (our messages carry a string one)."""
    for value, _ in sections(data):
        if getattr(value, "NAME", None) == "properties":
            mid = getattr(value, "message_id", None)
            return None if mid is None else str(getattr(mid, "value", mid))
    return None


def seq_diff(a: int, b: int) -> int:
    """a - b in RFC-1982 serial arithmetic (sequence-no), as a signed number."""
    d = (int(a) - int(b)) % SEQ
    return d - SEQ if d >= SEQ // 2 else d


@dataclass
class Sent:
    """A message we sent: to which node, and its bare message octets."""

    msg_id: str
    node: str
    bare: bytes


@dataclass
class Pending:
    """A request the broker owes an answer to."""

    what: str            # "begin", "attach", "detach", "end", "close", "drain"
    state: str           # for signatures, e.g. "after-attach"
    deadline: float
    key: Any = None      # session channel, (channel, link name), (channel, handle)


@dataclass
class Link:
    handle: int                  # ours
    name: str
    role: str                    # "sender" (we send) or "receiver" (we receive)
    node: str
    state: str = "attaching"     # attaching, attached, detaching, detached
    remote_handle: int | None = None
    refused: bool = False        # the broker answered with a null terminus
    # we send: the broker's credit for us
    delivery_count: int = 0      # as sender: ours; as receiver: the broker's, as we know it
    credit: int = 0              # as sender: what we may still send
    # we receive: the limits we set
    limit: int | None = None     # delivery-count + link-credit of our last flow
    grace: int | None = None     # a higher limit that transfers in flight may still use
    drain: bool = False
    detach_sent: bool = False    # we sent our detach (as request or as answer)
    partial: int | None = None   # delivery-id of a multi-frame delivery in progress
    partial_data: bytearray = field(default_factory=bytearray)
    partial_first: Any = None
    unsettled_tags: dict[bytes, int] = field(default_factory=dict)   # tag -> delivery-id (incoming)


@dataclass
class Session:
    channel: int                     # ours
    state: str = "beginning"         # beginning, mapped, ending, ended
    ended_by_us: bool = False        # we sent end (so the broker's end answers it)
    remote_channel: int | None = None
    next_outgoing_id: int = 0        # transfer frames we sent
    next_delivery_id: int = 0
    next_incoming_id: int = 0
    remote_incoming_limit: int = 0   # their next-incoming-id + incoming-window, in our transfer-ids
    links: dict[int, Link] = field(default_factory=dict)        # our handle -> link
    by_remote: dict[int, int] = field(default_factory=dict)     # broker handle -> our handle
    closed_remote: set[int] = field(default_factory=set)        # broker handles it detached
    unsettled_in: dict[int, tuple[int, bytes]] = field(default_factory=dict)   # delivery-id -> (handle, tag)
    unsettled_out: dict[int, int] = field(default_factory=dict)  # delivery-id -> our handle
    next_handle: int = 0

    def link_by_name(self, name: str) -> Link | None:
        return next((lk for lk in self.links.values() if lk.name == name and lk.state == "attaching"), None)


class Model10:
    """Expected broker state for one AMQP 1.0 connection, and the violations seen so far."""

    def __init__(self) -> None:
        self.sessions: dict[int, Session] = {}
        self.by_remote: dict[int, int] = {}      # broker channel -> our channel
        self.ended_remote: set[int] = set()      # broker channels it ended (and did not begin again)
        self.sent: dict[str, Sent] = {}
        self.connection = "open"                 # open, closing (we sent close), closed
        self.closed_by_broker = False
        self.pending: list[Pending] = []
        self.violations: list[Violation] = []
        self.anomalies: list[str] = []
        self.deliveries = 0
        self.last_step = "open"

    # ------------------------------------------------------------------ helpers
    def violate(self, kind: str, state: str, clauses: tuple[str, ...], message: str, *,
                condition: str | None = None) -> Violation:
        v = Violation(kind, state, tuple(clauses), message, None, condition)
        self.violations.append(v)
        return v

    def busy(self) -> bool:
        return bool(self.pending)

    def next_deadline(self, default: float) -> float:
        return min((p.deadline for p in self.pending), default=default)

    def _owe(self, what: str, key: Any, now: float, state: str | None = None) -> None:
        self.pending.append(Pending(what, state or f"after-{what}", now + REPLY_TIMEOUT, key))

    def _settle_pending(self, what: str, key: Any) -> bool:
        for i, p in enumerate(self.pending):
            if p.what == what and p.key == key:
                del self.pending[i]
                return True
        return False

    def _drop_pending(self, pred: Any) -> None:
        self.pending = [p for p in self.pending if not pred(p)]

    def mapped(self) -> list[int]:
        return sorted(c for c, s in self.sessions.items() if s.state == "mapped")

    def links(self, role: str | None = None) -> list[tuple[int, int]]:
        """(channel, handle) of attached links of mapped sessions, of one role or all."""
        return sorted((c, h) for c, s in self.sessions.items() if s.state == "mapped"
                      for h, lk in s.links.items() if lk.state == "attached" and (role is None or lk.role == role))

    # ------------------------------------------------------------------ what we send
    def sent_begin(self, ch: int, now: float) -> None:
        self.sessions[ch] = Session(ch)
        self._owe("begin", ch, now)

    def sent_end(self, ch: int, now: float) -> None:
        s = self.sessions[ch]
        s.state = "ending"
        s.ended_by_us = True
        self._owe("end", ch, now)
        self._drop_pending(lambda p: p.what != "end" and isinstance(p.key, tuple) and p.key[0] == ch)

    def free_handle(self, ch: int) -> int:
        s = self.sessions[ch]
        used = {h for h, lk in s.links.items() if lk.state != "detached"}
        h = 0
        while h in used:
            h += 1
        return h

    def sent_attach(self, ch: int, handle: int, name: str, role: str, node: str, now: float) -> Link:
        s = self.sessions[ch]
        lk = Link(handle, name, role, node)
        s.links[handle] = lk
        self._owe("attach", (ch, name), now)
        return lk

    def sent_detach(self, ch: int, handle: int, closed: bool, now: float) -> None:
        lk = self.sessions[ch].links[handle]
        lk.state = "detaching"
        self._owe("detach", (ch, handle), now, "after-detach-closed" if closed else "after-detach")
        self._drop_pending(lambda p: p.what == "drain" and p.key == (ch, handle))

    def sent_flow(self, ch: int, handle: int, credit: int, drain: bool, now: float) -> int:
        """A flow on a link we receive on; returns the delivery-count it carries (2.7.4/5)."""
        lk = self.sessions[ch].links[handle]
        new_limit = (lk.delivery_count + credit) % SEQ
        if lk.limit is not None and seq_diff(new_limit, lk.limit) < 0:
            # transfers sent before the broker read this flow may still use the old limit (2.6.7/10)
            lk.grace = lk.limit if lk.grace is None or seq_diff(lk.limit, lk.grace) > 0 else lk.grace
        lk.limit = new_limit
        lk.drain = drain
        self._drop_pending(lambda p: p.what == "drain" and p.key == (ch, handle))
        if drain and credit > 0:
            self._owe("drain", (ch, handle), now, "after-drain")
        return lk.delivery_count

    def room_to_send(self, ch: int, handle: int) -> bool:
        """We are a correct sender: link credit and the broker's incoming window both allow one more."""
        s = self.sessions[ch]
        lk = s.links[handle]
        return lk.credit > 0 and seq_diff(s.remote_incoming_limit, s.next_outgoing_id) > 8

    def sent_transfer(self, ch: int, handle: int, msg_id: str, bare: bytes, frames: int, settled: bool) -> int:
        """A delivery of ``frames`` transfer frames; returns its delivery-id."""
        s = self.sessions[ch]
        lk = s.links[handle]
        did = s.next_delivery_id
        s.next_delivery_id = (did + 1) % SEQ
        s.next_outgoing_id = (s.next_outgoing_id + frames) % SEQ
        lk.delivery_count = (lk.delivery_count + 1) % SEQ
        lk.credit -= 1
        if not settled:
            s.unsettled_out[did] = handle
        self.sent[msg_id] = Sent(msg_id, lk.node, bare)
        return did

    def sent_disposition(self, ch: int, first: int, last: int) -> None:
        """We settled incoming deliveries first..last: their ids and tags may be used again."""
        s = self.sessions[ch]
        for did in list(s.unsettled_in):
            if seq_diff(did, first) >= 0 and seq_diff(last, did) >= 0:
                handle, tag = s.unsettled_in.pop(did)
                lk = s.links.get(handle)
                if lk is not None:
                    lk.unsettled_tags.pop(tag, None)

    def sent_close(self, now: float) -> None:
        self.connection = "closing"
        self._owe("close", 0, now)

    # ------------------------------------------------------------------ what the broker sends
    def on_frame(self, channel: int, name: str, perf: Any, payload: bytes, now: float) -> None:
        if self.connection == "closed":
            if self.closed_by_broker:
                self.violate("invariant", "after-close", C_AFTER_CLOSE,
                             f"{name} on channel {channel} after the broker's close: close MUST be the last "
                             "thing written onto a connection")
            return
        if name == "close":
            self._on_close(perf)
            return
        if name == "open":
            self.anomalies.append("a second open from the broker")
            return
        if name == "begin":
            self._on_begin(channel, perf)
            return
        if channel in self.ended_remote:
            self.violate("invariant", "after-end", C_AFTER_END,
                         f"{name} on channel {channel} after the broker ended the session on it")
            return
        ours = self.by_remote.get(channel)
        s = self.sessions.get(ours) if ours is not None else None
        if s is None:
            self.anomalies.append(f"{name} on channel {channel}, where no session of ours is mapped")
            return
        if name == "end":
            self._on_end(s, channel, perf)
        elif name == "attach":
            self._on_attach(s, perf)
        elif name == "detach":
            self._on_detach(s, perf)
        elif name == "flow":
            self._on_flow(s, perf)
        elif name == "transfer":
            self._on_transfer(s, perf, payload)
        elif name == "disposition":
            self._on_disposition(s, perf)
        else:
            self.anomalies.append(f"unexpected {name} on channel {channel}")

    def _error(self, perf: Any) -> str | None:
        err = getattr(perf, "error", None)
        cond = getattr(err, "condition", None) if err is not None else None
        return None if cond is None else str(cond)

    def _judge_error(self, where: str, cond: str, perf: Any, state: str) -> None:
        desc = str(getattr(getattr(perf, "error", None), "description", "") or "")[:160]
        if cond in PROCESSING_ERRORS:
            self.violate("wrong-code", state, C_PROCESS,
                         f"the broker {where} with {cond} ({desc!r}) after input the model holds valid",
                         condition=cond)
        else:
            self.anomalies.append(f"the broker {where} with {cond}: {desc}")

    def _on_close(self, perf: Any) -> None:
        cond = self._error(perf)
        if self.connection != "closing" and cond is not None:
            self._judge_error("closed the connection", cond, perf, self.last_step)
        elif self.connection != "closing":
            self.anomalies.append("the broker closed the connection without an error")
        self.closed_by_broker = self.connection != "closing"
        self.connection = "closed"
        self.pending.clear()

    def _on_begin(self, channel: int, perf: Any) -> None:
        rc = getattr(perf, "remote_channel", None)
        if rc is None:
            self.anomalies.append(f"the broker began a session of its own on channel {channel}")
            return
        s = self.sessions.get(int(rc))
        if s is None or s.state != "beginning":
            self.anomalies.append(f"begin on channel {channel} answers our channel {rc}, which began no session")
            return
        self.ended_remote.discard(channel)
        self.by_remote[channel] = s.channel
        s.remote_channel = channel
        s.state = "mapped"
        s.next_incoming_id = int(perf.next_outgoing_id)
        s.remote_incoming_limit = int(perf.incoming_window)  # their next-incoming-id is our first id, 0
        self._settle_pending("begin", s.channel)

    def _on_end(self, s: Session, channel: int, perf: Any) -> None:
        cond = self._error(perf)
        if s.state != "ending" and cond is not None:
            self._judge_error(f"ended session {s.channel}", cond, perf, self.last_step)
        elif s.state != "ending":
            self.anomalies.append(f"the broker ended session {s.channel} without an error")
        self._settle_pending("end", s.channel)
        self._drop_pending(lambda p: isinstance(p.key, tuple) and p.key[0] == s.channel)
        s.state = "ended"
        self.ended_remote.add(channel)
        self.by_remote.pop(channel, None)

    def _on_attach(self, s: Session, perf: Any) -> None:
        name = str(perf.name)
        lk = s.link_by_name(name)
        if lk is None:
            self.anomalies.append(f"attach for link {name!r}, which we are not attaching on session {s.channel}")
            return
        rh = int(perf.handle)
        s.by_remote[rh] = lk.handle
        s.closed_remote.discard(rh)
        lk.remote_handle = rh
        lk.state = "attached"
        terminus = perf.target if lk.role == "sender" else perf.source
        if terminus is None:
            lk.refused = True   # refused: the broker must detach at once (2.6.3/2); our detach settles it
            self.anomalies.append(f"attach of {lk.role} link to {lk.node} refused (null terminus)")
        if lk.role == "receiver":
            idc = getattr(perf, "initial_delivery_count", None)
            lk.delivery_count = int(idc) if idc is not None else 0
        self._settle_pending("attach", (s.channel, name))

    def _link_for(self, s: Session, perf: Any, name: str) -> Link | None:
        """The link a frame names by the broker's handle; a detached handle is a violation."""
        rh = getattr(perf, "handle", None)
        if rh is None:
            return None
        rh = int(rh)
        if rh in s.closed_remote:
            self.violate("invariant", "after-detach", C_AFTER_DETACH,
                         f"{name} with handle {rh} on session {s.channel} after the broker detached that handle")
            return None
        h = s.by_remote.get(rh)
        lk = s.links.get(h) if h is not None else None
        if lk is None:
            self.anomalies.append(f"{name} with handle {rh}, which the broker never attached on session {s.channel}")
        return lk

    def _on_detach(self, s: Session, perf: Any) -> None:
        lk = self._link_for(s, perf, "detach")
        if lk is None:
            return
        cond = self._error(perf)
        if lk.state != "detaching" and cond is not None and not lk.refused:
            self._judge_error(f"detached link {lk.name}", cond, perf, self.last_step)
        self._settle_pending("detach", (s.channel, lk.handle))
        self._drop_pending(lambda p: p.what == "drain" and p.key == (s.channel, lk.handle))
        lk.state = "detached"
        rh = lk.remote_handle
        if rh is not None:
            s.by_remote.pop(rh, None)
            s.closed_remote.add(rh)
        # its unsettled deliveries go back to the node (nothing more will settle them here)
        for did in [d for d, (h, _) in s.unsettled_in.items() if h == lk.handle]:
            del s.unsettled_in[did]
        lk.unsettled_tags.clear()

    def _on_flow(self, s: Session, perf: Any) -> None:
        nii = getattr(perf, "next_incoming_id", None)
        iw = getattr(perf, "incoming_window", None)
        if nii is not None and iw is not None:
            s.remote_incoming_limit = (int(nii) + int(iw)) % SEQ
        if getattr(perf, "handle", None) is None:
            return
        lk = self._link_for(s, perf, "flow")
        if lk is None or lk.state != "attached":
            return
        dc = getattr(perf, "delivery_count", None)
        credit = int(getattr(perf, "link_credit", None) or 0)
        if lk.role == "sender":
            if dc is None:
                # it answered our attach, so it knows our delivery-count: the field MUST be set (2.7.4/5)
                self.violate("invariant", "flow-to-sender", C_FLOW_DC,
                             f"flow for link {lk.name} (the broker receives) without delivery-count, after the "
                             "broker answered the link's attach")
            # the broker receives: our credit is its delivery-count + link-credit - ours (2.6.7/3)
            base = int(dc) if dc is not None else 0
            lk.credit = max(0, seq_diff((base + credit) % SEQ, lk.delivery_count))
            return
        if dc is None:
            return
        dc = int(dc)
        if seq_diff(dc, lk.delivery_count) > 0:
            lk.delivery_count = dc  # drain (or a released credit) advanced it
        theirs = (dc + credit) % SEQ
        if lk.limit is not None and theirs == lk.limit:
            lk.grace = None  # the broker works with our latest flow: older limits no longer apply
        self._check_drain(s, lk)

    def _check_drain(self, s: Session, lk: Link) -> None:
        if lk.drain and lk.limit is not None and seq_diff(lk.delivery_count, lk.limit) >= 0:
            self._settle_pending("drain", (s.channel, lk.handle))

    def _on_transfer(self, s: Session, perf: Any, payload: bytes) -> None:
        s.next_incoming_id = (s.next_incoming_id + 1) % SEQ
        lk = self._link_for(s, perf, "transfer")
        if lk is None:
            return
        if lk.role != "receiver":
            self.anomalies.append(f"transfer on link {lk.name}, on which we send")
            return
        did = getattr(perf, "delivery_id", None)
        if lk.partial is not None:
            if did is not None and int(did) != lk.partial:
                self.violate("invariant", "in-transfer", C_INTERLEAVE,
                             f"delivery {did} began on link {lk.name} while delivery {lk.partial} was still "
                             "incomplete (more=true)")
                lk.partial, lk.partial_data = None, bytearray()
            else:
                self._more(s, lk, perf, payload)
                return
        if did is None:
            self.anomalies.append(f"first transfer of a delivery on link {lk.name} without a delivery-id")
            return
        did = int(did)
        tag = bytes(getattr(perf, "delivery_tag", b"") or b"")
        # credit: this delivery is number delivery_count+1; the limit is delivery_count + credit
        allowed = lk.limit
        if lk.grace is not None and (allowed is None or seq_diff(lk.grace, allowed) > 0):
            allowed = lk.grace
        if allowed is None or seq_diff(lk.delivery_count, allowed) >= 0:
            self.violate("invariant", "in-transfer", C_CREDIT,
                         f"delivery {did} on link {lk.name} with no link-credit left (delivery-count "
                         f"{lk.delivery_count}, limit {allowed} from our flows)")
        lk.delivery_count = (lk.delivery_count + 1) % SEQ
        if lk.grace is not None and seq_diff(lk.delivery_count, lk.grace) >= 0:
            lk.grace = None
        settled = bool(getattr(perf, "settled", False))
        if not settled:
            if did in s.unsettled_in:
                self.violate("invariant", "in-transfer", C_UNIQUE,
                             f"delivery-id {did} on session {s.channel} while an earlier delivery with that id is "
                             "unsettled")
            elif tag in lk.unsettled_tags:
                self.violate("invariant", "in-transfer", C_UNIQUE,
                             f"delivery-tag {tag.hex()} on link {lk.name} while an earlier delivery with that tag is "
                             "unsettled")
        lk.partial, lk.partial_data, lk.partial_first = did, bytearray(), perf
        lk.partial_first = (did, tag, settled)
        self._more(s, lk, perf, payload)

    def _more(self, s: Session, lk: Link, perf: Any, payload: bytes) -> None:
        lk.partial_data += payload
        if getattr(perf, "settled", None):
            did, tag, _ = lk.partial_first
            lk.partial_first = (did, tag, True)
        if getattr(perf, "more", False) and not getattr(perf, "aborted", False):
            return
        did, tag, settled = lk.partial_first
        data = bytes(lk.partial_data)
        lk.partial, lk.partial_data, lk.partial_first = None, bytearray(), None
        if not settled:
            s.unsettled_in[did] = (lk.handle, tag)
            lk.unsettled_tags[tag] = did
        if getattr(perf, "aborted", False):
            return
        self.deliveries += 1
        self._check_message(lk, did, data)
        self._check_drain(s, lk)

    def _check_message(self, lk: Link, did: int, data: bytes) -> None:
        msg_id = message_id(data)
        sent = self.sent.get(msg_id) if msg_id is not None else None
        if sent is None:
            self.violate("invariant", "in-transfer", C_MESSAGE,
                         f"delivery {did} from our node {lk.node} carries a message we never sent "
                         f"(message-id {msg_id!r}, {len(data)} octets)")
            return
        if sent.node != lk.node:
            self.violate("invariant", "in-transfer", C_MESSAGE,
                         f"message {msg_id} was sent to {sent.node} but delivered from {lk.node}")
        bare = bare_of(data)
        if bare != sent.bare:
            where = next((i for i, (a, b) in enumerate(zip(bare, sent.bare)) if a != b), min(len(bare), len(sent.bare)))
            self.violate("invariant", "in-transfer", C_MESSAGE,
                         f"message {msg_id}: the bare message changed ({len(sent.bare)} octets sent, {len(bare)} "
                         f"delivered, first difference at octet {where})")

    def _on_disposition(self, s: Session, perf: Any) -> None:
        if not bool(getattr(perf, "role", False)):
            return  # the broker as sender updating deliveries it sent us: nothing to judge
        if not getattr(perf, "settled", False):
            return
        first = int(perf.first)
        last = int(perf.last) if getattr(perf, "last", None) is not None else first
        for did in list(s.unsettled_out):
            if seq_diff(did, first) >= 0 and seq_diff(last, did) >= 0:
                del s.unsettled_out[did]

    def on_socket_closed(self, how: str) -> None:
        """The TCP connection ended; without the broker's close frame first it broke 2.4.3/1."""
        if self.connection == "closed":
            return
        state = "after-close" if self.connection == "closing" else self.last_step
        self.violate("reset-without-close", state, C_SOCKET,
                     f"the broker ended the socket ({how}) without writing a close frame first")
        self.connection = "closed"
        self.pending.clear()

    # ------------------------------------------------------------------ deadlines
    def overdue(self, now: float) -> list[Violation]:
        found = []
        for p in [p for p in self.pending if p.deadline <= now]:
            self.pending.remove(p)
            if p.what == "drain":
                found.append(self.violate("invariant", p.state, C_DRAIN,
                                          f"drain set on link {p.key[1]} of session {p.key[0]}, but within "
                                          f"{REPLY_TIMEOUT:g}s the broker neither used up the credit nor advanced "
                                          "delivery-count in a flow"))
            else:
                found.append(self.violate("hang", p.state, (),
                                          f"{p.what} ({p.key}) not answered within {REPLY_TIMEOUT:g}s"))
        return found


__all__ = ["Model10", "Session", "Link", "Sent", "seq_diff", "sections", "bare_of", "message_id", "REPLY_TIMEOUT",
           "PROCESSING_ERRORS"]
