"""Intervals of a transport figure from its repeated readings (:mod:`overheadbench.transport.recording`):
a quantile's from order statistics, a mean's by Student's t, a ratio of two means' by the delta
method. A pair's ratio has its own estimator (:mod:`overheadbench.engine.stats`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from .student import t_quantile


def quantile_interval(values: Sequence[float] | np.ndarray, q: float, confidence: float) -> tuple[float, float, float]:
    """The ``q`` quantile of ``values`` and a distribution-free interval for it: the order
    statistics whose ranks bound Binomial(n, q) at ``confidence`` (normal approximation, as
    for large n; the full range when n is too small to reach the level)."""
    ordered = np.sort(np.asarray(values, float))
    n = ordered.size
    if n == 0:
        raise ValueError("no samples")
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    spread = z * math.sqrt(n * q * (1 - q))
    low = max(math.floor(n * q - spread) - 1, 0)
    high = min(math.ceil(n * q + spread), n - 1)
    return float(np.quantile(ordered, q)), float(ordered[low]), float(ordered[high])


def mean_interval(values: Sequence[float] | np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean and Student's t interval (a single value: itself, with no width)."""
    array = np.asarray(values, float)
    if array.size == 0:
        raise ValueError("no samples")
    mean = float(array.mean())
    if array.size < 2:
        return mean, mean, mean
    half = t_quantile((1 + confidence) / 2, array.size - 1) * float(array.std(ddof=1)) / math.sqrt(array.size)
    return mean, mean - half, mean + half


def ratio_interval(
    numerator: Sequence[float] | np.ndarray, denominator: Sequence[float] | np.ndarray, confidence: float
) -> tuple[float, float, float]:
    """mean(numerator) / mean(denominator), with a delta-method interval from each mean's
    standard error (independent samples: two separate measurements)."""
    top, bottom = np.asarray(numerator, float), np.asarray(denominator, float)
    if top.size == 0 or bottom.size == 0 or bottom.mean() <= 0:
        return math.nan, math.nan, math.nan
    ratio = float(top.mean() / bottom.mean())
    if top.size < 2 or bottom.size < 2 or ratio <= 0:
        return ratio, ratio, ratio
    relative = math.sqrt(
        top.var(ddof=1) / top.size / top.mean() ** 2 + bottom.var(ddof=1) / bottom.size / bottom.mean() ** 2
    )
    df = min(top.size, bottom.size) - 1
    half = t_quantile((1 + confidence) / 2, df) * relative * ratio
    return ratio, ratio - half, ratio + half
