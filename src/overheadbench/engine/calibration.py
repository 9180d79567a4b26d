"""Calibration: how many calls each side's timed block makes, and which clock reads them.

Each side is sized on its own cost to last at least the minimum block, the sides' blocks evened
out, the clock chosen by whether a side waits; then, once warm, sized again where the calls cost
other than the ones they were sized on (a slow start). Written as a generator that asks for blocks
(:mod:`overheadbench.engine.sampling` drives it), so tests size synthetic costs on a fake clock.
"""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from ..core.vocabulary import Side
from .samples import BlockSizes, Timer, Timing
from .settings import Settings

Request = tuple[Side, int]
"""A block to time: which side, how many calls."""

MAX_CALLS_PER_BLOCK = 10_000_000
SAME_SIZE_WITHIN = 4
"""Sides whose calibrated call counts are at most this many times apart share the larger count."""
CALLER_BLOCK_S = 1e-3
"""With concurrent callers a block lasts at least this long per caller: releasing and
gathering a crew of threads costs ~10-50 µs per caller here, which must stay a small share."""
RESIZES = 3
"""Times calibration sizes the blocks again at most, where a side's warm calls cost other than the
calls it was sized on (:func:`calibrate`)."""
RESIZE_FACTOR = 2.0
"""A side's warm cost per call this many times above or below its sizing block's is sized again:
within it, the block is within a power of two of ``min_block_s``, what the sizing's own steps give."""
DURATION_PROBES = 3
"""Blocks of each side timed again at their final size before the shorter side grows to the longer
one's duration; the fastest of them is the side's cost (a preempted call read 13.8 ms instead of 1.4)."""
WAITS_PER_BLOCK = 0.5
"""A side whose calibration blocks made fewer voluntary context switches than this per block
never waits: a block that waits on I/O, a thread or a lock switches at least once per call."""


WARMUP_PAIRS = 5
"""Pairs of blocks a warm-up times at least (here before sizing again, and in every process before sampling)."""
WARMUP_MIN_S = 0.02
"""...and the time it lasts at least."""
WARMUP_CALLS = 2048
"""...and the calls of each side, unless they take past ``WARMUP_CALLS_S``: a slow start is counted in
calls (a cache or a pool filling, key by key), and 1,000 slow calls outlasted a 20 ms warm-up of
8-call blocks, so a process's first pairs were timed cold and its later ones warm."""
WARMUP_CALLS_S = 0.05
"""The longest a warm-up goes on for ``WARMUP_CALLS`` (a 20 µs call's 2,048 calls last 41 ms)."""


def warm_enough(pairs: int, sizes: BlockSizes, spent_ns: float) -> bool:
    """Whether a warm-up of ``pairs`` pairs of blocks at ``sizes``, ``spent_ns`` long, is done: the one rule
    of calibration's warm-up and every process's."""
    if pairs < WARMUP_PAIRS or spent_ns < WARMUP_MIN_S * 1e9:
        return False
    return pairs * min(sizes.baseline, sizes.framework) >= WARMUP_CALLS or spent_ns >= WARMUP_CALLS_S * 1e9


def min_block_ns(settings: Settings) -> float:
    """How long a block must last: ``min_block_s``, and with concurrent callers ``CALLER_BLOCK_S`` per caller."""
    callers = settings.concurrency
    return (settings.min_block_s if callers == 1 else max(settings.min_block_s, callers * CALLER_BLOCK_S)) * 1e9


def calibrate(settings: Settings) -> Generator[Request, int, BlockSizes]:
    """The pair's block sizes and clock (:func:`size_blocks`), sized again after a warm-up at those
    sizes wherever a side's warm blocks last another time than its sizing block did, at most
    ``RESIZES`` times.

    A slow start (a cache or a pool filling: the first ~50 calls at 15 µs, then 60 ns) sized a
    baseline on its slow calls: 8-call blocks that lasted 0.5 µs once warm, where the clocks' own
    reads and the undisturbed test are noise, and a framework doing 3x the work read -90% and
    passed a 5% budget. Sized again once warm, its blocks last ``min_block_s`` as meant.
    """
    sizes, sized_ns = yield from size_blocks(settings)
    for _ in range(RESIZES):
        warm = yield from _warm_per_call(sizes)
        if all(_alike(warm[side], sized_ns[side]) for side in warm):
            break
        sizes, sized_ns = yield from size_blocks(settings)
    return sizes


def _alike(warm_ns: float, sized_ns: float) -> bool:
    """Whether a side's warm cost per call is within ``RESIZE_FACTOR`` of what it was sized on."""
    if warm_ns <= 0 or sized_ns <= 0:
        return warm_ns == sized_ns
    return 1 / RESIZE_FACTOR <= warm_ns / sized_ns <= RESIZE_FACTOR


def _warm_per_call(sizes: BlockSizes) -> Generator[Request, int, dict[Side, float]]:
    """Pairs of blocks at ``sizes`` until :func:`warm_enough` on their own time (none begun past a
    second); each side's wall cost per call, the median of the later half."""
    costs: dict[Side, list[int]] = {Side.BASELINE: [], Side.FRAMEWORK: []}
    spent = 0
    while not warm_enough(len(costs[Side.BASELINE]), sizes, spent):
        for side, n in ((Side.BASELINE, sizes.baseline), (Side.FRAMEWORK, sizes.framework)):
            cost = int((yield side, n))
            costs[side].append(cost)
            spent += cost
        if spent >= 1e9:
            break
    calls = {Side.BASELINE: sizes.baseline, Side.FRAMEWORK: sizes.framework}
    return {side: float(np.median(values[len(values) // 2 :])) / calls[side] for side, values in costs.items()}


def size_blocks(settings: Settings) -> Generator[Request, int, tuple[BlockSizes, dict[Side, float]]]:
    """Each side's smallest power-of-two call count whose block lasts ``settings.min_block_s``,
    then the shorter side's grown to last as long as the longer one's; and the pair's clock;
    with each side's wall cost per call in its last sizing block (what :func:`calibrate` checks
    its warm blocks against).

    Each side is sized on its own per-call cost: sized on the faster side, a framework 400x
    its baseline ran 75 ms blocks and a pair cost 20-25 s. Sides whose counts come out within
    ``SAME_SIZE_WITHIN`` of each other both take the larger, as every pair did before: their
    blocks stay short anyway, and a balanced pair's two sides then run the very same loop
    (the regime the A/A and A/B validations measured). Where one call of the framework outlasts
    the minimum block (a millisecond call), the baseline's block grows to last about as long
    (within a factor of sqrt(2)): a busy machine's preemptions then fall on both sides alike,
    where a 20 µs baseline block against a 4 ms framework block read the ratio 2.8x too high
    beside four busy loops. Power-of-two steps keep the counts stable; the replica processes are
    given this process's sizes and clock, so every replica times blocks of the same lengths.
    """
    callers = settings.concurrency
    least_ns = min_block_ns(settings)
    first = 1 << max(settings.concurrency - 1, 0).bit_length()  # every concurrent caller gets a call
    calls = {Side.BASELINE: first, Side.FRAMEWORK: first}
    timed: dict[Side, list[int]] = {Side.BASELINE: [], Side.FRAMEWORK: []}
    sizing = [Side.BASELINE, Side.FRAMEWORK]
    while sizing:
        for side in list(sizing):
            n = calls[side]
            cost = yield side, n
            timed[side].append(cost)
            if cost >= least_ns or n >= MAX_CALLS_PER_BLOCK:
                sizing.remove(side)
            elif cost > 0:
                # Jump close to the answer, then let the doubling finish it.
                calls[side] = max(n * 2, 1 << max(0, int(math.log2(n * least_ns / cost)) - 1))
            else:
                calls[side] = n * 2
    per_call = {side: int(timed[side][-1]) / calls[side] for side in timed}
    baseline, framework = (min(calls[side], MAX_CALLS_PER_BLOCK) for side in (Side.BASELINE, Side.FRAMEWORK))
    if max(baseline, framework) <= SAME_SIZE_WITHIN * min(baseline, framework):
        larger = max(baseline, framework)
        return BlockSizes(larger, larger, choose_timer(timed, callers)), per_call
    # A millisecond call sized in one block: more of each side, the fastest kept (a busy machine
    # only ever adds to a block), on the clock the pair will be read on.
    sized = {Side.BASELINE: baseline, Side.FRAMEWORK: framework}
    for _ in range(DURATION_PROBES):
        for side in (Side.BASELINE, Side.FRAMEWORK):
            timed[side].append((yield side, sized[side]))
    timer = choose_timer(timed, callers)
    fastest = {
        side: min(on_timer(cost, timer) for cost in timed[side][-DURATION_PROBES:]) / sized[side] for side in sized
    }
    baseline, framework = _equal_durations(baseline, framework, fastest[Side.BASELINE], fastest[Side.FRAMEWORK])
    return BlockSizes(baseline, framework, timer), per_call


def _equal_durations(baseline: int, framework: int, baseline_ns: float, framework_ns: float) -> tuple[int, int]:
    """The counts with the shorter side's block grown by the power of two nearest to the
    ratio of the two blocks' durations (per-call costs: the fastest of :data:`DURATION_PROBES` blocks)."""
    if baseline_ns <= 0 or framework_ns <= 0:
        return baseline, framework
    ratio = (framework * framework_ns) / (baseline * baseline_ns)
    steps = round(math.log2(ratio)) if ratio > 0 else 0
    if steps > 0:
        baseline = min(baseline << steps, MAX_CALLS_PER_BLOCK)
    elif steps < 0:
        framework = min(framework << -steps, MAX_CALLS_PER_BLOCK)
    return baseline, framework


def choose_timer(timed: dict[Side, list[int]], callers: int) -> Timer:
    """The thread's CPU time where one caller's blocks of both sides were read on both clocks
    and neither side waits (fewer than ``WAITS_PER_BLOCK`` voluntary context switches a block:
    see :mod:`overheadbench.instruments.walltime`); the wall clock otherwise."""
    if callers != 1:
        return Timer.WALL
    for costs in timed.values():
        if not costs or not all(isinstance(cost, Timing) for cost in costs):
            return Timer.WALL
        if sum(cost.waits for cost in costs if isinstance(cost, Timing)) >= WAITS_PER_BLOCK * len(costs):
            return Timer.WALL
    return Timer.CPU


def on_timer(cost: int, timer: Timer) -> int:
    """A block's cost on ``timer`` (a plain int is the wall clock's, the only one it read)."""
    return cost.on(timer)[0] if isinstance(cost, Timing) else int(cost)
