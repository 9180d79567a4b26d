"""Count mode's procedure: warm up, count the harness once, then count both sides in turn.

Counts (instructions, allocations) are exact, so there is nothing to estimate: the same
deterministic code gives the same count every time. What can move them is state: caches
warming up, a periodic flush, a time-dependent branch, hash randomisation. So each side is
warmed up, then counted ``COUNT_REPEATS`` times, interleaved; the figure is the median over
the repeats and its range (lowest..highest) is reported as it is, never smoothed: a range
that is not a single value says the code is not deterministic.

The plan has the sampling engine's shape (it asks the drivers in :mod:`overheadbench.engine.sampling`
for blocks and is sent their result), so it runs with sync and async blocks alike.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Generator
from typing import Any

import numpy as np

from ..core.units import format_overheads
from ..core.vocabulary import Counter, Side
from .process_ratio import median_interval, pair_ratios
from .samples import ReplicaSamples
from .settings import Settings

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
ALLOCATION_MAX_CALLS = 4096
ALLOCATION_BLOCK_S = 0.01
"""Allocations are traced in their own, longer blocks (up to ``ALLOCATION_MAX_CALLS`` calls, this
long untraced): what a call *keeps* is only told from bounded state over many calls. Traced, a
call costs ~2.3 us more (the peak's bookkeeping) and allocating code up to ~6x (structlog: 9 us
-> 53 us), so a block of structlog calls, settled and counted, lasts ~0.1 s."""
ALLOCATION_REPEATS = 3
"""... fewer of them (each block settles itself first: no warm-up blocks)."""
PACE_S = 0.002
"""How long a block must last to time a warm call for the allocation pass's block length."""
KEPT_SLACK_BLOCKS = 128
KEPT_SLACK_BYTES = 16 * 1024
"""Memory a block keeps up to these (blocks, bytes) is bounded state, not a per-call leak, and
reads as none: a warmed-up structlog chain keeps 0 to 91 timestamp strings (~58 B each) per
block, whether the block is 16 calls or 4,096, and never more; a leak keeps ``calls`` blocks
or more. So a block of ``n`` calls tells kept memory per call to ``KEPT_SLACK_BLOCKS / n``
(0.03 blocks at 4,096 calls): the figure's resolution, shown with it."""
TIME_PROBE_S = 0.25
"""Count mode also times the same calls this long in its own process (real clock), to check the counts."""
TIME_PROBE_CEILING_S = 2.0
"""... and waits at most this long for the undisturbed blocks a CPU-timed probe wants (its ceiling;
past it, :data:`~overheadbench.engine.sampling.MIN_TIMED_PAIRS` pairs of any kind do). The probe is a
check, not the pair's figure: on the pair's own ceiling (``max_time_s``, 60 s) an HTTP pair whose
client waits on a server process only while xdist's other workers run took 60 s to check its counts,
where 1 s alone."""
UNDERSTATED_FACTOR = 2.0
"""The counts understate the framework path when its time ratio is more than this times its
instruction ratio (compiled code, I/O or sleeping on that side: pydantic 3x, msgpack 3.2x here)."""
OVERSTATED_FACTOR = 4.0
"""... and overstate it when the instruction ratio is more than this times the time ratio: a
Python middleware around a baseline that works in C reads 2.5-3x (instructions cost unequal
time), which is expected of bytecode counts and not warned about below this."""
OPPOSITE_FLOOR = 0.10
"""Either way, overheads of opposite signs, each beyond this (10%), disagree."""


def probe_settings(settings: Settings) -> Settings:
    """The wall-clock probe's settings: one process, one caller, :data:`TIME_PROBE_S` of sampling
    within :data:`TIME_PROBE_CEILING_S`."""
    return dataclasses.replace(
        settings, processes=1, concurrency=1, time_budget_s=TIME_PROBE_S, max_time_s=TIME_PROBE_CEILING_S
    )


def count_calls(slowest_call_s: float, most: int = COUNT_MAX_CALLS, block_s: float = COUNT_BLOCK_S) -> int:
    """Calls per counted block: a power of two up to ``most``, fewer for slow callables."""
    calls = most
    while calls > 1 and calls * slowest_call_s > block_s:
        calls //= 2
    return calls


def allocation_calls(call_s: float) -> int:
    """Calls per block of the allocation pass (see :data:`ALLOCATION_BLOCK_S`), from the time of a
    warm call (:func:`pace_plan`)."""
    return count_calls(call_s, ALLOCATION_MAX_CALLS, ALLOCATION_BLOCK_S)


def pace_plan(most: int = ALLOCATION_MAX_CALLS) -> Generator[tuple[Side, int], int, float]:
    """Seconds per call of the slower side, warm: each side runs blocks of 1, 4, 16... calls (on
    the real clock) until one lasts ``PACE_S`` or holds ``most`` calls, then that block once more,
    the faster of the two read. A first call, which sets caches up, says little of the calls after
    it (a configured structlog chain: ~100 us, then ~10 us); a block the machine preempted reads
    slow, and one slow reading made the allocation blocks so short that a leak of one memory block
    per call read as bounded state (a CI run under load)."""
    per_call = []
    for side in (Side.BASELINE, Side.FRAMEWORK):
        calls, elapsed_ns = 1, (yield side, 1)
        while elapsed_ns < PACE_S * 1e9 and calls < most:
            calls = min(4 * calls, most)
            elapsed_ns = yield side, calls
        elapsed_ns = min(elapsed_ns, (yield side, calls))
        per_call.append(elapsed_ns / calls / 1e9)
    return max(per_call)


def bounded(kept_blocks: int, kept_bytes: int) -> tuple[int, int]:
    """A block's kept memory, with what bounded state explains read as none (see :data:`KEPT_SLACK_BLOCKS`)."""
    return (
        0 if abs(kept_blocks) <= KEPT_SLACK_BLOCKS else kept_blocks,
        0 if abs(kept_bytes) <= KEPT_SLACK_BYTES else kept_bytes,
    )


def kept_resolution(calls: int) -> float:
    """Kept memory blocks per call that a block of ``calls`` calls can tell from none."""
    return KEPT_SLACK_BLOCKS / calls


def count_plan(
    calls: int, harness: bool, repeats: int = COUNT_REPEATS, warmups: int = COUNT_WARMUP_BLOCKS
) -> Generator[tuple[Side, int], Any, dict[Side, list[Any]]]:
    """Warm-up blocks, one harness block (if the instrument needs its harness subtracted),
    then ``repeats`` blocks per side, the order alternating (baseline first, then framework
    first) so neither side always follows the other. Returns each block's raw result by side."""
    for _ in range(warmups):
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


def probe_ratio(probe: ReplicaSamples) -> float:
    """The time probe's framework / baseline: the median pair ratio over its undisturbed pairs where
    they are a sound share (:meth:`~overheadbench.engine.samples.ReplicaSamples.estimated_pairs`). A
    warning judged on every pair fired on a disturbed probe: 446x, where the code reads ~3,800x."""
    return float(np.median(pair_ratios(*probe.estimated_pairs())))


def probe_interval(probe: ReplicaSamples, confidence: float) -> tuple[float, float, float]:
    """The probe's ratio and its within-process interval (its pairs' median, distribution-free)."""
    return median_interval(pair_ratios(*probe.estimated_pairs()), confidence)


def disagreement(nodeid: str, count_ratio: float, time_ratio: float, counter: Counter = Counter.BYTECODE) -> str | None:
    """Why the counts may mislead, when the instruction ratio and the time ratio (framework /
    baseline) of the same calls disagree (see the factors above); None when they agree or either
    is not a ratio. What the counter cannot see (:attr:`~overheadbench.core.vocabulary.Counter.unseen`)
    costs time and few or no instructions: compiled code for the bytecode counter, waiting for either."""
    if not (count_ratio > 0 and time_ratio > 0 and math.isfinite(count_ratio) and math.isfinite(time_ratio)):
        return None
    counted, timed = format_overheads(count_ratio - 1, time_ratio - 1)  # 3,690x as a factor, not +368935.7%
    figures = f"{nodeid}: count mode reads {counted} in instructions, but timing the same calls reads {timed}"
    opposite = (count_ratio - 1) * (time_ratio - 1) < 0 and min(
        abs(count_ratio - 1), abs(time_ratio - 1)
    ) > OPPOSITE_FLOOR
    if time_ratio > UNDERSTATED_FACTOR * count_ratio or (opposite and time_ratio > count_ratio):
        return f"{figures}: {counter.unseen}, on the framework path here. Judge this pair in time mode"
    if count_ratio > OVERSTATED_FACTOR * time_ratio or opposite:
        return (
            f"{figures}: the baseline's time is mostly what the counter does not see ({counter.unseen}), so the "
            f"instruction ratio overstates what the framework path costs. Judge this pair in time mode"
        )
    return None
