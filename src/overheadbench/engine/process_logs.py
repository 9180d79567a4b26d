"""Each process's log figure with its own variance, and a run's ratio's standard error pooled from them.

Why here, below the kinds' results: a pair's run gives its history reading itself
(:meth:`~overheadbench.pairs.results.OverheadResult.series_reading`), and the comparisons of two
runs or two places (:mod:`overheadbench.pairs.comparing`) read the same processes the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .process_ratio import replica_ratio
from .samples import ReplicaSamples
from .stats import CONFIDENCE, MEDIAN_FROM, pool, within_variance


def process_logs(samples: Sequence[ReplicaSamples]) -> tuple[np.ndarray, np.ndarray]:
    """Each process's log median pair ratio, and its own variance (from its interval)."""

    def ratio(sample: ReplicaSamples) -> tuple[float, float, float] | None:
        return replica_ratio(*sample.estimated_pairs(), 0.0, CONFIDENCE) if sample.baseline_ns else None

    return logs_of(samples, ratio)


def logs_of(
    samples: Sequence[ReplicaSamples], figure: Callable[[ReplicaSamples], tuple[float, float, float] | None]
) -> tuple[np.ndarray, np.ndarray]:
    """Each process's log ``figure`` (its median, low, high; None: the process has none) and its own variance."""
    logs, variances = [], []
    for sample in samples:
        found = figure(sample)
        if found is None:
            continue
        median, low, high = found
        logs.append(math.log(median) if median > 0 else math.nan)
        variances.append(within_variance(low, high, CONFIDENCE))
    return np.asarray(logs, float), np.asarray(variances, float)


def ratio_log_se(samples: Sequence[ReplicaSamples]) -> tuple[float, float]:
    """The standard error of a run's log ratio and its degrees of freedom, as the pair's own
    interval reads it (pooled from ``MEDIAN_FROM`` processes, else their plain spread; 0 and 1
    where fewer than two processes have a finite ratio)."""
    logs, variances = process_logs(samples)
    if logs.size < 2 or not np.all(np.isfinite(logs)):
        return 0.0, 1
    if logs.size < MEDIAN_FROM:
        return float(np.std(logs, ddof=1)) / math.sqrt(logs.size), logs.size - 1
    pooled = pool(logs, variances)
    return pooled.se, pooled.df
