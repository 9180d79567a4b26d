"""How a transport figure changed between two runs: its :class:`~overheadbench.engine.changes.Change`.

A figure's own error comes from its interval (``(log high - log low) / 2z``); between two
stored runs the change adds twice the figure's between-session variance on this machine,
learned from the stored runs' values beyond their own errors (``MIN_HISTORY`` of them), else
the figure's measured prior (:func:`~overheadbench.transport.metrics.session_prior`). "Worse" is the figure's own
direction: lower for a floor (req/s), higher for a ceiling (latency). A pair's change is
compared as its ratio (framework / baseline); an added cost, which may be zero or negative, is
judged by its own budget only.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..engine.changes import Change, Gate, LogEstimate, StoredChange, change, interval_estimate, session_log_sd
from ..transport.metrics import SPECS, FigureKey, Measure, session_prior
from ..transport.results import FigureResult, comparable, compared_values


def figure_what(key: FigureKey) -> str:
    """A figure's name in a change: ``<test>: <row> <metric>`` (a pair's: ``... <metric> ratio``)."""
    return f"{key[0]}: {key[1]} {key[2].value}" + (" ratio" if key[3] == Measure.CHANGE else "")


def _reading(figure: FigureResult) -> LogEstimate:
    return interval_estimate(*compared_values(figure))


def learned_session_sd(key: FigureKey, history: Sequence[FigureResult]) -> float | None:
    """The figure's between-session spread learned from ``history`` (None: too few stored runs)."""
    past = [_reading(f) for f in history if f.key == key and comparable(f)]
    sd, df = session_log_sd(past, math.nan)
    return None if math.isinf(df) else sd


def compare_figure(old: FigureResult, new: FigureResult, history: Sequence[FigureResult] = ()) -> Change | None:
    """The change of one figure (None when either has no positive value to compare)."""
    if not (comparable(old) and comparable(new)):
        return None
    past = [_reading(f) for f in history if f.key == new.key and comparable(f)]
    session = session_log_sd(past, session_prior(new.metric, new.measure))
    floor = SPECS[new.metric].floor
    return change(figure_what(new.key), _reading(old), _reading(new), session, higher_is_worse=not floor)


def compare_figures(
    old: Sequence[FigureResult], new: Sequence[FigureResult], history: Sequence[FigureResult] = ()
) -> list[tuple[FigureResult, Change]]:
    """Every figure of ``new`` that ``old`` has too, in ``new``'s order, with its change."""
    before = {figure.key: figure for figure in old}
    pairs = ((f, compare_figure(before[f.key], f, history)) for f in new if f.key in before)
    return [(figure, moved) for figure, moved in pairs if moved is not None]


@dataclass
class StoredFigures:
    """The transport figures' side of the stored-run gate (:class:`~overheadbench.history.gate.StoredRuns`):
    the compared run's figures (none: no run compared), this machine's stored ones (each figure's
    between-session spread), and the figures' gate."""

    gate: Gate
    old: dict[FigureKey, FigureResult] | None = None
    history: list[FigureResult] = field(default_factory=list)

    def session_sd(self, key: FigureKey) -> float | None:
        """How far a transport figure moves between sessions on this machine, learned from its
        stored runs (None without enough of them: the figure's prior applies)."""
        return learned_session_sd(key, self.history)

    def with_changes(self, figures: Sequence[FigureResult]) -> list[FigureResult]:
        """The figures, each carrying its change against the stored run where the run has it."""
        if self.old is None:
            return list(figures)
        found = compare_figures(list(self.old.values()), figures, self.history)
        changes = {figure.key: StoredChange(self.gate.reference, change) for figure, change in found}
        return [dataclasses.replace(figure, stored=changes.get(figure.key)) for figure in figures]
