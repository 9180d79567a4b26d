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

import math
from collections.abc import Generator
from typing import Any

from .samples import Side
from .vocabulary import Counter

COUNT_REPEATS = 5
COUNT_WARMUP_BLOCKS = 1
COUNT_MAX_CALLS = 16
"""Calls per block counting bytecode (each instruction is a Python callback: ~100x slower)."""
CALLGRIND_MAX_CALLS = 256
"""... and counting machine instructions: a block's own requests and the interpreter's warm-up
(specialising a call site takes ~100 calls) move a block's count by ~1,000-2,000 instructions;
over 256 calls that is a few per call, and a warmed block of 256 reads the same +-4 instructions
every time (json.dumps under callgrind here; 16 calls read +-60 per call)."""
COUNT_BLOCK_S = 0.01
"""Uninstrumented wall time a counted block aims at: slow callables get fewer calls."""
TIME_PROBE_S = 0.25
"""Count mode also times the same calls this long in its own process (real clock), to check the counts."""
UNDERSTATED_FACTOR = 2.0
"""The counts understate the framework path when its time ratio is more than this times its
instruction ratio (compiled code, I/O or sleeping on that side: pydantic 3x, msgpack 3.2x here)."""
OVERSTATED_FACTOR = 4.0
"""... and overstate it when the instruction ratio is more than this times the time ratio: a
Python middleware around a baseline that works in C reads 2.5-3x (instructions cost unequal
time), which is expected of bytecode counts and not warned about below this."""
OPPOSITE_FLOOR = 0.10
"""Either way, overheads of opposite signs, each beyond this (10%), disagree."""


def count_calls(slowest_call_s: float, most: int = COUNT_MAX_CALLS) -> int:
    """Calls per counted block: a power of two up to ``most``, fewer for slow callables."""
    calls = most
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


UNSEEN = {
    Counter.BYTECODE: "the counter counts Python bytecode only, so work in compiled code (C or Rust extensions), "
    "system calls, I/O or sleeping is invisible to it",
    Counter.CALLGRIND: "the counter counts the machine instructions this process executes, so waiting (I/O, "
    "sleeping, locks, other processes) and memory stalls cost time and no instructions",
}
"""What each counter cannot see: the likely cause when its counts and the time disagree."""


def disagreement(nodeid: str, count_ratio: float, time_ratio: float, counter: Counter = Counter.BYTECODE) -> str | None:
    """Why the counts may mislead, when the instruction ratio and the time ratio (framework /
    baseline) of the same calls disagree (see the factors above); None when they agree or either
    is not a ratio. What the counter cannot see (:data:`UNSEEN`) costs time and few or no
    instructions: compiled code for the bytecode counter, waiting for either."""
    if not (count_ratio > 0 and time_ratio > 0 and math.isfinite(count_ratio) and math.isfinite(time_ratio)):
        return None
    figures = (
        f"{nodeid}: count mode reads {count_ratio - 1:+.1%} in instructions, but timing the same calls reads "
        f"{time_ratio - 1:+.1%}"
    )
    opposite = (count_ratio - 1) * (time_ratio - 1) < 0 and min(
        abs(count_ratio - 1), abs(time_ratio - 1)
    ) > OPPOSITE_FLOOR
    if time_ratio > UNDERSTATED_FACTOR * count_ratio or (opposite and time_ratio > count_ratio):
        return f"{figures}: {UNSEEN[counter]}, on the framework path here. Judge this pair in time mode"
    if count_ratio > OVERSTATED_FACTOR * time_ratio or opposite:
        return (
            f"{figures}: the baseline's time is mostly what the counter does not see ({UNSEEN[counter]}), so the "
            f"instruction ratio overstates what the framework path costs. Judge this pair in time mode"
        )
    return None
