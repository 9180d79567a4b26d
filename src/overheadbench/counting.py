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

from collections.abc import Generator
from typing import Any

from .samples import Side

COUNT_REPEATS = 5
COUNT_WARMUP_BLOCKS = 1
COUNT_MAX_CALLS = 16
COUNT_BLOCK_S = 0.01
"""Uninstrumented wall time a counted block aims at: slow callables get fewer calls."""


def count_calls(slowest_call_s: float) -> int:
    """Calls per counted block: a power of two up to ``COUNT_MAX_CALLS``, fewer for slow callables."""
    calls = COUNT_MAX_CALLS
    while calls > 1 and calls * slowest_call_s > COUNT_BLOCK_S:
        calls //= 2
    return calls


def count_plan(
    calls: int, harness: bool, repeats: int = COUNT_REPEATS
) -> Generator[tuple[Side, int], Any, dict[Side, list[Any]]]:
    """Warm-up blocks, one harness block (if the instrument needs its harness subtracted),
    then ``repeats`` blocks per side, the order alternating (baseline first, then framework
    first) so neither side always follows the other. Returns each block's raw result by side."""
    for _ in range(COUNT_WARMUP_BLOCKS):
        yield Side.BASELINE, calls
        yield Side.FRAMEWORK, calls
    raw: dict[Side, list[Any]] = {
        Side.BASELINE: [],
        Side.FRAMEWORK: [],
        Side.HARNESS: [(yield Side.HARNESS, calls)] if harness else [],
    }
    for repeat in range(repeats):
        for side in (Side.BASELINE, Side.FRAMEWORK) if repeat % 2 == 0 else (Side.FRAMEWORK, Side.BASELINE):
            raw[side].append((yield side, calls))
    return raw
