"""The transport figures as tables: load rows, stream rows, and every budget with its verdict
(:mod:`overheadbench.report.budgets`), and the same tables in markdown; and the figures' changes
at the session's other places and against a stored run, as rows of the one change table
(:mod:`overheadbench.report.shown`).

One line per measured row keeps the figures of a row side by side (req/s beside its p95
and both CPUs); the budget table then gives each judged figure its interval and verdict.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

from ..core.tables import TERMINAL_WIDTH, laid_out, markdown_cell, markdown_table, plain
from ..core.thresholds import Thresholds
from ..engine.changes import Change
from ..transport.metrics import LOAD_FIGURES, SPECS, STREAM_FIGURES, Measure, Metric
from ..transport.results import FigureResult, compared_text
from .budgets import budget_rows, judged
from .shown import Shown, detects, render_changes

LOAD = (*LOAD_FIGURES, Metric.ERRORS)
HEADERS = {
    Metric.RPS: "req/s",
    Metric.P50: "p50",
    Metric.P95: "p95",
    Metric.P99: "p99",
    Metric.CLIENT_CPU: "client CPU",
    Metric.SERVER_CPU: "server CPU",
    Metric.ERRORS: "errors",
    Metric.TTFE: "first event",
    Metric.EVENTS_PER_S: "events/s",
    Metric.TOTAL: "total",
    Metric.SCALING: "scaling",
}
NOTE = (
    "intervals: req/s over 10 windows of its run; percentiles from order statistics of all its requests "
    "(assuming independent requests); stream figures over the repeated streams; CPU per request (from the OS, "
    "server and load generator) and errors are single readings; a budget on a row's figure widens its interval "
    "by the figure's spread between sessions; a pair's (change) row is framework / baseline - 1 with what it "
    "detects (±: half its interval over the rounds with the pair's spread between sessions, the smallest change "
    "it could tell from zero), and its [baseline] and [framework] rows are each side's own figures"
)


NOT_GATED = " (a side: not gated)"
"""How a change table names a pair's side's change between places: shown where the gate's rule calls
it a change, never failing (:attr:`~overheadbench.transport.results.FigurePlace.gated`)."""
CONTROLLED = " (wider: [baseline] moved {:+.0f}% between places)"
"""How a change table names a pair's change widened by its control
(:attr:`~overheadbench.transport.results.FigurePlace.control`)."""
MEASURED_AS = {Measure.FIGURE: "", Measure.CHANGE: " (change)", Measure.ADDED: " (added)"}
"""A transport pair's rows: the framework side's change over the baseline's, its added cost."""


def _rows(figures: Sequence[FigureResult]) -> dict[tuple[str, str], dict[Metric, FigureResult]]:
    rows: dict[tuple[str, str], dict[Metric, FigureResult]] = {}
    for figure in figures:
        if figure.measured:
            rows.setdefault((figure.nodeid, figure.row + MEASURED_AS[figure.measure]), {})[figure.metric] = figure
    return rows


def _value(figure: FigureResult | None) -> str:
    """A figure's cell; a pair's change with what it detects (``+12.3% ±7.1%``)."""
    if figure is None:
        return ""
    value = figure.reading.value
    if not math.isfinite(value):
        return "n/a"
    detects = figure.detects
    return figure.check.show(value) + (f" ±{detects:.1f}%" if math.isfinite(detects) else "")


def _table(figures: Sequence[FigureResult], metrics: Sequence[Metric]) -> list[tuple[str, ...]]:
    rows = [r for r in _rows(figures).items() if any(metric in r[1] for metric in metrics)]
    if not rows:
        return []
    header = ("test", "row", *(HEADERS[m] for m in metrics))
    return [
        header,
        *((plain(nodeid), plain(row), *(_value(cells.get(m)) for m in metrics)) for (nodeid, row), cells in rows),
    ]


def render_figures(figures: Sequence[FigureResult], width: int = TERMINAL_WIDTH) -> list[str]:
    """The terminal's transport tables, fitted to ``width``."""
    lines: list[str] = []
    for title, table in (
        ("load", _table(figures, (*LOAD, Metric.SCALING))),
        ("streams", _table(figures, STREAM_FIGURES)),
        ("budgets", budget_rows(judged(figures), brief=True)),
    ):
        if table:
            lines += ["", f"{title}:", *laid_out(table, width, labelled=True)]
    return lines[1:] + textwrap.wrap(NOTE, width) if lines else []


def transport_tables(figures: Sequence[FigureResult]) -> list[tuple[str, list[tuple[str, ...]]]]:
    """The load and stream tables (each titled, its first row the header; none where empty): one row
    per test and protocol/concurrency row, its figures side by side."""
    tables = (
        ("Transport", _table(figures, (*LOAD, Metric.SCALING))),
        ("Streams", _table(figures, STREAM_FIGURES)),
    )
    return [(title, table) for title, table in tables if table]


def markdown_figures(figures: Sequence[FigureResult]) -> str:
    """The same tables as markdown sections (appended to the ``--overhead-md`` report; their
    budgets are in its one budgets table, :func:`~overheadbench.report.budgets.markdown_budgets`)."""
    sections = [f"## {title}\n\n" + "\n".join(markdown_table(table)) for title, table in transport_tables(figures)]
    return "\n\n".join(sections) + f"\n\n_{NOTE}_\n" if sections else ""


def figure_shown(figure: FigureResult, change: Change, gated: bool = True, control: float | None = None) -> Shown:
    """A transport figure's change: its value on both sides, as the figure prints (a pair's
    ratio, framework / baseline, as a ratio); one not gated says so, one widened by its
    baseline side's move between places (``control``, percent) says how far that side moved."""
    what = f"{figure.row} {SPECS[figure.metric].what}" + (" ratio" if figure.measure == Measure.CHANGE else "")
    what += "" if gated else NOT_GATED
    what += "" if control is None else CONTROLLED.format(control)
    return Shown(figure.nodeid, what, compared_text(figure, change.old), compared_text(figure, change.new), change)


def figure_places(
    figures: Sequence[FigureResult], threshold: float | None = None
) -> dict[str, tuple[tuple[str, str], list[Shown]]]:
    """Each other place's transport figure changes (by place name): the sides' names and the rows (a
    change not gated where the gate's rule at ``threshold`` calls it one,
    :meth:`~overheadbench.transport.results.FigurePlace.shown`)."""
    found: dict[str, tuple[tuple[str, str], list[Shown]]] = {}
    for figure in figures:
        for place in figure.places:
            sides = place.role.sides(place.name)
            rows = found.setdefault(place.name, (sides, []))[1]
            if place.shown(threshold):
                rows.append(figure_shown(figure, place.change, place.gated, place.control))
    return found


def render_figure_places(figures: Sequence[FigureResult], thresholds: Thresholds) -> list[str]:
    """Each other place's change table of the transport figures."""
    lines: list[str] = []
    for name, (sides, shown) in figure_places(figures, thresholds.transport).items():
        reference = name if sides[0] == "base" else ""
        lines += [*([""] if lines else []), *render_changes(shown, reference, thresholds, sides)]
    return lines


def markdown_figure_places(figures: Sequence[FigureResult], threshold: float | None = None) -> str:
    """The markdown section of each other place's transport figure changes (measured in rounds)."""
    sections = []
    for name, (sides, shown) in figure_places(figures, threshold).items():
        rows = [("Test", "Figure", sides[0].capitalize(), sides[1], "Change", "95% CI", "Detects", "Outcome")]
        for row in shown:
            change = row.change
            outcome = change.finding(threshold).value if threshold is not None else ""
            rows.append(
                (row.test, row.figure, row.old, row.new, change.moved(), change.evidence, detects(change), outcome)
            )
        where = "against" if sides[0] == "base" else "under"
        title = f"Transport {where} {markdown_cell(name)}"
        note = "_Each test run in rounds at both places, interleaved; each figure's change paired by round._"
        sections.append("\n".join([f"## {title}", "", *markdown_table(rows), "", note]) + "\n")
    return "\n".join(sections)
