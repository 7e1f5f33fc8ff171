"""Messages (messaging 3.2): sections encoded back to back, the payload of transfer frames.

An annotated message is: header, delivery-annotations, message-annotations, then the bare
message -- properties, application-properties, the body (one or more ``data``, one or more
``amqp-sequence``, or exactly one ``amqp-value``) -- then footer. Every section is optional
here; the order is the order of the section types in the XML, which is the spec's order.

:meth:`Message.encode` writes the sections in that order, or in any ``order`` given (names may
repeat: a duplicated section), and :func:`encode_sections` writes any list of values, so a
case can send a message the spec forbids. :meth:`Message.decode` accepts whatever arrives,
keeps the sections as received (``received``) and lists what is wrong in ``problems``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from amqpspec.wire.errors import DecodeError, EncodeError
from amqpspec.wire.amqp10 import spec
from amqpspec.wire.amqp10.composite import DescribedBase, Restricted, kind_of, show
from amqpspec.wire.amqp10.types import Decoder, encode as encode_value

SECTION_ORDER: tuple[str, ...] = tuple(cls.NAME for cls in spec.SECTIONS)
SECTION_CLASSES: dict[str, type] = {cls.NAME: cls for cls in spec.SECTIONS}
# The body ("application-data", 3.2) and which of its sections may repeat: prose of 3.2.
BODY_SECTIONS = ("data", "amqp-sequence", "amqp-value")
REPEATABLE = ("data", "amqp-sequence")
BARE_SECTIONS = ("properties", "application-properties") + BODY_SECTIONS
_ATTR = {name: name.replace("-", "_") for name in SECTION_ORDER if name not in BODY_SECTIONS}
_DECODER = Decoder(spec.REGISTRY)


def _section(name: str, value: Any) -> Any:
    """A section object from a section or, for the map sections, a plain dict."""
    if value is None or isinstance(value, DescribedBase):
        return value
    cls = SECTION_CLASSES[name]
    if issubclass(cls, Restricted):
        return cls(value)
    if isinstance(value, dict):
        return cls(**{k.replace("-", "_"): v for k, v in value.items()})
    return value  # anything else is sent as given (a wrong section on purpose)


def body_sections(body: Any) -> list[Any]:
    """The body as a list of sections: ``bytes`` -> data, a list of sections as is, other -> amqp-value."""
    if body is None:
        return []
    if isinstance(body, (spec.Data, spec.AmqpSequence, spec.AmqpValue)):
        return [body]
    if isinstance(body, (list, tuple)) and body and all(isinstance(s, DescribedBase) for s in body):
        return list(body)
    if isinstance(body, (bytes, bytearray, memoryview)):
        return [spec.Data(bytes(body))]
    return [spec.AmqpValue(body)]


@dataclass(eq=False)
class Message:
    header: Any = None
    delivery_annotations: Any = None
    message_annotations: Any = None
    properties: Any = None
    application_properties: Any = None
    body: Any = None
    footer: Any = None
    problems: list[str] = field(default_factory=list)
    received: list[Any] | None = None  # the sections as decoded, in their order

    # -- building ------------------------------------------------------------------------
    def sections(self) -> list[Any]:
        """The sections present, in the spec's order."""
        out: list[Any] = []
        for name in SECTION_ORDER:
            if name in BODY_SECTIONS:
                if name == BODY_SECTIONS[0]:
                    out += body_sections(self.body)
                continue
            value = _section(name, getattr(self, _ATTR[name]))
            if value is not None:
                out.append(value)
        return out

    def encode(self, order: Iterable[str] | None = None) -> bytes:
        """The sections back to back; ``order`` lists section names to write instead (repeats allowed)."""
        if order is None:
            return encode_sections(self.sections())
        present: dict[str, list[Any]] = {}
        for s in self.sections():
            present.setdefault(getattr(s, "NAME", ""), []).append(s)
        picked: list[Any] = []
        used: dict[str, int] = {}
        for name in order:
            have = present.get(name)
            if not have:
                raise EncodeError(f"message has no {name} section to write (it has: {', '.join(present) or 'none'})")
            i = used.get(name, 0)
            picked.append(have[min(i, len(have) - 1)])
            used[name] = i + 1
        return encode_sections(picked)

    def bare(self) -> bytes:
        """The bare message (3.2): properties, application-properties, body -- what a footer may sign."""
        return encode_sections([s for s in self.sections() if getattr(s, "NAME", "") in BARE_SECTIONS])

    # -- parsing -------------------------------------------------------------------------
    @classmethod
    def decode(cls, data: bytes) -> "Message":
        """Sections as received; order, duplicates and unknown values are problems, not errors.

        Octets that do not decode as a value raise :class:`DecodeError` naming the section.
        """
        buf = bytes(data)
        o = 0
        received: list[Any] = []
        while o < len(buf):
            try:
                _, value, o = _DECODER.item(buf, o, len(buf))
            except DecodeError as exc:
                raise DecodeError(f"message section #{len(received) + 1}: {exc}") from None
            received.append(value)
        return cls.from_sections(received)

    @classmethod
    def from_sections(cls, received: list[Any]) -> "Message":
        msg = cls(received=list(received))
        problems = msg.problems
        rank = -1
        body: list[Any] = []
        seen: set[str] = set()
        for i, s in enumerate(received):
            name = getattr(s, "NAME", None)
            if name not in SECTION_CLASSES:
                problems.append(f"section #{i + 1} is a {kind_of(s)}, not a message section")
                continue
            problems += [f"section #{i + 1}: {p}" for p in s.problems]
            r = SECTION_ORDER.index(name)
            if name in BODY_SECTIONS:
                kinds = {getattr(b, "NAME", "") for b in body}
                if body and (kinds != {name} or name not in REPEATABLE):
                    problems.append(f"section #{i + 1}: {name} after {', '.join(sorted(kinds))}: the body is one amqp-value,"
                                    " or data sections only, or amqp-sequence sections only")
                body.append(s)
            elif name in seen:
                problems.append(f"section #{i + 1}: a second {name} section")
                continue
            else:
                seen.add(name)
                setattr(msg, _ATTR[name], s)
            if r < rank and not (name in BODY_SECTIONS and SECTION_ORDER[rank] in BODY_SECTIONS):
                problems.append(f"section #{i + 1}: {name} after {SECTION_ORDER[rank]} (order: {', '.join(SECTION_ORDER)})")
            rank = max(rank, r)
        if not body:
            problems.append("no body section (data, amqp-sequence or amqp-value)")
        msg.body = body[0] if len(body) == 1 else (body or None)
        return msg

    # -- presentation --------------------------------------------------------------------
    def summary(self) -> str:
        sections = self.received if self.received is not None else self.sections()
        parts = [s.summary() if isinstance(s, DescribedBase) else show(s) for s in sections]
        return f"message({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Message) and self.sections() == other.sections()

    __hash__ = None  # type: ignore[assignment]


def encode_sections(sections: Iterable[Any]) -> bytes:
    """Any values back to back: sections in any order, duplicates, or things that are no section."""
    return b"".join(encode_value(s, getattr(s, "NAME", "section")) for s in sections)
