"""The generated list: every case not shown able to fail, with why, and the evidence for the rest.

TOML, written by hand (the standard library reads TOML but does not write it); strings are
escaped as TOML basic strings.
"""
from __future__ import annotations

import collections
import datetime as _dt
from pathlib import Path
from typing import Any

from bench.mutation.reviewed import REVIEWED
from bench.mutation.run import FLIPPED, FLIPPED_TO_ERROR, NOT_FLIPPED, SHOWN, STATUSES, WHY, Outcome

REASON_MAX = 300


def toml_string(text: str) -> str:
    out = ['"']
    for ch in text:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}" if o < 0xD800 else "\\ufffd")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _cap(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= REASON_MAX else text[: REASON_MAX - 3] + "..."


def summary(outcomes: list[Outcome]) -> dict[str, Any]:
    counts = collections.Counter(o.status for o in outcomes)
    why = collections.Counter(o.why for o in outcomes if o.status == NOT_FLIPPED)
    shown = sum(counts[s] for s in SHOWN)
    ran = len(outcomes) - counts["skipped-unmutated"] - counts["error-unmutated"]
    return {
        "cases": len(outcomes),
        "shown_able_to_fail": shown,
        "shown_percent": round(100.0 * shown / len(outcomes), 1) if outcomes else 0.0,
        "shown_percent_of_run": round(100.0 * shown / ran, 1) if ran else 0.0,
        **{s.replace("-", "_"): counts[s] for s in STATUSES},
        "not_flipped_by_reason": dict(sorted(why.items())),
    }


def flip_note(o: Outcome) -> str:
    if o.by is None:
        return str((o.carried or {}).get("note", "")) or str((o.carried or {}).get("error_by", ""))
    applied = o.by.applied
    what = "; ".join(applied[:2]) + (f"; ... ({len(applied)} frames in all)" if len(applied) > 2 else "")
    what = what or o.by.mutation.describe() + " (never reached: the case ended before it)"
    return _cap(f"{what} -> {o.by.verdict}: {o.by.reason}")


#: the per-case fields of a [[case]] entry after id, status and baseline, in the order they are written
_CASE_FIELDS = ("why", "mutations_tried", "frames_received", "error_by", "reason")


def _value(v: Any) -> str:
    return toml_string(v) if isinstance(v, str) else str(v)


def write(path: Path, outcomes: list[Outcome], *, command: str, protocol: str, broker: str, seed: int,
          budget: int, wall_s: float, merged_from: str = "") -> None:
    """The list. With ``merged_from`` (``--merge``), outcomes come from two passes: each carries its
    broker, an earlier pass's entries are written as that list had them, and [shown_by] names the
    broker that showed each shown case."""
    s = summary(outcomes)
    brokers = sorted({o.broker for o in outcomes if o.broker})
    if merged_from:
        broker = " + ".join(brokers) or broker
    lines = [
        "# Catalog self-test by mutation: which cases some mutation of the broker's frames made fail.",
        "# GENERATED -- do not edit. Regenerate with:",
        f"#   {command}",
        "# Each case ran unmutated, then under up to `mutations_per_case` generic mutations of the frames",
        "# the broker sent it (reply code / error condition changed, a field bit flipped, 1.0: a value of a",
        "# transfer's message or nested in a field changed, a field left out; a frame dropped, duplicated,",
        "# reordered, delayed, withheld, the connection cut by FIN or RST) until its verdict went from",
        "# passed to failed/warning/informational. See bench/README.md (mutation).",
        "",
        "[run]",
        f"protocol = {toml_string(protocol)}",
        f"broker = {toml_string(broker)}",
        f"date = {toml_string(_dt.date.today().isoformat())}",
        f"seed = {seed}",
        f"mutations_per_case = {budget}",
        f"wall_seconds = {wall_s:.1f}",
    ]
    if merged_from:
        lines.append(f"merged_from = {toml_string(merged_from)}")
    lines += [
        "",
        "[summary]",
    ]
    for k, v in s.items():
        if k != "not_flipped_by_reason":
            lines.append(f"{k} = {v}")
    lines += ["", "[summary.not_flipped_by_reason]"]
    lines += [f"{k} = {v}" for k, v in s["not_flipped_by_reason"].items()]
    lines += ["", "[reasons]  # what each `why` of a not-flipped case means"]
    lines += [f"{k} = {toml_string(v)}" for k, v in WHY.items()]
    lines += ["", "# Every case NOT shown able to fail (not flipped, flipped to error only, or not run unmutated).",
              "# `reviewed`: a reading of the case (bench/mutation/reviewed.py): why it is right and what the",
              "# generic mutations would have to do to make it fail."]
    for o in outcomes:
        if o.status in (FLIPPED, "fails-unmutated"):
            continue
        lines += ["", "[[case]]", f"id = {toml_string(o.case)}", f"status = {toml_string(o.status)}",
                  f"baseline = {toml_string(o.baseline)}"]
        if merged_from:
            lines.append(f"broker = {toml_string(o.broker)}")
            if o.also:
                lines.append(f"also = {toml_string(o.also)}")
        if o.case in REVIEWED and o.status != "skipped-unmutated":
            lines.append(f"reviewed = {toml_string(REVIEWED[o.case])}")
        if o.carried is not None:   # an earlier pass's entry, as that list wrote it
            lines += [f"{k} = {_value(o.carried[k])}" for k in _CASE_FIELDS if k in o.carried]
            continue
        if o.status == NOT_FLIPPED:
            lines.append(f"why = {toml_string(o.why)}")
        if o.tried:
            lines.append(f"mutations_tried = {len(o.tried)}")
            lines.append(f"frames_received = {o.frames}")
        if o.status == FLIPPED_TO_ERROR:
            lines.append(f"error_by = {toml_string(flip_note(o))}")
        elif o.status != NOT_FLIPPED and o.baseline_reason:
            lines.append(f"reason = {toml_string(_cap(o.baseline_reason))}")
    lines += ["", "# The mutation that flipped each flipped case (what it did -> the verdict: the reason)."]
    lines.append("[flipped]")
    for o in outcomes:
        if o.status == FLIPPED:
            lines.append(f"{toml_string(o.case)} = {toml_string(flip_note(o))}")
    lines += ["", "# Cases that did not pass unmutated (failed, warning, informational): they have shown they can.", "[fails_unmutated]"]
    for o in outcomes:
        if o.status == "fails-unmutated":
            lines.append(f"{toml_string(o.case)} = {toml_string(o.baseline)}")
    if merged_from:
        lines += ["", "# The broker each shown case was shown against.", "[shown_by]"]
        lines += [f"{toml_string(o.case)} = {toml_string(o.broker)}" for o in outcomes if o.status in SHOWN]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
