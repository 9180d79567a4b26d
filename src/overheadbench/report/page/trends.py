"""Each figure's history as a small chart: its value over the stored runs in commit order, each run's
interval as a band, its budget as a line, and the change points ``overheadbench history`` finds
marked where they fall, with their commits.

Why a band and a line rather than a point and whisker per run: 1,000 runs of 50 pairs are 50,000
intervals; as two paths per chart the page stays a few megabytes and draws at once. Points are
drawn as well where a chart has few runs (:data:`MARKED_RUNS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ...core.units import format_overhead
from ...engine.readings import Reading, RunRow
from ...history.timeline import ChangePoint, History
from ..history import change_said, direction
from .svg import Scale, anchor, esc, line, name, number, svg, text

WIDTH, HEIGHT, TOP, BOTTOM, LEFT = 640.0, 164.0, 24.0, 28.0, 52.0
"""The chart's box; its top margin holds the change points' commits, its bottom the runs' (out of the series' way)."""
FAR = 2.0
"""A budget further from the series than this many times the series' own span is named, not drawn."""
MARKED_RUNS = 60
"""A chart of at most this many runs marks each run with a point too."""


@dataclass(frozen=True)
class Trend:
    """One figure's series: the runs in commit order with their readings, and its change points."""

    test: str
    figure: str
    points: tuple[tuple[RunRow, Reading], ...]
    changes: tuple[ChangePoint, ...]

    def shown(self, reading: Reading, log: float) -> float:
        """A log value as the chart shows it: an overhead in percent, or the figure in its unit."""
        return 100 * (math.exp(log) - 1) if reading.ratio else math.exp(log)

    def said(self, shown: float) -> str:
        """A value of the chart in words: an overhead as every report says it (``20.0%``, ``74x``), or the figure."""
        return format_overhead(shown / 100) if self.points[-1][1].ratio else f"{shown:.4g}"

    @property
    def unit(self) -> str:
        return "overhead, %" if self.points[-1][1].ratio else self.figure


def trends(history: History) -> list[Trend]:
    """Every series of the history, each with its change points (tests in name order)."""
    series: dict[tuple[str, str], list[tuple[RunRow, Reading]]] = {}
    for row in history.ordered:
        for reading in row.readings:
            series.setdefault(reading.key, []).append((row, reading))
    found = []
    for key in sorted(series):
        changes = tuple(point for point in history.change_points if (point.test, point.figure) == key)
        found.append(Trend(key[0], key[1], tuple(series[key]), changes))
    return found


def render_trend(trend: Trend) -> str:
    """The chart: band, line, budget, change points (each labelled with its commit), axes."""
    values, lows, highs = [], [], []
    for _, reading in trend.points:
        low, high = reading.band
        values.append(trend.shown(reading, reading.log))
        lows.append(trend.shown(reading, low))
        highs.append(trend.shown(reading, high))
    latest = trend.points[-1][1]
    limit = trend.shown(latest, math.log(latest.limit)) if latest.limit and latest.limit > 0 else None
    span = max(highs) - min(lows)
    near = limit is not None and min(lows) - FAR * span <= limit <= max(highs) + FAR * span
    y = Scale.spanning([*lows, *highs, *([limit] if near and limit is not None else [])], HEIGHT - BOTTOM, TOP)
    count = len(trend.points)
    x = Scale(0.0, max(count - 1, 1), LEFT, WIDTH - 8)
    body = [_band(x, y, lows, highs), _polyline(x, y, values)]
    if count <= MARKED_RUNS:
        body += [
            f'<circle class="run" cx="{number(x(i))}" cy="{number(y(v))}" r="2.5"></circle>'
            for i, v in enumerate(values)
        ]
    if limit is not None and near:
        body.append(line(LEFT, y(limit), WIDTH - 8, y(limit), "budget", f"budget {trend.said(limit)}"))
        body.append(text(WIDTH - 10, y(limit) - 3, "budget", "budget-label", "end"))
    far = ""
    if limit is not None and not near:  # far off the series: said, not drawn (it would flatten the series to a line)
        far = f"; budget {trend.said(limit)} ({'above' if limit > max(highs) else 'below'})"
    body += _changes(trend, x)
    body += _axes(trend, x, y, far)
    label = f"{trend.test} {trend.figure}: {count} runs, {len(trend.changes)} change points"
    return svg(WIDTH, HEIGHT, body, label, "trend")


def _band(x: Scale, y: Scale, lows: Sequence[float], highs: Sequence[float]) -> str:
    upper = [f"{number(x(i))},{number(y(v))}" for i, v in enumerate(highs)]
    lower = [f"{number(x(i))},{number(y(v))}" for i, v in reversed(list(enumerate(lows)))]
    return f'<polygon class="band" points="{" ".join(upper + lower)}"></polygon>'


def _polyline(x: Scale, y: Scale, values: Sequence[float]) -> str:
    points = " ".join(f"{number(x(i))},{number(y(v))}" for i, v in enumerate(values))
    return f'<polyline class="value" points="{points}"></polyline>'


def _changes(trend: Trend, x: Scale) -> list[str]:
    """Each change point: a line between its last run before and first run after, its commit above the
    plot (inside it, the labels sat on a budget's line near the top)."""
    paths = [row.path for row, _ in trend.points]
    marks = []
    for point in trend.changes:
        if point.after.path not in paths or point.before.path not in paths:
            continue
        at = (x(paths.index(point.before.path)) + x(paths.index(point.after.path))) / 2
        css = "change regression" if point.regression and not point.accepted else "change"
        low, high = point.shift.interval()
        what = f"{point.shift.kind.value} {100 * point.shift.change:+.1f}% ({100 * low:+.1f}..{100 * high:+.1f}%)"
        tip = f"{what} at {point.after_commit.short} {point.after_commit.subject}".strip()
        tip += f" (accepted: {point.accepted})" if point.accepted else ""
        marks.append(line(at, TOP - 4, at, HEIGHT - BOTTOM, css, tip))
        marks.append(text(at + 3, TOP - 6, point.after_commit.short[:7], "commit", "start"))
    return marks


def _axes(trend: Trend, x: Scale, y: Scale, far: str) -> list[str]:
    """The axes, the y ticks, and the bottom row: the first and last runs' commits, how many runs, and a
    budget too far off the series to draw (``far``)."""
    marks = [
        line(LEFT, HEIGHT - BOTTOM, WIDTH - 8, HEIGHT - BOTTOM, "axis"),
        line(LEFT, TOP, LEFT, HEIGHT - BOTTOM, "axis"),
    ]
    for tick in y.ticks(4):
        marks.append(text(LEFT - 4, y(tick) + 3, trend.said(tick), "tick", "end"))
    first, last = trend.points[0][0], trend.points[-1][0]
    marks.append(text(LEFT, HEIGHT - 6, first.commit[:7] or first.time[:10], "tick", "start"))
    marks.append(text(WIDTH - 8, HEIGHT - 6, last.commit[:7] or last.time[:10], "tick", "end"))
    said = f"{len(trend.points)} runs{far}" if far else f"{len(trend.points)} runs, oldest to newest"
    marks.append(text((LEFT + WIDTH) / 2, HEIGHT - 6, said, "tick" + (" budget-label" if far else "")))
    return marks


def trend_caption(trend: Trend) -> str:
    """What the chart shows, in words (also where scripts are off and for screen readers)."""
    latest = trend.points[-1][1]
    now = trend.said(trend.shown(latest, latest.log))  # a 74x pair read "7.28e+03%"
    changes = [
        f"{point.shift.kind.value} {direction(point)}: {change_said(point)} at {point.after_commit.short[:10]}"
        + (f" ({point.after_commit.subject})" if point.after_commit.subject else "")
        for point in trend.changes
    ]
    said = "; ".join(changes) if changes else "no change point"
    return esc(f"{len(trend.points)} runs; latest {now}; {said}")


def history_section(history: History) -> str:
    """The page's History section: what the runs are, then each figure's chart."""
    figures = [
        f'<figure id="{anchor("trend", f"{trend.test} {trend.figure}")}"><figcaption>{name(trend.test)} '
        f"{esc(trend.figure)}: {trend_caption(trend)}</figcaption>{render_trend(trend)}</figure>"
        for trend in trends(history)
    ]
    linked = f" ({history.linked} linked)" if history.linked else ""
    pooled = f", pooled from {history.machines} fingerprints" if history.machines > 1 else ""
    said = (
        f"{history.runs} runs{linked}{pooled} in {history.ordered_by} order, {len(history.change_points)} change points"
    )
    return f'<section id="history"><h2>History</h2><p>{esc(said)}.</p>{"".join(figures)}</section>'
