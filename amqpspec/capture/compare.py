"""Is the broker's answer the recorded one? Frames compared by meaning, with an explicit ignore set.

Replaying a conversation against a broker cannot expect the same octets: a broker names
itself, its build and its host in connection.start, picks its limits in connection.tune,
and invents names for server-named queues. Everything else is behaviour and must match for
a deterministic broker -- reply codes and texts, delivery tags, message counts, redelivered
flags, message contents, the order of frames on a channel.

What is ignored (and why) is data, below, shown by ``amqpspec replay --explain``:

* :data:`IGNORED_091` / :data:`IGNORED_10`: fields of the broker's frames that describe the
  broker instance, not its behaviour;
* reserved fields of 0-9-1 methods (the spec says a receiver ignores them);
* heartbeats (0-9-1 heartbeat frames, 1.0 empty frames): they depend on time only;
* *generated names* (:data:`GENERATED_091`, :data:`GENERATED_10`): a name the broker made up
  because the client asked for one (queue.declare with an empty name, basic.consume with an
  empty consumer tag, a dynamic 1.0 node). The recorded and live names are remembered as a
  pair and the recorded name is translated wherever it appears later -- in what the broker
  sends, and in what the replay sends back (see :meth:`Comparator.rewrite`).

Frames are compared per connection and per channel, in order: brokers run channels (1.0
sessions) concurrently, so the interleaving of two channels is not behaviour, the order
within one is.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from amqpspec.capture.codec import PROTOCOL_091, StreamDecoder, Unit, decode_one
from amqpspec.wire.amqp091 import frames as f091
from amqpspec.wire.amqp091.table import to_plain
from amqpspec.wire.amqp10 import frames as f10
from amqpspec.wire.amqp10 import spec as spec10
from amqpspec.wire.amqp10.composite import Composite, Restricted
from amqpspec.wire.amqp10.types import Array, Described, Float, Key, Symbol, _Int
from amqpspec.wire.errors import EncodeError

CONNECTION_LANE = -1  # protocol headers, SASL frames and undecodable octets: not on a channel

IGNORED_091: dict[str, dict[str, str]] = {
    "connection.start": {
        "server-properties": "the broker's identity (product, version, platform, cluster name, copyright), "
                             "which differs between builds and hosts",
        "mechanisms": "the SASL mechanisms enabled on the instance (configuration); a refused choice shows in "
                      "what follows",
        "locales": "the locales enabled on the instance (configuration)",
    },
    "connection.tune": {
        "channel-max": "a limit configured on the broker instance",
        "frame-max": "a limit configured on the broker instance",
        "heartbeat": "a delay configured on the broker instance",
    },
    "connection.secure": {
        "challenge": "may carry a nonce that differs every time (challenge-response mechanisms)",
    },
}

IGNORED_10: dict[str, dict[str, str]] = {
    "open": {
        "container-id": "the broker's identity (often a host name or a random id)",
        "properties": "the broker's identity (product, version, platform)",
        "max-frame-size": "a limit configured on the broker instance",
        "channel-max": "a limit configured on the broker instance",
        "idle-time-out": "a delay configured on the broker instance",
    },
    "begin": {
        "incoming-window": "a session window configured on the broker instance",
        "outgoing-window": "a session window configured on the broker instance",
        "handle-max": "a limit configured on the broker instance",
    },
    "flow": {
        "incoming-window": "the session window: the configured size less what is in flight at that moment",
        "outgoing-window": "the session window: the configured size less what is in flight at that moment",
    },
    "attach": {
        "max-message-size": "a limit configured on the broker instance",
    },
    "sasl-mechanisms": {
        "sasl-server-mechanisms": "the SASL mechanisms enabled on the instance (configuration); a refused choice "
                                  "shows in the sasl-outcome",
    },
    "sasl-challenge": {
        "challenge": "may carry a nonce that differs every time (challenge-response mechanisms)",
    },
}

# Counts that are a snapshot racing with the broker's own asynchronous work: RabbitMQ routes a
# basic.publish (which has no answer) concurrently with what the channel does next, so the
# message-count of a declare-ok right after publishes depends on timing. A difference here is
# reported as a note and the replay goes on; ``strict`` makes it a divergence.
SOFT_091: dict[str, dict[str, str]] = {
    "queue.declare-ok": {"message-count": "a queue depth that races with asynchronous routing of earlier publishes",
                         "consumer-count": "a count that races with consumers starting and stopping elsewhere"},
    "basic.get-ok": {"message-count": "a queue depth that races with asynchronous routing of earlier publishes"},
    "queue.purge-ok": {"message-count": "a queue depth that races with asynchronous routing of earlier publishes"},
    "queue.delete-ok": {"message-count": "a queue depth that races with asynchronous routing of earlier publishes"},
    "connection.close": {"reply-text": "text for people (brokers put process ids and stack traces in it): the reply "
                                       "code carries the meaning"},
    "channel.close": {"reply-text": "text for people: the reply code carries the meaning"},
}
# 1.0 field paths (ending) handled like SOFT_091
SOFT_10: dict[str, str] = {
    "error.description": "text for people (brokers put stack traces in it): the condition carries the meaning",
    "flow.next-incoming-id": "a snapshot of the session's transfer ids at the moment the broker sent the flow",
    "flow.next-outgoing-id": "a snapshot of the session's transfer ids at the moment the broker sent the flow",
    "flow.delivery-count": "a snapshot of the link's deliveries at the moment the broker sent the flow",
    "flow.link-credit": "a snapshot of the link's credit at the moment the broker sent the flow",
    "flow.available": "a snapshot of the messages waiting at the moment the broker sent the flow",
}

# answer -> (field of the answer, request, field of the request that was empty so the broker chose)
GENERATED_091: dict[str, tuple[str, str, str]] = {
    "queue.declare-ok": ("queue", "queue.declare", "queue"),
    "basic.consume-ok": ("consumer-tag", "basic.consume", "consumer-tag"),
}
# content properties whose value the broker rewrites to a name of its own (RabbitMQ's Direct
# Reply-To: the delivered reply-to names the requesting channel, different on every connection)
GENERATED_PREFIXES_091: dict[str, tuple[str, ...]] = {
    "reply-to": ("amq.rabbitmq.reply-to.",),
}
GENERATED_10 = {
    "attach": "source.address / target.address of a terminus the client asked to be dynamic (3.5.3, 3.5.4)",
}


def explain() -> list[str]:
    """The ignore set, one line each, for ``--explain`` and the docs."""
    lines = ["AMQP 0-9-1:"]
    for method, fields in IGNORED_091.items():
        lines += [f"  {method}.{name}: ignored, {why}" for name, why in fields.items()]
    for method, fields in SOFT_091.items():
        lines += [f"  {method}.{name}: compared, but a difference is a note, not a divergence (--strict: a divergence):"
                  f" {why}" for name, why in fields.items()]
    lines.append("  reserved fields of every method: ignored, the spec tells receivers to ignore them")
    lines.append("  heartbeat frames: ignored, they depend on time only")
    for answer, (fld, request, rfield) in GENERATED_091.items():
        lines.append(f"  {answer}.{fld}: a generated name when {request}.{rfield} was empty: recorded and live names "
                     "are paired, and the recorded one is translated wherever it appears later")
    for prop, prefixes in GENERATED_PREFIXES_091.items():
        lines.append(f"  content property {prop} starting with {' or '.join(prefixes)}: a generated name, paired and "
                     "translated as above")
    lines.append("AMQP 1.0:")
    for perf, fields in IGNORED_10.items():
        lines += [f"  {perf}.{name}: ignored, {why}" for name, why in fields.items()]
    lines += [f"  ...{path}: compared, but a difference is a note (--strict: a divergence): "
              f"{why}" for path, why in SOFT_10.items()]
    lines.append("  flow frames: compared in order per session and link, not against the transfers around them "
                 "(a flow reports state whenever it changes, so where it falls among transfers is timing)")
    lines.append("  empty frames: ignored, they depend on time only")
    for perf, why in GENERATED_10.items():
        lines.append(f"  {perf}: {why}: a generated name, paired and translated as above")
    lines.append("Both: settlements the broker may batch (0-9-1 publisher confirms basic.ack/basic.nack with multiple,"
                 " 1.0 dispositions over first..last) are compared as the set of deliveries settled and their outcome,"
                 " per channel, not frame by frame")
    lines.append("Both: frames are compared per connection and channel in order (channels run concurrently);"
                 " who closed the socket is compared, FIN versus RST is not (a race with unread data)")
    return lines


@dataclass
class Frame:
    """One unit of a stream placed in its lane: what gets compared."""

    conn: int
    lane: int
    index: int
    t: float
    unit: Unit

    @property
    def summary(self) -> str:
        return self.unit.summary


def is_heartbeat(protocol: str, item: Any) -> bool:
    if protocol == PROTOCOL_091:
        return isinstance(item, f091.HeartbeatFrame) and item.channel == 0 and not item.data
    return isinstance(item, f10.EmptyFrame)


def lane_of(protocol: str, item: Any) -> int:
    if item is None:
        return CONNECTION_LANE
    if protocol == PROTOCOL_091:
        return item.channel if isinstance(item, f091.Frame) else CONNECTION_LANE
    if isinstance(item, f10.AMQPFrame) and isinstance(item.performative, spec10.Flow):
        return flow_lane(item.channel, item.performative.handle)
    return item.channel if isinstance(item, (f10.AMQPFrame, f10.EmptyFrame, f10.RawFrame, f10.MalformedFrame)) \
        else CONNECTION_LANE


# A 1.0 flow reports the state of a session or link at the moment it is sent (2.6.7, 2.7.4): the
# sender of a link may send one whenever its state changes, so where a flow falls among the
# transfers of the same session is timing, not behaviour. Flows therefore get a lane of their own
# per session and link (negative numbers below CONNECTION_LANE), compared in order among
# themselves, and their counters are soft (SOFT_10).
_FLOW_LANE_TOP = CONNECTION_LANE - 1


def flow_lane(channel: int, handle: Any) -> int:
    link = 0 if handle is None else int(handle) + 1
    return _FLOW_LANE_TOP - ((int(channel) << 33) | link)


def lane_label(lane: int) -> str:
    """The lane for people: a channel (0-9-1) or session (1.0), the flows of a link, or the connection."""
    if lane >= 0:
        return f"channel {lane}"
    if lane == CONNECTION_LANE:
        return "the connection"
    key = _FLOW_LANE_TOP - lane
    channel, link = key >> 33, key & ((1 << 33) - 1)
    return f"the flows of channel {channel}" + (f" link handle {link - 1}" if link else " (session)")


def name_of(item: Any) -> str:
    if isinstance(item, f091.MethodFrame):
        return item.method.NAME
    if isinstance(item, f10.AMQPFrame):
        return str(getattr(item.performative, "NAME", "amqp frame"))
    if isinstance(item, f10.SASLFrame):
        return str(getattr(item.body, "NAME", "sasl frame"))
    if isinstance(item, (f091.ProtocolHeader, f10.ProtocolHeader)):
        return "protocol-header"
    if item is None:
        return "undecodable octets"
    return type(item).__name__


# ---------------------------------------------------------------------------- plain values

def plain(value: Any) -> Any:
    """A comparable form of a decoded value: AMQP 1.0 types stay apart (uint 1 is not ulong 1)."""
    if isinstance(value, Composite):
        out: dict[str, Any] = {"@": value.NAME}
        for f in value.FIELDS:
            out[f.name] = plain(getattr(value, f.attr))
        if value.extra:
            out["@extra"] = plain(value.extra)
        return out
    if isinstance(value, Restricted):
        return {"@": value.NAME, "value": plain(value.value)}
    if isinstance(value, Described):
        return ("described", plain(value.descriptor), plain(value.value))
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, _Int):
        return (value.TYPE, int(value))
    if isinstance(value, Symbol):
        return ("symbol", str(value))
    if isinstance(value, Float):
        return ("float", float(value))
    if isinstance(value, Key):
        return plain(value.value)
    if isinstance(value, Array):
        return ("array", value.type, plain(value.descriptor) if value.descriptor is not None else None,
                tuple(plain(v) for v in value))
    if isinstance(value, dict):
        return {"@map": tuple((plain(k), plain(v)) for k, v in value.items())}
    if isinstance(value, (list, tuple)):
        return tuple(plain(v) for v in value)
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _short(value: Any, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _diff(path: str, rec: Any, live: Any, out: list[tuple[str, str]], limit: int = 8) -> None:
    """(path, text) for each field where two plain values differ (the first ``limit``)."""
    if len(out) >= limit or rec == live:
        return
    if isinstance(rec, dict) and isinstance(live, dict) and rec.get("@") == live.get("@") and "@" in rec:
        for k in dict.fromkeys([*rec, *live]):
            if k != "@":
                _diff(f"{path}.{k}" if path else k, rec.get(k), live.get(k), out, limit)
        return
    out.append((path, f"{path or 'value'}: recorded {_short(rec)}, live {_short(live)}"))


# ---------------------------------------------------------------------------- the comparator

@dataclass
class Comparator:
    """Compares recorded and live frames of one replay; remembers generated names on the way."""

    protocol: str
    ignore: set[str] = field(default_factory=set)            # more "frame-name.field" to ignore (--ignore)
    strict: bool = False                                     # soft fields count as differences too
    soft: list[str] = field(default_factory=list)            # soft differences seen (notes)
    names: dict[str, str] = field(default_factory=dict)     # recorded generated name -> live name
    _requests: dict[tuple[int, int, str], Any] = field(default_factory=dict)
    _attaches: dict[tuple[int, str], Any] = field(default_factory=dict)

    # -- what the client sent (the replay tells us) ------------------------------------------
    def sent(self, conn: int, item: Any) -> None:
        if isinstance(item, f091.MethodFrame):
            self._requests[(conn, item.channel, item.method.NAME)] = item.method
        elif isinstance(item, f10.AMQPFrame) and isinstance(item.performative, spec10.Attach):
            self._attaches[(conn, str(item.performative.name))] = item.performative

    # -- translating recorded names ----------------------------------------------------------
    def translate(self, value: Any) -> Any:
        if not self.names:
            return value
        if isinstance(value, str):
            out = self.names.get(value)
            if out is not None:
                return type(value)(out) if isinstance(value, Symbol) else out
            for old, new in self.names.items():
                if old in value:
                    value = value.replace(old, new)
            return value
        if isinstance(value, bytes):
            for old, new in self.names.items():
                value = value.replace(old.encode(), new.encode())
            return value
        if isinstance(value, tuple):
            return tuple(self.translate(v) for v in value)
        if isinstance(value, dict):
            return {self.translate(k) if isinstance(k, str) and k != "@" and not k.startswith("@") else k:
                    self.translate(v) for k, v in value.items()}
        return value

    def rewrite(self, protocol: str, raw: bytes) -> bytes:
        """A recorded client frame with generated names replaced by the live ones.

        0-9-1 methods and content headers are decoded, changed field by field and re-encoded
        (lengths follow); other octets (bodies, 1.0 frames) are changed only where the live
        name has the recorded one's length, so no size field can go wrong.
        """
        if not self.names:
            return raw
        olds = [o.encode() for o in self.names]
        if not any(o in raw for o in olds):
            return raw
        if protocol == PROTOCOL_091:
            item = decode_one(protocol, raw, client=True)
            try:
                if isinstance(item, f091.MethodFrame):
                    changes = {f.attr: self.translate(getattr(item.method, f.attr)) for f in item.method.FIELDS
                               if f.type in ("shortstr", "longstr") and not f.secret}
                    return replace(item, method=item.method.replace(**changes)).encode()
                if isinstance(item, f091.HeaderFrame) and item.properties is not None:
                    props = item.properties
                    changes = {f.attr: self.translate(getattr(props, f.attr)) for f in props.FIELDS
                               if isinstance(getattr(props, f.attr), str)}
                    return replace(item, properties=type(props)(**{**props.values(), **changes})).encode()
            except (EncodeError, ValueError, TypeError):
                pass
        for old, new_name in self.names.items():
            if len(old) == len(new_name):
                raw = raw.replace(old.encode(), new_name.encode())
        return raw

    # -- comparing ---------------------------------------------------------------------------
    def differences(self, conn: int, rec: Unit, live: Unit) -> list[str]:
        """Why ``live`` is not the recorded answer (empty: the same, given the ignore set)."""
        r, li = rec.item, live.item
        if r is None or li is None or type(r) is not type(li):
            if r is None and li is None and self.translate(rec.raw) == live.raw:
                return []
            return [f"recorded {name_of(r)}, live {name_of(li)}"]
        if self.protocol == PROTOCOL_091:
            return self._diff_091(conn, r, li)
        return self._diff_10(conn, r, li)

    def _diff_091(self, conn: int, r: Any, li: Any) -> list[str]:
        out: list[str] = []
        if isinstance(r, f091.MethodFrame):
            if r.method.NAME != li.method.NAME or r.channel != li.channel:
                return [f"recorded ch={r.channel} {r.method.NAME}, live ch={li.channel} {li.method.NAME}"]
            if isinstance(r.method, f091.UnknownMethod):
                return [] if r.method.values() == li.method.values() else ["arguments differ"]
            ignored = set(IGNORED_091.get(r.method.NAME, {})) | self._extra(r.method.NAME)
            generated = GENERATED_091.get(r.method.NAME)
            for f in r.method.FIELDS:
                if f.reserved or f.name in ignored:
                    continue
                rv = plain(to_plain(getattr(r.method, f.attr)))
                lv = plain(to_plain(getattr(li.method, f.attr)))
                if generated and f.name == generated[0] and self._asked_091(conn, r.channel, generated) \
                        and isinstance(rv, str) and isinstance(lv, str):
                    if rv != lv:
                        self.names[rv] = lv
                    continue
                if not self.strict and f.name in SOFT_091.get(r.method.NAME, {}):
                    if self.translate(rv) != lv:
                        self.soft.append(f"ch={r.channel} {r.method.NAME}.{f.name}: recorded {_short(rv)}, live "
                                         f"{_short(lv)} ({SOFT_091[r.method.NAME][f.name]})")
                    continue
                self._d(f.name, self.translate(rv), lv, out)
            if r.trailing != li.trailing:
                out.append(f"trailing octets: recorded {len(r.trailing)}, live {len(li.trailing)}")
            return out
        if isinstance(r, f091.HeaderFrame):
            for what, rv, lv in (("channel", r.channel, li.channel), ("class-id", r.class_id, li.class_id),
                                 ("body-size", r.body_size, li.body_size), ("weight", r.weight, li.weight)):
                self._d(what, rv, lv, out)
            rprops = dict(r.properties.present()) if r.properties is not None else {}
            lprops = dict(li.properties.present()) if li.properties is not None else {}
            for name, prefixes in GENERATED_PREFIXES_091.items():
                rv, lv = rprops.get(name), lprops.get(name)
                if isinstance(rv, str) and isinstance(lv, str) and rv != lv \
                        and any(rv.startswith(p) and lv.startswith(p) for p in prefixes):
                    self.names[rv] = lv
            for name in self._extra("content-header"):
                rprops.pop(name, None)
                lprops.pop(name, None)
            rp = plain(to_plain(rprops)) if r.properties is not None else None
            lp = plain(to_plain(lprops)) if li.properties is not None else None
            self._d("properties", self.translate(rp), lp, out)
            return out
        if isinstance(r, (f091.BodyFrame, f091.HeartbeatFrame, f091.RawFrame, f091.MalformedFrame)):
            if r.channel != li.channel:
                out.append(f"channel: recorded {r.channel}, live {li.channel}")
            if self.translate(bytes(r.data)) != bytes(li.data):
                out.append(f"payload: recorded {_short(bytes(r.data))}, live {_short(bytes(li.data))}")
            if isinstance(r, (f091.RawFrame, f091.MalformedFrame)) and r.type != li.type:
                out.append(f"frame type: recorded {r.type}, live {li.type}")
            return out
        if isinstance(r, f091.ProtocolHeader):
            return [] if r.data == li.data else [f"recorded {r.summary()}, live {li.summary()}"]
        return [] if r == li else ["frames differ"]

    def _d(self, path: str, rec: Any, live: Any, out: list[str], where: str = "") -> None:
        """Differences into ``out``, or into the soft notes for text meant for people (unless strict)."""
        found: list[tuple[str, str]] = []
        _diff(path, rec, live, found)
        for p, text in found:
            why = next((w for end, w in SOFT_10.items() if p.endswith(end)), None)
            if why is not None and not self.strict:
                self.soft.append(f"{where}{text} ({why})")
            else:
                out.append(text)

    def _extra(self, frame_name: str) -> set[str]:
        prefix = frame_name + "."
        return {item[len(prefix):] for item in self.ignore if item.startswith(prefix)}

    def _asked_091(self, conn: int, channel: int, generated: tuple[str, str, str]) -> bool:
        request = self._requests.get((conn, channel, generated[1]))
        if request is None:
            return False
        attr = generated[2].replace("-", "_")
        return getattr(request, attr, None) in ("", b"")

    def _diff_10(self, conn: int, r: Any, li: Any) -> list[str]:
        out: list[str] = []
        if isinstance(r, f10.ProtocolHeader):
            return [] if r.data == li.data else [f"recorded {r.summary()}, live {li.summary()}"]
        if isinstance(r, (f10.AMQPFrame, f10.SASLFrame)):
            rb = r.performative if isinstance(r, f10.AMQPFrame) else r.body
            lb = li.performative if isinstance(li, f10.AMQPFrame) else li.body
            if r.channel != li.channel:
                out.append(f"channel: recorded {r.channel}, live {li.channel}")
            rn, ln = name_of(r), name_of(li)
            if rn != ln:
                return out + [f"recorded {rn}, live {ln}"]
            rv, lv = plain(rb), plain(lb)
            if isinstance(rv, dict) and isinstance(lv, dict):
                for name in set(IGNORED_10.get(rn, {})) | self._extra(rn):
                    rv.pop(name, None)
                    lv.pop(name, None)
                if isinstance(rb, spec10.Attach):
                    self._pair_dynamic(conn, rb, rv, lv)
            self._d(rn, self.translate(rv), lv, out, f"ch={r.channel} ")
            if isinstance(r, f10.AMQPFrame):
                rp, lp = bytes(r.payload or b""), bytes(li.payload or b"")
                if self.translate(rp) != lp:
                    out.append(f"payload: recorded {len(rp)} octets {_short(rp, 80)}, live {len(lp)} octets {_short(lp, 80)}")
            if r.extended != li.extended:
                out.append("extended header differs")
            return out
        if isinstance(r, (f10.EmptyFrame,)):
            return [] if r.channel == li.channel else [f"channel: recorded {r.channel}, live {li.channel}"]
        if isinstance(r, (f10.RawFrame, f10.MalformedFrame)):
            return [] if (r.type, r.channel, self.translate(bytes(r.data))) == (li.type, li.channel, bytes(li.data)) \
                else ["octets differ"]
        return [] if r == li else ["frames differ"]

    def _pair_dynamic(self, conn: int, rb: Any, rv: dict[str, Any], lv: dict[str, Any]) -> None:
        """Dynamic termini: the broker names the node; pair the names instead of comparing them."""
        request = self._attaches.get((conn, str(rb.name)))
        if request is None:
            return
        for end in ("source", "target"):
            asked = getattr(request, end, None)
            if not getattr(asked, "dynamic", False):
                continue
            rt, lt = rv.get(end), lv.get(end)
            if isinstance(rt, dict) and isinstance(lt, dict):
                ra, la = rt.get("address"), lt.get("address")
                if isinstance(ra, str) and isinstance(la, str) and ra != la:
                    self.names[ra] = la
                rt.pop("address", None)
                lt.pop("address", None)


def check_ignore(protocol: str, items: list[str]) -> list[str]:
    """``--ignore`` values, each ``frame-name.field`` of a frame the broker sends; a UsageError names a bad one."""
    from amqpspec.errors import UsageError
    from amqpspec.wire.amqp091 import spec as spec091

    known: dict[str, set[str]] = {"content-header": set()}
    if protocol == PROTOCOL_091:
        for method_cls in spec091.METHODS.values():
            known[method_cls.NAME] = {f.name for f in method_cls.FIELDS}
        known["content-header"] = {f.name for props in spec091.PROPERTIES.values() for f in props.FIELDS}
    else:
        for cls in (*spec10.PERFORMATIVES, *spec10.SASL_FRAMES):
            known[cls.NAME] = {f.name for f in cls.FIELDS}
    for item in items:
        frame_name, _, fld = item.rpartition(".")
        if frame_name not in known:
            raise UsageError(f"--ignore {item}: no AMQP {protocol} frame named {frame_name or item!r} "
                             "(expected FRAME.FIELD, e.g. queue.declare-ok.message-count or attach.properties)")
        if fld not in known[frame_name]:
            raise UsageError(f"--ignore {item}: {frame_name} has no field {fld!r} "
                             f"(it has: {', '.join(sorted(known[frame_name])) or 'none'})")
    return items


def units_of(protocol: str, conn: int, entries: list[dict[str, Any]], direction: str) -> list[tuple[float, Unit]]:
    """The units a connection's recorded entries of one direction decode to, each with its time.

    Entries are re-decoded as one stream (a raw send may hold several frames or half of one);
    a unit takes the time of the entry that completed it.
    """
    dec = StreamDecoder(protocol, client=direction == "send")
    out: list[tuple[float, Unit]] = []
    for e in entries:
        if e.get("dir") != direction or int(e.get("conn", 0)) != conn:
            continue
        for u in dec.feed(bytes.fromhex(e.get("hex") or "")):
            out.append((float(e.get("t", 0.0)), u))
    last_t = out[-1][0] if out else 0.0
    out += [(last_t, u) for u in dec.flush()]
    return out
