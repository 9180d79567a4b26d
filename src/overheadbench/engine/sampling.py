"""Calibration, warm-up and interleaved paired sampling, written once for sync and async.

The whole procedure is a generator (:func:`replica_plan`) that *asks* for blocks to be timed
(``yield ("baseline", n)``) and is sent back their cost. A sync driver and an async driver
each only run the requested block, so the logic that decides what to time and when to stop
exists once, and tests drive it with synthetic costs and a fake clock (no real timing).
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

import numpy as np

from ..core.errors import CallableError, InstrumentError
from ..core.timeouts import progressed
from ..core.vocabulary import Role
from .samples import BlockSizes, Clock, PlaceSamples, ReplicaSamples, Side, Timer, Timing
from .settings import Settings
from .stats import median_interval, pair_ratios


@dataclass
class Sampled:
    """A pair's time samples: the session's own processes', and every other place's."""

    samples: list[ReplicaSamples]
    places: list[PlaceSamples] = field(default_factory=list)
    start_s: float = 0.0
    """Wall time the pair waited for new replica processes to start (import and collect)."""


Request = tuple[Side, int]
T = TypeVar("T")
Plan = Generator[Request, int, ReplicaSamples]
PairPlan = Generator[Request, int, Sampled]
TooWide = Callable[[list[ReplicaSamples]], bool]
"""Whether the interval over these processes is still wider than the target (a pair's stopping rule)."""
Undecided = Callable[[list[ReplicaSamples], Sequence[tuple[Role, list[ReplicaSamples]]]], bool]
"""Whether some other place's change is still unknown at the gate's threshold (the processes of
the session's own place, then every other place's, with its role)."""


@dataclass(frozen=True)
class GateRounds:
    """Under a gate with other places: the process counts at which it looks (see
    :class:`~overheadbench.engine.changes.Looks`), and whether a change is still unknown."""

    looks: tuple[int, ...]
    undecided: Undecided


@dataclass(frozen=True)
class Stopping:
    """When a pair's rounds stop (built by :mod:`overheadbench.pairs.stopping`): its own interval
    narrow enough, or, under a gate with other places, every change decided."""

    too_wide: TooWide
    gate: GateRounds | None = None


MAX_CALLS_PER_BLOCK = 10_000_000
SAME_SIZE_WITHIN = 4
"""Sides whose calibrated call counts are at most this many times apart share the larger count."""
CALLER_BLOCK_S = 1e-3
"""With concurrent callers a block lasts at least this long per caller: releasing and
gathering a crew of threads costs ~10-50 µs per caller here, which must stay a small share."""
WARMUP_PAIRS = 5
WARMUP_MIN_S = 0.02
HARNESS_BLOCKS = 7
MIN_PAIRS = 30
"""Block pairs every process gathers before its time slice may end it, whatever a call costs
(within the pair's ceiling, ``Settings.max_time_s``); on CPU time, undisturbed ones
(:meth:`~overheadbench.engine.samples.ReplicaSamples.estimated_pairs`). A process's figure is the median of its
pair ratios: over 30 pairs its 95% distribution-free interval runs from the 10th to the 21st
ratio, so nine preempted pairs cannot move it out of place. With the 2 s budget alone a
millisecond pair had 10-20 pairs a process, and one preempted call moved a process's median:
intervals of ±100-270% on a busy runner (issue 45)."""
MIN_TIMED_PAIRS = 10
"""Block pairs a process gathers even past its ceiling (a pair whose calls take seconds)."""
MAX_PAIRS = 200_000
CHECK_EVERY = 16
SAMPLING_SHARE = 0.2
CEILING_SHARE = 0.5
"""Share of the pair's ceiling (``max_time_s``) the processes' sampling may take, all together."""
DURATION_PROBES = 3
"""Blocks of each side timed again at their final size before the shorter side grows to the longer
one's duration; the fastest of them is the side's cost (a preempted call read 13.8 ms instead of 1.4)."""
WAITS_PER_BLOCK = 0.5
"""A side whose calibration blocks made fewer voluntary context switches than this per block
never waits: a block that waits on I/O, a thread or a lock switches at least once per call."""


class Replication(Protocol):
    """Where a pair's time samples come from: this process (:class:`InProcess`), the
    session's replica processes and those of every other place
    (:class:`~overheadbench.replicas.places.Places`), or, in a replica, the controller's orders
    (:class:`~overheadbench.replicas.replica.ReplicaPlugin`)."""

    @property
    def in_replica(self) -> bool: ...

    def plan(
        self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, stop: Stopping
    ) -> PairPlan: ...


class InProcess:
    """A pair measured in this process only: calibrated, then sampled."""

    in_replica = False

    def plan(self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, stop: Stopping) -> PairPlan:
        sizes = yield from calibrate(settings)
        return Sampled([(yield from replica_plan(settings, rng, clock_ns, sizes))])


def replica_slice_s(settings: Settings) -> float:
    """Sampling time one process may spend: all of the budget alone, a share when replicated.

    Replicas sample one after another, and the budget must also hold their warm-up and
    any further rounds, so each gets ``SAMPLING_SHARE`` of the budget divided among them.
    """
    if settings.processes == 1:
        return settings.time_budget_s
    return max(0.05, settings.time_budget_s * SAMPLING_SHARE / settings.processes)


def replica_ceiling_s(settings: Settings) -> float:
    """Sampling time past which one process stops short of ``MIN_PAIRS`` (once it has
    ``MIN_TIMED_PAIRS``): its share of the pair's ceiling, never less than its slice."""
    share = settings.max_time_s * (1.0 if settings.processes == 1 else CEILING_SHARE / settings.processes)
    return max(share, replica_slice_s(settings))


def replica_plan(
    settings: Settings,
    rng: random.Random,
    clock_ns: Callable[[], int],
    sizes: BlockSizes,
) -> Plan:
    """Warm up, probe the harness, then sample pairs of blocks, each side's of its own size.

    Pairs are timed in random order (baseline first or framework first, a coin flip per
    pair) so drift and periodic noise hit both sides alike. Sampling stops, once there are
    ``MIN_PAIRS``, when the median-of-ratios interval is narrow enough or the time slice is
    spent; short of them, at the process's share of the pair's ceiling (with at least
    ``MIN_TIMED_PAIRS``); and after ``MAX_PAIRS`` pairs in any case.
    """
    start = clock_ns()
    slice_ns = replica_slice_s(settings) * 1e9
    ceiling_ns = replica_ceiling_s(settings) * 1e9
    samples = ReplicaSamples(sizes.baseline, framework_calls=sizes.framework, timer=sizes.timer)

    warm_until = clock_ns() + WARMUP_MIN_S * 1e9
    pairs = 0
    while pairs < WARMUP_PAIRS or clock_ns() < warm_until:
        yield Side.BASELINE, sizes.baseline
        yield Side.FRAMEWORK, sizes.framework
        pairs += 1

    harness = []
    for _ in range(HARNESS_BLOCKS):
        harness.append((yield Side.HARNESS, sizes.baseline))
    samples.harness_ns_per_call = float(np.median([on_timer(cost, sizes.timer) for cost in harness])) / sizes.baseline

    # Each process is one of several replicas: its own interval only needs to be well
    # inside the target, since the between-process spread is what the verdict uses.
    target = settings.target_halfwidth / 2 if settings.processes > 1 else settings.target_halfwidth
    sampling_from = clock_ns()
    while len(samples.baseline_ns) < MAX_PAIRS:
        if rng.random() < 0.5:
            baseline_ns = yield Side.BASELINE, sizes.baseline
            framework_ns = yield Side.FRAMEWORK, sizes.framework
        else:
            framework_ns = yield Side.FRAMEWORK, sizes.framework
            baseline_ns = yield Side.BASELINE, sizes.baseline
        samples.add(baseline_ns, framework_ns)
        count, usable = len(samples.baseline_ns), samples.usable
        spent_ns = clock_ns() - sampling_from
        if (spent_ns >= slice_ns and usable >= MIN_PAIRS) or (spent_ns >= ceiling_ns and count >= MIN_TIMED_PAIRS):
            break
        if usable >= MIN_PAIRS and count % CHECK_EVERY == 0:
            _, low, high = median_interval(pair_ratios(*samples.estimated_pairs()), settings.confidence)
            if (high - low) / 2 <= target:
                break
    samples.wall_s = (clock_ns() - start) / 1e9
    return samples


def calibrate(settings: Settings) -> Generator[Request, int, BlockSizes]:
    """Each side's smallest power-of-two call count whose block lasts ``settings.min_block_s``,
    then the shorter side's grown to last as long as the longer one's; and the pair's clock.

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
    min_block_ns = (settings.min_block_s if callers == 1 else max(settings.min_block_s, callers * CALLER_BLOCK_S)) * 1e9
    first = 1 << max(settings.concurrency - 1, 0).bit_length()  # every concurrent caller gets a call
    calls = {Side.BASELINE: first, Side.FRAMEWORK: first}
    timed: dict[Side, list[int]] = {Side.BASELINE: [], Side.FRAMEWORK: []}
    sizing = [Side.BASELINE, Side.FRAMEWORK]
    while sizing:
        for side in list(sizing):
            n = calls[side]
            cost = yield side, n
            timed[side].append(cost)
            if cost >= min_block_ns or n >= MAX_CALLS_PER_BLOCK:
                sizing.remove(side)
            elif cost > 0:
                # Jump close to the answer, then let the doubling finish it.
                calls[side] = max(n * 2, 1 << max(0, int(math.log2(n * min_block_ns / cost)) - 1))
            else:
                calls[side] = n * 2
    baseline, framework = (min(calls[side], MAX_CALLS_PER_BLOCK) for side in (Side.BASELINE, Side.FRAMEWORK))
    if max(baseline, framework) <= SAME_SIZE_WITHIN * min(baseline, framework):
        return BlockSizes(max(baseline, framework), max(baseline, framework), choose_timer(timed, callers))
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
    return BlockSizes(baseline, framework, timer)


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


def drive_sync(plan: Generator[Request, Any, T], blocks: dict[Side, Callable[[int], Any]]) -> T:
    """Run ``plan`` with sync blocks; a callable that raises becomes :class:`CallableError`.

    The plan is closed whatever happens, so its ``finally`` clauses (stopping replica
    processes) run at once, not whenever the generator is collected.
    """
    with closing(plan):
        request, result = _advance(plan, None)
        while request is not None:
            with blame(request[0]):
                cost = blocks[request[0]](request[1])
            progressed()  # a block timed: the pair's silence limit starts again
            request, result = _advance(plan, cost)
    return cast(T, result)


async def drive_async(plan: Generator[Request, Any, T], blocks: dict[Side, Callable[[int], Awaitable[Any]]]) -> T:
    """Run ``plan`` with async blocks, awaited in the running loop (one loop for all calls)."""
    with closing(plan):
        request, result = _advance(plan, None)
        while request is not None:
            with blame(request[0]):
                cost = await blocks[request[0]](request[1])
            progressed()
            request, result = _advance(plan, cost)
    return cast(T, result)


def _advance(plan: Generator[Request, Any, T], cost: Any) -> tuple[Request | None, T | None]:
    try:
        return plan.send(cost), None
    except StopIteration as done:
        return None, done.value


@contextmanager
def blame(side: Side) -> Iterator[None]:
    """A block's error is its callable's, unless the instrument itself failed."""
    try:
        yield
    except InstrumentError:
        raise
    except Exception as exc:
        raise CallableError(side, exc) from exc
