"""What the ``overhead`` fixture asks of a measuring strategy, and the stages every strategy shares.

A strategy (:mod:`overheadbench.pairs.strategy`) says what measures a pair, in which order
and on which plan, and makes the result; the fixture (:mod:`overheadbench.pairs.fixture`)
drives the stages it gives and never tests the mode. This module is what both read: the
pair's :class:`MeasuredPair` and the :class:`Strategy` base, whose
:meth:`~Strategy.stages` run each instrument in turn (each a :class:`~overheadbench.instruments.Stage`):
wall time on the strategy's plan, a counter (instructions, allocations) on the count plan, the
allocation tracer paced first. The stage an explained pair ends with, whatever its strategy, is
:mod:`.explaining`'s.
"""

from __future__ import annotations

import random
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..core.vocabulary import Counter, Side
from ..engine.calibration import Request
from ..engine.counted_samples import CountSamples
from ..engine.counting import ALLOCATION_REPEATS, allocation_calls, count_calls, count_plan, pace_plan
from ..engine.profiles import Profiler
from ..engine.samples import Clock, Kind
from ..engine.sampling import Replication, Sampled
from ..engine.settings import Settings
from ..instruments import Instrument, Stage
from ..instruments.walltime import WallClock
from .estimating import Between
from .pair import Pair
from .results import OverheadResult


@dataclass(frozen=True)
class MeasuredPair:
    """What a strategy measures a pair with: the pair (its callers applied), the settings the
    engine reads, where its time samples come from, and the clock."""

    pair: Pair
    settings: Settings
    replication: Replication
    clock_ns: Clock
    rng: random.Random
    between: Between | None = None
    """The pair's spread between sessions, learned from this machine's stored runs (None: the prior)."""

    @property
    def nodeid(self) -> str:
        return self.pair.nodeid


class Strategy(ABC):
    """How a pair is measured: its instruments, each one's stage, the result they make, and the
    profiler that explains it (:mod:`overheadbench.instruments.functions`)."""

    @property
    @abstractmethod
    def profiler(self) -> Profiler:
        """What explains the pair: sampled time, or counted bytecode."""

    def __init__(self, run: MeasuredPair) -> None:
        self.run = run
        self.counts: CountSamples | None = None
        self.sampled = Sampled([])
        """The wall-clock stage's samples: the pair's (time mode), or count mode's probe."""
        self._held: list[Instrument] = []
        self._call_s = 0.0
        """Seconds per call of the slower side once warm (:func:`~overheadbench.engine.counting.pace_plan`)."""

    @abstractmethod
    def instruments(self) -> list[Instrument]:
        """What measures the pair, in order; separate passes, so one instrument's own work is
        never in another's figures (the allocation tracer's in the instructions)."""

    @abstractmethod
    def _wall_plan(self) -> Generator[Request, int, Sampled]:
        """The wall clock's plan: the pair's own (time mode), or count mode's probe."""

    def _ready(self, slowest_call_s: float) -> bool:
        """Set up before the stages (False: the controller ended the pair unmeasured)."""
        return True

    def deliver(self) -> None:
        """In a replica, once measured: send what the controller does not get from the plan
        (a timed replica's samples went with its plan: nothing)."""
        return None

    def stages(
        self, kind: Kind, sides: Sequence[tuple[Side, Callable[[], Any]]], slowest_call_s: float
    ) -> Iterator[Stage]:
        """Each instrument's stage (``sides``: the baseline, the framework and the harness's empty
        callable; ``slowest_call_s``: the slowest first call, which sizes counted blocks)."""
        if not self._ready(slowest_call_s):
            return
        for instrument in self.instruments():
            self._held.append(instrument)
            blocks = {side: instrument.block(fn, kind) for side, fn in sides}
            if not instrument.figures:
                yield Stage(self._wall_plan(), blocks, self._keep)
                continue
            if self.counts is None:
                self.counts = CountSamples(count_calls(slowest_call_s), counter=Counter.BYTECODE)
            calls, plan = self.counts.calls_per_block, partial(count_plan, harness=instrument.subtract_harness)
            if instrument.paced:
                pace = WallClock(time.perf_counter_ns)
                yield Stage(pace_plan(), {side: pace.block(fn, kind) for side, fn in sides}, self._paced)
                calls = self.counts.allocation_calls = allocation_calls(self._call_s)
                plan = partial(plan, repeats=ALLOCATION_REPEATS, warmups=0)
            yield Stage(plan(calls), blocks, partial(self.counts.add, instrument.figures, calls=calls))

    @abstractmethod
    def result(self, kind: Kind, wall_s: float) -> OverheadResult:
        """The pair's result, every place's verdict and change in it (in the user's session)."""

    def close(self) -> None:
        """Release the instruments' holdings (the callers' threads stop), however the measurement ended."""
        for instrument in self._held:
            instrument.close()

    def _keep(self, sampled: Sampled) -> None:
        self.sampled = sampled

    def _paced(self, call_s: float) -> None:
        self._call_s = call_s
