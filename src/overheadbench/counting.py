"""Count mode's procedure: warm up, count the harness once, then count both sides in turn.

Counts (instructions, allocations) are exact, so there is nothing to estimate: the same
deterministic code gives the same count every time. What can move them is state: caches
warming up, a periodic flush, a time-dependent branch, hash randomisation. So each side is
warmed up, then counted ``COUNT_REPEATS`` times, interleaved; the figure is the median over
the repeats and its range (lowest..highest) is reported as it is, never smoothed: a range
that is not a single value says the code is not deterministic.

The plan has the sampling engine's shape (it asks the drivers in :mod:`overheadbench.sampling`
for blocks and is sent their result), so it runs with sync and async blocks alike.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .sampling import BASELINE, FRAMEWORK, HARNESS

COUNT_REPEATS = 5
COUNT_WARMUP_BLOCKS = 1
COUNT_MAX_CALLS = 16
COUNT_BLOCK_S = 0.01
"""Uninstrumented wall time a counted block aims at: slow callables get fewer calls."""

INSTRUCTIONS = "instructions"
PEAK_BYTES = "peak_bytes"
KEPT_BLOCKS = "kept_blocks"
KEPT_BYTES = "kept_bytes"

Range = tuple[float, float, float]
"""(median, lowest, highest) over the repeats."""


def count_calls(slowest_call_s: float) -> int:
    """Calls per counted block: a power of two up to ``COUNT_MAX_CALLS``, fewer for slow callables."""
    calls = COUNT_MAX_CALLS
    while calls > 1 and calls * slowest_call_s > COUNT_BLOCK_S:
        calls //= 2
    return calls


def count_plan(
    calls: int, harness: bool, repeats: int = COUNT_REPEATS
) -> Generator[tuple[str, int], Any, dict[str, list[Any]]]:
    """Warm-up blocks, one harness block (if the instrument needs its harness subtracted),
    then ``repeats`` blocks per side, the order alternating (baseline first, then framework
    first) so neither side always follows the other. Returns each block's raw result by side."""
    for _ in range(COUNT_WARMUP_BLOCKS):
        yield BASELINE, calls
        yield FRAMEWORK, calls
    raw: dict[str, list[Any]] = {BASELINE: [], FRAMEWORK: [], HARNESS: [(yield HARNESS, calls)] if harness else []}
    for repeat in range(repeats):
        for side in (BASELINE, FRAMEWORK) if repeat % 2 == 0 else (FRAMEWORK, BASELINE):
            raw[side].append((yield side, calls))
    return raw


@dataclass
class CountSamples:
    """Per-call figures of every counted block, the harness subtracted: ``side -> figure -> values``."""

    calls_per_block: int
    baseline: dict[str, list[float]] = field(default_factory=dict)
    framework: dict[str, list[float]] = field(default_factory=dict)

    def add(self, figures: Sequence[str], raw: dict[str, list[Any]]) -> None:
        """Take one pass's raw block results (a number or a tuple of numbers per block, in
        the order of ``figures``) and store them per call, minus the harness block if any."""
        harness = np.atleast_1d(np.asarray(raw[HARNESS][0], float)) if raw[HARNESS] else 0.0
        for side, store in ((BASELINE, self.baseline), (FRAMEWORK, self.framework)):
            blocks = np.asarray(raw[side], float).reshape(len(raw[side]), -1)
            per_call = (blocks - harness) / self.calls_per_block
            for index, figure in enumerate(figures):
                store[figure] = [float(value) for value in per_call[:, index]]

    def has(self, figure: str) -> bool:
        return figure in self.baseline

    def median(self, side: str, figure: str) -> float:
        return float(np.median((self.baseline if side == BASELINE else self.framework)[figure]))

    def ratio(self, figure: str) -> Range:
        """framework / baseline per repeat (each side at least one, so a zero cannot divide)."""
        base = np.maximum(np.asarray(self.baseline[figure]), 1.0)
        return _range(np.maximum(np.asarray(self.framework[figure]), 1.0) / base)

    def difference(self, figure: str) -> Range:
        """framework - baseline per repeat."""
        return _range(np.asarray(self.framework[figure]) - np.asarray(self.baseline[figure]))

    def deterministic(self, figure: str) -> bool:
        """Whether every repeat of both sides gave one value."""
        return all(len(set(store[figure])) == 1 for store in (self.baseline, self.framework))

    def to_json(self) -> dict[str, Any]:
        return {"calls_per_block": self.calls_per_block, "baseline": self.baseline, "framework": self.framework}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CountSamples:
        return cls(data["calls_per_block"], data["baseline"], data["framework"])


def _range(values: np.ndarray) -> Range:
    return float(np.median(values)), float(values.min()), float(values.max())
