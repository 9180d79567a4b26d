"""The ``overhead`` fixture's object: ``compare`` (sync tests) and ``acompare`` (async tests).

It checks how it is used, runs the sampling plan with the right driver, hands replication
to :mod:`overheadbench.replicas` (through a :class:`Replication`: the controller's pool, or
the replica's channel) and judging to :mod:`overheadbench.pairs.verdict`; it measures nothing itself.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import math
import random
import time
from collections.abc import Awaitable, Callable, Generator, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np
import pytest
import sniffio

from ..core import event_loop
from ..core.errors import OverheadUsageError
from ..core.timeouts import time_limit
from ..core.units import format_seconds
from ..core.vocabulary import Counter
from ..engine.changes import Looks
from ..engine.counting import (
    ALLOCATION_REPEATS,
    CALLGRIND_MAX_CALLS,
    TIME_PROBE_S,
    allocation_calls,
    count_calls,
    count_plan,
    pace_plan,
)
from ..engine.harness import Harness
from ..engine.samples import CountSamples, Kind, PlaceSamples, Side
from ..engine.sampling import InProcess, Replication, Request, Sampled, Stopping, blame, drive_async, drive_sync
from ..engine.settings import Mode, Settings
from ..engine.stats import pair_ratios
from ..engine.timed_path import AppLogging, loop_out_of_debug, timing_conditions
from ..engine.valgrind import in_counting_replica
from ..instruments import Block, Instrument
from ..instruments.allocations import AllocationTrace
from ..instruments.callgrind import MachineInstructionCount
from ..instruments.instructions import InstructionCount
from ..instruments.walltime import WallClock, empty_async, empty_sync
from ..replicas.replica import ReplicaPlugin
from .pair import Pair
from .results import OverheadResult
from .stopping import gate_confidence, gate_rounds, too_wide
from .usage import sides_kind, warn_unlike, with_callers
from .verdict import measure_places, summarise, summarise_counts

CountElsewhere = Callable[[str, Settings, int], CountSamples]
"""Count a pair in another process (node id, settings, calls per block): count mode under callgrind."""
CountPlaces = Callable[[str, Settings, int], list[PlaceSamples]]
"""Count a pair at every other place of the session (node id, settings, calls per block)."""


class OverheadFixture:
    """Measures one baseline-versus-framework pair per test.

    ``clock_ns`` (default ``time.perf_counter_ns``) is the only clock used for timing and
    for the time budget; a test may replace it before calling ``compare`` to drive the
    whole machinery with synthetic costs. ``replication`` says where the time samples come
    from (default: this process only; or every place of the session); ``count_elsewhere``, where
    count mode's instruction counts come from when not from this process (a replica started under
    callgrind); ``count_places``, how the other places of the session count a count-mode pair.
    """

    def __init__(
        self,
        pair: Pair,
        settings: Settings,
        measuring: bool,
        replication: Replication | None = None,
        app_logging: AppLogging | None = None,
        harness: Harness | None = None,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
        rng: random.Random | None = None,
        count_elsewhere: CountElsewhere | None = None,
        count_places: CountPlaces | None = None,
        looks: Looks | None = None,
    ) -> None:
        self.pair = pair
        self.looks = looks
        """The gate's looks at a change while rounds go on at other places (None: no gate there)."""
        self.count_elsewhere, self.count_places = count_elsewhere, count_places
        self.session = settings
        """The session's settings: the pair's own choices are the pair's (:attr:`settings`)."""
        self.replication: Replication = replication or InProcess()
        self.app_logging = app_logging or AppLogging()
        """The root logger's level as the code under test set it (see :mod:`overheadbench.engine.timed_path`)."""
        self.harness = harness or Harness()
        """pytest's import finders and warning filters, taken out while timing (:mod:`overheadbench.engine.harness`)."""
        self.measuring = measuring or self.replication.in_replica
        self.clock_ns = clock_ns
        self.rng = rng or random.Random()
        self.result: OverheadResult | None = None
        self._called = False
        self._slowest_call_s = 0.0
        self._call_s = 0.0
        """Seconds per call of the slower side once warm (:func:`~overheadbench.engine.counting.pace_plan`)."""
        self._sampled = Sampled([])
        """The wall-clock stage's samples: the pair's (time mode), or count mode's probe."""
        self._counts: CountSamples | None = None

    @property
    def nodeid(self) -> str:
        return self.pair.nodeid

    @property
    def settings(self) -> Settings:
        """What the engine and the replicas read: the session's settings with the pair's own
        choices (mode, confidence, processes, callers), derived, never kept beside the pair."""
        return self.pair.applied_to(self.session)

    def compare(
        self, baseline: Callable[[], Any], framework: Callable[[], Any], concurrency: int | None = None
    ) -> OverheadResult:
        """Measure ``framework`` against ``baseline`` (zero-argument callables, both sync or both
        async), with ``concurrency`` callers of each at once (threads, or tasks of the loop)."""
        __tracebackhide__ = True
        kind = self._begin(baseline, framework, concurrency)
        with self._time_limit():
            if kind == Kind.ASYNC:
                if _loop_running():
                    raise OverheadUsageError(
                        f"{self.nodeid}: compare() was called inside a running event loop; "
                        f"in an async test use `await overhead.acompare(baseline, framework)`"
                    )
                return event_loop.run(
                    self._measure_async, baseline, framework, backend=self.settings.backend, what=self.nodeid
                )
            return self._measure_sync(baseline, framework)

    async def acompare(
        self, baseline: Callable[[], Any], framework: Callable[[], Any], concurrency: int | None = None
    ) -> OverheadResult:
        """Like :meth:`compare`, measured inside the test's own running event loop."""
        __tracebackhide__ = True
        kind = self._begin(baseline, framework, concurrency)
        with self._time_limit():
            if kind == Kind.ASYNC:
                return await self._measure_async(baseline, framework)
            return self._measure_sync(baseline, framework)

    def _time_limit(self) -> contextlib.AbstractContextManager[None]:
        """The pair's time limit in the user's session, replicas included (they are ended when it
        strikes while they owe an answer); a replica does not set its own."""
        if not self.measuring or self.replication.in_replica:
            return contextlib.nullcontext()
        limit_s = self.settings.pair_timeout_s

        def message(waiting: str | None) -> str:
            still = f"{self.nodeid}: the pair was still being measured after {limit_s:g} s (overhead_pair_timeout)"
            if waiting is not None:  # it hung there, not here: this process's first calls returned
                return (
                    f"{still}: {waiting} and never answered; it was ended. Does a callable (or a fixture) hang "
                    f"only in replicas (overheadbench.in_replica())? Raise --overhead-pair-timeout if the pair is "
                    f"really that slow"
                )
            slow = (
                f"the slowest first call took {format_seconds(self._slowest_call_s)}"
                if self._slowest_call_s
                else "a first call never returned"
            )
            return (
                f"{still}: does the baseline or the framework callable hang? ({slow}.) Raise --overhead-pair-timeout "
                f"if the pair is really that slow"
            )

        return time_limit(limit_s, message)

    def _begin(self, baseline: Any, framework: Any, concurrency: int | None = None) -> Kind:
        if self._called:
            raise OverheadUsageError(f"{self.nodeid}: overhead.compare() was called twice; measure one pair per test")
        self._called = True
        if concurrency is not None:
            self.pair = with_callers(self.pair, concurrency)
        return sides_kind(self.nodeid, baseline, framework)

    def _measure_sync(self, baseline: Callable[[], Any], framework: Callable[[], Any]) -> OverheadResult:
        started = time.perf_counter()
        values = []
        for side, fn in ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework)):
            with blame(side), self._first_call():
                value = fn()
            if inspect.isawaitable(value):
                getattr(value, "close", lambda: None)()
                raise OverheadUsageError(
                    f"{self.nodeid}: the {side} callable returned an awaitable; pass an `async def` "
                    f"function instead (e.g. `async def {side}(): return await agent.process(msg)`)"
                )
            values.append(value)
        warn_unlike(self.nodeid, *values)
        if not self.measuring:
            return self._record(OverheadResult(self.pair, Kind.SYNC))
        with timing_conditions(self.settings, self.app_logging, self.harness, self.nodeid), self._held() as held:
            for plan, blocks, keep in self._stages(Kind.SYNC, baseline, framework, held):
                keep(drive_sync(plan, blocks))
        return self._conclude(Kind.SYNC, started)

    async def _measure_async(
        self, baseline: Callable[[], Awaitable[Any]], framework: Callable[[], Awaitable[Any]]
    ) -> OverheadResult:
        started = time.perf_counter()
        values = []
        for side, fn in ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework)):
            with blame(side), self._first_call():
                values.append(await fn())
        warn_unlike(self.nodeid, *values)
        if not self.measuring:
            return self._record(OverheadResult(self.pair, Kind.ASYNC))
        conditions = timing_conditions(self.settings, self.app_logging, self.harness, self.nodeid)
        with conditions, loop_out_of_debug(), self._held() as held:
            for plan, blocks, keep in self._stages(Kind.ASYNC, baseline, framework, held):
                keep(await drive_async(plan, blocks))
        return self._conclude(Kind.ASYNC, started)

    @contextmanager
    def _first_call(self) -> Iterator[None]:
        """Time a first call (real clock): slow callables get fewer calls per counted block."""
        started = time.perf_counter()
        yield
        self._slowest_call_s = max(self._slowest_call_s, time.perf_counter() - started)

    def _instruments(self) -> list[Instrument]:
        """What measures the pair, in order. Time mode: wall time, then, in this process only,
        allocations (unless turned off and the marker has no allocation budget); replicas only
        time. Count mode: instructions, allocations, then (in this process) a short wall-clock
        probe on the real clock, the counts' check. Separate passes, so the allocation tracer's
        own work is never counted as instructions. Under callgrind the instructions come from a
        replica started under valgrind, whose counter is callgrind's and which counts nothing
        else; allocations and the probe stay here, where calls run at full speed."""
        budget = self.pair.budget
        if self.pair.mode == Mode.COUNT:
            if folder := in_counting_replica():
                return [MachineInstructionCount(folder)]
            probe: list[Instrument] = [] if self.replication.in_replica else [WallClock(time.perf_counter_ns, 1)]
            counter: list[Instrument] = [] if self.count_elsewhere is not None else [InstructionCount()]
            return [*counter, AllocationTrace(), *probe]
        timed: list[Instrument] = [WallClock(self.clock_ns, self.pair.concurrency)]
        allocations = self.settings.allocations or budget.max_alloc is not None or budget.max_alloc_bytes is not None
        if self.replication.in_replica or not allocations:
            return timed
        return [*timed, AllocationTrace()]

    @contextmanager
    def _held(self) -> Iterator[list[Instrument]]:
        """The instruments a measurement used, closed however it ends (the callers' threads stop)."""
        held: list[Instrument] = []
        try:
            yield held
        finally:
            for instrument in held:
                instrument.close()

    def _stages(
        self, kind: Kind, baseline: Any, framework: Any, held: list[Instrument]
    ) -> Iterator[tuple[Generator[Request, Any, Any], dict[Side, Block], Callable[[Any], None]]]:
        """Each instrument's stage: a plan, the blocks it asks for, and where its result goes.
        Wall time follows the replication's plan; a counter follows the count plan."""
        empty = empty_sync if kind == Kind.SYNC else empty_async
        if self.pair.mode == Mode.COUNT and isinstance(self.replication, ReplicaPlugin):
            orders = self.replication.park(self.nodeid)  # a counting replica counts when told to
            if orders is None:
                return
            self._counts = _count_samples(orders.calls_per_block)
        elif self.pair.mode == Mode.COUNT and self.count_elsewhere is not None:
            calls = count_calls(self._slowest_call_s, CALLGRIND_MAX_CALLS)
            self._counts = self.count_elsewhere(self.nodeid, self.settings, calls)
        sides = ((Side.BASELINE, baseline), (Side.FRAMEWORK, framework), (Side.HARNESS, empty))
        for instrument in self._instruments():
            held.append(instrument)
            blocks = {side: instrument.block(fn, kind) for side, fn in sides}
            if not instrument.figures:  # wall time: the pair's own, or count mode's probe
                if self.pair.mode == Mode.COUNT:
                    yield self._time_probe(), blocks, self._keep
                else:
                    yield self._plan(), blocks, self._keep
                continue
            if self._counts is None:
                self._counts = _count_samples(count_calls(self._slowest_call_s))
            calls, plan = self._counts.calls_per_block, partial(count_plan, harness=instrument.subtract_harness)
            if isinstance(instrument, AllocationTrace):
                pace = WallClock(time.perf_counter_ns)
                yield pace_plan(), {side: pace.block(fn, kind) for side, fn in sides}, self._paced
                calls = self._counts.allocation_calls = allocation_calls(self._call_s)
                plan = partial(plan, repeats=ALLOCATION_REPEATS, warmups=0)
            yield (
                plan(calls),
                blocks,
                partial(self._counts.add, instrument.figures, calls=calls),
            )

    def _paced(self, call_s: float) -> None:
        self._call_s = call_s

    def _keep(self, sampled: Sampled) -> None:
        self._sampled = sampled

    def _plan(self) -> Generator[Request, int, Sampled]:
        """This process's procedure: a replica's, or the controller's for the whole pair.

        Waiting for replica processes blocks the caller, an event loop included: nothing
        else should run while a pair is measured.
        """

        stop = Stopping(too_wide(self.pair, self.settings), gate_rounds(self.pair, self.settings, self.looks))
        return self.replication.plan(self.nodeid, self.settings, self.rng, self.clock_ns, stop)

    def _time_probe(self) -> Generator[Request, int, Sampled]:
        """Count mode's check on its counts: the same calls timed in this process for
        ``TIME_PROBE_S`` on the real clock (see :func:`overheadbench.engine.counting.disagreement`)."""
        settings = dataclasses.replace(self.settings, processes=1, time_budget_s=TIME_PROBE_S, concurrency=1)
        return InProcess().plan(self.nodeid, settings, self.rng, time.perf_counter_ns, Stopping(lambda replicas: False))

    def _conclude(self, kind: Kind, started: float) -> OverheadResult:
        if self.replication.in_replica:
            if self._counts is not None and isinstance(self.replication, ReplicaPlugin):
                self.replication.deliver_counts(self._counts)
            pytest.skip("overheadbench replica process: samples sent to the controller")
        wall_s = time.perf_counter() - started
        if self.pair.mode == Mode.COUNT:
            assert self._counts is not None
            own = summarise_counts(self.pair, kind, self._counts, wall_s)
            probe = next((samples for samples in self._sampled.samples if samples.baseline_ns), None)
            time_ratio = float(np.median(pair_ratios(probe.baseline_ns, probe.framework_ns))) if probe else math.nan
            own = dataclasses.replace(own, time_ratio=time_ratio)
            calls = self._counts.calls_per_block
            sampled = Sampled([], self.count_places(self.nodeid, self.settings, calls) if self.count_places else [])
        else:
            sampled = self._sampled
            own = summarise(self.pair, kind, sampled.samples, self.settings, wall_s, self._counts, sampled.start_s)
        confidence = gate_confidence(self.looks, self.settings)
        places = measure_places(self.pair, kind, own, sampled.places, self.settings, confidence)
        return self._record(dataclasses.replace(own, places=places))

    def _record(self, result: OverheadResult) -> OverheadResult:
        self.result = result
        return result


def _count_samples(calls_per_block: int) -> CountSamples:
    """Counts to fill in this process, named by its counter."""
    counter = Counter.CALLGRIND if in_counting_replica() else Counter.BYTECODE
    return CountSamples(calls_per_block, counter=counter)


def _loop_running() -> bool:
    """Whether an async library's loop runs in this thread (then ``anyio.run`` cannot)."""
    try:
        sniffio.current_async_library()
    except sniffio.AsyncLibraryNotFoundError:
        return False
    return True
