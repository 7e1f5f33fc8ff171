"""Which mutations to try on a case, in which order, from what its unmutated run received.

A case judges what the broker answered to what it sent, and its verdict usually rests on the
last frames it received before its body returned (what came before is the handshake and the
set-up). So the mutations are tried latest frame first, and the kinds most likely to change a
verdict, and cheapest to run, come first: a changed reply code or error condition (a case that
checks the code fails at once), a flipped bit in a field, the connection cut there (FIN, RST),
a duplicate of each of the latest three frames (the one mutation that adds a frame: an upper
bound such as "at most N transfers" or an absence such as "no redelivery" notices it; and of
the latest three 1.0 transfers, wherever they are), then the ones a case only notices by waiting (drop, withhold,
delay) and the stream disorders (reorder). Then the same for every earlier frame. The caller stops at
the first mutation that flips the verdict, so the order decides the time a pass takes. A field
flipped in every frame of the same sort ("flipall") comes early for the latest frames whose
sort recurs: a case that asks again until the answer is right sees through a one-off flip.

1.0 messages: when one of the latest frames is a transfer carrying a whole message, one value
of its message ("payload": a header field, an annotation, a property, the body) is changed
early, before the transfer's own fields: a case that judges the message sees the change,
while a flipped transfer field mostly loses the delivery (the case errors at set-up). For the
same reason flips of the fields that only tie a frame to its link or session (transfer.handle,
attach.name, begin.remote-channel: the suite then waits for a frame that never comes) are
tried last. A value nested inside a performative's field ("deep": a terminus's outcomes, an
error's description) and a field left out ("unset") come after the cut and the duplicate, for
the latest frames.
"""
from __future__ import annotations

import collections
import hashlib

from bench.mutation.fields10 import SETUP_FIELDS
from bench.mutation.mutations import Mutation
from bench.mutation.proxy import ConnLog, Received

#: per frame, latest first, after the opening rounds below
PER_FRAME_KINDS = ("flip", "rst", "drop", "dup", "withhold", "reorder", "delay", "fin")
PAYLOAD_EARLY = 4      # message values changed before the transfer's own fields are flipped
PAYLOAD_VARIANTS = 10  # message values changed in all, per transfer
NESTED_VARIANTS = 3    # "deep" and "unset" variants per frame, for the latest three frames


def mutation_seed(run_seed: int, case_id: str, kind: str, conn: int, index: int) -> int:
    digest = hashlib.sha256(f"{run_seed}:{case_id}:{kind}:{conn}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def plan(case_id: str, log: list[ConnLog], budget: int, run_seed: int = 0, judged_seq: int | None = None,
         max_variants: int = 6) -> list[Mutation]:
    """At most ``budget`` distinct mutations of the frames in ``log`` (the unmutated run's).

    ``judged_seq``: the arrival number of the last frame received before the case's last check;
    later frames (a client closing its connections inside the case) cannot have decided it.
    A "flip" is tried on each of the first ``max_variants`` fields of the latest frames.
    """
    frames = [(c.number, r) for c in log for r in c.received if judged_seq is None or r.seq <= judged_seq]
    frames.sort(key=lambda cr: cr[1].seq, reverse=True)  # latest first, across connections
    if not frames:
        return []
    latest = frames[0]
    transfers = [(c, r) for c, r in frames if r.values]
    near = transfers[0] if transfers and transfers[0] in frames[:3] else None
    rounds: list[tuple[str, int, int, int]] = []
    rounds += [("code", c, r.index, 0) for c, r in frames if r.closes]
    if near is not None:
        rounds += _payloads(near, 0, PAYLOAD_EARLY)
    rounds += _flips(frames[:1], max_variants)
    if near is not None:
        rounds += _payloads(near, PAYLOAD_EARLY, PAYLOAD_VARIANTS)
    # a duplicate is the one frame a mutation adds: a case that checks an upper bound (at most N
    # transfers for a credit of N) or an absence (no redelivery) sees one more, and it costs one run
    # per frame; the latest three, as the delivery a case judges often precedes a frame or two of
    # set-up for the next step (a second link's attach)
    rounds += [("rst", *_at(latest), 0), ("fin", *_at(latest), 0)]
    rounds += [("dup", c, r.index, 0) for c, r in frames[:3]]
    rounds += [("dup", c, r.index, 0) for c, r in transfers[:3]]  # the latest deliveries, however far back
    rounds += _nested(frames[:1])
    sorts = collections.Counter(r.sort for _, r in frames if r.sort)
    rounds += [(kind, c, index, v) for kind, c, index, v in _flips(frames[:3], max_variants, "flipall")
               if sorts[_sort(frames, c, index)] > 1]
    rounds += _flips(frames[1:3], max_variants)
    rounds += _nested(frames[1:3])
    for t in transfers[:3]:
        rounds += _payloads(t, 0, PAYLOAD_VARIANTS)
    rounds += [("drop", c, r.index, 0) for c, r in frames[:2]]
    rounds.append(("withhold", *_at(latest), 0))
    if len(frames) > 1:
        rounds.append(("reorder", *_at(frames[1]), 0))
    rounds.append(("delay", *_at(latest), 0))
    for c, r in frames:
        first = next(iter(_variants(r, 1)), 0)
        rounds += [(kind, c, r.index, first if kind == "flip" else 0) for kind in PER_FRAME_KINDS]
    rounds += [("flip", c, r.index, v) for c, r in frames[:3] for v in range(min(r.fields, max_variants))
               if _setup(r, v)]
    out: list[Mutation] = []
    seen: set[tuple[str, int, int, int]] = set()
    for kind, conn, index, variant in rounds:
        if (kind, conn, index, variant) in seen:
            continue
        seen.add((kind, conn, index, variant))
        sort = _sort(frames, conn, index) if kind == "flipall" else ""
        out.append(Mutation(kind, conn, index, mutation_seed(run_seed, case_id, kind, conn, index) + variant, variant,
                            sort))
        if len(out) >= budget:
            break
    return out


def _flips(frames: list[tuple[int, Received]], max_variants: int, kind: str = "flip") -> list[tuple[str, int, int, int]]:
    return [(kind, c, r.index, v) for c, r in frames for v in _variants(r, max_variants)]


def _variants(r: Received, max_variants: int) -> list[int]:
    """The fields to flip early: the first ``max_variants`` that are not set-up fields (a frame with
    no field to flip: one flip, of a payload bit)."""
    if not r.fields:
        return [0]
    return [v for v in range(r.fields) if not _setup(r, v)][:max_variants]


def _setup(r: Received, variant: int) -> bool:
    return variant < len(r.field_names) and (r.sort, r.field_names[variant]) in SETUP_FIELDS


def _payloads(frame: tuple[int, Received], lo: int, hi: int) -> list[tuple[str, int, int, int]]:
    c, r = frame
    return [("payload", c, r.index, v) for v in range(lo, min(hi, r.values))]


def _nested(frames: list[tuple[int, Received]]) -> list[tuple[str, int, int, int]]:
    """A nested value flipped, then a set field left out (1.0): the first few of each, per frame."""
    return [(kind, c, r.index, v) for c, r in frames for kind, n in (("deep", r.deep), ("unset", r.unset))
            for v in range(min(n, NESTED_VARIANTS))]


def _sort(frames: list[tuple[int, Received]], conn: int, index: int) -> str:
    return next(r.sort for c, r in frames if c == conn and r.index == index)


def _at(frame: tuple[int, object]) -> tuple[int, int]:
    conn, received = frame
    return conn, received.index  # type: ignore[attr-defined]
