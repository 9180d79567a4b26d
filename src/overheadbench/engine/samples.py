"""The raw samples of a pair: what the engine measured, before any estimate.

* :class:`ReplicaSamples`: one process's paired block times (time mode), on the pair's clock and
  the other, with the block sizes they were taken at (:class:`BlockSizes`).

Count mode's are :mod:`.counted_samples`, what another place gave :class:`~.sampling.PlaceSamples`.
They travel as JSON (from a replica process, in a stored run) and are read back checked.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.jsonio import Fields, ShapeError
from ..core.vocabulary import Side, Word

UNDISTURBED = 0.9
"""A block ran undisturbed when its thread's CPU time is at least this share of its wall time."""
MIN_UNDISTURBED = 10
"""Undisturbed pairs a process needs for its figure to be read from them alone."""
SOUND_SHARE = 0.2
"""...and the share of its pairs they must be: 29 undisturbed pairs of 69,133 (blocks of a few hundred
nanoseconds, where the test is the clocks' own noise) were the outliers, and read -88.6% for a pair
whose every other reading was positive. Beside four busy loops, blocks of the minimum length ran
undisturbed in most pairs; a millisecond call's in a third of them or more."""


class Kind(Word):
    """Whether the pair's callables are plain functions or ``async def`` ones."""

    SYNC = "sync"
    ASYNC = "async"


Clock = Callable[[], int]
"""A clock's reading in nanoseconds (``time.perf_counter_ns``, ``time.thread_time_ns``, or a test's
fake): what every block is timed with."""


class Timer(Word):
    """Which clock a pair's blocks are read on (chosen per pair at calibration,
    :func:`overheadbench.engine.calibration.choose_timer`)."""

    WALL = "wall"
    """Elapsed time: what a pair that waits (on a socket, a thread, a lock) must be read on."""
    CPU = "cpu"
    """The measuring thread's CPU time: a block that never waits is charged nothing for the time
    slices a busy machine gives its neighbours, which the wall clock charges to the longer block."""


class Timing(int):
    """A block's cost on the clock a plan reads (the int), with the other clock's reading and the
    thread's voluntary context switches (its waits) beside it.

    The plans add, compare and divide costs as numbers; a timing carries the second clock through
    them untouched, so the samples can keep both and calibration can see whether a side waits.
    """

    wall_ns: int
    cpu_ns: int
    waits: int

    def __new__(cls, wall_ns: int, cpu_ns: int, waits: int) -> Timing:
        timing = super().__new__(cls, wall_ns)
        timing.wall_ns, timing.cpu_ns, timing.waits = wall_ns, cpu_ns, waits
        return timing

    def on(self, timer: Timer) -> tuple[int, int]:
        """(this block on ``timer``, on the other clock)."""
        return (self.cpu_ns, self.wall_ns) if timer == Timer.CPU else (self.wall_ns, self.cpu_ns)


LOPSIDED = 8
"""How many times a place's own block sizes must differ from the session's to be used (:meth:`BlockSizes.at_place`)."""


@dataclass(frozen=True)
class BlockSizes:
    """Calls per timed block, each side's from its own per-call cost (the harness probe runs
    the baseline's): both sides' blocks last about as long, whatever their ratio; and the clock
    every process reads them on."""

    baseline: int
    framework: int
    timer: Timer = Timer.WALL

    def at_place(self, own: BlockSizes) -> BlockSizes:
        """The sizes another place (a base tree, an environment) times its blocks in, ``own`` being
        what it calibrated for itself: these, unless a side's own differs from them by
        ``LOPSIDED`` times or more; then its own, on this clock. A head ~360x its base read in the
        head's block sizes timed the base's framework in blocks 360 times too short, and misread
        the change; a place within that factor keeps the session's sizes, the regime the A/A and
        A/B validations measured (a place's calibration may differ by a power of two by chance)."""
        apart = any(
            max(a, b) >= LOPSIDED * min(a, b)
            for a, b in ((self.baseline, own.baseline), (self.framework, own.framework))
        )
        return BlockSizes(own.baseline, own.framework, self.timer) if apart else self


@dataclass
class ReplicaSamples:
    """The raw paired samples of one process: block costs in ns.

    The baseline's blocks are of ``calls_per_block`` calls, the framework's of
    ``framework_calls``; ``framework_ns`` holds each framework block's cost scaled to
    ``calls_per_block`` calls, so that every reader compares the sides pair by pair as if
    their blocks were the same size (as they were before files recorded ``framework_calls``).
    Both are on the pair's ``timer``; ``other_baseline_ns`` and ``other_framework_ns`` hold the
    same blocks on the other clock, where it was read (the report says when the two disagree).
    """

    calls_per_block: int
    baseline_ns: list[int] = field(default_factory=list)
    framework_ns: list[int] = field(default_factory=list)
    harness_ns_per_call: float = math.nan
    wall_s: float = 0.0
    framework_calls: int = 0
    """Calls per framework block (0: ``calls_per_block``, as files before it was recorded)."""
    timer: Timer = Timer.WALL
    other_baseline_ns: list[int] = field(default_factory=list)
    other_framework_ns: list[int] = field(default_factory=list)
    undisturbed: int = field(default=0, init=False, compare=False)
    """Pairs whose two blocks ran undisturbed (on CPU time; see :meth:`estimated_pairs`)."""

    def __post_init__(self) -> None:
        self.framework_calls = self.framework_calls or self.calls_per_block
        self.undisturbed = len(self._undisturbed())

    def add(self, baseline_ns: int, framework_ns: int) -> None:
        """One pair of blocks, as timed: the framework's scaled to the baseline's call count;
        on the pair's clock, and on the other one where the blocks read both (:class:`Timing`)."""
        scale = self.calls_per_block / self.framework_calls
        if isinstance(baseline_ns, Timing) and isinstance(framework_ns, Timing):
            (baseline_ns, other_baseline), (framework_ns, other_framework) = (
                baseline_ns.on(self.timer),
                framework_ns.on(self.timer),
            )
            self.other_baseline_ns.append(other_baseline)
            self.other_framework_ns.append(round(other_framework * scale))
            calm = baseline_ns >= UNDISTURBED * other_baseline and framework_ns >= UNDISTURBED * other_framework
            self.undisturbed += self.timer == Timer.CPU and calm
        self.baseline_ns.append(int(baseline_ns))
        self.framework_ns.append(round(framework_ns * scale))

    @property
    def usable(self) -> int:
        """Pairs the figure will be read from, as sampling counts them toward its minimum: the
        undisturbed ones on CPU time, every pair on the wall clock."""
        return self.undisturbed if self.timer == Timer.CPU and self.other_baseline_ns else len(self.baseline_ns)

    def estimated_pairs(self) -> tuple[list[int], list[int]]:
        """The pairs a process's figure is read from: on CPU time, those whose two blocks ran
        undisturbed (their thread on its CPU for at least ``UNDISTURBED`` of the wall time), where
        there are ``MIN_UNDISTURBED`` of them and they are ``SOUND_SHARE`` of the pairs; else every
        pair (and the pair's verdict is judged on both readings where they disagree,
        :func:`~overheadbench.pairs.estimating.judged_interval`).

        A block that was preempted is not charged for the neighbour's time slice on this clock, but
        it comes back to caches the neighbour used: a 1 ms workflow call's CPU time grew with how
        much of its block was taken (beside four busy loops its pairs read 4,530x when the block
        ran 11-18% of its wall time, 3,166x when it ran all of it; 2,995x alone). On a quiet
        machine every block is undisturbed, and this is every pair; sampling goes on until it has
        ``MIN_PAIRS`` undisturbed ones, within the pair's ceiling.
        """
        kept = self._undisturbed()
        if not self._sound(len(kept)):
            return self.baseline_ns, self.framework_ns
        return [base for base, _ in kept], [framework for _, framework in kept]

    @property
    def reads_subset(self) -> bool:
        """Whether the figure is read from the undisturbed pairs only (:meth:`estimated_pairs`)."""
        return self._sound(self.undisturbed) and self.undisturbed < len(self.baseline_ns)

    def _sound(self, undisturbed: int) -> bool:
        return undisturbed >= max(MIN_UNDISTURBED, SOUND_SHARE * len(self.baseline_ns))

    def _undisturbed(self) -> list[tuple[int, int]]:
        if self.timer != Timer.CPU or len(self.other_baseline_ns) != len(self.baseline_ns):
            return []
        return [
            (base, framework)
            for base, framework, base_wall, framework_wall in zip(
                self.baseline_ns, self.framework_ns, self.other_baseline_ns, self.other_framework_ns, strict=True
            )
            if base >= UNDISTURBED * base_wall and framework >= UNDISTURBED * framework_wall
        ]

    def recent_wall_ns(self, pairs: int) -> dict[Side, float]:
        """Each side's median wall time of one block as it ran (the framework's unscaled) over the
        last ``pairs`` pairs; empty with fewer."""
        if len(self.baseline_ns) < pairs:
            return {}
        on_wall = self.timer == Timer.WALL or not self.other_baseline_ns
        baseline, framework = (
            (self.baseline_ns, self.framework_ns) if on_wall else (self.other_baseline_ns, self.other_framework_ns)
        )
        unscale = self.framework_calls / self.calls_per_block
        return {
            Side.BASELINE: float(np.median(baseline[-pairs:])),
            Side.FRAMEWORK: float(np.median(framework[-pairs:])) * unscale,
        }

    @property
    def other_timer(self) -> Timer | None:
        """The clock the ``other_*`` lists are on (None: only the pair's own was read)."""
        if not self.other_baseline_ns:
            return None
        return Timer.WALL if self.timer == Timer.CPU else Timer.CPU

    def to_json(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        del data["undisturbed"]  # derived from the blocks
        return data

    @classmethod
    def from_json(cls, data: Any, path: str = "samples") -> ReplicaSamples:
        fields = Fields(data, path)
        samples = cls(
            fields.count("calls_per_block"),
            [int(v) for v in fields.samples("baseline_ns")],
            [int(v) for v in fields.samples("framework_ns")],
            fields.number("harness_ns_per_call"),
            fields.number("wall_s"),
            fields.count("framework_calls") if "framework_calls" in fields.data else 0,
            fields.choice("timer", Timer, Timer.WALL),
            [int(v) for v in fields.samples("other_baseline_ns")] if "other_baseline_ns" in fields.data else [],
            [int(v) for v in fields.samples("other_framework_ns")] if "other_framework_ns" in fields.data else [],
        )
        if len(samples.baseline_ns) != len(samples.framework_ns):
            raise ShapeError(f"{path}: baseline_ns and framework_ns must pair up (one value each per pair)")
        if (
            len(samples.other_baseline_ns) != len(samples.other_framework_ns)
            or samples.other_baseline_ns
            and len(samples.other_baseline_ns) != len(samples.baseline_ns)
        ):
            raise ShapeError(f"{path}: the other clock's blocks must pair up with the pair's own")
        return samples
