"""The ``overhead`` fixture's object: ``compare`` (sync tests) and ``acompare`` (async tests).

It checks how it is used, runs the sampling plan with the right driver, hands replication
to :mod:`overheadbench.replicas` (through a :class:`Replication`: the controller's pool, or
the replica's channel) and judging to :mod:`overheadbench.results`; it measures nothing itself.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import random
import time
import warnings
from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from typing import Any, Protocol

import anyio
import pytest
import sniffio

from .counting import INSTRUCTIONS, CountSamples, count_calls, count_plan
from .durations import format_seconds
from .instruments import allocations, instructions, walltime
from .instruments.walltime import empty_async, empty_sync
from .marker import COUNT, Budget
from .options import Settings
from .replicas.pool import Replicas
from .results import OverheadResult, summarise, summarise_counts
from .sampling import BASELINE, FRAMEWORK, HARNESS, ReplicaSamples, Request, blame, drive_async, drive_sync
from .timeouts import time_limit

HARNESS_WARN_SHARE = 0.10


class OverheadUsageError(Exception):
    """The fixture was used wrongly; the message names the test and the fix."""


class OverheadHarnessWarning(UserWarning):
    """The measuring loop's own cost is a large share of the baseline's time per call."""


class Replication(Protocol):
    """Where a pair's samples come from: :class:`~overheadbench.replicas.pool.Replicas` in the
    user's session (fresh processes), :class:`~overheadbench.replicas.replica.ReplicaPlugin`
    in a replica (the controller's orders)."""

    in_replica: bool

    def plan(
        self,
        nodeid: str,
        settings: Settings,
        rng: random.Random,
        clock_ns: Callable[[], int],
        too_wide: Callable[[list[ReplicaSamples]], bool],
    ) -> Generator[Request, int, list[ReplicaSamples]]: ...


class OverheadFixture:
    """Measures one baseline-versus-framework pair per test.

    ``clock_ns`` (default ``time.perf_counter_ns``) is the only clock used for timing and
    for the time budget; a test may replace it before calling ``compare`` to drive the
    whole machinery with synthetic costs. ``replication`` says where the samples come from.
    """

    def __init__(
        self,
        nodeid: str,
        budget: Budget,
        settings: Settings,
        measuring: bool,
        replication: Replication | None = None,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
        rng: random.Random | None = None,
        group: str | None = None,
    ) -> None:
        self.nodeid = nodeid
        self.budget = budget
        self.settings = replace(settings, processes=budget.processes) if budget.processes else settings
        """The session's settings with the marker's ``processes``, if it gives one."""
        self.replication: Replication = replication or Replicas()
        self.measuring = measuring or self.replication.in_replica
        self.clock_ns = clock_ns
        self.rng = rng or random.Random()
        self.result: OverheadResult | None = None
        self.group = group
        self.mode = budget.mode or settings.mode
        self._called = False
        self._slowest_call_s = 0.0
        self._replicas: list[ReplicaSamples] = []
        self._counts: CountSamples | None = None

    def compare(self, baseline: Callable[[], Any], framework: Callable[[], Any]) -> OverheadResult:
        """Measure ``framework`` against ``baseline`` (zero-argument callables, both sync or both async)."""
        __tracebackhide__ = True
        kind = self._begin(baseline, framework)
        with self._time_limit():
            if kind == "async":
                if _loop_running():
                    raise OverheadUsageError(
                        f"{self.nodeid}: compare() was called inside a running event loop; "
                        f"in an async test use `await overhead.acompare(baseline, framework)`"
                    )
                return anyio.run(self._measure_async, baseline, framework, backend=self.settings.backend)
            return self._measure_sync(baseline, framework)

    async def acompare(self, baseline: Callable[[], Any], framework: Callable[[], Any]) -> OverheadResult:
        """Like :meth:`compare`, measured inside the test's own running event loop."""
        __tracebackhide__ = True
        kind = self._begin(baseline, framework)
        with self._time_limit():
            if kind == "async":
                return await self._measure_async(baseline, framework)
            return self._measure_sync(baseline, framework)

    def _time_limit(self) -> Any:
        """The pair's time limit in the user's session (a replica's silence is the controller's to judge)."""
        if not self.measuring or self.replication.in_replica:
            return contextlib.nullcontext()
        limit_s = self.settings.pair_timeout_s

        def message() -> str:
            slow = (
                f"the slowest first call took {format_seconds(self._slowest_call_s)}: blocks are calibrated on the "
                f"faster side, so sides a thousandfold apart make long blocks"
                if self._slowest_call_s
                else "a first call never returned"
            )
            return (
                f"{self.nodeid}: the pair was still being measured after {limit_s:g} s (overhead_pair_timeout): "
                f"does the baseline or the framework callable hang? ({slow}.) Raise --overhead-pair-timeout if "
                f"the pair is really that slow"
            )

        return time_limit(limit_s, message)

    def _begin(self, baseline: Any, framework: Any) -> str:
        if self._called:
            raise OverheadUsageError(f"{self.nodeid}: overhead.compare() was called twice; measure one pair per test")
        self._called = True
        for side, fn in ((BASELINE, baseline), (FRAMEWORK, framework)):
            if not callable(fn):
                raise OverheadUsageError(f"{self.nodeid}: the {side} must be a zero-argument callable, got {fn!r}")
        kinds = {inspect.iscoroutinefunction(fn) for fn in (baseline, framework)}
        if len(kinds) == 2:
            raise OverheadUsageError(
                f"{self.nodeid}: baseline and framework must both be plain functions or both `async def` "
                f"functions; got one of each"
            )
        return "async" if kinds == {True} else "sync"

    def _measure_sync(self, baseline: Callable[[], Any], framework: Callable[[], Any]) -> OverheadResult:
        started = time.perf_counter()
        for side, fn in ((BASELINE, baseline), (FRAMEWORK, framework)):
            with blame(side), self._first_call():
                value = fn()
            if inspect.isawaitable(value):
                getattr(value, "close", lambda: None)()
                raise OverheadUsageError(
                    f"{self.nodeid}: the {side} callable returned an awaitable; pass an `async def` "
                    f"function instead (e.g. `async def {side}(): return await agent.process(msg)`)"
                )
        if not self.measuring:
            return self._record(OverheadResult(self.nodeid, self.budget, "sync"))
        with timing_conditions(self.settings):
            for plan, blocks, keep in self._stages("sync", baseline, framework):
                keep(drive_sync(plan, blocks))
        return self._conclude("sync", started)

    async def _measure_async(
        self, baseline: Callable[[], Awaitable[Any]], framework: Callable[[], Awaitable[Any]]
    ) -> OverheadResult:
        started = time.perf_counter()
        for side, fn in ((BASELINE, baseline), (FRAMEWORK, framework)):
            with blame(side), self._first_call():
                await fn()
        if not self.measuring:
            return self._record(OverheadResult(self.nodeid, self.budget, "async"))
        with timing_conditions(self.settings):
            for plan, blocks, keep in self._stages("async", baseline, framework):
                keep(await drive_async(plan, blocks))
        return self._conclude("async", started)

    @contextmanager
    def _first_call(self) -> Iterator[None]:
        """Time a first call (real clock): slow callables get fewer calls per counted block."""
        started = time.perf_counter()
        yield
        self._slowest_call_s = max(self._slowest_call_s, time.perf_counter() - started)

    def _counting(self) -> bool:
        """Count mode always counts; time mode counts allocations after timing, unless turned
        off (and the marker has no allocation budget). Replica processes only time."""
        if self.replication.in_replica:
            return False
        return (
            self.mode == COUNT
            or self.settings.allocations
            or self.budget.max_alloc is not None
            or self.budget.max_alloc_bytes is not None
        )

    def _stages(
        self, kind: str, baseline: Any, framework: Any
    ) -> Iterator[tuple[Generator[Request, Any, Any], dict[str, Any], Callable[[Any], None]]]:
        """What measuring the pair takes, stage by stage: a plan, the blocks it asks for, and
        where its result goes. Timing (time mode); then, in this process only, counting:
        instructions (count mode), then allocations, in separate passes so the allocation
        tracer's own work is never counted as instructions."""
        sync = kind == "sync"
        empty = empty_sync if sync else empty_async
        if self.mode != COUNT:
            timed = walltime.sync_block if sync else walltime.async_block
            yield (
                self._plan(),
                self._blocks(lambda fn: timed(fn, self.clock_ns), baseline, framework, empty),
                self._replicas.extend,
            )
        if not self._counting():
            return
        counts = self._counts = CountSamples(count_calls(self._slowest_call_s))
        if self.mode == COUNT:
            counter = instructions.InstructionCounter()
            counted = instructions.sync_block if sync else instructions.async_block
            yield (
                count_plan(counts.calls_per_block, harness=False),
                self._blocks(lambda fn: counted(fn, counter), baseline, framework, empty),
                partial(counts.add, (INSTRUCTIONS,)),
            )
        traced = allocations.sync_block if sync else allocations.async_block
        yield (
            count_plan(counts.calls_per_block, harness=True),
            self._blocks(traced, baseline, framework, empty),
            partial(counts.add, allocations.Allocations._fields),
        )

    def _blocks(self, instrument: Callable[[Any], Any], baseline: Any, framework: Any, empty: Any) -> dict[str, Any]:
        """The three blocks of a pair (baseline, framework, harness), built by one instrument."""
        return {side: instrument(fn) for side, fn in ((BASELINE, baseline), (FRAMEWORK, framework), (HARNESS, empty))}

    def _plan(self) -> Generator[Request, int, list[ReplicaSamples]]:
        """This process's procedure: a replica's, or the controller's for the whole pair.

        Waiting for replica processes blocks the caller, an event loop included: nothing
        else should run while a pair is measured.
        """

        def too_wide(replicas: list[ReplicaSamples]) -> bool:
            interim = summarise(self.nodeid, self.budget, "", replicas, self.settings, 0.0)
            return (interim.ci[1] - interim.ci[0]) / 2 > self.settings.target_halfwidth

        return self.replication.plan(self.nodeid, self.settings, self.rng, self.clock_ns, too_wide)

    def _conclude(self, kind: str, started: float) -> OverheadResult:
        if self.replication.in_replica:
            pytest.skip("overheadbench replica process: samples sent to the controller")
        wall_s = time.perf_counter() - started
        if self.mode == COUNT:
            assert self._counts is not None
            return self._record(summarise_counts(self.nodeid, self.budget, kind, self._counts, wall_s))
        result = summarise(self.nodeid, self.budget, kind, self._replicas, self.settings, wall_s, self._counts)
        if not self.settings.subtract_harness and result.harness_s > HARNESS_WARN_SHARE * result.baseline_s:
            warnings.warn(
                OverheadHarnessWarning(
                    f"{self.nodeid}: the measuring loop itself costs {result.harness_s * 1e9:.0f} ns/call, "
                    f"{result.harness_s / result.baseline_s:.0%} of the baseline's time per call, which dilutes "
                    f"the overhead; batch more work per call or set overhead_subtract_harness=true"
                ),
                stacklevel=2,
            )
        return self._record(result)

    def _record(self, result: OverheadResult) -> OverheadResult:
        result.group = self.group
        self.result = result
        return result


@contextmanager
def timing_conditions(settings: Settings) -> Iterator[None]:
    """Pause the garbage collector while timing (unless asked not to), restore it after."""
    was_enabled = gc.isenabled()
    if not settings.gc_enabled:
        gc.collect()
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _loop_running() -> bool:
    """Whether an async library's loop runs in this thread (then ``anyio.run`` cannot)."""
    try:
        sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return False
    return True
