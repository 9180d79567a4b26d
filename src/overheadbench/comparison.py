"""Compare two runs pair by pair: old and new overhead, the change, and whether it is real.

Significance is a two-sided Mann–Whitney U test on the per-process median ratios of the two
runs. Processes are the independent units here (the spread between fresh processes is far
larger than any one process's sampling noise), and the test assumes nothing about the
shape of that clustered, heavy-tailed spread. A change that is not significant prints as
"~", as benchstat does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Protocol

import numpy as np

from .samples import ReplicaSamples
from .settings import Mode
from .stats import pair_ratios

ALPHA = 0.05


class Compared(Protocol):
    """What a comparison reads of a result (:class:`~overheadbench.results.OverheadResult` has it)."""

    @property
    def nodeid(self) -> str: ...

    @property
    def mode(self) -> Mode: ...

    @property
    def overhead(self) -> float: ...

    @property
    def measured(self) -> bool: ...

    @property
    def samples(self) -> list[ReplicaSamples]: ...


@dataclass(frozen=True)
class Change:
    """One test in both runs. Overheads are fractions; ``delta_points`` is in percentage points."""

    nodeid: str
    old: float
    new: float
    p_value: float
    exact: bool = False
    """Count mode: both figures are exact counts, so any difference is a real change."""

    @property
    def delta_points(self) -> float:
        return 100 * (self.new - self.old)

    @property
    def significant(self) -> bool:
        return self.new != self.old if self.exact else self.p_value < ALPHA

    @property
    def evidence(self) -> str:
        """The p-value as printed, or "exact" for counts."""
        return "exact" if self.exact else f"{self.p_value:.3g}"

    def regressed_by_more_than(self, points: float) -> bool:
        return self.significant and self.delta_points > points

    def describe(self) -> str:
        """e.g. ``12.0% -> 31.5% (+19.5 points, p=0.001)`` or ``... (~ +0.3 points, p=0.62)``."""
        mark = "" if self.significant else "~ "
        return (
            f"{100 * self.old:.1f}% -> {100 * self.new:.1f}% "
            f"({mark}{self.delta_points:+.1f} points, {'exact counts' if self.exact else f'p={self.evidence}'})"
        )


def process_ratios(result: Compared) -> list[float]:
    """Each process's median pair ratio, from a result's raw samples."""
    return [float(np.median(pair_ratios(s.baseline_ns, s.framework_ns))) for s in result.samples if s.baseline_ns]


def mann_whitney_p(first: Sequence[float], second: Sequence[float]) -> float:
    """Two-sided p-value of the Mann–Whitney U test (normal approximation, tie and continuity corrected)."""
    n1, n2 = len(first), len(second)
    if n1 == 0 or n2 == 0:
        return math.nan
    values = np.concatenate([np.asarray(first, float), np.asarray(second, float)])
    order = values.argsort(kind="mergesort")
    ranks = np.empty(values.size)
    sorted_values = values[order]
    start = 0
    ties = 0.0
    while start < values.size:  # average ranks over ties
        end = start
        while end + 1 < values.size and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2 + 1
        count = end - start + 1
        ties += count**3 - count
        start = end + 1
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    mean = n1 * n2 / 2
    variance = n1 * n2 / 12 * ((n1 + n2 + 1) - ties / ((n1 + n2) * (n1 + n2 - 1)))
    if variance <= 0:
        return 1.0
    z = (abs(u - mean) - 0.5) / math.sqrt(variance)
    return min(1.0, 2 * (1 - NormalDist().cdf(max(z, 0.0))))


def compare_runs(old_results: Sequence[Compared], new_results: Sequence[Compared]) -> list[Change]:
    """A :class:`Change` for every test measured in both runs (by node id) in the same mode
    (a time overhead and an instruction overhead are different figures), in the new run's order."""
    old_by_id = {r.nodeid: r for r in old_results if r.measured}
    return [
        compare_result(old_by_id[r.nodeid], r)
        for r in new_results
        if r.measured and r.nodeid in old_by_id and old_by_id[r.nodeid].mode == r.mode
    ]


def compare_result(old: Compared, new: Compared) -> Change:
    if new.mode == Mode.COUNT:
        return Change(new.nodeid, old.overhead, new.overhead, math.nan, exact=True)
    return Change(new.nodeid, old.overhead, new.overhead, mann_whitney_p(process_ratios(old), process_ratios(new)))
