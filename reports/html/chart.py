"""Geometry of the history charts; the SVG itself is written by the template (no JS library).

One chart per (product, protocol): the MUST and SHOULD compliance ratio of every run as two
lines, and under them each run's verdicts as a stacked bar of shares, so a regression shows
as a dip and a red bar at the run that brought it. Only the last ``MAX_POINTS`` runs are
drawn; older ones are summarized in words, so a history of thousands of runs stays small.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_POINTS = 120
WIDTH = 760
LEFT, RIGHT = 44, 12
LINE_TOP, LINE_H = 12, 120          # the ratio chart
BAR_TOP, BAR_H = 156, 70            # the verdict bars
HEIGHT = BAR_TOP + BAR_H + 26

# stacked from the bottom: what passed first, what failed on top, where the eye goes
BAR_ORDER = (("passed", "passed"), ("informational", "informational"), ("skipped", "skipped"),
             ("error", "error"), ("warning", "warning"), ("failed", "failed"))


@dataclass
class Bar:
    y: float
    h: float
    cls: str


@dataclass
class Point:
    x: float
    bar_w: float
    run_id: str
    version: str
    started_at: str
    cases: int
    verdicts: dict[str, int]
    must: float | None
    should: float | None
    must_y: float | None
    should_y: float | None
    bars: list[Bar] = field(default_factory=list)
    version_mark: bool = False      # the version differs from the previous point's

    @property
    def title(self) -> str:
        parts = [f"{self.started_at} {self.version} run {self.run_id[:12]}", f"{self.cases} cases"]
        parts += [f"{v} {self.verdicts.get(k, 0)}" for k, v in BAR_ORDER if self.verdicts.get(k)]
        if self.must is not None:
            parts.append(f"MUST {self.must * 100:.1f}%")
        if self.should is not None:
            parts.append(f"SHOULD {self.should * 100:.1f}%")
        return "; ".join(parts)


@dataclass
class Chart:
    product: str
    protocol: str
    points: list[Point]
    omitted: int                     # older runs not drawn
    total: int
    must_line: list[str]             # polyline "x,y x,y" segments (a run without MUST data breaks the line)
    should_line: list[str]
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    right: int = WIDTH - RIGHT
    line_top: int = LINE_TOP
    line_bottom: int = LINE_TOP + LINE_H
    bar_top: int = BAR_TOP
    bar_bottom: int = BAR_TOP + BAR_H
    gridlines: list[tuple[float, str]] = field(default_factory=list)


def _ratio(part: Any) -> float | None:
    if not isinstance(part, dict):
        return None
    value = part.get("ratio")
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return min(1.0, max(0.0, value)) if value == value else None


def _segments(coords: list[tuple[float, float | None]]) -> list[str]:
    out, current = [], []
    for x, y in coords:
        if y is None:
            if current:
                out.append(" ".join(current))
            current = []
        else:
            current.append(f"{x:.1f},{y:.1f}")
    if current:
        out.append(" ".join(current))
    return out


def build_chart(entry: dict[str, Any]) -> Chart:
    points_in = [p for p in entry.get("points") or [] if isinstance(p, dict)]
    shown = points_in[-MAX_POINTS:]
    plot_w = WIDTH - LEFT - RIGHT
    step = plot_w / max(1, len(shown))
    bar_w = max(1.0, min(24.0, step * 0.7))
    points = []
    previous_version = None
    for i, p in enumerate(shown):
        x = LEFT + (i + 0.5) * step
        verdicts = {k: int(v or 0) for k, v in (p.get("verdicts") or {}).items() if isinstance(v, (int, float))}
        cases = int(p.get("cases") or sum(verdicts.values()) or 0)
        must, should = _ratio(p.get("must")), _ratio(p.get("should"))
        point = Point(
            x=x, bar_w=bar_w, run_id=str(p.get("run_id") or ""), version=str(p.get("version") or ""),
            started_at=str(p.get("started_at") or ""), cases=cases, verdicts=verdicts, must=must, should=should,
            must_y=None if must is None else LINE_TOP + (1 - must) * LINE_H,
            should_y=None if should is None else LINE_TOP + (1 - should) * LINE_H,
            version_mark=previous_version is not None and str(p.get("version")) != previous_version)
        previous_version = str(p.get("version"))
        total = sum(verdicts.get(k, 0) for k, _ in BAR_ORDER)
        y = float(BAR_TOP + BAR_H)
        for key, cls in BAR_ORDER:
            n = verdicts.get(key, 0)
            if n and total:
                h = BAR_H * n / total
                y -= h
                point.bars.append(Bar(y, h, cls))
        points.append(point)
    chart = Chart(
        product=str(entry.get("product") or ""), protocol=str(entry.get("protocol") or ""), points=points,
        omitted=len(points_in) - len(shown), total=len(points_in),
        must_line=_segments([(p.x, p.must_y) for p in points]),
        should_line=_segments([(p.x, p.should_y) for p in points]))
    chart.gridlines = [(LINE_TOP + (1 - f) * LINE_H, f"{int(f * 100)}%") for f in (0.0, 0.5, 1.0)]
    return chart
