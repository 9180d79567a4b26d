"""How one pair is measured: a strategy chosen once from its mode, its counter and where it runs.

The fixture (:mod:`overheadbench.pairs.fixture`) checks how it is used, makes the first calls
and drives plans; what to measure with, in which order and on which plan, and how the samples
become a result is its strategy's, chosen by :func:`strategy_for` and asked, never tested:

* :class:`Timed`: wall time on the replication's plan (this process, the session's replicas and
  every other place), then allocations in this process;
* :class:`CountedHere`: count mode in the user's session: instructions (counted here, or in a replica
  under callgrind), allocations, a short wall-clock probe that checks the counts, and every other
  place's counts;
* :class:`CountedInReplica`: count mode in a replica, which counts when the controller says so,
  with its block size, and sends the counts back.

A counter is one line in :data:`COUNTERS` (callgrind's machine instructions sit there beside
bytecode); another instrument is a module in :mod:`overheadbench.instruments` and a line in a
strategy's :meth:`~Strategy.instruments`. Nothing else in the package tests a mode: it asks
:class:`~overheadbench.engine.settings.Mode` what the mode is (``counted``, its ``unit``).
"""

from __future__ import annotations

import dataclasses
import math
import time
from abc import abstractmethod
from collections.abc import Callable, Generator

from ..core.vocabulary import Counter
from ..engine.calibration import Request
from ..engine.contention import core_share
from ..engine.counted_samples import CountSamples
from ..engine.counting import (
    CALLGRIND_MAX_CALLS,
    count_calls,
    probe_ratio,
    probe_settings,
)
from ..engine.profiles import Profiler
from ..engine.samples import Kind
from ..engine.sampling import InProcess, PlaceSamples, Sampled, Stopping
from ..engine.settings import Mode, Settings
from ..engine.valgrind import in_counting_replica
from ..instruments import Instrument
from ..instruments.allocations import AllocationTrace
from ..instruments.callgrind import MachineInstructionCount
from ..instruments.functions import SampledTime
from ..instruments.instructions import InstructionCount, InstructionsByFunction
from ..instruments.walltime import WallClock
from ..replicas.replica import ReplicaPlugin
from .across import PlaceGate
from .measuring import MeasuredPair, Strategy
from .results import OverheadResult
from .stopping import too_wide
from .verdict import measure_places, summarise, summarise_counts

CountElsewhere = Callable[[str, Settings, int], CountSamples]
"""Count a pair in another process (node id, settings, calls per block): count mode under callgrind."""
CountPlaces = Callable[[str, Settings, int], list[PlaceSamples]]
"""Count a pair at every other place of the session (node id, settings, calls per block)."""


def _machine_instructions() -> Instrument:
    folder = in_counting_replica()
    if folder is None:
        raise RuntimeError("callgrind counts only in a replica process valgrind started")
    return MachineInstructionCount(folder)


COUNTERS: dict[Counter, Callable[[], Instrument]] = {
    Counter.BYTECODE: InstructionCount,
    Counter.CALLGRIND: _machine_instructions,
}
"""Count mode's instruction counters, by what they count (callgrind's only in a replica valgrind started)."""


class _Judged(Strategy):
    """A strategy of the user's session: its own result, then every other place's verdict and its
    change, as the ``gate`` at the other places reads it (None: no other places)."""

    def __init__(self, run: MeasuredPair, gate: PlaceGate | None = None) -> None:
        super().__init__(run)
        self.gate = gate

    @abstractmethod
    def _own(self, kind: Kind, wall_s: float) -> tuple[OverheadResult, list[PlaceSamples]]:
        """This process's result and the other places' samples."""

    def result(self, kind: Kind, wall_s: float) -> OverheadResult:
        own, places = self._own(kind, wall_s)
        run = self.run
        measured = measure_places(run.pair, kind, places, run.settings)
        gate = self.gate
        return gate.changed(own, measured, run.settings) if gate else dataclasses.replace(own, places=measured)


class Timed(_Judged):
    """Time mode: wall time on the replication's plan, then, in the user's session, allocations
    (unless turned off and the marker has no allocation budget); replicas only time. Explained
    by sampled CPU time per function (approximate), or, where signals cannot be used, by counted
    bytecode (exact)."""

    @property
    def profiler(self) -> Profiler:
        return SampledTime() if SampledTime.available() else InstructionsByFunction()

    def instruments(self) -> list[Instrument]:
        run, budget = self.run, self.run.pair.budget
        timed: list[Instrument] = [WallClock(run.clock_ns, run.pair.concurrency)]
        allocations = run.settings.allocations or budget.max_alloc is not None or budget.max_alloc_bytes is not None
        return timed if run.replication.in_replica or not allocations else [*timed, AllocationTrace()]

    def _wall_plan(self) -> Generator[Request, int, Sampled]:
        """This process's procedure: a replica's, or the controller's for the whole pair.

        Waiting for replica processes blocks the caller, an event loop included: nothing
        else should run while a pair is measured.
        """
        run = self.run
        stop = Stopping(
            too_wide(run.pair, run.settings), self.gate.rounds(run.pair, run.settings) if self.gate else None
        )
        return run.replication.plan(run.nodeid, run.settings, run.rng, run.clock_ns, stop)

    def _own(self, kind: Kind, wall_s: float) -> tuple[OverheadResult, list[PlaceSamples]]:
        run, sampled = self.run, self.sampled
        probe = core_share if run.clock_ns is time.perf_counter_ns else None  # an injected clock is no machine's
        own = summarise(
            run.pair, kind, sampled.samples, run.settings, wall_s, self.counts, sampled.start_s, probe, run.between
        )
        return own, sampled.places


class CountedHere(_Judged):
    """Count mode in the user's session: bytecode counted here, or machine instructions counted in
    a replica under callgrind (``elsewhere``), then allocations and a short wall-clock probe here,
    where calls run at full speed; every other place counts in one replica (``places``).
    Explained by bytecode instructions per function (exact)."""

    profiler = InstructionsByFunction()

    def __init__(
        self, run: MeasuredPair, elsewhere: CountElsewhere | None, places: CountPlaces | None, gate: PlaceGate | None
    ) -> None:
        super().__init__(run, gate)
        self.elsewhere, self.places = elsewhere, places

    def instruments(self) -> list[Instrument]:
        counter = [] if self.elsewhere is not None else [COUNTERS[Counter.BYTECODE]()]
        return [*counter, AllocationTrace(), WallClock(time.perf_counter_ns, 1)]

    def _ready(self, slowest_call_s: float) -> bool:
        if self.elsewhere is not None:
            calls = count_calls(slowest_call_s, CALLGRIND_MAX_CALLS)
            self.counts = self.elsewhere(self.run.nodeid, self.run.settings, calls)
        return True

    def _wall_plan(self) -> Generator[Request, int, Sampled]:
        return probe_plan(self.run)

    def _own(self, kind: Kind, wall_s: float) -> tuple[OverheadResult, list[PlaceSamples]]:
        run, counts = self.run, self.counts
        assert counts is not None
        own = summarise_counts(run.pair, kind, counts, wall_s)
        probe = next((samples for samples in self.sampled.samples if samples.baseline_ns), None)
        time_ratio = probe_ratio(probe) if probe else math.nan
        places = self.places(run.nodeid, run.settings, counts.calls_per_block) if self.places else []
        return dataclasses.replace(own, time_ratio=time_ratio, probe=probe), places


class CountedInReplica(Strategy):
    """Count mode in a replica: it counts when the controller says so, with the controller's
    block size, and sends the counts back. Under callgrind it counts machine instructions and
    nothing else (allocations and the probe stay in the user's session)."""

    profiler = InstructionsByFunction()

    def __init__(self, run: MeasuredPair, replica: ReplicaPlugin) -> None:
        super().__init__(run)
        self.replica = replica
        self.counter = Counter.CALLGRIND if in_counting_replica() else Counter.BYTECODE

    def instruments(self) -> list[Instrument]:
        counter = COUNTERS[self.counter]()
        if self.counter is Counter.CALLGRIND:
            return [counter]
        return [counter, AllocationTrace(), WallClock(time.perf_counter_ns, 1)]  # the probe: beside the counts

    def _ready(self, slowest_call_s: float) -> bool:
        orders = self.replica.park(self.run.nodeid)
        if orders is not None:
            self.counts = CountSamples(orders.calls_per_block, counter=self.counter)
        return orders is not None

    def deliver(self) -> None:
        if self.counts is not None:
            probe = next((samples for samples in self.sampled.samples if samples.baseline_ns), None)
            self.replica.deliver_counts(self.counts, probe)

    def _wall_plan(self) -> Generator[Request, int, Sampled]:
        return probe_plan(self.run)

    def result(self, kind: Kind, wall_s: float) -> OverheadResult:
        raise AssertionError("a counting replica sends its counts (deliver); the controller makes the result")


def probe_plan(run: MeasuredPair) -> Generator[Request, int, Sampled]:
    """The counts' check: the same calls timed in this process on the real clock, briefly
    (:func:`~overheadbench.engine.counting.probe_settings`; read by
    :func:`~overheadbench.engine.counting.disagreement`, and between places by
    :func:`~overheadbench.pairs.comparing.timed_change`)."""
    return InProcess().plan(
        run.nodeid, probe_settings(run.settings), run.rng, time.perf_counter_ns, Stopping(lambda replicas: False)
    )


def strategy_for(
    run: MeasuredPair, elsewhere: CountElsewhere | None, places: CountPlaces | None, gate: PlaceGate | None = None
) -> Strategy:
    """The pair's strategy, from its mode and where it runs: the one place that tests a mode;
    ``gate``: the session's at its other places (:class:`~overheadbench.pairs.across.PlaceGate`)."""
    if run.pair.mode is Mode.TIME:
        return Timed(run, gate)
    if isinstance(run.replication, ReplicaPlugin):
        return CountedInReplica(run, run.replication)
    return CountedHere(run, elsewhere, places, gate)
