"""The estimator and its interval; no timing, no printing.

* Within one process the overhead is the **median of pair ratios** (framework block /
  baseline block, each pair timed back to back), with a distribution-free order-statistic
  interval for that median.
* Across processes the ratio itself moves: code and heap layout (ASLR, hash seed) make
  the same pair 1–3 points faster or slower in one fresh process than in the next, far
  more than the within-process interval, with a heavy tail (a process in twenty lands
  several points away). So with several replica processes the estimate is the 20%-trimmed
  mean of their medians and the interval a Tukey–McLaughlin t interval over those replicas:
  it carries the between-process variance, as pyperf's replicated means do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

import numpy as np

TRIM = 0.2
"""Share of process medians trimmed from each end (g = floor(0.2 k))."""
WITHIN_PROCESS = "within-process"
BETWEEN_PROCESSES = "between-processes"


@dataclass(frozen=True)
class Estimate:
    """A ratio (framework / baseline) with a two-sided interval at ``confidence``."""

    ratio: float
    low: float
    high: float
    confidence: float
    method: str
    """``between-processes`` (t over replica medians) or ``within-process`` (one process only)."""

    @property
    def overhead(self) -> float:
        return self.ratio - 1

    @property
    def overhead_ci(self) -> tuple[float, float]:
        return (self.low - 1, self.high - 1)

    @property
    def halfwidth(self) -> float:
        return (self.high - self.low) / 2


def pair_ratios(baseline_ns: Sequence[float], framework_ns: Sequence[float], offset_ns: float = 0.0) -> np.ndarray:
    """framework/baseline per pair, after removing ``offset_ns`` from each block (floor 1 ns)."""
    baseline = np.maximum(np.asarray(baseline_ns, float) - offset_ns, 1.0)
    framework = np.maximum(np.asarray(framework_ns, float) - offset_ns, 1.0)
    return framework / baseline


def median_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Median and a distribution-free interval from order statistics.

    The number of values below the true median is Binomial(n, 1/2); the ranks
    ``n/2 ± z·√n/2`` bound it at the requested confidence (normal approximation,
    good from ~10 values; below that the interval is the full range).
    """
    ordered = np.sort(np.asarray(values, float))
    n = ordered.size
    if n == 0:
        raise ValueError("no samples")
    median = float(np.median(ordered))
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    spread = z * math.sqrt(n) / 2
    low_rank = max(0, math.floor(n / 2 - spread) - 1)
    high_rank = min(n - 1, math.ceil(n / 2 + spread))
    return median, float(ordered[low_rank]), float(ordered[high_rank])


def t_quantile(p: float, df: int) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom (bisection on a Simpson CDF).

    numpy has no t distribution and scipy is not a dependency; this is exact to ~1e-6,
    which is far below anything a timing interval can resolve.
    """
    if not 0 < p < 1 or df < 1:
        raise ValueError("p must be in (0, 1) and df >= 1")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def cdf(t: float) -> float:
        x = np.linspace(0.0, t, 4001)
        density = np.exp(log_norm - (df + 1) / 2 * np.log1p(x * x / df))
        h = t / 4000
        area = h / 3 * (density[0] + density[-1] + 4 * density[1:-1:2].sum() + 2 * density[2:-1:2].sum())
        return 0.5 + float(area)

    low, high = 0.0, 1.0
    while cdf(high) < p:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        if cdf(middle) < p:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def replica_ratio(baseline_ns: Sequence[float], framework_ns: Sequence[float], offset_ns: float, confidence: float) -> tuple[float, float, float]:
    """One process's median pair ratio and its within-process interval."""
    return median_interval(pair_ratios(baseline_ns, framework_ns, offset_ns), confidence)


def combine(replicas: Sequence[tuple[float, float, float]], confidence: float) -> Estimate:
    """Pool per-process ``(median, low, high)`` into one estimate.

    One process: its own interval, labelled within-process (it does not see layout
    effects and is optimistic). Several: the 20%-trimmed mean of the process medians with
    the Tukey–McLaughlin interval (winsorized variance, t with k − 2g − 1 degrees of
    freedom). Fresh processes have a heavy tail (about one in twenty lands several points
    away), and trimming keeps one such process from moving the estimate; with fewer than
    five processes nothing is trimmed and this is the plain mean ± t·s/√k.
    """
    if not replicas:
        raise ValueError("no replicas")
    if len(replicas) == 1:
        median, low, high = replicas[0]
        return Estimate(median, low, high, confidence, WITHIN_PROCESS)
    ordered = np.sort(np.array([r[0] for r in replicas]))
    k = ordered.size
    g = int(TRIM * k)
    kept = ordered[g:k - g]
    winsorized = np.clip(ordered, kept[0], kept[-1])
    centre = float(kept.mean())
    standard_error = float(winsorized.std(ddof=1)) / ((1 - 2 * g / k) * math.sqrt(k))
    half = t_quantile((1 + confidence) / 2, k - 2 * g - 1) * standard_error
    return Estimate(centre, centre - half, centre + half, confidence, BETWEEN_PROCESSES)
