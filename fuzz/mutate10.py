"""AMQP 1.0 stimuli as a valid frame and a short list of mutations: few choices per example.

Hypothesis' engine costs some 100 us per choice, and a stimulus drawn field by field from the
codec-derived composites makes 100-300 choices (18-38 ms of CPU per example on the link targets:
a worker could not do more than 30-60 examples a second whatever the broker did). Here an
example is a base frame built once per target (a valid performative, or one of a few other
kinds) and up to ``MAX_MUTATIONS`` mutations, each one integer packing *what* (a field made absent,
given a valid value, a value of another type, a malformed value; the whole performative
replaced; the frame header rewritten; the body cut short; another channel), *where* (which
field, which header field) and *which value*. Some 3-8 choices per frame instead of hundreds;
hypothesis still shrinks them -- toward fewer mutations, the simpler kinds, the first values
(no mutation at all is the valid base).

The values themselves still come from the codec-derived strategies (``strategies10``: every
field's types, the malformations), but through a :class:`Pool`: value ``i`` of a pool is the
first draw of its strategy from a generator seeded with ``i``, drawn the first time it is used
and kept. A stimulus is therefore a pure function of its choices (shrinking and the recorded
choices stay exact), and after the first examples a value costs a dictionary look-up. The
price is variety: each pool has ``POOL_SIZE`` values, so a field takes at most that many
distinct values of each kind in a campaign (the mutations combine them across fields, frames
and header rewrites)."""
from __future__ import annotations

import dataclasses
import random
import threading
from typing import Any, Callable, Sequence

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from amqpspec.wire.amqp10 import AMQPFrame, RawFrame, SASLFrame
from amqpspec.wire.amqp10.composite import Composite

from . import draw
from . import strategies10 as S

POOL_SIZE = 256          # distinct values per pool (the index is one choice)
MAX_MUTATIONS = 5        # per frame
OVERRIDE_MAX = 1000      # DOFF past the end needs SIZE/4 < 255: larger frames get DOFF 0 or 1 only

# What a mutation does; the index drawn is mapped through this table, so the common kinds take
# more of the range and shrinking (toward 0) ends at "valid".
VALID, ABSENT, OTHER, MALFORMED, REPLACE, HEADER, TRUNCATE, CHANNEL = range(8)
_KIND_TABLE = (VALID, VALID, VALID, VALID, ABSENT, OTHER, MALFORMED, MALFORMED, REPLACE, HEADER, HEADER, TRUNCATE,
               CHANNEL, VALID, MALFORMED, HEADER)
_HEADER_FIELDS = ("size", "doff", "type", "extended", "size+doff")


class _Kept:
    """Values by index, each made on first use and then kept."""

    def __init__(self) -> None:
        self.values: dict[int, Any] = {}
        # (performative class, field attr, index) -> whether that value can stand in that field
        self.fits: dict[tuple[type, str, int], bool] = {}

    def _make(self, i: int) -> Any:
        raise NotImplementedError

    def __getitem__(self, i: int) -> Any:
        try:
            return self.values[i]
        except KeyError:
            pass
        value = self.values[i] = self._make(i)
        return value


class Pool(_Kept):
    """``POOL_SIZE`` values of one strategy, each drawn on first use from a generator seeded by
    its index, then kept (so a value is a function of its index within the process)."""

    def __init__(self, strategy: SearchStrategy[Any]) -> None:
        super().__init__()
        self.strategy = strategy

    def _make(self, i: int) -> Any:
        try:
            return draw.Drawer(self.strategy, 0x5EED0000 + i).draw()[0]
        except draw.DrawFailed:
            return None


_POOLS: dict[int, tuple[SearchStrategy[Any], Pool]] = {}
_KEYED: dict[Any, Pool] = {}
_POOLS_LOCK = threading.Lock()


def pool(strategy: SearchStrategy[Any], key: Any = None) -> Pool:
    """The pool of ``strategy``: one per strategy object (the cached ``strategies10`` ones are
    shared by every target and slot of the process) or, with ``key``, one per key -- for a
    strategy a target builds anew each time it is asked (once per slot and campaign), whose
    pool would otherwise be filled again each time: the caller promises that one key always
    comes with the same strategy (the first one given is kept)."""
    with _POOLS_LOCK:
        if key is not None:
            got_k = _KEYED.get(key)
            if got_k is None:
                got_k = _KEYED[key] = Pool(strategy)
            return got_k
        got = _POOLS.get(id(strategy))
        if got is None or got[0] is not strategy:
            got = (strategy, Pool(strategy))
            _POOLS[id(strategy)] = got
        return got[1]


class View(_Kept):
    """A pool's values as one slot sees them: ``fn(value)``, computed once per index (``fn``
    makes the node names a shared pool was drawn with this slot's own). The pool is shared;
    the view belongs to the slot's strategy."""

    def __init__(self, pool_: "Pool | View", fn: Callable[[Any], Any]) -> None:
        super().__init__()
        self.pool = pool_
        self.fn = fn

    def _make(self, i: int) -> Any:
        return self.fn(self.pool[i])


def _as_pool(p: Any, key: Any) -> "Pool | View":
    return p if isinstance(p, (Pool, View)) else pool(p, key)


@dataclasses.dataclass
class Shape:
    """What can be done to the frames of one kind of performative.

    ``valid``: per field (by attribute name) the strategy of its valid values -- the target's
    own where it has one (the edges it is about), else the field's codec-derived values;
    ``replacements``: strategies of whole bodies that may stand in place of the performative
    (a malformed one, another performative); ``channels``: the channels a frame may be moved to."""

    cls: type
    valid: dict[str, Any]          # Pool or View
    replacements: list[Any]
    channels: Sequence[int]


def shape(cls: type, channels: Sequence[int], own: dict[str, Any] | None = None,
          replacements: Sequence[Any] = (), key: Any = None,
          view: Callable[[Any], Any] | None = None) -> Shape:
    """``own``: per field, a strategy (or a ready :class:`Pool` / :class:`View`) of the target's
    own valid values; ``replacements``: strategies (or pools) of whole bodies. With ``key``
    their pools are shared under ``(key, field)`` and ``(key, "replacement", n)`` by every
    call given that key; with ``view``, ``own`` values are seen through it (:class:`View`)."""
    own = own or {}
    valid: dict[str, Any] = {}
    for f in getattr(cls, "FIELDS", ()):
        if f.attr in own:
            p = _as_pool(own[f.attr], None if key is None else (key, f.attr))
            valid[f.attr] = p if view is None or isinstance(own[f.attr], (Pool, View)) else View(p, view)
        else:
            valid[f.attr] = pool(S.field_value(f))
    reps = [_as_pool(r, None if key is None else (key, "replacement", n)) for n, r in enumerate(replacements)]
    return Shape(cls, valid, reps, tuple(channels))


_OTHER = None
_MALFORMED = None


def _generic() -> tuple[Pool, Pool]:
    global _OTHER, _MALFORMED
    if _OTHER is None:
        _OTHER, _MALFORMED = pool(S.values(max_leaves=3)), pool(S.malformed_value())
    return _OTHER, _MALFORMED  # type: ignore[return-value]


def mutations(max_size: int = MAX_MUTATIONS) -> SearchStrategy[list[int]]:
    """A list of mutations, each one integer (one choice): kind, where and which packed, the kind
    in the high bits, so that shrinking it simplifies the kind first (see :func:`unpack`)."""
    return st.lists(st.integers(0, len(_KIND_TABLE) * 256 * POOL_SIZE - 1), max_size=max_size)


def unpack(m: int) -> tuple[int, int, int]:
    """(kind, where, which) of a packed mutation."""
    return _KIND_TABLE[m // (256 * POOL_SIZE)], (m // POOL_SIZE) % 256, m % POOL_SIZE


def apply(frame: Any, muts: Sequence[int], sh: Shape) -> Any:
    """``frame`` with each mutation applied in turn (one that does not fit the frame -- a field
    of a body that is no longer a composite -- is skipped)."""
    other, malformed = _generic()
    for m in muts:
        kind, where, which = unpack(m)
        if kind in (VALID, ABSENT, OTHER, MALFORMED):
            body = _body(frame)
            fields = getattr(body, "FIELDS", ())
            if not isinstance(body, Composite) or not fields:
                continue
            f = fields[where % len(fields)]
            source: Any = None
            if kind == VALID:
                source = sh.valid.get(f.attr)
                value = source[which] if source is not None else None
            elif kind == ABSENT:
                value = None
            else:
                source = other if kind == OTHER else malformed
                value = source[which]
            changed = _fitted(frame, body, f.attr, value, source, which)
            if changed is not None:
                frame = changed
        elif kind == REPLACE and sh.replacements:
            frame = _with_body(frame, sh.replacements[where % len(sh.replacements)][which])
        elif kind == HEADER:
            frame = _header(frame, _HEADER_FIELDS[where % len(_HEADER_FIELDS)], which)
        elif kind == TRUNCATE:
            body = frame.encode_body()
            if body:
                ftype = frame.TYPE if frame.frame_type is None else frame.frame_type
                frame = RawFrame(frame.channel, type=ftype, data=body[:which * len(body) // POOL_SIZE])
        elif kind == CHANNEL and sh.channels:
            frame = dataclasses.replace(frame, channel=sh.channels[which % len(sh.channels)])
    return frame


_ABSENT_FITS: dict[tuple[type, str, int], bool] = {}


def _fitted(frame: Any, body: Any, attr: str, value: Any, source: "_Kept | None", which: int) -> Any:
    """``frame`` with ``attr`` of its body set to ``value``, or None when the field's type cannot
    carry that value (a string retyped as a symbol...): the codec refuses to encode it.

    Whether a value fits a field does not depend on the other fields (each is coerced and
    encoded on its own), so the answer is kept per pool value, field and performative: encoding
    the whole frame to ask was a third of a warm draw. A refusal is kept only once the body
    without the new value is seen to encode (else the refusal may be the body's); a body that
    carries wire details or overrides (a malformed replacement) is always asked afresh."""
    plain = body._wire is None and body._overrides is None
    fits = (source.fits if source is not None else _ABSENT_FITS) if plain else None
    key = (type(body), attr, which if source is not None else 0)
    known = fits.get(key) if fits is not None else None
    if known is False:
        return None
    changed = _with_body(frame, body.replace(**{attr: value}))
    if known:
        return changed
    try:
        changed.encode()
    except Exception:  # noqa: BLE001 - any refusal of the codec: this mutation does not fit
        if fits is not None and _encodes(frame):
            fits[key] = False
        return None
    if fits is not None:
        fits[key] = True
    return changed


def _encodes(frame: Any) -> bool:
    try:
        frame.encode()
    except Exception:  # noqa: BLE001
        return False
    return True


def _body(frame: Any) -> Any:
    if isinstance(frame, AMQPFrame):
        return frame.performative
    if isinstance(frame, SASLFrame):
        return frame.body
    return None


def _with_body(frame: Any, body: Any) -> Any:
    if isinstance(frame, AMQPFrame):
        return dataclasses.replace(frame, performative=body)
    if isinstance(frame, SASLFrame):
        return dataclasses.replace(frame, body=body)
    return frame


def _header(frame: Any, what: str, which: int) -> Any:
    """The frame header written wrong (2.3.1): a SIZE below 8 or that lies, a DOFF below 2 or
    past the end, an undefined TYPE, extended-header octets."""
    r = random.Random(which)
    n = len(frame.encode())
    changes: dict[str, Any] = {}
    if what in ("size", "size+doff"):
        sizes = (0, 1, 4, 7, n - 1, n + 1, 2 * n + 1, 0xFFFFFFFF, 1 << 31)
        changes["size"] = sizes[which % len(sizes)] if which < 2 * len(sizes) else r.getrandbits(32)
    if what in ("doff", "size+doff"):
        past = n // 4 + 1
        if which % 3 == 0 or past > 255 or n >= OVERRIDE_MAX:
            changes["doff"] = which % 2
        else:
            changes["doff"] = r.randint(past, 255) if which % 3 == 1 else r.randint(0, 255)
    if what == "type":
        changes["frame_type"] = S.UNDEFINED_FRAME_TYPES[which % len(S.UNDEFINED_FRAME_TYPES)]
    if what == "extended":
        changes["extended"] = r.randbytes(1 + which % 16)
    return dataclasses.replace(frame, **changes)


def frames(bases: Sequence[Callable[[int], Any]], sh_of: Callable[[Any], Shape],
           max_mutations: int = MAX_MUTATIONS) -> SearchStrategy[Any]:
    """One frame: a base (``bases[b](which)``, the first is the target's valid frame; base and
    which in one choice) and its mutations: two choices and one a mutation."""
    def build(t: tuple[int, list[int]]) -> Any:
        b, which = divmod(t[0], POOL_SIZE)
        base = bases[b](which)
        return apply(base, t[1], sh_of(base))
    return st.tuples(st.integers(0, len(bases) * POOL_SIZE - 1), mutations(max_mutations)).map(build)


__all__ = ["Pool", "View", "pool", "Shape", "shape", "mutations", "unpack", "apply", "frames", "POOL_SIZE", "MAX_MUTATIONS"]
