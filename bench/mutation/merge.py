"""A second broker's pass merged into an earlier list (``--merge FILE``).

A case is shown able to fail when some mutation flipped it, or it did not pass, against *any*
correct-enough broker: one broker's plugin may not offer what a case needs (it is skipped there)
while another does. The earlier list is the file ``report.write`` made; this module reads it back
(only what it says per case: status, baseline, why, counts, notes), picks the cases it does not
show able to fail for the new pass, and combines both passes case by case.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.mutation.run import ERROR_UNMUTATED, FAILS_UNMUTATED, FLIPPED, FLIPPED_TO_ERROR, NOT_FLIPPED, SHOWN, \
    SKIPPED, Outcome

#: which of two not-shown outcomes says more about the case (higher wins): one that ran beats one
#: that did not, and a change to error beats no change at all
_RANK = {SKIPPED: 0, ERROR_UNMUTATED: 1, NOT_FLIPPED: 2, FLIPPED_TO_ERROR: 3}


@dataclass
class Earlier:
    path: Path
    protocol: str
    brokers: str                     # the [run] broker (several joined with " + " when itself merged)
    wall_seconds: float
    outcomes: dict[str, Outcome]     # case id -> what the list says, as a carried Outcome

    def shown(self) -> set[str]:
        return {cid for cid, o in self.outcomes.items() if o.status in SHOWN}


def read(path: Path) -> Earlier:
    """The list at ``path``, each case as an Outcome whose ``carried`` holds its entry."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        run = data["run"]
    except (OSError, tomllib.TOMLDecodeError, KeyError) as exc:
        raise SystemExit(f"--merge {path}: not a mutation list ({exc})") from None
    default_broker = str(run.get("broker", "unknown"))
    shown_by: dict[str, str] = data.get("shown_by", {})
    outcomes: dict[str, Outcome] = {}
    for entry in data.get("case", []):
        cid = entry["id"]
        outcomes[cid] = _carried(cid, entry["status"], entry.get("baseline", ""), entry,
                                 entry.get("broker", default_broker))
    for cid, note in data.get("flipped", {}).items():
        outcomes[cid] = _carried(cid, FLIPPED, "passed", {"note": note}, shown_by.get(cid, default_broker))
    for cid, verdict in data.get("fails_unmutated", {}).items():
        outcomes[cid] = _carried(cid, FAILS_UNMUTATED, verdict, {}, shown_by.get(cid, default_broker))
    return Earlier(path, str(run.get("protocol", "")), default_broker, float(run.get("wall_seconds", 0.0)), outcomes)


def _carried(cid: str, status: str, baseline: str, entry: dict[str, Any], broker: str) -> Outcome:
    o = Outcome(cid, baseline, str(entry.get("reason", "")), status=status, why=str(entry.get("why", "")))
    o.broker, o.carried, o.also = broker, dict(entry), str(entry.get("also", ""))
    return o


def _said(o: Outcome) -> str:
    return f"{o.broker}: {o.status}" + (f" ({o.why})" if o.why else "")


def combine(earlier: Earlier, new: list[Outcome], new_broker: str, order: list[str]) -> list[Outcome]:
    """Per case the outcome that shows most: shown by either pass wins (the new one first); else the
    one that got furthest (ran and changed to error > ran > errored > skipped). Cases of only one
    pass are kept as they are. ``order`` is the catalog order; cases no longer in it go last."""
    merged: dict[str, Outcome] = dict(earlier.outcomes)
    for o in new:
        o.broker = new_broker
        old = merged.get(o.case)
        if old is None or o.status in SHOWN or (old.status not in SHOWN and _RANK.get(o.status, 0) >= _RANK.get(old.status, 0)):
            if old is not None and old.status not in SHOWN and o.status not in SHOWN:
                o.also = _said(old)
            merged[o.case] = o
        elif old.status not in SHOWN:
            old.also = _said(o)
    place = {cid: i for i, cid in enumerate(order)}
    return sorted(merged.values(), key=lambda o: (place.get(o.case, len(place)), o.case))
