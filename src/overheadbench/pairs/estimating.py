"""A pair's ratio and its interval from its processes' samples: the one estimate that the verdict,
the stopping rules and the clocks' comparison all read."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.units import as_factor, format_overhead
from ..core.vocabulary import Word
from ..engine.combining import Estimate, SessionRule, combine, layout_sd, prior_session
from ..engine.process_ratio import mean_ratio, replica_ratio
from ..engine.samples import ReplicaSamples, Timer
from ..engine.settings import Settings
from ..engine.student import t_quantile
from .pair import Pair

PAIRED_FROM = 3
"""Processes from which a drift between the halves of their pairs is read by Student's t on their
steps (:func:`moved`); fewer give no spread to read."""

Between = Callable[[Timer], SessionRule]
"""A pair's between-session rule on the clock it was read on (a stored history is of one clock):
:func:`~overheadbench.pairs.comparing.between_sessions`."""


class Blocks(Word):
    """Which reading of a pair's blocks an estimate is made from (:func:`judged_interval` joins them)."""

    ESTIMATED = "estimated"
    """Its median pair ratio over the pairs its figure is read from (the undisturbed ones, where sound)."""
    OTHER_CLOCK = "other clock"
    """The same, on the clock the pair is not judged on."""
    EVERY_PAIR = "every block pair"
    """The median pair ratio over every pair, disturbed or not."""
    MEAN = "the blocks' mean"
    """Each process's ratio of its blocks' means (:func:`~overheadbench.engine.process_ratio.mean_ratio`)."""
    LATER_HALF = "the later half of the pairs"
    """The median pair ratio over each process's later half: what the calls cost once they settled
    (a side whose cost grows with its calls read 5.4-9.4x from processes where it settles at 10x)."""
    EARLIER_HALF = "the earlier half of the pairs"
    """... and over its earlier half: against the later half, whether the cost moves with the calls."""


def estimate(
    pair: Pair,
    replicas: list[ReplicaSamples],
    settings: Settings,
    session: bool = True,
    between: Between | None = None,
    blocks: Blocks = Blocks.ESTIMATED,
) -> Estimate:
    """The pair's ratio and its interval from the replicas' paired blocks (the harness's own
    cost taken off both sides first when ``subtract_harness``, for each process's own block size: a
    process whose calls got faster than calibration's sized its blocks anew,
    :func:`~overheadbench.engine.sampling.outgrown`); ``session``: the interval
    carries the between-session term that no process of one session can see: ``between``'s
    for the pair's clock (learned from this machine's stored runs of the pair,
    :func:`~overheadbench.pairs.comparing.between_sessions`), else the prior; the stopping rule
    reads the width more processes can narrow. ``blocks``: which reading of the blocks (every one
    but the estimate's own takes the prior: no stored run holds those readings' spread)."""
    rule = prior_session if between is None or blocks != Blocks.ESTIMATED else between(replicas[0].timer)
    per_process = _per_process(pair, replicas, settings, blocks)
    return combine(per_process, pair.confidence, rule if session else None, _layout(replicas, blocks))


def _layout(replicas: list[ReplicaSamples], blocks: Blocks) -> float:
    """The layout every process shares (:func:`~overheadbench.engine.combining.layout_sd`), for each
    side's call on the reading's clock: the processes' median of their median block."""
    clock = Blocks.OTHER_CLOCK if blocks == Blocks.OTHER_CLOCK else Blocks.EVERY_PAIR
    timed = [(r, _times(r, clock)) for r in replicas]
    per_call = [[float(np.median(side)) / r.calls_per_block for side in sides] for r, sides in timed if sides[0]]
    if not per_call:
        return 0.0
    baseline, framework = np.median(per_call, axis=0)
    return layout_sd(float(baseline), float(framework))


def _per_process(
    pair: Pair, replicas: list[ReplicaSamples], settings: Settings, blocks: Blocks
) -> list[tuple[float, float, float]]:
    """Each process's ``(ratio, low, high)`` from a reading of its blocks."""
    other = blocks == Blocks.OTHER_CLOCK
    loop_ns = harness_ns(replicas) if settings.subtract_harness and not other else 0.0
    per_process = mean_ratio if blocks == Blocks.MEAN else replica_ratio
    return [per_process(*_times(r, blocks), loop_ns * r.calls_per_block, pair.confidence) for r in replicas]


def _times(samples: ReplicaSamples, blocks: Blocks) -> tuple[list[int], list[int]]:
    """A process's blocks for a reading (:class:`Blocks`)."""
    if blocks == Blocks.OTHER_CLOCK:
        return samples.other_baseline_ns, samples.other_framework_ns
    if blocks == Blocks.EVERY_PAIR:
        return samples.baseline_ns, samples.framework_ns
    baseline, framework = samples.estimated_pairs()
    half = len(baseline) // 2
    if blocks == Blocks.LATER_HALF:
        return baseline[half:], framework[half:]
    if blocks == Blocks.EARLIER_HALF:
        return baseline[:half], framework[:half]
    return baseline, framework


@dataclass(frozen=True)
class Judged:
    """The interval a pair's budgets are judged on (of the ratio), and why it spans more than the
    estimate's own (empty when it does not)."""

    low: float
    high: float
    widened: str = ""


def judged_interval(pair: Pair, replicas: list[ReplicaSamples], settings: Settings, found: Estimate) -> Judged:
    """The estimate's interval, joined with every other reading of the same blocks (:class:`Blocks`)
    whose figure it does not hold: every pair where the figure was read from the undisturbed ones,
    the other clock, the blocks' mean (a pause every 500 calls costs the mean call what the median
    pair leaves out: 1.70x on average, 1.85x in the typical pair), and the later half of the pairs
    (a cost that grows with the calls). A pass or a fail then holds on every reading, never on one of
    them: a cold-started baseline read -96% on CPU time from its undisturbed blocks and passed a 5%
    budget while the wall clock read -68%, and the truth was +120%."""
    low, high, reasons = found.low, found.high, []
    readings = [Blocks.OTHER_CLOCK, Blocks.MEAN, Blocks.LATER_HALF]
    if any(r.reads_subset for r in replicas):
        readings.insert(0, Blocks.EVERY_PAIR)
    for blocks in readings:
        if blocks == Blocks.OTHER_CLOCK and not all(r.other_baseline_ns for r in replicas):
            continue
        read = estimate(pair, replicas, settings, blocks=blocks)
        if not (math.isfinite(read.low) and math.isfinite(read.high)) or found.low <= read.ratio <= found.high:
            continue
        low, high = min(low, read.low), max(high, read.high)
        reasons.append(_reading(blocks, replicas, read))
    drift = _drift(pair, replicas, settings)
    if drift is not None:
        low, high = min(low, drift[0]), max(high, drift[1])
        reasons.append(drift[2])
    return Judged(low, high, "; ".join(reasons))


def _drift(pair: Pair, replicas: list[ReplicaSamples], settings: Settings) -> tuple[float, float, str] | None:
    """Where the cost moves with the calls (:func:`moved`), the figure it settles at may lie as far
    again beyond the later half: the interval reaches that far in the drift's direction. A cost that
    grows with its calls (a history it scans) read 4.9-9.8x where it settles at 10.1x."""
    earlier = _per_process(pair, replicas, settings, Blocks.EARLIER_HALF)
    later = _per_process(pair, replicas, settings, Blocks.LATER_HALF)
    step = moved(earlier, later, pair.confidence)
    if step is None:
        return None
    read = estimate(pair, replicas, settings, blocks=Blocks.LATER_HALF)  # as every other reading is made
    reach = (read.low, read.high * step) if step > 1 else (read.low * step, read.high)
    shown = [format_overhead(r - 1, as_factor(read.ratio - 1)) for r in (read.ratio / step, read.ratio)]
    return (
        *reach,
        f"the cost moved with the calls ({shown[0]} in the earlier half of the pairs, {shown[1]} in the later)",
    )


def moved(
    earlier: list[tuple[float, float, float]], later: list[tuple[float, float, float]], confidence: float
) -> float | None:
    """How far each process's later half of pairs reads from its earlier half (the factor, their
    geometric mean), where that is beyond chance, else None. Each process is its own control: from
    ``PAIRED_FROM`` processes, Student's t on the processes' log steps (what moves every process's
    layout or every session cancels; a drift every process shares is what is left); fewer, every
    process's halves apart beyond both their intervals, the same way. Read on the halves' joined
    intervals, ten fresh processes that each sampled a growing cost's first few thousand calls saw
    no drift, and their interval (7-9.4x) missed the 10.1x it settles at."""
    halves = list(zip(earlier, later, strict=True))
    if not all(before[0] > 0 and after[0] > 0 for before, after in halves):
        return None
    steps = np.log([after[0] / before[0] for before, after in halves])
    if steps.size >= PAIRED_FROM:
        spread = float(np.std(steps, ddof=1)) / math.sqrt(steps.size)
        apart = abs(float(steps.mean())) > t_quantile((1 + confidence) / 2, steps.size - 1) * spread
    else:
        up = all(after[1] > before[2] for before, after in halves)
        apart = up or all(after[2] < before[1] for before, after in halves)
    return math.exp(float(steps.mean())) if apart else None


def _reading(blocks: Blocks, replicas: list[ReplicaSamples], read: Estimate) -> str:
    what = f"the {replicas[0].other_timer} clock" if blocks == Blocks.OTHER_CLOCK else blocks.value
    shown = [format_overhead(value - 1, as_factor(read.ratio - 1)) for value in (read.ratio, read.low, read.high)]
    return f"{what} read {shown[0]} ({shown[1]}..{shown[2]})"


def other_clock(pair: Pair, replicas: list[ReplicaSamples], settings: Settings) -> tuple[float, float, float]:
    """The ratio and its interval on the other clock, where every process read it."""
    if not all(r.other_baseline_ns for r in replicas):
        return (math.nan, math.nan, math.nan)
    found = estimate(pair, replicas, settings, blocks=Blocks.OTHER_CLOCK)
    return found.ratio, found.low, found.high


def harness_ns(replicas: list[ReplicaSamples]) -> float:
    """The measuring loop's own cost per call, the median over the processes."""
    return float(np.median([r.harness_ns_per_call for r in replicas]))
