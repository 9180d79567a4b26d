"""How a transport figure changed between two runs, with its interval, and the gate.

Figures are compared as ratios (new / old) on a log scale, where a req/s and a latency move
alike. The change's variance is each run's own (from its interval: ``(log high - log low) /
2z``) plus twice the between-session variance of the figure: learned from this machine's
stored runs when there are ``MIN_HISTORY`` of them, else ``SESSION_LOG_SD_PRIOR``. "Worse" is the
figure's own direction: lower for a floor (req/s), higher for a ceiling (latency). The gate
fails a test when the low end of the worsening's interval is above the threshold, in percent.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from .figures import SPECS, FigureResult, Metric

CONFIDENCE = 0.95
SESSION_LOG_SD_PRIOR = 0.10
"""Between-session standard deviation of a transport figure's logarithm without history: 10%,
measured (two full runs of the suite on this machine kind, 2026-11-24, 163 figures: the log
ratios' sd over both sessions, 13.7%, over sqrt(2): 9.7%; req/s and p50 3-4%, p95 10%, p99 13%,
stream figures 8-9%). The 6% assumed before failed unchanged code. A tail percentile moves far
more (h3 c=100 p99: 141 ms -> 353 ms between those sessions): gate on it with care."""
MIN_HISTORY = 3
COMPARED = (Metric.RPS, Metric.P50, Metric.P95, Metric.P99, Metric.TTFE, Metric.EVENTS_PER_S, Metric.TOTAL,
            Metric.SCALING, Metric.CLIENT_CPU, Metric.SERVER_CPU)  # fmt: skip
"""Figures with a ratio to compare (failed requests are counts, judged by their own limit)."""


@dataclass(frozen=True)
class FigureChange:
    key: tuple[str, str, Metric]
    old: float
    new: float
    se: float
    """Standard error of log(new / old)."""

    @property
    def metric(self) -> Metric:
        return self.key[2]

    @property
    def change_percent(self) -> float:
        return 100 * (self.new / self.old - 1)

    def _bounds(self) -> tuple[float, float]:
        half = NormalDist().inv_cdf((1 + CONFIDENCE) / 2) * self.se
        ratio = math.log(self.new / self.old)
        return 100 * (math.exp(ratio - half) - 1), 100 * (math.exp(ratio + half) - 1)

    @property
    def interval_percent(self) -> tuple[float, float]:
        return self._bounds()

    @property
    def worse_percent(self) -> tuple[float, float]:
        """The change in the figure's bad direction (positive = worse), as an interval."""
        low, high = self._bounds()
        return (-high, -low) if SPECS[self.metric].floor else (low, high)

    @property
    def significant(self) -> bool:
        low, high = self._bounds()
        return not low <= 0 <= high

    def worse_by_more_than(self, percent: float) -> bool:
        return self.worse_percent[0] > percent

    def describe(self) -> str:
        spec = SPECS[self.metric]
        low, high = self._bounds()
        mark = "" if self.significant else "~ "
        return (
            f"{self.key[1]}: {spec.what} {spec.show(self.old)} -> {spec.show(self.new)} "
            f"({mark}{self.change_percent:+.1f}%, {CONFIDENCE:.0%} CI {low:+.1f}..{high:+.1f}%)"
        )


def _log_se(figure: FigureResult) -> float:
    reading = figure.reading
    if reading.low <= 0 or reading.high <= 0 or reading.low == reading.high:
        return 0.0
    return (math.log(reading.high) - math.log(reading.low)) / (2 * NormalDist().inv_cdf((1 + CONFIDENCE) / 2))


def _comparable(figure: FigureResult) -> bool:
    return (
        figure.measured
        and figure.metric in COMPARED
        and figure.reading.value > 0
        and math.isfinite(figure.reading.value)
    )


def session_log_sd(history: Iterable[FigureResult], key: tuple[str, str, Metric]) -> float:
    values = [math.log(f.reading.value) for f in history if f.key == key and _comparable(f)]
    if len(values) < MIN_HISTORY:
        return SESSION_LOG_SD_PRIOR
    return float(np.std(values, ddof=1))


def compare_figure(old: FigureResult, new: FigureResult, history: Sequence[FigureResult] = ()) -> FigureChange | None:
    """The change of one figure (None when either has no positive value to compare)."""
    if not (_comparable(old) and _comparable(new)):
        return None
    session = session_log_sd(history, new.key)
    se = math.sqrt(_log_se(old) ** 2 + _log_se(new) ** 2 + 2 * session**2)
    return FigureChange(new.key, old.reading.value, new.reading.value, se)


def compare_figures(
    old: Sequence[FigureResult], new: Sequence[FigureResult], history: Sequence[FigureResult] = ()
) -> list[FigureChange]:
    """Every figure of ``new`` that ``old`` has too, in ``new``'s order."""
    before = {figure.key: figure for figure in old}
    changes = (compare_figure(before[f.key], f, history) for f in new if f.key in before)
    return [change for change in changes if change is not None]
