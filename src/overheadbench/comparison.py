"""Compare two runs pair by pair: old and new overhead, the change with its interval, and the gate.

A run's overhead moves for three reasons: sampling inside a process, layout between fresh
processes, and the machine's state between sessions (its load, frequency, cache neighbours).
The first two are in a run's own spread: the per-process medians, whose mean has standard
error ``sd/sqrt(k)`` (a median's is 1.25 times that). The third is common to every process of
a session, so no single run can see it: it is learned from the stored history of the same
machine (the spread of a pair's estimates across stored runs beyond what their own spreads
explain) or, without enough history, taken as a prior measured for this project
(``benchmarks/validation/gate.py``).

The change ``new - old`` then has variance ``se_new² + se_old² + 2·sd_session²`` and a Student
t interval (Welch's degrees of freedom). It is significant when its two-sided interval
excludes zero (else it prints "~", as benchstat does), and the gate fails a test when the
interval's low end is above the threshold: a regression larger than the threshold, with
confidence (97.5%, one-sided). Count mode compares exact counts: any difference is real.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .samples import ReplicaSamples
from .settings import Mode
from .stats import pair_ratios, t_quantile

CONFIDENCE = 0.95
"""Of the change's two-sided interval: "~" when it contains zero; the gate reads its low end."""
MEDIAN_EFFICIENCY = 1.2533
"""Standard error of a median over that of a mean, for normal spread (sqrt(pi/2))."""
SESSION_SD_PRIOR = 0.005
"""Between-session standard deviation of a pair's overhead (a fraction) when the machine has
too little history for the pair: measured here by gate.py (see docs/baselines.md)."""
SESSION_SHARE_PRIOR = 1.25
"""...or this multiple of the run's own between-process standard deviation, if larger: a pair
that is noisy between processes is noisy between sessions too (gate.py, 8 sessions here: the
between-session sd was 0 to 1.7 times the between-process sd, at most 1.3 for all pairs but one)."""
MIN_HISTORY = 3
"""Stored runs of a pair on this machine needed to learn its own between-session spread."""


class Compared(Protocol):
    """What a comparison reads of a result (:class:`~overheadbench.results.OverheadResult` has it)."""

    @property
    def nodeid(self) -> str: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def overhead(self) -> float: ...

    @property
    def measured(self) -> bool: ...

    @property
    def samples(self) -> list[ReplicaSamples]: ...


@dataclass(frozen=True)
class Spread:
    """A run's overhead for one pair with its standard error and degrees of freedom."""

    overhead: float
    se: float
    df: float
    process_sd: float


def spread(result: Compared) -> Spread:
    """The overhead of ``result`` and its within-run standard error, from its processes' medians."""
    medians = process_ratios(result)
    k = len(medians)
    sd = float(np.std(medians, ddof=1)) if k >= 2 else 0.0
    se = sd / math.sqrt(k) * (MEDIAN_EFFICIENCY if k >= 6 else 1.0) if k else 0.0
    return Spread(result.overhead, se, max(k - 1, 1), sd)


def session_sd(history: Iterable[Compared], nodeid: str, mode: Mode, process_sd: float) -> tuple[float, float]:
    """The pair's between-session standard deviation on this machine, and its degrees of
    freedom: learned from ``history`` (stored runs of the same machine) when it holds the pair
    ``MIN_HISTORY`` times, else the prior (infinite degrees of freedom)."""
    past = [spread(r) for r in history if r.measured and r.nodeid == nodeid and r.mode == mode]
    past = [s for s in past if math.isfinite(s.overhead)]
    prior = max(SESSION_SD_PRIOR, SESSION_SHARE_PRIOR * process_sd)
    if len(past) < MIN_HISTORY:
        return prior, math.inf
    excess = float(np.var([s.overhead for s in past], ddof=1)) - float(np.mean([s.se**2 for s in past]))
    return math.sqrt(max(excess, 0.0)), len(past) - 1


@dataclass(frozen=True)
class Change:
    """One test in both runs. Overheads are fractions; ``delta_points`` is in percentage points;
    ``se`` is the change's standard error (a fraction) and ``df`` its degrees of freedom."""

    nodeid: str
    old: float
    new: float
    se: float = 0.0
    df: float = math.inf
    exact: bool = False
    """Count mode: both figures are exact counts, so any difference is a real change."""

    @property
    def delta_points(self) -> float:
        return 100 * (self.new - self.old)

    def _quantile(self, level: float) -> float:
        return float(t_quantile(level, max(1, round(self.df)))) if math.isfinite(self.df) else _normal(level)

    @property
    def interval_points(self) -> tuple[float, float]:
        """The change's two-sided interval at ``CONFIDENCE``, in points."""
        half = 0.0 if self.exact else 100 * self._quantile((1 + CONFIDENCE) / 2) * self.se
        return self.delta_points - half, self.delta_points + half

    @property
    def significant(self) -> bool:
        low, high = self.interval_points
        return self.new != self.old if self.exact else not low <= 0 <= high

    @property
    def evidence(self) -> str:
        """The interval as printed, or "exact" for counts."""
        if self.exact:
            return "exact"
        low, high = self.interval_points
        return f"{low:+.1f}..{high:+.1f}"

    def regressed_by_more_than(self, points: float) -> bool:
        """The gate: the low end of the change's interval is above ``points`` (the same interval
        as printed, so a change marked "~" never fails it)."""
        if self.exact:
            return self.delta_points > points
        return self.interval_points[0] > points

    def describe(self) -> str:
        """e.g. ``12.0% -> 31.5% (+19.5 points, 95% CI +15.2..+23.8)`` or ``... (~ +0.3 points, ...)``."""
        mark = "" if self.significant else "~ "
        evidence = "exact counts" if self.exact else f"{CONFIDENCE:.0%} CI {self.evidence}"
        return f"{100 * self.old:.1f}% -> {100 * self.new:.1f}% ({mark}{self.delta_points:+.1f} points, {evidence})"


def _normal(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(level)


def process_ratios(result: Compared) -> list[float]:
    """Each process's median pair ratio, from a result's raw samples."""
    return [float(np.median(pair_ratios(s.baseline_ns, s.framework_ns))) for s in result.samples if s.baseline_ns]


def compare_runs(
    old_results: Sequence[Compared], new_results: Sequence[Compared], history: Sequence[Compared] = ()
) -> list[Change]:
    """A :class:`Change` for every test measured in both runs (by node id) in the same mode and
    at the same concurrency (a time overhead and an instruction overhead are different figures,
    as are one caller's and 64 callers'), in the new run's order;
    ``history``: the stored results of the same machine, for each pair's between-session spread."""
    old_by_id = {r.nodeid: r for r in old_results if r.measured}
    return [
        compare_result(old_by_id[r.nodeid], r, history)
        for r in new_results
        if r.measured and r.nodeid in old_by_id and comparable(old_by_id[r.nodeid], r)
    ]


def comparable(old: Compared, new: Compared) -> bool:
    """Whether two results of one test measured the same figure (mode and callers)."""
    return old.mode == new.mode and old.concurrency == new.concurrency


def compare_result(old: Compared, new: Compared, history: Sequence[Compared] = ()) -> Change:
    if new.mode == Mode.COUNT:
        return Change(new.nodeid, old.overhead, new.overhead, exact=True)
    before, after = spread(old), spread(new)
    session, session_df = session_sd(history, new.nodeid, new.mode, max(before.process_sd, after.process_sd))
    parts = [(before.se**2, before.df), (after.se**2, after.df), (2 * session**2, session_df)]
    variance = sum(v for v, _ in parts)
    denominator = sum(v**2 / df for v, df in parts if math.isfinite(df) and v > 0)
    df = variance**2 / denominator if denominator > 0 else math.inf
    return Change(new.nodeid, old.overhead, new.overhead, math.sqrt(variance), df)
