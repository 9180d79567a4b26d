"""The estimator and its interval; no timing, no printing.

* Within one process the overhead is the **median of pair ratios** (framework block /
  baseline block, each pair timed back to back), with a distribution-free order-statistic
  interval for that median.
* Across processes the ratio itself moves: code and heap layout (ASLR, hash seed) make
  the same pair 1–3 points faster or slower in one fresh process than in the next, far
  more than the within-process interval, in clusters and with a heavy tail (a process in
  twenty lands several points away). So with several replica processes the estimate is
  the **median of their medians**, and its interval is Student's t on the log scale with the
  median's standard error, ``1.2533 · sd / sqrt(k)`` of the processes' log ratios
  (:func:`between_processes`): it carries the between-process variance, as pyperf's
  replicated means do. A heavy-tailed process widens it through the sd, never hides. The
  distribution-free order-statistic interval used before is, at 6 processes, the range of
  the processes, which one process in a bad layout set: on the suite's middleware pairs it
  was 1.2-1.7 times what the estimate's spread across sessions needs (issue 24,
  ``benchmarks/validation/ab_gate.py intervals``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..core.vocabulary import Word

MEDIAN_FROM = 6
"""Processes from which the estimate is their median (fewer: their mean)."""
MEDIAN_EFFICIENCY = 1.2533
"""Standard error of a median over that of a mean, for normal spread (sqrt(pi/2))."""
SESSION_SD = 0.005
"""Between-session standard deviation of a pair's log ratio on this machine kind (0.5%): what
moves every process of a session alike (the machine's load and frequency, the session's
calibrated block sizes), so no single session can see it. Measured by
benchmarks/validation/gate.py on the suite's pairs; held out on lopsided pairs by
benchmarks/validation/lopsided.py, whose 10x-1000x pairs moved 0.6-0.9% between sessions under
within-session intervals of ±1.0-1.3% (pooled coverage 89% without it; see LOPSIDED.md). A
pair's interval includes it; the stored-run gate starts from it (``pair_changes``)."""
EXACT_RANKS_UP_TO = 1000
"""Up to this many values the interval's ranks come from the exact binomial distribution."""


class Method(Word):
    """What the overhead's interval is."""

    BETWEEN_PROCESSES = "between-processes"
    """Over the medians of several fresh processes (time mode)."""
    WITHIN_PROCESS = "within-process"
    """One process's own interval: optimistic, it leaves out between-process variance."""
    COUNTED = "count"
    """The range over repeated counts (count mode)."""


@dataclass(frozen=True)
class Estimate:
    """A ratio (framework / baseline) with a two-sided interval at ``confidence``."""

    ratio: float
    low: float
    high: float
    confidence: float
    method: Method
    """Over the processes' medians, or one process's own interval."""

    @property
    def overhead(self) -> float:
        return self.ratio - 1

    @property
    def overhead_ci(self) -> tuple[float, float]:
        return (self.low - 1, self.high - 1)


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
    return float(np.median(ordered)), float(ordered[low]), float(ordered[high])


@functools.cache
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


def replica_ratio(
    baseline_ns: Sequence[float], framework_ns: Sequence[float], offset_ns: float, confidence: float
) -> tuple[float, float, float]:
    """One process's median pair ratio and its within-process interval."""
    return median_interval(pair_ratios(baseline_ns, framework_ns, offset_ns), confidence)


def combine(replicas: Sequence[tuple[float, float, float]], confidence: float, session_sd: float = 0.0) -> Estimate:
    """Pool per-process ``(median, low, high)`` into one estimate.

    One process: its own interval, labelled within-process (it does not see layout effects
    and is optimistic). ``MEDIAN_FROM`` processes or more: the median of the process medians
    with :func:`between_processes`. Fewer: the mean ± t·s/√k (a median of 3 is no better).
    ``session_sd``: the between-session standard deviation of the log ratio, which no process
    of the session can see, added to the standard error (0: the session's own interval).
    """
    if not replicas:
        raise ValueError("no replicas")
    if len(replicas) == 1:
        median, low, high = replicas[0]
        return Estimate(median, low, high, confidence, Method.WITHIN_PROCESS)
    medians = np.array([r[0] for r in replicas], float)
    if medians.size >= MEDIAN_FROM and bool(np.all(medians > 0)):
        centre, low, high = between_processes(medians, confidence, session_sd)
        return Estimate(centre, low, high, confidence, Method.BETWEEN_PROCESSES)
    centre = float(medians.mean())
    se = math.hypot(float(medians.std(ddof=1)) / math.sqrt(medians.size), centre * session_sd)
    half = t_quantile((1 + confidence) / 2, medians.size - 1) * se
    return Estimate(centre, centre - half, centre + half, confidence, Method.BETWEEN_PROCESSES)


def between_processes(medians: np.ndarray, confidence: float, session_sd: float = 0.0) -> tuple[float, float, float]:
    """The median of per-process ratios and its interval: Student's t (k - 1 degrees of
    freedom) on the log scale, with the median's standard error (``MEDIAN_EFFICIENCY`` times
    the mean's; with ``session_sd`` added, see :func:`combine`). The same standard error is
    what a change between two measurements reads
    (:func:`overheadbench.engine.changes.median_measurement`)."""
    logs = np.log(medians)
    centre = float(np.median(logs))
    se = math.hypot(MEDIAN_EFFICIENCY * float(np.std(logs, ddof=1)) / math.sqrt(logs.size), session_sd)
    half = t_quantile((1 + confidence) / 2, logs.size - 1) * se
    return math.exp(centre), math.exp(centre - half), math.exp(centre + half)


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
