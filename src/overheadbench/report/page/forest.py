"""Forest plots: one row per pair (or per change), its estimate and interval against its budget
(or the gate's threshold), all rows on one axis, as a table whose last cell draws the row.

Why a table of small drawings rather than one tall chart: every row keeps its test's name, figures
and outcome as text (readable with JavaScript off, on a phone, by a screen reader, and found by a
test), and a suite of 100 pairs is 100 table rows, not a 5,000-pixel image with a cut title. The
axis is overhead in percent, or the ratio on a log axis where the ratios span more than
:data:`~overheadbench.report.page.svg.LOG_SPAN` times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .svg import LOG_SPAN, Scale, esc, line, number, svg, text

WIDTH, ROW_HEIGHT, AXIS_HEIGHT = 320.0, 22.0, 26.0


@dataclass(frozen=True)
class ForestRow:
    """One row: a value and its interval, in ratio terms (1 = no overhead, no change)."""

    anchor: str
    """The row's id in the page (a link target)."""
    cells: tuple[str, ...]
    """The row's text cells before the drawing, already escaped HTML (the first is the row's header)."""
    value: float
    low: float
    high: float
    limit: float | None = None
    """The budget as a ratio (1 + max), marked on the row."""
    css: str = ""
    """The row's outcome, as a class (``fail``, ``pass``...)."""


@dataclass(frozen=True)
class Forest:
    """A forest plot: its caption, columns, rows, and the lines drawn across every row (the gate's
    thresholds, as ratios)."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[ForestRow, ...]
    across: tuple[tuple[float, str], ...] = ()
    """Lines drawn through every row: (ratio, what it is)."""
    axis: str = "overhead"
    """``overhead`` (framework / baseline - 1) or ``change`` (new / old - 1)."""


def scale_of(forest: Forest) -> Scale:
    """One axis for every row: the values, intervals, budgets and lines across; log where they span decades."""
    values = [value for row in forest.rows for value in (row.value, row.low, row.high)]
    values += [row.limit for row in forest.rows if row.limit is not None] + [1.0]
    values += [ratio for ratio, _ in forest.across]
    positive = [value for value in values if math.isfinite(value) and value > 0]
    log = bool(positive) and max(positive) / min(positive) > LOG_SPAN
    return Scale.spanning(values, 8.0, WIDTH - 8.0, log=log)


def _label(scale: Scale, ratio: float) -> str:
    if scale.log:
        return f"{ratio:g}x"
    return f"{100 * (ratio - 1):+g}%"


def render_forest(forest: Forest) -> str:
    """The forest as an HTML table: the text cells, then each row's drawing on the shared axis."""
    scale = scale_of(forest)
    what = "ratio, log axis" if scale.log else f"{forest.axis}, %"
    head = "".join(f'<th scope="col">{esc(column)}</th>' for column in forest.columns)
    axis = _axis(scale, forest)
    rows = [_row(scale, forest, row) for row in forest.rows]
    return (
        f'<table class="forest"><caption>{esc(forest.caption)}</caption>'
        f'<thead><tr>{head}<th scope="col" class="drawn">{esc(what)}<br>{axis}</th></tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _axis(scale: Scale, forest: Forest) -> str:
    body = [line(scale.start, AXIS_HEIGHT - 4, scale.end, AXIS_HEIGHT - 4, "axis")]
    for ratio in scale.ticks():
        body += [
            line(scale(ratio), AXIS_HEIGHT - 8, scale(ratio), AXIS_HEIGHT - 4, "axis"),
            text(scale(ratio), AXIS_HEIGHT - 11, _label(scale, ratio), "tick"),
        ]
    return svg(WIDTH, AXIS_HEIGHT, body, f"axis: {forest.axis}", "axis")


def _row(scale: Scale, forest: Forest, row: ForestRow) -> str:
    middle = ROW_HEIGHT / 2
    body = [line(scale(1.0), 0, scale(1.0), ROW_HEIGHT, "zero")]
    body += [line(scale(ratio), 0, scale(ratio), ROW_HEIGHT, "threshold", what) for ratio, what in forest.across]
    if row.limit is not None:
        body.append(
            line(scale(row.limit), 2, scale(row.limit), ROW_HEIGHT - 2, "budget", f"budget {_label(scale, row.limit)}")
        )
    if math.isfinite(row.value):
        low, high = (
            (row.low, row.high) if math.isfinite(row.low) and math.isfinite(row.high) else (row.value, row.value)
        )
        body.append(line(scale(low), middle, scale(high), middle, "interval"))
        body.append(
            f'<circle class="estimate" cx="{number(scale(row.value))}" cy="{number(middle)}" r="4">'
            f"<title>{esc(_label(scale, row.value))}</title></circle>"
        )
    cells = "".join(
        f'<th scope="row">{cell}</th>' if index == 0 else f"<td>{cell}</td>" for index, cell in enumerate(row.cells)
    )
    drawn = svg(WIDTH, ROW_HEIGHT, body, f"{forest.axis} of this row", "row")
    return f'<tr id="{esc(row.anchor)}" class="{esc(row.css)}">{cells}<td class="drawn">{drawn}</td></tr>'
