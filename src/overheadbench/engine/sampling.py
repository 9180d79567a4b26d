"""Calibration, warm-up and interleaved paired sampling, written once for sync and async.

The whole procedure is a generator (:func:`replica_plan`) that *asks* for blocks to be timed
(``yield ("baseline", n)``) and is sent back their cost. A sync driver and an async driver
each only run the requested block, so the logic that decides what to time and when to stop
exists once, and tests drive it with synthetic costs and a fake clock (no real timing).
"""

from __future__ import annotations

import math
import random
from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import closing, contextmanager
from typing import Any, Protocol, TypeVar, cast

import numpy as np

from ..core.errors import CallableError, InstrumentError
from .samples import ReplicaSamples, Side
from .settings import Settings
from .stats import median_interval, pair_ratios

Request = tuple[Side, int]
T = TypeVar("T")
Plan = Generator[Request, int, ReplicaSamples]
PairPlan = Generator[Request, int, list[ReplicaSamples]]
Clock = Callable[[], int]
TooWide = Callable[[list[ReplicaSamples]], bool]
"""Whether the interval over these processes is still wider than the target (a pair's stopping rule)."""

MAX_CALLS_PER_BLOCK = 10_000_000
CALLER_BLOCK_S = 1e-3
"""With concurrent callers a block lasts at least this long per caller: releasing and
gathering a crew of threads costs ~10-50 µs per caller here, which must stay a small share."""
WARMUP_PAIRS = 5
WARMUP_MIN_S = 0.02
HARNESS_BLOCKS = 7
MIN_PAIRS = 30
MIN_TIMED_PAIRS = 10
MAX_PAIRS = 200_000
CHECK_EVERY = 16
SAMPLING_SHARE = 0.2


class Replication(Protocol):
    """Where a pair's time samples come from: this process (:class:`InProcess`), the
    session's replica processes (:class:`~overheadbench.replicas.replication.Replicas`), or, in a
    replica, the controller's orders (:class:`~overheadbench.replicas.replica.ReplicaPlugin`)."""

    @property
    def in_replica(self) -> bool: ...

    def plan(
        self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, too_wide: TooWide
    ) -> PairPlan: ...


class InProcess:
    """A pair measured in this process only: calibrated, then sampled."""

    in_replica = False

    def plan(self, nodeid: str, settings: Settings, rng: random.Random, clock_ns: Clock, too_wide: TooWide) -> PairPlan:
        calls = yield from calibrate(settings)
        return [(yield from replica_plan(settings, rng, clock_ns, calls))]


def replica_slice_s(settings: Settings) -> float:
    """Sampling time one process may spend: all of the budget alone, a share when replicated.

    Replicas sample one after another, and the budget must also hold their warm-up and
    any further rounds, so each gets ``SAMPLING_SHARE`` of the budget divided among them.
    """
    if settings.processes == 1:
        return settings.time_budget_s
    return max(0.05, settings.time_budget_s * SAMPLING_SHARE / settings.processes)


def replica_plan(
    settings: Settings,
    rng: random.Random,
    clock_ns: Callable[[], int],
    calls_per_block: int,
) -> Plan:
    """Warm up, probe the harness, then sample pairs of ``calls_per_block`` calls per block.

    Pairs are timed in random order (baseline first or framework first, a coin flip per
    pair) so drift and periodic noise hit both sides alike. Sampling stops when the
    median-of-ratios interval is narrow enough, or the time slice is spent, or after
    ``MAX_PAIRS`` pairs, whichever comes first.
    """
    start = clock_ns()
    slice_ns = replica_slice_s(settings) * 1e9
    samples = ReplicaSamples(calls_per_block)

    warm_until = clock_ns() + WARMUP_MIN_S * 1e9
    pairs = 0
    while pairs < WARMUP_PAIRS or clock_ns() < warm_until:
        yield Side.BASELINE, calls_per_block
        yield Side.FRAMEWORK, calls_per_block
        pairs += 1

    harness = []
    for _ in range(HARNESS_BLOCKS):
        harness.append((yield Side.HARNESS, calls_per_block))
    samples.harness_ns_per_call = float(np.median(harness)) / calls_per_block

    # Each process is one of several replicas: its own interval only needs to be well
    # inside the target, since the between-process spread is what the verdict uses.
    target = settings.target_halfwidth / 2 if settings.processes > 1 else settings.target_halfwidth
    sampling_from = clock_ns()
    while len(samples.baseline_ns) < MAX_PAIRS:
        if rng.random() < 0.5:
            baseline_ns = yield Side.BASELINE, calls_per_block
            framework_ns = yield Side.FRAMEWORK, calls_per_block
        else:
            framework_ns = yield Side.FRAMEWORK, calls_per_block
            baseline_ns = yield Side.BASELINE, calls_per_block
        samples.baseline_ns.append(baseline_ns)
        samples.framework_ns.append(framework_ns)
        count = len(samples.baseline_ns)
        if clock_ns() - sampling_from >= slice_ns and count >= MIN_TIMED_PAIRS:
            break
        if count >= MIN_PAIRS and count % CHECK_EVERY == 0:
            _, low, high = median_interval(pair_ratios(samples.baseline_ns, samples.framework_ns), settings.confidence)
            if (high - low) / 2 <= target:
                break
    samples.wall_s = (clock_ns() - start) / 1e9
    return samples


def calibrate(settings: Settings) -> Generator[Request, int, int]:
    """Smallest power-of-two call count whose blocks (both sides) last ``settings.min_block_s``.

    Power-of-two steps keep the count stable; the replica processes are given this
    process's count, so every replica times blocks of the same length.
    """
    callers = settings.concurrency
    min_block_ns = (settings.min_block_s if callers == 1 else max(settings.min_block_s, callers * CALLER_BLOCK_S)) * 1e9
    n = 1 << max(settings.concurrency - 1, 0).bit_length()  # every concurrent caller gets a call
    while n < MAX_CALLS_PER_BLOCK:
        shortest = min((yield Side.BASELINE, n), (yield Side.FRAMEWORK, n))
        if shortest >= min_block_ns:
            break
        if shortest > 0:
            # Jump close to the answer, then let the doubling finish it.
            n = max(n * 2, 1 << max(0, int(math.log2(n * min_block_ns / shortest)) - 1))
        else:
            n *= 2
    return min(n, MAX_CALLS_PER_BLOCK)


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
            request, result = _advance(plan, cost)
    return cast(T, result)


async def drive_async(plan: Generator[Request, Any, T], blocks: dict[Side, Callable[[int], Awaitable[Any]]]) -> T:
    """Run ``plan`` with async blocks, awaited in the running loop (one loop for all calls)."""
    with closing(plan):
        request, result = _advance(plan, None)
        while request is not None:
            with blame(request[0]):
                cost = await blocks[request[0]](request[1])
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
