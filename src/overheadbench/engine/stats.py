"""The estimator and its interval; no timing, no printing.

* Within one process the overhead is the **median of pair ratios** (framework block /
  baseline block, each pair timed back to back), with a distribution-free order-statistic
  interval for that median.
* Across processes the ratio itself moves: code and heap layout (ASLR, hash seed) make
  the same pair 1–3 points faster or slower in one fresh process than in the next, far
  more than the within-process interval, in clusters and with a heavy tail (a process in
  twenty lands several points away). So with several replica processes the estimate is
  a **robust weighted mean of their medians** (Huber's), each weighed by its own precision and the
  spread between processes, and its interval is Student's t on the log scale with that
  estimate's standard error (:func:`pool`, a random-effects combination): it carries the
  between-process variance, as pyperf's replicated means do, and a process whose own blocks
  were preempted (a wide interval of its own) counts little instead of moving the estimate
  (on a busy runner such processes made intervals of ±100-270%, issue 45). A heavy-tailed
  process widens it through the spread seen, never hides. The
  distribution-free order-statistic interval used before is, at 6 processes, the range of
  the processes, which one process in a bad layout set: on the suite's middleware pairs it
  was 1.2-1.7 times what the estimate's spread across sessions needs (issue 24,
  ``validation/ab_gate.py intervals``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

CONFIDENCE = 0.95
"""Of every two-sided interval read off a process or a change ("~" when a change's contains zero;
the gate reads its ends)."""
MEDIAN_FROM = 6
"""Processes from which the estimate is their median (fewer: their mean)."""
HUBER_K = 1.345
"""Where a process's figure stops counting in full: this many of its own standard deviations
(its variance plus the spread between processes) from the centre. Huber's constant: 95% of the
mean's efficiency for normal spread, and a bounded pull from any one process."""
HUBER_EFFICIENCY = 1.0252
"""Standard error of Huber's estimate at ``HUBER_K`` over that of a mean, for normal spread
(sqrt(1.051); a median's is sqrt(pi/2) = 1.2533, the price issue 45's gate could not pay)."""
HUBER_ITERATIONS = 50
"""Reweighting rounds at most (it settles in a handful: the start is the weighted median)."""
MIN_WITHIN_SD = 1e-4
"""The least a process's own log sd is taken to be (0.01%): its ratios all agreeing is luck, not exactness."""
BIG_VARIANCE = 1.0
"""A process's own variance is taken as at most this (a log sd of 1: a factor of e), so that one
with no interval at all still has a weight, however small."""


@dataclass(frozen=True)
class Pooled:
    """Processes' log values pooled: Huber's weighted centre, its standard error and degrees of
    freedom, the spread between processes beyond their own precision (``between_sd``, on the log
    scale), and whether the processes disagree beyond their own precision (Cochran's Q over its
    99% chi-square quantile)."""

    centre: float
    se: float
    df: int
    between_sd: float
    disagree: bool


def within_variance(low: float, high: float, confidence: float) -> float:
    """A process's own variance of its log figure, read off its interval at ``confidence``
    (never below ``MIN_WITHIN_SD`` squared: a process whose ratios all agreed is not exact)."""
    if not (0 < low <= high) or not math.isfinite(high):
        return math.inf
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    return max((math.log(high) - math.log(low)) / (2 * z), MIN_WITHIN_SD) ** 2


def pool(logs: Sequence[float] | np.ndarray, variances: Sequence[float] | np.ndarray) -> Pooled:
    """Pool per-process log figures ``logs`` with their own ``variances`` (random effects).

    Each process weighs ``1 / (its variance + between²)``: a process with ten preempted blocks
    has a wide interval of its own and counts little; where the processes' precision is alike
    (the usual case: the spread is layout), the weights are equal. ``between²`` is the spread
    beyond the processes' own precision, from the median absolute deviation so that one
    process in a bad layout cannot set it. The centre is Huber's weighted estimate
    (:func:`huber_centre`: one such process pulls it by at most ``HUBER_K`` of its own standard
    deviations, weighed as one of ``k``); its standard error is Huber's (``HUBER_EFFICIENCY``)
    over the larger of the model's and the weighted spread actually seen (Hartung-Knapp), so a
    heavy tail widens the interval, never hides. Huber's rather than the median: as robust to
    one process, with 0.82 times the median's interval (on the same samples of four gated
    sessions on a busy runner the median left 4 of 8 pairs of a +6% change unknown at a 2%
    gate, Huber's 1: validation/BUSY_RUNNER.md).
    """
    y = np.asarray(logs, float)
    v = np.minimum(np.asarray(variances, float), BIG_VARIANCE)
    k = y.size
    mad = 1.4826 * float(np.median(np.abs(y - np.median(y))))
    between2 = max(0.0, mad**2 - float(np.median(v)))
    weights = 1.0 / (v + between2)
    centre = huber_centre(y, weights)
    model = 1.0 / float(weights.sum())
    seen = _weighted_squares(y, weights) / ((k - 1) * float(weights.sum()))
    se = HUBER_EFFICIENCY * math.sqrt(max(model, seen))
    q = _weighted_squares(y, 1.0 / v)  # Cochran's Q: the processes' own precision alone
    return Pooled(centre, se, k - 1, math.sqrt(between2), q > chi2_quantile(0.99, k - 1))


def _weighted_squares(values: np.ndarray, weights: np.ndarray) -> float:
    """The weighted sum of squared deviations from the weighted mean."""
    mean = float((weights * values).sum()) / float(weights.sum())
    return float((weights * (values - mean) ** 2).sum())


def huber_centre(values: np.ndarray, weights: np.ndarray) -> float:
    """Huber's M-estimate of the centre of ``values``, each with variance ``1 / weights``: the
    weighted mean where every value lies within ``HUBER_K`` of its standard deviations of it; a
    value farther out counts as if it lay at that distance. Iteratively reweighted from the
    weighted median."""
    centre = weighted_median(values, weights)
    scale = np.sqrt(weights)
    for _ in range(HUBER_ITERATIONS):
        distance = np.abs(values - centre) * scale
        counted = weights * np.minimum(1.0, HUBER_K / np.maximum(distance, HUBER_K * 1e-12))
        moved = float((counted * values).sum() / counted.sum())
        if math.isclose(moved, centre, rel_tol=0.0, abs_tol=1e-12):
            return moved
        centre = moved
    return centre


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The value below which half the weight lies (the middle two's mean on an exact tie)."""
    order = np.argsort(values)
    ordered, cumulative = values[order], np.cumsum(weights[order])
    half = cumulative[-1] / 2
    index = int(np.searchsorted(cumulative, half))
    if math.isclose(float(cumulative[index]), half) and index + 1 < ordered.size:
        return float((ordered[index] + ordered[index + 1]) / 2)
    return float(ordered[index])


def chi2_quantile(p: float, df: int) -> float:
    """The chi-square quantile by Wilson and Hilferty's cube (within ~1% from 2 degrees of freedom)."""
    z = NormalDist().inv_cdf(p)
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def welch_df(*parts: tuple[float, float]) -> int:
    """Welch-Satterthwaite degrees of freedom of a sum of variances, each ``(variance, df)``; a term
    taken as known (an infinite df: the prior, a rule rather than a measurement) adds none, so the
    prior's intervals keep the processes' own degrees of freedom. At least 1."""
    measured = [(variance, df) for variance, df in parts if variance > 0 and math.isfinite(df)]
    if not measured:
        first = parts[0][1]
        return max(1, int(first)) if math.isfinite(first) else 1_000_000
    total = sum(variance for variance, _ in measured)
    return max(1, int(total**2 / sum(variance**2 / df for variance, df in measured)))


def log_halfwidth(low: float, high: float) -> float:
    """Half an overhead interval's width on the log scale of framework / baseline (infinite where
    it has no such width): ±1% reads alike on a 20% pair and a 230% one, as the gate's changes do.
    The stopping rule and the report's "still wider than the target" read this one figure."""
    if low <= -1 or not math.isfinite(low) or not math.isfinite(high):
        return math.inf
    return (math.log1p(high) - math.log1p(low)) / 2


TRIM = 0.2
"""The share of paired differences :func:`trimmed_mean` sets aside at each end."""
TRIM_FROM = 10
"""Fewer values are averaged whole: trimming one of five or eight leaves too few degrees of freedom."""


def trimmed_mean(values: Sequence[float], share: float = TRIM) -> tuple[float, float, int]:
    """The ``share``-trimmed mean of ``values`` (of :data:`TRIM_FROM` or more; the mean of fewer),
    its standard error and degrees of freedom (Yuen's: the winsorised spread over (1 - 2 x share)
    root n, n - 2k - 1 degrees): a centre that the rounds a place spent in another regime cannot
    carry. Two places' stream rounds paired on a busy runner have tails of rounds 20-60% apart (one
    process's client and server on one core, the other's on two); over the same rounds of identical
    trees the plain mean's intervals were up to four times as wide (an SDK stream's time to first
    event -10.4% ±24.2% against -2.9% ±5.7%, validation/STREAMS.md)."""
    ordered = sorted(values)
    count = len(ordered)
    cut = math.floor(share * count) if count >= TRIM_FROM else 0
    kept = ordered[cut : count - cut]
    low, high = ordered[cut], ordered[count - cut - 1]
    winsorised = [min(max(value, low), high) for value in ordered]
    spread = float(np.std(winsorised, ddof=1))
    return float(np.mean(kept)), spread / ((1 - 2 * cut / count) * math.sqrt(count)), count - 2 * cut - 1
