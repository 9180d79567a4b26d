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
from ..core.vocabulary import Role, Side
from .calibration import (
    MAX_CALLS_PER_BLOCK,
    RESIZE_FACTOR,
    RESIZES,
    Request,
    calibrate,
    min_block_ns,
    on_timer,
    warm_enough,
)
from .counted_samples import CountSamples
from .process_ratio import median_interval, pair_ratios
from .samples import BlockSizes, Clock, ReplicaSamples
from .settings import Settings


@dataclass
class Sampled:
    """A pair's time samples: the session's own processes', and every other place's."""

    samples: list[ReplicaSamples]
    places: list[PlaceSamples] = field(default_factory=list)
    start_s: float = 0.0
    """Wall time the pair waited for new replica processes to start (import and collect)."""


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
    :class:`~overheadbench.pairs.across.Looks`), and whether a change is still unknown."""

    looks: tuple[int, ...]
    undecided: Undecided


@dataclass(frozen=True)
class Stopping:
    """When a pair's rounds stop (built by :mod:`overheadbench.pairs.stopping`): its own interval
    narrow enough, or, under a gate with other places, every change decided."""

    too_wide: TooWide
    gate: GateRounds | None = None


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
    """Warm up, probe the harness, then sample pairs of blocks, each side's of its own size; all
    again with longer blocks where a side's blocks fell below the floor (:func:`outgrown`), at most
    ``RESIZES`` times.

    Pairs are timed in random order (baseline first or framework first, a coin flip per
    pair) so drift and periodic noise hit both sides alike. Sampling stops, once there are
    ``MIN_PAIRS``, when the median-of-ratios interval is narrow enough or the time slice is
    spent; short of them, at the process's share of the pair's ceiling (with at least
    ``MIN_TIMED_PAIRS``); and after ``MAX_PAIRS`` pairs in any case.
    """
    start = clock_ns()
    for resized in range(RESIZES + 1):
        samples = yield from _sample(settings, rng, clock_ns, sizes, check_floor=resized < RESIZES)
        grown = outgrown(samples, sizes, settings)
        if grown is None or resized == RESIZES:
            break
        sizes = grown
    samples.wall_s = (clock_ns() - start) / 1e9
    return samples


def _sample(
    settings: Settings, rng: random.Random, clock_ns: Callable[[], int], sizes: BlockSizes, check_floor: bool
) -> Plan:
    """One warm-up, harness probe and sampling at ``sizes``; cut short (``check_floor``) as soon as
    a side's recent blocks last less than the floor."""
    slice_ns = replica_slice_s(settings) * 1e9
    ceiling_ns = replica_ceiling_s(settings) * 1e9
    samples = ReplicaSamples(sizes.baseline, framework_calls=sizes.framework, timer=sizes.timer)

    warm_from = clock_ns()
    pairs = 0
    while not warm_enough(pairs, sizes, clock_ns() - warm_from):
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
        if count % CHECK_EVERY == 0:
            if check_floor and outgrown(samples, sizes, settings):
                break
            if usable >= MIN_PAIRS:
                _, low, high = median_interval(pair_ratios(*samples.estimated_pairs()), settings.confidence)
                if (high - low) / 2 <= target:
                    break
    return samples


def outgrown(samples: ReplicaSamples, sizes: BlockSizes, settings: Settings) -> BlockSizes | None:
    """Longer block sizes where a side's last ``CHECK_EVERY`` blocks lasted (median, wall clock) less
    than ``1 / RESIZE_FACTOR`` of the minimum block: its calls got faster after calibration (a slow
    start that outlasted calibration's warm-up: 1,000 calls at 15 µs), and blocks of a few hundred
    nanoseconds are read on the clocks' own cost; the side's count grows by the power of two that
    brings it back to the minimum. None: every side's blocks still last long enough."""
    floor_ns = min_block_ns(settings)
    counts = {Side.BASELINE: sizes.baseline, Side.FRAMEWORK: sizes.framework}
    grown = dict(counts)
    for side, lasted in samples.recent_wall_ns(CHECK_EVERY).items():
        n = counts[side]
        if 0 < lasted < floor_ns / RESIZE_FACTOR and n < MAX_CALLS_PER_BLOCK:
            grown[side] = min(n << math.ceil(math.log2(floor_ns / lasted)), MAX_CALLS_PER_BLOCK)
    if grown == counts:
        return None
    return BlockSizes(grown[Side.BASELINE], grown[Side.FRAMEWORK], sizes.timer)


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


@dataclass(frozen=True)
class PlaceSamples:
    """What one place other than the session's own gave for a pair: its samples (time mode) or
    counts (count mode), or why there are none."""

    name: str
    role: Role
    samples: tuple[ReplicaSamples, ...] = ()
    counts: CountSamples | None = None
    missing: bool = False
    """The place has no such test (a base tree without it: the pair is new)."""
    note: str = ""
    """Why the pair was not compared there, when it was not (empty when it was)."""


@dataclass(frozen=True)
class PlaceFigures:
    """A transport test's figures at another place, one list (of figures' JSON) per round."""

    name: str
    role: Role
    rounds: tuple[list[Any], ...] = ()
    missing: bool = False
