"""One process's figure of a pair: its median pair ratio (or the ratio of its blocks' means) with a
within-process interval; no timing, no pooling (:mod:`overheadbench.engine.stats` pools processes).

* The **median of pair ratios** (framework block / baseline block, each pair timed back to back) with a
  distribution-free order-statistic interval for that median: what a process reads of the typical
  call, robust to a preempted block.
* The **ratio of the blocks' means**, with a delta-method interval: what the average call costs, a
  pause every few hundred calls included; the pair is judged on both where they disagree
  (:func:`~overheadbench.pairs.estimating.judged_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from .student import t_quantile

EXACT_RANKS_UP_TO = 1000
"""Up to this many values the interval's ranks come from the exact binomial distribution."""


def pair_ratios(baseline_ns: Sequence[float], framework_ns: Sequence[float], offset_ns: float = 0.0) -> np.ndarray:
    """framework/baseline per pair, after removing ``offset_ns`` from each block (floor 1 ns)."""
    baseline = np.maximum(np.asarray(baseline_ns, float) - offset_ns, 1.0)
    framework = np.maximum(np.asarray(framework_ns, float) - offset_ns, 1.0)
    return framework / baseline


def median_ranks(n: int, confidence: float) -> tuple[int, int] | None:
    """0-based ranks of the sorted values bounding a distribution-free interval for the median.

    The number of values below the true median is Binomial(n, 1/2); the interval from the
    r-th smallest to the r-th largest misses the median with probability 2·P(B ≤ r − 1).
    r is the largest with that at most ``1 - confidence`` (exact up to
    ``EXACT_RANKS_UP_TO`` values, the normal approximation above). None when even the full
    range cannot reach the confidence (fewer than 6 values at 95%).
    """
    tail = (1 - confidence) / 2
    if n > EXACT_RANKS_UP_TO:
        spread = NormalDist().inv_cdf(1 - tail) * math.sqrt(n) / 2
        r = max(1, math.floor(n / 2 - spread))
        return r - 1, n - r
    r, cumulative, total = 0, 0, 2**n
    while r < n // 2:
        cumulative += math.comb(n, r)
        if cumulative > tail * total:
            break
        r += 1
    return (r - 1, n - r) if r else None


def median_interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Median and its distribution-free interval; the full range when too few values for one."""
    ordered = np.sort(np.asarray(values, float))
    if ordered.size == 0:
        raise ValueError("no samples")
    low, high = median_ranks(ordered.size, confidence) or (0, ordered.size - 1)
    middle = (ordered[(ordered.size - 1) // 2] + ordered[ordered.size // 2]) / 2  # np.median's, of sorted values
    return float(middle), float(ordered[low]), float(ordered[high])


def replica_ratio(
    baseline_ns: Sequence[float], framework_ns: Sequence[float], offset_ns: float, confidence: float
) -> tuple[float, float, float]:
    """One process's median pair ratio and its within-process interval."""
    return median_interval(pair_ratios(baseline_ns, framework_ns, offset_ns), confidence)


def mean_ratio(
    baseline_ns: Sequence[float], framework_ns: Sequence[float], offset_ns: float, confidence: float
) -> tuple[float, float, float]:
    """One process's ratio of its blocks' means (what a call costs on average, a pause every few
    hundred calls included, which the median of pair ratios leaves out) and its interval (the delta
    method on the log of the ratio, the pairs' covariance kept)."""
    baseline = np.maximum(np.asarray(baseline_ns, float) - offset_ns, 1.0)
    framework = np.maximum(np.asarray(framework_ns, float) - offset_ns, 1.0)
    ratio = float(framework.mean() / baseline.mean())
    if baseline.size < 2:
        return ratio, 0.0, math.inf
    relative = np.vstack([framework / framework.mean(), baseline / baseline.mean()])
    covariance = np.cov(relative)
    variance = (covariance[0, 0] + covariance[1, 1] - 2 * covariance[0, 1]) / baseline.size
    half = t_quantile((1 + confidence) / 2, baseline.size - 1) * math.sqrt(max(float(variance), 0.0))
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)
