"""A transport figure's reading in a stored run's history: a row's own figure (``h2c c=10 p95``),
its log with the standard error of its interval, its spread between sessions, its limit, and its
link (its change over the base tree where the run was linked)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..core.vocabulary import Role
from ..engine.changes import interval_estimate
from ..engine.readings import Reading, link_of
from .metrics import SPECS, Measure
from .results import FigureResult


def figure_readings(figures: Sequence[FigureResult], linked: str) -> list[Reading]:
    """The readings of a run's measured figures a series can follow (``linked``: the run's linked commit)."""
    return [_figure_reading(f, linked) for f in figures if f.measured and _indexed_figure(f)]


def _indexed_figure(figure: FigureResult) -> bool:
    """A transport figure a series can follow: a row's own reading, positive."""
    return figure.reading.measure is Measure.FIGURE and figure.reading.value > 0 and figure.reading.metric in SPECS


def _figure_reading(figure: FigureResult, linked: str) -> Reading:
    value = figure.reading
    changes = [p.change for p in figure.places if p.role is Role.BASE] if linked else []
    spec = SPECS[value.metric]
    estimate = interval_estimate(value.value, value.low, value.high)
    return Reading(
        figure.nodeid,
        f"{value.row} {value.metric.value}",
        math.log(value.value),
        estimate.log_se,
        spec.session_sd,
        figure.check.limit,
        not spec.floor,
        False,
        *link_of([(c.old, c.new, c.se) for c in changes]),
    )
