"""How a transport figure changed between two runs: its :class:`~overheadbench.history.changes.Change`.

A figure's own error comes from its interval (``(log high - log low) / 2z``); between two
stored runs the change adds twice the figure's between-session variance on this machine,
learned from the stored runs' values beyond their own errors (``MIN_HISTORY`` of them), else
``SESSION_LOG_SD_PRIOR``. "Worse" is the figure's own direction: lower for a floor (req/s),
higher for a ceiling (latency).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..transport.figures import SPECS, FigureResult, Metric
from .changes import Change, Measurement, change, interval_measurement, session_log_sd

SESSION_LOG_SD_PRIOR = 0.10
"""Between-session standard deviation of a transport figure's logarithm without history: 10%,
measured (two full runs of the suite on this machine kind, 2026-11-24, 163 figures: the log
ratios' sd over both sessions, 13.7%, over sqrt(2): 9.7%; req/s and p50 3-4%, p95 10%, p99 13%,
stream figures 8-9%). The 6% assumed before failed unchanged code. A tail percentile moves far
more (h3 c=100 p99: 141 ms -> 353 ms between those sessions): gate on it with care."""
COMPARED = (Metric.RPS, Metric.P50, Metric.P95, Metric.P99, Metric.TTFE, Metric.EVENTS_PER_S, Metric.TOTAL,
            Metric.SCALING, Metric.CLIENT_CPU, Metric.SERVER_CPU)  # fmt: skip
"""Figures with a ratio to compare (failed requests are counts, judged by their own limit)."""


def figure_what(key: tuple[str, str, Metric]) -> str:
    """A figure's name in a change: ``<test>: <row> <metric>``."""
    return f"{key[0]}: {key[1]} {key[2].value}"


def _comparable(figure: FigureResult) -> bool:
    value = figure.reading.value
    return figure.measured and figure.metric in COMPARED and value > 0 and math.isfinite(value)


def _reading(figure: FigureResult) -> Measurement:
    return interval_measurement(figure.reading.value, figure.reading.low, figure.reading.high)


def compare_figure(old: FigureResult, new: FigureResult, history: Sequence[FigureResult] = ()) -> Change | None:
    """The change of one figure (None when either has no positive value to compare)."""
    if not (_comparable(old) and _comparable(new)):
        return None
    past = [_reading(f) for f in history if f.key == new.key and _comparable(f)]
    session = session_log_sd(past, SESSION_LOG_SD_PRIOR)
    floor = SPECS[new.metric].floor
    return change(figure_what(new.key), _reading(old), _reading(new), session, higher_is_worse=not floor)


def compare_figures(
    old: Sequence[FigureResult], new: Sequence[FigureResult], history: Sequence[FigureResult] = ()
) -> list[tuple[FigureResult, Change]]:
    """Every figure of ``new`` that ``old`` has too, in ``new``'s order, with its change."""
    before = {figure.key: figure for figure in old}
    pairs = ((f, compare_figure(before[f.key], f, history)) for f in new if f.key in before)
    return [(figure, moved) for figure, moved in pairs if moved is not None]
